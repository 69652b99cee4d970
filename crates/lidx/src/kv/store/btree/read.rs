//! The `btree` engine's reads through a snapshot: a view holds the root of the tree it
//! started from and registers its sequence number, so the blocks it may read are not reused
//! until it is dropped (see `engine`'s module docs).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::disk::byte_btree::{get_in, BTreeCursor, Node, PageIo};
use crate::error::Result;
use crate::kv::store::engine::{EngineRange, EngineSnapshot, Entry, KeyRange};
use crate::kv::wal::Seq;

use super::state::BTreeInner;

/// A `btree` engine's read view: the root of the tree when it was taken, and its sequence
/// number (registered, so the blocks it reads stay).
pub(crate) struct BTreeSnapshot {
    inner: Arc<BTreeInner>,
    io: PageIo,
    root: Arc<Node>,
    seq: Seq,
}

impl BTreeSnapshot {
    /// A view of `inner`'s tree as it is now, registered as a snapshot until dropped.
    pub(crate) fn new(inner: &Arc<BTreeInner>) -> BTreeSnapshot {
        let tree = inner.tree.read();
        let seq = inner.applied.load(Ordering::Acquire);
        inner.readers.retain(seq);
        BTreeSnapshot {
            inner: Arc::clone(inner),
            io: tree.io().clone(),
            root: tree.root(),
            seq,
        }
    }
}

impl EngineSnapshot for BTreeSnapshot {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(&self.io, &self.root, key)
    }

    fn range(&self, bounds: KeyRange, forward: bool) -> Box<dyn EngineRange> {
        self.inner.readers.retain(self.seq);
        let cursor = (!bounds.is_empty()).then(|| {
            BTreeCursor::new(
                self.io.clone(),
                Arc::clone(&self.root),
                bounds.start,
                bounds.end,
                forward,
            )
        });
        Box::new(BTreeRange {
            inner: Arc::clone(&self.inner),
            seq: self.seq,
            cursor,
        })
    }

    fn seq(&self) -> Seq {
        self.seq
    }
}

impl Drop for BTreeSnapshot {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}

/// A range of a `btree` engine's entries, from one snapshot.
pub(crate) struct BTreeRange {
    inner: Arc<BTreeInner>,
    seq: Seq,
    cursor: Option<BTreeCursor>,
}

impl EngineRange for BTreeRange {
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        match &mut self.cursor {
            Some(c) => c.next_record(),
            None => Ok(None),
        }
    }
}

impl Drop for BTreeRange {
    fn drop(&mut self) {
        self.inner.readers.release(self.seq);
    }
}
