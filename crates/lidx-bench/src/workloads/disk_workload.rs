//! Workloads on on-disk indexes: paper 003's lookup-only and scan-only workloads (§6.1).
//!
//! A lookup is `get` of an existing key (uniformly or YCSB-zipfian chosen, as the in-memory
//! [`crate::workload::Workload`]); a scan is paper 003's range query: the lower bound
//! of an existing start key and the following items, `len` in all (100 by default: the start
//! key + the next 99 items). On byte-string keys the query keys are ranks into the sorted
//! keys ([`DiskWorkload::generate`] over `0..n`), and [`payload_of_bytes`] is the payload.

use crate::error::{BenchError, Result};
use crate::workload::{KeyChoice, Workload, YCSB_ZIPF_THETA};

/// Accepted spellings of a disk workload.
pub const DISK_WORKLOAD_FORMS: &str = "lookup, lookup:zipf, scan (100 items) or scan:<items>";

/// Items a scan returns when the spec does not say (paper 003 §6.1).
pub const DEFAULT_SCAN_LEN: usize = 100;

/// What an on-disk benchmark run issues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DiskWorkload {
    /// `get` of existing keys.
    Lookup(KeyChoice),
    /// Lower bound of an existing start key, then `len` items in all.
    Scan {
        /// Items per scan, the start key included.
        len: usize,
    },
}

impl DiskWorkload {
    /// Parses one of [`DISK_WORKLOAD_FORMS`].
    pub fn parse(spec: &str) -> Result<DiskWorkload> {
        let bad = || BenchError::BadSpec {
            what: "workload",
            got: spec.to_string(),
            expected: DISK_WORKLOAD_FORMS.to_string(),
        };
        match spec.trim() {
            "lookup" | "lookup:uniform" => Ok(DiskWorkload::Lookup(KeyChoice::Uniform)),
            "lookup:zipf" => Ok(DiskWorkload::Lookup(KeyChoice::Zipf {
                theta: YCSB_ZIPF_THETA,
            })),
            "scan" => Ok(DiskWorkload::Scan {
                len: DEFAULT_SCAN_LEN,
            }),
            other => match other.strip_prefix("scan:").map(str::parse::<usize>) {
                Some(Ok(len)) if len > 0 => Ok(DiskWorkload::Scan { len }),
                _ => Err(bad()),
            },
        }
    }

    /// The canonical spelling.
    pub fn label(&self) -> String {
        match self {
            DiskWorkload::Lookup(choice) => Workload::Lookup(*choice).label(),
            DiskWorkload::Scan { len } => format!("scan:{len}"),
        }
    }

    /// The `count` query keys (lookup keys or scan start keys), drawn from the sorted `keys`.
    pub fn generate(&self, keys: &[u64], count: usize, seed: u64) -> Result<Vec<u64>> {
        let choice = match self {
            DiskWorkload::Lookup(choice) => *choice,
            DiskWorkload::Scan { .. } => KeyChoice::Uniform,
        };
        Workload::Lookup(choice).generate(keys, count, seed)
    }
}

/// The payload the benchmarks store with `key`: its FNV-1a hash, little-endian, zero-padded to
/// the payload size. Derived from the key alone, so every answer can be checked.
pub fn payload_of(key: u64, out: &mut [u8]) {
    fill_payload(crate::workload::fnv1a64(key), out);
}

/// Version `version` of `key`'s payload, for workloads that update values: the first 8 bytes
/// are [`payload_of`]'s for `key` mixed with the version, the next 8 the version, the rest
/// zeros; version 0 is [`payload_of`] itself. A payload under 16 bytes has no room for a
/// version and is always version 0's.
pub fn versioned_payload(key: u64, version: u64, out: &mut [u8]) {
    let version = if out.len() < 16 { 0 } else { version };
    fill_payload(
        crate::workload::fnv1a64(key) ^ version.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        out,
    );
    if version != 0 {
        out[8..16].copy_from_slice(&version.to_le_bytes());
    }
}

/// The version `got` is of `key`'s payload ([`versioned_payload`]), `None` when it is none.
pub fn payload_version(key: u64, got: &[u8]) -> Option<u64> {
    let version = match got.get(8..16) {
        Some(v) => u64::from_le_bytes(v.try_into().ok()?),
        None => 0,
    };
    let mut want = vec![0u8; got.len()];
    versioned_payload(key, version, &mut want);
    (want == got).then_some(version)
}

/// The payload the benchmarks store with a byte-string key: [`payload_of`]'s form over the
/// 64-bit FNV-1a hash of the key's bytes. The one definition the byte-key indexes are built
/// with and checked against.
pub fn payload_of_bytes(key: &[u8], out: &mut [u8]) {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let hash = key
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    fill_payload(hash, out);
}

/// `hash`, little-endian, cut or zero-padded to `out`.
fn fill_payload(hash: u64, out: &mut [u8]) {
    let hash = hash.to_le_bytes();
    let n = out.len().min(8);
    out[..n].copy_from_slice(&hash[..n]);
    out[n..].fill(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_labels() {
        for spec in ["lookup:uniform", "lookup:zipf", "scan:100", "scan:7"] {
            assert_eq!(DiskWorkload::parse(spec).unwrap().label(), spec);
        }
        assert_eq!(
            DiskWorkload::parse("scan").unwrap(),
            DiskWorkload::Scan { len: 100 }
        );
        for bad in ["scan:0", "scan:x", "range", ""] {
            assert!(DiskWorkload::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn payloads_depend_on_the_key_only() {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        payload_of(5, &mut a);
        payload_of(5, &mut b);
        assert_eq!(a, b);
        assert_eq!(&a[8..], &[0u8; 8]);
        payload_of(6, &mut b);
        assert_ne!(a, b);
        payload_of_bytes(b"word", &mut a);
        payload_of_bytes(b"word", &mut b);
        assert_eq!((a, &a[8..]), (b, &[0u8; 8][..]));
        payload_of_bytes(b"words", &mut b);
        assert_ne!(a, b);
    }
}
