//! When an email's CSS can be inlined in two parts: the layout around the
//! step's HTML (the *frame*) once, and the step's HTML (the *fragment*) per
//! recipient, with the result byte for byte what inlining the whole email
//! gives.
//!
//! A run's recipients get the same layout around a step's HTML of their
//! own; inlining the whole email per recipient parses, matches and writes
//! the layout again each time, most of the work. Splitting is exact only
//! when neither part changes how the other is parsed or styled, and this
//! module decides that from the text alone, conservatively: anything it is
//! not sure of is "no", and the whole email is inlined as before.
//!
//! - **The CSS** (`context_free_css`): every selector matches an element by
//!   the element alone (type, class, id, `*`: no combinator, pseudo-class or
//!   attribute selector), and there is no `@` rule, escape or variable. An
//!   element's style then depends on no other element, so each part's
//!   elements get the same styles apart as together.
//! - **The frame** (`frame_css`): the layout's output with `MARKER` where
//!   the step's HTML goes. Its tags nest strictly (every end tag closes the
//!   element opened last), the marker is a text in the body under ordinary
//!   containers only (`div`, a table cell, `body`, sectioning elements: no
//!   `p`, list item or formatting element an HTML parser could close or
//!   reopen around the step's HTML), and it has no element whose content is
//!   parsed differently (`script`, `template`, `svg`, …).
//! - **The fragment** (`fragment_ok`): the step's HTML parses to the same
//!   nodes in the layout as alone. Its tags nest strictly, without any the
//!   parser would close implicitly (a block inside a `p`, a cell outside a
//!   row, a link in a link), so nothing in it reaches the layout's open
//!   elements; it has only ordinary body elements, and it cannot merge with
//!   the text around it (no unfinished character reference at its end or
//!   before the marker).
//!
//! The HTML parser (html5ever, through css-inline) is not asked: the point
//! is to avoid parsing the layout per recipient. The rules above are
//! checked against it by a differential test over generated layouts and
//! fragments (`tests`).

/// Stands for the step's HTML in the frame: text no template writes (two
/// private-use characters around a name), found once in the inlined frame.
pub(super) const MARKER: &str = "\u{E000}herald-content\u{E000}";

/// The CSS of `frame`'s `<style>` blocks, in document order, when the frame
/// and its CSS allow inlining the step's HTML apart (module docs); `None`
/// otherwise.
pub(super) fn frame_css(frame: &str) -> Option<String> {
    if !clean(frame) || frame.matches(MARKER).count() != 1 {
        return None;
    }
    let mut lx = Lexer::new(frame);
    let mut stack: Vec<String> = Vec::new();
    let (mut css, mut body_seen, mut marker_ok) = (String::new(), false, false);
    while let Some(tok) = lx.next() {
        match tok? {
            Tok::Text(t) => {
                if let Some(at) = t.find(MARKER) {
                    // No `&` before it in its text: a character reference
                    // could span the step's first text.
                    marker_ok = !open_reference(&t[..at]) && marker_context(&stack, body_seen);
                    if !marker_ok {
                        return None;
                    }
                }
            }
            Tok::Comment(_) | Tok::Doctype => {}
            Tok::Start(name, attrs, _) if name == "style" => {
                // Only plain blocks: css-inline reads attributes of its own
                // (`data-css-inline`), and a media attribute would scope it.
                if !(attrs.trim().is_empty() || attrs.trim() == "type=\"text/css\"") {
                    return None;
                }
                let block = lx.raw_text("style")?;
                if !css.is_empty() {
                    css.push('\n');
                }
                css.push_str(block);
            }
            Tok::Start(name, _, _) if name == "title" => {
                lx.raw_text("title")?;
            }
            Tok::Start(name, _, self_closing) => {
                if !FRAME_ELEMENTS.contains(&name.as_str()) && !VOID.contains(&name.as_str()) {
                    return None;
                }
                if name == "body" {
                    body_seen = true;
                }
                if !VOID.contains(&name.as_str()) {
                    if self_closing {
                        return None;
                    }
                    stack.push(name);
                }
            }
            Tok::End(name) => {
                if stack.pop().as_deref() != Some(name.as_str()) {
                    return None;
                }
            }
        }
    }
    (marker_ok && context_free_css(&css)).then_some(css)
}

/// Whether the step's HTML `html` parses alone to the nodes it makes inside
/// a frame `frame_css` accepts (module docs).
pub(super) fn fragment_ok(html: &str) -> bool {
    fragment_walk(html, &mut |seen, _, _| matches!(seen, Seen::Text(_)))
}

/// What `fragment_walk` asks about each text and comment: it, the names of
/// the elements open around it and their ordinals.
pub(super) type Visitor<'a> = dyn FnMut(Seen<'_>, &[String], &[usize]) -> bool + 'a;

/// A text or a comment of a fragment, as `fragment_walk` shows it.
pub(super) enum Seen<'a> {
    Text(&'a str),
    /// A comment's inside, and the text right before it (empty after a tag).
    Comment {
        body: &'a str,
        before: &'a str,
    },
}

/// `fragment_ok`, with `seen` asked about each text and comment of `html`,
/// the elements open around it (outermost first) and their ordinals (which
/// start tag of `html` opened each): a `false` is a "no". Comments are `seen`'s
/// to allow (`fragment_ok` allows none).
pub(super) fn fragment_walk(html: &str, seen: &mut Visitor<'_>) -> bool {
    if html.is_empty() || !clean(html) || html.contains(MARKER) {
        return false;
    }
    let mut lx = Lexer::new(html);
    let mut stack: Vec<String> = Vec::new();
    let (mut ordinals, mut opened) = (Vec::new(), 0);
    let mut last_text = "";
    while let Some(tok) = lx.next() {
        let Some(tok) = tok else { return false };
        let before = std::mem::take(&mut last_text);
        match tok {
            Tok::Text(t) => {
                // Text directly in a table is moved out of it by the parser.
                if matches!(
                    stack.last().map(String::as_str),
                    Some("table" | "tbody" | "thead" | "tfoot" | "tr")
                ) && !t.chars().all(|c| c.is_ascii_whitespace())
                {
                    return false;
                }
                if !seen(Seen::Text(t), &stack, &ordinals) {
                    return false;
                }
                last_text = t;
            }
            Tok::Start(name, _, self_closing) => {
                let name = name.as_str();
                if VOID.contains(&name) {
                    if !FRAGMENT_VOID.contains(&name) {
                        return false;
                    }
                    if closes_p(name) && p_open(&stack) {
                        return false;
                    }
                    continue;
                }
                if self_closing || !FRAGMENT_ELEMENTS.contains(&name) || !placed(name, &stack) {
                    return false;
                }
                stack.push(name.to_string());
                ordinals.push(opened);
                opened += 1;
            }
            Tok::End(name) => {
                if VOID.contains(&name.as_str()) || stack.pop().as_deref() != Some(name.as_str()) {
                    return false;
                }
                ordinals.pop();
            }
            Tok::Comment(body) => {
                if !seen(Seen::Comment { body, before }, &stack, &ordinals) {
                    return false;
                }
            }
            Tok::Doctype => return false,
        }
    }
    stack.is_empty() && !open_reference(last_text)
}

/// Whether `text` ends in a character reference that the text after it
/// could still extend (`&no` + `t;` is `&not;`): an `&` with only name or
/// number characters after it.
pub(super) fn open_reference(text: &str) -> bool {
    text.rfind('&').is_some_and(|at| {
        text[at + 1..]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'#')
    })
}

/// Whether `css` (a frame's `<style>` blocks) has only rules whose
/// selectors each match an element by itself (module docs).
pub(super) fn context_free_css(css: &str) -> bool {
    if css.contains('@') || css.contains('\\') || css.contains('<') || css.contains("var(") {
        return false;
    }
    let Some(css) = strip_comments(css) else {
        return false;
    };
    let mut rest = css.as_str();
    loop {
        let Some(open) = rest.find('{') else {
            return rest.trim().is_empty() && !rest.contains('}');
        };
        let selectors = &rest[..open];
        let Some(close) = rest[open + 1..].find('}') else {
            return false;
        };
        let block = &rest[open + 1..open + 1 + close];
        if block.contains('{') || !selectors.split(',').all(simple_selector) {
            return false;
        }
        rest = &rest[open + 1 + close + 1..];
    }
}

/// `a`, `.card`, `p.note#x`, `*`: a compound of a type, classes and ids.
fn simple_selector(s: &str) -> bool {
    let s = s.trim();
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || matches!(c, '*' | '.' | '#') => {}
        _ => return false,
    }
    // `.` and `#` each start a name: none ends the selector or follows another
    let ok_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '#' | '*'));
    let names_ok = !s.ends_with(['.', '#'])
        && !s.contains("..")
        && !s.contains(".#")
        && !s.contains("#.")
        && !s.contains("##")
        && !s[1..].contains('*');
    ok_chars && names_ok
}

/// `css` without its `/* … */` comments; `None` for an unclosed one.
fn strip_comments(css: &str) -> Option<String> {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        let end = rest[at + 2..].find("*/")?;
        out.push(' ');
        rest = &rest[at + 2 + end + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// No character the parser rewrites across the boundary (`\r\n` is folded
/// into one `\n`, NUL is dropped) and no css-inline attribute of its own.
fn clean(html: &str) -> bool {
    !html.contains(['\r', '\0']) && !html.contains("data-css-inline")
}

/// The marker's open elements (`stack`) are ones the step's HTML can sit
/// in as in a body of its own: in the body, under ordinary containers.
fn marker_context(stack: &[String], body_seen: bool) -> bool {
    let mut in_body = body_seen && stack.iter().any(|n| n == "body");
    for (i, name) in stack.iter().enumerate() {
        let parent = if i == 0 {
            None
        } else {
            Some(stack[i - 1].as_str())
        };
        match name.as_str() {
            "html" if i == 0 => {}
            "body" if parent.is_none() || parent == Some("html") => {}
            "head" => return false,
            "table" | "tbody" | "thead" | "tfoot" | "tr" | "td" | "th" => {
                if !placed(name, &stack[..i]) {
                    return false;
                }
                in_body = true;
            }
            n if CONTAINERS.contains(&n) => in_body = true,
            _ => return false,
        }
    }
    // directly in a table, not a cell: text there is moved out of it
    let last = stack.last().map(String::as_str);
    in_body && !matches!(last, Some("table" | "tbody" | "thead" | "tfoot" | "tr"))
}

/// Whether a start tag `name` opens where the parser keeps it, under the
/// fragment's open elements `stack`, closing nothing implicitly.
fn placed(name: &str, stack: &[String]) -> bool {
    let parent = stack.last().map(String::as_str);
    let in_table = matches!(parent, Some("table" | "tbody" | "thead" | "tfoot" | "tr"));
    match name {
        "tbody" | "thead" | "tfoot" => parent == Some("table"),
        "tr" => matches!(parent, Some("table" | "tbody" | "thead" | "tfoot")),
        "td" | "th" => parent == Some("tr"),
        "li" => matches!(parent, Some("ul" | "ol")),
        "dd" | "dt" => parent == Some("dl"),
        _ if in_table => false,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6"
            if matches!(parent, Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6")) =>
        {
            false
        }
        "a" if stack.iter().any(|n| n == "a") => false,
        n if closes_p(n) => !p_open(stack),
        _ => true,
    }
}

/// Start tags that close an open `p` (`table` included: it does unless
/// the document is in quirks mode, which the two parses need not share).
fn closes_p(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "center"
            | "div"
            | "dl"
            | "figcaption"
            | "figure"
            | "footer"
            | "header"
            | "main"
            | "nav"
            | "ol"
            | "p"
            | "section"
            | "ul"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "pre"
            | "table"
            | "hr"
    )
}

/// Whether a `p` is open in button scope among `stack` (a table, cell or
/// the root bounds the scope).
fn p_open(stack: &[String]) -> bool {
    for n in stack.iter().rev() {
        match n.as_str() {
            "p" => return true,
            "table" | "td" | "th" => return false,
            _ => {}
        }
    }
    false
}

/// Elements that never have content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen",
];
/// The void elements a fragment may have.
const FRAGMENT_VOID: &[&str] = &["br", "hr", "img", "wbr"];
/// Containers the marker may sit in (with `html`, `body` and a table cell).
const CONTAINERS: &[&str] = &[
    "div",
    "center",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "blockquote",
];
/// Elements a frame may have anywhere (its `style` and `title` aside).
const FRAME_ELEMENTS: &[&str] = &[
    "html",
    "head",
    "body",
    "div",
    "center",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "blockquote",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "p",
    "span",
    "a",
    "b",
    "strong",
    "i",
    "em",
    "u",
    "small",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
];
/// The non-void elements a fragment may have: ordinary body content.
const FRAGMENT_ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "article",
    "aside",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "center",
    "cite",
    "code",
    "dd",
    "del",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "font",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "i",
    "ins",
    "kbd",
    "li",
    "main",
    "mark",
    "nav",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
];

/// A token of HTML as the checks above read it.
enum Tok<'a> {
    Text(&'a str),
    /// lower-case name, the attributes' source, `/>`
    Start(String, &'a str, bool),
    End(String),
    /// its inside
    Comment(&'a str),
    Doctype,
}

/// A small HTML tokenizer: tags, text, comments and a doctype. What it is
/// not sure of (a `<!` or `<?` it does not know, an unfinished tag, an odd
/// attribute) is an error, so the caller says "no" and nothing is split.
struct Lexer<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Lexer<'a> {
    fn new(s: &'a str) -> Self {
        Lexer { s, i: 0 }
    }

    fn next(&mut self) -> Option<Option<Tok<'a>>> {
        let rest = &self.s[self.i..];
        if rest.is_empty() {
            return None;
        }
        let b = rest.as_bytes();
        if b[0] != b'<' || b.len() < 2 {
            // text up to the next `<` that starts markup
            let mut end = 1;
            while end < b.len() {
                if b[end] == b'<' && b.get(end + 1).is_some_and(|c| markup_start(*c)) {
                    break;
                }
                end += 1;
            }
            self.i += end;
            return Some(Some(Tok::Text(&rest[..end])));
        }
        Some(self.markup(rest))
    }

    fn markup(&mut self, rest: &'a str) -> Option<Tok<'a>> {
        let b = rest.as_bytes();
        if !markup_start(b[1]) {
            // a lone `<`: text
            let end = rest[1..].find('<').map_or(rest.len(), |e| e + 1);
            self.i += end;
            return Some(Tok::Text(&rest[..end]));
        }
        if let Some(c) = rest.strip_prefix("<!--") {
            if c.starts_with('>') || c.starts_with("->") {
                return None;
            }
            let end = c.find("-->")?;
            if c[..end].contains("--!") {
                return None;
            }
            self.i += 4 + end + 3;
            return Some(Tok::Comment(&c[..end]));
        }
        if b.len() >= 9 && b[..9].eq_ignore_ascii_case(b"<!doctype") {
            let end = rest.find('>')?;
            self.i += end + 1;
            return Some(Tok::Doctype);
        }
        if b[1] == b'/' {
            if !b.get(2).is_some_and(u8::is_ascii_alphabetic) {
                return None;
            }
            let end = rest.find('>')?;
            let inner = &rest[2..end];
            let name_end = inner
                .find(|c: char| c.is_ascii_whitespace())
                .unwrap_or(inner.len());
            if inner[..name_end].contains('/') || !inner[name_end..].trim().is_empty() {
                return None;
            }
            self.i += end + 1;
            return Some(Tok::End(inner[..name_end].to_ascii_lowercase()));
        }
        if !b[1].is_ascii_alphabetic() {
            return None;
        }
        // a start tag: its name, then attributes up to an unquoted `>`
        let name_end = rest[1..]
            .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
            .map(|e| e + 1)?;
        let name = rest[1..name_end].to_ascii_lowercase();
        if !name.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let mut j = name_end;
        let mut self_closing = false;
        loop {
            let c = *b.get(j)?;
            match c {
                b'>' => break,
                b'/' if b.get(j + 1) == Some(&b'>') => {
                    self_closing = true;
                    j += 1;
                    break;
                }
                c if c.is_ascii_whitespace() => j += 1,
                b'"' | b'\'' | b'<' | b'=' | b'/' | b'`' => return None,
                _ => j = attribute(rest, j)?,
            }
        }
        let attrs = &rest[name_end..if self_closing { j - 1 } else { j }];
        self.i += j + 1;
        Some(Tok::Start(name, attrs, self_closing))
    }

    /// The text of a raw-text element `name` (after its start tag), and its
    /// end tag consumed.
    fn raw_text(&mut self, name: &str) -> Option<&'a str> {
        let rest = &self.s[self.i..];
        let lower = rest.to_ascii_lowercase();
        let close = format!("</{name}");
        let at = lower.find(&close)?;
        let after = &rest[at + close.len()..];
        let gt = after.find('>')?;
        if !after[..gt].trim().is_empty() {
            return None;
        }
        self.i += at + close.len() + gt + 1;
        Some(&rest[..at])
    }
}

/// The end of the attribute starting at `j` of a start tag `rest` (its name,
/// then `= value` perhaps), or `None` where it is not a plain one.
fn attribute(rest: &str, j: usize) -> Option<usize> {
    let b = rest.as_bytes();
    let skip =
        |j: usize, go: &dyn Fn(u8) -> bool| j + b[j..].iter().take_while(|c| go(**c)).count();
    let j = skip(j, &|c| {
        !c.is_ascii_whitespace() && !b"/>=\"'<`".contains(&c)
    });
    let j = skip(j, &|c| c.is_ascii_whitespace());
    if b.get(j) != Some(&b'=') {
        // the tag's end, a `/`, or the next attribute's name
        return match b.get(j) {
            Some(c)
                if !(c.is_ascii_whitespace()
                    || matches!(c, b'>' | b'/')
                    || c.is_ascii_alphabetic()) =>
            {
                None
            }
            _ => Some(j),
        };
    }
    let j = skip(j + 1, &|c| c.is_ascii_whitespace());
    match *b.get(j)? {
        q @ (b'"' | b'\'') => Some(j + 1 + rest[j + 1..].find(q as char)? + 1),
        _ => {
            let end = skip(j, &|c| !c.is_ascii_whitespace() && c != b'>');
            let value = &rest[j..end];
            (!value.is_empty() && !value.contains(['"', '\'', '<', '=', '`'])).then_some(end)
        }
    }
}

/// Whether the byte after a `<` starts markup (a tag, `</`, `<!`, `<?`).
fn markup_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?')
}

#[cfg(test)]
#[path = "css_split_tests.rs"]
mod tests;
