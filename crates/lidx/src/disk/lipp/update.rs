//! Writes: insert with conflict-driven child creation, delete, subtree rebuilds driven by the
//! nodes' statistics, flush, and what a crash leaves.
//!
//! **Insert** (paper 003 §2.2, §4.3): descend as a lookup does to the key's slot. A `NULL`
//! slot takes the entry (one slot written); a `DATA` slot with the key is an update of its
//! payload; a `DATA` slot with another key is a *conflict*: a two-entry child is appended at
//! the end of the file and the slot becomes `NODE` naming it. Then every node on the path
//! counts the insert in its header (entries, inserts, conflicts) and its header is written
//! back: paper 003 O7, "for each insert, LIPP will update all of the nodes in the path", the
//! *maintenance* of its Figure 6. Finally the highest node on the path whose statistics say
//! so ([`crate::mem::LippParams`], the in-memory LIPP's rule) is rebuilt: its subtree is
//! read in key order, built again at the end of the file ([`super::build`]), and its parent's
//! slot (or the meta block, for the root) is pointed at the new subtree.
//!
//! **Delete** (ours; neither LIPP nor paper 003 has one): the slot becomes `NULL` and every
//! node on the path counts one entry less. Then, at the highest node below the root that needs
//! it, as the in-memory LIPP does: a child left empty is dropped (its parent's slot becomes
//! `NULL`), a child left with one entry is folded into its parent's slot as `DATA`, a child
//! left with fewer than `1/shrink` of its build size is rebuilt; the root is rebuilt when it
//! shrank so.
//!
//! **Space.** New nodes are appended at the end of the nodes; replaced and dropped nodes are
//! dead space that is never reused (paper 003 §6.3 reuses none: "we do not consider how to
//! reuse the invalid space"), counted in the meta block ([`super::DiskLipp::dead_bytes`]) and
//! reported by [`crate::disk::DiskIndex::storage_bytes`] as allocated but not used.
//!
//! **Where a write's time goes** ([`DiskMap::write_breakdown`], read by a [`PhaseClock`]):
//! *search* the descent with its reads; *insert* the slot's change and its write; *smo* a new
//! child, a rebuild, a drop or fold of a child, with their reads and writes; *maintenance*
//! the statistics written to every header on the path.
//!
//! **What survives a crash.** There is no log: paper 003's LIPP has none, and neither does
//! this one. Every node write goes to the device at once; the meta block (root, end of the
//! nodes, counts) is written by `flush` and when the root is replaced. Writes are ordered so
//! that the node a crash interrupts is the old one, still valid: a new child or rebuilt
//! subtree is written (after the end the meta block records, where nothing points) before
//! the slot that names it, and the replaced subtree is left as it was, so a crash before the
//! slot's write leaves the old subtree in place with every entry it had. After a crash the
//! file opens with the meta block of the last flush (or root change) over the nodes as the
//! writes since left them:
//!
//! * slot changes (inserts into `NULL` slots, updates, deletes) since the last flush are
//!   there; the entry count is the root header's, written by every insert and delete;
//! * a header write the crash cut off leaves statistics one insert behind: only rebuild
//!   decisions see them;
//! * a child created or a subtree rebuilt since the last flush lies past the end the meta
//!   block records: a read that reaches it fails with [`crate::Error::Corrupt`] naming the
//!   block (a child address must lie inside the nodes), and nothing is answered wrongly. Call
//!   `flush` after writes whose durability matters;
//! * a torn block write is a checksum error naming the block; a slot that crosses a block
//!   boundary is two block writes, and a crash between them is a slot whose halves disagree,
//!   caught as a corrupt address or key when read.

use crate::disk::{DiskMap, PhaseClock, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, IoClass};
use crate::key::Key;

use super::build::write_subtree;
use super::node::{encode_addr, NodeHeader, SlotKind, DATA, NODE};
use super::tree::{DiskLipp, ReadSlot};
use crate::disk::node_pages::NodePages;

/// One node of a descent: its position, header, and the slot the key went to.
struct Step {
    pos: u64,
    header: NodeHeader,
    slot: usize,
}

/// A subtree read whole: its entries in key order and the nodes it held.
struct Collected {
    keys: Vec<u64>,
    payloads: Vec<u8>,
    nodes: Vec<(u64, u64)>,
}

impl DiskLipp {
    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    /// Descends to the slot of model image `m`: the path (every node, its slot last) and the
    /// last slot, which is not `NODE`.
    fn descend(&self, pages: &mut NodePages, m: u64) -> Result<(Vec<Step>, ReadSlot)> {
        let mut path = Vec::new();
        let mut pos = self.meta.root;
        loop {
            let header = self.header(pages, pos)?;
            let slot_index = header.predict(m);
            let slot = self.slot(pages, pos, &header, slot_index)?;
            path.push(Step {
                pos,
                header,
                slot: slot_index,
            });
            match slot.kind {
                SlotKind::Node(child) => pos = child,
                _ => return Ok((path, slot)),
            }
        }
    }

    /// Writes slot `i` of the node at `pos` as `kind` (with `payload` for `DATA`).
    fn write_slot(
        &self,
        pages: &mut NodePages,
        pos: u64,
        i: usize,
        kind: SlotKind,
        payload: &[u8],
    ) -> Result<()> {
        let mut bytes = vec![0u8; self.slot_bytes];
        match kind {
            SlotKind::Null => {}
            SlotKind::Data(k) => {
                bytes[0] = DATA;
                bytes[1..9].copy_from_slice(&k.to_le_bytes());
                bytes[9..].copy_from_slice(payload);
            }
            SlotKind::Node(child) => {
                bytes[0] = NODE;
                bytes[1..9].copy_from_slice(&encode_addr(child, self.usable).to_le_bytes());
            }
        }
        pages.write_as(self.slot_pos(pos, i), &bytes, IoClass::Leaf)
    }

    /// Writes the header of the node at `pos` (and its resident copy).
    fn write_header(&mut self, pages: &mut NodePages, pos: u64, header: &NodeHeader) -> Result<()> {
        let mut bytes = [0u8; super::node::NODE_HEADER];
        header.encode(&mut bytes);
        pages.write_as(pos, &bytes, IoClass::Inner)?;
        if let Some(resident) = &mut self.resident {
            resident.insert(pos, *header);
        }
        Ok(())
    }

    /// Builds the subtree of `keys` (sorted, payloads concatenated) at the end of the nodes
    /// and writes it; returns its root's position.
    fn append_subtree(
        &mut self,
        pages: &mut NodePages,
        keys: &[u64],
        payloads: &[u8],
    ) -> Result<u64> {
        let at = self.meta.end;
        let ps = self.meta.payload_size as usize;
        let mut bytes = Vec::new();
        let mut payload_of = |i: usize, out: &mut [u8]| {
            out.copy_from_slice(&payloads[i * ps..(i + 1) * ps]);
        };
        let mut sink = |b: &[u8]| {
            bytes.extend_from_slice(b);
            Ok(())
        };
        let written = write_subtree(
            keys,
            &mut payload_of,
            &self.meta.params,
            at,
            self.usable,
            ps,
            &mut sink,
            self.resident.as_mut(),
        )?;
        pages.write_as(at, &bytes, IoClass::Leaf)?;
        pages.commit()?;
        self.meta.end += written.bytes;
        self.meta.nodes += written.nodes;
        self.meta.live_bytes += written.bytes;
        self.dirty = true;
        Ok(at)
    }

    /// Reads the subtree at `pos` whole.
    fn collect(&self, pos: u64) -> Result<Collected> {
        let mut out = Collected {
            keys: Vec::new(),
            payloads: Vec::new(),
            nodes: Vec::new(),
        };
        let slot_bytes = self.slot_bytes;
        let (keys, payloads, nodes) = (&mut out.keys, &mut out.payloads, &mut out.nodes);
        self.walk(
            pos,
            &mut |p, h| nodes.push((p, h.node_bytes(slot_bytes))),
            &mut |k, payload| {
                keys.push(k);
                payloads.extend_from_slice(payload);
            },
        )?;
        Ok(out)
    }

    /// Counts the nodes of `gone` as dead space.
    fn retire(&mut self, gone: &[(u64, u64)]) {
        for &(pos, bytes) in gone {
            self.meta.nodes -= 1;
            self.meta.live_bytes -= bytes;
            self.meta.dead_bytes += bytes;
            if let Some(resident) = &mut self.resident {
                resident.remove(&pos);
            }
        }
        self.dirty = true;
    }

    /// Points what names node `path[j]` (its parent's slot, or the meta block for the root)
    /// at `kind`, and commits.
    fn relink(
        &mut self,
        pages: &mut NodePages,
        path: &[Step],
        j: usize,
        kind: SlotKind,
        payload: &[u8],
    ) -> Result<()> {
        if j == 0 {
            let SlotKind::Node(root) = kind else {
                unreachable!("the root is always a node")
            };
            self.meta.root = root;
            return self.flush_meta();
        }
        let parent = &path[j - 1];
        self.write_slot(pages, parent.pos, parent.slot, kind, payload)?;
        pages.commit()
    }

    /// Rebuilds the subtree of `path[j]`: built anew at the end, then linked, then the old
    /// nodes counted dead (see the crash rules in the module docs).
    fn rebuild(&mut self, pages: &mut NodePages, path: &[Step], j: usize) -> Result<()> {
        let old = self.collect(path[j].pos)?;
        let new = self.append_subtree(pages, &old.keys, &old.payloads)?;
        self.relink(pages, path, j, SlotKind::Node(new), &[])?;
        self.retire(&old.nodes);
        Ok(())
    }

    /// Inserts `key` with `payload` (exactly `payload_size` bytes); true when it replaced the
    /// payload of a present key. See the module docs.
    pub fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("insert")?;
        if payload.len() != self.meta.payload_size as usize {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly payload_size() bytes",
            });
        }
        let mut pages = self.pages();
        let (mut path, slot) = self.descend(&mut pages, key.to_model())?;
        self.timing.search_ns += clock.lap();
        let (pos, i) = {
            let last = path.last().expect("a descent visits the root");
            (last.pos, last.slot)
        };
        let conflict = match slot.kind {
            SlotKind::Data(k) if k == key => {
                self.write_slot(&mut pages, pos, i, slot.kind, payload)?;
                pages.commit()?;
                self.timing.insert_ns += clock.lap();
                return Ok(true);
            }
            SlotKind::Data(other) => {
                let old = &slot.bytes[9..];
                let (keys, payloads) = if other < key {
                    ([other, key], [old, payload].concat())
                } else {
                    ([key, other], [payload, old].concat())
                };
                let child = self.append_subtree(&mut pages, &keys, &payloads)?;
                self.write_slot(&mut pages, pos, i, SlotKind::Node(child), &[])?;
                pages.commit()?;
                self.timing.smo_ns += clock.lap();
                true
            }
            _ => {
                self.write_slot(&mut pages, pos, i, SlotKind::Data(key), payload)?;
                pages.commit()?;
                self.timing.insert_ns += clock.lap();
                false
            }
        };
        self.meta.entries += 1;
        self.dirty = true;
        for step in &mut path {
            let h = &mut step.header;
            h.size += 1;
            h.inserts = h.inserts.saturating_add(1);
            h.conflicts = h.conflicts.saturating_add(u32::from(conflict));
        }
        for step in &path {
            self.write_header(&mut pages, step.pos, &step.header)?;
        }
        pages.commit()?;
        self.timing.maintenance_ns += clock.lap();
        let params = self.meta.params;
        let wants = path.iter().position(|s| {
            let h = &s.header;
            params.grown(
                h.size as usize,
                h.build_size as usize,
                h.inserts,
                h.conflicts,
            )
        });
        if let Some(j) = wants {
            self.rebuild(&mut pages, &path, j)?;
            self.timing.smo_ns += clock.lap();
        }
        Ok(false)
    }

    /// Removes `key`; true when it was present. See the module docs.
    pub fn delete(&mut self, key: &u64) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("delete")?;
        let mut pages = self.pages();
        let (mut path, slot) = self.descend(&mut pages, key.to_model())?;
        self.timing.search_ns += clock.lap();
        if slot.kind != SlotKind::Data(*key) {
            return Ok(false);
        }
        let last = path.last().expect("a descent visits the root");
        self.write_slot(&mut pages, last.pos, last.slot, SlotKind::Null, &[])?;
        pages.commit()?;
        self.timing.insert_ns += clock.lap();
        self.meta.entries -= 1;
        self.dirty = true;
        for step in &mut path {
            step.header.size -= 1;
        }
        for step in &path {
            self.write_header(&mut pages, step.pos, &step.header)?;
        }
        pages.commit()?;
        self.timing.maintenance_ns += clock.lap();
        let params = self.meta.params;
        let shrunk = |h: &NodeHeader| params.shrunk(h.size as usize, h.build_size as usize);
        let repair = path.iter().enumerate().position(|(j, s)| {
            let h = &s.header;
            shrunk(h) || (j > 0 && h.size <= 1)
        });
        if let Some(j) = repair {
            match path[j].header.size {
                0 | 1 if j > 0 => {
                    let old = self.collect(path[j].pos)?;
                    let kind = match old.keys.first() {
                        Some(&k) => SlotKind::Data(k),
                        None => SlotKind::Null,
                    };
                    self.relink(&mut pages, &path, j, kind, &old.payloads)?;
                    self.retire(&old.nodes);
                }
                _ => self.rebuild(&mut pages, &path, j)?,
            }
            self.timing.smo_ns += clock.lap();
        }
        Ok(true)
    }

    /// Writes the meta block (no sync).
    pub(super) fn flush_meta(&mut self) -> Result<()> {
        let mut block = AlignedBuf::zeroed(self.dev.block_size());
        self.meta.encode(&mut block[..self.usable]);
        self.dev.write_blocks(0, &mut block, IoClass::Header)?;
        self.dirty = false;
        Ok(())
    }

    /// Writes the meta block and syncs: every write so far is durable.
    pub fn flush(&mut self) -> Result<()> {
        self.check_writable("flush")?;
        self.flush_meta()?;
        self.dev.sync()
    }
}

/// LIPP as one of paper 003's updatable on-disk indexes.
impl DiskMap<u64> for DiskLipp {
    fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        DiskLipp::insert(self, key, payload)
    }

    fn delete(&mut self, key: &u64) -> Result<bool> {
        DiskLipp::delete(self, key)
    }

    fn flush(&mut self) -> Result<()> {
        DiskLipp::flush(self)
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.timing
    }
}
