//! Tests of CSS inlining: the limits, and the split path against the whole.

use super::*;

#[test]
fn css_is_inlined_only_when_there_is_a_style_block() {
    assert!(has_style("<html><STYLE>p{}</STYLE>"));
    assert!(!has_style("<p>no styles</p>"));
    let l = Limits::default();
    let a = inline("<style>p { color: red }</style><p>x</p>", None, &l).unwrap();
    assert!(a.contains("<p style=\"color: red;\">x</p>"), "{a}");
    // the same input again: the same output (from the thread's last)
    assert_eq!(
        inline("<style>p { color: red }</style><p>x</p>", None, &l).unwrap(),
        a
    );
    assert_eq!(inline("<p>x</p>", None, &l).unwrap(), "<p>x</p>");
    // rules × elements past the bound: refused before inlining
    assert_eq!(css_work("<p><style>a{} b{}</style><i>x</i></p>"), (2, 5));
    let heavy = format!(
        "<style>{}</style>{}",
        (0..2000)
            .map(|i| format!(".c{i} {{ color: red }}"))
            .collect::<String>(),
        "<p>x</p>".repeat(2000)
    );
    let e = inline(&heavy, None, &l).unwrap_err();
    assert!(e.contains("rule × element pairs"), "{e}");
}

/// A tiny deterministic generator (xorshift), so a failing case is the
/// same on every run and its seed is in the message.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Layouts' output around the step's HTML (`{}`), `CSS` for their rules:
/// ones the split is exact for, and ones it must refuse.
const FRAMES: &[&str] = &[
    "<html><head><style>CSS</style></head><body><div class=\"card\">{}</div><p class=\"footer\">Acme</p></body></html>",
    "<!DOCTYPE html><html><head><style>CSS</style></head><body><table><tr><td class=\"c\">{}</td></tr></table></body></html>",
    "<style>CSS</style><div>{}</div>",
    "<style>CSS</style>{}",
    "<html><head><style>CSS</style></head><body>{}</body></html>",
    "<html><head><style>CSS</style></head><body><p>{}</p></body></html>",
    "<html><head><style>CSS</style></head><body><ul><li>{}</li></ul></body></html>",
    "<html><head><style>CSS</style></head><body><b>{}</b></body></html>",
    "<html><head><style>CSS</style></head><body><div><p>intro &amp; more</p>{}</div></body></html>",
    "<html><head><style>CSS</style></head><body><div>Tom &amp{}</div></body></html>",
    "<html><head><style>CSS</style></head><body><table>{}</table></body></html>",
    "<html><head><style>CSS</style></head><body><div>a{}b</div><div>after</div></body></html>",
    "<html><head><style>CSS</style></head><body><div>{}t; more</div></body></html>",
    "<html><head><style>CSS</style></head><body><p>x<div>{}</div></p></body></html>",
    "<html><head><style>CSS</style></head><body><center><section>{}</section></center><!-- c --></body></html>",
    "<html><head><style>CSS</style></head></html>{}",
    "<html><head><style>CSS</style>{}</head></html>",
];

const CSS: &[&str] = &[
    "p { color: red } .card { padding: 4px } h1 { font-size: 20px } td { color: blue }",
    ".card p { margin: 0 }",
    "* { margin: 0 } #x { color: red } p.note { color: green } .note { color: blue }",
    "li:first-child { color: red } p { color: blue }",
    "div > p { color: red }",
    "a { color: #f00 !important } .c { color: blue } b, i { font-weight: 700 }",
    "@media (max-width: 600px) { p { color: red } } p { margin: 1px }",
    "p { color: red } /* a comment */ span { color: green }",
];

const TAGS: &[&str] = &[
    "p",
    "div",
    "h1",
    "h2",
    "b",
    "a",
    "span",
    "table",
    "tr",
    "td",
    "tbody",
    "li",
    "ul",
    "pre",
    "em",
    "center",
    "dl",
    "dd",
    "section",
    "font",
    "i",
    "blockquote",
];
const VOIDS: &[&str] = &["br", "hr", "img", "wbr", "input"];
const TEXTS: &[&str] = &[
    "Hello",
    " ",
    "a &amp; b",
    "Tom &no",
    "t;",
    "x < y",
    "5 > 3",
    "\n",
    "caf\u{e9}",
    "&lt;b&gt;",
    "Ada",
    "&",
    "  two  spaces ",
];
const ATTRS: &[&str] = &[
    "",
    " class=\"note\"",
    " class=\"card\"",
    " id=\"x\"",
    " style=\"color: gray\"",
    " class=\"c note\"",
    " href=\"https://x.test/?a=1&amp;b=2\"",
    " title='q > r'",
];

/// A step's HTML: mostly well formed, sometimes not (an end tag missing,
/// one too many, a misnest, a tag where the parser moves or closes it), so
/// both answers of `fragment_ok` are met.
fn fragment(rng: &mut Rng, depth: u32) -> String {
    if rng.chance(60) {
        return well_formed(rng, "div", depth);
    }
    let mut out = String::new();
    for _ in 0..1 + rng.next() % 3 {
        match rng.next() % 10 {
            0..=3 => out.push_str(rng.pick(TEXTS)),
            4 => {
                let v = rng.pick(VOIDS);
                out.push_str(&format!("<{v}{}>", rng.pick(ATTRS)));
            }
            _ if depth < 4 => {
                let t = rng.pick(TAGS);
                out.push_str(&format!("<{t}{}>", rng.pick(ATTRS)));
                out.push_str(&fragment(rng, depth + 1));
                if !rng.chance(4) {
                    out.push_str(&format!("</{t}>"));
                }
                if rng.chance(2) {
                    out.push_str(&format!("</{}>", rng.pick(TAGS)));
                }
            }
            _ => out.push_str(rng.pick(TEXTS)),
        }
    }
    out
}

/// Content a `parent` element may hold, nested as HTML allows.
fn well_formed(rng: &mut Rng, parent: &str, depth: u32) -> String {
    let mut out = String::new();
    for _ in 0..1 + rng.next() % 3 {
        let (tag, inner) = match parent {
            "table" => ("tr", "tr"),
            "tr" => (rng.pick(&["td", "th"]), "div"),
            "ul" | "ol" => ("li", "div"),
            "dl" => (rng.pick(&["dt", "dd"]), "p"),
            "p" | "h1" | "b" | "a" => (rng.pick(&["b", "i", "span", "em", "font", "br", ""]), "p"),
            _ => {
                let t = rng.pick(&[
                    "p",
                    "div",
                    "h1",
                    "table",
                    "ul",
                    "dl",
                    "b",
                    "a",
                    "span",
                    "pre",
                    "hr",
                    "img",
                    "center",
                    "section",
                    "blockquote",
                    "",
                ]);
                (t, t)
            }
        };
        if tag.is_empty() || depth >= 4 {
            out.push_str(rng.pick(TEXTS));
            continue;
        }
        // `a` in `a` is refused: inline in it instead
        let tag = if tag == "a" && parent == "a" {
            "b"
        } else {
            tag
        };
        let attrs = if tag == "a" {
            " href=\"https://x.test/\""
        } else {
            rng.pick(ATTRS)
        };
        if matches!(tag, "hr" | "img" | "br") {
            out.push_str(&format!("<{tag}{attrs}>"));
            continue;
        }
        out.push_str(&format!("<{tag}{attrs}>"));
        if matches!(tag, "table" | "tr" | "ul" | "ol" | "dl") {
            out.push_str(&well_formed(rng, tag, depth + 1));
        } else {
            out.push_str(&well_formed(rng, inner, depth + 1));
        }
        out.push_str(&format!("</{tag}>"));
    }
    out
}

/// Over generated layouts, CSS and steps' HTML: wherever the split path
/// is taken, its email is byte for byte the whole email inlined; and it is
/// taken often enough for that to mean something.
#[test]
fn the_split_path_gives_what_inlining_the_whole_email_gives() {
    let (mut split_n, mut total) = (0, 0);
    for seed in 1..4000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let frame = rng.pick(FRAMES).replace("CSS", rng.pick(CSS));
        let step = fragment(&mut rng, 0);
        let html = frame.replace("{}", &step);
        let expected = whole(&html);
        // twice: the first meeting of a frame only marks it
        let _ = split(&html, &step);
        total += 1;
        if let Some(got) = split(&html, &step) {
            split_n += 1;
            assert_eq!(
                Ok(&got),
                expected.as_ref(),
                "seed {seed}\nframe: {frame}\nstep: {step}"
            );
        }
    }
    // about one case in eight has a frame, CSS and step it allows (most
    // are made to be refused)
    assert!(split_n * 12 > total, "split {split_n} of {total}");
}

/// A frame with the recipient's own text in it changes every email: it is
/// never inlined apart (each call is the check alone), and every email is
/// still right.
#[test]
fn a_frame_that_changes_per_recipient_is_inlined_whole() {
    let l = Limits::default();
    for i in 0..5 {
        let step = format!("<p>step {i}</p>");
        let html = format!("<style>p {{ color: red }}</style><div>Hi {i}</div><div>{step}</div>");
        assert_eq!(split(&html, &step), None);
        assert_eq!(
            inline(&html, Some(&step), &l).unwrap(),
            whole(&html).unwrap()
        );
    }
}

/// Recipients in two languages alternate between two frames (the layout's
/// footer in each): both are kept, so both are split.
#[test]
fn frames_that_alternate_are_all_kept() {
    let frame = |lang: &str| {
        format!("<style>p {{ color: red }}</style><div>{{}}</div><p>{lang} footer</p>")
    };
    for i in 0..6 {
        let lang = if i % 2 == 0 { "en" } else { "fr" };
        let step = format!("<p>step {i}</p>");
        let html = frame(lang).replace("{}", &step);
        let got = split(&html, &step);
        // each frame is split from its second meeting on
        assert_eq!(got.is_some(), i >= 2, "recipient {i}");
        if let Some(got) = got {
            assert_eq!(got, whole(&html).unwrap());
        }
    }
}

/// A frame bigger than an email's usual size is not kept: inlined whole.
#[test]
fn a_large_frame_is_inlined_whole() {
    let filler = "<div>x</div>".repeat(MAX_FRAME_BYTES / 12 + 1);
    let step = "<p>step</p>";
    let html = format!("<style>p {{ color: red }}</style>{filler}<div>{step}</div>");
    assert_eq!(split(&html, step), None);
    assert_eq!(split(&html, step), None);
    let small = format!("<style>p {{ color: red }}</style><div>{step}</div>");
    assert_eq!(split(&small, step), None);
    assert!(split(&small, step).is_some());
}
