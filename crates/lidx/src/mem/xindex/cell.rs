//! [`ValueCell`]: one record's value, updated in place under a per-record lock and read without
//! one (XIndex §4.1, "records are updated in place"; the paper's version word and lock bit).
//!
//! A cell is live, removed, forwarded or sealed. Removal only marks the cell (a removed key is
//! dropped at the next compaction and never revived in place: an insert of that key goes to the
//! delta buffer instead, so a compaction that skipped the removed record cannot lose it).
//!
//! Forwarded and sealed carry the two-phase compaction (XIndex §4.2). A compaction builds the
//! new array from the records live at that moment, and each new record *forwards* to the old
//! cell it came from, so writers that still use the old group and writers that use the new one
//! update the same cell. Phase 2 then settles each new record: under its lock it takes the old
//! cell's final value and *seals* the old cell. A writer that finds a sealed cell retries from
//! the root and lands on the new array.
//!
//! What we do differently: the paper waits for an RCU grace period after the switch before it
//! copies the values back; we seal the old cells instead, so no writer is ever waited for and no
//! thread registration is needed. Readers never retry: a sealed cell keeps its final value.

use std::sync::atomic::{AtomicU8, Ordering};

use crossbeam_utils::atomic::AtomicCell;
use parking_lot::Mutex;

const LIVE: u8 = 0;
const REMOVED: u8 = 1;
const FORWARDED: u8 = 2;
const SEALED: u8 = 4;

/// A write to one record.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<V> {
    /// Store the value (an insert or an update).
    Put(V),
    /// Remove the record.
    Remove,
}

/// What a write found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome<V> {
    /// The record was live with this value; the write was applied.
    Replaced(V),
    /// The record is removed; nothing changed.
    Absent,
    /// The record moved to a newer array; retry from the root.
    Retry,
}

/// What a read found.
pub(crate) enum CellRead<V> {
    Live(V),
    Removed,
    Forwarded,
}

impl<V> CellRead<V> {
    /// The value when live (a forwarded cell is resolved by its array before this is asked).
    pub(crate) fn live(self) -> Option<V> {
        match self {
            CellRead::Live(v) => Some(v),
            CellRead::Removed | CellRead::Forwarded => None,
        }
    }
}

/// One record's value with its state and writer lock.
pub(crate) struct ValueCell<V> {
    state: AtomicU8,
    lock: Mutex<()>,
    value: AtomicCell<V>,
}

impl<V: Copy> ValueCell<V> {
    pub(crate) fn live(value: V) -> Self {
        ValueCell {
            state: AtomicU8::new(LIVE),
            lock: Mutex::new(()),
            value: AtomicCell::new(value),
        }
    }

    /// A cell whose value lives in an older cell until [`ValueCell::settle`]; `value` is the
    /// value seen when the compaction copied the record.
    pub(crate) fn forwarded(value: V) -> Self {
        ValueCell {
            state: AtomicU8::new(FORWARDED),
            lock: Mutex::new(()),
            value: AtomicCell::new(value),
        }
    }

    /// The value, without taking the lock.
    #[inline]
    pub(crate) fn read(&self) -> CellRead<V> {
        let state = self.state.load(Ordering::Acquire);
        if state & FORWARDED != 0 {
            CellRead::Forwarded
        } else if state & REMOVED != 0 {
            CellRead::Removed
        } else {
            CellRead::Live(self.value.load())
        }
    }

    /// True when the cell is live and not forwarded.
    pub(crate) fn is_live(&self) -> bool {
        self.state.load(Ordering::Acquire) & (REMOVED | FORWARDED) == 0
    }

    /// Applies `op` under the cell's lock; a forwarded cell hands `op` to `forward`, still
    /// under this lock, so that phase 2 cannot settle the cell in between.
    pub(crate) fn write(&self, op: Op<V>, forward: impl FnOnce(Op<V>) -> Outcome<V>) -> Outcome<V> {
        let _guard = self.lock.lock();
        let state = self.state.load(Ordering::Acquire);
        if state & SEALED != 0 {
            return Outcome::Retry;
        }
        if state & FORWARDED != 0 {
            return forward(op);
        }
        if state & REMOVED != 0 {
            return Outcome::Absent;
        }
        match op {
            Op::Put(v) => Outcome::Replaced(self.value.swap(v)),
            Op::Remove => {
                self.state.store(REMOVED, Ordering::Release);
                Outcome::Replaced(self.value.load())
            }
        }
    }

    /// Makes a removed cell live again with `value` (only for cells of a buffer that is not
    /// frozen, whose removed records no compaction has skipped yet). False when not removed.
    pub(crate) fn revive(&self, value: V) -> bool {
        let _guard = self.lock.lock();
        if self.state.load(Ordering::Acquire) != REMOVED {
            return false;
        }
        self.value.store(value);
        self.state.store(LIVE, Ordering::Release);
        true
    }

    /// Seals the cell (writers retry elsewhere from now on) and returns its final value.
    fn seal(&self) -> Option<V> {
        let _guard = self.lock.lock();
        let state = self.state.load(Ordering::Acquire);
        self.state.store(state | SEALED, Ordering::Release);
        (state & REMOVED == 0).then(|| self.value.load())
    }

    /// Phase 2 of a compaction for this record: takes the final value of `source` (the cell it
    /// forwards to) and seals `source`, both under this cell's lock.
    pub(crate) fn settle(&self, source: &ValueCell<V>) {
        let _guard = self.lock.lock();
        if self.state.load(Ordering::Acquire) & FORWARDED == 0 {
            return;
        }
        match source.seal() {
            Some(v) => {
                self.value.store(v);
                self.state.store(LIVE, Ordering::Release);
            }
            None => self.state.store(REMOVED, Ordering::Release),
        }
    }

    /// The value's address, for the single-threaded view (`map.rs`) that hands out references.
    pub(crate) fn value_ptr(&self) -> *const V {
        self.value.as_ptr()
    }
}
