//! [`TrieMap`]: an updatable ordered map from byte strings to `u64`, built of [`KeyMap`]s over
//! 8-byte key slices, so that any of lidx's ordered `u64` maps (ALEX, LIPP, the B+-tree...)
//! indexes keys of any length. It is the map of the store's `log:trie:<map>` engine (the `log`
//! engine over byte keys).
//!
//! # The layout (Masstree's layering)
//!
//! Mao, Kohler and Morris (*Cache craftiness for fast multicore key-value storage*, EuroSys
//! 2012, §4.1) index variable-length keys with a trie whose every node is a B+-tree over one
//! 8-byte slice of the key. We keep the trie and put one of lidx's maps (chosen by a
//! [`MapSpec`]) in each layer:
//!
//! * A layer at depth `d` holds the keys that agree on their first `d` bytes, keyed by their
//!   next 8 bytes as a big-endian `u64` (zero-padded when fewer remain), so the layer's `u64`
//!   order is the keys' byte order.
//! * A layer maps each slice to a *slot*: the keys that end within the slice (at most one per
//!   remaining length 1..=8: zero padding makes `ab` and `ab\0` the same slice), then the keys
//!   that go on past it. Ending keys sort before going ones, shorter before longer, which is
//!   byte order. One key going on is kept as its suffix; a second one gets its own layer at
//!   depth `d + 8` (Masstree does the same).
//! * A layer with at most [`SMALL`] slices is a sorted vector; past that it is bulk-loaded into
//!   the chosen map. Real key sets make many small layers (a YCSB key's second slice is nearly
//!   unique), and an ALEX or LIPP per handful of keys would cost more than it saves.
//!
//! * **The shared prefix** (our addition; Masstree slices from byte 0): the bytes every key
//!   starts with (up to [`MAX_PREFIX`], and short of the shortest key) are kept once and the
//!   root layer slices the keys after them. Keys of a store often share a prefix (a table's
//!   name, YCSB's `user`): sliced from byte 0, 1M YCSB keys make a root of 10,000 slices
//!   (`user` and 4 digits) over 10,000 second layers of about 100 keys; past the prefix, the
//!   root is one map of about a million nearly unique slices, the case a learned map is for,
//!   and a lookup takes one map lookup instead of two. A key that does not start with the
//!   prefix shortens it, and the map is rebuilt around the shorter one: each byte of prefix
//!   is given up at most once, so that happens at most [`MAX_PREFIX`] times over the map's
//!   life (0.3-1.7 s for a million keys, by map; an empty or young map's first keys set it
//!   at almost no cost).
//!
//! A lookup is one map lookup per 8 bytes past the prefix that the key shares with another,
//! then a comparison of what is left.
//!
//! Measured (a throwaway harness: [`TrieMap::build`] over 1M `gen:user` keys of 16-64 bytes,
//! 2M uniform gets of present keys, 2-core AMD EPYC VM, one run each): B+-tree layers 1.40 us
//! a get and 105 bytes a key (2.15 us sliced from byte 0, without the prefix), ALEX layers
//! 2.64 us, LIPP 1.88 us and 420 bytes a key; `std::collections::BTreeMap<Vec<u8>, u64>`
//! 2.1-2.5 us. The learned maps lose here: a slice of ASCII digits read as a `u64` is a
//! staircase (ten values in each byte's 256) that a line fits badly.
//!
//! What it does not do: remove. The `log` engine keeps deleted keys marked while open and
//! rebuilds the map at reopen, so it never removes. Nor does it take the unordered `hash` map
//! as its layers ([`TrieMap::new`] refuses it): a rebuild scans every layer in order, which the
//! hash map does by a pass over all its entries per chunk. A rebuild holds every key twice
//! (the old map, the keys it read out, then the new map) for its time.

use std::cmp::Ordering;

use crate::error::{Error, Result};

use super::{KeyMap, MapSpec};

/// A layer with up to this many slices is a sorted vector, not a map.
pub(crate) const SMALL: usize = 32;
/// The longest prefix kept once for all keys (see the module docs): a bound on how often a
/// map is rebuilt for a key outside it.
pub(crate) const MAX_PREFIX: usize = 32;

/// The longest prefix shared by `first` and `last` (the smallest and largest key), at most
/// [`MAX_PREFIX`] and shorter than `shortest`.
fn shared_prefix(first: &[u8], last: &[u8], shortest: usize) -> usize {
    let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    common.min(MAX_PREFIX).min(shortest.saturating_sub(1))
}

/// The 8 bytes of `rest` a layer keys it by, and how many of them are the key's.
#[inline]
fn slice_of(rest: &[u8]) -> (u64, usize) {
    let n = rest.len().min(8);
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&rest[..n]);
    (u64::from_be_bytes(b), n)
}

/// What follows a slice: nothing, one key's suffix and value, or a layer.
enum More {
    Nothing,
    One(Box<[u8]>, u64),
    Layer(u32),
}

/// The keys of one slice of one layer.
struct Slot {
    /// Keys ending in the slice: (bytes of the slice that are theirs, 1..=8; value), by length.
    ends: Vec<(u8, u64)>,
    more: More,
}

enum Layer {
    /// Sorted by slice; the value is a slot's index.
    Small(Vec<(u64, u32)>),
    Map(Box<dyn KeyMap>),
}

impl Layer {
    #[inline]
    fn get(&self, slice: u64) -> Option<u32> {
        match self {
            Layer::Small(v) => v
                .binary_search_by_key(&slice, |&(s, _)| s)
                .ok()
                .map(|i| v[i].1),
            Layer::Map(m) => m.get(slice).map(|s| s as u32),
        }
    }

    /// Up to `limit` (slice, slot) pairs from `from` on, appended to `out`.
    fn scan(&self, from: u64, limit: usize, out: &mut Vec<(u64, u64)>) {
        match self {
            Layer::Small(v) => {
                let i = v.partition_point(|&(s, _)| s < from);
                out.extend(v[i..].iter().take(limit).map(|&(s, t)| (s, u64::from(t))));
            }
            Layer::Map(m) => m.scan(from, limit, out),
        }
    }

    fn size_in_bytes(&self) -> usize {
        match self {
            Layer::Small(v) => v.capacity() * std::mem::size_of::<(u64, u32)>(),
            Layer::Map(m) => m.size_in_bytes(),
        }
    }
}

/// An updatable ordered map from byte strings (1 byte or longer) to `u64`. See the module docs.
pub struct TrieMap {
    spec: MapSpec,
    /// Bytes every key starts with (and goes on past); the root layer slices what follows.
    prefix: Vec<u8>,
    /// Layer 0 is the root.
    layers: Vec<Layer>,
    slots: Vec<Slot>,
    len: usize,
    /// Bytes of the suffixes kept in slots.
    suffix_bytes: usize,
}

impl TrieMap {
    /// An empty map whose layers are `spec`'s maps; [`Error::InvalidParameter`] for the
    /// unordered `hash` map.
    pub fn new(spec: MapSpec) -> Result<TrieMap> {
        if matches!(spec, MapSpec::Hash {}) {
            return Err(Error::InvalidParameter {
                name: "map",
                value: spec.label(),
                expected: "an ordered map for the trie's layers (the hash map has no key order)",
            });
        }
        Ok(TrieMap {
            spec,
            prefix: Vec::new(),
            layers: vec![Layer::Small(Vec::new())],
            slots: Vec::new(),
            len: 0,
            suffix_bytes: 0,
        })
    }

    /// The map of `entries` (strictly increasing keys, none empty: [`Error::InvalidParameter`]
    /// otherwise), each layer bulk-loaded.
    pub fn build(spec: MapSpec, entries: &[(&[u8], u64)]) -> Result<TrieMap> {
        if entries.iter().any(|(k, _)| k.is_empty()) || entries.windows(2).any(|w| w[0].0 >= w[1].0)
        {
            return Err(Error::InvalidParameter {
                name: "entries",
                value: format!("{} keys", entries.len()),
                expected: "strictly increasing keys of 1 byte or more",
            });
        }
        let shared = match (entries.first(), entries.last()) {
            (Some(first), Some(last)) => {
                let shortest = entries.iter().map(|(k, _)| k.len()).min().unwrap_or(0);
                shared_prefix(first.0, last.0, shortest)
            }
            _ => 0,
        };
        TrieMap::build_sharing(spec, entries, shared)
    }

    /// [`TrieMap::build`] with a prefix of `shared` bytes (which every key has and goes past).
    fn build_sharing(spec: MapSpec, entries: &[(&[u8], u64)], shared: usize) -> Result<TrieMap> {
        let mut map = TrieMap::new(spec)?;
        if let Some((first, _)) = entries.first() {
            map.prefix = first[..shared].to_vec();
        }
        map.layers.clear();
        map.len = entries.len();
        map.build_layer(entries, shared)?;
        Ok(map)
    }

    /// The bytes every key starts with, kept once (see the module docs).
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// The maps its layers are.
    pub fn spec(&self) -> MapSpec {
        self.spec
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held: the layers, the slots and the suffixes.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<TrieMap>()
            + self.layers.iter().map(Layer::size_in_bytes).sum::<usize>()
            + self.layers.capacity() * std::mem::size_of::<Layer>()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self
                .slots
                .iter()
                .map(|s| s.ends.capacity() * std::mem::size_of::<(u8, u64)>())
                .sum::<usize>()
            + self.suffix_bytes
            + self.prefix.capacity()
    }

    /// Builds the layer of `entries`, all sharing their first `depth` bytes; its index.
    fn build_layer(&mut self, entries: &[(&[u8], u64)], depth: usize) -> Result<u32> {
        let id = self.layers.len();
        self.layers.push(Layer::Small(Vec::new()));
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        let mut i = 0;
        while i < entries.len() {
            let (slice, _) = slice_of(&entries[i].0[depth..]);
            let mut j = i;
            let mut ends = Vec::new();
            while j < entries.len() && slice_of(&entries[j].0[depth..]).0 == slice {
                let rest = entries[j].0.len() - depth;
                if rest > 8 {
                    break;
                }
                ends.push((rest as u8, entries[j].1));
                j += 1;
            }
            let mut k = j;
            while k < entries.len() && slice_of(&entries[k].0[depth..]).0 == slice {
                k += 1;
            }
            let more = match &entries[j..k] {
                [] => More::Nothing,
                [(key, value)] => {
                    self.suffix_bytes += key.len() - depth - 8;
                    More::One(key[depth + 8..].into(), *value)
                }
                going => More::Layer(self.build_layer(going, depth + 8)?),
            };
            pairs.push((slice, self.slots.len() as u64));
            self.slots.push(Slot { ends, more });
            i = k;
        }
        self.layers[id] = if pairs.len() <= SMALL {
            Layer::Small(pairs.into_iter().map(|(s, t)| (s, t as u32)).collect())
        } else {
            Layer::Map(self.spec.build(pairs)?)
        };
        Ok(id as u32)
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<u64> {
        let mut layer = 0usize;
        let mut rest = key.strip_prefix(&self.prefix[..])?;
        if rest.is_empty() {
            return None;
        }
        loop {
            let (slice, n) = slice_of(rest);
            let slot = &self.slots[self.layers[layer].get(slice)? as usize];
            if rest.len() <= 8 {
                return slot
                    .ends
                    .iter()
                    .find(|&&(len, _)| usize::from(len) == n)
                    .map(|&(_, v)| v);
            }
            match &slot.more {
                More::Nothing => return None,
                More::One(suffix, v) => return (**suffix == rest[8..]).then_some(*v),
                More::Layer(next) => {
                    layer = *next as usize;
                    rest = &rest[8..];
                }
            }
        }
    }

    /// Stores `value` under `key` (1 byte or longer: [`Error::SizeLimit`] for an empty one),
    /// returning the value it replaces.
    pub fn insert(&mut self, key: &[u8], value: u64) -> Result<Option<u64>> {
        if key.is_empty() {
            return Err(Error::SizeLimit {
                what: "key of a trie map",
                len: 0,
                min: 1,
                max: usize::MAX,
            });
        }
        if self.len == 0 {
            // The first key sets the prefix: all of it but its last byte, up to the bound.
            self.prefix = key[..(key.len() - 1).min(MAX_PREFIX)].to_vec();
        } else if key.len() <= self.prefix.len() || !key.starts_with(&self.prefix) {
            self.rebuild_for(key)?;
        }
        let old = self.insert_at(0, &key[self.prefix.len()..], value)?;
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    fn insert_at(&mut self, mut layer: usize, mut rest: &[u8], value: u64) -> Result<Option<u64>> {
        loop {
            let (slice, n) = slice_of(rest);
            let Some(id) = self.layers[layer].get(slice) else {
                let slot = self.slots.len() as u32;
                let (ends, more) = if rest.len() <= 8 {
                    (vec![(n as u8, value)], More::Nothing)
                } else {
                    self.suffix_bytes += rest.len() - 8;
                    (Vec::new(), More::One(rest[8..].into(), value))
                };
                self.slots.push(Slot { ends, more });
                self.add_slice(layer, slice, slot)?;
                return Ok(None);
            };
            let slot = &mut self.slots[id as usize];
            if rest.len() <= 8 {
                let at = slot.ends.partition_point(|&(len, _)| usize::from(len) < n);
                return Ok(match slot.ends.get_mut(at) {
                    Some(e) if usize::from(e.0) == n => Some(std::mem::replace(&mut e.1, value)),
                    _ => {
                        slot.ends.insert(at, (n as u8, value));
                        None
                    }
                });
            }
            let tail = &rest[8..];
            match &mut slot.more {
                More::Nothing => {
                    slot.more = More::One(tail.into(), value);
                    self.suffix_bytes += tail.len();
                    return Ok(None);
                }
                More::One(suffix, v) if **suffix == *tail => {
                    return Ok(Some(std::mem::replace(v, value)));
                }
                More::One(..) => {
                    let More::One(suffix, v) = std::mem::replace(&mut slot.more, More::Nothing)
                    else {
                        unreachable!("matched as one suffix above");
                    };
                    self.suffix_bytes -= suffix.len();
                    let mut pair = [(&suffix[..], v), (tail, value)];
                    pair.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    let next = self.build_layer(&pair, 0)?;
                    // `build_layer` counted both suffixes' tails past their first slice; the
                    // new key is counted here by `insert`'s caller.
                    self.slots[id as usize].more = More::Layer(next);
                    return Ok(None);
                }
                More::Layer(next) => {
                    layer = *next as usize;
                    rest = tail;
                }
            }
        }
    }

    /// Removes `key`, returning its value. The slot of its last slice stays, emptied (a scan
    /// passes over it), until the map is next built: removing never rebuilds a layer.
    pub fn remove(&mut self, key: &[u8]) -> Option<u64> {
        let mut layer = 0usize;
        let mut rest = key.strip_prefix(&self.prefix[..])?;
        if rest.is_empty() {
            return None;
        }
        let old = loop {
            let (slice, n) = slice_of(rest);
            let id = self.layers[layer].get(slice)? as usize;
            let slot = &mut self.slots[id];
            if rest.len() <= 8 {
                let at = slot
                    .ends
                    .iter()
                    .position(|&(len, _)| usize::from(len) == n)?;
                break slot.ends.remove(at).1;
            }
            match &slot.more {
                More::Nothing => return None,
                More::One(suffix, v) => {
                    if **suffix != rest[8..] {
                        return None;
                    }
                    let v = *v;
                    self.suffix_bytes -= suffix.len();
                    slot.more = More::Nothing;
                    break v;
                }
                More::Layer(next) => {
                    layer = *next as usize;
                    rest = &rest[8..];
                }
            }
        };
        self.len -= 1;
        if self.len == 0 {
            // The next insert sets a new prefix: no emptied slot of the old one may stay.
            self.layers = vec![Layer::Small(Vec::new())];
            self.slots.clear();
            self.suffix_bytes = 0;
        }
        Some(old)
    }

    /// Rebuilds the map around a prefix that `key` shares too.
    fn rebuild_for(&mut self, key: &[u8]) -> Result<()> {
        let mut all = Vec::with_capacity(self.len + 1);
        self.scan(&[], usize::MAX, &mut all);
        let shortest = all.iter().map(|(k, _)| k.len()).min().unwrap_or(0);
        let keep = shared_prefix(&self.prefix, key, shortest.min(key.len()));
        let entries: Vec<(&[u8], u64)> = all.iter().map(|(k, v)| (&k[..], *v)).collect();
        *self = TrieMap::build_sharing(self.spec, &entries, keep)?;
        Ok(())
    }

    /// Adds `slice -> slot` to `layer`, turning a full small layer into a map.
    fn add_slice(&mut self, layer: usize, slice: u64, slot: u32) -> Result<()> {
        match &mut self.layers[layer] {
            Layer::Small(v) => {
                let at = v.partition_point(|&(s, _)| s < slice);
                v.insert(at, (slice, slot));
                if v.len() > SMALL {
                    let pairs = v.iter().map(|&(s, t)| (s, u64::from(t))).collect();
                    self.layers[layer] = Layer::Map(self.spec.build(pairs)?);
                }
                Ok(())
            }
            Layer::Map(m) => m.insert(slice, u64::from(slot)).map(|_| ()),
        }
    }

    /// Appends to `out` the entries with keys `>= from`, in key order, at most `limit` of them.
    pub fn scan(&self, from: &[u8], limit: usize, out: &mut Vec<(Vec<u8>, u64)>) {
        if self.len == 0 {
            return;
        }
        // The layers' scans stop when `out` holds `limit`: count from what it holds now.
        let limit = out.len().saturating_add(limit);
        let p = &self.prefix[..];
        let from = match from.strip_prefix(p) {
            Some(rest) => Some(rest),
            // Below every key (a prefix of the prefix, or smaller), or above them all.
            None if from < p => None,
            None => return,
        };
        let mut path = p.to_vec();
        self.scan_layer(0, from, &mut path, limit, out);
    }

    /// The entries of `layer` (its keys all start with `path`) from `from` (the rest of the
    /// bound past `path`, `None`: from the first), appended to `out` until it holds `limit`.
    fn scan_layer(
        &self,
        layer: usize,
        from: Option<&[u8]>,
        path: &mut Vec<u8>,
        limit: usize,
        out: &mut Vec<(Vec<u8>, u64)>,
    ) {
        let (start, mut bound) = match from {
            Some(from) if !from.is_empty() => (slice_of(from).0, Some(from)),
            _ => (0, None),
        };
        let mut next = start;
        let mut chunk = Vec::new();
        while out.len() < limit {
            chunk.clear();
            self.layers[layer].scan(next, 64, &mut chunk);
            for &(slice, slot) in &chunk {
                if out.len() >= limit {
                    return;
                }
                // Within the bound's own slice (the first, if there) only keys at or past the
                // bound count.
                let within = bound.take().filter(|_| slice == start);
                self.scan_slot(&self.slots[slot as usize], slice, within, path, limit, out);
            }
            match chunk.last() {
                Some(&(slice, _)) if chunk.len() == 64 && slice < u64::MAX => next = slice + 1,
                _ => return,
            }
        }
    }

    fn scan_slot(
        &self,
        slot: &Slot,
        slice: u64,
        bound: Option<&[u8]>,
        path: &mut Vec<u8>,
        limit: usize,
        out: &mut Vec<(Vec<u8>, u64)>,
    ) {
        let bytes = slice.to_be_bytes();
        for &(len, value) in &slot.ends {
            // The bound's rest in this slice is a prefix of (or equal to) a key ending here
            // exactly when it is no longer: zero padding is the same byte on both sides.
            let ends_before = bound.is_some_and(|b| b.len() > usize::from(len));
            if !ends_before && out.len() < limit {
                let mut key = path.clone();
                key.extend_from_slice(&bytes[..usize::from(len)]);
                out.push((key, value));
            }
        }
        let tail_bound = bound.map(|b| if b.len() > 8 { &b[8..] } else { &[][..] });
        match &slot.more {
            More::Nothing => {}
            More::One(suffix, value) => {
                let below = tail_bound.is_some_and(|b| suffix[..].cmp(b) == Ordering::Less);
                if !below && out.len() < limit {
                    let mut key = path.clone();
                    key.extend_from_slice(&bytes);
                    key.extend_from_slice(suffix);
                    out.push((key, *value));
                }
            }
            More::Layer(next) => {
                let keep = path.len();
                path.extend_from_slice(&bytes);
                self.scan_layer(*next as usize, tail_bound, path, limit, out);
                path.truncate(keep);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn specs() -> Vec<MapSpec> {
        ["btree:leaf=8:inner=8", "alex", "lipp", "art"]
            .iter()
            .map(|s| MapSpec::parse(s).unwrap())
            .collect()
    }

    fn check_against(map: &TrieMap, model: &BTreeMap<Vec<u8>, u64>, probes: &[Vec<u8>]) {
        assert_eq!(map.len(), model.len());
        for (k, v) in model {
            assert_eq!(map.get(k), Some(*v), "key {k:?}");
        }
        let mut all = Vec::new();
        map.scan(&[0], usize::MAX, &mut all);
        let want: Vec<(Vec<u8>, u64)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(all, want);
        for p in probes {
            if !model.contains_key(p) {
                assert_eq!(map.get(p), None, "absent key {p:?}");
            }
            for limit in [1, 3, 100] {
                let mut got = Vec::new();
                map.scan(p, limit, &mut got);
                let want: Vec<(Vec<u8>, u64)> = model
                    .range(p.clone()..)
                    .take(limit)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
                assert_eq!(got, want, "scan from {p:?}, limit {limit}");
            }
        }
    }

    /// Keys over a tiny alphabet with zeros, so that slices collide, keys end inside shared
    /// slices and padding matters.
    /// Most share a prefix, so that the map keeps one and a key outside it shortens it.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        let tail = || prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', 0xff]), 1..28);
        prop_oneof![
            1 => tail(),
            3 => tail().prop_map(|t| [&b"tbl:a\x00"[..], &t].concat()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn inserts_and_scans_match_a_btreemap(
            ops in prop::collection::vec((key(), any::<u32>()), 1..300),
            probes in prop::collection::vec(key(), 0..20),
            spec in 0usize..4,
        ) {
            let mut map = TrieMap::new(specs()[spec]).unwrap();
            let mut model = BTreeMap::new();
            for (k, v) in &ops {
                let old = map.insert(k, u64::from(*v)).unwrap();
                prop_assert_eq!(old, model.insert(k.clone(), u64::from(*v)));
            }
            check_against(&map, &model, &probes);
        }

        #[test]
        fn removes_between_inserts_match_a_btreemap(
            ops in prop::collection::vec((key(), any::<u32>(), any::<bool>()), 1..300),
            probes in prop::collection::vec(key(), 0..20),
            spec in 0usize..4,
        ) {
            let mut map = TrieMap::new(specs()[spec]).unwrap();
            let mut model = BTreeMap::new();
            for (k, v, remove) in &ops {
                if *remove {
                    prop_assert_eq!(map.remove(k), model.remove(k));
                } else {
                    let old = map.insert(k, u64::from(*v)).unwrap();
                    prop_assert_eq!(old, model.insert(k.clone(), u64::from(*v)));
                }
                prop_assert_eq!(map.len(), model.len());
            }
            check_against(&map, &model, &probes);
            for k in model.keys().cloned().collect::<Vec<_>>() {
                prop_assert_eq!(map.remove(&k), model.remove(&k));
            }
            prop_assert!(map.is_empty());
            prop_assert_eq!(map.insert(b"again", 1).unwrap(), None);
            prop_assert_eq!(map.get(b"again"), Some(1));
        }

        #[test]
        fn a_bulk_build_matches_a_btreemap_and_takes_inserts(
            keys in prop::collection::btree_map(key(), any::<u32>(), 0..300),
            more in prop::collection::vec((key(), any::<u32>()), 0..100),
            spec in 0usize..4,
        ) {
            let mut model: BTreeMap<Vec<u8>, u64> =
                keys.into_iter().map(|(k, v)| (k, u64::from(v))).collect();
            let entries: Vec<(&[u8], u64)> = model.iter().map(|(k, v)| (&k[..], *v)).collect();
            let mut map = TrieMap::build(specs()[spec], &entries).unwrap();
            let probes: Vec<Vec<u8>> = more.iter().map(|(k, _)| k.clone()).collect();
            check_against(&map, &model, &probes);
            for (k, v) in &more {
                prop_assert_eq!(map.insert(k, u64::from(*v)).unwrap(), model.insert(k.clone(), u64::from(*v)));
            }
            check_against(&map, &model, &probes);
        }
    }

    #[test]
    fn ycsb_like_keys_grow_layers_into_maps() {
        let mut map = TrieMap::new(MapSpec::parse("alex").unwrap()).unwrap();
        let mut model = BTreeMap::new();
        for i in 0..20_000u64 {
            let k = format!(
                "user{:016}",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10_000_000_000
            );
            map.insert(k.as_bytes(), i).unwrap();
            model.insert(k.into_bytes(), i);
        }
        assert!(map.layers.iter().any(|l| matches!(l, Layer::Map(_))));
        assert!(map.prefix().starts_with(b"user"));
        check_against(
            &map,
            &model,
            &[b"user".to_vec(), b"user5".to_vec(), b"z".to_vec()],
        );
        assert!(map.size_in_bytes() > 20_000 * 8);
    }

    #[test]
    fn bad_input_is_an_error_and_scans_append_at_most_their_limit() {
        let btree = MapSpec::parse("btree").unwrap();
        assert!(matches!(
            TrieMap::new(MapSpec::parse("hash").unwrap()),
            Err(Error::InvalidParameter { .. })
        ));
        let mut map = TrieMap::new(btree).unwrap();
        assert!(matches!(
            map.insert(b"", 1),
            Err(Error::SizeLimit { len: 0, .. })
        ));
        assert!(map.is_empty());
        for bad in [&[(&b"b"[..], 1), (&b"a"[..], 2)][..], &[(&b""[..], 1)][..]] {
            assert!(matches!(
                TrieMap::build(btree, bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        for k in [&b"a"[..], b"b", b"c"] {
            map.insert(k, 7).unwrap();
        }
        let mut out = vec![(b"x".to_vec(), 0)];
        map.scan(b"a", 2, &mut out);
        assert_eq!(out.len(), 3, "{out:?}");
    }
}
