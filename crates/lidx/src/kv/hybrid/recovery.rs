//! Recovery of a hybrid index, and the manifest `meta` bytes it relies on.
//!
//! Paper 002 §9 leaves the hybrid index volatile. Ours reopens the way LevelDB does (see
//! [`crate::kv`]): the manifest names the live static files and `static_seq`, every record up to
//! `static_seq` being in them; the write-ahead log replays the records after it into a fresh
//! dynamic stage. Static files not named by the manifest are leftovers of a merge that crashed
//! before its commit (new files) or after it (old files not yet removed); open removes them.
//!
//! The log must cover everything after `static_seq`: it has at least one segment (`create`
//! starts it before the manifest exists), its first replayed record is at most
//! `static_seq + 1` and its next sequence number at least `static_seq + 1`. A log that breaks
//! that lost records, and opening fails with [`Error::Corrupt`] (or [`Error::Io`] `NotFound`
//! when the log directory is gone) rather than silently serving old data. The two checks are
//! the store's (`require_wal` and `check_coverage` in `kv/store/open.rs`), which opens its
//! engines the same way.
//!
//! Manifest `meta` of a hybrid index (little endian):
//!
//! | offset | size | field                                                        |
//! |--------|------|--------------------------------------------------------------|
//! | 0      | 4    | meta format version (1)                                      |
//! | 4      | 4    | key size in bytes (`Key::SIZE`)                              |
//! | 8      | 4    | payload size in bytes                                        |
//! | 12     | 8    | next file generation: the next merge names its files with it |
//! | 20     | 4    | key type name length `n` (1 to 64)                           |
//! | 24     | n    | key type name (`Key::NAME`, UTF-8)                           |

use crate::codec::{Decoder, Encoder};
use crate::error::{Error, Result};
use crate::key::Key;

/// Version of the meta layout.
pub(crate) const META_VERSION: u32 = 1;
/// Longest key type name accepted.
const MAX_KEY_NAME: usize = 64;

/// What a hybrid index keeps in its manifest's `meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// `Key::NAME` of the keys.
    pub key_name: String,
    /// `Key::SIZE`.
    pub key_size: u32,
    /// Payload bytes per record.
    pub payload_size: u32,
    /// Generation the next merge's files get.
    pub next_generation: u64,
}

impl Meta {
    /// The meta of a store of `K` keys.
    pub fn of<K: Key>(payload_size: usize, next_generation: u64) -> Meta {
        Meta {
            key_name: K::NAME.to_string(),
            key_size: K::SIZE as u32,
            payload_size: payload_size as u32,
            next_generation,
        }
    }

    /// The bytes, as laid out in the module docs.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::new();
        e.u32(META_VERSION);
        e.u32(self.key_size);
        e.u32(self.payload_size);
        e.u64(self.next_generation);
        e.u32(self.key_name.len() as u32);
        let mut out = e.into_bytes();
        out.extend_from_slice(self.key_name.as_bytes());
        out
    }

    /// `KeyTypeMismatch` unless the store holds `K` keys.
    pub fn check_key<K: Key>(&self, file: &str) -> Result<()> {
        crate::key::check_key_type::<K>(file, &self.key_name, self.key_size)
    }
}

/// Decodes the meta bytes of the manifest `file`. Never panics.
pub fn decode_meta(file: &str, bytes: &[u8]) -> Result<Meta> {
    let mut d = Decoder::new(file, bytes);
    let version = d.u32()?;
    if version != META_VERSION {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: version,
            supported: META_VERSION,
        });
    }
    let key_size = d.u32()?;
    let payload_size = d.u32()?;
    let next_generation = d.u64()?;
    let n = d.u32()? as usize;
    if n == 0 || n > MAX_KEY_NAME {
        return Err(d.corrupt(format!("hybrid meta: a key type name of {n} bytes")));
    }
    let name = d.take(n)?;
    let key_name = std::str::from_utf8(name)
        .map_err(|_| d.corrupt("hybrid meta: the key type name is not UTF-8"))?
        .to_string();
    d.finish()?;
    Ok(Meta {
        key_name,
        key_size,
        payload_size,
        next_generation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::hybrid::static_set::{is_static_file, static_file_name};

    #[test]
    fn meta_round_trip_and_bad_bytes() {
        let m = Meta::of::<u64>(8, 7);
        let bytes = m.encode();
        assert_eq!(decode_meta("m", &bytes).unwrap(), m);
        assert!(m.check_key::<u64>("m").is_ok());
        assert!(matches!(
            m.check_key::<[u8; 16]>("m"),
            Err(Error::KeyTypeMismatch { .. })
        ));
        for cut in 0..bytes.len() {
            assert!(decode_meta("m", &bytes[..cut]).is_err());
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode_meta("m", &extra).is_err());
        let mut bad = bytes.clone();
        bad[0] = 2;
        assert!(matches!(
            decode_meta("m", &bad),
            Err(Error::UnsupportedVersion { got: 2, .. })
        ));
        assert!(is_static_file(&static_file_name(3, 1)));
    }
}
