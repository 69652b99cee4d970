//! The FITing-tree on disk (paper 003 §2.1, §3, §4.2, §4.3 Table 2): segments of error `eps`
//! with a delta buffer each, under a B+-tree.
//!
//! What the paper says and what we build:
//!
//! * **Segments** are cut by the streaming optimal PLA ([`crate::model::opt_pla`]), as paper
//!   003 §4.2 replaces the FITing-tree's greedy segmentation, with error `eps` (default 64,
//!   §5.3). Each segment's model is re-based to predict ranks from 0 within the segment, as the
//!   in-memory FITing-tree ([`crate::mem::fiting_tree`]) does.
//! * **Delta Insert Strategy** (§2.1, §4.2): every segment has a sorted delta buffer of
//!   `buffer` records (default 256, §5.3) on disk right after its meta block; a new key goes
//!   into it, rewriting the meta block (its count) and the buffer blocks in one request. A full
//!   buffer triggers a **resegmentation**: the segment's live data, its buffer and the new key
//!   are cut into new segments appended to the file, the inner tree is updated, and the
//!   neighbours' sibling links are turned to the new segments. A key already in the data is
//!   updated in its data block; a delete puts a tombstone in the data record's flag (dropped by
//!   the next resegmentation) or removes the key from the buffer. Paper 003 has no deletes; the
//!   tombstones follow the in-memory FITing-tree's `Buffer` strategy.
//! * **The extra buffer** (§4.2): keys below the smallest routing key go to one more buffer
//!   whose meta block the header records; when it is full it is cut into segments that join the
//!   index on the left.
//! * **Sibling metadata** (§4.2): each segment's first block records its left and right
//!   siblings and their record counts, so a scan goes from segment to segment as a B+-tree goes
//!   from leaf to leaf.
//! * **The inner part** is a disk B+-tree ([`crate::disk::btree`], reused whole: its nodes,
//!   splits, resident levels and crash rules) over the segments' routing keys, bit-inverted so
//!   that its `lower_bound` finds the segment with the largest routing key at or below a key;
//!   its payloads hold each segment's block, count and model, so the model is read with the
//!   parent, not from the segment (paper 003 S1). Its leaves are counted as inner blocks
//!   ([`crate::disk::DiskBTree::set_leaf_class`]): everything above the segments is
//!   Inner, segments (meta, buffer, data) are Leaf, as Table 4 splits them. Where it lives is
//!   chosen at open: [`crate::disk::Resident::None`] reads it from disk (§6.1);
//!   anything else (the default) holds its entries decoded in a sorted array in memory (§6.2,
//!   48 bytes a segment, filled by one scan of the tree's leaves at open), searched by binary
//!   search, and writes every change through to the tree file.
//!
//! Costs (Table 2, `P` segments, `B` records a block): a lookup reads the inner tree's levels
//! not in memory (`log_B P`), then the data blocks of the model's window (`2 eps / B`, one
//! request), and only when the data do not hold the key, the meta block and the used buffer
//! blocks. The inverted keys cost one more inner leaf read when the wanted entry is the first of
//! the next inner leaf (about one lookup in the leaf fanout, 84 with 4 KiB blocks). An insert
//! reads what a lookup reads and writes 2 blocks (meta and buffer) or 1 (an update in the
//! data); a resegmentation reads the segment's `M / B` data blocks and writes the new segments
//! (`2 M / B` in all) plus the inner tree's path.
//!
//! **What survives a crash.** Paper 003's structures have no log, and neither has this one.
//! Every segment write goes to the device at once; the header (entries, segment count, file
//! length) and the inner tree's header are written by [`DiskMap::flush`](crate::disk::DiskMap::flush).
//! A resegmentation never overwrites the segment it replaces: it (1) appends the new segments,
//! (2) updates the inner tree (the first new segment's entry replaces the old one's, the others
//! are inserted, each a B+-tree insert with the disk B+-tree's crash rules), (3) rewrites the
//! left neighbour's meta block, then (4) the right neighbour's. A crash after (1) leaves the
//! new segments unreferenced (past the header's block count, leaked); during (2), lookups find
//! each key in the old segment or a new one, both intact, except the key being inserted; during
//! (3)-(4), a scan may follow the old segment's chain, which is the index before the
//! resegmentation. Entries counted since the last flush are stale in the header (the count is
//! not recomputed at open). An emptied extra buffer's meta block is written last, so its keys
//! are never in neither place. No flushed write is lost silently; any damaged block is a
//! checksum error naming file and block.
//!
//! Differences from the paper: paper 003 keeps the inner part in memory in an STX B+-tree
//! (§6.2); ours is the disk B+-tree's resident levels, one file for both settings. Dead
//! segments are never reused (as in §6.3); [`crate::disk::DiskIndex::storage_bytes`] counts
//! them as neither used nor free.
pub(crate) mod format;
mod index;
mod params;

pub use index::DiskFiting;
pub use params::DiskFitingParams;
