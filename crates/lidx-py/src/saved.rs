//! Pickled indexes: lidx's saved-model format bound to the keys the model was built on.
//!
//! A model ([`Persist::encode`], the bytes `lidx::mem::Persist` defines and `docs/format.md`
//! lays out by kind) records only how many keys it was built on; it answers for exactly those
//! keys. As the saved join index does for its table (`lidx::raw::join::table_index`), the state
//! records the model's kind, the key type, the key count and a content fingerprint of the keys,
//! and loading checks them all; here the keys travel with the model, so the state is the whole
//! index. Layout (little-endian):
//!
//! | offset      | size        | field                                                   |
//! |-------------|-------------|---------------------------------------------------------|
//! | 0           | 8           | magic `"LIDXPYIX"`                                      |
//! | 8           | 4           | format version (1)                                      |
//! | 12          | 4           | model kind ([`Persist::KIND`])                          |
//! | 16          | 4           | key type (1 `uint64`, 2 `int64`, 3 `float64`, 4 `uint32`) |
//! | 20          | 8           | key count `n`                                           |
//! | 28          | 8           | fingerprint: xxh3-64 of the key bytes                   |
//! | 36          | 8           | model byte length `L`                                   |
//! | 44          | `L`         | model ([`Persist::encode`])                             |
//! | 44 + `L`    | `n * size`  | keys, little-endian                                     |
//! | end - 4     | 4           | crc32c of every byte before it                          |
//!
//! Anything else (a wrong checksum, magic, version or fingerprint, lengths that do not add up,
//! a model that does not decode or was built on another count, keys out of order) is a typed
//! lidx error, raised as `lidx.CorruptError` (`ValueError` for keys out of order).

use lidx::mem::Persist;
use lidx::mem::{Decoder, Encoder};
use lidx::raw::key::check_sorted;
use lidx::{Error, Result};
use pyo3::{PyResult, Python};

use crate::error::OrRaise;
use crate::keys::{owned_array, NumKey, SortedKeys};

/// Magic number of a pickled index ("LIDXPYIX" read as little-endian bytes).
const MAGIC: u64 = u64::from_le_bytes(*b"LIDXPYIX");
/// Format version written and read.
const VERSION: u32 = 1;
/// The name the state goes by in error messages.
const NAME: &str = "<pickled lidx index>";
/// Bytes of the trailing checksum.
const CRC_BYTES: usize = 4;

/// The state of an index of model `M` over `keys` (the layout in the module docs).
pub(crate) fn encode<K: NumKey, M: Persist<K>>(keys: &[K], model: &M) -> Vec<u8> {
    let key_bytes = key_bytes(keys);
    let mut model_bytes = Encoder::new();
    model.encode(&mut model_bytes);
    let model_bytes = model_bytes.into_bytes();
    let mut out = Encoder::new();
    out.u64(MAGIC);
    out.u32(VERSION);
    out.u32(M::KIND);
    out.u32(K::CODE);
    out.usize(keys.len());
    out.u64(xxhash_rust::xxh3::xxh3_64(&key_bytes));
    out.usize(model_bytes.len());
    let mut out = out.into_bytes();
    out.extend_from_slice(&model_bytes);
    out.extend_from_slice(&key_bytes);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The little-endian bytes of `keys`.
fn key_bytes<K: NumKey>(keys: &[K]) -> Vec<u8> {
    let mut out = vec![0u8; keys.len() * K::SIZE];
    for (chunk, key) in out.chunks_exact_mut(K::SIZE).zip(keys) {
        key.write_to(chunk);
    }
    out
}

/// A state whose framing, checksum and fingerprint were checked: what it holds, still encoded.
pub(crate) struct Saved<'a> {
    /// The model's kind.
    pub(crate) kind: u32,
    /// The key type's code ([`NumKey::CODE`]).
    pub(crate) key_code: u32,
    len: usize,
    model: &'a [u8],
    keys: &'a [u8],
}

/// Checks the framing of `state` (module docs) and splits it.
pub(crate) fn parse(state: &[u8]) -> Result<Saved<'_>> {
    let Some(body_len) = state.len().checked_sub(CRC_BYTES) else {
        return Err(truncated(state.len()));
    };
    let (body, crc) = state.split_at(body_len);
    let mut d = Decoder::new(NAME, body);
    let magic = d.u64()?;
    if magic != MAGIC {
        return Err(Error::BadMagic {
            file: NAME.into(),
            expected: MAGIC,
            got: magic,
        });
    }
    let version = d.u32()?;
    if version != VERSION {
        return Err(Error::UnsupportedVersion {
            file: NAME.into(),
            got: version,
            supported: VERSION,
        });
    }
    let stored = u32::from_le_bytes(crc.try_into().map_err(|_| truncated(state.len()))?);
    if crc32c::crc32c(body) != stored {
        return Err(d.corrupt("checksum does not match: the bytes were changed"));
    }
    let kind = d.u32()?;
    let key_code = d.u32()?;
    let len = d.usize_at_most(lidx::raw::codec::MAX_LEN, "key count")?;
    let fingerprint = d.u64()?;
    let model_len = d.usize_at_most(d.remaining(), "model length")?;
    let model = d.take(model_len)?;
    let keys = d.take(d.remaining())?;
    if xxhash_rust::xxh3::xxh3_64(keys) != fingerprint {
        return Err(d.corrupt("the keys are not the ones the model was built on"));
    }
    Ok(Saved {
        kind,
        key_code,
        len,
        model,
        keys,
    })
}

fn truncated(len: usize) -> Error {
    Error::Truncated {
        file: NAME.into(),
        what: format!("{len} bytes, shorter than a header"),
    }
}

impl Saved<'_> {
    /// The keys as a new read-only array of their type.
    pub(crate) fn sorted_keys(&self, py: Python<'_>) -> PyResult<SortedKeys> {
        Ok(match self.key_code {
            <u64 as NumKey>::CODE => SortedKeys::U64(owned_array(py, self.keys().or_raise()?)?),
            <i64 as NumKey>::CODE => SortedKeys::I64(owned_array(py, self.keys().or_raise()?)?),
            <f64 as NumKey>::CODE => SortedKeys::F64(owned_array(py, self.keys().or_raise()?)?),
            <u32 as NumKey>::CODE => SortedKeys::U32(owned_array(py, self.keys().or_raise()?)?),
            code => {
                return Err(Error::Corrupt {
                    file: NAME.into(),
                    block: None,
                    what: format!("key type {code} is not one the Python bindings know"),
                })
                .or_raise()
            }
        })
    }

    /// The keys, checked against the count and for order.
    fn keys<K: NumKey>(&self) -> Result<Vec<K>> {
        if self.keys.len() != self.len.saturating_mul(K::SIZE) {
            return Err(Error::Corrupt {
                file: NAME.into(),
                block: None,
                what: format!(
                    "{} bytes of keys for {} keys of {} bytes",
                    self.keys.len(),
                    self.len,
                    K::SIZE
                ),
            });
        }
        let keys: Vec<K> = self.keys.chunks_exact(K::SIZE).map(K::read_from).collect();
        check_sorted(&keys)?;
        Ok(keys)
    }

    /// The model, checked to be all of its bytes and built on as many keys as the state holds.
    pub(crate) fn model<K: NumKey, M: Persist<K>>(&self) -> Result<M> {
        let mut d = Decoder::new(NAME, self.model);
        let model = M::decode(&mut d)?;
        d.finish()?;
        if model.len() != self.len {
            return Err(d.corrupt(format!(
                "the model was built on {} keys, the state holds {}",
                model.len(),
                self.len
            )));
        }
        Ok(model)
    }
}
