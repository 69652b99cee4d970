//! [`DeltaBuffer`]: a group's sorted buffer of inserted records (XIndex §3, "delta index"; paper
//! 001 §II-B4, the offsite insertion buffer), and the temporary buffer that takes inserts while
//! the group is being compacted (XIndex §4.2).
//!
//! The paper uses a small concurrent B+-tree; ours is a sorted vector behind a reader-writer
//! lock, which is enough for the few hundred records a buffer holds before it is merged. Values
//! sit in shared [`ValueCell`]s so that a compaction's new array can forward to them.
//!
//! A buffer is *frozen* when a compaction starts merging it: from then on no record is added or
//! revived in it (an insert fails with [`Inserted::Frozen`] and goes elsewhere), while live
//! records may still be updated or removed in place until phase 2 seals them.

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use super::cell::{Op, Outcome, ValueCell};
use crate::key::Key;

/// What an insert into a buffer did.
pub(crate) enum Inserted<V> {
    /// The buffer is frozen: nothing changed.
    Frozen,
    /// Stored; `previous` is the value it replaced, `len` the buffer's records afterwards.
    Done { previous: Option<V>, len: usize },
}

struct Records<K, V> {
    keys: Vec<K>,
    cells: Vec<Arc<ValueCell<V>>>,
    frozen: bool,
}

/// A sorted buffer of records. See the module docs.
pub(crate) struct DeltaBuffer<K, V> {
    records: RwLock<Records<K, V>>,
}

impl<K: Key, V: Copy> DeltaBuffer<K, V> {
    pub(crate) fn new() -> Self {
        DeltaBuffer {
            records: RwLock::new(Records {
                keys: Vec::new(),
                cells: Vec::new(),
                frozen: false,
            }),
        }
    }

    /// Records held, removed ones included.
    pub(crate) fn len(&self) -> usize {
        self.records.read().keys.len()
    }

    fn position(keys: &[K], key: &K) -> Result<usize, usize> {
        keys.binary_search_by(|k| k.key_cmp(key))
    }

    /// The live value of `key`.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let records = self.records.read();
        let pos = Self::position(&records.keys, key).ok()?;
        records.cells[pos].read().live()
    }

    /// Applies `op` to `key`'s record if the buffer holds one; never adds a record.
    pub(crate) fn write_existing(&self, key: &K, op: Op<V>) -> Outcome<V> {
        let records = self.records.read();
        match Self::position(&records.keys, key) {
            Ok(pos) => records.cells[pos].write(op, |_| Outcome::Retry),
            Err(_) => Outcome::Absent,
        }
    }

    /// Stores `value` under `key`: an update of a live record, a revival of a removed one, or a
    /// new record.
    pub(crate) fn insert(&self, key: K, value: V) -> Inserted<V> {
        let mut records = self.records.write();
        if records.frozen {
            return Inserted::Frozen;
        }
        let previous = match Self::position(&records.keys, &key) {
            Ok(pos) => {
                let cell = &records.cells[pos];
                match cell.write(Op::Put(value), |_| Outcome::Retry) {
                    Outcome::Replaced(old) => Some(old),
                    // Removed: no compaction has skipped it yet (the buffer is not frozen).
                    Outcome::Absent | Outcome::Retry => {
                        cell.revive(value);
                        None
                    }
                }
            }
            Err(pos) => {
                records.keys.insert(pos, key);
                records.cells.insert(pos, Arc::new(ValueCell::live(value)));
                None
            }
        };
        Inserted::Done {
            previous,
            len: records.keys.len(),
        }
    }

    /// Stops all additions; see the module docs.
    pub(crate) fn freeze(&self) {
        self.records.write().frozen = true;
    }

    /// The live records with their cells and values, in key order (what a compaction merges).
    pub(crate) fn live_records(&self) -> Vec<(K, Arc<ValueCell<V>>, V)> {
        let records = self.records.read();
        records
            .keys
            .iter()
            .zip(&records.cells)
            .filter_map(|(k, c)| c.read().live().map(|v| (*k, Arc::clone(c), v)))
            .collect()
    }

    /// Calls `f` on the records with keys in `[from, to)` (live or not) in key order until it
    /// returns false; under the read lock.
    pub(crate) fn visit(
        &self,
        from: Bound<&K>,
        to: Option<&K>,
        mut f: impl FnMut(&K, &ValueCell<V>) -> bool,
    ) {
        let records = self.records.read();
        let start = match from {
            Bound::Included(k) => Self::position(&records.keys, k).unwrap_or_else(|p| p),
            Bound::Excluded(k) => Self::position(&records.keys, k).map_or_else(|p| p, |p| p + 1),
            Bound::Unbounded => 0,
        };
        for (k, cell) in records.keys[start..].iter().zip(&records.cells[start..]) {
            if to.is_some_and(|to| !k.key_lt(to)) || !f(k, cell) {
                break;
            }
        }
    }

    /// Bytes held: keys, cells and their pointers.
    pub(crate) fn size_in_bytes(&self) -> usize {
        let records = self.records.read();
        std::mem::size_of::<Self>()
            + records.keys.capacity() * K::SIZE
            + records.cells.capacity() * std::mem::size_of::<Arc<ValueCell<V>>>()
            + records.cells.len() * (std::mem::size_of::<ValueCell<V>>() + 16)
    }
}
