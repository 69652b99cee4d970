//! [`WriteBatch`]: several puts and deletes applied all or not at all, and their encoding in
//! the log.
//!
//! A batch is logged as one [`crate::kv::Record::Batch`] record, so it has one sequence number
//! and one checksum: a crash either keeps the whole record or cuts it as a torn tail. Its
//! bytes: per operation a kind byte (1 put, 2 delete), `varint(key length)`, for a put
//! `varint(value length)`, then the key and the value. A single put or delete is logged as a
//! plain `Put`/`Delete` record instead.

use crate::codec::{get_varint, put_varint};
use crate::error::{Error, Result};

use super::options::{MAX_KEY_BYTES, MAX_VALUE_BYTES, MIN_KEY_BYTES};

const PUT: u8 = 1;
const DELETE: u8 = 2;

/// One operation of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put(&'a [u8], &'a [u8]),
    /// Remove `key`.
    Delete(&'a [u8]),
}

impl<'a> BatchOp<'a> {
    /// The key.
    pub fn key(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put(k, _) | BatchOp::Delete(k) => k,
        }
    }
}

/// Puts and deletes to apply together ([`crate::kv::Store::write`]): after a crash,
/// all of them or none. Later operations on a key win over earlier ones in the same batch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    bytes: Vec<u8>,
    len: usize,
}

/// Checks a key's and a value's sizes against the store's limits.
pub(crate) fn check_sizes(key: &[u8], value: Option<&[u8]>) -> Result<()> {
    if key.len() < MIN_KEY_BYTES || key.len() > MAX_KEY_BYTES {
        return Err(Error::SizeLimit {
            what: "key",
            len: key.len(),
            min: MIN_KEY_BYTES,
            max: MAX_KEY_BYTES,
        });
    }
    if let Some(v) = value {
        if v.len() > MAX_VALUE_BYTES {
            return Err(Error::SizeLimit {
                what: "value",
                len: v.len(),
                min: 0,
                max: MAX_VALUE_BYTES,
            });
        }
    }
    Ok(())
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    /// Adds a put; a key or value outside the limits is refused here, before anything is
    /// written.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<&mut Self> {
        check_sizes(key, Some(value))?;
        self.bytes.push(PUT);
        put_varint(&mut self.bytes, key.len() as u64);
        put_varint(&mut self.bytes, value.len() as u64);
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.len += 1;
        Ok(self)
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) -> Result<&mut Self> {
        check_sizes(key, None)?;
        self.bytes.push(DELETE);
        put_varint(&mut self.bytes, key.len() as u64);
        self.bytes.extend_from_slice(key);
        self.len += 1;
        Ok(self)
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of its encoding.
    pub fn encoded_bytes(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn encoded(&self) -> &[u8] {
        &self.bytes
    }

    /// The operations, in order.
    pub fn ops(&self) -> impl Iterator<Item = BatchOp<'_>> {
        // A batch built through `put`/`delete` always decodes.
        decode_ops("batch", &self.bytes).filter_map(Result::ok)
    }
}

/// Decodes a logged batch (`file` names the log in errors); a damaged batch yields one error
/// and stops. Never panics.
pub(crate) fn decode_ops<'a>(
    file: &str,
    mut bytes: &'a [u8],
) -> impl Iterator<Item = Result<BatchOp<'a>>> + 'a {
    let file = file.to_string();
    let mut failed = false;
    std::iter::from_fn(move || {
        if bytes.is_empty() || failed {
            return None;
        }
        let bad = |what: &str| Error::Corrupt {
            file: file.clone(),
            block: None,
            what: format!("batch record: {what}"),
        };
        let mut step = || -> Result<BatchOp<'a>> {
            let kind = bytes[0];
            let mut at = 1;
            let mut len = || -> Result<usize> {
                let (v, n) = get_varint(&bytes[at..]).ok_or_else(|| bad("a length ends early"))?;
                at += n;
                usize::try_from(v).map_err(|_| bad("a length is too large"))
            };
            let klen = len()?;
            let vlen = match kind {
                PUT => len()?,
                DELETE => 0,
                k => return Err(bad(&format!("unknown operation {k}"))),
            };
            if klen.checked_add(vlen).is_none_or(|n| n > bytes.len() - at) {
                return Err(bad("an operation runs past the record"));
            }
            let key = &bytes[at..at + klen];
            let value = &bytes[at + klen..at + klen + vlen];
            check_sizes(key, Some(value)).map_err(|e| bad(&e.to_string()))?;
            bytes = &bytes[at + klen + vlen..];
            Ok(if kind == PUT {
                BatchOp::Put(key, value)
            } else {
                BatchOp::Delete(key)
            })
        };
        let r = step();
        failed = r.is_err();
        Some(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_round_trip_and_damage_is_an_error() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1")
            .unwrap()
            .delete(b"b")
            .unwrap()
            .put(b"c", b"")
            .unwrap();
        let ops: Vec<_> = b.ops().collect();
        assert_eq!(
            ops,
            [
                BatchOp::Put(b"a", b"1"),
                BatchOp::Delete(b"b"),
                BatchOp::Put(b"c", b"")
            ]
        );
        for cut in 1..b.encoded().len() {
            let r: Vec<_> = decode_ops("log", &b.encoded()[..cut]).collect();
            assert!(r.iter().any(Result::is_err) || r.len() < 3, "cut at {cut}");
        }
        assert!(b.put(b"", b"x").is_err());
        assert!(b.put(&[0; MAX_KEY_BYTES + 1], b"x").is_err());
        assert_eq!(b.len(), 3);
    }
}
