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
//! are written, so a build reads nothing back.

use crate::disk::block_batch::BlockBatch;
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

/// Start of part `j` of `n` items split evenly into `parts`.
pub(crate) fn split_at(n: usize, parts: usize, j: usize) -> usize {
    (n as u128 * j as u128 / parts as u128) as usize
}

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
        let mut first = vec![1u64];
        for l in 1..height {
            first.push(first[l - 1] + sizes[l - 1] as u64);
        }

        let mut writer = BlockBatch::new(device.block_size(), 1, IoClass::Leaf);
        let leaves = sizes[0];
        let starts: Vec<usize> = (0..=leaves).map(|j| split_at(n, leaves, j)).collect();
        write_leaves(
            device.as_ref(),
            &mut writer,
            &layout,
            keys,
            &mut payload_of,
            &starts,
        )?;
        let mut mins: Vec<K> = starts[..leaves]
            .iter()
            .filter(|&&s| s < n)
            .map(|&s| keys[s])
            .collect();

        let resident_count = params.resident.levels(height as u32);
        let lowest = height as u32 - resident_count;
        let mut arena: Vec<ResidentNode<K>> = Vec::new();
        let mut below_base = 0;
        for l in 1..height {
            let (m, count) = (sizes[l - 1], sizes[l]);
            let resident = l as u32 >= lowest;
            let child_resident = l > 1 && (l - 1) as u32 >= lowest;
            let base = arena.len();
            let mut next_mins = Vec::with_capacity(count);
            for j in 0..count {
                let (s, e) = (split_at(m, count, j), split_at(m, count, j + 1));
                let separators = &mins[s + 1..e];
                let child_blocks = (s..e).map(|c| first[l - 1] + c as u64);
                encode_inner(
                    writer.block(device.as_ref())?,
                    &layout,
                    l as u32,
                    separators,
                    child_blocks.clone(),
                );
                next_mins.push(mins[s]);
                if resident {
                    arena.push(ResidentNode {
                        block: first[l] + j as u64,
                        level: l as u32,
                        keys: separators.to_vec(),
                        children: if child_resident {
                            (s..e).map(|c| (below_base + c) as u64).collect()
                        } else {
                            child_blocks.collect()
                        },
                    });
                }
            }
            below_base = base;
            mins = next_mins;
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
            root: first[height - 1],
            first_leaf: first[0],
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
