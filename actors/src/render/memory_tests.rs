//! The templates that once aborted the process (a node's crash loop): now
//! a limit error at save (no data) or at run time, with memory bounded.

use super::*;

fn ctx(data: serde_json::Value) -> minijinja::Value {
    Shared::new(&Value::Null, &data, &serde_json::json!({"name": "F"}))
        .context(&serde_json::json!({"first_name": "Ada"}))
}

const AT_SAVE: &[&str] = &[
    r#"{{ "%999999999s"|format("x") }}"#,
    r#"{{ "a\nb"|indent(1000000000) }}"#,
    r#"{{ ("x" * 100000)|replace("x", "y" * 100000) }}"#,
    r#"{{ range(50)|join("x" * 100000000) }}"#,
    r#"{{ [1]|slice(100000000)|list|length }}"#,
    r#"{{ ("x" * 100000000)|list|length }}"#,
    r#"{{ [1]|batch(100000000, 0)|length }}"#,
    r#"{% set s = "x" * 1000000 %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{{ s|length }}"#,
    r#"{% set ns = namespace(s="x" * 100000) %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}"#,
    r#"{% set ns = namespace(l=[]) %}{% for i in range(20000) %}{% set ns.l = ns.l + ["x" * 10000 ~ i] %}{% endfor %}{{ ns.l|length }}"#,
    r#"{% set x %}{% for i in range(10000) %}{{ "x" * 100000 }}{% endfor %}{% endset %}{{ x|length }}"#,
    r#"{{ ([1] * 100000000)|list|length }}"#,
    r#"{{ ([1] * 1000000000000000000) == ([1] * 1000000000000000000) }}"#,
    r#"{% for i in [] * 1000000000000000000 %}{% endfor %}{{ ([] * 1000000000000000000)|list }}"#,
    r#"{{ "%.999999999f"|format(1.5) }}"#,
    r#"{% set ns = namespace(l=[]) %}{% for i in range(15000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}{{ ns.l|pprint }}{{ ns.l|string }}"#,
];

#[test]
fn each_probe_template_is_refused_at_save_with_a_limit() {
    let l = Limits::default();
    for src in AT_SAVE {
        let t = std::time::Instant::now();
        let err = probe(src, &l).expect_err(src);
        assert!(err.contains("template_"), "{src}: {err}");
        assert!(t.elapsed().as_secs() < 10, "{src}: {:?}", t.elapsed());
    }
}

#[test]
fn data_driven_sizes_fail_at_run_time_and_small_ones_render() {
    let f = super::tests::flow(
        "s",
        r#"{{ ("%" ~ data.n ~ "s")|format("x")|length }}|{{ "ab"|indent(data.n)|length }}"#,
    );
    let t = f.steps[0].template.as_ref().unwrap();
    assert!(probe(t.body.as_deref().unwrap(), &Limits::default()).is_ok());
    let r = RunRenderer::new(&f, Limits::default());
    let err = r
        .render(0, t, &ctx(serde_json::json!({"n": 999999999})))
        .unwrap_err();
    assert!(err.contains("template_max_memory"), "{err}");
    let ok = r.render(0, t, &ctx(serde_json::json!({"n": 5}))).unwrap();
    assert_eq!(ok.body, "5|2");
}

#[test]
fn the_batch_crash_template_is_a_limit_at_run_time() {
    // the crash loop: a digest's template sized by a batch's data
    let src = r#"{{ ('%' ~ (batch.activities[0].data.n if batch else 1) ~ 's')|format('x') }}"#;
    assert!(probe(src, &Limits::default()).is_ok(), "no batch at save");
    let f = super::tests::flow("s", src);
    let r = RunRenderer::new(&f, Limits::default());
    let c = minijinja::context! {
        batch => minijinja::context! { activities => vec![minijinja::context!{ data => minijinja::context!{ n => 999999999 } }] }
    };
    let err = r
        .render(0, f.steps[0].template.as_ref().unwrap(), &c)
        .unwrap_err();
    assert!(err.contains("template_max_memory"), "{err}");
}

#[test]
fn ordinary_templates_render_under_the_budget() {
    let f = super::tests::flow(
        "{{ recipient.first_name|upper }}",
        r#"{% for i in data.items %}<li>{{ i }} {{ "%05d"|format(i) }} {{ data.items|join(",") }}</li>{% endfor %}{{ data|pprint|length > 0 }}{{ "x" * 1000 ~ "y" }}{% for i in [1, 2, 3] %}{{ i }}{% if not loop.last %},{% endif %}{% endfor %}|{{ (data.items|map("string")|list)[:3]|length }}"#,
    );
    let r = RunRenderer::new(&f, Limits::default());
    let ok = r
        .render(
            0,
            f.steps[0].template.as_ref().unwrap(),
            &ctx(serde_json::json!({"items": (0..50).collect::<Vec<_>>()})),
        )
        .unwrap();
    assert_eq!(ok.subject, "ADA");
    assert!(ok.body.contains("<li>7 00007 0,1,2"), "{}", &ok.body[..80]);
    // loop.last and lengths hold through the budget's counting iterators
    assert!(
        ok.body.ends_with("xxxy1,2,3|3"),
        "{}",
        &ok.body[ok.body.len() - 20..]
    );
}
