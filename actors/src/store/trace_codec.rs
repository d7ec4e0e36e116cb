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
use crate::rules::preferences::key;
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
    "preference.ignored",
    "quiet_hours.waited",
    "translation_missing",
    "delivery.feedback",
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
    "report",
    "bounce",
    "detail",
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
    "critical",
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

/// The preference keys (`rules::preferences::key`), by index: new keys are
/// appended, as stored stubs name them by position.
const PREF_KEYS: &[&str] = &[
    key::DEFAULT,
    key::CHANNEL_TYPE,
    key::FLOW,
    key::FLOW_CHANNEL,
    crate::trace::CRITICAL,
    key::CATEGORY,
    key::CATEGORY_CHANNEL,
];

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
    b: &[u8], n: &crate::model::Notification, ds: &[crate::model::Delivery],
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
#[path = "tests/trace_codec.rs"]
mod tests;
