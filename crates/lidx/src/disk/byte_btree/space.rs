//! Free space of the page file: which blocks a write may take, and when a block a write
//! replaced may be taken again.
//!
//! Pages are copied on write, so a replaced block is not free at once. It is still part of
//! the last checkpoint's tree (which recovery starts from) unless it was written after that
//! checkpoint, and it may still be read by a snapshot or cursor older than the write that
//! replaced it. So a retired block waits until both no longer hold: blocks written since the
//! checkpoint wait for the snapshots only, older blocks also for the next checkpoint.

use std::collections::{BTreeMap, HashSet, VecDeque};

use crate::disk::seq::Seq;

/// The page file's free extents and retired blocks.
#[derive(Debug, Default)]
pub(crate) struct Space {
    /// Free extents: first block to length.
    free: BTreeMap<u64, u64>,
    /// Blocks in the file (the next block past the end).
    end: u64,
    /// First blocks of the runs taken since the last checkpoint.
    fresh: HashSet<u64>,
    /// Retired runs written since the checkpoint: (retired at, first, blocks).
    retired_fresh: VecDeque<(Seq, u64, u64)>,
    /// Retired runs of the checkpoint's tree.
    retired_old: VecDeque<(Seq, u64, u64)>,
    /// The last checkpoint's sequence number.
    checkpoint: Seq,
}

impl Space {
    /// Space of a file of `end` blocks whose free extents are `free`, checkpointed at
    /// `checkpoint`.
    pub(crate) fn new(
        end: u64,
        free: impl IntoIterator<Item = (u64, u64)>,
        checkpoint: Seq,
    ) -> Space {
        let mut s = Space {
            end,
            checkpoint,
            ..Space::default()
        };
        for (first, len) in free {
            s.release(first, len);
        }
        s
    }

    /// Blocks in the file.
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// Takes a run of `len` blocks: the first free extent long enough, or the end of the file.
    pub(crate) fn allocate(&mut self, len: u64) -> u64 {
        let found = self
            .free
            .iter()
            .find(|(_, &l)| l >= len)
            .map(|(&f, &l)| (f, l));
        let first = match found {
            Some((f, l)) => {
                self.free.remove(&f);
                if l > len {
                    self.free.insert(f + len, l - len);
                }
                f
            }
            None => {
                let f = self.end;
                self.end += len;
                f
            }
        };
        self.fresh.insert(first);
        first
    }

    /// Retires the run at `first` of `len` blocks, replaced by the write of `seq`.
    pub(crate) fn retire(&mut self, first: u64, len: u64, seq: Seq) {
        if self.fresh.remove(&first) {
            self.retired_fresh.push_back((seq, first, len));
        } else {
            self.retired_old.push_back((seq, first, len));
        }
    }

    /// Frees the retired runs no reader needs: those retired at or before `readers` (the
    /// oldest snapshot's sequence number, or the last write's when there is none), and for
    /// runs of the checkpoint's tree, at or before the last checkpoint too.
    pub(crate) fn reclaim(&mut self, readers: Seq) {
        while let Some(&(seq, first, len)) = self.retired_fresh.front() {
            if seq > readers {
                break;
            }
            self.retired_fresh.pop_front();
            self.release(first, len);
        }
        let limit = readers.min(self.checkpoint);
        while let Some(&(seq, first, len)) = self.retired_old.front() {
            if seq > limit {
                break;
            }
            self.retired_old.pop_front();
            self.release(first, len);
        }
    }

    /// A checkpoint at `seq` committed: every block now in the tree belongs to it.
    pub(crate) fn checkpointed(&mut self, seq: Seq) {
        self.checkpoint = seq;
        self.fresh.clear();
        self.retired_old.extend(self.retired_fresh.drain(..));
        let mut all: Vec<_> = self.retired_old.drain(..).collect();
        all.sort_unstable_by_key(|r| r.0);
        self.retired_old.extend(all);
    }

    /// The extents a checkpoint of the tree as it is now records as free: free ones and
    /// every retired run (the tree no longer refers to them, and after a restart no reader
    /// does).
    pub(crate) fn free_for_checkpoint(&self) -> Vec<(u64, u64)> {
        let mut all: Vec<(u64, u64)> = self.free.iter().map(|(&f, &l)| (f, l)).collect();
        all.extend(
            self.retired_fresh
                .iter()
                .chain(&self.retired_old)
                .map(|&(_, f, l)| (f, l)),
        );
        all.sort_unstable();
        all
    }

    /// Free blocks (retired ones not counted).
    pub(crate) fn free_blocks(&self) -> u64 {
        self.free.values().sum()
    }

    /// Adds a run to the free extents, joining its neighbours.
    fn release(&mut self, mut first: u64, mut len: u64) {
        if let Some((&pf, &pl)) = self.free.range(..first).next_back() {
            if pf + pl == first {
                self.free.remove(&pf);
                first = pf;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(first + len)) {
            self.free.remove(&(first + len));
            len += nl;
        }
        self.free.insert(first, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_only_when_no_reader_and_no_checkpoint_needs_them() {
        let mut s = Space::new(10, [(3, 2)], 0);
        assert_eq!(s.allocate(1), 3);
        assert_eq!(s.allocate(2), 10);
        assert_eq!(s.end(), 12);
        // Block 5 belongs to the checkpoint's tree; block 3 was written since.
        s.retire(5, 1, 7);
        s.retire(3, 1, 8);
        s.reclaim(7);
        assert_eq!(s.free_blocks(), 1, "only block 4 is free");
        s.reclaim(8);
        assert_eq!(
            s.free_blocks(),
            2,
            "block 3 was fresh: free once no snapshot needs it"
        );
        s.checkpointed(9);
        s.reclaim(9);
        assert_eq!(s.free_blocks(), 3, "block 5 after the checkpoint");
        assert_eq!(s.free.get(&3), Some(&3), "neighbours join");
    }

    #[test]
    fn a_checkpoint_records_retired_runs_as_free() {
        let mut s = Space::new(4, [], 0);
        let a = s.allocate(2);
        s.retire(1, 1, 3);
        s.retire(a, 2, 4);
        assert_eq!(s.free_for_checkpoint(), vec![(1, 1), (4, 2)]);
    }
}
