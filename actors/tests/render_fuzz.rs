//! A fuzz target for template rendering: templates generated from a grammar
//! of MiniJinja expressions, filters, statements and data, rendered at save
//! (no data) and at run time under the default limits. A render may succeed or
//! fail with an error; the process must never abort (an allocation refused, a
//! stack overflow) and no render may take long.
//!
//! It runs for `HERALD_FUZZ_SECS` seconds (default 15); CI runs it longer
//! under an address-space limit (`.ci/run`), so an allocation anywhere near
//! the node's memory aborts the run. At the end it prints how many templates
//! it rendered and how they ended.

use herald_engine::render::{self, Limits};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::time::{Duration, Instant};

/// Counted like the binary counts (see herald_engine::render::alloc).
#[global_allocator]
static ALLOC: render::alloc::Budgeted<std::alloc::System> =
    render::alloc::Budgeted(std::alloc::System);

/// Numbers that make sizes: small, at the limits, far past them.
fn number() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "0",
        "1",
        "2",
        "3",
        "7",
        "50",
        "1000",
        "100000",
        "1000000",
        "100000000",
        "999999999",
        "1000000000000000000",
        "-1",
        "data.n",
        "data.m",
    ])
    .prop_map(str::to_string)
}

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        number(),
        prop::sample::select(vec![
            r#""x""#,
            r#""ab""#,
            r#""""#,
            r#""%s""#,
            r#""%999999999s""#,
            r#""%.99999999f""#,
            r#""a\nb\nc""#,
            r#""é""#,
            "data.s",
            "data.l",
            "data.m",
            "data.deep",
            "recipient.first_name",
            "[1, 2, 3]",
            "[]",
            r#"{"a": 1, "b": [2]}"#,
            "ns.l",
            "ns.s",
            "none",
            "true",
            "1.5",
            "batch",
            "loop",
        ])
        .prop_map(str::to_string),
        number().prop_map(|n| format!("range({n})")),
    ]
}

const FILTERS: &[&str] = &[
    "upper",
    "lower",
    "title",
    "capitalize",
    "trim",
    "length",
    "list",
    "string",
    "pprint",
    "sort",
    "unique",
    "reverse",
    "first",
    "last",
    "items",
    "dictsort",
    "lines",
    "split",
    "sum",
    "min",
    "max",
    "int",
    "float",
    "abs",
    "round",
    "escape",
    "safe",
    "bool",
];

fn expr() -> impl Strategy<Value = String> {
    atom().prop_recursive(5, 40, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} ~ {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} * {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} == {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a} if {b} else {c})")),
            (inner.clone(), number()).prop_map(|(a, n)| format!("({a})[:{n}]")),
            (inner.clone(), prop::sample::select(FILTERS)).prop_map(|(a, f)| format!("({a})|{f}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})|format({b})")),
            (inner.clone(), number()).prop_map(|(a, n)| format!("({a})|indent({n})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a})|replace({b}, {c})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})|join({b})")),
            (inner.clone(), number()).prop_map(|(a, n)| format!("({a})|slice({n})")),
            (inner.clone(), number(), inner.clone())
                .prop_map(|(a, n, b)| format!("({a})|batch({n}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})|default({b})")),
            inner
                .clone()
                .prop_map(|a| format!("({a})|map('upper')|list")),
            inner.clone().prop_map(|a| format!("[{a}, {a}]")),
            inner.clone().prop_map(|a| format!("{{\"k\": {a}}}")),
            inner.clone().prop_map(|a| format!("namespace(v={a}).v")),
            inner.prop_map(|a| format!("({a}) is string")),
        ]
    })
}

fn statement() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        expr().prop_map(|e| format!("{{{{ {e} }}}}")),
        expr().prop_map(|e| format!("{{% set ns.l = {e} %}}")),
        expr().prop_map(|e| format!("{{% set ns.s = ns.s ~ {e} %}}")),
        Just("{% set ns.l = [ns.l] %}".to_string()),
        Just("{% set ns.s = ns.s ~ ns.s %}".to_string()),
        Just("{% set ns.l = ns.l + ns.l %}".to_string()),
        Just("{{ ns.l }}{{ ns.s|length }}".to_string()),
        Just("text ".to_string()),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (expr(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(e, b)| format!("{{% for i in {e} %}}{}{{% endfor %}}", b.concat())),
            (number(), prop::collection::vec(inner.clone(), 1..3)).prop_map(|(n, b)| format!(
                "{{% for i in range({n}) %}}{}{{% endfor %}}",
                b.concat()
            )),
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(|b| format!("{{% set v %}}{}{{% endset %}}{{{{ v }}}}", b.concat())),
            (expr(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(e, b)| format!("{{% if {e} %}}{}{{% endif %}}", b.concat())),
            prop::collection::vec(inner, 1..3).prop_map(|b| format!(
                "{{% macro m(x) %}}{}{{{{ x }}}}{{% endmacro %}}{{{{ m(1) ~ m(ns.s) }}}}",
                b.concat()
            )),
        ]
    })
}

fn template() -> impl Strategy<Value = String> {
    prop::collection::vec(statement(), 1..5)
        .prop_map(|b| format!("{{% set ns = namespace(l=[1], s=\"x\") %}}{}", b.concat()))
}

fn data() -> impl Strategy<Value = serde_json::Value> {
    let n = prop::sample::select(vec![
        0i64,
        3,
        1000,
        100_000,
        100_000_000,
        999_999_999,
        1_000_000_000_000_000_000,
    ]);
    (n.clone(), n).prop_map(|(n, m)| {
        let mut deep = serde_json::json!(1);
        for _ in 0..100 {
            deep = serde_json::json!([deep]);
        }
        serde_json::json!({
            "n": n, "m": m, "s": "a%sb\nc", "l": [1, "x", [2, 3], {"k": "v"}], "deep": deep,
        })
    })
}

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    ok: u64,
    memory: u64,
    fuel: u64,
    output: u64,
    other: u64,
    slowest: Duration,
}

impl Tally {
    fn add(&mut self, r: &Result<String, String>, took: Duration) {
        self.cases += 1;
        self.slowest = self.slowest.max(took);
        match r {
            Ok(_) => self.ok += 1,
            Err(e) if e.contains("template_max_memory") => self.memory += 1,
            Err(e) if e.contains("template_fuel") => self.fuel += 1,
            Err(e) if e.contains("template_max_output") => self.output += 1,
            Err(_) => self.other += 1,
        }
    }
}

#[test]
fn no_template_aborts_or_stalls_the_process() {
    let secs: u64 = std::env::var("HERALD_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let seed: u64 = std::env::var("HERALD_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand_seed);
    println!("render_fuzz: seed {seed} (HERALD_FUZZ_SEED), {secs} s (HERALD_FUZZ_SECS)");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    let strategy = (template(), data());
    let limits = Limits::default();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut at_save, mut at_run) = (Tally::default(), Tally::default());
    // A render that never returns is a stall: the watchdog names it and ends
    // the run (a loop without allocations or items would not be caught else).
    let current = std::sync::Arc::new(std::sync::Mutex::new((Instant::now(), String::new())));
    let watched = current.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(1));
        let (since, src) = watched.lock().unwrap().clone();
        if since.elapsed() > Duration::from_secs(60) {
            eprintln!("render_fuzz: a render has run for over 60 s: {src}");
            std::process::exit(101);
        }
    });
    while Instant::now() < deadline {
        let (src, data) = strategy.new_tree(&mut runner).unwrap().current();
        *current.lock().unwrap() = (Instant::now(), format!("{src} with {data}"));
        let t = Instant::now();
        let r = render::probe(&src, &limits).map(|_| String::new());
        at_save.add(&r, t.elapsed());
        let ctx = render::Shared::new(
            &serde_json::Value::Null,
            &data,
            &serde_json::json!({"name": "F"}),
        )
        .context(&serde_json::json!({"first_name": "Ada"}));
        let t = Instant::now();
        let r = render::render_once(&src, &ctx, &limits);
        let took = t.elapsed();
        at_run.add(&r, took);
        // A render is bounded in time as in memory: far under a second in
        // release, a few in a debug build on a loaded machine.
        assert!(
            took < Duration::from_secs(20),
            "{took:?} for {src} with {data}"
        );
    }
    println!("render_fuzz: at save {at_save:?}");
    println!("render_fuzz: at run time {at_run:?}");
    assert!(at_run.cases > 0);
}

/// Templates the fuzz found that ran for minutes within their fuel, each a
/// loop whose every turn made and freed a large value: now stopped by the
/// item budget, which an allocation's gross size is charged to. The bound
/// is the fuzz's own (a stall guard, not a performance target).
#[test]
fn loops_of_large_short_lived_values_end_within_the_budget() {
    let limits = Limits::default();
    for src in [
        r#"{% set ns = namespace(l=[1]) %}{% for i in range(100000) %}{% set ns.l = ("%999999999s")|slice(100000) is string %}{% endfor %}"#,
        r#"{% for i in range(100000) %}{% set x = [1]|batch(100000) %}{% endfor %}"#,
        r#"{% for i in range(100000) %}{% set x = "ab"|indent(100000) %}{% endfor %}"#,
    ] {
        let t = Instant::now();
        let r = render::probe(src, &limits);
        let took = t.elapsed();
        assert!(r.is_err(), "{src}: over the budget");
        assert!(took < Duration::from_secs(20), "{took:?} for {src}");
    }
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
