//! [`Readers`]: the sequence numbers live snapshots and ranges read at, which an engine may
//! not discard yet; every engine registers its readers here.

use std::collections::BTreeMap;

use parking_lot::{Mutex, MutexGuard};

use crate::kv::wal::Seq;

/// The sequence numbers that live snapshots and ranges read at, with how many hold each: what
/// an engine may not discard yet (older versions of a key, retired blocks).
#[derive(Default)]
pub(crate) struct Readers(Mutex<BTreeMap<Seq, usize>>);

impl Readers {
    /// The registry itself, for an engine that registers under a lock of its own order.
    pub(crate) fn lock(&self) -> MutexGuard<'_, BTreeMap<Seq, usize>> {
        self.0.lock()
    }

    /// Registers one more reader at `seq`.
    pub(crate) fn retain(&self, seq: Seq) {
        *self.0.lock().entry(seq).or_insert(0) += 1;
    }

    /// Lets go of a reader [`Readers::retain`] registered.
    pub(crate) fn release(&self, seq: Seq) {
        let mut readers = self.0.lock();
        if let Some(n) = readers.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                readers.remove(&seq);
            }
        }
    }

    /// The oldest sequence number a reader reads at, `last` when none is older.
    pub(crate) fn oldest(&self, last: Seq) -> Seq {
        self.0.lock().keys().next().map_or(last, |&s| s.min(last))
    }
}
