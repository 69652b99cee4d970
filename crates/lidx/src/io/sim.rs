//! Simulated block devices: blocks in memory, time charged by a cost model.
//!
//! Paper 000 §3 gives two refinements of the DAM model: the *affine* model, where an I/O of `k`
//! bytes costs `1 + alpha * k` (a fixed setup cost plus a transfer cost), and the *PDAM* model,
//! where `P` I/Os proceed in parallel. A [`SimProfile`] is both: each request costs its
//! `latency` plus `bytes / bandwidth`, and up to `parallelism` requests overlap their latencies.
//! The named profiles come from paper 002 Table 2 (4 KiB random-read latency and sequential
//! bandwidth of each disk). Their parallelism is IOPS x latency from the same table (Little's
//! law: requests in flight at full IOPS), except the HDD: Table 2's 7293 IOPS at 4.8 ms would
//! mean 35 requests in flight, which is command-queue reordering shortening seeks, not a
//! parallel device, so `hdd` has parallelism 1.
//!
//! | profile    | latency  | bandwidth | parallelism |
//! |------------|----------|-----------|-------------|
//! | `hdd`      | 4.8 ms   | 141 MB/s  | 1           |
//! | `sata-ssd` | 211.6 us | 560 MB/s  | 21          |
//! | `nvme`     | 70 us    | 6.9 GB/s  | 77          |
//! | `optane`   | 11.7 us  | 7.2 GB/s  | 18          |
//! | `ram`      | 0        | unlimited | unlimited   |
//!
//! A custom profile is written `lat=<dur>,bw=<bytes/s>,p=<n>`, e.g. `lat=70us,bw=6.9G,p=77`.
//!
//! The device reports modeled time beside wall time: every request adds its latency and its
//! transfer time to [`IoStats`]. One thread issuing requests one after another takes
//! [`IoStats::modeled_serial_ns`]; several threads take [`SimProfile::elapsed_ns`], the largest
//! of the busiest thread's serial time, the summed latencies over `P`, and the summed transfer
//! time (the bandwidth is shared). The model is deterministic, so experiments on it repeat
//! exactly on a noisy machine.
//!
//! Each thread also accumulates the modeled time of the requests it issued
//! ([`thread_modeled_ns`]), so a benchmark with several threads knows each thread's serial time
//! and each operation's own modeled latency.
//!
//! A simulated device may be backed by a file: it is loaded whole at open and written back by
//! `sync`, so an index built on disk can be benchmarked under any profile.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::io::checksum;
use crate::io::device::{check_block_size, check_in_bounds, request_blocks, BlockDevice};
use crate::io::stats::{IoClass, IoCounters, IoStats};

/// The cost model of a simulated device.
#[derive(Clone, Debug, PartialEq)]
pub struct SimProfile {
    /// Profile name, as given on the command line.
    pub name: String,
    /// Fixed cost of one request, in nanoseconds.
    pub latency_ns: u64,
    /// Transfer rate in bytes per second; 0 means unlimited.
    pub bandwidth: u64,
    /// Requests whose latencies overlap (PDAM's `P`); 0 means unlimited.
    pub parallelism: u64,
}

impl SimProfile {
    /// The named profiles of paper 002 Table 2, plus `ram` (free I/O).
    pub fn named(name: &str) -> Option<SimProfile> {
        let (latency_ns, bandwidth, parallelism) = match name {
            "hdd" => (4_800_000, 141_000_000, 1),
            "sata-ssd" => (211_600, 560_000_000, 21),
            "nvme" => (70_000, 6_900_000_000, 77),
            "optane" => (11_700, 7_200_000_000, 18),
            "ram" => (0, 0, 0),
            _ => return None,
        };
        Some(SimProfile {
            name: name.to_string(),
            latency_ns,
            bandwidth,
            parallelism,
        })
    }

    /// Names accepted by [`SimProfile::parse`].
    pub const NAMES: &'static str =
        "hdd, sata-ssd, nvme, optane, ram, or lat=<dur>,bw=<bytes/s>,p=<n>";

    /// Parses a named profile or a custom `lat=70us,bw=6.9G,p=77`.
    pub fn parse(spec: &str) -> Result<SimProfile> {
        if let Some(profile) = SimProfile::named(spec) {
            return Ok(profile);
        }
        let bad = || Error::InvalidParameter {
            name: "sim profile",
            value: spec.to_string(),
            expected: SimProfile::NAMES,
        };
        let mut profile = SimProfile {
            name: spec.to_string(),
            latency_ns: 0,
            bandwidth: 0,
            parallelism: 1,
        };
        for part in spec.split(',') {
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            match k {
                "lat" => profile.latency_ns = parse_duration_ns(v).ok_or_else(bad)?,
                "bw" => profile.bandwidth = parse_scaled(v).ok_or_else(bad)?,
                "p" => profile.parallelism = v.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        Ok(profile)
    }

    /// Modeled cost of one request of `bytes`: (latency, transfer) in ns.
    pub fn request_cost(&self, bytes: u64) -> (u64, u64) {
        let transfer = if self.bandwidth == 0 {
            0
        } else {
            (bytes as u128 * 1_000_000_000 / self.bandwidth as u128) as u64
        };
        (self.latency_ns, transfer)
    }

    /// Modeled elapsed time of the requests in `total` (all threads together), when the busiest
    /// thread alone would need `busiest_thread_ns` issuing its requests one after another.
    pub fn elapsed_ns(&self, total: &IoStats, busiest_thread_ns: u64) -> u64 {
        let overlapped_latency = match self.parallelism {
            0 => 0,
            p => total.modeled_latency_ns / p,
        };
        busiest_thread_ns
            .max(overlapped_latency)
            .max(total.modeled_transfer_ns)
    }
}

fn parse_duration_ns(v: &str) -> Option<u64> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e9)
    } else {
        return None;
    };
    let x: f64 = num.parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| (x * scale).round() as u64)
}

fn parse_scaled(v: &str) -> Option<u64> {
    let (num, scale) = match v.char_indices().last()? {
        (i, 'K') => (&v[..i], 1e3),
        (i, 'M') => (&v[..i], 1e6),
        (i, 'G') => (&v[..i], 1e9),
        _ => (v, 1.0),
    };
    let x: f64 = num.parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| (x * scale).round() as u64)
}

thread_local! {
    static THREAD_MODELED_NS: Cell<u64> = const { Cell::new(0) };
}

/// Modeled device time (latency + transfer) of every simulated request this thread has issued
/// so far, in ns. Subtract two readings for the requests in between.
pub fn thread_modeled_ns() -> u64 {
    THREAD_MODELED_NS.with(Cell::get)
}

/// A block device kept in memory that charges each request by a [`SimProfile`].
pub struct SimDevice {
    name: String,
    block_size: usize,
    profile: SimProfile,
    blocks: RwLock<Vec<u8>>,
    backing: Option<PathBuf>,
    counters: IoCounters,
}

impl SimDevice {
    /// An empty in-memory device.
    pub fn new(name: &str, block_size: usize, profile: SimProfile) -> Result<SimDevice> {
        check_block_size(block_size, false)?;
        Ok(SimDevice {
            name: name.to_string(),
            block_size,
            profile,
            blocks: RwLock::new(Vec::new()),
            backing: None,
            counters: IoCounters::default(),
        })
    }

    /// A device holding the contents of the file at `path` (created empty if `create`), written
    /// back to it by [`BlockDevice::sync`].
    pub fn open_file(
        path: &Path,
        block_size: usize,
        profile: SimProfile,
        create: bool,
    ) -> Result<SimDevice> {
        let mut device = SimDevice::new(&path.display().to_string(), block_size, profile)?;
        let contents = if create {
            std::fs::write(path, b"").map_err(|e| Error::io(&device.name, "create", &e))?;
            Vec::new()
        } else {
            std::fs::read(path).map_err(|e| Error::io(&device.name, "read", &e))?
        };
        if contents.len() % block_size != 0 {
            return Err(Error::Truncated {
                file: device.name.clone(),
                what: format!(
                    "{} bytes is not a whole number of {block_size}-byte blocks",
                    contents.len()
                ),
            });
        }
        device.blocks = RwLock::new(contents);
        device.backing = Some(path.to_path_buf());
        Ok(device)
    }

    /// The cost model.
    pub fn profile(&self) -> &SimProfile {
        &self.profile
    }

    /// Mutable access to the raw bytes (checksums included), for tests that corrupt a block.
    #[doc(hidden)]
    pub fn raw_bytes_mut(&mut self) -> &mut Vec<u8> {
        self.blocks.get_mut()
    }

    fn charge(&self, bytes: u64) {
        let (latency, transfer) = self.profile.request_cost(bytes);
        self.counters.record_model(latency, transfer);
        THREAD_MODELED_NS.with(|t| t.set(t.get() + latency + transfer));
    }
}

impl BlockDevice for SimDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn block_size(&self) -> usize {
        self.block_size
    }

    fn len_blocks(&self) -> u64 {
        (self.blocks.read().len() / self.block_size) as u64
    }

    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let count = request_blocks(&self.name, self.block_size, buf.len())?;
        {
            let blocks = self.blocks.read();
            let have = (blocks.len() / self.block_size) as u64;
            check_in_bounds(&self.name, first, count, have)?;
            let start = first as usize * self.block_size;
            buf.copy_from_slice(&blocks[start..start + buf.len()]);
        }
        self.counters
            .record_read(first, count, self.block_size, class);
        self.charge(buf.len() as u64);
        checksum::verify_run(buf, first, self.block_size, &self.name)
    }

    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let count = request_blocks(&self.name, self.block_size, buf.len())?;
        checksum::seal_run(buf, first, self.block_size);
        {
            let mut blocks = self.blocks.write();
            let start = first as usize * self.block_size;
            let end = start + buf.len();
            if blocks.len() < end {
                blocks.resize(end, 0);
            }
            blocks[start..end].copy_from_slice(buf);
        }
        self.counters
            .record_write(first, count, self.block_size, class);
        self.charge(buf.len() as u64);
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.counters.record_sync();
        if let Some(path) = &self.backing {
            std::fs::write(path, &*self.blocks.read())
                .map_err(|e| Error::io(&self.name, "write back", &e))?;
        }
        Ok(())
    }

    fn stats(&self) -> IoStats {
        self.counters.snapshot()
    }

    fn describe(&self) -> String {
        format!("sim:{}", self.profile.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_and_charge() {
        let nvme = SimProfile::parse("nvme").unwrap();
        assert_eq!(nvme.request_cost(4096), (70_000, 593));
        let custom = SimProfile::parse("lat=10us,bw=1G,p=4").unwrap();
        assert_eq!(custom.latency_ns, 10_000);
        assert_eq!(custom.bandwidth, 1_000_000_000);
        assert_eq!(custom.parallelism, 4);
        assert!(SimProfile::parse("floppy").is_err());
        assert!(SimProfile::parse("lat=10parsecs").is_err());
    }

    #[test]
    fn round_trip_counts_and_model() {
        let dev = SimDevice::new("t", 4096, SimProfile::named("hdd").unwrap()).unwrap();
        let mut buf = vec![5u8; 3 * 4096];
        dev.write_blocks(0, &mut buf, IoClass::Leaf).unwrap();
        let mut back = vec![0u8; 2 * 4096];
        dev.read_blocks(1, &mut back, IoClass::Leaf).unwrap();
        assert!(back.chunks(4096).all(|b| b[..4092].iter().all(|&x| x == 5)));
        let s = dev.stats();
        assert_eq!((s.read_requests, s.read_blocks, s.write_blocks), (1, 2, 3));
        assert_eq!(s.modeled_latency_ns, 2 * 4_800_000);
        assert_eq!(thread_modeled_ns(), s.modeled_serial_ns());
        assert!(matches!(
            dev.read_blocks(2, &mut back, IoClass::Leaf),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            dev.read_blocks(0, &mut back[..100], IoClass::Leaf),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn corrupt_block_is_a_checksum_error() {
        let mut dev = SimDevice::new("t", 4096, SimProfile::named("ram").unwrap()).unwrap();
        let mut buf = vec![1u8; 2 * 4096];
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        dev.raw_bytes_mut()[4096 + 10] ^= 0x40;
        let mut back = vec![0u8; 4096];
        dev.read_blocks(0, &mut back, IoClass::Data).unwrap();
        assert!(matches!(
            dev.read_blocks(1, &mut back, IoClass::Data),
            Err(Error::ChecksumMismatch { block: 1, .. })
        ));
    }
}
