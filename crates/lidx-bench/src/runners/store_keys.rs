//! [`StoreKeys`]: how the YCSB runner's `u64` keys become the byte keys of a store through the
//! API ([`crate::kv_store::StoreApi`]), so that every key type a dataset holds runs there.
//!
//! The YCSB plan ([`crate::ycsb::YcsbPlan`]) and the checked runner work on `u64` keys. A
//! `u64` dataset's keys are themselves, sent as 8 big-endian bytes ([`StoreKeys::U64`]). Any
//! other dataset ([`Keys`]: `u32`, `i64`, `f64`, 16-byte strings, text of any length) runs on
//! its **ranks**: the plan is generated over `0..n`, and rank `r` is the `r`-th smallest key's
//! order-preserving bytes ([`OrderedKey`]; text keys are their own bytes), so the store sees the
//! real keys in their real order, and every read is still checked against the payload of its
//! (rank) key. A rank is an index into one flat buffer, so the timed part allocates nothing.
//! Only the stores through the API take ranked keys: the typed adapters index `u64` values.

use lidx::kv::OrderedKey;

use crate::keyfile::Keys;

/// The byte key of each runner key.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreKeys {
    /// The runner's keys are the dataset's `u64` keys, 8 big-endian bytes each.
    U64,
    /// The runner's keys are ranks into these sorted, distinct byte keys.
    Ranked(RankedKeys),
}

impl StoreKeys {
    /// Calls `f` with `key`'s bytes. A rank beyond the keys is a runner bug, not input.
    pub fn with<R>(&self, key: u64, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            StoreKeys::U64 => f(&key.to_be_bytes()),
            StoreKeys::Ranked(ranked) => f(ranked.get(key as usize)),
        }
    }

    /// `key` in messages: `key 7`, or `the text key of rank 7`.
    pub fn name(&self, key: u64) -> String {
        match self {
            StoreKeys::U64 => format!("key {key}"),
            StoreKeys::Ranked(ranked) => format!("the {} key of rank {key}", ranked.type_name),
        }
    }

    /// The key type's name: `u64`, or the ranked dataset's ([`Keys::type_name`]).
    pub fn type_name(&self) -> &'static str {
        match self {
            StoreKeys::U64 => "u64",
            StoreKeys::Ranked(ranked) => ranked.type_name,
        }
    }
}

/// Sorted, distinct byte keys in one buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedKeys {
    bytes: Vec<u8>,
    /// `ends[r]` is where key `r` ends; it starts where key `r - 1` ended.
    ends: Vec<usize>,
    type_name: &'static str,
}

impl RankedKeys {
    /// `keys` encoded order-preservingly, sorted by their bytes and without duplicates
    /// (`-0.0` and `0.0` are two keys: their encodings differ).
    pub fn encode(keys: &Keys) -> RankedKeys {
        fn ordered<K: OrderedKey>(keys: &[K]) -> Vec<Vec<u8>> {
            keys.iter().map(OrderedKey::ordered_bytes).collect()
        }
        let mut encoded = match keys {
            Keys::U64(k) => ordered(k),
            Keys::U32(k) => ordered(k),
            Keys::I64(k) => ordered(k),
            Keys::F64(k) => ordered(k),
            Keys::Str16(k) => ordered(k),
            Keys::Bytes(k) => k.clone(),
        };
        encoded.sort_unstable();
        encoded.dedup();
        let mut bytes = Vec::with_capacity(encoded.iter().map(Vec::len).sum());
        let mut ends = Vec::with_capacity(encoded.len());
        for key in &encoded {
            bytes.extend_from_slice(key);
            ends.push(bytes.len());
        }
        RankedKeys {
            bytes,
            ends,
            type_name: keys.type_name(),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The runner's keys: the ranks `0..len`.
    pub fn ranks(&self) -> Vec<u64> {
        (0..self.len() as u64).collect()
    }

    /// The bytes of the key of rank `rank`.
    pub fn get(&self, rank: usize) -> &[u8] {
        let start = if rank == 0 { 0 } else { self.ends[rank - 1] };
        &self.bytes[start..self.ends[rank]]
    }

    /// The rank of `key`, if it is one of the keys.
    pub fn rank_of(&self, key: &[u8]) -> Option<u64> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u64),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_key_order_and_duplicates_go() {
        let ranked = RankedKeys::encode(&Keys::I64(vec![-5, -5, 0, 7]));
        assert_eq!(ranked.len(), 3);
        assert_eq!(ranked.ranks(), vec![0, 1, 2]);
        assert!(ranked.get(0) < ranked.get(1) && ranked.get(1) < ranked.get(2));
        assert_eq!(i64::from_ordered_bytes(ranked.get(0)), Some(-5));
        let keys = StoreKeys::Ranked(ranked);
        assert_eq!(keys.type_name(), "i64");
        assert_eq!(keys.name(2), "the i64 key of rank 2");
        assert_eq!(keys.with(2, i64::from_ordered_bytes), Some(7));

        let text = RankedKeys::encode(&Keys::Bytes(vec![b"b".to_vec(), b"ab".to_vec()]));
        assert_eq!((text.get(0), text.get(1)), (&b"ab"[..], &b"b"[..]));
        assert_eq!(
            StoreKeys::U64.with(258, <[u8]>::to_vec),
            258u64.to_be_bytes()
        );
    }
}
