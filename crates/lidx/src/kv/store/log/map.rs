//! The `log` engine's map from keys to places, over either kind of key ([`LogKeys`]): the
//! chosen `u64` map itself for 8-byte keys, or a [`TrieMap`] of such maps for keys of any
//! length. Both answer in byte order, so the engine above never asks which it has.

use std::collections::HashMap;

use crate::error::Result;
use crate::mem::{KeyMap, TrieMap};

use crate::kv::store::options::{LogKeys, LogSpec};

use super::checkpoint::Entries;
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

    /// Removes `key`'s entry, returning it (`None` also for a key this store cannot hold).
    pub(crate) fn remove(&mut self, key: &[u8]) -> Result<Option<u64>> {
        Ok(match self {
            LogMap::U64(map) => match key_of(key) {
                Ok(k) => map.remove(k),
                Err(_) => None,
            },
            LogMap::Bytes(map) => map.remove(key),
        })
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

/// Each key's newest place (`None`: deleted) among the records replayed, merged with the
/// checkpoint's entries and bulk-loaded.
pub(crate) enum Newest {
    U64(HashMap<u64, Option<u64>>),
    Bytes(HashMap<Box<[u8]>, Option<u64>>),
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
        let place = live.then_some(place);
        match self {
            Newest::U64(m) => {
                m.insert(key_of(key)?, place);
            }
            Newest::Bytes(m) => {
                m.insert(key.into(), place);
            }
        }
        Ok(())
    }

    /// The live entries, in key order: the checkpoint's (`base`, when there is one) with the
    /// replayed places in place of theirs, deleted keys dropped.
    pub(crate) fn merge(self, base: Option<Entries>) -> Entries {
        fn merged<K: Ord + Clone>(
            base: Vec<(K, u64)>,
            tail: HashMap<K, Option<u64>>,
        ) -> Vec<(K, u64)> {
            let mut tail: Vec<(K, Option<u64>)> = tail.into_iter().collect();
            tail.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let mut out = Vec::with_capacity(base.len() + tail.len());
            let mut tail = tail.into_iter().peekable();
            for (k, p) in base {
                // A replayed place (or delete) of `k` replaces the checkpoint's.
                let mut replaced = false;
                while let Some((t, place)) = tail.next_if(|(t, _)| *t <= k) {
                    replaced |= t == k;
                    if let Some(place) = place {
                        out.push((t, place));
                    }
                }
                if !replaced {
                    out.push((k, p));
                }
            }
            out.extend(tail.filter_map(|(k, p)| p.map(|p| (k, p))));
            out
        }
        match (self, base) {
            (Newest::U64(m), Some(Entries::U64(base))) => Entries::U64(merged(base, m)),
            (Newest::U64(m), _) => Entries::U64(merged(Vec::new(), m)),
            (Newest::Bytes(m), Some(Entries::Bytes(base))) => Entries::Bytes(merged(base, m)),
            (Newest::Bytes(m), _) => Entries::Bytes(merged(Vec::new(), m)),
        }
    }
}

impl Entries {
    /// Calls `f` with every entry's place.
    pub(crate) fn for_each_place(&self, mut f: impl FnMut(u64)) {
        match self {
            Entries::U64(v) => v.iter().for_each(|&(_, p)| f(p)),
            Entries::Bytes(v) => v.iter().for_each(|&(_, p)| f(p)),
        }
    }

    /// Live keys and their bytes.
    pub(crate) fn live(&self) -> (u64, u64) {
        match self {
            Entries::U64(v) => (v.len() as u64, 8 * v.len() as u64),
            Entries::Bytes(v) => (v.len() as u64, v.iter().map(|(k, _)| k.len() as u64).sum()),
        }
    }

    /// The map of these entries, bulk-loaded.
    pub(crate) fn build(self, spec: LogSpec) -> Result<LogMap> {
        Ok(match self {
            Entries::U64(v) => LogMap::U64(spec.map.build(v)?),
            Entries::Bytes(v) => {
                let entries: Vec<(&[u8], u64)> = v.iter().map(|(k, p)| (&k[..], *p)).collect();
                LogMap::Bytes(TrieMap::build(spec.map, &entries)?)
            }
        })
    }
}
