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
//! * **split** when it is at the largest size or its shifts are catastrophic: **sideways** into
//!   two nodes sharing the parent slots it owns, or **down** into a new inner node of fanout two
//!   over two data nodes, the halves built by `DataNode::fresh` (cost model and placement of
//!   the in-memory code);
//! * a delete that leaves a node under its contraction threshold rebuilds it smaller
//!   (`max_density`) in new space.
//!
//! Where we differ from the in-memory ALEX, and why: a split never doubles the parent (that
//! would grow, hence move, the parent, and its parent's slots with it): a node owning one slot
//! splits down. The cost-deviation check (retrain or split when measured cost drifts from the
//! expected one) is not run: it needs a lookup count, which on disk would be a write per
//! lookup (§4.1). Space of invalid nodes is not reused (as in paper 003 §6.3, footnote 1); it
//! is reported by [`DiskAlex::invalid_bytes`] and [`crate::disk::DiskIndex::storage_bytes`].
//! New data nodes start at a block boundary, so writing one never reads a block.
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

use crate::disk::{DiskMap, PhaseClock, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::IoClass;
use crate::key::Key;
use crate::mem::alex::build::span_model;
use crate::mem::alex::data_node::DataNode;
use crate::mem::alex::inner_node::InnerNode;

use super::addr::{Addr, NONE};
use super::data_node::{self, Node};
use super::inner_node::{InnerHeader, INNER_HEADER_BYTES, INVALID, LIVE};
use super::meta::META_BYTES;
use super::tree::{DiskAlex, Step};
use crate::disk::node_pages::NodePages;
use std::sync::Arc;

/// Why a data node is rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Smo {
    /// Full: expand, or split when it cannot grow.
    Full,
    /// Under its contraction threshold after a delete.
    Contract,
}

/// What replaces a data node.
enum Replacement {
    /// One node in its place (expanded, contracted or retrained).
    One(DataNode<u64, u32>),
    /// Two nodes sharing its slots in the parent.
    Sideways(DataNode<u64, u32>, DataNode<u64, u32>),
    /// A new inner node (fanout two, the model given) over two nodes.
    Down(
        crate::mem::alex::model::LinearModel,
        DataNode<u64, u32>,
        DataNode<u64, u32>,
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
        let n = old.h.num_keys as usize;
        let duplication = old.h.duplication;
        let parent = path.last().copied();
        let replacement = if why == Smo::Contract {
            node.resize(d.max_density, false, false, false, &d);
            self.smos.contractions += 1;
            Replacement::One(node)
        } else if n < 2
            || !(n as f64 > d.max_data_slots as f64 * d.min_density || old.h.catastrophic())
        {
            if n < 2 {
                node.resize(d.min_density, true, false, false, &d);
            } else {
                node.expand(&d);
            }
            self.smos.expansions += 1;
            Replacement::One(node)
        } else {
            let (keys, values) = node.drain();
            self.split(&keys, values, duplication, parent)
        };
        let payload = self.meta.params.payload_size;
        let mut take = |v: u32, out: &mut [u8]| {
            let at = v as usize * payload;
            out.copy_from_slice(&payloads[at..at + payload]);
        };
        self.replace(&old, parent, replacement, &mut take)
    }

    /// The two halves of a full node's entries, sideways when its parent slots allow.
    fn split(
        &mut self,
        keys: &[u64],
        values: Vec<u32>,
        duplication: u8,
        parent: Option<Step>,
    ) -> Replacement {
        let d = self.derived;
        if let Some(p) = parent.filter(|_| duplication > 0) {
            let start = InnerNode::run_start(p.slot, duplication);
            let mid = start + (1 << (duplication - 1));
            let fanout = p.header.fanout();
            let cut = keys.partition_point(|k| p.header.model.slot(k.to_model(), fanout) < mid);
            if cut > 0 && cut < keys.len() {
                let (l, r) = values.split_at(cut);
                self.smos.splits_sideways += 1;
                return Replacement::Sideways(
                    DataNode::fresh(&keys[..cut], l.iter().copied(), duplication - 1, &d),
                    DataNode::fresh(&keys[cut..], r.iter().copied(), duplication - 1, &d),
                );
            }
        }
        let mut model = span_model(keys);
        model.scale(2.0);
        let cut = keys.partition_point(|k| model.slot(k.to_model(), 2) == 0);
        let (l, r) = values.split_at(cut);
        self.smos.splits_down += 1;
        Replacement::Down(
            model,
            DataNode::fresh(&keys[..cut], l.iter().copied(), 0, &d),
            DataNode::fresh(&keys[cut..], r.iter().copied(), 0, &d),
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
        let slot = self.slot_bytes();
        let payload = self.meta.params.payload_size;
        let (nodes, inner_model) = match replacement {
            Replacement::One(a) => (vec![a], None),
            Replacement::Sideways(a, b) => (vec![a, b], None),
            Replacement::Down(m, a, b) => (vec![a, b], Some(m)),
        };
        // (1) The new data nodes, each from a block boundary.
        let mut positions = Vec::with_capacity(nodes.len());
        for node in &nodes {
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
            let prev = if i == 0 {
                old.h.prev
            } else {
                encode(positions[i - 1])
            };
            let next = positions.get(i + 1).map_or(old.h.next, |&p| encode(p));
            let bytes = data_node::encode(node, payload, prev, next, payload_of);
            data.write(positions[i], &bytes)?;
        }
        data.commit()?;
        // (2) A new inner node, if any, then the parent's slots or the root.
        let mut inner = NodePages::new(
            Arc::clone(&self.inner),
            IoClass::Inner,
            self.resident.as_deref(),
        );
        let target = match inner_model {
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
                bytes[INNER_HEADER_BYTES..INNER_HEADER_BYTES + 8]
                    .copy_from_slice(&encode(positions[0]).to_le_bytes());
                bytes[INNER_HEADER_BYTES + 8..]
                    .copy_from_slice(&encode(positions[1]).to_le_bytes());
                inner.write(pos, &bytes)?;
                self.meta.inner_end = pos + bytes.len() as u64;
                self.meta.inner_nodes += 1;
                vec![Addr::inner(pos)]
            }
            None => positions.iter().map(|&p| Addr::data(p)).collect(),
        };
        let root_changed = match parent {
            Some(p) => {
                let run = 1usize << old.h.duplication;
                let start = InnerNode::run_start(p.slot, old.h.duplication);
                let per = run / target.len();
                let mut slots = Vec::with_capacity(8 * run);
                for t in &target {
                    for _ in 0..per {
                        slots.extend_from_slice(&t.encode(usable).to_le_bytes());
                    }
                }
                inner.write(p.pos + (INNER_HEADER_BYTES + 8 * start) as u64, &slots)?;
                false
            }
            None => {
                self.meta.root_raw = target[0].encode(usable);
                true
            }
        };
        let written = inner.commit_blocks()?;
        drop(inner);
        self.absorb(written);
        self.meta.data_nodes += nodes.len() as u64 - 1;
        self.meta.data_invalid += old.h.node_bytes(slot);
        if self.meta.first_leaf().pos == old.pos {
            self.meta.first_leaf_raw = encode(positions[0]);
        }
        if root_changed {
            self.write_meta()?;
        }
        // (3) The neighbours' links and the old node's mark.
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
