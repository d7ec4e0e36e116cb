//! The compact encoding of decision-trace parts (the `trace` key space).
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
//! A part starts with its version byte: `TRACE_V2` here, `codec`'s for parts
//! an earlier Herald wrote, which are still read as they are. The tables
//! are append-only: stored parts refer to their indexes.

use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::trace::TraceEntry;
use serde_json::{Map, Number, Value};
use uuid::Uuid;

/// The version byte of this encoding (`codec`'s is 1).
const TRACE_V2: u8 = 2;

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
    Uuid::parse_str(s)
        .ok()
        .filter(|u| u.hyphenated().to_string() == s)
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
        Value::String(s) => {
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

/// One part of a trace (the entries one commit adds), encoded.
pub(crate) fn encode(entries: &[TraceEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + entries.len() * 24);
    out.push(TRACE_V2);
    varint(&mut out, entries.len() as u64);
    let mut prev = 0i64;
    for e in entries {
        let at = e.at.millis();
        varint(&mut out, zigzag(at.wrapping_sub(prev)));
        prev = at;
        name(&mut out, CODES, &e.code);
        object(&mut out, &e.args);
    }
    out
}

/// A part as stored: this encoding, or `codec`'s of an earlier Herald.
pub(crate) fn decode(b: &[u8]) -> Result<Vec<TraceEntry>> {
    if b.first() != Some(&TRACE_V2) {
        return super::codec::dec(b);
    }
    let mut r = Reader { b, at: 1 };
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
        let compact = encode(&entries);
        assert_eq!(decode(&compact).unwrap(), entries);
        // the entries Herald writes (not the last, made of what no table knows)
        let typical = &entries[..3];
        let compact = encode(typical);
        let named = crate::store::sled::codec::enc(&typical);
        assert!(
            compact.len() * 2 < named.len(),
            "{} vs {}",
            compact.len(),
            named.len()
        );
        assert_eq!(decode(&encode(&[])).unwrap(), vec![]);
    }

    #[test]
    fn reads_parts_an_earlier_herald_wrote() {
        let entries = sample();
        let old = crate::store::sled::codec::enc(&entries);
        assert_eq!(decode(&old).unwrap(), entries);
    }

    #[test]
    fn truncated_or_garbled_parts_are_errors_not_panics() {
        let b = encode(&sample());
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
