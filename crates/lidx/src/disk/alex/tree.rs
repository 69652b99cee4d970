//! [`DiskAlex`]: the handle of an on-disk ALEX, its open and its reads (lookups and scans).
//!
//! A lookup descends from the root recorded in the meta block: each inner node's model picks
//! a child slot, whose 8-byte address is read from the block holding it (one block often holds
//! the header and the slot, and several levels of small nodes, paper 003 §4.1); at the data
//! node, the header gives the model, the model a slot, and an exponential search around it
//! reads the blocks it touches (§4.3: `log N + log(M/B) + 1`). Reads of the inner-node file are
//! counted as [`IoClass::Inner`], of the data-node file as [`IoClass::Leaf`] (Table 4). With
//! `inner_in_memory` (§6.2, the "hybrid case") the inner-node file is read whole at open and
//! descents read no block of it. Lookups and scans write nothing: the statistics ALEX keeps per
//! node count inserts only (§4.1: "these records are not maintained for read-only queries").

use std::sync::Arc;

use crate::disk::{DiskIndex, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::io::{BlockDevice, IoClass, Storage, BLOCK_TRAILER};
use crate::key::Key;
use crate::mem::alex::params::Derived;

use super::addr::Addr;
use super::data_node::Node;
use super::inner_node::{decode_inner_header, InnerHeader, INNER_HEADER_BYTES, LIVE};
use super::meta::{check_data_header, decode_meta, Meta};
use super::params::DiskAlexParams;
use crate::disk::node_pages::NodePages;

/// Deepest descent accepted: deeper is a cycle in a corrupt file. Widening to either side
/// keeps keys inserted in increasing or decreasing order far from it (see `update`).
const MAX_DEPTH: usize = 256;

/// The inner-node file of index `name`.
pub(crate) fn inner_file(name: &str) -> String {
    format!("{name}.inner")
}

/// The data-node file of index `name`.
pub(crate) fn data_file(name: &str) -> String {
    format!("{name}.data")
}

/// A view of the inner-node file `inner` (its blocks in memory when `resident`), borrowing only
/// these two fields of a [`DiskAlex`] so that an update can change its meta while it writes.
pub(crate) fn inner_pages_of<'a>(
    inner: &Arc<dyn BlockDevice>,
    resident: &'a Option<Vec<Box<[u8]>>>,
) -> NodePages<'a> {
    NodePages::new(Arc::clone(inner), IoClass::Inner, resident.as_deref())
}

/// One step of a descent: the inner node's position, header and the slot taken.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) pos: u64,
    pub(crate) header: InnerHeader,
    pub(crate) slot: usize,
}

/// Counts of the structural modifications since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskAlexSmos {
    /// Data nodes rebuilt larger (or retrained) in new space.
    pub expansions: u64,
    /// Data nodes rebuilt smaller after deletes.
    pub contractions: u64,
    /// Data nodes split in two inside their parent's slots.
    pub splits_sideways: u64,
    /// Data nodes replaced by a new inner node over two data nodes.
    pub splits_down: u64,
    /// Widenings of inner nodes for keys past their domain (a copy of twice the slots, or a
    /// new parent over a node at the largest fanout) or below it (a new node of twice the
    /// slots over the old one).
    pub widenings: u64,
}

/// ALEX on disk, paper 003's Layout #2. See the module docs of `crate::disk::alex`.
pub struct DiskAlex {
    pub(crate) inner: Arc<dyn BlockDevice>,
    pub(crate) data: Arc<dyn BlockDevice>,
    pub(crate) meta: Meta,
    pub(crate) derived: Derived,
    pub(crate) writable: bool,
    /// The inner-node file's blocks, when kept in memory.
    pub(crate) resident: Option<Vec<Box<[u8]>>>,
    pub(crate) breakdown: WriteBreakdown,
    pub(crate) smos: DiskAlexSmos,
}

impl DiskAlex {
    /// Opens the index `name` of `storage` (files `<name>.inner` and `<name>.data`), for
    /// writing too when `writable`; with `inner_in_memory` the inner-node file is read whole
    /// now and kept in memory (paper 003 §6.2).
    ///
    /// Errors: the devices' I/O errors, [`Error::ChecksumMismatch`] and [`Error::Truncated`]
    /// naming file and block, [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::IndexMismatch`] (the two files are not of one index, or another block size),
    /// [`Error::Corrupt`].
    pub fn open(
        storage: &Storage,
        name: &str,
        writable: bool,
        inner_in_memory: bool,
    ) -> Result<DiskAlex> {
        let inner = storage.open(&inner_file(name), writable)?;
        let data = storage.open(&data_file(name), writable)?;
        let usable = inner.payload_size();
        let mut block = vec![0u8; inner.block_size()];
        inner.read_blocks(0, &mut block, IoClass::Header)?;
        let meta = decode_meta(&block[..usable], inner.name())?;
        if meta.block_size as usize != inner.block_size() {
            return Err(Error::IndexMismatch {
                file: inner.name().to_string(),
                holds: format!("block size {}", meta.block_size),
                asked: format!("block size {}", inner.block_size()),
            });
        }
        data.read_blocks(0, &mut block, IoClass::Header)?;
        check_data_header(&block[..usable], data.name(), &meta)?;
        for (dev, end) in [(&inner, meta.inner_end), (&data, meta.data_end)] {
            let need = end.div_ceil(usable as u64);
            if dev.len_blocks() < need {
                return Err(Error::Truncated {
                    file: dev.name().to_string(),
                    what: format!("{need} blocks of nodes, {} present", dev.len_blocks()),
                });
            }
        }
        let derived = meta.params.check(meta.block_size as usize)?;
        let resident = if inner_in_memory {
            let blocks = inner.len_blocks() as usize;
            let mut all = vec![0u8; blocks * inner.block_size()];
            inner.read_blocks(0, &mut all, IoClass::Inner)?;
            Some(
                all.chunks_exact(inner.block_size())
                    .map(Box::from)
                    .collect(),
            )
        } else {
            None
        };
        Ok(DiskAlex {
            inner,
            data,
            meta,
            derived,
            writable,
            resident,
            breakdown: WriteBreakdown::default(),
            smos: DiskAlexSmos::default(),
        })
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> DiskAlexParams {
        self.meta.params
    }

    /// Live data nodes and inner nodes.
    pub fn node_counts(&self) -> (u64, u64) {
        (self.meta.data_nodes, self.meta.inner_nodes)
    }

    /// Bytes of nodes marked invalid by structural modifications, which are not reused
    /// (paper 003 §6.3 does not reuse them either).
    pub fn invalid_bytes(&self) -> u64 {
        self.meta.inner_invalid + self.meta.data_invalid
    }

    /// Structural modifications since open.
    pub fn smos(&self) -> DiskAlexSmos {
        self.smos
    }

    pub(crate) fn slot_bytes(&self) -> usize {
        self.meta.params.slot_bytes()
    }

    pub(crate) fn usable(&self) -> usize {
        self.inner.payload_size()
    }

    /// A view of the inner-node file for one operation.
    pub(crate) fn inner_pages(&self) -> NodePages<'_> {
        inner_pages_of(&self.inner, &self.resident)
    }

    /// A view of the data-node file for one operation.
    pub(crate) fn data_pages(&self) -> NodePages<'static> {
        NodePages::new(Arc::clone(&self.data), IoClass::Leaf, None)
    }

    /// Reads the header of the live inner node at `pos`.
    pub(crate) fn inner_header(&self, pages: &mut NodePages, pos: u64) -> Result<InnerHeader> {
        let block = pages.block_of(pos);
        let file = pages.file().to_string();
        let corrupt = |what: String| Error::Corrupt {
            file: file.clone(),
            block: Some(block),
            what,
        };
        if pos + INNER_HEADER_BYTES as u64 > self.meta.inner_end {
            return Err(corrupt(format!("inner node at {pos} past the nodes' end")));
        }
        let mut b = [0u8; INNER_HEADER_BYTES];
        pages.read(pos, &mut b)?;
        let h = decode_inner_header(&b, pages.file(), block)?;
        if pos + h.node_bytes() > self.meta.inner_end {
            return Err(corrupt(format!(
                "inner node at {pos} runs past the nodes' end"
            )));
        }
        if h.state != LIVE {
            return Err(corrupt(format!("inner node at {pos} is marked invalid")));
        }
        Ok(h)
    }

    /// The data node `key` routes to (its position), the inner nodes on the way in `path`.
    pub(crate) fn descend(
        &self,
        inner: &mut NodePages,
        key: u64,
        mut path: Option<&mut Vec<Step>>,
    ) -> Result<u64> {
        let usable = self.usable();
        let mut addr = self.meta.root();
        for _ in 0..MAX_DEPTH {
            if addr.data {
                return Ok(addr.pos);
            }
            let header = self.inner_header(inner, addr.pos)?;
            let slot = header.model.slot(key.to_model(), header.fanout());
            let at = addr.pos + (INNER_HEADER_BYTES + 8 * slot) as u64;
            let raw = inner.u64(at)?;
            let block = inner.block_of(at);
            let child = Addr::decode_in(raw, usable, inner.file(), block)?;
            let end = if child.data {
                self.meta.data_end
            } else {
                self.meta.inner_end
            };
            if child.pos >= end {
                return Err(Error::Corrupt {
                    file: inner.file().to_string(),
                    block: Some(block),
                    what: format!("child address {raw:#x} past the end of its file's nodes"),
                });
            }
            if let Some(p) = path.as_deref_mut() {
                p.push(Step {
                    pos: addr.pos,
                    header,
                    slot,
                });
            }
            addr = child;
        }
        Err(Error::Corrupt {
            file: inner.file().to_string(),
            block: None,
            what: format!("descent deeper than {MAX_DEPTH} inner nodes: a cycle"),
        })
    }

    /// Opens the data node at `pos`.
    pub(crate) fn node(&self, data: &mut NodePages, pos: u64) -> Result<Node> {
        Node::open(data, pos, self.slot_bytes(), self.meta.data_end)
    }
}

impl DiskIndex<u64> for DiskAlex {
    fn len(&self) -> u64 {
        self.meta.len
    }

    fn keys_fingerprint(&self) -> u64 {
        self.meta.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.meta.params.payload_size
    }

    fn get(&self, key: &u64, payload: &mut [u8]) -> Result<bool> {
        let (mut inner, mut data) = (self.inner_pages(), self.data_pages());
        let pos = self.descend(&mut inner, *key, None)?;
        let node = self.node(&mut data, pos)?;
        match node.find(&mut data, *key)? {
            Some(at) => {
                node.payload(&mut data, at, payload)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        if limit == 0 {
            return Ok(0);
        }
        let (mut inner, mut data) = (self.inner_pages(), self.data_pages());
        let pos = self.descend(&mut inner, *start, None)?;
        let mut node = self.node(&mut data, pos)?;
        let mut slot = node.seek(&mut data, *start)?;
        let size = self.payload_size();
        let mut found = 0;
        let mut hops = 0u64;
        loop {
            while let Some(i) = slot {
                keys.push(node.key(&mut data, i)?);
                let at = payloads.len();
                payloads.resize(at + size, 0);
                node.payload(&mut data, i, &mut payloads[at..])?;
                found += 1;
                if found == limit {
                    return Ok(found);
                }
                slot = node.next_occupied(&mut data, i + 1)?;
            }
            let Some(next) = node.next(self.usable()) else {
                return Ok(found);
            };
            hops += 1;
            if !next.data || hops > self.meta.data_nodes {
                return Err(Error::Corrupt {
                    file: data.file().to_string(),
                    block: Some(data.block_of(node.pos)),
                    what: "data node chain does not end".into(),
                });
            }
            node = self.node(&mut data, next.pos)?;
            slot = node.next_occupied(&mut data, 0)?;
        }
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .resident
                .as_ref()
                .map_or(0, |r| r.iter().map(|b| b.len()).sum())
    }

    fn disk_bytes(&self) -> u64 {
        (self.inner.len_blocks() + self.data.len_blocks()) * self.inner.block_size() as u64
    }

    fn storage_bytes(&self) -> StorageBytes {
        let allocated = self.disk_bytes();
        StorageBytes {
            allocated,
            used: allocated.saturating_sub(self.invalid_bytes()),
            free: 0,
        }
    }

    fn describe(&self) -> String {
        let p = &self.meta.params.alex;
        format!(
            "alex on disk (layout #2): {} data nodes, {} inner nodes, max node {} B, densities \
             {}/{}/{}%, payload {} B, inner nodes {}",
            self.meta.data_nodes,
            self.meta.inner_nodes,
            p.max_node_bytes,
            p.min_density_percent,
            p.init_density_percent,
            p.max_density_percent,
            self.meta.params.payload_size,
            if self.resident.is_some() {
                "in memory"
            } else {
                "on disk"
            },
        )
    }
}

/// Usable bytes of blocks of `block_size` bytes.
pub(crate) fn usable_of(block_size: usize) -> usize {
    block_size - BLOCK_TRAILER
}
