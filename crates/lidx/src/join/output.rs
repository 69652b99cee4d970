//! The output of a join: a table of `(key, left value, right value)` records, its checksum,
//! and the parts that threads write (paper 000 §5.3, §6.4).
//!
//! Every join writes its result as a [`crate::join::Table`] whose value is the left table's
//! value followed by the right table's, whichever side the algorithm used as outer. The paper
//! compares algorithms by time; we also make them prove they agree: the result carries a
//! checksum that every algorithm must reproduce on the same inputs.
//!
//! The checksum is order-independent: the wrapping sum, modulo 2^64, of a 64-bit hash of each
//! output record's bytes ([`record_hash`]: splitmix64 rounds over the record's 8-byte words and
//! its length). A sum does not depend on the order records are written in, so threads writing
//! parts in any order and the Grace hash join (whose output is in partition order, not key
//! order) give the same checksum as the sorted algorithms; two outputs that differ in a record
//! differ in their checksum unless the hashes collide. The sorted algorithms (sort-merge, hash,
//! every INLJ) also write in key order, and concatenating thread parts keeps it.
//!
//! Threads (§6.4): each thread writes its own part file; after all finish, the parts are
//! copied into the output table in thread order. The paper's threads copy in parallel at
//! offsets computed from the part sizes; our records are packed per block, so a part that
//! starts inside a block shares it with the part before; we copy sequentially through one
//! writer instead, which costs one read and one write of the output (small beside the inputs
//! for the table ratios the paper studies). Part files are deleted afterwards when the storage
//! has a directory.

use crate::error::Result;
use crate::io::Storage;
use crate::join::table::{Table, TableKey, TableWriter};

/// One splitmix64 round.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 64-bit hash of one output record's bytes that the checksum sums.
#[inline]
pub fn record_hash(record: &[u8]) -> u64 {
    let mut h = mix(record.len() as u64);
    let mut words = record.chunks_exact(8);
    for w in &mut words {
        h = mix(h ^ u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        h = mix(h ^ u64::from_le_bytes(last));
    }
    h
}

/// Writes output records and keeps their count and checksum.
pub struct OutputWriter<K> {
    writer: TableWriter<K>,
    checksum: u64,
    record: Vec<u8>,
    left_size: usize,
}

impl<K: TableKey> OutputWriter<K> {
    /// Creates the output table `name` for values of `left_size + right_size` bytes.
    pub fn create(
        storage: &Storage,
        name: &str,
        left_size: usize,
        right_size: usize,
    ) -> Result<Self> {
        Ok(OutputWriter {
            writer: TableWriter::create(storage, name, left_size + right_size)?,
            checksum: 0,
            record: vec![0; K::SIZE + left_size + right_size],
            left_size,
        })
    }

    /// Appends `(key, left, right)`.
    #[inline]
    pub fn push(&mut self, key: &K, left: &[u8], right: &[u8]) -> Result<()> {
        let l = K::SIZE + self.left_size;
        key.write_to(&mut self.record[..K::SIZE]);
        self.record[K::SIZE..l].copy_from_slice(left);
        self.record[l..].copy_from_slice(right);
        self.checksum = self.checksum.wrapping_add(record_hash(&self.record));
        self.writer.push_record(&self.record)
    }

    /// Records written.
    pub fn len(&self) -> u64 {
        self.writer.len()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.writer.is_empty()
    }

    /// Finishes the table; returns `(count, checksum)`.
    pub fn finish(self) -> Result<(u64, u64)> {
        let header = self.writer.finish()?;
        Ok((header.count, self.checksum))
    }
}

/// Where a join writes: the storage and name of the output table, and the value sizes of the
/// left and right tables.
#[derive(Clone, Copy)]
pub struct OutputSpec<'a> {
    /// Storage of the output table (and of the thread parts).
    pub storage: &'a Storage,
    /// Name of the output table.
    pub name: &'a str,
    /// Left table's value size.
    pub left_size: usize,
    /// Right table's value size.
    pub right_size: usize,
}

/// Runs `work(part, &mut writer)` for `parts` parts (one thread each when `parts > 1`) and
/// gathers their outputs into the output table. Returns `(count, checksum)`.
pub fn write_parts<K: TableKey>(
    out: OutputSpec<'_>,
    parts: usize,
    work: impl Fn(usize, &mut OutputWriter<K>) -> Result<()> + Sync,
) -> Result<(u64, u64)> {
    let create =
        |name: &str| OutputWriter::<K>::create(out.storage, name, out.left_size, out.right_size);
    if parts <= 1 {
        let mut w = create(out.name)?;
        work(0, &mut w)?;
        return w.finish();
    }
    let names: Vec<String> = (0..parts)
        .map(|t| format!("{}.part{t}", out.name))
        .collect();
    let results: Vec<Result<(u64, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(t, name)| {
                let work = &work;
                let create = &create;
                s.spawn(move || {
                    let mut w = create(name)?;
                    work(t, &mut w)?;
                    w.finish()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join worker panicked"))
            .collect()
    });
    let mut checksum = 0u64;
    for r in results {
        checksum = checksum.wrapping_add(r?.1);
    }
    let mut writer =
        TableWriter::<K>::create(out.storage, out.name, out.left_size + out.right_size)?;
    for name in &names {
        let part = Table::<K>::open(out.storage, name)?;
        let mut scan = part.scan(0..part.len())?;
        while scan.key().is_some() {
            writer.push_record(scan.record())?;
            scan.advance()?;
        }
    }
    let header = writer.finish()?;
    if let Some(dir) = out.storage.dir() {
        for name in &names {
            // A leftover part file only wastes space; the output is complete.
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    Ok((header.count, checksum))
}
