//! Composite keys: big-endian tuples so that byte order is the order we scan in.

use uuid::Uuid;

/// Builds a key from parts; strings are length-prefixed so a short key is never a
/// prefix of a longer one's different segment.
#[derive(Default, Clone)]
pub struct Key(pub Vec<u8>);

impl Key {
    pub fn new() -> Self {
        Key(Vec::with_capacity(48))
    }
    pub fn id(mut self, id: &Uuid) -> Self {
        self.0.extend_from_slice(id.as_bytes());
        self
    }
    pub fn str(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        self.0.extend_from_slice(&(b.len() as u16).to_be_bytes());
        self.0.extend_from_slice(b);
        self
    }
    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

impl AsRef<[u8]> for Key {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The trailing 16 bytes of a key as a UUID.
pub fn tail_id(key: &[u8]) -> Uuid {
    let mut b = [0u8; 16];
    b.copy_from_slice(&key[key.len() - 16..]);
    Uuid::from_bytes(b)
}

pub fn uuid_at(key: &[u8], at: usize) -> Uuid {
    let mut b = [0u8; 16];
    b.copy_from_slice(&key[at..at + 16]);
    Uuid::from_bytes(b)
}
