//! The checked runner for on-disk indexes over byte-string keys
//! ([`crate::byte_disk_registry`]): paper 003 §6.1's lookup-only and scan workloads, as
//! [`crate::disk_runner`] runs them, on the same runs, threads, I/O accounting and record
//! (`disk_runner::measure`), so the figures sit in the same [`DiskRecord`] table.
//!
//! A query is the rank of a key in the dataset's sorted unique keys ([`RankedKeys`]), drawn as
//! [`DiskWorkload::generate`] draws `u64` keys (uniform or zipfian over ranks, uniform scan
//! starts). Every answer is checked: a lookup must find its key with
//! [`payload_of_bytes`] of it; a scan must return exactly the records from its start key on,
//! `len` of them (fewer at the end), each with its payload. The first wrong answer fails the
//! run with [`BenchError::WrongResult`], whose `key` is the rank (the message names the key).

use lidx::io::Storage;
use lidx::raw::mem::string_index::escape;

use crate::byte_disk_registry::ByteDiskIndex;
use crate::disk_runner::{measure, DiskBenchConfig, Measured};
use crate::disk_workload::{payload_of_bytes, DiskWorkload};
use crate::error::{BenchError, Result};
use crate::records::DiskRecord;
use crate::runner::Progress;
use crate::runners::core::{check_payload, ThreadRun};
use crate::store_keys::RankedKeys;

/// Queries over a dataset's byte-string keys, prepared once per dataset.
pub struct ByteDiskBench<'a> {
    dataset: &'a str,
    keys: &'a RankedKeys,
    payload_size: usize,
    queries: Vec<u64>,
    config: DiskBenchConfig,
}

impl<'a> ByteDiskBench<'a> {
    /// Draws the queries over the ranks of `keys` (the sorted unique keys, as indexed, each
    /// with a `payload_size`-byte value) of the dataset named `dataset`.
    pub fn prepare(
        dataset: &'a str,
        keys: &'a RankedKeys,
        payload_size: usize,
        config: DiskBenchConfig,
    ) -> Result<Self> {
        let queries =
            config
                .workload
                .generate(&keys.ranks(), config.queries.max(1), config.seed)?;
        Ok(ByteDiskBench {
            dataset,
            keys,
            payload_size,
            queries,
            config,
        })
    }

    /// Runs the workload on `index` (stored in `storage`), checking every answer.
    pub fn run_index(
        &self,
        label: &str,
        index: &dyn ByteDiskIndex,
        storage: &Storage,
        build_s: f64,
        progress: &mut dyn Progress,
    ) -> Result<DiskRecord> {
        let facts = (index.len(), index.memory_bytes(), index.disk_bytes());
        let measured = Measured::new(self.dataset, label, facts, build_s);
        measure(
            &measured,
            &self.config,
            &self.queries,
            storage,
            progress,
            |part| self.run_part(label, index, part),
        )
    }

    /// Runs `part` of the queries on this thread, checking each answer.
    fn run_part(&self, label: &str, index: &dyn ByteDiskIndex, part: &[u64]) -> Result<ThreadRun> {
        let mut want = vec![0u8; self.payload_size];
        let mut records = Vec::new();
        let mut run = ThreadRun::new();
        for &rank in part {
            let key = self.keys.get(rank as usize);
            match self.config.workload {
                DiskWorkload::Lookup(_) => {
                    let got = run.time(|| Ok(index.get(key)?))?;
                    payload_of_bytes(key, &mut want);
                    let found = got.as_deref().unwrap_or_default();
                    check_payload(label, rank, got.is_some(), found, &want)
                        .map_err(|e| self.naming(e, rank))?;
                }
                DiskWorkload::Scan { len } => {
                    run.time(|| Ok(index.scan(key, len, &mut records)?))?;
                    self.check_scan(label, rank as usize, len, &records)?;
                }
            }
        }
        Ok(run)
    }

    /// `WrongResult` with the key of `rank` named in its message.
    fn naming(&self, error: BenchError, rank: u64) -> BenchError {
        match error {
            BenchError::WrongResult {
                index,
                op,
                key,
                what,
            } => BenchError::WrongResult {
                index,
                op,
                key,
                what: format!(
                    "{what} (the key of rank {rank}: `{}`)",
                    escape(self.keys.get(rank as usize))
                ),
            },
            other => other,
        }
    }

    fn check_scan(
        &self,
        label: &str,
        start: usize,
        len: usize,
        records: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<()> {
        let end = (start + len).min(self.keys.len());
        let wrong = |what: String| {
            self.naming(
                BenchError::WrongResult {
                    index: label.to_string(),
                    op: "scan",
                    key: start as u64,
                    what,
                },
                start as u64,
            )
        };
        if records.len() != end - start {
            return Err(wrong(format!(
                "returned {} records, expected {}",
                records.len(),
                end - start
            )));
        }
        let mut want = vec![0u8; self.payload_size];
        for (i, (key, value)) in records.iter().enumerate() {
            let expected = self.keys.get(start + i);
            if key[..] != *expected {
                return Err(wrong(format!(
                    "item {i} is `{}`, expected `{}`",
                    escape(key),
                    escape(expected)
                )));
            }
            payload_of_bytes(key, &mut want);
            if *value != want {
                return Err(wrong(format!(
                    "payload of item {i} (`{}`) is wrong",
                    escape(key)
                )));
            }
        }
        Ok(())
    }
}
