//! The learned-inner B+-tree: B+-tree leaves on disk, a learned model over them as the inner
//! part, in memory — paper 003's "hybrid design" (§6.1.2, Table 5) made updatable, built on its
//! four design principles (§7.2).
//!
//! Paper 003 finds the B+-tree winning most on-disk workloads (O7, O9, O15) and attributes it to
//! the learned indexes' layouts (§7.1: S1 model and slot in different blocks, S2 search windows
//! across blocks, S3 bitmaps and statistics, S4 costly SMOs). Table 5 tries keeping B+-tree
//! leaves contiguous with a learned index over their maximum keys: scans get cheap, lookups on
//! easy data too, but its lookups still search the learned index's error window. §6.2 then
//! shows that with the inner nodes in memory every index reads about one leaf per lookup, so
//! what is left to win is memory and write cost. Our design, principle by principle:
//!
//! * **P1, lower height** — the inner part is not a tree on disk at all: a model in memory maps
//!   a key to its leaf *exactly*, with no window on disk ([`model`]: a PLA over the leaves'
//!   first keys plus a 4-byte correction per leaf boundary, searched in memory), and a lookup
//!   reads one block, the leaf (0 inner blocks in Table 4's split), like the B+-tree with every
//!   inner node resident, but in about 4 bytes per leaf (and 32 per segment, a segment per many
//!   leaves at the default `eps`) instead of the inner nodes' 16.
//! * **P2, cheaper structures / light SMOs** — a split writes the two halves and records the new
//!   leaf in a small sorted *split list* in memory (first key, slot, block: 16 bytes with `u64`
//!   keys); no inner node is written, the model is untouched. A lookup routes by the model, then
//!   takes the last split leaf of the same slot at or below the key. When the list outgrows
//!   `retrain_ratio` times the model's slots, a *retrain* reads every leaf once, learns the model
//!   again and rewrites the leaves cut by it (maintenance, Fig. 6): the only costly operation,
//!   sequential, amortized over as many splits.
//! * **P3, efficient scans** — entries are stored contiguously in B+-tree leaves linked to their
//!   right siblings; a scan of `z` entries reads `1 + z/B` leaves as the B+-tree's.
//! * **P4, storage layout** — the model lives in the parent (memory), never in a node header, so
//!   no block is read for a model (S1); the bulk load writes the leaves as one run of blocks.
//!
//! The trade against the B+-tree with inner nodes in memory ([`crate::disk::Resident`]):
//! the same blocks per lookup, the same full leaves after a bulk load (they are cut by count),
//! fewer blocks written per split (2 against 3 or more), a quarter of the memory; in exchange
//! the retrain's I/O (about two blocks per split with the default ratio) and the split list's
//! memory between retrains. Deletes never merge leaves (module [`update`]). An earlier version
//! cut the leaves by the model (a leaf held the keys predicted in `[jC, (j+1)C)`, no
//! corrections): no memory per leaf, but leaves only `1 - (2 eps + 1) / capacity` full (87% at
//! `eps = 16`), so fresh scans read 4% more leaves than the B+-tree's.
//!
//! Layout: block 0 is the header ([`header`]); leaves are the disk B+-tree's own leaf blocks
//! ([`crate::disk::btree::node`], also its bulk-load code and free list); the model, the
//! slot-to-block directory and the split list are persisted by each flush in a chain of meta
//! blocks ([`meta`]), so a reopen reads no leaf. Reads and scans: `index.rs`; writes, the
//! retrain, flush and what survives a crash: [`update`].
pub(crate) mod header;
mod index;
pub(crate) mod meta;
pub(crate) mod model;
mod params;
pub(crate) mod update;
pub use header::decode_header;
pub use index::BTreeLearned;
pub use meta::{decode_meta, decode_meta_block};
pub use params::BTreeLearnedParams;
