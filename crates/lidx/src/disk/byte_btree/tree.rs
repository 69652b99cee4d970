//! [`ByteBTree`]: open, point lookups, writes (copy-on-write leaves under in-memory inner
//! nodes), checkpoint images, and a full check.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use crate::disk::bptree::{outside, try_lower_bound_by};
use crate::disk::byte_table::shortest_separator;
use crate::disk::owner::FileOwner;
use crate::disk::seq::Seq;
use crate::error::{Error, Result};
use crate::io::scratch;
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};

use super::image::{
    check_pages_header, read_pages_slots, write_pages_slot, Image, PAGES_HEADER_BLOCKS,
};
use super::leaf::{
    encode_inline, encode_leaf, encode_overflow, leaf_bytes, record_slot, LeafRef, SlotRef,
    LEAF_HEADER,
};
use super::node::{self, Kid, Kids, Node, Pieces, MAX_KIDS};
use super::pages::PageIo;
use super::space::Space;

/// One write: a key and its new value, or `None` to delete it.
pub(crate) type Op<'a> = (&'a [u8], Option<&'a [u8]>);

/// An open byte B+-tree; see the module docs.
pub struct ByteBTree {
    pages: Pages,
    root: Arc<Node>,
}

/// The writer's side: page I/O, free space and counts.
struct Pages {
    io: PageIo,
    space: Space,
    records: u64,
    key_bytes: u64,
    value_bytes: u64,
}

/// What rewriting a leaf left.
enum Rewrite {
    /// Nothing changed.
    Same,
    /// The leaf's records now live in these leaves (none: it is empty), each with the
    /// separator below it.
    Leaves(Vec<(Vec<u8>, u64)>),
}

impl ByteBTree {
    /// Creates an empty tree in a new page file `name` of `storage`, owned by no store.
    pub fn create(storage: &Storage, name: &str) -> Result<ByteBTree> {
        ByteBTree::create_owned(storage, name, FileOwner::NONE)
    }

    /// [`ByteBTree::create`] of a page file whose header records `owner`.
    pub fn create_owned(storage: &Storage, name: &str, owner: FileOwner) -> Result<ByteBTree> {
        let device = storage.create(name)?;
        for slot in 0..PAGES_HEADER_BLOCKS {
            write_pages_slot(device.as_ref(), slot, owner)?;
        }
        device.sync()?;
        Ok(ByteBTree {
            pages: Pages {
                io: PageIo::new(device, false),
                space: Space::new(PAGES_HEADER_BLOCKS, [], 0),
                records: 0,
                key_bytes: 0,
                value_bytes: 0,
            },
            root: Arc::new(Node::empty()),
        })
    }

    /// Opens the page file `name` as the checkpoint `image` left it (`None`: the empty tree
    /// of a store never checkpointed), checkpointed at `seq`. With `read_only`, writes (the
    /// recovery of the log after the checkpoint) stay in memory.
    pub fn open(
        storage: &Storage,
        name: &str,
        image: Option<Image>,
        seq: Seq,
        read_only: bool,
    ) -> Result<ByteBTree> {
        let device = storage.open(name, !read_only)?;
        check_pages_header(device.as_ref())?;
        let len = device.len_blocks();
        let image = image.unwrap_or(Image {
            page_blocks: PAGES_HEADER_BLOCKS,
            ..Image::default()
        });
        if image.page_blocks > len {
            return Err(Error::Truncated {
                file: device.name().to_string(),
                what: format!(
                    "{len} blocks, the checkpoint recorded {}",
                    image.page_blocks
                ),
            });
        }
        // Blocks past the checkpoint's end were written after it: free for recovery.
        let tail = (len > image.page_blocks).then(|| (image.page_blocks, len - image.page_blocks));
        let space = Space::new(len, image.free.iter().copied().chain(tail), seq);
        Ok(ByteBTree {
            pages: Pages {
                io: PageIo::new(device, read_only),
                space,
                records: image.records,
                key_bytes: image.key_bytes,
                value_bytes: image.value_bytes,
            },
            root: Arc::new(node::build(image.leaves)),
        })
    }

    /// The value of `key`, `None` when absent: one leaf read (and the record's run when it
    /// overflowed).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        get_in(&self.pages.io, &self.root, key)
    }

    /// Applies `ops`, sorted by key with no key twice, as the write of sequence number `seq`:
    /// each leaf they touch is read once and written once to a new block.
    pub fn apply(&mut self, ops: &[Op<'_>], seq: Seq) -> Result<()> {
        debug_assert!(ops.windows(2).all(|w| w[0].0 < w[1].0));
        if ops.is_empty() {
            return Ok(());
        }
        let level = self.root.level;
        let root = Arc::make_mut(&mut self.root);
        if let Some(pieces) = self.pages.apply_node(root, ops, true, seq)? {
            self.root = Arc::new(grow(level + 1, pieces));
        }
        while self.root.level > 1 && self.root.len() == 1 {
            let child = match &self.root.kids {
                Kids::Nodes(n) => Arc::clone(&n[0]),
                Kids::Leaves(_) => unreachable!("a level above 1 holds nodes"),
            };
            self.root = child;
        }
        Ok(())
    }

    /// Frees the blocks retired at or before `readers` (see [`Space::reclaim`]).
    pub(crate) fn reclaim(&mut self, readers: Seq) {
        self.pages.space.reclaim(readers);
    }

    /// Makes every block written so far durable.
    pub fn sync(&self) -> Result<()> {
        self.pages.io.device().sync()
    }

    /// What the header of the page file `name` of `storage` says it belongs to, read without
    /// opening the tree (so that a store can refuse another store's page file before its
    /// sizes are compared with the checkpoint's).
    pub fn read_pages_owner(storage: &Storage, name: &str) -> Result<FileOwner> {
        check_pages_header(storage.open(name, false)?.as_ref())
    }

    /// The generations of the page file `name`'s valid header slots of the store `store`,
    /// and whether one of them is exactly `committed` (the store and generation of the
    /// checkpoint the manifest names; generation 0: none yet). A page file is the store's
    /// live one for that checkpoint only when a slot holds `committed`: the slot is erased
    /// ([`ByteBTree::settle_pages`]) before any block of that checkpoint can be reused.
    pub fn pages_stamps(
        storage: &Storage,
        name: &str,
        committed: FileOwner,
    ) -> Result<PagesStamps> {
        let slots = read_pages_slots(storage.open(name, false)?.as_ref())?;
        let mut stamps = PagesStamps::default();
        for read in slots.iter().flatten() {
            if read.store == committed.store {
                stamps.highest = Some(
                    stamps
                        .highest
                        .map_or(read.generation, |h| h.max(read.generation)),
                );
            }
            stamps.holds_committed |= *read == committed;
        }
        Ok(stamps)
    }

    /// Checks both header slots of the page file `name` of `storage` against `committed`.
    /// Returns the slot torn by an interrupted stamp, if one is: a slot that fails its
    /// checksum while the other slot holds `committed`'s stamp. That is what a power loss
    /// during a checkpoint's stamp (or the erasure after it) leaves; the store opens through
    /// the other slot, and the next stamp rewrites the torn one. Any other damaged slot is
    /// returned as the error (`check` reports it as damage).
    pub fn check_pages_slots(
        storage: &Storage,
        name: &str,
        committed: FileOwner,
    ) -> Result<Option<u64>> {
        let slots = read_pages_slots(storage.open(name, false)?.as_ref())?;
        let mut torn = None;
        for (slot, read) in (0..).zip(&slots) {
            let partner_committed = matches!(&slots[1 - slot as usize], Ok(o) if *o == committed);
            match read {
                Ok(_) => {}
                Err(Error::ChecksumMismatch { .. }) if partner_committed => torn = Some(slot),
                Err(e) => return Err(e.clone()),
            }
        }
        Ok(torn)
    }

    /// Writes `stamp` into the header slot of the page file `name` that does not hold
    /// `committed` (either, when both do) and makes it durable; nothing when that slot holds
    /// `stamp` already. A store calls it with the generation it has burned last (`stamp`, at
    /// least `committed`'s) once a checkpoint has committed and whenever it opens for
    /// writing, before any block of an older checkpoint can be reused: from then on no slot
    /// names a checkpoint whose blocks may be overwritten, so an older backup's manifest
    /// cannot take this page file for its own.
    pub fn settle_pages(
        storage: &Storage,
        name: &str,
        committed: FileOwner,
        stamp: FileOwner,
    ) -> Result<()> {
        let device = storage.open(name, true)?;
        settle_slots(device.as_ref(), committed, stamp)
    }

    /// [`ByteBTree::settle_pages`] on this tree's page file.
    pub fn settle(&mut self, committed: FileOwner, stamp: FileOwner) -> Result<()> {
        settle_slots(self.pages.io.device().as_ref(), committed, stamp)
    }

    /// Stamps the page file's header slot that does not hold `committed` (the live
    /// checkpoint's stamp, which stays until this one commits: a torn stamp leaves it) with
    /// `owner` and makes it durable: a store does it with each checkpoint's generation before
    /// committing the checkpoint.
    pub fn stamp_pages(&mut self, owner: FileOwner, committed: FileOwner) -> Result<()> {
        let device = self.pages.io.device();
        let slots = read_pages_slots(device.as_ref())?;
        write_pages_slot(device.as_ref(), other_slot(&slots, committed), owner)?;
        device.sync()
    }

    /// The image a checkpoint of the tree as it is now writes.
    pub fn image(&self) -> Image {
        let mut leaves = Vec::new();
        self.root.for_each_leaf(&[], &mut |sep, block| {
            if block != 0 {
                leaves.push((sep.to_vec(), block));
            }
        });
        Image {
            records: self.pages.records,
            key_bytes: self.pages.key_bytes,
            value_bytes: self.pages.value_bytes,
            page_blocks: self.pages.space.end(),
            leaves,
            free: self.pages.space.free_for_checkpoint(),
            owner: FileOwner::NONE,
        }
    }

    /// A checkpoint of the tree at `seq` is durable: the blocks it refers to stay until the
    /// next one.
    pub(crate) fn checkpointed(&mut self, seq: Seq) {
        self.pages.space.checkpointed(seq);
    }

    /// The root, for a reader that must not see later writes.
    pub(crate) fn root(&self) -> Arc<Node> {
        Arc::clone(&self.root)
    }

    pub(crate) fn io(&self) -> &PageIo {
        &self.pages.io
    }

    /// Records in the tree.
    pub fn len(&self) -> u64 {
        self.pages.records
    }

    /// True when the tree holds nothing.
    pub fn is_empty(&self) -> bool {
        self.pages.records == 0
    }

    /// Sum of the key lengths.
    pub fn key_bytes(&self) -> u64 {
        self.pages.key_bytes
    }

    /// Sum of the value lengths.
    pub fn value_bytes(&self) -> u64 {
        self.pages.value_bytes
    }

    /// Bytes of memory of the inner nodes.
    pub fn memory_bytes(&self) -> usize {
        self.root.memory_bytes()
    }

    /// Bytes of the page file.
    pub fn disk_bytes(&self) -> u64 {
        self.pages.space.end() * self.pages.io.device().block_size() as u64
    }

    /// Free blocks of the page file.
    pub fn free_blocks(&self) -> u64 {
        self.pages.space.free_blocks()
    }

    /// Reads every leaf and run: checksums, record order, that each key lies in the range its
    /// separators route to it (so a lookup finds it), the counts, and that no free block is
    /// in use. Returns the records.
    pub fn check(&self) -> Result<u64> {
        let io = &self.pages.io;
        let file = io.file().to_string();
        let bad = |block: Option<u64>, what: String| Error::Corrupt {
            file: file.clone(),
            block,
            what,
        };
        let mut leaves = Vec::new();
        self.root
            .for_each_leaf(&[], &mut |sep, block| leaves.push((sep.to_vec(), block)));
        let mut used = HashSet::new();
        let (mut records, mut key_bytes, mut value_bytes) = (0u64, 0u64, 0u64);
        let mut previous: Option<Vec<u8>> = None;
        for (i, (low, block)) in leaves.iter().enumerate() {
            if *block == 0 {
                continue;
            }
            if !used.insert(*block) {
                return Err(bad(Some(*block), "a block used twice".into()));
            }
            let high = leaves.get(i + 1).map(|(s, _)| s.as_slice());
            let buf = io.read_leaf(*block)?;
            let leaf = LeafRef::parse(&buf[..io.geometry.payload], io.file(), *block)?;
            if leaf.len() == 0 {
                return Err(bad(Some(*block), "an empty leaf in the tree".into()));
            }
            for j in 0..leaf.len() {
                let slot = leaf.slot(j)?;
                let key = io.full_key(slot)?;
                let value = io.value(slot)?;
                if let SlotRef::Overflow {
                    first,
                    klen,
                    vlen,
                    prefix,
                } = slot
                {
                    if key[..prefix.len()] != *prefix {
                        return Err(bad(Some(*block), format!("record {j}: prefix mismatch")));
                    }
                    for b in first..first + io.geometry.run_blocks(klen + vlen) {
                        if !used.insert(b) {
                            return Err(bad(Some(b), "a block used twice".into()));
                        }
                    }
                }
                if previous.as_ref().is_some_and(|p| *p >= key) {
                    return Err(bad(Some(*block), format!("record {j} out of order")));
                }
                let key_at = key.as_slice();
                let low = (i > 0).then_some(low.as_slice());
                if outside(key_at, key_at, low, high, |a: &[u8], b: &[u8]| a < b) {
                    return Err(bad(
                        Some(*block),
                        format!("record {j} outside the range its separators route here"),
                    ));
                }
                records += 1;
                key_bytes += key.len() as u64;
                value_bytes += value.len() as u64;
                previous = Some(key);
            }
        }
        let p = &self.pages;
        if (records, key_bytes, value_bytes) != (p.records, p.key_bytes, p.value_bytes) {
            return Err(bad(
                None,
                format!(
                    "{records} records of {key_bytes} key and {value_bytes} value bytes, \
                     the checkpoint says {}, {} and {}",
                    p.records, p.key_bytes, p.value_bytes
                ),
            ));
        }
        for (first, len) in p.space.free_for_checkpoint() {
            if let Some(b) = (first..first + len).find(|b| used.contains(b)) {
                return Err(bad(Some(b), "a block in use is recorded as free".into()));
            }
        }
        Ok(records)
    }
}

/// The value of `key` in the tree under `root`.
pub(crate) fn get_in(io: &PageIo, root: &Node, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut node = root;
    let block = loop {
        let i = node.child_index(key);
        match &node.kids {
            Kids::Leaves(l) => break l[i],
            Kids::Nodes(n) => node = &n[i],
        }
    };
    if block == 0 {
        return Ok(None);
    }
    // The thread's read buffer, not a fresh one per lookup (`crate::io::scratch`).
    let mut scratch = scratch::take();
    let bs = io.device().block_size();
    if scratch.raw.len() < bs {
        scratch.raw = AlignedBuf::zeroed(bs);
    }
    let found = io
        .read_into(block, &mut scratch.raw[..bs], IoClass::Leaf)
        .and_then(|()| find_in_leaf(io, &scratch.raw[..io.geometry.payload], block, key));
    scratch::give_back(scratch);
    found
}

/// The value of `key` in the leaf `payload` (block `block`).
fn find_in_leaf(io: &PageIo, payload: &[u8], block: u64, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let leaf = LeafRef::parse(payload, io.file(), block)?;
    let (mut lo, mut hi) = (0, leaf.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let slot = leaf.slot(mid)?;
        match io.cmp(slot, key)? {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return io.value(slot).map(Some),
        }
    }
    Ok(None)
}

/// A root over `pieces` (nodes one level below `level`), as many levels as they need.
fn grow(level: u8, pieces: Pieces) -> Node {
    match pieces.as_slice() {
        [] => Node::empty(),
        [(_, Kid::Node(only))] => (**only).clone(),
        _ => node::build_up_from(level, pieces),
    }
}

impl Pages {
    /// Applies `ops` (all within `node`'s range) below `node`. Returns `None` when `node`
    /// was changed in place, or the nodes (with their separators) that replace it, none when
    /// it became empty.
    fn apply_node(
        &mut self,
        node: &mut Node,
        ops: &[Op<'_>],
        rightmost: bool,
        seq: Seq,
    ) -> Result<Option<Pieces>> {
        let n = node.len();
        let mut changes: Vec<(usize, Pieces)> = Vec::new();
        let mut start = 0;
        while start < ops.len() {
            let i = node.child_index(ops[start].0);
            let end = if i + 1 < n {
                let sep = node.sep(i);
                start + ops[start..].partition_point(|o| o.0 < sep)
            } else {
                ops.len()
            };
            let group = &ops[start..end];
            let right = rightmost && i + 1 == n;
            match &mut node.kids {
                Kids::Leaves(blocks) => match self.rewrite_leaf(blocks[i], group, right, seq)? {
                    Rewrite::Same => {}
                    Rewrite::Leaves(list) if list.len() == 1 => blocks[i] = list[0].1,
                    Rewrite::Leaves(list) => changes.push((
                        i,
                        list.into_iter().map(|(s, b)| (s, Kid::Leaf(b))).collect(),
                    )),
                },
                Kids::Nodes(children) => {
                    let child = Arc::make_mut(&mut children[i]);
                    if let Some(pieces) = self.apply_node(child, group, right, seq)? {
                        changes.push((i, pieces));
                    }
                }
            }
            start = end;
        }
        if changes.is_empty() {
            return Ok(None);
        }
        let level = node.level;
        let mut list = std::mem::replace(node, Node::empty()).into_list();
        for (i, mut pieces) in changes.into_iter().rev() {
            if let Some(first) = pieces.first_mut() {
                first.0 = std::mem::take(&mut list[i].0);
            }
            list.splice(i..=i, pieces);
        }
        if let Some(first) = list.first_mut() {
            first.0.clear();
        }
        if list.is_empty() {
            return Ok(Some(Vec::new()));
        }
        if list.len() <= MAX_KIDS {
            *node = Node::from_list(level, list);
            return Ok(None);
        }
        Ok(Some(node::pack(level, list, rightmost)))
    }

    /// Merges `ops` into the leaf at `block` and writes the result to new blocks. The
    /// records it keeps are copied as they are encoded; only new ones are encoded.
    fn rewrite_leaf(
        &mut self,
        block: u64,
        ops: &[Op<'_>],
        rightmost: bool,
        seq: Seq,
    ) -> Result<Rewrite> {
        let payload = self.io.geometry.payload;
        let buf = if block == 0 {
            Vec::new()
        } else {
            self.io.read_leaf(block)?
        };
        let file = self.io.file().to_string();
        let leaf = (block != 0)
            .then(|| LeafRef::parse(&buf[..payload], &file, block))
            .transpose()?;
        let n = leaf.map_or(0, |l| l.len());
        let old = |i: usize| leaf.expect("a leaf when it has records").record(i);
        let appends = n == 0 || self.io.cmp(old(n - 1)?.0, ops[0].0)?.is_lt();
        let mut out: Vec<Cow<'_, [u8]>> = Vec::with_capacity(n + ops.len());
        let mut changed = false;
        let mut i = 0;
        for &(key, value) in ops {
            // The first old record at or past `key`.
            let lo = i + try_lower_bound_by(n - i, |j| {
                Ok::<_, Error>(self.io.cmp(old(i + j)?.0, key)?.is_lt())
            })?;
            for j in i..lo {
                out.push(Cow::Borrowed(old(j)?.1));
            }
            i = lo;
            if i < n && self.io.cmp(old(i)?.0, key)?.is_eq() {
                self.drop_record(old(i)?.0, seq);
                i += 1;
                changed = true;
            }
            if let Some(v) = value {
                out.push(Cow::Owned(self.make_record(key, v)?));
                self.records += 1;
                self.key_bytes += key.len() as u64;
                self.value_bytes += v.len() as u64;
                changed = true;
            }
        }
        if !changed {
            return Ok(Rewrite::Same);
        }
        for j in i..n {
            out.push(Cow::Borrowed(old(j)?.1));
        }
        if block != 0 {
            self.space.retire(block, 1, seq);
        }
        if out.is_empty() {
            return Ok(Rewrite::Leaves(Vec::new()));
        }
        let cap = payload - LEAF_HEADER;
        let total: usize = out.iter().map(|r| leaf_bytes(r)).sum();
        let target = if total <= cap || (rightmost && appends) {
            cap
        } else {
            total.div_ceil(total.div_ceil(cap))
        };
        // Where each new leaf starts in `out`, then its end.
        let mut starts = vec![0];
        let mut size = 0;
        for (j, record) in out.iter().enumerate() {
            let len = leaf_bytes(record);
            if size + len > target && size > 0 {
                starts.push(j);
                size = 0;
            }
            size += len;
        }
        starts.push(out.len());
        let key_of = |record: &[u8]| self.io.full_key(record_slot(record, &file)?);
        let mut result = Vec::with_capacity(starts.len() - 1);
        let mut page = vec![0u8; self.io.device().block_size()];
        for w in starts.windows(2) {
            let (start, end) = (w[0], w[1]);
            let sep = if start == 0 {
                Vec::new()
            } else {
                let before = key_of(&out[start - 1])?;
                let first = key_of(&out[start])?;
                shortest_separator(&before, &first).to_vec()
            };
            encode_leaf(&out[start..end], &mut page[..payload]);
            let at = self.space.allocate(1);
            self.io.write(at, &mut page, IoClass::Leaf)?;
            result.push((sep, at));
        }
        Ok(Rewrite::Leaves(result))
    }

    /// The encoded record for `key` and `value`: inline, or in a new overflow run when too
    /// large.
    fn make_record(&mut self, key: &[u8], value: &[u8]) -> Result<Vec<u8>> {
        let g = self.io.geometry;
        if 7 + key.len() + value.len() <= g.inline_max() {
            return Ok(encode_inline(key, value));
        }
        let first = self.space.allocate(g.run_blocks(key.len() + value.len()));
        self.io.write_run(first, key, value)?;
        Ok(encode_overflow(key, value.len(), first))
    }

    /// Takes a replaced or deleted record out of the counts and retires its run.
    fn drop_record(&mut self, slot: SlotRef<'_>, seq: Seq) {
        let (k, v) = slot.lens();
        self.records -= 1;
        self.key_bytes -= k as u64;
        self.value_bytes -= v as u64;
        if let SlotRef::Overflow { first, .. } = slot {
            let blocks = self.io.geometry.run_blocks(k + v);
            self.space.retire(first, blocks, seq);
        }
    }
}

/// What the header slots of a page file say ([`ByteBTree::pages_stamps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PagesStamps {
    /// The highest generation a valid slot of the store holds.
    pub highest: Option<u64>,
    /// Whether a valid slot holds exactly the committed stamp.
    pub holds_committed: bool,
}

/// Writes `stamp` into the header slot of `device` that does not hold `committed`, durably,
/// unless that slot holds it already.
fn settle_slots(device: &dyn BlockDevice, committed: FileOwner, stamp: FileOwner) -> Result<()> {
    let slots = read_pages_slots(device)?;
    let slot = other_slot(&slots, committed);
    if matches!(&slots[slot as usize], Ok(o) if *o == stamp) {
        return Ok(());
    }
    write_pages_slot(device, slot, stamp)?;
    device.sync()
}

/// The header slot that does not hold `committed` (slot 1 when both do or neither does).
fn other_slot(slots: &[Result<FileOwner>; 2], committed: FileOwner) -> u64 {
    match &slots[1] {
        Ok(o) if *o == committed && !matches!(&slots[0], Ok(p) if *p == committed) => 0,
        _ => 1,
    }
}
