//! The inlined path (`css_source`) against rendering and inlining per
//! recipient: the checks case by case, then the same emails byte for byte
//! over chosen and generated templates and recipients.

use super::*;
use crate::model::{ChannelType, ContentBody, ContentRecord, Flow, Project, Template, Timestamp};
use crate::render::content::{FAST_USED, SLOW_ONLY};
use crate::render::{RunRenderer, Shared};
use std::sync::Arc;

const CSS: &str =
    "body { font-family: sans-serif } .card { padding: 24px } p { margin: 0 0 12px } \
    b { color: red } li, .item { color: blue } #x { color: green } td { padding: 2px } \
    img { border: 0 } h1 { font-size: 20px } a { color: #123 } span.note { font-style: italic }";

#[test]
fn a_source_with_tags_in_text_is_inlined_with_its_tags_kept() {
    let out = inlined_source(
        "<p>Hello <b>{{ recipient.first_name }}</b>,</p>{% if x %}<p class=\"item\">{{ x }}</p>{% endif %}",
        "p { margin: 0 } b { color: red } .item { color: blue }",
    )
    .unwrap();
    assert_eq!(
        out.0,
        "<p style=\"margin: 0;\">Hello <b style=\"color: red;\">{{ recipient.first_name }}</b>,</p>\
         {% if x %}<p class=\"item\" style=\"margin: 0;color: blue;\">{{ x }}</p>{% endif %}"
    );
    // text only, loops in lists and cells, comments and assignments
    for ok in [
        "Hi {{ name }}!",
        "<ul>{% for i in items %}<li>{{ i }}</li>{% endfor %}</ul>",
        "<table><tr><td>{{ a }}</td><td>{% for c in cs %}{{ c }}{% endfor %}</td></tr></table>",
        "<table><tr>{% for c in cs %}<td>{{ c }}</td>{% endfor %}</tr></table>",
        "<table>\n <tbody>\n {% for r in rows %}<tr>{# row #}<td>{{ r }}</td></tr>{% endfor %}\n </tbody></table>",
        "<p>{# why #}{% set n = name %}{{ n }} &amp; {{ m }}</p>",
        "<p>{% if a < b %}x{% elif a > 2 %}y{% else %}z{% endif %}</p>",
        "<div>{% with n = name %}<p>{{ n }}</p>{% endwith %}</div>",
        "<p>a</p>\n",
    ] {
        assert!(inlined_source(ok, CSS).is_some(), "{ok}");
    }
}

#[test]
fn a_source_the_checks_are_unsure_of_has_no_plan() {
    for no in [
        // tags in a tag, an attribute or its value
        "<a href=\"{{ url }}\">x</a>",
        "<p class=\"{{ c }}\">x</p>",
        "<p {{ attrs }}>x</p>",
        // where the parser moves or drops text
        "<table>{% for r in rows %}<tr><td>{{ r }}</td></tr>{% endfor %}</table>",
        "<table><tr>{{ x }}<td>a</td></tr></table>",
        // a statement directly in a table: the rows' implied `tbody` would
        // open inside the loop (`<tbody><tr>…</tr><tbody><tr>…`)
        "<table>\n {% for r in rows %}<tr><td>{{ r }}</td></tr>{% endfor %}</table>",
        "<table><tr><td>a</td></tr>{% if x %}<tr><td>b</td></tr>{% endif %}</table>",
        "<pre>{% if x %}a{% endif %}</pre>",
        "<p>&no{# c #}t;</p>",
        "<pre>{{ code }}</pre>",
        // a character reference the value could finish
        "<p>&no{{ x }}</p>",
        "<p>&{% if a %}{% endif %}amp;</p>",
        // a lone `<` (a value could make a tag of it)
        "<p>a <{{ b }}</p>",
        // blocks across elements
        "{% if a %}<div>{% endif %}x</div>",
        "<div>{% if a %}</div><div>{% endif %}</div>",
        "<div>{% if a %}</div><p>{% endif %}</p>",
        "<p>{% for i in l %}</p><p>{% endfor %}</p>",
        // what makes the source a value, or writes markup
        "{% include \"partials/x\" %}",
        "<p>{% set x %}<b>a</b>{% endset %}{{ x }}</p>",
        "<p>{% filter upper %}a{% endfilter %}</p>",
        "{% macro m() %}<b>a</b>{% endmacro %}{{ m() }}",
        "<p>{% for i in l recursive %}{{ loop(i) }}{% endfor %}</p>",
        "{% raw %}{{ x }}{% endraw %}",
        "{% autoescape true %}{{ x }}{% endautoescape %}",
        // whitespace control, braces the scanner could misread, odd quotes
        "<p>  {{- x }}</p>",
        "<p>{% if a -%} x{% endif %}</p>",
        "<p>{{ \"}}\" }}</p>",
        "<p>{ not a tag }</p>",
        "<p>{{ \"it's\" }}</p>",
        "<p>a}</p>",
        // what the parser rewrites, and the placeholder itself
        "<p>a\r\n{{ x }}</p>",
        "<p>a\u{a0}{{ x }}</p>",
        "<p>hErAlDtAg{{ x }}</p>",
        // not a fragment
        "<p>{{ x }}",
        "",
        "<script>{{ x }}</script>",
    ] {
        assert!(inlined_source(no, CSS).is_none(), "{no}");
    }
}

#[test]
fn only_inert_values_are_written() {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(inert);
    let render = |src: &str, v: &str| {
        env.render_str(src, minijinja::context! { v => v, n => 3, none => () })
    };
    let mut plain = Environment::new();
    plain.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    let all = "{{ v }}|{{ n }}|{{ u }}|{{ none }}|{{ [v, n] }}";
    let ctx = minijinja::context! { v => "Zoë \"q\" 'x'", n => 3, none => () };
    assert_eq!(
        env.render_str(all, &ctx).unwrap(),
        plain.render_str(all, &ctx).unwrap()
    );
    for bad in [
        "<b>", "a & b", "a > b", "a\u{a0}b", "a\rb", "a\0b", "\u{E000}",
    ] {
        assert!(render("{{ v }}", bad).is_err(), "{bad:?}");
    }
    // a list is written as its items' strings are shown, checked as written
    assert!(render("{{ [v] }}", "<b>").is_err());
    // `safe` or not, the value is what the check sees
    assert!(render("{{ v|safe }}", "<b>").is_err());
}

fn record(key: &str, body: ContentBody) -> ContentRecord {
    let now = Timestamp::now();
    ContentRecord {
        key: key.into(),
        body,
        created_at: now,
        updated_at: now,
    }
}

fn layout(key: &str, html: &str) -> ContentRecord {
    record(
        key,
        ContentBody::Layout {
            name: key.into(),
            html: html.into(),
            text: Some("{{ content }}\n-- Acme".into()),
        },
    )
}

/// A project's content: a layout with CSS (`main`), others the plan must
/// refuse, a footer with `t()` in it, and catalogs.
fn content() -> Arc<ContentSet> {
    let now = Timestamp::now();
    let mut p = Project::new(uuid::Uuid::now_v7(), "p", "pk", vec![], now);
    p.content_version = 1;
    p.default_layout = Some("main".into());
    let head = format!("<html><head><style>{CSS}</style></head>");
    Arc::new(ContentSet::new(
        &p,
        vec![
            record(
                "footer",
                ContentBody::Partial {
                    content: r#"<p class="footer">Acme · <a href="{{ preferences_url }}">{{ t("footer.prefs") }}</a> {{ recipient.first_name }}</p>"#.into(),
                },
            ),
            layout(
                "main",
                &format!(r#"{head}<body><div class="card">{{{{ content }}}}</div>{{% include "partials/footer" %}}</body></html>"#),
            ),
            layout(
                "table",
                &format!(r#"{head}<body><table><tr><td>{{{{ content }}}}</td></tr></table></body></html>"#),
            ),
            // `content` measured: the frame would not be the email's
            layout(
                "measured",
                &format!(r#"{head}<body><div>{{{{ content }}}}</div><p>{{{{ content|length }}}}</p></body></html>"#),
            ),
            layout(
                "filtered",
                &format!(r#"{head}<body><div>{{% filter replace("<p", "<p data-x") %}}{{{{ content }}}}{{% endfilter %}}</div></body></html>"#),
            ),
            // a selector across the boundary: no split, no plan
            layout(
                "descendant",
                r#"<html><head><style>.card p { margin: 0 }</style></head><body><div class="card">{{ content }}</div></body></html>"#,
            ),
            layout(
                "bare",
                r#"<html><body><div class="card">{{ content }}</div></body></html>"#,
            ),
            record(
                "en",
                ContentBody::Translation {
                    messages: [
                        ("greeting".to_string(), "Hello {{ name }}".to_string()),
                        ("bold".to_string(), "<b>{{ name }}</b>".to_string()),
                        ("footer.prefs".to_string(), "Email preferences".to_string()),
                    ]
                    .into_iter()
                    .collect(),
                },
            ),
            record(
                "fr",
                ContentBody::Translation {
                    messages: [
                        ("greeting".to_string(), "Bonjour {{ name }}".to_string()),
                        ("footer.prefs".to_string(), "Préférences".to_string()),
                    ]
                    .into_iter()
                    .collect(),
                },
            ),
        ],
    ))
}

fn flow(html: &str, layout: &str) -> Flow {
    let mut f = crate::render::tests::flow(
        r#"{{ t("greeting", name=recipient.first_name) }}"#,
        "Hello {{ recipient.first_name }} {{ t('missing.key') }}",
    );
    f.steps[0].template = Some(Template {
        html: Some(html.into()),
        ..f.steps[0].template.clone().unwrap()
    });
    f.steps[0].layout = Some(Some(layout.into()));
    f
}

const NAMES: &[&str] = &[
    "Ada",
    "Tom & Jerry",
    "<b>Bold</b>",
    "O'Brien \"Bob\"",
    "Zoë 東京 🎉",
    "a\u{a0}b",
    "&amp;",
    "x > y",
    "",
    "Ada",
    "line\r\nbreak",
    "&no",
];

fn contexts() -> Vec<minijinja::Value> {
    let shared = Shared::new(
        &serde_json::Value::Null,
        &serde_json::json!({"order": 42, "items": ["one", "two & three", "<i>"], "n": 7}),
        &serde_json::json!({"name": "F"}),
    );
    NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let locale = if i % 2 == 0 { "en-GB" } else { "fr-CA" };
            shared.context(&serde_json::json!({"first_name": name, "locale": locale}))
        })
        .collect()
}

/// Each recipient's email through `render_step`, per recipient only or
/// with the inlined path allowed: the emails (or errors) and missing keys.
fn emails(f: &Flow, set: &Arc<ContentSet>, slow: bool) -> Vec<String> {
    SLOW_ONLY.with(|s| s.set(slow));
    let r = RunRenderer::with_content(f, Limits::default(), Some(set.clone()));
    let out = contexts()
        .iter()
        .map(
            |ctx| match r.render_step(0, &f.steps[0], ctx, ChannelType::Email) {
                Ok(a) => format!(
                    "{:?}\n{}\n{}\n{:?}",
                    a.rendered.html, a.rendered.subject, a.rendered.body, a.missing
                ),
                Err(e) => format!("error: {e}"),
            },
        )
        .collect();
    SLOW_ONLY.with(|s| s.set(false));
    out
}

/// The emails of `html` in `layout` both ways (equal, line by line), and how
/// many went through the inlined path.
fn compare(set: &Arc<ContentSet>, html: &str, layout: &str) -> usize {
    let f = flow(html, layout);
    let slow = emails(&f, set, true);
    let before = FAST_USED.with(|n| n.get());
    let fast = emails(&f, set, false);
    let used = FAST_USED.with(|n| n.get()) - before;
    for (i, (a, b)) in slow.iter().zip(&fast).enumerate() {
        assert_eq!(a, b, "{html} in {layout}, recipient {:?}", NAMES[i]);
    }
    used
}

/// Recipients whose values are inert text (the rest fall back).
const INERT: usize = 5;

#[test]
fn the_inlined_path_writes_the_same_bytes_as_inlining_per_recipient() {
    let set = content();
    let fast = [
        r#"<p>Hello <b>{{ recipient.first_name }}</b>,</p><p>your order {{ data.order }} shipped.</p>"#,
        r#"<div class="card"><h1>Hi {{ recipient.first_name|upper }}</h1>{% if data.items %}<ul>{% for i in data.items %}<li class="item">{{ loop.index }} &amp; more</li>{% endfor %}</ul>{% else %}<p>none</p>{% endif %}</div>"#,
        r#"<p>{{ t("greeting", name=recipient.first_name) }}</p>"#,
        r#"Text only {{ recipient.first_name }} &copy; 2024 &#39;quoted&#39;"#,
        r#"<p id="x" style="color: blue">{# note #}{% set n = recipient.first_name %}Hi {{ n }}</p><img src="a.png" alt="x"><br/>"#,
        "<table><tr><td>{{ recipient.first_name }}</td></tr></table>\n",
        "<table><tbody>{% for i in range(3) %}<tr>{% for j in range(2) %}<td>{{ i * j }} {{ recipient.first_name }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>",
        r#"<p><span class="note">{{ data.missing }}</span> <a href="https://x.test/?a=1&b=2">{{ data.n * 2 }}</a></p>"#,
    ];
    for html in fast {
        for layout in ["main", "table"] {
            let used = compare(&set, html, layout);
            assert!(
                used >= INERT,
                "{html} in {layout}: {used} through the inlined path"
            );
        }
    }
    // a value with markup in it falls back for every recipient
    assert_eq!(
        compare(&set, r#"<p>{{ t("bold", name="x") }}</p>"#, "main"),
        0
    );
    assert_eq!(
        compare(
            &set,
            r#"<ul>{% for i in data.items %}<li>{{ i }}</li>{% endfor %}</ul>"#,
            "main"
        ),
        0
    );
    // sources and layouts without a plan
    for (html, layout) in [
        (r#"<a href="{{ recipient.first_name }}">x</a>"#, "main"),
        (r#"<p>{{ recipient.first_name }}</p>"#, "measured"),
        (r#"<p>{{ recipient.first_name }}</p>"#, "filtered"),
        (r#"<p>{{ recipient.first_name }}</p>"#, "descendant"),
        (r#"<p>{{ recipient.first_name }}</p>"#, "bare"),
        (
            r#"{% if recipient.first_name %}<p>{{ recipient.first_name }}</p>{% endif %}"#,
            "main",
        ),
    ] {
        let used = compare(&set, html, layout);
        let expect_some = html.starts_with("{% if");
        assert_eq!(used > 0, expect_some, "{html} in {layout}");
    }
}

/// A small deterministic generator (xorshift), so a failure repeats.
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next(from.len())]
    }

    /// Body content nested `depth` more levels at most (phrasing content
    /// only in a `p` or heading: a block there would close it).
    fn content(&mut self, depth: usize, phrasing: bool) -> String {
        let mut out = String::new();
        for _ in 0..1 + self.next(3) {
            let piece = match self.next(if depth == 0 { 3 } else { 7 }) {
                0 => self
                    .pick(&["Hi ", "&amp; ", "a > b ", "&copy;", " ", "x", "&#39;", "\n"])
                    .to_string(),
                1 => self
                    .pick(&[
                        "{{ recipient.first_name }}",
                        "{{ data.n }}",
                        "{{ data.missing }}",
                        "{{ t('greeting', name=recipient.first_name) }}",
                        "{{ recipient.first_name|length }}",
                        "{# c #}",
                    ])
                    .to_string(),
                2 if phrasing => self.pick(&["<br>", "<img src=\"a.png\">"]).to_string(),
                2 => self
                    .pick(&["<br>", "<img src=\"a.png\">", "<hr/>"])
                    .to_string(),
                3 => {
                    let tag = self.pick(&["b", "span", "i", "em"]);
                    let class = self.pick(&["", " class=\"note\"", " id=\"x\"", " style=\"x: y\""]);
                    format!("<{tag}{class}>{}</{tag}>", self.content(depth - 1, true))
                }
                4 => format!(
                    "{{% if recipient.first_name|length > {} %}}{}{{% else %}}{}{{% endif %}}",
                    self.next(6),
                    self.content(depth - 1, phrasing),
                    self.content(depth - 1, phrasing)
                ),
                5 => format!(
                    "{{% for i in range({}) %}}{}{{% endfor %}}",
                    self.next(3),
                    self.content(depth - 1, phrasing)
                ),
                _ if phrasing => format!(
                    "<span class=\"item\">{}</span>",
                    self.content(depth - 1, true)
                ),
                _ => format!(
                    "<ul><li class=\"item\">{}</li></ul>",
                    self.content(depth - 1, false)
                ),
            };
            out.push_str(&piece);
        }
        out
    }

    /// A step's HTML: blocks of content.
    fn html(&mut self) -> String {
        let mut out = String::new();
        for _ in 0..1 + self.next(3) {
            let block = self.pick(&["p", "div", "h1", "td", "rows"]);
            let inner = self.content(3, matches!(block, "p" | "h1"));
            out.push_str(&match block {
                "td" => format!("<table><tr><td>{inner}</td></tr></table>"),
                "rows" => format!(
                    "<table>\n<tbody>\n{{% for r in range({}) %}}<tr>{{# r #}}<td>{inner}</td>\n</tr>{{% endfor %}}</tbody></table>",
                    self.next(3)
                ),
                b => format!("<{b}>{inner}</{b}>"),
            });
        }
        out
    }
}

#[test]
fn generated_templates_write_the_same_bytes_both_ways() {
    let set = content();
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let (mut planned, mut used) = (0, 0);
    for _ in 0..150 {
        let html = g.html();
        if inlined_source(&html, CSS).is_some() {
            planned += 1;
        } else if std::env::var_os("SHOW_UNPLANNED").is_some() {
            println!("no plan: {html}");
        }
        used += compare(&set, &html, "main");
    }
    // most generated sources have a plan, and most inert recipients use it
    assert!(planned > 100, "{planned} of 150 sources planned");
    assert!(used > planned * 3, "{used} emails through the inlined path");
}

#[test]
fn a_step_that_can_have_no_plan_is_known_before_its_frame_is_rendered() {
    let set = content();
    assert!(eligible(&set, "main", "<p>{{ recipient.first_name }}</p>"));
    assert!(eligible(&set, "table", "<p>{{ recipient.first_name }}</p>"));
    // nothing to inline, or a layout or source the checks refuse
    assert!(!eligible(&set, "bare", "<p>{{ recipient.first_name }}</p>"));
    assert!(!eligible(
        &set,
        "measured",
        "<p>{{ recipient.first_name }}</p>"
    ));
    assert!(!eligible(
        &set,
        "filtered",
        "<p>{{ recipient.first_name }}</p>"
    ));
    assert!(!eligible(&set, "main", "<a href=\"{{ url }}\">x</a>"));
    assert!(!eligible(&set, "gone", "<p>x</p>"));
}
