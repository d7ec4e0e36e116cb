//! The hosted preference page's HTML (server-rendered, no script, every
//! project- or user-given string escaped) and the reading of its form back
//! into a preferences update.
//!
//! The form names each checkbox it shows in a hidden `shown` field: an
//! unchecked box is absent from a form post, so the POST needs the list of
//! what was shown to write each one's value explicitly, off included.

use crate::bodies::preferences::{ChannelTypeFlags, Preferences};
use herald_engine::model::ChannelType;
use serde_json::{json, Map, Value};

/// The stylesheet, served same-origin beside the page (`style-src 'self'`).
pub const CSS: &str = include_str!("page.css");

/// The page's headers: nothing loads from elsewhere, no script runs, the
/// form posts only to the page itself, no framing, and the token in the URL
/// is neither cached nor sent on as a referrer.
pub const CSP: &str =
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// `s`, safe in HTML text and in a quoted attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    herald_engine::rules::content::escape_into(s, &mut out);
    out
}

fn label(t: ChannelType) -> &'static str {
    match t {
        ChannelType::Chat => "Chat",
        ChannelType::Email => "Email",
        ChannelType::InApp => "In-app",
        ChannelType::MobilePush => "Mobile push",
        ChannelType::Sms => "SMS",
        ChannelType::WebPush => "Web push",
    }
}

fn flag(f: &ChannelTypeFlags, t: ChannelType) -> bool {
    match t {
        ChannelType::Chat => f.chat,
        ChannelType::Email => f.email,
        ChannelType::InApp => f.in_app,
        ChannelType::MobilePush => f.mobile_push,
        ChannelType::Sms => f.sms,
        ChannelType::WebPush => f.web_push,
    }
}

/// One checkbox of the form, named `name`, with its label; `shown` records it.
fn checkbox(out: &mut String, name: &str, text: &str, on: bool, class: &str) {
    let id = format!("f-{}", name.replace('.', "-"));
    out.push_str(&format!(
        "<div class=\"{class}\"><input type=\"checkbox\" id=\"{id}\" name=\"{n}\" value=\"on\"{c}> \
         <label for=\"{id}\">{t}</label><input type=\"hidden\" name=\"shown\" value=\"{n}\"></div>\n",
        id = escape(&id),
        n = escape(name),
        c = if on { " checked" } else { "" },
        t = text,
    ));
}

/// The flows the page lists on their own: those outside any category
/// (a category's flows follow the category's toggle).
fn own_flows(
    p: &Preferences,
) -> impl Iterator<Item = (&String, &crate::bodies::preferences::FlowPreferences)> {
    p.flows.iter().filter(|(_, f)| f.categories.is_empty())
}

/// The page for `p` (a user's effective preferences); `csrf` goes in the
/// form, `saved` shows the notice of a save just made.
pub fn render(p: &Preferences, csrf: &str, saved: bool) -> String {
    let mut h = String::with_capacity(8192);
    h.push_str(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>Notification preferences</title>\n\
         <link rel=\"stylesheet\" href=\"preferences.css\">\n</head>\n<body>\n<main>\n\
         <h1>Notification preferences</h1>\n",
    );
    if saved {
        h.push_str("<p class=\"saved\" role=\"status\">Saved. Your preferences are updated.</p>\n");
    }
    h.push_str("<form method=\"post\">\n");
    h.push_str(&format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">\n",
        escape(csrf)
    ));

    h.push_str("<fieldset>\n<legend>Channels</legend>\n<p class=\"hint\">Turn a channel off to receive nothing through it.</p>\n");
    for t in ChannelType::ALL {
        let name = format!("ct.{}", t.as_str());
        checkbox(&mut h, &name, label(t), flag(&p.channel_types, t), "row");
    }
    h.push_str("</fieldset>\n");

    for (handle, c) in &p.categories {
        h.push_str(&format!(
            "<fieldset>\n<legend>{}</legend>\n",
            escape(&c.name)
        ));
        let name = format!("category.{handle}");
        let text = format!("Receive {}", escape(&c.name));
        checkbox(&mut h, &name, &text, c.enabled, "row main");
        h.push_str("<div class=\"channels\">\n");
        for t in ChannelType::ALL {
            let name = format!("category.{handle}.{}", t.as_str());
            let text = format!("{} by {}", escape(&c.name), label(t));
            checkbox(&mut h, &name, &text, flag(&c.channel_types, t), "row");
        }
        h.push_str("</div>\n</fieldset>\n");
    }

    if own_flows(p).next().is_some() {
        h.push_str("<fieldset>\n<legend>Other notifications</legend>\n");
        for (handle, f) in own_flows(p) {
            if f.critical {
                // always delivered: shown, never part of the form
                let id = escape(&format!("f-flow-{handle}"));
                h.push_str(&format!(
                    "<div class=\"row critical\"><input type=\"checkbox\" id=\"{id}\" checked disabled> \
                     <label for=\"{id}\">{} (always on: required notifications)</label></div>\n",
                    escape(&f.name)
                ));
            } else {
                checkbox(
                    &mut h,
                    &format!("flow.{handle}"),
                    &escape(&f.name),
                    f.enabled,
                    "row",
                );
            }
        }
        h.push_str("</fieldset>\n");
    }
    quiet_hours(&mut h, p);
    h.push_str(
        "<p><button type=\"submit\">Save</button></p>\n</form>\n</main>\n</body>\n</html>\n",
    );
    h
}

/// The quiet hours part of the form: on or off, from and to (the days and
/// the timezone stay as they are: every day and the user's own timezone
/// when there were none).
fn quiet_hours(h: &mut String, p: &Preferences) {
    let q = p.quiet_hours.as_ref();
    let time =
        |k: &str, default: &str| q.and_then(|q| q[k].as_str()).unwrap_or(default).to_string();
    h.push_str(
        "<fieldset>\n<legend>Quiet hours</legend>\n<p class=\"hint\">During quiet hours, \
         notifications other than in-app wait until they end.</p>\n",
    );
    checkbox(h, "qh", "Use quiet hours", q.is_some(), "row main");
    for (k, text, default) in [("from", "From", "22:00"), ("to", "To", "07:00")] {
        h.push_str(&format!(
            "<div class=\"row\"><label for=\"f-qh-{k}\">{text}</label> \
             <input type=\"time\" id=\"f-qh-{k}\" name=\"qh.{k}\" value=\"{}\"></div>\n",
            escape(&time(k, default))
        ));
    }
    h.push_str("</fieldset>\n");
}

/// A preferences update (the body `PUT /admin/v1/users/{id}/preferences`
/// takes) from a posted form: every key the form `shown` that the current
/// preferences `p` still hold gets the value the form gives it (absent: off).
/// Critical flows, flows in a category and keys the page never shows are
/// never written, whatever the form says.
pub fn patch_from_form(p: &Preferences, form: &[(String, String)]) -> Map<String, Value> {
    let checked = |name: &str| form.iter().any(|(k, v)| k == name && v == "on");
    let mut channel_types = Map::new();
    let mut categories = Map::new();
    let mut flows = Map::new();
    for (_, name) in form.iter().filter(|(k, _)| k == "shown") {
        let on = Value::Bool(checked(name));
        let parts: Vec<&str> = name.split('.').collect();
        match parts.as_slice() {
            ["ct", t] => {
                if let Some(t) = ChannelType::parse(t) {
                    channel_types.insert(t.as_str().to_string(), on);
                }
            }
            ["category", h] if p.categories.contains_key(*h) => {
                let e = categories.entry(h.to_string()).or_insert_with(|| json!({}));
                e["enabled"] = on;
            }
            ["category", h, t] if p.categories.contains_key(*h) => {
                if let Some(t) = ChannelType::parse(t) {
                    let e = categories.entry(h.to_string()).or_insert_with(|| json!({}));
                    if e.get("channel_types").is_none() {
                        e["channel_types"] = json!({});
                    }
                    e["channel_types"][t.as_str()] = on;
                }
            }
            ["flow", h] => {
                let shown = own_flows(p).any(|(fh, f)| fh == h && !f.critical);
                if shown {
                    flows.insert(h.to_string(), json!({ "enabled": on }));
                }
            }
            _ => {}
        }
    }
    let mut out = Map::new();
    if form.iter().any(|(k, v)| k == "shown" && v == "qh") {
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let (from, to) = (field("qh.from"), field("qh.to"));
        if !checked("qh") {
            out.insert("quiet_hours".into(), Value::Null);
        } else if !from.is_empty() && !to.is_empty() {
            // the days and timezone the user had, else every day in theirs
            let had = p.quiet_hours.as_ref();
            let days = had.map_or(Value::Null, |q| q["days"].clone());
            let tz = had.map_or(Value::Null, |q| q["timezone"].clone());
            let q = json!({"from": from, "to": to, "days": days, "timezone": tz});
            out.insert("quiet_hours".into(), q);
        }
        // on without both times (a hand-made post): left as they are
    }
    out.insert("channel_types".into(), Value::Object(channel_types));
    out.insert("categories".into(), Value::Object(categories));
    out.insert("flows".into(), Value::Object(flows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::preferences::{CategoryPreferences, FlowPreferences};

    fn flow(categories: &[&str], critical: bool) -> FlowPreferences {
        FlowPreferences {
            categories: categories.iter().map(|c| c.to_string()).collect(),
            channel_types: ChannelTypeFlags::of(|_| true),
            critical,
            enabled: true,
            name: "F".into(),
        }
    }

    fn prefs() -> Preferences {
        Preferences {
            categories: [(
                "comments".to_string(),
                CategoryPreferences {
                    channel_types: ChannelTypeFlags::of(|_| true),
                    enabled: true,
                    name: "C".into(),
                },
            )]
            .into(),
            channel_types: ChannelTypeFlags::of(|_| true),
            explain: None,
            quiet_hours: None,
            flows: [
                ("own".to_string(), flow(&[], false)),
                ("in-cat".to_string(), flow(&["comments"], false)),
                ("reset".to_string(), flow(&[], true)),
            ]
            .into(),
        }
    }

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_shown_box_is_written_and_unchecked_ones_are_off() {
        let f = form(&[
            ("shown", "ct.email"),
            ("shown", "ct.sms"),
            ("ct.sms", "on"),
            ("shown", "category.comments"),
            ("shown", "category.comments.email"),
            ("category.comments.email", "on"),
            ("shown", "flow.own"),
        ]);
        let patch = Value::Object(patch_from_form(&prefs(), &f));
        assert_eq!(
            patch,
            json!({"channel_types": {"email": false, "sms": true},
                "categories": {"comments": {"enabled": false, "channel_types": {"email": true}}},
                "flows": {"own": {"enabled": false}}})
        );
    }

    #[test]
    fn what_the_page_does_not_show_is_never_written() {
        // a critical flow, a category's flow, an unknown category or flow,
        // a box checked but not shown, a key of no shape
        let f = form(&[
            ("shown", "flow.reset"),
            ("shown", "flow.in-cat"),
            ("shown", "flow.gone"),
            ("shown", "category.gone"),
            ("shown", "ct.fax"),
            ("shown", "anything"),
            ("ct.email", "on"),
        ]);
        let patch = Value::Object(patch_from_form(&prefs(), &f));
        assert_eq!(
            patch,
            json!({"channel_types": {}, "categories": {}, "flows": {}})
        );
    }

    #[test]
    fn the_page_escapes_names_and_shows_critical_flows_disabled() {
        let mut p = prefs();
        p.categories.get_mut("comments").unwrap().name = "<i>x</i>".into();
        let html = render(&p, "tok\"en", true);
        assert!(html.contains("&lt;i&gt;x&lt;/i&gt;"), "{html}");
        assert!(!html.contains("<i>"), "{html}");
        assert!(html.contains("value=\"tok&quot;en\""), "{html}");
        assert!(
            html.contains("id=\"f-flow-reset\" checked disabled"),
            "{html}"
        );
        assert!(!html.contains("name=\"flow.reset\""), "{html}");
        assert!(!html.contains("flow.in-cat"), "{html}");
        assert!(html.contains("role=\"status\""), "{html}");
    }

    #[test]
    fn quiet_hours_are_written_only_when_shown_and_cleared_when_unchecked() {
        let p = prefs();
        let on = patch_from_form(
            &p,
            &form(&[
                ("shown", "qh"),
                ("qh", "on"),
                ("qh.from", "21:00"),
                ("qh.to", "06:30"),
            ]),
        );
        assert_eq!(on["quiet_hours"]["from"], json!("21:00"));
        assert_eq!(on["quiet_hours"]["to"], json!("06:30"));
        assert_eq!(on["quiet_hours"]["days"], Value::Null, "every day");
        let off = patch_from_form(&p, &form(&[("shown", "qh"), ("qh.from", "21:00")]));
        assert_eq!(off["quiet_hours"], Value::Null);
        assert!(off.contains_key("quiet_hours"));
        let unshown = patch_from_form(&p, &form(&[("qh", "on"), ("qh.from", "21:00")]));
        assert!(!unshown.contains_key("quiet_hours"));
        let no_times = patch_from_form(&p, &form(&[("shown", "qh"), ("qh", "on")]));
        assert!(!no_times.contains_key("quiet_hours"));
        let html = render(&p, "c", false);
        assert!(html.contains("name=\"qh.from\" value=\"22:00\""), "{html}");
    }

    #[test]
    fn escapes_what_html_would_read() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }
}
