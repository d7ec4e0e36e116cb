//! The rules of a project's content, pure and written once:
//! what a handle, a locale and a message key may be, the bounds of a
//! project's content, the partials a template includes and how deep they
//! nest, the locale fallback of `t()`, and a text body as HTML paragraphs.
//!
//! Bounds (docs/CONTENT.md): at most `MAX_PARTIALS` partials of
//! `MAX_PARTIAL_BYTES`, `MAX_LAYOUTS` layouts of `MAX_LAYOUT_BYTES`,
//! `MAX_LOCALES` catalogs of `MAX_CATALOG_BYTES` and `MAX_MESSAGES`
//! messages. A staging reads and compiles all of a project's content once
//! per content version, so these bound its memory (about 5 MB at worst)
//! and the work of a cache miss.
//!
//! Includes name a partial literally (`{% include "partials/footer" %}`),
//! so the graph of includes is known when content is saved: a missing
//! partial and a chain deeper than `MAX_INCLUDE_DEPTH` are refused then
//! (422), never found by a delivery.

use crate::validate::is_handle;
use std::collections::{BTreeMap, HashMap};

pub const MAX_PARTIALS: usize = 100;
pub const MAX_PARTIAL_BYTES: usize = 32 * 1024;
pub const MAX_LAYOUTS: usize = 20;
pub const MAX_LAYOUT_BYTES: usize = 128 * 1024;
pub const MAX_LOCALES: usize = 50;
pub const MAX_CATALOG_BYTES: usize = 64 * 1024;
pub const MAX_MESSAGES: usize = 1000;
/// Levels of message keys (`a.b.c.d.e.f`).
pub const MAX_KEY_DEPTH: usize = 6;
/// Partials nested in each other at most, counted from the template that
/// includes the first.
pub const MAX_INCLUDE_DEPTH: usize = 5;
/// The locale `t()` falls back to last when the project sets none.
pub const DEFAULT_LOCALE: &str = "en";
/// The template name prefix of partials.
pub const PARTIALS: &str = "partials/";

/// A partial's or a layout's handle: like a flow's.
pub fn is_content_handle(s: &str) -> bool {
    is_handle(s)
}

/// One segment of a message key: `^[A-Za-z0-9_-]{1,64}$` (dots separate
/// segments).
pub fn is_key_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

/// The partials `src` includes (imports, extends), each once; an error
/// naming the first tag that does not name a partial literally.
pub fn includes(src: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = vec![];
    let mut rest = src;
    while let Some(at) = rest.find("{%") {
        rest = &rest[at + 2..];
        let tag = rest.trim_start_matches(['-', '+', '~']).trim_start();
        let word: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        if !matches!(word.as_str(), "include" | "import" | "from" | "extends") {
            continue;
        }
        let arg = tag[word.len()..].trim_start();
        let quote = arg.chars().next().filter(|c| *c == '"' || *c == '\'');
        let name = quote.and_then(|q| arg[1..].find(q).map(|end| &arg[1..1 + end]));
        let handle = name.and_then(|n| n.strip_prefix(PARTIALS));
        match handle {
            Some(h) if is_content_handle(h) => {
                if !out.iter().any(|o| o == h) {
                    out.push(h.to_string());
                }
            }
            _ => {
                return Err(format!(
                    "{word} names a partial literally: {{% {word} \"partials/<handle>\" %}}"
                ))
            }
        }
    }
    Ok(out)
}

/// How deep the partials of `graph` (handle → the partials it includes)
/// nest, from each partial itself (1: it includes none); a partial in a
/// cycle, or over `MAX_INCLUDE_DEPTH`, counts `MAX_INCLUDE_DEPTH + 1`.
/// A partial missing from the graph counts 1 (reported on its own).
pub fn depths(graph: &HashMap<String, Vec<String>>) -> HashMap<String, usize> {
    fn depth(
        h: &str, graph: &HashMap<String, Vec<String>>, memo: &mut HashMap<String, usize>,
        path: &mut Vec<String>,
    ) -> usize {
        if let Some(d) = memo.get(h) {
            return *d;
        }
        if path.iter().any(|p| p == h) || path.len() > MAX_INCLUDE_DEPTH {
            return MAX_INCLUDE_DEPTH + 1;
        }
        path.push(h.to_string());
        let below = graph
            .get(h)
            .map(|kids| {
                kids.iter()
                    .map(|k| depth(k, graph, memo, path))
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        path.pop();
        let d = (1 + below).min(MAX_INCLUDE_DEPTH + 1);
        memo.insert(h.to_string(), d);
        d
    }
    let mut memo = HashMap::new();
    for h in graph.keys() {
        depth(h, graph, &mut memo, &mut vec![]);
    }
    memo
}

/// Checks the includes of a template source against the project's
/// partials (`graph`): each must exist and nest at most
/// `MAX_INCLUDE_DEPTH` deep. The problem, if any.
pub fn check_includes(src: &str, graph: &HashMap<String, Vec<String>>) -> Result<(), String> {
    let inc = includes(src)?;
    let d = depths(graph);
    for h in &inc {
        if !graph.contains_key(h) {
            return Err(format!("includes partials/{h}, which does not exist"));
        }
        if d.get(h).copied().unwrap_or(1) > MAX_INCLUDE_DEPTH {
            return Err(format!(
                "includes partials/{h}, which nests partials more than {MAX_INCLUDE_DEPTH} deep"
            ));
        }
    }
    Ok(())
}

/// The locales `t()` looks a message up in, in order: the recipient's and
/// each shorter prefix of it (`fr-CA`, `fr`), then the project's default
/// likewise; lower case (tags compare without case), without repeats.
pub fn locale_chain(locale: Option<&str>, default: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for tag in locale.into_iter().chain([default]) {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let mut cut = tag.as_str();
        while !cut.is_empty() {
            if !out.iter().any(|o| o == cut) {
                out.push(cut.to_string());
            }
            cut = match cut.rfind('-') {
                Some(i) => &cut[..i],
                None => "",
            };
        }
    }
    out
}

/// A locale in its usual case (`fr-CA`, `zh-Hant-TW`): tags compare
/// without case, so a project holds one catalog per tag however written.
pub fn canonical_locale(tag: &str) -> String {
    tag.split(['-', '_'])
        .enumerate()
        .map(|(i, p)| match (i, p.len()) {
            (0, _) => p.to_ascii_lowercase(),
            (_, 2) => p.to_ascii_uppercase(),
            (_, 4) if p.is_ascii() => {
                let mut s = p.to_ascii_lowercase();
                s[..1].make_ascii_uppercase();
                s
            }
            _ => p.to_ascii_lowercase(),
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// Flattens a catalog's nested messages into `a.b.c` → template source;
/// problems go to `bad` as (field path, reason, message).
pub fn flatten_messages(
    v: &serde_json::Value, bad: &mut Vec<(String, &'static str, String)>,
) -> BTreeMap<String, String> {
    fn walk(
        v: &serde_json::Value, key: &str, depth: usize, out: &mut BTreeMap<String, String>,
        bad: &mut Vec<(String, &'static str, String)>,
    ) {
        let path = format!("messages{}{key}", if key.is_empty() { "" } else { "." });
        match v {
            serde_json::Value::String(s) if !key.is_empty() => {
                out.insert(key.to_string(), s.clone());
            }
            serde_json::Value::Object(m) if depth < MAX_KEY_DEPTH => {
                for (k, v) in m {
                    if !is_key_segment(k) {
                        bad.push((
                            format!("{path}.{k}"),
                            "format",
                            "a message key segment is ^[A-Za-z0-9_-]{1,64}$".into(),
                        ));
                        continue;
                    }
                    let sub = if key.is_empty() {
                        k.clone()
                    } else {
                        format!("{key}.{k}")
                    };
                    walk(v, &sub, depth + 1, out, bad);
                }
            }
            serde_json::Value::Object(_) => bad.push((
                path,
                "length",
                format!("message keys nest at most {MAX_KEY_DEPTH} levels"),
            )),
            _ => bad.push((
                path,
                "format",
                "must be an object of messages (strings) or nested objects".into(),
            )),
        }
    }
    let mut out = BTreeMap::new();
    if !v.is_object() {
        bad.push(("messages".into(), "format", "must be an object".into()));
        return out;
    }
    walk(v, "", 0, &mut out, bad);
    out
}

/// The nested form of flattened messages (what the API shows).
pub fn nest_messages(flat: &BTreeMap<String, String>) -> serde_json::Value {
    let mut root = serde_json::Map::new();
    for (k, v) in flat {
        let mut at = &mut root;
        let parts: Vec<&str> = k.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            let e = at
                .entry(p.to_string())
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if !e.is_object() {
                *e = serde_json::Value::Object(Default::default());
            }
            at = e.as_object_mut().expect("an object just made");
        }
        at.insert(parts[parts.len() - 1].to_string(), v.clone().into());
    }
    serde_json::Value::Object(root)
}

/// A text body as HTML paragraphs (an email step without `html` wrapped in
/// a layout): blank lines separate paragraphs, a line break is `<br>`,
/// everything escaped.
pub fn paragraphs(body: &str) -> String {
    let body = body.replace("\r\n", "\n");
    let mut out = String::with_capacity(body.len() + 16);
    for para in body.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        out.push_str("<p>");
        for (i, line) in para.lines().enumerate() {
            if i > 0 {
                out.push_str("<br>");
            }
            escape_into(line, &mut out);
        }
        out.push_str("</p>\n");
    }
    out
}

/// `s` appended to `out`, safe in HTML text and in a quoted attribute.
pub fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_chain_shortens_the_tag_then_takes_the_default() {
        assert_eq!(locale_chain(Some("fr-CA"), "en"), ["fr-ca", "fr", "en"]);
        assert_eq!(locale_chain(Some("fr"), "en"), ["fr", "en"]);
        assert_eq!(locale_chain(None, "en-GB"), ["en-gb", "en"]);
        assert_eq!(locale_chain(Some("en_US"), "en"), ["en-us", "en"]);
        assert_eq!(
            locale_chain(Some("zh-Hant-TW"), "fr"),
            ["zh-hant-tw", "zh-hant", "zh", "fr"]
        );
    }

    #[test]
    fn locales_take_their_usual_case() {
        assert_eq!(canonical_locale("FR-ca"), "fr-CA");
        assert_eq!(canonical_locale("zh-hant-tw"), "zh-Hant-TW");
        assert_eq!(canonical_locale("en_us"), "en-US");
    }

    #[test]
    fn includes_name_partials_literally() {
        assert_eq!(
            includes(r#"a {% include "partials/x" %} {%- include 'partials/y' -%}{% include "partials/x" %}"#)
                .unwrap(),
            ["x", "y"]
        );
        assert!(includes("{% include name %}").is_err());
        assert!(includes(r#"{% include "other" %}"#).is_err());
        assert!(includes(r#"{% extends "partials/Bad Name" %}"#).is_err());
        assert!(includes("{% if x %}{% endif %}{{ t('a') }}")
            .unwrap()
            .is_empty());
    }

    fn chain(n: usize) -> HashMap<String, Vec<String>> {
        (1..=n)
            .map(|i| {
                let kids = if i < n {
                    vec![format!("p{}", i + 1)]
                } else {
                    vec![]
                };
                (format!("p{i}"), kids)
            })
            .collect()
    }

    #[test]
    fn five_partials_deep_pass_and_six_or_a_cycle_do_not() {
        let five = chain(5);
        assert_eq!(depths(&five)["p1"], 5);
        assert!(check_includes(r#"{% include "partials/p1" %}"#, &five).is_ok());
        let six = chain(6);
        assert!(check_includes(r#"{% include "partials/p1" %}"#, &six)
            .unwrap_err()
            .contains("more than 5 deep"));
        assert!(check_includes(r#"{% include "partials/p2" %}"#, &six).is_ok());
        let mut cycle = chain(2);
        cycle.insert("p2".into(), vec!["p1".into()]);
        assert!(depths(&cycle)["p1"] > MAX_INCLUDE_DEPTH);
        assert!(check_includes(r#"{% include "partials/nope" %}"#, &five)
            .unwrap_err()
            .contains("does not exist"));
    }

    #[test]
    fn messages_flatten_and_nest_back() {
        let v = serde_json::json!({"welcome": {"subject": "Hi {{ name }}", "body": "B"}, "x": "y"});
        let mut bad = vec![];
        let flat = flatten_messages(&v, &mut bad);
        assert!(bad.is_empty());
        assert_eq!(flat["welcome.subject"], "Hi {{ name }}");
        assert_eq!(nest_messages(&flat), v);
        flatten_messages(&serde_json::json!({"a.b": "x", "c": 1}), &mut bad);
        assert_eq!(bad.len(), 2);
    }

    #[test]
    fn paragraphs_are_escaped() {
        assert_eq!(
            paragraphs("Hi <b>\nthere\n\nBye & co"),
            "<p>Hi &lt;b&gt;<br>there</p>\n<p>Bye &amp; co</p>\n"
        );
    }
}
