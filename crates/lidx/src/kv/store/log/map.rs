//! The `log` engine's map from keys to places, over either kind of key ([`LogKeys`]): the
//! chosen `u64` map itself for 8-byte keys, or a [`TrieMap`] of such maps for keys of any
//! length. Both answer in byte order, so the engine above never asks which it has.

use std::collections::HashMap;

use crate::error::Result;
use crate::mem::{KeyMap, TrieMap};

use crate::kv::store::options::{LogKeys, LogSpec};

use super::record::{key_of, lower_u64};

/// A `log` store's map. See the module docs.
pub(crate) enum LogMap {
    U64(Box<dyn KeyMap>),
    Bytes(TrieMap),
}

impl LogMap {
    /// The place stored under `key` (`None` also for a key this store cannot hold).
    #[inline]
    pub(crate) fn get(&self, key: &[u8]) -> Option<u64> {
        match self {
            LogMap::U64(map) => map.get(key_of(key).ok()?),
            LogMap::Bytes(map) => map.get(key),
        }
    }

    /// Stores `place` under `key`, a key [`check_key`] accepted.
    pub(crate) fn insert(&mut self, key: &[u8], place: u64) -> Result<()> {
        match self {
            LogMap::U64(map) => map.insert(key_of(key)?, place).map(|_| ()),
            LogMap::Bytes(map) => map.insert(key, place).map(|_| ()),
        }
    }

    /// Keys in the map (deleted ones still marked there included).
    pub(crate) fn len(&self) -> usize {
        match self {
            LogMap::U64(map) => map.len(),
            LogMap::Bytes(map) => map.len(),
        }
    }

    /// Bytes the map holds in memory.
    pub(crate) fn size_in_bytes(&self) -> usize {
        match self {
            LogMap::U64(map) => map.size_in_bytes(),
            LogMap::Bytes(map) => map.size_in_bytes(),
        }
    }

    /// Appends to `out` the entries with keys `>= from` in byte order, at most `limit`.
    pub(crate) fn scan(&self, from: &[u8], limit: usize, out: &mut Vec<(Vec<u8>, u64)>) {
        match self {
            LogMap::U64(map) => {
                let Some(from) = lower_u64(std::ops::Bound::Included(from)) else {
                    return;
                };
                let mut entries = Vec::with_capacity(limit.min(4096));
                map.scan(from, limit, &mut entries);
                out.extend(
                    entries
                        .into_iter()
                        .map(|(k, place)| (k.to_be_bytes().to_vec(), place)),
                );
            }
            LogMap::Bytes(map) => map.scan(from, limit, out),
        }
    }
}

/// Whether a store of `keys` can hold `key` ([`crate::Error::SizeLimit`] if not). The store
/// checks every key's length before an engine sees it; a `log:<map>` store takes 8 bytes only.
pub(crate) fn check_key(keys: LogKeys, key: &[u8]) -> Result<()> {
    match keys {
        LogKeys::U64 => key_of(key).map(|_| ()),
        LogKeys::Bytes => Ok(()),
    }
}

/// Whether `spec` can be a store's map, before anything is written: a trie's layers must be
/// ordered ([`TrieMap::new`]).
pub(crate) fn check_spec(spec: LogSpec) -> Result<()> {
    match spec.keys {
        LogKeys::U64 => Ok(()),
        LogKeys::Bytes => TrieMap::new(spec.map).map(|_| ()),
    }
}

/// Each live key's newest place, gathered while the log is replayed, then bulk-loaded.
pub(crate) enum Newest {
    U64(HashMap<u64, u64>),
    Bytes(HashMap<Box<[u8]>, u64>),
}

impl Newest {
    pub(crate) fn new(keys: LogKeys) -> Newest {
        match keys {
            LogKeys::U64 => Newest::U64(HashMap::new()),
            LogKeys::Bytes => Newest::Bytes(HashMap::new()),
        }
    }

    /// `key`'s newest operation is at `place`: a put (`live`) or a delete.
    pub(crate) fn set(&mut self, key: &[u8], place: u64, live: bool) -> Result<()> {
        match self {
            Newest::U64(m) => {
                let key = key_of(key)?;
                if live {
                    m.insert(key, place);
                } else {
                    m.remove(&key);
                }
            }
            Newest::Bytes(m) => {
                if live {
                    m.insert(key.into(), place);
                } else {
                    m.remove(key);
                }
            }
        }
        Ok(())
    }

    /// Live keys and their bytes.
    pub(crate) fn live(&self) -> (u64, u64) {
        match self {
            Newest::U64(m) => (m.len() as u64, 8 * m.len() as u64),
            Newest::Bytes(m) => (m.len() as u64, m.keys().map(|k| k.len() as u64).sum()),
        }
    }

    /// The map of these keys, bulk-loaded in key order.
    pub(crate) fn build(self, spec: LogSpec) -> Result<LogMap> {
        Ok(match self {
            Newest::U64(m) => {
                let mut entries: Vec<(u64, u64)> = m.into_iter().collect();
                entries.sort_unstable();
                LogMap::U64(spec.map.build(entries)?)
            }
            Newest::Bytes(m) => {
                let mut entries: Vec<(&[u8], u64)> = m.iter().map(|(k, &p)| (&k[..], p)).collect();
                entries.sort_unstable();
                LogMap::Bytes(TrieMap::build(spec.map, &entries)?)
            }
        })
    }
}
