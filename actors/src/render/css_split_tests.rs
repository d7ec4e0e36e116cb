//! The checks of `css_split`, case by case (the differential test against
//! the HTML parser is in `css_tests`).

use super::*;

#[test]
fn css_of_compound_selectors_only_is_context_free() {
    for ok in [
        "p { color: red }",
        ".card { padding: 24px } h1, h2 { font-size: 20px }",
        "* { margin: 0 } #x { color: red } p.note.big { x: y }",
        "/* note */ td { color: blue !important }",
        "",
    ] {
        assert!(context_free_css(ok), "{ok}");
    }
    for no in [
        ".card p { margin: 0 }",
        "div > p { x: y }",
        "h1 + p { x: y }",
        "h1 ~ p { x: y }",
        "li:first-child { x: y }",
        "a[href] { x: y }",
        "p::before { x: y }",
        "@media (max-width: 600px) { p { x: y } }",
        "p { color: var(--c) }",
        ".a\\:b { x: y }",
        "p { x: y",
        "p { x: y } }",
        "/* open",
        ". { x: y }",
        "p* { x: y }",
    ] {
        assert!(!context_free_css(no), "{no}");
    }
}

fn frame(s: &str) -> String {
    s.replace("{}", MARKER)
}

#[test]
fn a_frame_allows_the_step_under_ordinary_containers_only() {
    let css = "<style>p { color: red }</style>";
    for ok in [
        "<html><head>{css}</head><body><div class=\"card\">{}</div></body></html>",
        "{css}<div>{}</div>",
        "<html><head>{css}</head><body>{}</body></html>",
        "<html><body>{css}<table><tr><td>{}</td></tr></table></body></html>",
        "<html><body>{css}<table><tbody><tr><th>{}</th></tr></tbody></table></body></html>",
        "<!DOCTYPE html><html><head><title>T</title>{css}</head><body><!-- x --><center>{}</center></body></html>",
    ] {
        let f = frame(&ok.replace("{css}", css));
        assert_eq!(frame_css(&f).as_deref(), Some("p { color: red }"), "{ok}");
    }
    for no in [
        "{css}{}",
        "<html>{css}{}</html>",
        "<html><head>{css}{}</head></html>",
        "<html><body>{css}<p>{}</p></body></html>",
        "<html><body>{css}<li>{}</li></body></html>",
        "<html><body>{css}<b>{}</b></body></html>",
        "<html><body>{css}<table>{}</table></body></html>",
        "<html><body>{css}<table><tr>{}</tr></table></body></html>",
        "<html><body>{css}<div>a &amp{}</div></body></html>",
        "<html><body>{css}<div>{}</span></div></body></html>",
        "<html><body>{css}<div><a href=\"{}\">x</a></div></body></html>",
        "<html><body>{css}<div>{}</div><script>x</script></body></html>",
        "<html><body><style media=\"print\">p{}</style><div>{}</div></body></html>",
        "<html><body><style>.card p { x: y }</style><div>{}</div></body></html>",
        "<html><body>{css}<div>{}{}</div></body></html>",
        "<html><body>{css}<div>\r{}</div></body></html>",
    ] {
        let f = frame(&no.replace("{css}", css));
        assert_eq!(frame_css(&f), None, "{no}");
    }
}

#[test]
fn a_fragment_must_nest_strictly_with_ordinary_elements() {
    for ok in [
        "<h1>Hi Ada</h1><p>Your order shipped.</p>",
        "text only",
        "<p>a <b>bold</b> <a href=\"https://x.test/?a=1&amp;b=2\">link</a><br>next</p>",
        "<table><tr><td>a</td><td>b</td></tr></table>",
        "<table>\n <tbody><tr><th>a</th></tr></tbody></table>",
        "<ul><li>one</li><li>two</li></ul><dl><dt>t</dt><dd>d</dd></dl>",
        "<div><p>a</p><hr><p>b</p></div>",
        "x < y and 5 > 3",
        "&amp; at the start",
    ] {
        assert!(fragment_ok(ok), "{ok}");
    }
    for no in [
        "",
        "<p>a<div>b</div></p>",
        "<p>a<hr></p>",
        "<p>a<table></table></p>",
        "<b><p>x</b></p>",
        "<div>unclosed",
        "stray</div>",
        "<li>no list</li>",
        "<table><td>x</td></table>",
        "<table>text</table>",
        "<a href=\"a\"><a href=\"b\">x</a></a>",
        "<h1><h2>x</h2></h1>",
        "<script>x</script>",
        "<style>p{}</style>",
        "<!-- c -->",
        "<input>",
        "<br></br>",
        "<div/>",
        "<p data-css-inline=\"ignore\">x</p>",
        "ends with &no",
        "<my-el>x</my-el>",
        "<p class=\"a>",
        "<p>\r\n</p>",
    ] {
        assert!(!fragment_ok(no), "{no}");
    }
}
