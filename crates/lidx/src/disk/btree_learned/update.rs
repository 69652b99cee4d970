//! Writes: insert (with leaf splits), delete, the retrain, flush, and crash recovery.
//!
//! **Insert** (paper 003 Table 2 charges a B+-tree insert `2 log_B N` blocks; §6.2 with inner
//! nodes in memory, one leaf read and one leaf write): the route is computed in memory, the
//! leaf read (1 block) and written back (1 block) when it has room. A full leaf splits in two
//! halves as the B+-tree's do (`crate::disk::btree::node`'s leaf codec); the right half goes
//! to a new block (the lowest free one, else appended) and its first key, slot and block go
//! into the in-memory *split list*; the model is not touched. That is the whole SMO: two leaf
//! writes and no inner node (the B+-tree writes the parent too, and splits it in turn now and
//! then). Paper 003 §7.2 P2 asks for exactly this: rare SMOs touching little.
//!
//! **Retrain** (maintenance, Fig. 6's fourth part): when the split list holds more than
//! `retrain_ratio` times the model's slots, the next split reads every entry along the leaf
//! chain (one read per leaf), learns the model again, writes the entries cut by it as a new run
//! of leaves at the end of the file (sequential requests), flushes, and frees the old leaves'
//! blocks. It holds the entries in memory meanwhile (key and payload each). With the default
//! ratio 1 a retrain comes after as many splits as the model had slots, so it costs about two
//! blocks (one read, one write) per split, amortized; a larger ratio trades split-list memory
//! for fewer retrains.
//!
//! **Delete** removes the entry from its leaf and writes it: one block. Leaves are never merged
//! (paper 003's indexes have no deletes, §5.2): an emptied leaf keeps its slot and takes the
//! inserts the model routes there, and stays on the scan chain (read, found empty).
//!
//! **What survives a crash.** Like every paper 003 structure there is no log. Leaf writes go to
//! the device at once; the header, the meta chain (model, directory, split list) and the free
//! list are written by [`BTreeLearned::flush`] only, which syncs, writes the header marked
//! *clean* and syncs again. The first write after a flush first rewrites the header marked
//! *written* and syncs (one header write per flush interval). Opening a file marked written
//! ignores its meta chain and free list and recovers from the leaves: it walks the sibling chain
//! from the first leaf (one read per leaf), fits a model to the leaves as they are (each its own
//! slot, [`super::model::LeafModel::learn_ranges`] with the file's `eps`: no entry moves, the
//! leaves are as full as the writes left them until the next retrain), counts the entries, and takes every block not on
//! the chain as free. A retrain writes its new leaves only to blocks the old chain does not
//! use, and the header names the new first leaf only from its flush on. The chain is always a true picture, because a
//! split writes the new right half (linking to the old right sibling) before the left half that
//! links to it: a crash between the two leaves the old, full left leaf on the chain with every
//! entry, and the right block unreferenced (free after recovery). So after a crash every leaf
//! write that reached the device is there, nothing flushed is lost, and a torn leaf write is a
//! [`Error::ChecksumMismatch`] naming the block. A crash inside a flush leaves either the old
//! header (marked written: recovery) or the new one, whose chain was synced before it.

use crate::disk::btree::free::{FreeLayout, FreeList};
use crate::disk::btree::node::{encode_leaf, leaf_insert, leaf_payload_mut, leaf_remove};
use crate::disk::{DiskIndex, DiskMap, PhaseClock, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, IoClass};
use crate::key::Key;

use super::index::{corrupt, write_cut, BTreeLearned, LeafInfo, Route};
use super::meta::{bytes_per_block, encode_meta, write_chain, Directory, Meta, SplitLeaf};
use super::model::{eps_units, LeafModel};

/// The model fitted to `leaves` as they are, each its own slot, with its directory and an
/// empty split list (crash recovery).
pub(super) fn relearn<K: Key>(
    leaves: &[LeafInfo<K>],
    file: &str,
    eps_units: u64,
) -> Result<Meta<K>> {
    let mut blocks = Vec::with_capacity(leaves.len());
    for l in leaves {
        blocks.push(u32::try_from(l.block).map_err(|_| {
            corrupt(
                file,
                l.block,
                "a leaf block past 2^32 blocks: the directory holds u32 ids",
            )
        })?);
    }
    let run = blocks.windows(2).all(|w| w[1] == w[0].wrapping_add(1));
    let directory = match (run, blocks.first()) {
        (true, Some(&first)) => Directory::Run {
            first: u64::from(first),
        },
        _ => Directory::Blocks(blocks),
    };
    let ranges = leaves
        .iter()
        .enumerate()
        .filter_map(|(j, l)| l.range.map(|(a, b)| (j as u64, a, b)));
    Ok(Meta {
        model: LeafModel::learn_ranges(leaves.len() as u64, ranges, eps_units),
        directory,
        splits: Vec::new(),
    })
}

impl<K: Key> BTreeLearned<K> {
    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    fn write_block(&self, block: u64, buf: &mut AlignedBuf) -> Result<()> {
        self.device.write_blocks(block, buf, IoClass::Leaf)
    }

    fn write_header(&mut self) -> Result<()> {
        let mut buf = self.block_buf();
        self.header.encode(&mut buf[..self.layout.usable]);
        self.device.write_blocks(0, &mut buf, IoClass::Header)?;
        self.device.sync()
    }

    /// Marks the header written-since-flush before the first write after a flush (see the
    /// module docs).
    fn begin_write(&mut self) -> Result<()> {
        if self.header.clean {
            self.header.clean = false;
            self.write_header()?;
        }
        Ok(())
    }

    /// A block for a new leaf or meta block: the lowest free one, else one appended.
    fn allocate(&mut self) -> Result<u64> {
        if let Some(b) = self.free.take() {
            return Ok(b);
        }
        let block = self.header.blocks;
        if block > u64::from(u32::MAX) {
            return Err(Error::InvalidParameter {
                name: "file size",
                value: format!("{block} blocks"),
                expected: "at most 2^32 blocks (the directory holds u32 block ids)",
            });
        }
        self.header.blocks += 1;
        Ok(block)
    }

    fn check_entry(&self, key: &K, payload: &[u8]) -> Result<()> {
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        if payload.len() != self.layout.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly payload_size() bytes",
            });
        }
        Ok(())
    }

    /// Inserts `key` with `payload` (exactly `payload_size()` bytes). Returns true when the
    /// key was present and its payload replaced. See the module docs for the blocks it
    /// reads and writes.
    pub fn insert(&mut self, key: K, payload: &[u8]) -> Result<bool> {
        self.check_writable("insert")?;
        self.check_entry(&key, payload)?;
        let mut clock = PhaseClock::start();
        self.begin_write()?;
        let mut buf = self.block_buf();
        let route = self.read_leaf(&key, &mut buf)?;
        let (count, found, sibling) = {
            let leaf = self.leaf(&buf, &route)?;
            (leaf.len(), leaf.find(&key), leaf.sibling())
        };
        self.breakdown.search_ns += clock.lap();
        let layout = self.layout;
        match found {
            Ok(i) => {
                leaf_payload_mut(&mut buf, &layout, i).copy_from_slice(payload);
                self.write_block(route.block, &mut buf)?;
                self.breakdown.insert_ns += clock.lap();
                Ok(true)
            }
            Err(pos) if count < layout.leaf_cap => {
                leaf_insert(&mut buf, &layout, count, pos, &key, payload);
                self.write_block(route.block, &mut buf)?;
                self.header.entries += 1;
                self.breakdown.insert_ns += clock.lap();
                Ok(false)
            }
            Err(pos) => {
                self.split(&route, &mut buf, pos, key, payload, sibling)?;
                self.header.entries += 1;
                self.breakdown.smo_ns += clock.lap();
                let limit = self.header.retrain_ratio * self.meta.model.slots as f64;
                if self.meta.splits.len() as f64 > limit {
                    self.retrain()?;
                    self.breakdown.maintenance_ns += clock.lap();
                }
                Ok(false)
            }
        }
    }

    /// Splits the full leaf in `buf` while inserting the entry at `pos` (module docs).
    fn split(
        &mut self,
        route: &Route<K>,
        buf: &mut AlignedBuf,
        pos: usize,
        key: K,
        payload: &[u8],
        sibling: Option<u64>,
    ) -> Result<()> {
        let layout = self.layout;
        let ps = layout.payload_size;
        let (mut keys, mut payloads) = {
            let leaf = self.leaf(buf, route)?;
            let keys: Vec<K> = (0..leaf.len()).map(|i| leaf.key(i)).collect();
            let payloads: Vec<u8> = (0..leaf.len())
                .flat_map(|i| leaf.payload(i).iter().copied())
                .collect();
            (keys, payloads)
        };
        keys.insert(pos, key);
        payloads.splice(pos * ps..pos * ps, payload.iter().copied());
        let left = keys.len().div_ceil(2);
        let right_block = self.allocate()?;
        let mut right = self.block_buf();
        encode_leaf(
            &mut right,
            &layout,
            &keys[left..],
            &payloads[left * ps..],
            sibling,
        );
        self.write_block(right_block, &mut right)?;
        encode_leaf(
            buf,
            &layout,
            &keys[..left],
            &payloads[..left * ps],
            Some(right_block),
        );
        self.write_block(route.block, buf)?;
        let sep = keys[left];
        let at = self.meta.splits.partition_point(|d| d.key.key_lt(&sep));
        self.meta.splits.insert(
            at,
            SplitLeaf {
                key: sep,
                slot: route.slot as u32,
                block: right_block as u32,
            },
        );
        self.header.leaves += 1;
        Ok(())
    }

    /// Reads every entry along the leaf chain, learns the model again over them, and writes
    /// them cut by it as a new run of leaves at the end of the file; then flushes, and the old
    /// leaves' blocks are free (module docs).
    pub fn retrain(&mut self) -> Result<()> {
        self.check_writable("retrain")?;
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        DiskIndex::scan(self, &K::MIN, usize::MAX, &mut keys, &mut payloads)?;
        if keys.len() as u64 != self.header.entries {
            return Err(corrupt(
                self.file(),
                self.header.first_leaf,
                format!(
                    "the leaf chain holds {} entries, the index {}",
                    keys.len(),
                    self.header.entries
                ),
            ));
        }
        let old: Vec<u64> = (0..self.meta.model.slots)
            .map(|s| self.meta.directory.block(s))
            .chain(self.meta.splits.iter().map(|d| u64::from(d.block)))
            .collect();
        let params = self.params();
        let target = params.leaf_target(self.layout.leaf_cap)?;
        let ps = self.layout.payload_size;
        let first = self.header.blocks;
        let (meta, leaves) = write_cut(
            self.device.as_ref(),
            &self.layout,
            &keys,
            &mut |i, _, out| out.copy_from_slice(&payloads[i * ps..(i + 1) * ps]),
            params.eps,
            target,
            first,
        )?;
        self.header.blocks = first + leaves;
        self.header.leaves = leaves;
        self.header.slots = meta.model.slots;
        self.header.first_leaf = first;
        self.meta = meta;
        self.flush()?;
        old.into_iter().for_each(|b| self.free.give(b));
        self.retrains += 1;
        Ok(())
    }

    /// Recovers a file whose header says it was written since its last flush: walks the leaf
    /// chain, learns the model, counts the entries, frees every other block, and (when
    /// writable) flushes (module docs).
    pub(super) fn recover(&mut self) -> Result<()> {
        let blocks = self.device.len_blocks();
        let leaves = self.walk_leaves(blocks)?;
        let params = self.params();
        let target = params.leaf_target(self.layout.leaf_cap)?;
        self.meta = relearn(&leaves, self.file(), eps_units(params.eps, target))?;
        self.header.blocks = blocks;
        self.header.leaves = leaves.len() as u64;
        self.header.slots = self.header.leaves;
        self.header.entries = leaves.iter().map(|l| l.count as u64).sum();
        let mut on_chain: Vec<u64> = leaves.iter().map(|l| l.block).collect();
        on_chain.sort_unstable();
        self.free = FreeList::default();
        for b in 1..blocks {
            if on_chain.binary_search(&b).is_err() {
                self.free.give(b);
            }
        }
        self.meta_chain = Vec::new();
        self.flush()
    }

    /// Removes `key`; returns true when it was present. One leaf read, one leaf write.
    pub fn delete(&mut self, key: &K) -> Result<bool> {
        self.check_writable("delete")?;
        let mut clock = PhaseClock::start();
        self.begin_write()?;
        let mut buf = self.block_buf();
        let route = self.read_leaf(key, &mut buf)?;
        let (count, found) = {
            let leaf = self.leaf(&buf, &route)?;
            (leaf.len(), leaf.find(key))
        };
        self.breakdown.search_ns += clock.lap();
        let Ok(pos) = found else { return Ok(false) };
        leaf_remove(&mut buf, &self.layout, count, pos);
        self.write_block(route.block, &mut buf)?;
        self.header.entries -= 1;
        self.breakdown.insert_ns += clock.lap();
        Ok(true)
    }

    /// Writes the meta chain to fresh blocks and the free list, syncs, writes the header marked
    /// clean and syncs again; then the previous chain's blocks are free. After it returns the
    /// file opens as the index is now, without reading a leaf. A no-op when read-only.
    pub fn flush(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        let stream = encode_meta(&self.meta);
        let usable = self.layout.usable;
        let n = stream.len().div_ceil(bytes_per_block(usable)).max(1);
        let chain = (0..n)
            .map(|_| self.allocate())
            .collect::<Result<Vec<u64>>>()?;
        write_chain(self.device.as_ref(), usable, &chain, &stream)?;
        self.header.free_head = self
            .free
            .store(self.device.as_ref(), &FreeLayout { usable })?;
        self.header.free_blocks = self.free.len();
        self.device.sync()?;
        self.header.meta_head = chain[0];
        self.header.meta_blocks = n as u64;
        self.header.meta_bytes = stream.len() as u64;
        self.header.clean = true;
        self.write_header()?;
        for b in std::mem::replace(&mut self.meta_chain, chain) {
            self.free.give(b);
        }
        Ok(())
    }
}

impl<K: Key> DiskMap<K> for BTreeLearned<K> {
    fn insert(&mut self, key: K, payload: &[u8]) -> Result<bool> {
        BTreeLearned::insert(self, key, payload)
    }

    fn delete(&mut self, key: &K) -> Result<bool> {
        BTreeLearned::delete(self, key)
    }

    fn flush(&mut self) -> Result<()> {
        BTreeLearned::flush(self)
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.breakdown
    }
}

impl<K: Key> Drop for BTreeLearned<K> {
    /// Flushes what changed since the last flush; an error here cannot be returned, and the
    /// next open recovers from the leaves instead.
    fn drop(&mut self) {
        if self.writable && !self.header.clean {
            let _ = self.flush();
        }
    }
}
