//! The compact encoding of decision-trace parts, shared by the stores: sled
//! keeps parts under its `trace` key space and in notification groups,
//! PostgreSQL in the `trace` table's `part` column.
//!
//! A trace holds ten or so entries per notification, and with field names
//! and ids as text (MessagePack of `TraceEntry`, `codec`) it was the largest
//! thing stored: about 1.5 KB per notification of a two-step flow, more
//! than the notification with its deliveries. Here the codes and argument
//! names that Herald writes are one byte each (an index in `CODES`/`KEYS`),
//! ids written as canonical UUID text are their 16 bytes, a few common
//! values one byte (`VALUES`), numbers varints and times deltas: about a
//! fifth of the size. What no table knows is written out in full, so any
//! code, argument or value round-trips exactly.
//!
//! A part starts with its version byte: `TRACE_V2` here, `TRACE_V4` for a
//! part written on a test clock (the project time it was written at follows
//! the byte, and is every entry's `project_at`), `codec`'s for parts an
//! earlier Herald wrote, which are still read as they are. The tables are
//! append-only: stored parts refer to their indexes.

use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::trace::{Accepted, Arg, TraceEntry};
use serde_json::{Map, Number, Value};
use uuid::Uuid;

/// The version byte of this encoding (`codec`'s is 1).
const TRACE_V2: u8 = 2;

/// The version byte of a part written on a test clock: `TRACE_V2`'s
/// layout after the project time (zigzag varint of its milliseconds). (3
/// is `TRACE_STUB`'s.)
const TRACE_V4: u8 = 4;

/// Entry codes, by index (append only).
const CODES: &[&str] = &[
    "flow.reached",
    "recipient.resolved",
    "step.reached",
    "template.rendered",
    "template.failed",
    "preference.allowed",
    "preference.skipped",
    "channel.missing",
    "attempt",
    "retry.scheduled",
    "subscription.removed",
    "delivery.final",
    "notification.processed",
    "run.scheduled",
    "condition.evaluated",
    "throttle.passed",
    "throttle.limited",
    "send_window.waited",
    "delivery.canceled",
    "batch.joined",
    "batch.opened",
    "delay.waited",
];

/// Argument names, by index (append only).
const KEYS: &[&str] = &[
    "step",
    "channel_type",
    "delivery_id",
    "status",
    "key",
    "channel_id",
    "user_id",
    "run_id",
    "flow_id",
    "flow_handle",
    "external_id",
    "error",
    "error_code",
    "attempts",
    "attempt",
    "count",
    "limit",
    "window",
    "until",
    "latency_ms",
    "provider_message_id",
    "at",
    "due",
    "result",
    "decided",
    "reason",
    "cancellation_key",
    "send_at",
    "seconds",
    "provider",
    "topic",
];

/// String values common enough to be one byte, by index (append only).
const VALUES: &[&str] = &[
    "in_app",
    "chat",
    "email",
    "sms",
    "push",
    "web_push",
    "sent",
    "failed",
    "skipped",
    "default",
    "delivered",
    "canceled",
    "pending",
    "webhook",
];

/// A name written out in full rather than as a table index.
const INLINE: u8 = 0xff;

// Value tags.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UINT: u8 = 3;
const NEG: u8 = 4;
const FLOAT: u8 = 5;
const STR: u8 = 6;
const UUID: u8 = 7;
const ARRAY: u8 = 8;
const OBJECT: u8 = 9;
const KNOWN: u8 = 10;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn name(out: &mut Vec<u8>, table: &[&str], s: &str) {
    match table.iter().position(|t| *t == s) {
        Some(i) => out.push(i as u8),
        None => {
            out.push(INLINE);
            text(out, s);
        }
    }
}

fn text(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// The UUID `s` is the canonical text of (lowercase, hyphenated), if any:
/// only then does writing its 16 bytes give the same text back.
fn canonical_uuid(s: &str) -> Option<Uuid> {
    if s.len() != 36 {
        return None;
    }
    let u = Uuid::parse_str(s).ok()?;
    let mut buf = [0u8; 36];
    (*u.hyphenated().encode_lower(&mut buf) == *s).then_some(u)
}

/// A string value: a UUID's 16 bytes, a known value's index, or the text.
fn string(out: &mut Vec<u8>, s: &str) {
    if let Some(u) = canonical_uuid(s) {
        out.push(UUID);
        out.extend_from_slice(u.as_bytes());
    } else if let Some(i) = VALUES.iter().position(|t| *t == s) {
        out.push(KNOWN);
        out.push(i as u8);
    } else {
        out.push(STR);
        text(out, s);
    }
}

fn value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push(UINT);
                varint(out, u);
            } else if let Some(i) = n.as_i64() {
                out.push(NEG);
                varint(out, zigzag(i));
            } else {
                out.push(FLOAT);
                out.extend_from_slice(&n.as_f64().unwrap_or(0.0).to_le_bytes());
            }
        }
        Value::String(s) => string(out, s),
        Value::Array(a) => {
            out.push(ARRAY);
            varint(out, a.len() as u64);
            for x in a {
                value(out, x);
            }
        }
        Value::Object(m) => {
            out.push(OBJECT);
            object(out, m);
        }
    }
}

fn object(out: &mut Vec<u8>, m: &Map<String, Value>) {
    varint(out, m.len() as u64);
    for (k, v) in m {
        name(out, KEYS, k);
        value(out, v);
    }
}

/// One part of a trace (the entries one commit adds), encoded, written at
/// `project_at` on a test clock (`None` on the real clock; the entries' own
/// `project_at` is not read).
pub(crate) fn encode(entries: &[TraceEntry], project_at: Option<Timestamp>) -> Vec<u8> {
    let mut w = Writer::new(project_at);
    for e in entries {
        w.push_entry(e);
    }
    w.part()
}

/// The project time a part of `project`'s traces is written at now: its
/// test clock's, `None` on the real clock.
pub(crate) fn project_time(project: &uuid::Uuid) -> Option<Timestamp> {
    crate::delivery::clock::test_now(project)
}

/// Encodes entries as they are made (`trace::Sink`), never making their
/// JSON values: decoding gives the entries the `Vec<TraceEntry>` sink would
/// have made (arguments in the order given rather than sorted, which a
/// decoded object does not keep anyway).
pub(crate) struct Writer {
    out: Vec<u8>,
    /// Where the entry count goes (after the header).
    count_at: usize,
    n: u64,
    prev: i64,
}

impl Writer {
    /// A part written at `project_at` on a test clock, `None` on the real
    /// clock (`project_time`).
    pub fn new(project_at: Option<Timestamp>) -> Self {
        let mut out = Vec::with_capacity(256);
        match project_at {
            None => out.push(TRACE_V2),
            Some(t) => {
                out.push(TRACE_V4);
                varint(&mut out, zigzag(t.millis()));
            }
        }
        let count_at = out.len();
        // The count's place: one byte, widened by `finish` past 127 entries.
        out.push(0);
        Writer {
            out,
            count_at,
            n: 0,
            prev: 0,
        }
    }

    /// The encoded part; empty when no entry was written.
    pub fn finish(self) -> Vec<u8> {
        if self.n == 0 {
            return vec![];
        }
        self.part()
    }

    /// The encoded part, also of no entry.
    fn part(mut self) -> Vec<u8> {
        let mut count = Vec::with_capacity(2);
        varint(&mut count, self.n);
        let at = self.count_at;
        self.out.splice(at..at + 1, count);
        self.out
    }

    /// Starts an entry (its time and code); its arguments follow.
    fn head(&mut self, at: Timestamp, code: &str) -> &mut Vec<u8> {
        let at = at.millis();
        varint(&mut self.out, zigzag(at.wrapping_sub(self.prev)));
        self.prev = at;
        self.n += 1;
        name(&mut self.out, CODES, code);
        &mut self.out
    }

    /// Writes an entry already made as values (a staged decision).
    pub fn push_entry(&mut self, e: &TraceEntry) {
        let out = self.head(e.at, &e.code);
        object(out, &e.args);
    }
}

impl crate::trace::Sink for Writer {
    fn put(&mut self, at: Timestamp, code: &'static str, args: &[(&'static str, Arg<'_>)]) {
        let out = self.head(at, code);
        varint(out, args.len() as u64);
        for (k, v) in args {
            name(out, KEYS, k);
            match *v {
                Arg::Null => out.push(NULL),
                Arg::U64(n) => {
                    out.push(UINT);
                    varint(out, n);
                }
                Arg::Str(s) => string(out, s),
                Arg::Id(u) => {
                    out.push(UUID);
                    out.extend_from_slice(u.as_bytes());
                }
                Arg::Json(v) => value(out, v),
            }
        }
    }
}

/// A notification's trace as accepted, encoded; empty when it has no entry.
/// Without staged decisions it goes straight through the `Writer`.
pub(crate) fn encode_accepted(t: &Accepted, deliveries: &[crate::model::Delivery]) -> Vec<u8> {
    let mut w = Writer::new(t.project_at);
    if t.decided.is_empty() {
        t.write(deliveries, &mut w);
    } else {
        for e in &t.entries(deliveries) {
            w.push_entry(e);
        }
    }
    w.finish()
}

/// The first byte of a stub (`stub`), a part that holds only what its
/// notification's record does not.
const TRACE_STUB: u8 = 3;

/// The preference keys (`trace::preference_key`), by index.
const PREF_KEYS: &[&str] = &["default", "channel_type", "flow", "flow_channel"];

/// A grouped notification's trace as accepted, in the few bytes its record
/// (`n`, with the deliveries written beside it in the group) does not hold
/// already: the flow's handle, the recipient's external id and each
/// delivery's deciding preference, about 25 bytes where the entries take
/// 200 or more. `None` when the trace holds more than that (staged
/// decisions, a test clock's time) or does not match `n`: then it is
/// encoded in full.
pub(crate) fn stub(t: &Accepted, n: &crate::model::Notification) -> Option<Vec<u8>> {
    if !t.decided.is_empty()
        || t.project_at.is_some()
        || t.flow_id != n.flow_id
        || t.run_id != n.flow_run_id
        || t.user_id != n.recipient_id
    {
        return None;
    }
    let mut out = Vec::with_capacity(8 + t.flow_handle.len() + t.external_id.len() + t.prefs.len());
    out.push(TRACE_STUB);
    varint(
        &mut out,
        zigzag(t.at.millis().wrapping_sub(n.created_at.millis())),
    );
    text(&mut out, &t.flow_handle);
    text(&mut out, &t.external_id);
    varint(&mut out, t.prefs.len() as u64);
    for (k, allowed) in &t.prefs {
        let i = PREF_KEYS.iter().position(|p| p == k)?;
        out.push(i as u8 | if *allowed { 0x80 } else { 0 });
    }
    Some(out)
}

/// Whether a part is a stub (`stub`).
pub(crate) fn is_stub(b: &[u8]) -> bool {
    b.first() == Some(&TRACE_STUB)
}

/// The entries of a stub, made with the record it was written beside.
pub(crate) fn from_stub(
    b: &[u8],
    n: &crate::model::Notification,
    ds: &[crate::model::Delivery],
) -> Result<Vec<TraceEntry>> {
    let mut r = Reader { b, at: 1 };
    let at = n.created_at.millis().wrapping_add(unzigzag(r.varint()?));
    let flow_handle = r.text()?;
    let external_id = r.text()?;
    let count = r.len()?;
    let mut prefs = Vec::with_capacity(count);
    for _ in 0..count {
        let p = r.byte()?;
        let key = PREF_KEYS.get((p & 0x7f) as usize).ok_or_else(corrupt)?;
        prefs.push((*key, p & 0x80 != 0));
    }
    let a = Accepted {
        at: Timestamp::from_millis(at),
        project_at: None,
        flow_id: n.flow_id,
        flow_handle,
        run_id: n.flow_run_id,
        user_id: n.recipient_id,
        external_id,
        prefs,
        decided: vec![],
    };
    Ok(a.entries(ds))
}

/// A part as stored: this encoding, or `codec`'s of an earlier Herald.
pub(crate) fn decode(b: &[u8]) -> Result<Vec<TraceEntry>> {
    let mut r = Reader { b, at: 1 };
    let project_at = match b.first() {
        Some(&TRACE_V2) => None,
        Some(&TRACE_V4) => Some(Timestamp::from_millis(unzigzag(r.varint()?))),
        // only the sled store wrote parts in its record encoding
        _ => return super::sled::codec::dec(b),
    };
    let n = r.len()?;
    let mut out = Vec::with_capacity(n.min(64));
    let mut prev = 0i64;
    for _ in 0..n {
        let at = prev.wrapping_add(unzigzag(r.varint()?));
        prev = at;
        let code = r.name(CODES)?;
        let args = r.object(0)?;
        out.push(TraceEntry {
            at: Timestamp::from_millis(at),
            code,
            args,
            project_at,
        });
    }
    Ok(out)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

fn corrupt() -> Error {
    Error::internal("corrupt trace record")
}

/// Nesting deeper than this is not something Herald writes.
const MAX_DEPTH: usize = 32;

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let v = *self.b.get(self.at).ok_or_else(corrupt)?;
        self.at += 1;
        Ok(v)
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).ok_or_else(corrupt)?;
        let s = self.b.get(self.at..end).ok_or_else(corrupt)?;
        self.at = end;
        Ok(s)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt())
    }

    /// A count, never more than the bytes left (each item takes one at least).
    fn len(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > (self.b.len() - self.at) as u64 {
            return Err(corrupt());
        }
        Ok(n as usize)
    }

    fn text(&mut self) -> Result<String> {
        let n = self.len()?;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(|_| corrupt())
    }

    fn name(&mut self, table: &[&str]) -> Result<String> {
        match self.byte()? {
            INLINE => self.text(),
            i => table
                .get(i as usize)
                .map(|s| s.to_string())
                .ok_or_else(corrupt),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Map<String, Value>> {
        let n = self.len()?;
        let mut m = Map::new();
        for _ in 0..n {
            let k = self.name(KEYS)?;
            let v = self.value(depth + 1)?;
            m.insert(k, v);
        }
        Ok(m)
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(corrupt());
        }
        Ok(match self.byte()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            UINT => Value::from(self.varint()?),
            NEG => Value::from(unzigzag(self.varint()?)),
            FLOAT => {
                let mut a = [0u8; 8];
                a.copy_from_slice(self.bytes(8)?);
                Number::from_f64(f64::from_le_bytes(a)).map_or(Value::Null, Value::Number)
            }
            STR => Value::String(self.text()?),
            UUID => {
                let u = Uuid::from_slice(self.bytes(16)?).map_err(|_| corrupt())?;
                Value::String(u.hyphenated().to_string())
            }
            KNOWN => {
                let i = self.byte()? as usize;
                Value::String(VALUES.get(i).ok_or_else(corrupt)?.to_string())
            }
            ARRAY => {
                let n = self.len()?;
                let mut a = Vec::with_capacity(n);
                for _ in 0..n {
                    a.push(self.value(depth + 1)?);
                }
                Value::Array(a)
            }
            OBJECT => Value::Object(self.object(depth + 1)?),
            _ => return Err(corrupt()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn e(at: i64, code: &str, args: Value) -> TraceEntry {
        crate::trace::entry(Timestamp::from_millis(at), code, args)
    }

    /// Step `step` of notification `nid`, made at `t`: not attempted, no error.
    fn delivery(
        nid: &Uuid,
        step: usize,
        channel_type: crate::model::ChannelType,
        status: crate::model::DeliveryStatus,
        t: Timestamp,
    ) -> crate::model::Delivery {
        crate::model::Delivery {
            id: crate::model::delivery_id(nid, step),
            notification_id: *nid,
            flow_run_id: Uuid::now_v7(),
            flow_id: Uuid::now_v7(),
            channel_id: Uuid::now_v7(),
            channel_type,
            topic: None,
            status,
            data: crate::model::Rendered::default(),
            outcomes: None,
            actor_id: None,
            recipient_id: Uuid::now_v7(),
            attempts: 0,
            error: None,
            due_at: t,
            next_attempt_at: None,
            sent_at: None,
            seen_at: None,
            read_at: None,
            clicked_at: None,
            archived_at: None,
            created_at: t,
            updated_at: t,
            gate: None,
            batch: false,
        }
    }

    /// The notification `nid` that `a` was made for, settled at `t`.
    fn notification(a: &Accepted, nid: Uuid, t: Timestamp) -> crate::model::Notification {
        crate::model::Notification {
            id: nid,
            flow_id: a.flow_id,
            flow_run_id: a.run_id,
            topic: None,
            processed: true,
            actor_id: None,
            recipient_id: a.user_id,
            processed_at: Some(t),
            created_at: t,
            updated_at: t,
            stopped: None,
            batched_into: None,
        }
    }

    fn sample() -> Vec<TraceEntry> {
        let id = Uuid::now_v7().to_string();
        vec![
            e(
                1_790_000_000_123,
                "flow.reached",
                json!({"flow_handle": "soak", "flow_id": id, "run_id": id}),
            ),
            e(
                1_790_000_000_123,
                "step.reached",
                json!({"channel_type": "in_app", "delivery_id": id, "step": 0}),
            ),
            e(
                1_790_000_000_100,
                "delivery.final",
                json!({"attempts": 3, "error_code": null, "status": "failed", "step": 1}),
            ),
            // what no table knows, and values that only look like ids
            e(
                -5,
                "some.future_code",
                json!({"new_arg": [1, -2, 2.5, true, false, null, {"deep": {"x": "y"}}],
                       "upper": id.to_uppercase(), "braced": format!("{{{id}}}"),
                       "simple": id.replace('-', ""), "big": u64::MAX, "small": i64::MIN,
                       "unicode": "héllo ✓", "empty": "", "obj": {}}),
            ),
        ]
    }

    #[test]
    fn round_trips_exactly_and_is_smaller() {
        let entries = sample();
        let compact = encode(&entries, None);
        assert_eq!(decode(&compact).unwrap(), entries);
        // the entries Herald writes (not the last, made of what no table knows)
        let typical = &entries[..3];
        let compact = encode(typical, None);
        let named = crate::store::sled::codec::enc(&typical);
        assert!(
            compact.len() * 2 < named.len(),
            "{} vs {}",
            compact.len(),
            named.len()
        );
        assert_eq!(decode(&encode(&[], None)).unwrap(), vec![]);
    }

    /// A trace as accepted written straight through a `Writer` reads back as
    /// the entries made as values, for each way a step can go; with staged
    /// decisions it is encoded from the entries.
    #[test]
    fn accepted_traces_written_directly_read_back_as_their_entries() {
        use crate::model::{ChannelType, Delivery, DeliveryError, DeliveryStatus};
        let t = Timestamp::from_millis(1_790_000_000_123);
        let nid = Uuid::now_v7();
        let d =
            |step: usize, ct: ChannelType, status: DeliveryStatus, err: Option<(&str, &str)>| {
                Delivery {
                    error: err.map(|(code, message)| DeliveryError {
                        code: code.into(),
                        message: message.into(),
                    }),
                    ..delivery(&nid, step, ct, status, t)
                }
            };
        let ds = vec![
            d(0, ChannelType::InApp, DeliveryStatus::Sent, None),
            d(
                1,
                ChannelType::Chat,
                DeliveryStatus::Skipped,
                Some(("preference", "off")),
            ),
            d(
                2,
                ChannelType::Email,
                DeliveryStatus::Failed,
                Some(("template_error", "bad {{")),
            ),
            d(
                3,
                ChannelType::Sms,
                DeliveryStatus::Failed,
                Some(("provider_not_configured", "none")),
            ),
            d(4, ChannelType::WebPush, DeliveryStatus::Pending, None),
            d(5, ChannelType::MobilePush, DeliveryStatus::Sent, None),
        ];
        let prefs = vec![
            ("default", true),
            ("flow", false),
            ("channel_type", true),
            ("default", true),
            ("flow_channel", true),
            ("default", true),
        ];
        let mut a = Accepted {
            at: t,
            project_at: None,
            flow_id: Uuid::now_v7(),
            flow_handle: "comment-created".into(),
            run_id: Uuid::now_v7(),
            user_id: Uuid::now_v7(),
            // an external id that looks like an id, and one that is a known value
            external_id: Uuid::now_v7().to_string(),
            prefs: prefs.clone(),
            decided: vec![],
        };
        for ext in [
            a.external_id.clone(),
            "sent".into(),
            "ada@example.com".into(),
        ] {
            a.external_id = ext;
            let mut w = Writer::new(None);
            a.write(&ds, &mut w);
            let part = w.finish();
            assert_eq!(decode(&part).unwrap(), a.entries(&ds));
            assert_eq!(encode_accepted(&a, &ds), part);
        }
        assert_eq!(a.entries(&ds).len(), 2 + 4 + 4 + 3 + 4 + 3 + 4);
        let mut w = Writer::new(None);
        a.write(&[], &mut w);
        assert_eq!(decode(&w.finish()).unwrap(), a.entries(&[]));
        assert!(Writer::new(None).finish().is_empty());
        // past 127 entries the count takes two bytes
        let many: Vec<Delivery> = (0..40)
            .map(|i| d(i, ChannelType::InApp, DeliveryStatus::Sent, None))
            .collect();
        a.prefs = vec![("default", true); 40];
        let mut w = Writer::new(None);
        a.write(&many, &mut w);
        assert_eq!(decode(&w.finish()).unwrap(), a.entries(&many));
        // a stub beside its record (as stored in a group) reads back the same
        let n = notification(&a, nid, t);
        a.prefs = prefs;
        let st = stub(&a, &n).unwrap();
        assert!(
            is_stub(&st) && st.len() * 4 < encode_accepted(&a, &ds).len(),
            "{} bytes",
            st.len()
        );
        assert_eq!(from_stub(&st, &n, &ds).unwrap(), a.entries(&ds));
        for cut in 1..st.len() {
            assert!(from_stub(&st[..cut], &n, &ds).is_err(), "cut at {cut}");
        }
        let mut other = n.clone();
        other.flow_run_id = Uuid::now_v7();
        assert!(stub(&a, &other).is_none());
        a.decided = vec![(
            None,
            crate::trace::entry(t, "run.scheduled", json!({"send_at": "x"})),
        )];
        assert!(stub(&a, &n).is_none());
        let part = encode_accepted(&a, &ds);
        assert_eq!(decode(&part).unwrap(), a.entries(&ds));
        assert_eq!(a.entries(&ds)[2].code, "run.scheduled");
    }

    /// Settles written straight through a `Writer` (with decisions made as
    /// values mixed in) read back as the entries made as values, and an
    /// attempt's entry holds exactly its documented arguments.
    #[test]
    fn settled_entries_written_directly_read_back_as_their_entries() {
        use crate::model::{ChannelType, Delivery, DeliveryError, DeliveryStatus};
        use crate::trace::{processed_into, settled_into, AttemptNote};
        let t = Timestamp::from_millis(1_790_000_000_123);
        let nid = Uuid::now_v7();
        let mut d = Delivery {
            attempts: 1,
            error: Some(DeliveryError {
                code: "provider_unavailable".into(),
                message: "503".into(),
            }),
            next_attempt_at: Some(Timestamp::from_millis(1_790_000_001_000)),
            ..delivery(&nid, 1, ChannelType::Chat, DeliveryStatus::Pending, t)
        };
        let note = AttemptNote {
            provider: "webhook".into(),
            latency_ms: 12,
            status_code: Some(503),
            subscriptions_removed: 0,
        };
        let mut w = Writer::new(None);
        let mut values = vec![];
        let decided =
            crate::trace::entry(t, "condition.evaluated", json!({"step": 1, "result": true}));
        w.push_entry(&decided);
        values.push(decided);
        // a retry, then a sent attempt with a message id and a removed
        // subscription, a skip that made no attempt, and processed
        settled_into(&d, true, Some(note.clone()), t, &mut w);
        settled_into(&d, true, Some(note.clone()), t, &mut values);
        let attempt = &values[1];
        assert_eq!(attempt.code, "attempt");
        assert_eq!(
            Value::Object(attempt.args.clone()),
            json!({"step": 1, "delivery_id": d.id, "channel_type": "chat",
                   "channel_id": d.channel_id, "attempt": 1, "result": "retry",
                   "provider": "webhook", "latency_ms": 12, "status_code": 503,
                   "error_code": "provider_unavailable", "error": "503",
                   "provider_message_id": null})
        );
        assert_eq!(values[2].code, "retry.scheduled");
        d.status = DeliveryStatus::Sent;
        d.attempts = 2;
        d.error = None;
        d.next_attempt_at = None;
        d.outcomes = Some(json!([{"message_id": "m-1"}]));
        let sent_note = AttemptNote {
            subscriptions_removed: 2,
            ..note
        };
        settled_into(&d, true, Some(sent_note.clone()), t, &mut w);
        settled_into(&d, true, Some(sent_note), t, &mut values);
        d.status = DeliveryStatus::Skipped;
        settled_into(&d, false, None, t, &mut w);
        settled_into(&d, false, None, t, &mut values);
        processed_into(t, &mut w);
        processed_into(t, &mut values);
        assert_eq!(decode(&w.finish()).unwrap(), values);
        let codes: Vec<&str> = values.iter().map(|e| e.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "condition.evaluated",
                "attempt",
                "retry.scheduled",
                "attempt",
                "subscription.removed",
                "delivery.final",
                "delivery.final",
                "notification.processed"
            ]
        );
        assert_eq!(values[3].args["provider_message_id"], json!("m-1"));
    }

    /// What writing a trace costs each way, per notification (a measurement,
    /// not a check: `cargo test --release -p herald-actors --lib --
    /// --ignored trace_write_cost --nocapture`).
    #[test]
    #[ignore]
    fn trace_write_cost() {
        use crate::model::{ChannelType, Delivery, DeliveryStatus};
        use crate::trace::{processed_into, settled_into, AttemptNote};
        let t = Timestamp::now();
        let nid = Uuid::now_v7();
        let d = |step: usize, ct: ChannelType, status: DeliveryStatus| Delivery {
            attempts: 1,
            ..delivery(&nid, step, ct, status, t)
        };
        let ds = vec![d(0, ChannelType::InApp, DeliveryStatus::Sent)];
        let a = Accepted {
            at: t,
            project_at: None,
            flow_id: Uuid::now_v7(),
            flow_handle: "comment-created".into(),
            run_id: Uuid::now_v7(),
            user_id: Uuid::now_v7(),
            external_id: "user-12345".into(),
            prefs: vec![("default", true)],
            decided: vec![],
        };
        let n = notification(&a, nid, t);
        let hook = d(1, ChannelType::Chat, DeliveryStatus::Sent);
        let note = AttemptNote {
            provider: "webhook".into(),
            latency_ms: 3,
            status_code: Some(200),
            subscriptions_removed: 0,
        };
        const N: u32 = 200_000;
        let time = |label: &str, f: &mut dyn FnMut() -> usize| {
            let mut bytes = 0;
            let start = std::time::Instant::now();
            for _ in 0..N {
                bytes += std::hint::black_box(f());
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(N);
            println!("{label:<48} {ns:>8.0} ns  {:>4} bytes", bytes / N as usize);
        };
        time("accepted, in-app: entries as values, encoded", &mut || {
            encode(&a.entries(&ds), None).len()
        });
        time("accepted, in-app: Writer", &mut || {
            let mut w = Writer::new(None);
            a.write(&ds, &mut w);
            w.finish().len()
        });
        time("accepted, in-app: stub", &mut || {
            stub(&a, &n).unwrap().len()
        });
        time("settled webhook: entries as values, encoded", &mut || {
            let mut e = vec![];
            settled_into(&hook, true, Some(note.clone()), t, &mut e);
            processed_into(t, &mut e);
            encode(&e, None).len()
        });
        time("settled webhook: Writer", &mut || {
            let mut w = Writer::new(None);
            settled_into(&hook, true, Some(note.clone()), t, &mut w);
            processed_into(t, &mut w);
            w.finish().len()
        });
    }

    /// A part written on a test clock carries its project time, which every
    /// entry reads back as `project_at`; a real-clock part is as it was.
    #[test]
    fn a_part_written_on_a_test_clock_reads_back_its_project_time() {
        let entries = sample();
        let at = Timestamp::from_millis(1_800_000_000_000);
        let part = encode(&entries, Some(at));
        assert_eq!(part[0], TRACE_V4);
        let back = decode(&part).unwrap();
        assert_eq!(back.len(), entries.len());
        for (b, e) in back.iter().zip(&entries) {
            assert_eq!(b.project_at, Some(at));
            assert_eq!((&b.at, &b.code, &b.args), (&e.at, &e.code, &e.args));
        }
        assert_eq!(encode(&entries, None)[0], TRACE_V2);
        // a stub has no room for it: the accepted trace is written in full
        let t = Timestamp::from_millis(1_790_000_000_123);
        let mut a = Accepted {
            at: t,
            project_at: Some(at),
            flow_id: Uuid::now_v7(),
            flow_handle: "f".into(),
            run_id: Uuid::now_v7(),
            user_id: Uuid::now_v7(),
            external_id: "u".into(),
            prefs: vec![],
            decided: vec![],
        };
        let n = notification(&a, Uuid::now_v7(), t);
        assert!(stub(&a, &n).is_none());
        let part = encode_accepted(&a, &[]);
        assert_eq!(decode(&part).unwrap(), a.entries(&[]));
        assert!(a.entries(&[]).iter().all(|e| e.project_at == Some(at)));
        a.project_at = None;
        assert!(stub(&a, &n).is_some());
        for cut in 1..part.len() {
            let _ = decode(&part[..cut]);
        }
    }

    #[test]
    fn reads_parts_an_earlier_herald_wrote() {
        let entries = sample();
        let old = crate::store::sled::codec::enc(&entries);
        assert_eq!(decode(&old).unwrap(), entries);
    }

    #[test]
    fn truncated_or_garbled_parts_are_errors_not_panics() {
        let b = encode(&sample(), None);
        for n in 1..b.len() {
            let _ = decode(&b[..n]);
        }
        let mut bad = b.clone();
        for i in 1..bad.len() {
            bad[i] ^= 0x5a;
            let _ = decode(&bad);
        }
        assert!(decode(&[TRACE_V2, 0xff, 0xff, 0xff]).is_err());
    }
}
