//! The chart of a run's results (`bench-results/delivery.png`), drawn with
//! plotters from the same `Results` as the table.

use crate::load::{n0, n1};
use crate::report::*;
use plotters::prelude::*;
use serde_json::Value;
use std::path::Path;

/// Registers a sans-serif font for the chart from the usual system paths.
fn load_font() -> Result<(), String> {
    let candidates = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    ];
    for p in candidates {
        if let Ok(bytes) = std::fs::read(p) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("{p} is not a usable font"));
        }
    }
    Err("no TrueType font found (install fonts-dejavu-core)".into())
}

type Series = Vec<(f64, f64)>;

fn series(rows: &[Value], x: &str, y: &str) -> Series {
    let mut v: Series = rows
        .iter()
        .map(|r| (f(&r[x]), f(&r[y])))
        .filter(|(a, b)| a.is_finite() && b.is_finite() && *a > 0.0)
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// One panel: lines of (label, colour, points) on a log-x axis; optional dashed
/// horizontal reference line (label, y).
#[allow(clippy::too_many_arguments)]
fn panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>, title: &str, x_desc: &str,
    y_desc: &str, lines: &[(&str, RGBColor, Series)], reference: Option<(&str, f64)>,
) -> Result<(), Box<dyn std::error::Error>> {
    let xs: Vec<f64> = lines.iter().flat_map(|l| l.2.iter().map(|p| p.0)).collect();
    let mut ys: Vec<f64> = lines.iter().flat_map(|l| l.2.iter().map(|p| p.1)).collect();
    if let Some((_, y)) = reference {
        ys.push(y);
    }
    let (x0, x1) = xs
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let (x0, x1) = if xs.is_empty() {
        (1.0, 10.0)
    } else {
        (x0 / 1.5, x1 * 1.5)
    };
    let y1 = ys.iter().cloned().fold(0f64, f64::max).max(1.0) * 1.2;
    // Ticks at the measured loads only (log axis).
    let mut ticks: Vec<f64> = xs.clone();
    ticks.sort_by(|a, b| a.total_cmp(b));
    ticks.dedup();
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale().with_key_points(ticks), 0f64..y1)?;
    let y_fmt = move |y: &f64| if y1 < 20.0 { n1(*y) } else { n0(*y) };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| n0(*x))
        .y_label_formatter(&y_fmt)
        .light_line_style(WHITE)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()?;
    for (label, colour, pts) in lines {
        let c = *colour;
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 5, c.filled())))?;
        // Each point's value above it: right of it, or left when another line is
        // higher at the same load (so two labels do not collide).
        chart.draw_series(pts.iter().map(|p| {
            let text = if p.1 < 20.0 { n1(p.1) } else { n0(p.1) };
            let w = 7 * text.len() as i32 + 6;
            let left = lines
                .iter()
                .any(|(_, _, o)| o.iter().any(|q| q.0 == p.0 && q.1 > p.1));
            let dx = if left { -w - 7 } else { 5 };
            // A white box under the text keeps it legible where a line crosses.
            EmptyElement::at(*p)
                + Rectangle::new([(dx, -22), (dx + w, -5)], WHITE.mix(0.85).filled())
                + Text::new(
                    text,
                    (dx + 2, -20),
                    ("sans-serif", 14).into_font().color(&c),
                )
        }))?;
    }
    if let Some((label, y)) = reference {
        let grey = RGBColor(120, 120, 120);
        let dashes: Vec<PathElement<(f64, f64)>> = {
            let (lx0, lx1) = (x0.ln(), x1.ln());
            (0..40)
                .filter(|i| i % 2 == 0)
                .map(|i| {
                    let a = (lx0 + (lx1 - lx0) * i as f64 / 40.0).exp();
                    let b = (lx0 + (lx1 - lx0) * (i + 1) as f64 / 40.0).exp();
                    PathElement::new(vec![(a, y), (b, y)], grey.stroke_width(2))
                })
                .collect()
        };
        chart
            .draw_series(dashes)?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    Ok(())
}

/// Throughput and p99 latency against load, for the live and pipeline scenarios.
pub fn chart(r: &Results, path: &Path, subtitle: &str) -> Result<(), String> {
    load_font()?;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = BitMapBackend::new(path, (1400, 960)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, body) = root.split_vertically(50);
        top.draw(&Text::new(
            format!("Herald delivery benchmark ({subtitle})"),
            (20, 14),
            ("sans-serif", 24).into_font(),
        ))?;
        let panels = body.split_evenly((2, 2));
        let blue = RGBColor(31, 119, 180);
        let orange = RGBColor(230, 120, 20);
        let green = RGBColor(44, 160, 44);
        panel(
            &panels[0],
            "Live fan-out: throughput",
            "open sockets (C)",
            "events/s",
            &[
                (
                    "Herald (durable)",
                    blue,
                    series(&r.live, "sockets", "events_per_s"),
                ),
                (
                    "soketi (stores nothing)",
                    orange,
                    series(&r.soketi, "sockets", "events_per_s"),
                ),
            ],
            None,
        )?;
        panel(
            &panels[1],
            "Live fan-out: p99 latency",
            "open sockets (C)",
            "p99 ms (Herald from the 202, soketi from publish)",
            &[
                ("Herald", blue, series(&r.live, "sockets", "p99_ms")),
                ("soketi", orange, series(&r.soketi, "sockets", "p99_ms")),
            ],
            Some(("target at 5k: 250 ms", 250.0)),
        )?;
        let quarter = r
            .sled
            .as_ref()
            .map(|s| f(&s["inserts_per_s"]) / 4.0)
            .filter(|x| x.is_finite());
        panel(
            &panels[2],
            "Pipeline (in_app + webhook): throughput",
            "recipients (N)",
            "deliveries/s",
            &[(
                "Herald",
                green,
                series(&r.pipeline_plain(), "recipients", "deliveries_per_s"),
            )],
            quarter.map(|q| ("target: 1/4 of sled inserts/s", q)),
        )?;
        panel(
            &panels[3],
            "Pipeline: p99 latency, 202 to webhook",
            "recipients (N)",
            "p99 ms",
            &[(
                "Herald",
                green,
                series(&r.pipeline_plain(), "recipients", "p99_ms"),
            )],
            None,
        )?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| e.to_string())
}
