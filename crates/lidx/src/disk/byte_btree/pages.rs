//! Reading and writing the page file: leaves, overflow runs, and comparisons that may need a
//! key's overflow run.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::io::checksum::BLOCK_TRAILER;
use crate::io::{BlockDevice, IoClass};

use super::leaf::{Geometry, SlotRef, PREFIX_MAX};

/// Blocks written by a read-only open's recovery, kept in memory instead of the file.
type Overlay = Arc<RwLock<HashMap<u64, Box<[u8]>>>>;

/// Reads (and, for the writer, writes) blocks of the page file. Cheap to clone: cursors
/// hold one.
#[derive(Clone)]
pub(crate) struct PageIo {
    device: Arc<dyn BlockDevice>,
    overlay: Option<Overlay>,
    pub(crate) geometry: Geometry,
}

impl PageIo {
    /// Over `device`; with `read_only`, writes go to memory and the file is never changed.
    pub(crate) fn new(device: Arc<dyn BlockDevice>, read_only: bool) -> PageIo {
        let geometry = Geometry {
            payload: device.block_size() - BLOCK_TRAILER,
        };
        PageIo {
            device,
            overlay: read_only.then(Overlay::default),
            geometry,
        }
    }

    pub(crate) fn device(&self) -> &Arc<dyn BlockDevice> {
        &self.device
    }

    pub(crate) fn file(&self) -> &str {
        self.device.name()
    }

    /// Reads `blocks` blocks from `first` in one request; returns them whole (trailers too).
    pub(crate) fn read(&self, first: u64, blocks: u64, class: IoClass) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; blocks as usize * self.device.block_size()];
        self.read_into(first, &mut buf, class)?;
        Ok(buf)
    }

    /// Reads the whole blocks at `first` into `buf` (a whole number of blocks).
    pub(crate) fn read_into(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let bs = self.device.block_size();
        if let Some(overlay) = &self.overlay {
            let overlay = overlay.read();
            if overlay.contains_key(&first) {
                for (i, chunk) in buf.chunks_mut(bs).enumerate() {
                    let b = overlay
                        .get(&(first + i as u64))
                        .ok_or_else(|| Error::Corrupt {
                            file: self.file().to_string(),
                            block: Some(first + i as u64),
                            what: "a run recovery wrote only in part".into(),
                        })?;
                    chunk.copy_from_slice(b);
                }
                return Ok(());
            }
        }
        self.device.read_blocks(first, buf, class)
    }

    /// Writes whole blocks at `first`.
    pub(crate) fn write(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        match &self.overlay {
            Some(overlay) => {
                let mut overlay = overlay.write();
                let bs = self.device.block_size();
                for (i, chunk) in buf.chunks(bs).enumerate() {
                    overlay.insert(first + i as u64, chunk.into());
                }
                Ok(())
            }
            None => self.device.write_blocks(first, buf, class),
        }
    }

    /// Reads the leaf at `block` (its whole block).
    pub(crate) fn read_leaf(&self, block: u64) -> Result<Vec<u8>> {
        self.read(block, 1, IoClass::Leaf)
    }

    /// The first `bytes` bytes of the run at `first`.
    fn run_bytes(&self, first: u64, bytes: usize) -> Result<Vec<u8>> {
        let g = self.geometry;
        let blocks = g.run_blocks(bytes);
        let buf = self.read(first, blocks, IoClass::Data)?;
        let mut out = Vec::with_capacity(bytes);
        for chunk in buf.chunks(self.device.block_size()) {
            let want = (bytes - out.len()).min(g.payload);
            out.extend_from_slice(&chunk[..want]);
        }
        Ok(out)
    }

    /// Writes `key` then `value` as a run at `first`.
    pub(crate) fn write_run(&self, first: u64, key: &[u8], value: &[u8]) -> Result<()> {
        let g = self.geometry;
        let bs = self.device.block_size();
        let blocks = g.run_blocks(key.len() + value.len()) as usize;
        let mut buf = vec![0u8; blocks * bs];
        let mut bytes = key.iter().chain(value).copied();
        for chunk in buf.chunks_mut(bs) {
            for (dst, src) in chunk[..g.payload].iter_mut().zip(bytes.by_ref()) {
                *dst = src;
            }
        }
        self.write(first, &mut buf, IoClass::Data)
    }

    /// The whole key of a record.
    pub(crate) fn full_key(&self, slot: SlotRef<'_>) -> Result<Vec<u8>> {
        match slot {
            SlotRef::Inline { key, .. } => Ok(key.to_vec()),
            SlotRef::Overflow { klen, first, .. } => self.run_bytes(first, klen),
        }
    }

    /// The value of a record.
    pub(crate) fn value(&self, slot: SlotRef<'_>) -> Result<Vec<u8>> {
        match slot {
            SlotRef::Inline { value, .. } => Ok(value.to_vec()),
            SlotRef::Overflow {
                klen, vlen, first, ..
            } => {
                let mut run = self.run_bytes(first, klen + vlen)?;
                Ok(run.split_off(klen))
            }
        }
    }

    /// How a record's key compares with `probe`; reads the key's run only when its prefix
    /// cannot decide.
    pub(crate) fn cmp(&self, slot: SlotRef<'_>, probe: &[u8]) -> Result<Ordering> {
        match slot {
            SlotRef::Inline { key, .. } => Ok(key.cmp(probe)),
            SlotRef::Overflow { prefix, klen, .. } => {
                if klen == prefix.len() {
                    return Ok(prefix.cmp(probe));
                }
                let n = prefix.len().min(probe.len());
                match prefix[..n].cmp(&probe[..n]) {
                    Ordering::Equal if probe.len() < PREFIX_MAX => Ok(Ordering::Greater),
                    Ordering::Equal => Ok(self.full_key(slot)?.as_slice().cmp(probe)),
                    other => Ok(other),
                }
            }
        }
    }
}
