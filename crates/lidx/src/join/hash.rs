//! Hash joins: in memory on the smaller table (paper 000 §5.3), and partitioned (Grace) when
//! the smaller table does not fit the memory budget.
//!
//! In-memory hash join, as the paper: every record of the smaller (build) table goes into a
//! hash table (`std::collections::HashMap` from key to the record's place in one value arena,
//! where the paper uses `std::unordered_map`), then the larger (probe) table streams through it.
//! The map hashes with one multiply-xorshift round per key word ([`KeyHasher`]) rather than the
//! default SipHash: the keys come from the user's tables, not from an adversary.
//! Output follows the probe table's order, so key order for sorted tables. Threads split the
//! probe table into ranges sharing the one hash table (§6.4: the paper's hash join scales
//! almost linearly since it is CPU bound). Build keys must be unique
//! ([`crate::Error::DuplicateKey`]); neither table needs to be sorted. With a memory budget the
//! join refuses ([`crate::Error::InvalidParameter`]) a build table whose estimated hash table
//! ([`hash_table_bytes`]) exceeds it, and says to use the Grace join.
//!
//! Grace hash join (not in the paper; the issue asks for it): both tables are split by a hash
//! of the key into `P` partition tables on disk, `P` chosen so that one build partition's hash
//! table fits half the budget (the other half holds the partition writers' buffers); then each
//! partition pair is joined in memory. Partition `p` goes to thread `p mod threads`. The output
//! is in partition order, not key order; the order-independent checksum
//! ([`crate::join::output`]) still matches the other algorithms. Without a budget, `P = 8`.
//! Partition files go in the join's scratch storage under names of their own
//! ([`crate::join::scratch_name`]; never derived from the output's name, issue 30) and are
//! deleted afterwards, on errors too.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::{Error, Result};
use crate::join::output::{record_hash, OutputWriter};
use crate::join::scratch::{remove_scratch, scratch_name};
use crate::join::sides::{split_range, Sides};
use crate::join::table::{Scan, Table, TableKey, TableWriter};

/// Partitions of the Grace join when no memory budget is given.
pub(crate) const DEFAULT_GRACE_PARTITIONS: usize = 8;

/// Estimated bytes of the in-memory hash table over `count` records of `K` keys and
/// `value_size`-byte values: the map's entries (key, arena offset, about 1.15 slots per entry
/// and a control byte) and the value arena.
pub(crate) fn hash_table_bytes<K: TableKey>(count: u64, value_size: usize) -> u64 {
    let entry = (K::SIZE + 8) as u64;
    count * (entry * 115 / 100 + 1) + count * value_size as u64
}

/// A fast hasher for table keys: each written word is folded in with a multiply and an
/// xorshift. Not resistant to chosen keys (see the module docs).
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let z = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z ^ (z >> 29)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        let z = (self.0 ^ v).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.0 = z ^ (z >> 31);
    }
}

type KeyMap<K> = HashMap<K, usize, BuildHasherDefault<KeyHasher>>;

/// Keys of the build table and their values in one arena.
struct Built<K> {
    map: KeyMap<K>,
    values: Vec<u8>,
    value_size: usize,
}

impl<K: TableKey> Built<K> {
    fn from_scan(mut scan: Scan<'_, K>, count: usize, value_size: usize) -> Result<Self> {
        let mut map = KeyMap::with_capacity_and_hasher(count, Default::default());
        let mut values = Vec::with_capacity(count * value_size);
        while let Some(key) = scan.key() {
            let at = values.len();
            if map.insert(key, at).is_some() {
                return Err(Error::DuplicateKey {
                    index: scan.position() as usize,
                    key: format!("{key:?}"),
                });
            }
            values.extend_from_slice(scan.value());
            scan.advance()?;
        }
        Ok(Built {
            map,
            values,
            value_size,
        })
    }

    #[inline]
    fn get(&self, key: &K) -> Option<&[u8]> {
        self.map
            .get(key)
            .map(|&at| &self.values[at..at + self.value_size])
    }

    /// Streams `probe` through the table, writing matches.
    fn probe(
        &self,
        sides: &Sides<'_, K>,
        mut probe: Scan<'_, K>,
        out: &mut OutputWriter<K>,
    ) -> Result<()> {
        while let Some(key) = probe.key() {
            if let Some(build_value) = self.get(&key) {
                sides.emit(out, &key, build_value, probe.value())?;
            }
            probe.advance()?;
        }
        Ok(())
    }
}

/// The in-memory hash join; returns `(count, checksum)`.
pub(crate) fn run<K: TableKey>(
    sides: &Sides<'_, K>,
    threads: usize,
    memory: Option<u64>,
) -> Result<(u64, u64)> {
    let outer = sides.outer;
    let need = hash_table_bytes::<K>(outer.len(), outer.value_size());
    if let Some(budget) = memory {
        if need > budget {
            return Err(Error::InvalidParameter {
                name: "memory",
                value: budget.to_string(),
                expected: "at least the in-memory hash table of the smaller table (use \
                           grace-hash for a smaller budget)",
            });
        }
    }
    let built = Built::from_scan(
        outer.scan(0..outer.len())?,
        outer.len() as usize,
        outer.value_size(),
    )?;
    let parts = split_range(sides.inner.len(), threads);
    sides.write(parts.len(), |t, w| {
        built.probe(sides, sides.inner.scan(parts[t].clone())?, w)
    })
}

/// Partition of a key among `partitions`.
#[inline]
fn partition_of<K: TableKey>(key: &K, partitions: usize) -> usize {
    let mut bytes = [0u8; 16];
    key.write_to(&mut bytes);
    (record_hash(&bytes[..K::SIZE]) % partitions as u64) as usize
}

/// Writes the records of `table` into the `names.len()` partition tables `names` of the
/// scratch storage.
fn partition<K: TableKey>(
    sides: &Sides<'_, K>,
    table: &Table<K>,
    names: &[String],
    buffer_blocks: usize,
) -> Result<()> {
    let partitions = names.len();
    let mut writers = names
        .iter()
        .map(|n| {
            TableWriter::<K>::with_buffer(sides.out.scratch, n, table.value_size(), buffer_blocks)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut scan = table.scan(0..table.len())?;
    while let Some(key) = scan.key() {
        writers[partition_of(&key, partitions)].push_record(scan.record())?;
        scan.advance()?;
    }
    for w in writers {
        w.finish()?;
    }
    Ok(())
}

/// The Grace hash join; returns `(count, checksum)`.
pub(crate) fn run_grace<K: TableKey>(
    sides: &Sides<'_, K>,
    threads: usize,
    memory: Option<u64>,
) -> Result<(u64, u64)> {
    let outer = sides.outer;
    let need = hash_table_bytes::<K>(outer.len(), outer.value_size());
    let block = sides.out.storage.block_size() as u64;
    let (partitions, buffer_blocks) = match memory {
        None => (DEFAULT_GRACE_PARTITIONS, crate::join::table::WRITE_BLOCKS),
        Some(budget) => {
            let half = budget / 2;
            let partitions = need.div_ceil(half.max(1)).max(1);
            // Writers for the partitions of one table at a time share the other half.
            let buffer_blocks = (half / partitions.max(1) / block).clamp(1, 256);
            if partitions > 1 << 16 || half < block {
                return Err(Error::InvalidParameter {
                    name: "memory",
                    value: budget.to_string(),
                    expected: "a budget of at least a few blocks per partition (the Grace \
                               join uses at most 65536 partitions)",
                });
            }
            (partitions as usize, buffer_blocks as usize)
        }
    };
    let build_names: Vec<String> = (0..partitions).map(|_| scratch_name("grace-b")).collect();
    let probe_names: Vec<String> = (0..partitions).map(|_| scratch_name("grace-p")).collect();
    let result = grace_join(sides, threads, &build_names, &probe_names, buffer_blocks);
    for name in build_names.iter().chain(&probe_names) {
        remove_scratch(sides.out.scratch, name);
    }
    result
}

/// Partitions both tables into the scratch files `build_names` and `probe_names` and joins
/// each pair in memory; returns `(count, checksum)`.
fn grace_join<K: TableKey>(
    sides: &Sides<'_, K>,
    threads: usize,
    build_names: &[String],
    probe_names: &[String],
    buffer_blocks: usize,
) -> Result<(u64, u64)> {
    let partitions = build_names.len();
    partition(sides, sides.outer, build_names, buffer_blocks)?;
    partition(sides, sides.inner, probe_names, buffer_blocks)?;
    let threads = threads.clamp(1, partitions);
    let storage = sides.out.scratch;
    sides.write(threads, |t, w| {
        for p in (t..partitions).step_by(threads) {
            let build = Table::<K>::open(storage, &build_names[p])?;
            let probe = Table::<K>::open(storage, &probe_names[p])?;
            let built = Built::from_scan(
                build.scan(0..build.len())?,
                build.len() as usize,
                build.value_size(),
            )?;
            built.probe(sides, probe.scan(0..probe.len())?, w)?;
        }
        Ok(())
    })
}
