//! Bulk load: sorted unique keys to a packed tree, written sequentially in large requests.
//!
//! Paper 003 bulk loads its B+-tree before every workload (§5.2) and measures build time
//! (§6.3, Figure 7). We build bottom-up in one pass: the leaves left to right in blocks
//! `1..=L`, then each inner level after the one below it, the root last, so the whole file is
//! one ascending run of blocks written 256 at a time (1 MiB requests with 4 KiB
//! blocks), then the header in block 0.
//!
//! Entries are spread evenly: with `n` entries and a per-leaf target `t = floor(capacity *
//! fill_factor)` there are `ceil(n / t)` leaves and leaf `j` takes entries `n*j/L .. n*(j+1)/L`,
//! so no leaf is left nearly empty at the end. Inner levels use the same fill factor (at least 2
//! children per node when there is more than one node) and the same even spread. A separator is
//! the first key of the child to its right. The resident levels are filled in memory as they
//! are written, so a build reads nothing back. The cut of each level and the bottom-up loop are
//! [`crate::disk::bptree::pack`], which the byte B+-tree builds its inner nodes with too.

use crate::disk::block_batch::BlockBatch;
use crate::disk::bptree::pack::{build_up, node_starts, Cut};
use crate::disk::WriteBreakdown;
use crate::error::{Error, Result};
use crate::io::{BlockDevice, IoClass, Storage, BLOCK_TRAILER};
use crate::key::{check_strictly_sorted, Key};

use super::free::FreeList;
use super::header::Header;
use super::node::{
    encode_inner, leaf_payload_mut, write_leaf_header, write_leaf_key, NodeLayout, NO_BLOCK,
};
use super::params::DiskBTreeParams;
use super::resident::{ResidentLevels, ResidentNode};
use super::tree::DiskBTree;

/// Writes `keys` as linked leaves in consecutive blocks from the `writer`'s next block, leaf
/// `j` holding entries `starts[j]..starts[j + 1]` (at most the leaf capacity);
/// `payload_of(i, &keys[i], out)` fills each payload. Shared with the learned-inner B+-tree
/// ([`crate::disk::btree_learned`]), whose leaves are these, spread the same way.
pub(crate) fn write_leaves<K: Key>(
    device: &dyn BlockDevice,
    writer: &mut BlockBatch,
    layout: &NodeLayout,
    keys: &[K],
    payload_of: &mut impl FnMut(usize, &K, &mut [u8]),
    starts: &[usize],
) -> Result<()> {
    let first = writer.next_block();
    let leaves = starts.len() - 1;
    for j in 0..leaves {
        let (s, e) = (starts[j], starts[j + 1]);
        let block = writer.block(device)?;
        let sibling = (j + 1 < leaves).then(|| first + j as u64 + 1);
        write_leaf_header(block, e - s, sibling);
        for (slot, i) in (s..e).enumerate() {
            let key = &keys[i];
            write_leaf_key(block, layout, slot, key);
            payload_of(i, key, leaf_payload_mut(block, layout, slot));
        }
    }
    Ok(())
}

impl<K: Key> DiskBTree<K> {
    /// Builds a tree in the file `name` of `storage` (created or truncated) from strictly
    /// ascending `keys`; `payload_of(i, &keys[i], out)` fills entry `i`'s payload
    /// (`out.len() == params.payload_size`). The tree is open for writing afterwards.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidKey`] (NaN),
    /// [`Error::InvalidParameter`] (fill factor outside `(0, 1]`, or a payload so large that a
    /// block holds fewer than 2 entries), and I/O errors of the device.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[K],
        mut payload_of: impl FnMut(usize, &K, &mut [u8]),
        params: DiskBTreeParams,
    ) -> Result<Self> {
        params.check()?;
        check_strictly_sorted(keys)?;
        let block_size = storage.block_size();
        let layout = NodeLayout::new(block_size - BLOCK_TRAILER, K::SIZE, params.payload_size)
            .ok_or_else(|| Error::InvalidParameter {
                name: "payload_size",
                value: format!("{} with {}-byte blocks", params.payload_size, block_size),
                expected: "small enough that a block holds at least 2 entries",
            })?;
        let device = storage.create(name)?;
        let ff = params.fill_factor;
        let leaf_fill = ((layout.leaf_cap as f64 * ff) as usize).clamp(1, layout.leaf_cap);
        let inner_fill = ((layout.inner_cap as f64 * ff) as usize).clamp(2, layout.inner_cap);
        let n = keys.len();
        let mut sizes = vec![n.div_ceil(leaf_fill).max(1)];
        while let Some(&last) = sizes.last().filter(|&&s| s > 1) {
            sizes.push(last.div_ceil(inner_fill));
        }
        let height = sizes.len();
        let first_leaf = 1u64;
        let root = first_leaf + sizes.iter().map(|&s| s as u64).sum::<u64>() - 1;

        let mut writer = BlockBatch::new(device.block_size(), 1, IoClass::Leaf);
        let leaves = sizes[0];
        let starts = node_starts(n, leaf_fill, Cut::Even);
        write_leaves(
            device.as_ref(),
            &mut writer,
            &layout,
            keys,
            &mut payload_of,
            &starts,
        )?;
        let resident_count = params.resident.levels(height as u32);
        let lowest = height as u32 - resident_count;
        let mut arena: Vec<ResidentNode<K>> = Vec::new();
        if height > 1 {
            // Each child of the level being built: its smallest key, its block, and its index
            // in the resident arena when its level is resident.
            let children: Vec<(K, u64, u64)> = (0..leaves)
                .map(|j| (keys[starts[j]], first_leaf + j as u64, 0))
                .collect();
            build_up(1, children, inner_fill, Cut::Even, |level, kids| {
                let block = writer.next_block();
                let separators: Vec<K> = kids[1..].iter().map(|c| c.0).collect();
                let child_blocks = kids.iter().map(|c| c.1);
                encode_inner(
                    writer.block(device.as_ref())?,
                    &layout,
                    level,
                    &separators,
                    child_blocks.clone(),
                );
                if level < lowest {
                    return Ok((kids[0].0, block, 0));
                }
                let children = if level > 1 && level > lowest {
                    kids.iter().map(|c| c.2).collect()
                } else {
                    child_blocks.collect()
                };
                arena.push(ResidentNode {
                    block,
                    level,
                    keys: separators,
                    children,
                });
                Ok((kids[0].0, block, arena.len() as u64 - 1))
            })?;
        }
        writer.flush(device.as_ref())?;
        drop(writer);

        let inners: u64 = sizes[1..].iter().map(|&s| s as u64).sum();
        let header = Header {
            key_name: K::NAME.to_string(),
            key_size: K::SIZE as u32,
            payload_size: params.payload_size as u32,
            block_size: block_size as u32,
            height: height as u32,
            root,
            first_leaf,
            entries: n as u64,
            leaves: leaves as u64,
            inners,
            blocks: 1 + leaves as u64 + inners,
            fill_factor: params.fill_factor,
            free_head: NO_BLOCK,
            free_blocks: 0,
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
        };
        let levels = if arena.is_empty() {
            ResidentLevels::empty()
        } else {
            let root = arena.len() - 1;
            ResidentLevels::from_arena(arena, root, lowest)
        };
        let mut tree = DiskBTree {
            device,
            header,
            layout,
            leaf_class: IoClass::Leaf,
            resident: params.resident,
            levels,
            free: FreeList::default(),
            writable: true,
            dirty: true,
            timing: WriteBreakdown::default(),
        };
        tree.flush()?;
        Ok(tree)
    }
}
