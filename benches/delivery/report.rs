//! The results table, the ratios to the ceilings and the peer, Herald's performance targets,
//! the JSON file and the chart.

use crate::load::{n0, n1, n2, num};
use serde_json::{json, Value};

#[derive(Default)]
pub struct Results {
    pub live: Vec<Value>,
    pub soketi: Vec<Value>,
    /// Why the peer did not run, when it did not.
    pub soketi_skipped: Option<String>,
    pub soketi_version: Option<String>,
    pub pipeline: Vec<Value>,
    /// `trigger-1`/`trigger-100` rows, Herald's and soketi's (`server`).
    pub trigger: Vec<Value>,
    pub rest: Option<Value>,
    /// The `batch` scenario's row (`crate::batch`).
    pub batch: Vec<Value>,
    /// The `content` scenario's row (`crate::content`).
    pub content: Vec<Value>,
    /// The `route` scenario's row (`crate::route`).
    pub route: Vec<Value>,
    /// The `messages` scenario's rows, one per store (`crate::messages`).
    pub messages: Vec<Value>,
    pub sled: Option<Value>,
    pub actix: Option<Value>,
    /// The cluster leg (`crate::cluster`): its PostgreSQL ceiling and its
    /// `live`/`pipeline` rows, or why it was skipped.
    pub cluster: Option<Value>,
    /// A `--smoke` run: tiny sizes (and a debug build in CI), so no target is
    /// judged; each reads "not measured in a smoke run".
    pub smoke: bool,
}

pub(crate) fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

pub(crate) fn by<'a>(rows: &'a [Value], key: &str, n: usize) -> Option<&'a Value> {
    rows.iter().find(|r| r[key].as_u64() == Some(n as u64))
}

pub struct Ratio {
    pub name: &'static str,
    pub value: f64,
    pub detail: String,
}

pub struct Target {
    pub name: &'static str,
    pub measured: String,
    pub goal: &'static str,
    pub met: Option<bool>,
}

impl Results {
    /// The results of an earlier run, from its JSON file (`--chart-from`).
    pub fn from_json(j: &Value) -> Results {
        let rows = |v: &Value| v.as_array().cloned().unwrap_or_default();
        let some = |v: &Value| (!v.is_null()).then(|| v.clone());
        Results {
            live: rows(&j["live"]),
            soketi: rows(&j["soketi"]["results"]),
            soketi_skipped: j["soketi"]["skipped"].as_str().map(String::from),
            soketi_version: j["soketi"]["version"].as_str().map(String::from),
            pipeline: rows(&j["pipeline"]),
            trigger: rows(&j["trigger"]),
            rest: some(&j["rest"]),
            batch: rows(&j["batch"]),
            content: rows(&j["content"]),
            route: rows(&j["route"]),
            messages: rows(&j["messages"]),
            sled: some(&j["ceilings"]["sled"]),
            actix: some(&j["ceilings"]["actix"]),
            cluster: some(&j["cluster"]),
            smoke: j["run"]["smoke"] == true,
        }
    }

    fn live_at(&self, c: usize) -> Option<&Value> {
        by(&self.live, "sockets", c)
    }
    fn soketi_at(&self, c: usize) -> Option<&Value> {
        by(&self.soketi, "sockets", c)
    }
    /// The pipeline rows without an event endpoint (the charted ones).
    pub(crate) fn pipeline_plain(&self) -> Vec<Value> {
        self.pipeline
            .iter()
            .filter(|r| r["events"] != true)
            .cloned()
            .collect()
    }
    fn pipe_at(&self, n: usize) -> Option<&Value> {
        by(&self.pipeline, "recipients", n)
    }
    /// A transactional scenario's row for `server` (herald or soketi).
    fn trigger_of(&self, scenario: &str, server: &str) -> Option<&Value> {
        self.trigger
            .iter()
            .find(|r| r["scenario"] == scenario && r["server"] == server)
    }
    /// Herald's and soketi's rows of a transactional scenario, when both ran.
    fn trigger_pair(&self, scenario: &str) -> Option<(&Value, &Value)> {
        Some((
            self.trigger_of(scenario, "herald")?,
            self.trigger_of(scenario, "soketi")?,
        ))
    }
    fn feed(&self) -> Option<&Value> {
        self.rest.as_ref().map(|r| &r["endpoints"]["get_user_feed"])
    }
    fn accept(&self) -> Option<&Value> {
        self.pipeline
            .iter()
            .find_map(|r| r.get("accept_1000").filter(|a| !a.is_null()))
    }
    /// The live size the peer comparison uses: 5,000, else the largest both ran.
    fn live_cmp_size(&self) -> Option<usize> {
        let common: Vec<usize> = self
            .live
            .iter()
            .filter_map(|r| r["sockets"].as_u64().map(|c| c as usize))
            .filter(|c| self.soketi_at(*c).is_some())
            .collect();
        if common.contains(&5000) {
            Some(5000)
        } else {
            common.into_iter().max()
        }
    }

    pub fn ratios(&self) -> Vec<Ratio> {
        let mut out = vec![];
        for l in &self.live {
            let c = l["sockets"].as_u64().unwrap_or(0) as usize;
            if let Some(s) = self.soketi_at(c) {
                out.push(Ratio {
                    name: "live events/s vs soketi",
                    value: f(&l["events_per_s"]) / f(&s["events_per_s"]),
                    detail: format!(
                        "{} sockets: {} vs {} events/s",
                        n0(c as f64),
                        n0(f(&l["events_per_s"])),
                        n0(f(&s["events_per_s"]))
                    ),
                });
            }
        }
        for (scenario, name) in [
            ("trigger-1", "trigger-1 events/s vs soketi"),
            ("trigger-100", "trigger-100 events/s vs soketi"),
        ] {
            if let Some((h, s)) = self.trigger_pair(scenario) {
                out.push(Ratio {
                    name,
                    value: f(&h["events_per_s"]) / f(&s["events_per_s"]),
                    detail: format!(
                        "{} vs {} events/s",
                        n0(f(&h["events_per_s"])),
                        n0(f(&s["events_per_s"]))
                    ),
                });
            }
        }
        if let (Some(p), Some(s)) = (self.pipe_at(10_000), &self.sled) {
            let quarter = f(&s["inserts_per_s"]) / 4.0;
            out.push(Ratio {
                name: "pipeline 10k deliveries/s vs 1/4 sled inserts/s",
                value: f(&p["deliveries_per_s"]) / quarter,
                detail: format!(
                    "{} vs {} (sled {} inserts/s)",
                    n0(f(&p["deliveries_per_s"])),
                    n0(quarter),
                    n0(f(&s["inserts_per_s"]))
                ),
            });
        }
        if let (Some(feed), Some(a)) = (self.feed(), &self.actix) {
            out.push(Ratio {
                name: "GET /user/v1/feed rps vs actix ceiling",
                value: f(&feed["rps"]) / f(&a["rps"]),
                detail: format!("{} vs {} requests/s", n0(f(&feed["rps"])), n0(f(&a["rps"]))),
            });
        }
        if let Some(l) = self.live_at(5000) {
            out.push(Ratio {
                name: "live 5k p99 vs 250 ms",
                value: f(&l["p99_ms"]) / 250.0,
                detail: format!("{} ms", n1(f(&l["p99_ms"]))),
            });
        }
        if let Some(a) = self.accept() {
            out.push(Ratio {
                name: "202 of a 1,000-recipient run (p50) vs 50 ms",
                value: f(&a["p50_ms"]) / 50.0,
                detail: format!("{} ms over {} runs", n1(f(&a["p50_ms"])), a["runs"]),
            });
        }
        if let (Some(a), Some(b)) = (self.pipe_at(100_000), self.pipe_at(10_000)) {
            out.push(Ratio {
                name: "deliveries/s at 100k vs 10k recipients",
                value: f(&a["deliveries_per_s"]) / f(&b["deliveries_per_s"]),
                detail: format!(
                    "{} vs {}",
                    n0(f(&a["deliveries_per_s"])),
                    n0(f(&b["deliveries_per_s"]))
                ),
            });
            out.push(Ratio {
                name: "run's memory growth at 100k vs 10k",
                value: f(&a["peak_growth_mib"]) / f(&b["peak_growth_mib"]),
                detail: format!(
                    "{} vs {} MiB above the RSS before the run",
                    n1(f(&a["peak_growth_mib"])),
                    n1(f(&b["peak_growth_mib"]))
                ),
            });
        }
        out
    }

    pub fn targets(&self) -> Vec<Target> {
        let mut t = vec![];
        let cmp = self.live_cmp_size();
        let l5 = self.live_at(5000);
        let s = cmp.and_then(|c| self.soketi_at(c));
        let lc = cmp.and_then(|c| self.live_at(c));
        t.push(Target {
            name: "live 5k: events/s >= soketi's (same run)",
            measured: match (lc, s) {
                (Some(l), Some(s)) => format!(
                    "{} vs {} at {} sockets",
                    n0(f(&l["events_per_s"])),
                    n0(f(&s["events_per_s"])),
                    n0(cmp.unwrap_or(0) as f64)
                ),
                _ => match &self.soketi_skipped {
                    Some(why) => format!("peer skipped: {why}"),
                    None => "not measured".into(),
                },
            },
            goal: ">= 1.00x",
            met: match (lc, s, cmp) {
                (Some(l), Some(s), Some(5000)) => Some(
                    f(&l["events_per_s"]) >= f(&s["events_per_s"]) && l["received"] == l["sockets"],
                ),
                _ => None,
            },
        });
        t.push(Target {
            name: "live 5k: p99 from 202 to socket",
            measured: l5.map_or("not measured".into(), |l| {
                format!("{} ms", n1(f(&l["p99_ms"])))
            }),
            goal: "<= 250 ms",
            met: l5.map(|l| f(&l["p99_ms"]) <= 250.0 && l["received"] == l["sockets"]),
        });
        let p10 = self.pipe_at(10_000);
        t.push(Target {
            name: "pipeline 10k: deliveries/s >= 1/4 sled inserts/s",
            measured: match (p10, &self.sled) {
                (Some(p), Some(s)) => format!(
                    "{} vs {}",
                    n0(f(&p["deliveries_per_s"])),
                    n0(f(&s["inserts_per_s"]) / 4.0)
                ),
                _ => "not measured".into(),
            },
            goal: ">= 1.00x",
            met: match (p10, &self.sled) {
                (Some(p), Some(s)) => {
                    Some(f(&p["deliveries_per_s"]) >= f(&s["inserts_per_s"]) / 4.0)
                }
                _ => None,
            },
        });
        let acc = self.accept();
        t.push(Target {
            name: "accept: 202 for a 1,000-recipient run, p50",
            measured: acc.map_or("not measured".into(), |a| {
                format!("{} ms ({} runs)", n1(f(&a["p50_ms"])), a["runs"])
            }),
            goal: "<= 50 ms",
            met: acc.map(|a| f(&a["p50_ms"]) <= 50.0),
        });
        t.push(Target {
            name: "REST: GET /user/v1/feed >= 25% of actix ceiling",
            measured: match (self.feed(), &self.actix) {
                (Some(fd), Some(a)) => format!(
                    "{} vs {} rps ({}%)",
                    n0(f(&fd["rps"])),
                    n0(f(&a["rps"])),
                    n1(100.0 * f(&fd["rps"]) / f(&a["rps"]))
                ),
                _ => "not measured".into(),
            },
            goal: ">= 25%",
            met: match (self.feed(), &self.actix) {
                (Some(fd), Some(a)) => {
                    Some(f(&fd["rps"]) >= 0.25 * f(&a["rps"]) && fd["errors"] == 0)
                }
                _ => None,
            },
        });
        let (p100, p10) = (self.pipe_at(100_000), self.pipe_at(10_000));
        t.push(Target {
            name: "linear: deliveries/s at 100k within 20% of 10k",
            measured: match (p100, p10) {
                (Some(a), Some(b)) => format!(
                    "{}x",
                    n2(f(&a["deliveries_per_s"]) / f(&b["deliveries_per_s"]))
                ),
                _ => "not measured".into(),
            },
            goal: ">= 0.80x",
            met: match (p100, p10) {
                (Some(a), Some(b)) => Some(
                    f(&a["deliveries_per_s"]) >= 0.8 * f(&b["deliveries_per_s"])
                        && a["processed"] == true,
                ),
                _ => None,
            },
        });
        t.push(Target {
            name: "memory: run's peak growth at 100k vs 10k",
            measured: match (p100, p10) {
                (Some(a), Some(b)) => format!(
                    "{} vs {} MiB",
                    n1(f(&a["peak_growth_mib"])),
                    n1(f(&b["peak_growth_mib"]))
                ),
                _ => "not measured".into(),
            },
            goal: "<= 2x for 10x N",
            met: match (p100, p10) {
                (Some(a), Some(b)) => {
                    Some(f(&a["peak_growth_mib"]) <= 2.0 * f(&b["peak_growth_mib"]).max(1.0))
                }
                _ => None,
            },
        });
        let biggest = self
            .live
            .iter()
            .max_by_key(|l| l["sockets"].as_u64().unwrap_or(0));
        t.push(Target {
            name: "resident memory per idle WebSocket",
            measured: biggest.map_or("not measured".into(), |l| {
                format!(
                    "{} KiB ({} sockets)",
                    n1(f(&l["rss_per_socket_kib"])),
                    n0(f(&l["sockets"]))
                )
            }),
            goal: "<= 20 KiB",
            met: biggest.map(|l| f(&l["rss_per_socket_kib"]) <= 20.0),
        });
        let ct = self.content.first();
        t.push(Target {
            name: "content: a layout, a partial and t() per delivery (202 of a run)",
            measured: ct.map_or("not measured".into(), |c| {
                format!(
                    "{} vs {} µs per delivery ({} recipients)",
                    n1(f(&c["content_us_per_delivery"])),
                    n1(f(&c["plain_us_per_delivery"])),
                    n0(f(&c["recipients"]))
                )
            }),
            goal: "<= 1.50x plain",
            met: ct.map(|c| f(&c["ratio"]) <= 1.5 && c["sample_styled"] == true),
        });
        t.push(crate::route::target(self.route.first(), &self.pipeline));
        t.push(crate::messages::target(&self.messages));
        self.trigger_targets(&mut t);
        self.cluster_targets(&mut t);
        if self.smoke {
            // 20 sockets, 20 recipients and 0.3 s of load say nothing about
            // targets set for thousands: none is judged met or missed
            for x in &mut t {
                x.met = None;
                x.measured = "not measured in a smoke run".into();
            }
        }
        t
    }

    /// A cluster row of `scenario` (live/pipeline) at `size` (sockets/recipients).
    fn cluster_at(&self, scenario: &str, key: &str, size: usize) -> Option<&Value> {
        let rows = self.cluster.as_ref()?[scenario].as_array()?;
        by(rows, key, size)
    }

    /// The cluster targets, when the cluster leg ran: the pipeline's
    /// deliveries/s against a quarter of the PostgreSQL ceiling (the store
    /// every node writes to), and live fan-out's p99 across the nodes.
    fn cluster_targets(&self, t: &mut Vec<Target>) {
        let Some(c) = &self.cluster else { return };
        let why = |c: &Value| match c["skipped"].as_str() {
            Some(w) => format!("skipped: {w}"),
            None => "not measured".into(),
        };
        let p = self.cluster_at("pipeline", "recipients", 10_000);
        let pg = c["pg_ceiling"]["rows_per_s"].as_f64();
        t.push(Target {
            name: "cluster pipeline 10k: deliveries/s >= 1/4 PG rows/s",
            measured: match (p, pg) {
                (Some(p), Some(pg)) => format!(
                    "{} vs {} ({} nodes)",
                    n0(f(&p["deliveries_per_s"])),
                    n0(pg / 4.0),
                    c["nodes"]
                ),
                _ => why(c),
            },
            goal: ">= 1.00x",
            met: match (p, pg) {
                (Some(p), Some(pg)) => {
                    Some(f(&p["deliveries_per_s"]) >= pg / 4.0 && p["processed"] == true)
                }
                _ => None,
            },
        });
        let l = self.cluster_at("live", "sockets", 5000);
        t.push(Target {
            name: "cluster live 5k: p99 from 202 to socket",
            measured: l.map_or_else(
                || why(c),
                |l| format!("{} ms ({} nodes)", n1(f(&l["p99_ms"])), c["nodes"]),
            ),
            goal: "<= 500 ms",
            met: l.map(|l| f(&l["p99_ms"]) <= 500.0 && l["received"] == l["sockets"]),
        });
    }

    /// The cluster section of the table: each cluster row beside the
    /// single-node sled row of the same size, and the two ceilings.
    fn cluster_table(&self, s: &mut String) {
        let Some(c) = &self.cluster else { return };
        s.push_str(&format!(
            "Cluster ({} nodes on one PostgreSQL database and NATS, run posted to one node; beside one node on sled, same run)\n",
            c["nodes"]
        ));
        if let Some(w) = c["skipped"].as_str() {
            s.push_str(&format!("  skipped: {w}\n\n"));
            return;
        }
        s.push_str(&format!(
            "  {:<34} {:>22} {:>22} {:>9}\n",
            "measure", "one node (sled)", "cluster (postgres)", "ratio"
        ));
        let mut row = |name: String, one: Option<f64>, cl: Option<f64>, unit: &str| {
            let cell = |x: Option<f64>| x.map_or("-".into(), |x| format!("{} {unit}", n0(x)));
            let ratio = match (one, cl) {
                (Some(a), Some(b)) => format!("{}x", n2(b / a)),
                _ => "-".into(),
            };
            s.push_str(&format!(
                "  {:<34} {:>22} {:>22} {:>9}\n",
                name,
                cell(one),
                cell(cl),
                ratio
            ));
        };
        for l in c["live"].as_array().into_iter().flatten() {
            let size = l["sockets"].as_u64().unwrap_or(0) as usize;
            let one = self.live_at(size);
            let get = |v: Option<&Value>, k: &str| v.and_then(|v| v[k].as_f64());
            row(
                format!("live {} p50", n0(size as f64)),
                get(one, "p50_ms"),
                get(Some(l), "p50_ms"),
                "ms",
            );
            row(
                format!("live {} p99", n0(size as f64)),
                get(one, "p99_ms"),
                get(Some(l), "p99_ms"),
                "ms",
            );
            row(
                format!("live {} events/s", n0(size as f64)),
                get(one, "events_per_s"),
                get(Some(l), "events_per_s"),
                "/s",
            );
            row(
                format!("live {} received", n0(size as f64)),
                get(one, "received"),
                get(Some(l), "received"),
                "",
            );
            if let Some(e) = l["error"].as_str().or(l["first_error"].as_str()) {
                row(format!("  error: {e}"), None, None, "");
            }
        }
        for p in c["pipeline"].as_array().into_iter().flatten() {
            let size = p["recipients"].as_u64().unwrap_or(0) as usize;
            let one = self
                .pipeline
                .iter()
                .find(|r| r["recipients"].as_u64() == Some(size as u64) && r["events"] != true);
            let get = |v: Option<&Value>, k: &str| v.and_then(|v| v[k].as_f64());
            row(
                format!("pipeline {} deliveries/s", n0(size as f64)),
                get(one, "deliveries_per_s"),
                get(Some(p), "deliveries_per_s"),
                "/s",
            );
            row(
                format!("pipeline {} webhook p99", n0(size as f64)),
                get(one, "p99_ms"),
                get(Some(p), "p99_ms"),
                "ms",
            );
            if let Some(e) = p["error"].as_str() {
                row(format!("  error: {e}"), None, None, "");
            }
        }
        let pg = &c["pg_ceiling"];
        row(
            "ceiling: inserts (sled) / rows (PG)".into(),
            self.sled.as_ref().and_then(|x| x["inserts_per_s"].as_f64()),
            pg["rows_per_s"].as_f64(),
            "/s",
        );
        if let Some(v) = pg["server_version"].as_str() {
            s.push_str(&format!(
                "  PostgreSQL {v}: {} rows of {} B, batches of {} in one INSERT … UNNEST with a commit each (batch p99 {} ms); {}\n",
                n0(f(&pg["rows"])),
                pg["row_bytes"],
                pg["batch"],
                n1(f(&pg["batch_p99_ms"])),
                c["nats_version"].as_str().unwrap_or("nats-server")
            ));
        }
        if let Some(e) = c["pg_ceiling_error"].as_str() {
            s.push_str(&format!("  PostgreSQL ceiling failed: {e}\n"));
        }
        s.push('\n');
    }

    /// The transactional targets (issue 18): events/s against soketi's in the
    /// same run, p99 from before the POST to the frame, and (trigger-1) the
    /// server's CPU per event. A row that lost events does not meet its target.
    fn trigger_targets(&self, t: &mut Vec<Target>) {
        let complete = |h: &Value| h["received"] == h["events"] && h["errors"] == 0;
        for (scenario, vs_peer, p99_name, p99_goal, p99_max) in [
            (
                "trigger-1",
                "trigger-1: events/s >= soketi's (same run)",
                "trigger-1: p99 from POST to frame",
                "<= 25 ms",
                25.0,
            ),
            (
                "trigger-100",
                "trigger-100: events/s >= soketi's (same run)",
                "trigger-100: p99 from POST to frame",
                "<= 250 ms",
                250.0,
            ),
        ] {
            let h = self.trigger_of(scenario, "herald");
            let pair = self.trigger_pair(scenario);
            t.push(Target {
                name: vs_peer,
                measured: match (pair, h) {
                    (Some((h, s)), _) => format!(
                        "{} vs {} events/s",
                        n0(f(&h["events_per_s"])),
                        n0(f(&s["events_per_s"]))
                    ),
                    (None, Some(_)) => match &self.soketi_skipped {
                        Some(why) => format!("peer skipped: {why}"),
                        None => "peer not run".into(),
                    },
                    (None, None) => "not measured".into(),
                },
                goal: ">= 1.00x",
                met: pair
                    .map(|(h, s)| f(&h["events_per_s"]) >= f(&s["events_per_s"]) && complete(h)),
            });
            t.push(Target {
                name: p99_name,
                measured: h.map_or("not measured".into(), |h| {
                    format!("{} ms", n1(f(&h["p99_ms"])))
                }),
                goal: p99_goal,
                met: h.map(|h| f(&h["p99_ms"]) <= p99_max && complete(h)),
            });
        }
        let h1 = self.trigger_of("trigger-1", "herald");
        t.push(Target {
            name: "trigger-1: server CPU per event",
            measured: h1.map_or("not measured".into(), |h| {
                format!("{} µs", n1(f(&h["server_cpu_us_per_event"])))
            }),
            goal: "<= 100 µs",
            met: h1.map(|h| f(&h["server_cpu_us_per_event"]) <= 100.0 && complete(h)),
        });
    }

    /// The whole report as text.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let line = |s: &mut String, t: String| {
            s.push_str(&t);
            s.push('\n');
        };
        line(&mut s, "Live fan-out (one topic run to C open sockets; latency from the 202, soketi's from publish start)".into());
        line(
            &mut s,
            format!(
                "  {:<8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11} {:>10} {:>9}",
                "server",
                "sockets",
                "received",
                "p50 ms",
                "p99 ms",
                "max ms",
                "events/s",
                "KiB/sock",
                "peak MiB"
            ),
        );
        let mut rows: Vec<(&str, &Value)> = self.live.iter().map(|r| ("herald", r)).collect();
        rows.extend(self.soketi.iter().map(|r| ("soketi", r)));
        rows.sort_by_key(|(_, r)| r["sockets"].as_u64());
        for (who, r) in rows {
            line(
                &mut s,
                format!(
                    "  {:<8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11} {:>10} {:>9}",
                    who,
                    n0(f(&r["sockets"])),
                    n0(f(&r["received"])),
                    n1(f(&r["p50_ms"])),
                    n1(f(&r["p99_ms"])),
                    n1(f(&r["max_ms"])),
                    n0(f(&r["events_per_s"])),
                    n1(f(&r["rss_per_socket_kib"])),
                    n1(f(&r["server_peak_mib"])),
                ),
            );
        }
        if let Some(why) = &self.soketi_skipped {
            line(&mut s, format!("  soketi peer skipped: {why}"));
        }
        line(&mut s, String::new());
        line(&mut s, "Pipeline (in_app + webhook step; deliveries/s from the 202 to processed; latency from the 202 to each webhook at the sink)".into());
        line(
            &mut s,
            format!(
                "  {:>10} {:>6} {:>8} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9}",
                "recipients",
                "via",
                "202 ms",
                "total ms",
                "deliveries/s",
                "p50 ms",
                "p99 ms",
                "max ms",
                "peak MiB",
                "growth"
            ),
        );
        for r in &self.pipeline {
            line(
                &mut s,
                format!(
                    "  {:>10} {:>6} {:>8} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9}",
                    n0(f(&r["recipients"])),
                    format!(
                        "{}{}",
                        r["via"].as_str().unwrap_or(""),
                        if r["events"] == true { "+ev" } else { "" }
                    ),
                    n1(f(&r["accept_ms"])),
                    n0(f(&r["total_ms"])),
                    n0(f(&r["deliveries_per_s"])),
                    n1(f(&r["p50_ms"])),
                    n1(f(&r["p99_ms"])),
                    n1(f(&r["max_ms"])),
                    n1(f(&r["server_peak_mib"])),
                    n1(f(&r["peak_growth_mib"])),
                ),
            );
            if r["processed"] != true {
                line(
                    &mut s,
                    "             (the run was not processed in time)".into(),
                );
            }
        }
        if let Some(a) = self.accept() {
            line(
                &mut s,
                format!(
                    "  202 of a 1,000-recipient run over {} runs: p50 {} ms, p99 {} ms, max {} ms",
                    a["runs"],
                    n1(f(&a["p50_ms"])),
                    n1(f(&a["p99_ms"])),
                    n1(f(&a["max_ms"]))
                ),
            );
        }
        line(&mut s, String::new());
        if !self.trigger.is_empty() {
            line(&mut s, "Transactional triggers (small runs to users with open sockets; latency from before each request to the frame; CPU per event is the server's)".into());
            line(
                &mut s,
                format!(
                    "  {:<11} {:<8} {:>7} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10}",
                    "scenario",
                    "server",
                    "sockets",
                    "per run",
                    "events",
                    "received",
                    "errors",
                    "p50 ms",
                    "p99 ms",
                    "max ms",
                    "events/s",
                    "CPU µs/ev"
                ),
            );
            for r in &self.trigger {
                line(
                    &mut s,
                    format!(
                        "  {:<11} {:<8} {:>7} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10}",
                        r["scenario"].as_str().unwrap_or(""),
                        r["server"].as_str().unwrap_or(""),
                        n0(f(&r["sockets"])),
                        format!("{} x{}", n0(f(&r["recipients_per_run"])), r["in_flight"]),
                        n0(f(&r["events"])),
                        n0(f(&r["received"])),
                        n0(f(&r["errors"])),
                        n1(f(&r["p50_ms"])),
                        n1(f(&r["p99_ms"])),
                        n1(f(&r["max_ms"])),
                        n0(f(&r["events_per_s"])),
                        n1(f(&r["server_cpu_us_per_event"])),
                    ),
                );
                if let Some(e) = r["first_error"].as_str() {
                    line(&mut s, format!("    first error: {e}"));
                }
            }
            if self.trigger_of("trigger-1", "soketi").is_none()
                && self.trigger_of("trigger-100", "soketi").is_none()
            {
                if let Some(why) = &self.soketi_skipped {
                    line(&mut s, format!("  soketi peer skipped: {why}"));
                }
            }
            line(&mut s, String::new());
        }
        let head = format!(
            "  {:<34} {:>11} {:>8} {:>8} {:>8} {:>7} {:>11} {:>11}",
            "endpoint",
            "requests/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "errors",
            "client CPU",
            "server CPU"
        );
        let row = |name: &str, r: &Value| {
            format!(
                "  {:<34} {:>11} {:>8} {:>8} {:>8} {:>7} {:>10}% {:>10}%",
                name,
                n0(f(&r["rps"])),
                n2(f(&r["p50_ms"])),
                n2(f(&r["p99_ms"])),
                n2(f(&r["max_ms"])),
                n0(f(&r["errors"])),
                n0(f(&r["client_cpu_pct"])),
                n0(f(&r["server_cpu_pct"])),
            )
        };
        if let Some(rest) = &self.rest {
            line(
                &mut s,
                format!(
                    "REST ({} connections, raw hyper client; CPU in % of one core)",
                    rest["connections"]
                ),
            );
            line(&mut s, head.clone());
            for (k, name) in [
                ("get_user_feed", "GET /user/v1/feed"),
                ("put_admin_user", "PUT /admin/v1/users/{id}"),
                ("post_flow_run_10", "POST /admin/v1/flows/{id}/run (10)"),
            ] {
                line(&mut s, row(name, &rest["endpoints"][k]));
                if let Some(e) = rest["endpoints"][k]["first_error"].as_str() {
                    line(&mut s, format!("    first error: {e}"));
                }
            }
            line(&mut s, String::new());
        }
        line(&mut s, "Ceilings (same run; CPU in % of one core)".into());
        if self.sled.is_none() && self.actix.is_none() {
            line(&mut s, "  (not run)".into());
        }
        if let Some(sl) = &self.sled {
            line(
                &mut s,
                format!(
                    "  sled 0.34: {} inserts/s ({} records of {} B, batches of {} with a flush each; batch p99 {} ms)",
                    n0(f(&sl["inserts_per_s"])),
                    n0(f(&sl["inserts"])),
                    sl["record_bytes"],
                    sl["batch"],
                    n1(f(&sl["batch_p99_ms"]))
                ),
            );
        }
        if let Some(a) = &self.actix {
            line(&mut s, head);
            line(&mut s, row("actix-web {\"ok\":true}", a));
        }
        line(&mut s, String::new());
        self.cluster_table(&mut s);
        crate::messages::table(&self.messages, &mut s);
        line(&mut s, "Ratios".into());
        let ratios = self.ratios();
        if ratios.is_empty() {
            line(&mut s, "  (none: their scenarios did not all run)".into());
        }
        for r in ratios {
            line(
                &mut s,
                format!("  {:<50} {:>6}x   {}", r.name, n2(r.value), r.detail),
            );
        }
        line(&mut s, String::new());
        line(&mut s, "Targets (docs/PERFORMANCE.md)".into());
        for t in self.targets() {
            let mark = match t.met {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "n/a",
            };
            line(
                &mut s,
                format!(
                    "  [{:<6}] {:<50} {:<16} {}",
                    mark, t.name, t.goal, t.measured
                ),
            );
        }
        s
    }

    pub fn json(&self, extra: Value) -> Value {
        let ratios: Vec<Value> = self
            .ratios()
            .iter()
            .map(|r| json!({"name": r.name, "ratio": num(r.value), "detail": r.detail}))
            .collect();
        let targets: Vec<Value> = self
            .targets()
            .iter()
            .map(|t| json!({"name": t.name, "goal": t.goal, "measured": t.measured, "met": t.met}))
            .collect();
        let mut results: Vec<Value> = self.live.clone();
        results.extend(self.pipeline.iter().cloned());
        results.extend(self.trigger.iter().cloned());
        json!({
            "run": extra,
            "results": results,
            "live": self.live,
            "soketi": {"version": self.soketi_version, "publishers": crate::peer::PUBLISHERS,
                       "batch": crate::peer::BATCH, "skipped": self.soketi_skipped, "results": self.soketi},
            "pipeline": self.pipeline,
            "trigger": self.trigger,
            "rest": self.rest,
            "batch": self.batch,
            "content": self.content,
            "route": self.route,
            "messages": self.messages,
            "ceilings": {"sled": self.sled, "actix": self.actix},
            "cluster": self.cluster,
            "ratios": ratios,
            "targets": targets,
        })
    }
}
