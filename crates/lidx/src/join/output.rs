//! The output of a join: a table of `(key, left value, right value)` records, its checksum,
//! and the parts that threads write (paper 000 §5.3, §6.4).
//!
//! Every join writes its result as a [`crate::join::Table`] whose value is the left table's
//! value followed by the right table's, whichever side the algorithm used as outer. The paper
//! compares algorithms by time; we also make them prove they agree: the result carries a
//! checksum that every algorithm must reproduce on the same inputs.
//!
//! The checksum is order-independent: the wrapping sum, modulo 2^64, of a 64-bit hash of each
//! output record's bytes ([`record_hash`]: XXH3-64), summed by the output's background writer
//! as it writes each buffer. A sum does not depend on the order records are written in, so threads writing
//! parts in any order and the Grace hash join (whose output is in partition order, not key
//! order) give the same checksum as the sorted algorithms; two outputs that differ in a record
//! differ in their checksum unless the hashes collide. The sorted algorithms (sort-merge, hash,
//! every INLJ) also write in key order, and concatenating thread parts keeps it.
//!
//! Threads (§6.4): each thread writes its own part file; after all finish, the parts are
//! copied into the output table in parallel, at offsets computed from the part sizes, as the
//! paper's threads do. Our records are packed per block, so a part that starts inside a block
//! shares it with the part before: each block of the output is written by exactly one thread,
//! the one whose part holds the block's first record, which reads the few records of the next
//! part that complete its last block. The copy costs one read and one write of the output,
//! spread over the threads. (Writing in place without parts would need each part's size
//! before probing; a key-unique equi-join's count is known only after it.) Part files go in
//! the join's scratch storage ([`OutputSpec::scratch`]) under names made by
//! [`crate::join::scratch_name`], never derived from the output's name (issue 30: `X.part1`
//! truncated and then deleted a user's file of that name), and are deleted afterwards, on
//! errors too.

use crate::error::Result;
use crate::io::Storage;
use crate::join::scratch::{remove_scratch, scratch_name};
use crate::join::table::{write_table_header, Table, TableHeader, TableKey, TableWriter};

/// The 64-bit hash of one output record's bytes that the checksum sums: XXH3 (64-bit), a
/// fast, well-distributed hash for short inputs, so the checksum costs the writer thread a
/// few nanoseconds per record.
#[inline]
pub fn record_hash(record: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(record)
}

/// `dst.copy_from_slice(src)`, with the 8- and 16-byte values of the tables `lidx table create`
/// writes copied as fixed-size words rather than through a `memcpy` call per value (the
/// output's placement is on every match's path).
#[inline(always)]
fn copy_value(dst: &mut [u8], src: &[u8]) {
    match (src.len(), dst.len()) {
        (8, 8) => dst[..8].copy_from_slice(&src[..8]),
        (16, 16) => dst[..16].copy_from_slice(&src[..16]),
        _ => dst.copy_from_slice(src),
    }
}

/// Writes output records and keeps their count and checksum. The records' hashes are summed
/// by the table writer's background thread as it writes each buffer
/// ([`TableWriter::create_digest`]), so the probing thread only places the record's bytes.
pub struct OutputWriter<K> {
    writer: TableWriter<K>,
    left_size: usize,
}

impl<K: TableKey> OutputWriter<K> {
    /// Creates the output table `name` for values of `left_size + right_size` bytes, written
    /// in requests of `write_blocks` blocks.
    pub fn create(
        storage: &Storage,
        name: &str,
        (left_size, right_size): (usize, usize),
        write_blocks: usize,
    ) -> Result<Self> {
        let writer = TableWriter::create_digest(
            storage,
            name,
            left_size + right_size,
            write_blocks,
            record_hash,
        )?;
        Ok(OutputWriter { writer, left_size })
    }

    /// Appends `(key, left, right)`, written in place in the writer's block buffer. `left` and
    /// `right` must have the value sizes the writer was created with.
    #[inline(always)]
    pub fn push(&mut self, key: &K, left: &[u8], right: &[u8]) -> Result<()> {
        let l = K::SIZE + self.left_size;
        self.writer.push_with(|record| {
            key.write_to(&mut record[..K::SIZE]);
            copy_value(&mut record[K::SIZE..l], left);
            copy_value(&mut record[l..], right);
        })
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
        let (header, checksum) = self.writer.finish_digest()?;
        Ok((header.count, checksum))
    }
}

/// Where a join writes: the storage and name of the output table, and the value sizes of the
/// left and right tables.
#[derive(Clone, Copy)]
pub struct OutputSpec<'a> {
    /// Storage of the output table.
    pub storage: &'a Storage,
    /// Where the join's helper files go (thread parts, partitions, scratch indexes): a
    /// directory of the caller's, or a private one [`crate::join::join`] made.
    pub scratch: &'a Storage,
    /// Name of the output table.
    pub name: &'a str,
    /// Left table's value size.
    pub left_size: usize,
    /// Right table's value size.
    pub right_size: usize,
    /// Blocks per write request of each output writer, which holds two such buffers
    /// (`crate::join::table::WRITE_BLOCKS` unless a memory budget asks for less).
    pub write_blocks: usize,
}

/// Runs `work(part, &mut writer)` for `parts` parts (one thread each when `parts > 1`) and
/// gathers their outputs into the output table. Returns `(count, checksum)`.
pub(crate) fn write_parts<K: TableKey>(
    out: OutputSpec<'_>,
    parts: usize,
    work: impl Fn(usize, &mut OutputWriter<K>) -> Result<()> + Sync,
) -> Result<(u64, u64)> {
    let create = |storage: &Storage, name: &str| {
        OutputWriter::<K>::create(
            storage,
            name,
            (out.left_size, out.right_size),
            out.write_blocks,
        )
    };
    if parts <= 1 {
        let mut w = create(out.storage, out.name)?;
        work(0, &mut w)?;
        return w.finish();
    }
    let names: Vec<String> = (0..parts).map(|_| scratch_name("part")).collect();
    let gathered = gather_parts(out, &names, &create, &work);
    for name in &names {
        remove_scratch(out.scratch, name);
    }
    gathered
}

/// Runs `work` on one thread per part, writing part `t` to the scratch file `names[t]`, and
/// copies the parts into the output table. Returns `(count, checksum)`.
fn gather_parts<K: TableKey, W>(
    out: OutputSpec<'_>,
    names: &[String],
    create: &(impl Fn(&Storage, &str) -> Result<OutputWriter<K>> + Sync),
    work: &W,
) -> Result<(u64, u64)>
where
    W: Fn(usize, &mut OutputWriter<K>) -> Result<()> + Sync,
{
    let parts = names.len();
    let results: Vec<Result<(u64, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(t, name)| {
                s.spawn(move || {
                    let mut w = create(out.scratch, name)?;
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
    let mut counts = Vec::with_capacity(parts);
    for r in results {
        let (count, sum) = r?;
        counts.push(count);
        checksum = checksum.wrapping_add(sum);
    }
    let count = copy_parts::<K>(out, names, &counts)?;
    Ok((count, checksum))
}

/// Copies the part tables `names` (of `counts` records) into the output table, in order, one
/// thread per part: thread `t` writes the output's record blocks from the first one that starts
/// inside its part up to the next thread's first, reading the first records of the following
/// parts for its last, shared block. Every block is written once, by one thread, in 4 MiB
/// requests. Returns the output's record count.
fn copy_parts<K: TableKey>(out: OutputSpec<'_>, names: &[String], counts: &[u64]) -> Result<u64> {
    let total: u64 = counts.iter().sum();
    let header = TableHeader {
        count: total,
        key_size: K::SIZE as u32,
        value_size: (out.left_size + out.right_size) as u32,
        fingerprint: 0,
    };
    let device = out.storage.create(out.name)?;
    let per = header.records_per_block(device.payload_size()).max(1) as u64;
    let mut starts = Vec::with_capacity(counts.len() + 1);
    let mut at = 0u64;
    for c in counts {
        starts.push(at);
        at += c;
    }
    starts.push(total);
    let parts: Vec<Table<K>> = names
        .iter()
        .map(|n| Table::open(out.scratch, n))
        .collect::<Result<_>>()?;
    // Thread t owns record blocks first_block(t) .. first_block(t + 1).
    let blocks = total.div_ceil(per);
    let first_block = |t: usize| {
        if t == 0 {
            0
        } else {
            starts[t].div_ceil(per).min(blocks)
        }
    };
    let copy = |t: usize| -> Result<u64> {
        let (from, to) = (first_block(t), first_block(t + 1));
        if from == to {
            return Ok(0);
        }
        let range = from * per..(to * per).min(total);
        let mut writer = TableWriter::<K>::stretch(std::sync::Arc::clone(&device), header, from);
        for (p, part) in parts.iter().enumerate().skip(t) {
            let lo = range.start.max(starts[p]);
            let hi = range.end.min(starts[p + 1]);
            if lo >= range.end {
                break;
            }
            if lo >= hi {
                continue;
            }
            let mut scan = part.scan(lo - starts[p]..hi - starts[p])?;
            while scan.key().is_some() {
                writer.push_record(scan.record())?;
                scan.advance()?;
            }
        }
        writer.finish_stretch().map(|(_, fingerprint)| fingerprint)
    };
    let results: Vec<Result<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parts.len())
            .map(|t| {
                let copy = &copy;
                s.spawn(move || copy(t))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("copy worker panicked"))
            .collect()
    });
    let mut header = header;
    for fingerprint in results {
        header.fingerprint = header.fingerprint.wrapping_add(fingerprint?);
    }
    write_table_header(device.as_ref(), &header)?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use crate::io::{DeviceKind, Storage};
    use crate::join::{join, JoinAlgo, JoinParams, TableRef, TableWriter};

    /// Issue 30, class 2: the thread parts and Grace partitions were `<out>.part<t>` and
    /// `<out>.grace.b<p>` beside the output, truncating and then deleting a user's files of
    /// those names. They now go in a private scratch directory, removed when the join returns.
    #[test]
    fn helper_files_never_take_names_beside_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, 4096).unwrap();
        for (name, step) in [("l", 2u64), ("r", 3)] {
            let mut w = TableWriter::<u64>::create(&storage, name, 8).unwrap();
            for k in (0..5000u64).map(|i| i * step) {
                w.push(&k, &k.to_le_bytes()).unwrap();
            }
            w.finish().unwrap();
        }
        let users = ["o.part0", "o.part1", "o.grace.b0", "o.grace.p0"];
        for name in users {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        let at = |name| TableRef {
            storage: &storage,
            name,
        };
        let mut checksums = Vec::new();
        for algo in [JoinAlgo::SortMerge, JoinAlgo::GraceHash] {
            let params = JoinParams {
                algo,
                threads: 2,
                ..JoinParams::default()
            };
            let report = join::<u64>(at("l"), at("r"), at("o"), &params).unwrap();
            assert_eq!(report.output_count, 1667);
            checksums.push(report.checksum);
        }
        assert_eq!(checksums[0], checksums[1]);
        for name in users {
            assert_eq!(
                std::fs::read(dir.path().join(name)).unwrap(),
                name.as_bytes()
            );
        }
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected = vec!["l", "o", "r"];
        expected.extend(users);
        expected.sort();
        assert_eq!(left, expected);
    }
}
