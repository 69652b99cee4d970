//! Inserts, deletes and the structural modifications on disk (paper 003 §4.1: "when the insert
//! operation requires an SMO, new space is allocated for the new node and old nodes are marked
//! as invalid").
//!
//! An insert descends, searches the data node around its model's prediction and puts the key
//! in place, shifting towards the nearest gap (`data_node`); the blocks it changed are written,
//! then the node's header with its statistics (paper 003 §6.1 counts that write as ALEX's
//! "maintenance", Figure 6). A node at its expansion threshold changes first, decided as in
//! memory (`crate::mem::alex::update`):
//!
//! * **expand**: the node is read whole, handed to the in-memory node's `expand` (scaled model,
//!   `min_density`), and written to new space;
//! * an **append-mostly** right-edge node (nearly all its inserts since it was built hold keys
//!   its model places past its last slot) grows the same way but keeps its keys in place,
//!   the new room on the right where the appended keys' predictions fall (the in-memory
//!   node's `expand` for such a node), instead of splitting for the shifts the appends cause;
//! * **split** when it is at the largest size or its shifts are catastrophic: **sideways**
//!   over the parent slots it owns, halving its run until the keys straddle a cut, the halves
//!   without keys getting empty nodes (appended keys fill those next), or **down** into a new
//!   inner node of fanout two over two data nodes when it owns one slot, the halves built by
//!   `DataNode::fresh` (cost model and placement of the in-memory code);
//! * **widen**: a full node holding at least 16 keys, and at least half of its keys, past the
//!   domain of an inner node it is the rightmost data node under makes the deepest such node
//!   double its slots (a copy in new space, the new half owned by a new data node holding
//!   those keys; the in-memory ALEX's `widen`); a node at the largest fanout gets a parent
//!   of the largest fanout instead, whose slots each span the whole node
//!   ([`DiskAlex::raise`]);
//! * **widen left**: a full node holding at least 16 keys, and at least half of its keys,
//!   below the domain of an inner node it is the leftmost data node under gets a new node
//!   put over the shallowest such node, of twice its slots (at most the largest fanout): the
//!   right half points at the old node, the left half spans as many keys below it as it
//!   spans (or the keys' own span, if wider) and is owned by a new data node holding those
//!   keys (paper 001 §3.3's root expansion, to the left; see [`DiskAlex::widen_left`] for
//!   why a new node and not the old one with more slots);
//! * a delete that leaves a node under its contraction threshold rebuilds it smaller
//!   (`max_density`) in new space.
//!
//! Without the widening, keys appended in increasing order (TPC-C's HISTORY, paper 002
//! §10.6) deepened the right edge by one inner node per split, every few hundred appends:
//! 30,000 appends into 4 KiB nodes (27,000 into the default 16 MiB ones, whose splits came
//! from catastrophic shifts) made descents 256 inner nodes deep, which the descent refuses as
//! a cycle. A first widening (the global right edge only, a two-slot parent for the root
//! only) still deepened it a level per span of a node below the root at the largest fanout
//! (3,000,000 appends into 4 KiB nodes: descents 73 deep); with the raise of any node and
//! the rightmost node under the widened one (not only the global right edge) allowed to
//! widen, 300,000 or 3,000,000 appends leave no descent deeper than 4 inner nodes in 4 KiB
//! nodes (2.0 on average), 1 in the default ones. Keys inserted in decreasing order did the
//! same to the left edge (22,486 of them into 4 KiB nodes reached the bound) until the left
//! widening: now 300,000 leave no descent deeper than 12 inner nodes in 4 KiB nodes (3.6 on
//! average), 3,000,000 no deeper than 16 (5.1), since each left widening doubles the span of
//! the node it widens and each level a split adds under a slot is widened away in turn.
//!
//! Where we differ from the in-memory ALEX, and why: a split never doubles the parent (that
//! would rewrite every child's header, whose duplication rises by one): a node owning one
//! slot splits down. Widening appends slots and changes no child's run, so it rewrites only
//! the widened node (in new space) and one run of its parent's slots. The cost-deviation
//! check (retrain or split when measured cost drifts from the expected one) is not run: it
//! needs a lookup count, which on disk would be a write per lookup (§4.1). Space of invalid
//! nodes is not reused (as in paper 003 §6.3, footnote 1); it is reported by
//! [`DiskAlex::invalid_bytes`] and [`crate::disk::DiskIndex::storage_bytes`]. New data nodes
//! start at a block boundary, so writing one never reads a block. Widening to the left,
//! which the in-memory ALEX does not do (its decreasing inserts deepen the left edge without
//! a bound on the depth), puts a new node over the widened one instead of moving its base
//! (see [`DiskAlex::widen_left`]), and rewrites the widened node's duplication in place.
//!
//! **Where a write's time goes** ([`DiskMap::write_breakdown`], read by a [`PhaseClock`], so a
//! simulated device's modeled time counts as on the other structures): *search* the descent
//! and the data node's search with their reads; *insert* the slots' change and its write, or a
//! delete's; *smo* an expansion, split or contraction; *maintenance* the node header's
//! statistics and `flush`.
//!
//! # Crashes
//!
//! Paper 003's ALEX has no log, and neither has this one: nothing is durable until
//! [`DiskMap::flush`], and a crash between flushes may leave a node half written. A
//! structural modification writes in the order that leaves the old node valid as long as it
//! can: (1) the new nodes, in new space, (2) the parent's slots (or the meta block, for a new
//! root), (3) the neighbours' chain links and the old node's invalid mark. A crash before (2)
//! leaves the tree as it was (the new space unreferenced); between (2) and (3) the tree is
//! right for lookups but a scan may follow a neighbour's stale link into the old node, which
//! still holds its keys as they were before the change.

use crate::disk::node_pages::NodePages;
use crate::disk::{DiskMap, PhaseClock, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::IoClass;
use crate::key::Key;
use crate::mem::alex::build::span_model;
use crate::mem::alex::data_node::DataNode;
use crate::mem::alex::inner_node::{halve_run, InnerNode, Runs};
use crate::mem::alex::model::LinearModel;
use crate::model::linear::u64_to_f64;

use super::addr::{Addr, NONE};
use super::data_node::{self, Node};
use super::inner_node::{InnerHeader, INNER_HEADER_BYTES, INVALID, LIVE};
use super::meta::META_BYTES;
use super::tree::{inner_pages_of, DiskAlex, Step};

/// Why a data node is rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Smo {
    /// Full: expand, or split when it cannot grow.
    Full,
    /// Under its contraction threshold after a delete.
    Contract,
}

/// Keys past the root's domain a full data node must hold before the root widens for them
/// (the in-memory ALEX's `widen::MIN_PAST_KEYS`).
const MIN_PAST_KEYS: usize = 16;

/// Share of a node's inserts since it was built that must have landed past its model's last
/// slot for the node to count as appended to (the in-memory node's `APPEND_MOSTLY`).
const APPEND_MOSTLY: f64 = 0.9;

/// What replaces a data node.
enum Replacement {
    /// Nodes over runs of the parent's slots that together tile the old node's run, in slot
    /// order: each with the first slot of its run (`2^duplication` slots). Without a parent,
    /// one node, the new root.
    Runs(Vec<(usize, DataNode<u64, u32>)>),
    /// A new inner node (fanout two, the model given) over two nodes.
    Down(
        crate::mem::alex::model::LinearModel,
        Box<[DataNode<u64, u32>; 2]>,
    ),
}

impl DiskAlex {
    fn check_write(&self, op: &'static str, payload: Option<&[u8]>) -> Result<()> {
        if !self.writable {
            return Err(Error::ReadOnly { op });
        }
        if payload.is_some_and(|p| p.len() != self.meta.params.payload_size) {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.map_or(0, <[u8]>::len)),
                expected: "exactly payload_size() bytes",
            });
        }
        Ok(())
    }

    /// Writes the meta block (block 0 of the inner-node file).
    pub(crate) fn write_meta(&mut self) -> Result<()> {
        let mut block = vec![0u8; self.inner.block_size()];
        self.meta.encode(&mut block[..META_BYTES]);
        self.inner.write_blocks(0, &mut block, IoClass::Header)?;
        self.absorb(vec![(0, block.into_boxed_slice())]);
        Ok(())
    }

    /// Keeps the resident copy of the inner-node file in step with blocks just written.
    fn absorb(&mut self, written: Vec<(u64, Box<[u8]>)>) {
        if let Some(resident) = &mut self.resident {
            for (b, bytes) in written {
                let b = b as usize;
                if b >= resident.len() {
                    let size = bytes.len();
                    resident.resize_with(b + 1, || vec![0u8; size].into_boxed_slice());
                }
                resident[b] = bytes;
            }
        }
    }

    /// Rebuilds the data node at `pos` (reached through `path`) for `why`.
    fn smo(&mut self, pos: u64, path: &[Step], why: Smo) -> Result<()> {
        let d = self.derived;
        let mut data = self.data_pages();
        let old = self.node(&mut data, pos)?;
        let (mut node, payloads) = old.read_whole(&mut data, &d)?;
        drop(data);
        let payload = self.meta.params.payload_size;
        let mut take = |v: u32, out: &mut [u8]| {
            let at = v as usize * payload;
            out.copy_from_slice(&payloads[at..at + payload]);
        };
        let n = old.h.num_keys as usize;
        let duplication = old.h.duplication;
        let parent = path.last().copied();
        let own = |node: DataNode<u64, u32>| {
            let start = parent.map_or(0, |p| InnerNode::run_start(p.slot, duplication));
            Replacement::Runs(vec![(start, node)])
        };
        let at_max = n as f64 > d.max_data_slots as f64 * d.min_density;
        let replacement = if why == Smo::Contract {
            node.resize(d.max_density, false, false, false, &d);
            self.smos.contractions += 1;
            own(node)
        } else if n < 2 {
            node.resize(d.min_density, true, false, false, &d);
            self.smos.expansions += 1;
            own(node)
        } else if let Some(at) = self.widening(&old, &node, path) {
            let (keys, values) = node.drain();
            return self.widen(&old, path, at, keys, values, &mut take);
        } else if let Some(how) = self.widening_left(&old, &node, path) {
            let (keys, values) = node.drain();
            return self.widen_left(&old, path, how, keys, values, &mut take);
        } else if !at_max && appended(&old, &node) {
            node.resize(d.min_density, false, true, false, &d);
            self.smos.expansions += 1;
            own(node)
        } else if !(at_max || old.h.catastrophic()) {
            node.expand(&d);
            self.smos.expansions += 1;
            own(node)
        } else {
            let (keys, values) = node.drain();
            self.split(&keys, values, duplication, parent)
        };
        self.replace(&old, parent, replacement, &mut take)
    }

    /// The nodes a full node's entries go to: sideways when it owns several of its parent's
    /// slots, halving its run until the keys straddle a cut (or are left with one slot), the
    /// halves without keys getting empty nodes: keys appended past the others fill those
    /// next instead of deepening the tree under one node, as in memory. Down when it owns
    /// one slot or is the root.
    fn split(
        &mut self,
        keys: &[u64],
        values: Vec<u32>,
        duplication: u8,
        parent: Option<Step>,
    ) -> Replacement {
        let d = self.derived;
        if let Some(p) = parent.filter(|_| duplication > 0) {
            let fanout = p.header.fanout();
            let mut dup = duplication;
            let mut start = InnerNode::run_start(p.slot, duplication);
            // (first slot, duplication, keys) of each node replacing the old one.
            let mut runs: Runs = Vec::new();
            while dup > 0 {
                let cut_of =
                    |mid| keys.partition_point(|k| p.header.model.slot(k.to_model(), fanout) < mid);
                if halve_run(&mut runs, &mut start, &mut dup, keys.len(), cut_of) {
                    break;
                }
                if dup == 0 {
                    // Every key routes to the one slot left: its node splits down below.
                    runs.push((start, 0, 0..keys.len()));
                }
            }
            runs.sort_by_key(|r| r.0);
            self.smos.splits_sideways += 1;
            let mut values = values.into_iter();
            return Replacement::Runs(
                runs.into_iter()
                    .map(|(start, dup, range)| {
                        let v: Vec<u32> = values.by_ref().take(range.len()).collect();
                        (start, DataNode::fresh(&keys[range], v, dup, &d))
                    })
                    .collect(),
            );
        }
        let mut model = span_model(keys);
        model.scale(2.0);
        let cut = keys.partition_point(|k| model.slot(k.to_model(), 2) == 0);
        let (l, r) = values.split_at(cut);
        self.smos.splits_down += 1;
        Replacement::Down(
            model,
            Box::new([
                DataNode::fresh(&keys[..cut], l.iter().copied(), 0, &d),
                DataNode::fresh(&keys[cut..], r.iter().copied(), 0, &d),
            ]),
        )
    }

    /// Writes `replacement` for data node `old` in new space, points the parent (or the
    /// root) at it, relinks the neighbours and marks `old` invalid, in that order (see the
    /// module docs on crashes).
    fn replace(
        &mut self,
        old: &Node,
        parent: Option<Step>,
        replacement: Replacement,
        payload_of: &mut dyn FnMut(u32, &mut [u8]),
    ) -> Result<()> {
        let usable = self.usable();
        let (runs, inner_model) = match replacement {
            Replacement::Runs(runs) => (runs, None),
            Replacement::Down(m, halves) => {
                let [a, b] = *halves;
                (vec![(0, a), (1, b)], Some(m))
            }
        };
        // (1) The new data nodes, each from a block boundary.
        let nodes: Vec<&DataNode<u64, u32>> = runs.iter().map(|(_, n)| n).collect();
        let positions = self.write_data_nodes(&nodes, old.h.prev, old.h.next, payload_of)?;
        // (2) A new inner node, if any, then the parent's slots or the root.
        let mut inner = inner_pages_of(&self.inner, &self.resident);
        let old_start = parent.map_or(0, |p| InnerNode::run_start(p.slot, old.h.duplication));
        let targets: Vec<(usize, u8, Addr)> = match inner_model {
            Some(model) => {
                let pos = self.meta.inner_end;
                let header = InnerHeader {
                    state: LIVE,
                    duplication: old.h.duplication,
                    fanout: 2,
                    model,
                };
                let mut bytes = vec![0u8; INNER_HEADER_BYTES + 16];
                header.encode(&mut bytes);
                for (i, &p) in positions.iter().enumerate() {
                    let at = INNER_HEADER_BYTES + 8 * i;
                    bytes[at..at + 8].copy_from_slice(&Addr::data(p).encode(usable).to_le_bytes());
                }
                inner.write(pos, &bytes)?;
                self.meta.inner_end = pos + bytes.len() as u64;
                self.meta.inner_nodes += 1;
                vec![(old_start, old.h.duplication, Addr::inner(pos))]
            }
            None => runs
                .iter()
                .zip(&positions)
                .map(|((start, node), &p)| (*start, node.duplication, Addr::data(p)))
                .collect(),
        };
        let root_changed = match parent {
            Some(p) => {
                inner.write(
                    p.pos + (INNER_HEADER_BYTES + 8 * old_start) as u64,
                    &run_slots(&targets, usable),
                )?;
                false
            }
            None => {
                self.meta.root_raw = targets[0].2.encode(usable);
                true
            }
        };
        let written = inner.commit_blocks()?;
        drop(inner);
        self.absorb(written);
        if root_changed {
            self.write_meta_for(old, positions[0])?;
        }
        // (3) The neighbours' links and the old node's mark.
        self.retire(old, &positions)
    }

    /// Whether the full data node `old` (read whole as `node`, reached through `path`)
    /// should widen an inner node on its path instead of growing or splitting, and which
    /// (its index in `path`): the deepest one whose domain at least [`MIN_PAST_KEYS`] of
    /// `old`'s keys and at least half of them lie past, when `old` is the rightmost data node
    /// under it and holds every key past that domain (it is the node's child, or its first
    /// key is inside the domain). A node that cannot double its slots gets a parent ([`DiskAlex::raise`]).
    fn widening(&self, old: &Node, node: &DataNode<u64, u32>, path: &[Step]) -> Option<usize> {
        let n = old.h.num_keys as usize;
        let child_dup = |j: usize| {
            path.get(j + 1)
                .map_or(old.h.duplication, |s| s.header.duplication)
        };
        let rightmost_from = (0..path.len())
            .rev()
            .take_while(|&j| {
                let dup = child_dup(j);
                InnerNode::run_start(path[j].slot, dup) + (1 << dup) == path[j].header.fanout()
            })
            .last()?;
        (rightmost_from..path.len()).rev().find(|&i| {
            let h = path[i].header;
            let past = |k: &u64| h.model.predict(k.to_model()) as i64 >= h.fanout() as i64;
            let mut keys = node.occupied_keys();
            let first_past = keys.next().is_some_and(|k| past(&k));
            if first_past && i + 1 < path.len() {
                return false;
            }
            let count = usize::from(first_past) + keys.filter(past).count();
            count >= MIN_PAST_KEYS && 2 * count >= n
        })
    }

    /// Widens inner node `path[at]` (header `w`) for the keys of the full right-edge node
    /// `old` that lie past its domain (the in-memory ALEX's `widen`, there for the root
    /// only; on disk a node under the root widens too, since the disk ALEX never doubles a
    /// parent): a copy with twice the slots and the same model replaces it, the old slots
    /// copied and the new half owned by a new data node holding those keys. A node at the
    /// largest fanout is raised instead ([`DiskAlex::raise`]). `old` keeps its other keys,
    /// rebuilt in new space. Written in the order of [`DiskAlex::replace`]: new nodes, the
    /// slots (or meta block) pointing at them, then the old nodes' marks.
    #[allow(clippy::too_many_arguments)]
    fn widen(
        &mut self,
        old: &Node,
        path: &[Step],
        at: usize,
        keys: Vec<u64>,
        values: Vec<u32>,
        payload_of: &mut dyn FnMut(u32, &mut [u8]),
    ) -> Result<()> {
        let d = self.derived;
        let usable = self.usable();
        let w = path[at].header;
        let slots = w.fanout();
        if 2 * slots > d.max_fanout {
            return self.raise(old, path, at, keys, values, payload_of);
        }
        let cut = keys.partition_point(|k| (w.model.predict(k.to_model()) as i64) < slots as i64);
        let (kept, moved) = values.split_at(cut);
        let nodes = [
            DataNode::fresh(&keys[..cut], kept.iter().copied(), old.h.duplication, &d),
            DataNode::fresh(
                &keys[cut..],
                moved.iter().copied(),
                slots.trailing_zeros() as u8,
                &d,
            ),
        ];
        let positions =
            self.write_data_nodes(&[&nodes[0], &nodes[1]], old.h.prev, old.h.next, payload_of)?;
        let (kept_at, moved_at) = (Addr::data(positions[0]), Addr::data(positions[1]));
        let parent = *path.last().expect("widening needs an inner node");
        let old_start = InnerNode::run_start(parent.slot, old.h.duplication);
        let kept_slots = run_slots(&[(old_start, old.h.duplication, kept_at)], usable);
        let mut inner = inner_pages_of(&self.inner, &self.resident);
        let w_pos = path[at].pos;
        let mut children = vec![0u8; 8 * slots];
        inner.read(w_pos + INNER_HEADER_BYTES as u64, &mut children)?;
        if at + 1 < path.len() {
            inner.write(
                parent.pos + (INNER_HEADER_BYTES + 8 * old_start) as u64,
                &kept_slots,
            )?;
        } else {
            let i = 8 * old_start;
            children[i..i + kept_slots.len()].copy_from_slice(&kept_slots);
        }
        for _ in 0..slots {
            children.extend_from_slice(&moved_at.encode(usable).to_le_bytes());
        }
        let header = InnerHeader {
            state: LIVE,
            duplication: w.duplication,
            fanout: 2 * slots as u32,
            model: w.model,
        };
        let pos = self.meta.inner_end;
        let mut bytes = vec![0u8; INNER_HEADER_BYTES];
        header.encode(&mut bytes);
        bytes.extend_from_slice(&children);
        inner.write(pos, &bytes)?;
        self.meta.inner_end = pos + bytes.len() as u64;
        let widened = Addr::inner(pos);
        if at > 0 {
            let up = path[at - 1];
            let start = InnerNode::run_start(up.slot, w.duplication);
            inner.write(
                up.pos + (INNER_HEADER_BYTES + 8 * start) as u64,
                &run_slots(&[(start, w.duplication, widened)], usable),
            )?;
        }
        let written = inner.commit_blocks()?;
        drop(inner);
        self.absorb(written);
        if at == 0 {
            self.meta.root_raw = widened.encode(usable);
        }
        self.meta.inner_invalid += w.node_bytes();
        self.write_meta_for(old, positions[0])?;
        let mut dead = w;
        dead.state = INVALID;
        let mut head = [0u8; INNER_HEADER_BYTES];
        dead.encode(&mut head);
        let mut inner = inner_pages_of(&self.inner, &self.resident);
        inner.write(w_pos, &head)?;
        let written = inner.commit_blocks()?;
        drop(inner);
        self.absorb(written);
        self.smos.widenings += 1;
        self.retire(old, &positions)
    }

    /// Puts a parent over inner node `path[at]` (header `w`, at the largest fanout) for the
    /// keys of the full right-edge node `old` past its domain: a node of the largest fanout
    /// whose model is `w`'s divided by `w`'s fanout (a power of two, so a key routes to its
    /// slot 0 exactly when it routed inside `w`'s domain), slot 0 pointing at `w` and each
    /// run of slots `[2^j, 2^(j+1))` at a new data node holding the keys that route there
    /// (most runs start empty). Each slot spans as many keys as `w` does: the runs fill by
    /// sideways splits as keys keep coming, and the new node is raised in its turn only once
    /// keys pass all its slots, so the tree deepens by a level a multiplying of its span by
    /// the largest fanout. A first version gave the root a parent of two slots that doubled
    /// later, and raised no other node: under the root, a node at the largest fanout split
    /// its right edge down instead, a level every span of it (about 43,000 appends into 4 KiB
    /// nodes, 3,000,000 appends made descents 73 inner nodes deep).
    fn raise(
        &mut self,
        old: &Node,
        path: &[Step],
        at: usize,
        keys: Vec<u64>,
        values: Vec<u32>,
        payload_of: &mut dyn FnMut(u32, &mut [u8]),
    ) -> Result<()> {
        let d = self.derived;
        let usable = self.usable();
        let (w, w_pos) = (path[at].header, path[at].pos);
        let slots = w.fanout();
        let fanout = d.max_fanout.max(2);
        let mut model = w.model;
        model.scale(1.0 / slots as f64);
        let runs = fanout.trailing_zeros() as usize;
        let cut = keys.partition_point(|k| (w.model.predict(k.to_model()) as i64) < slots as i64);
        // Where the keys of each run end: run j holds the keys routing to [2^j, 2^(j+1)).
        let ends: Vec<usize> = (0..runs)
            .map(|j| match j + 1 < runs {
                true => keys.partition_point(|k| model.slot(k.to_model(), fanout) < 2 << j),
                false => keys.len(),
            })
            .collect();
        let mut values = values.into_iter();
        let mut nodes = vec![DataNode::fresh(
            &keys[..cut],
            values.by_ref().take(cut).collect::<Vec<_>>(),
            old.h.duplication,
            &d,
        )];
        let mut from = cut;
        for (j, &end) in ends.iter().enumerate() {
            let v: Vec<u32> = values.by_ref().take(end - from).collect();
            nodes.push(DataNode::fresh(&keys[from..end], v, j as u8, &d));
            from = end;
        }
        let refs: Vec<&DataNode<u64, u32>> = nodes.iter().collect();
        let positions = self.write_data_nodes(&refs, old.h.prev, old.h.next, payload_of)?;
        let parent = *path.last().expect("widening needs an inner node");
        let old_start = InnerNode::run_start(parent.slot, old.h.duplication);
        let mut inner = inner_pages_of(&self.inner, &self.resident);
        inner.write(
            parent.pos + (INNER_HEADER_BYTES + 8 * old_start) as u64,
            &run_slots(
                &[(old_start, old.h.duplication, Addr::data(positions[0]))],
                usable,
            ),
        )?;
        if w.duplication != 0 {
            // `w` owns one slot of its new parent.
            let mut owned = w;
            owned.duplication = 0;
            let mut head = [0u8; INNER_HEADER_BYTES];
            owned.encode(&mut head);
            inner.write(w_pos, &head)?;
        }
        let mut targets = vec![(0, 0, Addr::inner(w_pos))];
        targets.extend((0..runs).map(|j| (1 << j, j as u8, Addr::data(positions[j + 1]))));
        let header = InnerHeader {
            state: LIVE,
            duplication: w.duplication,
            fanout: fanout as u32,
            model,
        };
        let pos = self.meta.inner_end;
        let mut bytes = vec![0u8; INNER_HEADER_BYTES];
        header.encode(&mut bytes);
        bytes.extend_from_slice(&run_slots(&targets, usable));
        inner.write(pos, &bytes)?;
        self.meta.inner_end = pos + bytes.len() as u64;
        let written = link_in(inner, path, at, w.duplication, Addr::inner(pos), usable)?;
        self.install(written, at, Addr::inner(pos), old, &positions)
    }

    /// Whether the full data node `old` (read whole as `node`, reached through `path`)
    /// should widen an inner node on its path to the left instead of growing or splitting,
    /// and how: the shallowest one that `old` is the leftmost data node under (so that it
    /// holds every key of that node's subtree below its own last), whose domain at least
    /// [`MIN_PAST_KEYS`] of `old`'s keys and at least half of them lie below (below a model's
    /// domain is under its base, where the model tells no keys apart), and for which a model
    /// of the new node separates the keys exactly ([`left_model`]). The shallowest, so that
    /// decreasing keys below a large subtree widen the node over the most keys: the tree
    /// deepens by a level a doubling of that domain, not a level a split.
    fn widening_left(
        &self,
        old: &Node,
        node: &DataNode<u64, u32>,
        path: &[Step],
    ) -> Option<LeftWidening> {
        let keys: Vec<u64> = node.occupied_keys().collect();
        let (&lowest, &last) = (keys.first()?, keys.last()?);
        let child_dup = |j: usize| {
            path.get(j + 1)
                .map_or(old.h.duplication, |s| s.header.duplication)
        };
        let leftmost_from = (0..path.len())
            .rev()
            .take_while(|&j| InnerNode::run_start(path[j].slot, child_dup(j)) == 0)
            .last()?;
        (leftmost_from..path.len()).find_map(|at| {
            let w = path[at].header;
            // Every key under `w` past `old`'s last is past `cut`.
            let cut = w.model.base.min(last.saturating_add(1));
            let below = keys.partition_point(|&k| k < cut);
            if below < MIN_PAST_KEYS || 2 * below < keys.len() {
                return None;
            }
            let highest = keys[below - 1];
            let (fanout, model) = left_model(&w, self.derived.max_fanout, cut, lowest, highest)?;
            Some(LeftWidening {
                at,
                cut,
                fanout,
                model,
            })
        })
    }

    /// Widens inner node `path[at]` to the left for the keys of the full left-edge node `old`
    /// below `how.cut` (the reference's root expansion to the left, paper 001 §3.3, which
    /// prepends slots to the root; here a new node takes the widened one's place, since a
    /// model cannot keep its slots while its base moves down: the new node's right half of
    /// slots points at the widened node and its left half, spanning at least as many keys
    /// below `cut` as the widened node spans, is owned by a new data node holding those keys,
    /// which fills it by sideways splits as keys keep coming). `old` keeps its other keys,
    /// rebuilt in new space. Written in the order of [`DiskAlex::replace`]: new nodes, the
    /// slots (or meta block) pointing at them, then the old node's mark.
    fn widen_left(
        &mut self,
        old: &Node,
        path: &[Step],
        how: LeftWidening,
        keys: Vec<u64>,
        values: Vec<u32>,
        payload_of: &mut dyn FnMut(u32, &mut [u8]),
    ) -> Result<()> {
        let d = self.derived;
        let usable = self.usable();
        let w = path[how.at];
        let half = how.fanout / 2;
        let half_dup = half.trailing_zeros() as u8;
        let cut = keys.partition_point(|&k| k < how.cut);
        let (moved, kept) = values.split_at(cut);
        let nodes = [
            DataNode::fresh(&keys[..cut], moved.iter().copied(), half_dup, &d),
            DataNode::fresh(&keys[cut..], kept.iter().copied(), old.h.duplication, &d),
        ];
        let positions =
            self.write_data_nodes(&[&nodes[0], &nodes[1]], old.h.prev, old.h.next, payload_of)?;
        let (moved_at, kept_at) = (Addr::data(positions[0]), Addr::data(positions[1]));
        let parent = *path.last().expect("widening needs an inner node");
        let old_start = InnerNode::run_start(parent.slot, old.h.duplication);
        let mut inner = inner_pages_of(&self.inner, &self.resident);
        inner.write(
            parent.pos + (INNER_HEADER_BYTES + 8 * old_start) as u64,
            &run_slots(&[(old_start, old.h.duplication, kept_at)], usable),
        )?;
        let header = InnerHeader {
            state: LIVE,
            duplication: w.header.duplication,
            fanout: how.fanout as u32,
            model: how.model,
        };
        let pos = self.meta.inner_end;
        let mut bytes = vec![0u8; INNER_HEADER_BYTES];
        header.encode(&mut bytes);
        bytes.extend_from_slice(&run_slots(
            &[
                (0, half_dup, moved_at),
                (half, half_dup, Addr::inner(w.pos)),
            ],
            usable,
        ));
        inner.write(pos, &bytes)?;
        self.meta.inner_end = pos + bytes.len() as u64;
        // The widened node now owns the new node's right half.
        let mut owned = w.header;
        owned.duplication = half_dup;
        let mut head = [0u8; INNER_HEADER_BYTES];
        owned.encode(&mut head);
        inner.write(w.pos, &head)?;
        let dup = w.header.duplication;
        let written = link_in(inner, path, how.at, dup, Addr::inner(pos), usable)?;
        self.install(written, how.at, Addr::inner(pos), old, &positions)
    }

    /// The end of a widening: publishes the inner pages `written`, makes `node` the root
    /// when it replaced the node at depth `at` 0, and retires the full data node `old` for
    /// the data nodes at `positions`.
    fn install(
        &mut self,
        written: Vec<(u64, Box<[u8]>)>,
        at: usize,
        node: Addr,
        old: &Node,
        positions: &[u64],
    ) -> Result<()> {
        self.absorb(written);
        if at == 0 {
            self.meta.root_raw = node.encode(self.usable());
        }
        self.meta.inner_nodes += 1;
        self.write_meta_for(old, positions[0])?;
        self.smos.widenings += 1;
        self.retire(old, positions)
    }

    /// Writes `nodes` in new space, each from a block boundary, chained in order between the
    /// addresses `prev` and `next`; their positions.
    fn write_data_nodes(
        &mut self,
        nodes: &[&DataNode<u64, u32>],
        prev: u64,
        next: u64,
        payload_of: &mut dyn FnMut(u32, &mut [u8]),
    ) -> Result<Vec<u64>> {
        let usable = self.usable();
        let slot = self.slot_bytes();
        let payload = self.meta.params.payload_size;
        let mut positions = Vec::with_capacity(nodes.len());
        for node in nodes {
            let start = self.meta.data_end.next_multiple_of(usable as u64);
            let bytes = (data_node::DATA_HEADER_BYTES
                + 8 * node.bitmap().len()
                + node.capacity() * slot) as u64;
            self.meta.data_end = start + bytes;
            positions.push(start);
        }
        if self.meta.data_end / usable as u64 > super::addr::MAX_BLOCK {
            return Err(Error::InvalidParameter {
                name: "data file blocks",
                value: (self.meta.data_end / usable as u64).to_string(),
                expected: "under 2^31 blocks (an address holds a 31-bit block): larger blocks",
            });
        }
        let encode = |p: u64| Addr::data(p).encode(usable);
        let mut data = self.data_pages();
        for (i, node) in nodes.iter().enumerate() {
            let before = i.checked_sub(1).map_or(prev, |j| encode(positions[j]));
            let after = positions.get(i + 1).map_or(next, |&p| encode(p));
            let bytes = data_node::encode(node, payload, before, after, payload_of);
            data.write(positions[i], &bytes)?;
        }
        data.commit()?;
        Ok(positions)
    }

    /// Writes the meta block after data node `old` was replaced by nodes starting at
    /// `first` (the chain's head moves with it).
    fn write_meta_for(&mut self, old: &Node, first: u64) -> Result<()> {
        if self.meta.first_leaf().pos == old.pos {
            self.meta.first_leaf_raw = Addr::data(first).encode(self.usable());
        }
        self.write_meta()
    }

    /// The last step of a replacement: counts `old`'s bytes invalid, points its neighbours
    /// at the nodes that replaced it (at `positions`, in order), and marks it invalid.
    fn retire(&mut self, old: &Node, positions: &[u64]) -> Result<()> {
        let usable = self.usable();
        let encode = |p: u64| Addr::data(p).encode(usable);
        self.meta.data_nodes += positions.len() as u64 - 1;
        self.meta.data_invalid += old.h.node_bytes(self.slot_bytes());
        if self.meta.first_leaf().pos == old.pos {
            self.meta.first_leaf_raw = encode(positions[0]);
        }
        let mut data = self.data_pages();
        if let Some(prev) = Addr::decode(old.h.prev, usable).filter(|_| old.h.prev != NONE) {
            let mut node = self.node(&mut data, prev.pos)?;
            node.h.next = encode(positions[0]);
            node.write_header(&mut data)?;
        }
        if let Some(next) = Addr::decode(old.h.next, usable).filter(|_| old.h.next != NONE) {
            let mut node = self.node(&mut data, next.pos)?;
            node.h.prev = encode(*positions.last().expect("at least one node"));
            node.write_header(&mut data)?;
        }
        let mut dead = *old;
        dead.h.state = INVALID;
        dead.write_header(&mut data)?;
        data.commit()?;
        Ok(())
    }
}

/// A widening to the left, as [`DiskAlex::widening_left`] chose it.
#[derive(Clone, Copy, Debug)]
struct LeftWidening {
    /// The widened node's index in the descent's path.
    at: usize,
    /// The keys under it move to the new node's left half; every other key of the tree is
    /// at least `cut`.
    cut: u64,
    /// The new node's slots, half of them over the widened node.
    fanout: usize,
    /// The new node's model.
    model: LinearModel,
}

/// The fanout and model of a node put over inner node `w` (of header `w`) for keys below
/// `cut`, the lowest of them `lowest`, the highest `highest`: twice `w`'s slots (at most
/// `max_fanout`), the keys from `cut` up routed to the right half (which points at `w`),
/// the left half spanning as many keys below `cut` as `w` spans, or the keys' own span if
/// wider. `None` when rounding cannot put `cut` and `highest` on the two sides of the
/// halves' boundary (keys so sparse that one slot spans more than `f64` resolves at the
/// boundary), or `w`'s model is flat and the keys' span empty.
fn left_model(
    w: &InnerHeader,
    max_fanout: usize,
    cut: u64,
    lowest: u64,
    highest: u64,
) -> Option<(usize, LinearModel)> {
    let fanout = (2 * w.fanout()).min(max_fanout).max(2);
    let half = (fanout / 2) as f64;
    let spanned = if w.model.a > 0.0 {
        w.fanout() as f64 / w.model.a
    } else {
        0.0
    };
    let width = spanned.max(u64_to_f64(cut - lowest));
    let mut model = LinearModel {
        a: half / width,
        b: 0.0,
        base: cut.saturating_sub(width as u64),
    };
    if !(model.a > 0.0 && model.a.is_finite()) {
        return None;
    }
    model.b = half - model.predict(cut);
    // Rounding may leave `cut` a hair under the boundary: nudge it over by an ulp of `half`.
    for _ in 0..8 {
        if model.slot(cut, fanout) as f64 >= half {
            break;
        }
        model.b += half * f64::EPSILON;
    }
    (model.slot(cut, fanout) as f64 >= half && (model.slot(highest, fanout) as f64) < half)
        .then_some((fanout, model))
}

/// The slot bytes of consecutive runs `(first slot, duplication, child)`, in slot order.
fn run_slots(runs: &[(usize, u8, Addr)], usable: usize) -> Vec<u8> {
    let mut slots = Vec::new();
    for &(_, dup, child) in runs {
        for _ in 0..1usize << dup {
            slots.extend_from_slice(&child.encode(usable).to_le_bytes());
        }
    }
    slots
}

/// Whether the right-edge data node `old` (read whole as `node`) is being appended to: at
/// least [`APPEND_MOSTLY`] of its inserts since it was built hold keys its model places past
/// its last slot. Such a node grows keeping its keys where they are, the new room on the
/// right where the appended keys' predictions fall (the in-memory node's `expand` for an
/// append-mostly node), instead of being split for the shifts the appends caused.
fn appended(old: &Node, node: &DataNode<u64, u32>) -> bool {
    if old.h.next != NONE || old.h.inserts == 0 {
        return false;
    }
    let last = old.h.capacity as f64;
    let past = node
        .occupied_keys()
        .filter(|k| old.h.model.predict(k.to_model()) >= last - 1.0)
        .count();
    past as f64 >= APPEND_MOSTLY * old.h.inserts as f64
}

impl DiskMap<u64> for DiskAlex {
    fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        self.check_write("insert", Some(payload))?;
        loop {
            let mut clock = PhaseClock::start();
            let mut inner = self.inner_pages();
            let mut path = Vec::new();
            let pos = self.descend(&mut inner, key, Some(&mut path))?;
            drop(inner);
            let mut data = self.data_pages();
            let mut node = self.node(&mut data, pos)?;
            let located = node.locate(&mut data, key)?;
            self.breakdown.search_ns += clock.lap();
            let miss = match located {
                Ok(at) => {
                    node.set_payload(&mut data, at, payload)?;
                    data.commit()?;
                    self.breakdown.insert_ns += clock.lap();
                    return Ok(true);
                }
                Err(miss) => miss,
            };
            let full = node.h.num_keys >= node.h.expansion_threshold
                || (node.h.inserts.is_multiple_of(64) && node.h.catastrophic());
            if full {
                drop(data);
                self.smo(pos, &path, Smo::Full)?;
                self.breakdown.smo_ns += clock.lap();
                continue;
            }
            node.put(&mut data, miss, key, payload)?;
            data.commit()?;
            self.breakdown.insert_ns += clock.lap();
            node.write_header(&mut data)?;
            data.commit()?;
            self.breakdown.maintenance_ns += clock.lap();
            self.meta.len += 1;
            return Ok(false);
        }
    }

    fn delete(&mut self, key: &u64) -> Result<bool> {
        self.check_write("delete", None)?;
        let mut clock = PhaseClock::start();
        let mut inner = self.inner_pages();
        let mut path = Vec::new();
        let pos = self.descend(&mut inner, *key, Some(&mut path))?;
        drop(inner);
        let mut data = self.data_pages();
        let mut node = self.node(&mut data, pos)?;
        let found = node.find(&mut data, *key)?;
        self.breakdown.search_ns += clock.lap();
        let Some(at) = found else {
            return Ok(false);
        };
        node.take(&mut data, at)?;
        node.write_header(&mut data)?;
        data.commit()?;
        drop(data);
        self.meta.len -= 1;
        self.breakdown.insert_ns += clock.lap();
        if node.h.num_keys > 0 && node.h.num_keys < node.h.contraction_threshold {
            self.smo(pos, &path, Smo::Contract)?;
            self.breakdown.smo_ns += clock.lap();
        }
        Ok(true)
    }

    fn flush(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        let mut clock = PhaseClock::start();
        self.data.sync()?;
        self.write_meta()?;
        self.inner.sync()?;
        self.breakdown.maintenance_ns += clock.lap();
        Ok(())
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.breakdown
    }
}

/// Points the run of slots that held the node at depth `at` of `path` (of duplication `dup`)
/// in its parent at `node` (nothing to point at depth 0: the root), and commits `inner`'s
/// pages; returns them.
fn link_in(
    mut inner: NodePages<'_>,
    path: &[Step],
    at: usize,
    dup: u8,
    node: Addr,
    usable: usize,
) -> Result<Vec<(u64, Box<[u8]>)>> {
    if at > 0 {
        let up = path[at - 1];
        let start = InnerNode::run_start(up.slot, dup);
        inner.write(
            up.pos + (INNER_HEADER_BYTES + 8 * start) as u64,
            &run_slots(&[(start, dup, node)], usable),
        )?;
    }
    inner.commit_blocks()
}
