//! Record encoding: a version byte, then MessagePack with field names, so records
//! stay readable after fields are added (`#[serde(default)]`) and cost a fraction of
//! JSON to write and read. Every record on the embedded store, and on PostgreSQL
//! the notifications (`body`): ids as 16 bytes and times as milliseconds where
//! JSON spells them out in 36 and 30 characters.

use crate::error::{Error, Result};

const V1: u8 = 1;

pub fn enc<V: serde::Serialize>(v: &V) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.push(V1);
    // Serialising our own in-memory types cannot fail (no maps with non-string keys
    // that msgpack rejects), so a failure here is a programming error worth a panic
    // in tests; in release it is caught by the HTTP panic handler as a 500.
    rmp_serde::encode::write_named(&mut out, v).expect("record encoding");
    out
}

pub fn dec<V: serde::de::DeserializeOwned>(b: &[u8]) -> Result<V> {
    match b.first() {
        Some(&V1) => rmp_serde::from_slice(&b[1..])
            .map_err(|e| Error::internal(format!("corrupt record: {e}"))),
        _ => Err(Error::internal("corrupt record: unknown version byte")),
    }
}
