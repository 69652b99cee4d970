//! Writes and merges: a write's path through the log and the stages, the freeze that makes
//! room, and the background merge into new static files.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::RwLock;

use crate::disk::hybrid::dynamic::{DynamicMap, Stage};
use crate::disk::hybrid::merge::{merge_into, write_parts};
use crate::disk::hybrid::static_set::StaticSet;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::kv::hybrid::recovery::Meta;
use crate::kv::wal::Record;
use crate::kv::Manifest;

use super::state::{HybridIndex, Inner, Version, STRIPES, WAL_DIR};

impl<K: Key, D: DynamicMap<K>> HybridIndex<K, D> {
    /// Inserts or updates `key`. Returns once the write is in the log as the fsync policy says
    /// (acknowledged). Errors: `ReadOnly`, `InvalidParameter` for a payload of another length
    /// than the index's, `InvalidKey` (NaN), the log's I/O errors, and a background merge's
    /// error when the write would have to wait for that merge.
    pub fn put(&self, key: K, payload: &[u8]) -> Result<()> {
        if payload.len() != self.inner.options.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly the index's payload_size bytes",
            });
        }
        self.inner.write(key, Some(payload), "put")
    }

    /// Deletes `key` (a tombstone until the next merge). Errors as [`HybridIndex::put`].
    pub fn delete(&self, key: &K) -> Result<()> {
        self.inner.write(*key, None, "delete")
    }

    /// Blocks until no merge is running or pending; returns the error of a failed background
    /// merge (the index keeps serving reads and takes writes until its dynamic stage is full
    /// again; reopen it to retry the merge).
    pub fn wait_for_merges(&self) -> Result<()> {
        let mut m = self.inner.merge.lock();
        loop {
            if let Some(e) = &m.error {
                return Err(e.clone());
            }
            if !m.pending && !m.running {
                return Ok(());
            }
            self.inner.merge_cond.wait(&mut m);
        }
    }

    /// Freezes the dynamic stage and merges it now (if it holds anything), waiting for the
    /// merge; for tests and for a clean state before a read-only benchmark.
    pub fn merge_now(&self) -> Result<()> {
        self.wait_for_merges()?;
        if self.inner.freeze(true)? {
            self.wait_for_merges()?;
        }
        Ok(())
    }
}

impl<K: Key, D: DynamicMap<K>> Inner<K, D> {
    /// True when the dynamic stage of `v` must be frozen.
    pub(super) fn full(&self, v: &Version<K, D>) -> bool {
        let d = v.dynamic.read();
        if d.is_empty() {
            return false;
        }
        if d.len() >= self.options.max_entries(v.statics.len()) || d.slots_exhausted() {
            return true;
        }
        self.options
            .memory_budget
            .is_some_and(|b| d.memory_bytes() + v.statics.memory_bytes() > b)
    }

    pub(super) fn write(&self, key: K, value: Option<&[u8]>, op: &'static str) -> Result<()> {
        let Some(wal) = &self.wal else {
            return Err(Error::ReadOnly { op });
        };
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey { index: 0, reason });
        }
        self.make_room()?;
        let mut key_bytes = [0u8; 64];
        let kb = &mut key_bytes[..K::SIZE];
        key.write_to(kb);
        let stripe = (key.to_model().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize;
        let _stripe = self.stripes[stripe % STRIPES].lock();
        let _gate = self.gate.read();
        let record = match value {
            Some(p) => Record::Put { key: kb, value: p },
            None => Record::Delete { key: kb },
        };
        wal.append(&[record])?;
        let v = self.current();
        let mut stage = v.dynamic.write();
        stage.apply(key, value)
    }

    /// Freezes the dynamic stage when it is full; when it is full and a merge still runs,
    /// waits for that merge (a write stall).
    pub(super) fn make_room(&self) -> Result<()> {
        let mut stalled: Option<Instant> = None;
        let result = loop {
            let v = self.current();
            if !self.full(&v) {
                break Ok(());
            }
            if v.frozen.is_none() {
                match self.freeze(false) {
                    Ok(_) => continue,
                    Err(e) => break Err(e),
                }
            }
            stalled.get_or_insert_with(Instant::now);
            let mut m = self.merge.lock();
            if let Some(e) = &m.error {
                break Err(e.clone());
            }
            if self.current().frozen.is_some() {
                self.merge_cond.wait(&mut m);
            }
        };
        if let Some(t) = stalled {
            self.write_stalls.fetch_add(1, Ordering::Relaxed);
            self.stall_nanos
                .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        result
    }

    /// Makes the dynamic stage the frozen one (when it is full, or when `force` and it is not
    /// empty) and hands it to the merge thread; false when there was nothing to do (a merge
    /// already runs, or another writer froze it first).
    pub(super) fn freeze(&self, force: bool) -> Result<bool> {
        let Some(wal) = &self.wal else {
            return Err(Error::ReadOnly { op: "merge" });
        };
        let _gate = self.gate.write();
        let v = self.current();
        if v.frozen.is_some() || !(self.full(&v) || (force && !v.dynamic.read().is_empty())) {
            return Ok(false);
        }
        let next = wal.rotate()?;
        let fresh = Version {
            dynamic: Arc::new(RwLock::new(Stage::new(self.options.payload_size))),
            frozen: Some(Arc::clone(&v.dynamic)),
            frozen_seq: next - 1,
            statics: Arc::clone(&v.statics),
        };
        *self.version.write() = Arc::new(fresh);
        let mut m = self.merge.lock();
        m.pending = true;
        self.merge_cond.notify_all();
        Ok(true)
    }

    pub(super) fn merge_loop(&self) {
        loop {
            {
                let mut m = self.merge.lock();
                while !m.pending && !m.shutdown {
                    self.merge_cond.wait(&mut m);
                }
                if m.shutdown {
                    return;
                }
                m.pending = false;
                m.running = true;
            }
            let result = self.merge_once();
            let mut m = self.merge.lock();
            m.running = false;
            if let Err(e) = result {
                m.error.get_or_insert(e);
            }
            self.merge_cond.notify_all();
        }
    }

    /// One merge of the frozen stage (module docs of [`crate::kv::hybrid`]: steps 2 to 6).
    pub(super) fn merge_once(&self) -> Result<()> {
        let start = Instant::now();
        let v = self.current();
        let Some(frozen) = v.frozen.clone() else {
            return Ok(());
        };
        let ps = self.options.payload_size;
        let mut manifest = self.manifest.lock();
        let generation = manifest.1;
        let parts = {
            let f = frozen.read();
            let entries = f.entries();
            let expected = v.statics.len() + f.live();
            write_parts(
                &self.storage,
                &self.options.stage(),
                generation,
                expected,
                |out| merge_into(out, &v.statics, &f, &entries),
            )?
        };
        let static_seq = v.frozen_seq;
        let m = Manifest {
            static_files: parts.iter().map(|p| p.name.clone()).collect(),
            wal_segments: vec![WAL_DIR.to_string()],
            static_seq,
            meta: Meta::of::<K>(ps, generation + 1).encode(),
        };
        let store = manifest.0.as_mut().ok_or(Error::ReadOnly { op: "merge" })?;
        store.commit(&m)?;
        manifest.1 = generation + 1;
        drop(manifest);
        {
            let mut slot = self.version.write();
            let now = Arc::clone(&slot);
            *slot = Arc::new(Version {
                dynamic: Arc::clone(&now.dynamic),
                frozen: None,
                frozen_seq: 0,
                statics: Arc::new(StaticSet::new(parts)),
            });
        }
        for p in &v.statics.parts {
            p.retire();
        }
        drop(v);
        if let Some(wal) = &self.wal {
            wal.remove_up_to(static_seq)?;
        }
        self.merges.fetch_add(1, Ordering::Relaxed);
        self.merge_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }
}
