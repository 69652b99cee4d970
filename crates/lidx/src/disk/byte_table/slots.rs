//! A data block's point index (format version 4): a small hash table at the end of the block
//! from each key that starts in it to its record, so a lookup whose block is cached reads two
//! or three cache lines of it instead of scanning its records from the first.
//!
//! # Why
//!
//! Profiled on the `lsm` engine's in-memory YCSB-C (750K records of 100 bytes, every block
//! cached), the in-place scan of a block's records up to the key was 30% of a get's samples,
//! four fifths of them stalls on the next record's length byte: each record's lengths say
//! where the next starts, so the scan is a chain of loads through half a block on average.
//! LMDB touches about six lines of a page per level. RocksDB's answer is the same as this
//! one (`data_block_hash_index`, a hash of keys to restart points inside each block); ours
//! points at records and keeps a fingerprint beside each, so a probe touches the key's
//! record only when its fingerprint matches.
//!
//! # Layout
//!
//! In a version-4 table the last [`FOOTER`] bytes of every data block's payload hold `n`,
//! the point index's number of buckets (0: the block has none), and are not part of the
//! record stream. When `n > 0` the stream region ends with `n` buckets of [`SLOT`] bytes: the
//! in-block offset of a record starting in the block (`u16`, [`EMPTY`] for none) and one
//! fingerprint byte of its key's hash. The buckets sit in what readers of the stream take as
//! padding: the writer keeps a zero byte between the last record and them, and a stream
//! reader skips from a zero to the next block. Keys go to bucket `(low 32 bits of
//! xxh3-64(key) * n) >> 32` and probe linearly; the fingerprint is the hash's top byte.
//!
//! A block has an index only when every record that starts in it ends in it (then the run of
//! records a lookup is routed to ends in the block, and a key whose probe reaches an empty
//! bucket is not in the table) and when the index costs at most a tenth of the block's stream
//! bytes: records of about 40 bytes or more. Blocks of smaller records are scanned as before.
//! `n` is `records + records / 4 + 1`: at most four buckets in five full, at least one empty.

use std::ops::Range;

use crate::codec::get_varint;

/// Bytes at the end of a version-4 data block's payload: its point index's bucket count.
pub(crate) const FOOTER: usize = 2;
/// Bytes of a bucket: a `u16` record offset and a fingerprint byte.
const SLOT: usize = 3;
/// A bucket that points at no record.
const EMPTY: u16 = u16::MAX;

/// The hash a block's point index is keyed on: xxh3-64, as the key filter's.
#[inline]
pub(crate) fn key_hash(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

/// Buckets of the index of a block of `records` records.
fn buckets_for(records: usize) -> usize {
    records + records / 4 + 1
}

/// Bytes of stream region the index of `records` records takes: its buckets and the zero
/// that ends the records before them.
pub(crate) fn index_bytes(records: usize) -> usize {
    buckets_for(records) * SLOT + 1
}

/// Most bytes of a block's stream region (`cap` bytes) its index may take.
pub(crate) fn index_limit(cap: usize) -> usize {
    cap / 10
}

#[inline]
fn home(hash: u64, n: usize) -> usize {
    (((hash & 0xFFFF_FFFF) * n as u64) >> 32) as usize
}

#[inline]
fn fingerprint(hash: u64) -> u8 {
    (hash >> 56) as u8
}

/// Writes the index of `slots` (each record's in-block offset and key hash) into `payload`,
/// a data block's payload after its prefix: `cap` bytes of stream region and the footer. The
/// caller has kept [`index_bytes`] free at the region's end.
pub(crate) fn write(payload: &mut [u8], cap: usize, slots: &[(u16, u64)]) {
    let n = buckets_for(slots.len());
    let base = cap - n * SLOT;
    let buckets = &mut payload[base..cap];
    for b in buckets.chunks_exact_mut(SLOT) {
        b.copy_from_slice(&[0xFF, 0xFF, 0]);
    }
    for &(offset, hash) in slots {
        let mut i = home(hash, n);
        while u16::from_le_bytes([buckets[i * SLOT], buckets[i * SLOT + 1]]) != EMPTY {
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        buckets[i * SLOT..i * SLOT + 2].copy_from_slice(&offset.to_le_bytes());
        buckets[i * SLOT + 2] = fingerprint(hash);
    }
    payload[cap..cap + FOOTER].copy_from_slice(&(n as u16).to_le_bytes());
}

/// The bucket count in a block's footer (`payload` as in [`write`]).
#[inline]
pub(crate) fn buckets(payload: &[u8], cap: usize) -> usize {
    usize::from(u16::from_le_bytes([payload[cap], payload[cap + 1]]))
}

/// Looks `key` (of hash `hash`) up through the block's index: `Some(Some(range))` is the
/// value's bytes in `payload`, `Some(None)` that no record of the block has the key, `None`
/// that the block has no index or one this reader cannot follow (a record whose lengths run
/// past the buckets): the caller scans the block, which reports any damage.
#[inline]
pub(crate) fn probe(
    payload: &[u8],
    cap: usize,
    key: &[u8],
    hash: u64,
) -> Option<Option<Range<usize>>> {
    // The footer and the buckets share the block's last lines: asking for all of them before
    // reading the footer overlaps the bucket's miss with the footer's.
    crate::search::prefetch_window(&payload[cap - index_limit(cap)..cap + FOOTER]);
    let n = buckets(payload, cap);
    if n == 0 || n * SLOT >= cap {
        return None;
    }
    let base = cap - n * SLOT;
    let (records, buckets) = payload[..cap].split_at(base);
    let (mut i, tag) = (home(hash, n), fingerprint(hash));
    for _ in 0..n {
        let b = &buckets[i * SLOT..i * SLOT + SLOT];
        let offset = u16::from_le_bytes([b[0], b[1]]);
        if offset == EMPTY {
            return Some(None);
        }
        if b[2] == tag {
            crate::search::prefetch_lines(records.as_ptr().wrapping_add(usize::from(offset)), 2);
            let (k, v) = record_at(records, usize::from(offset))?;
            if &records[k.clone()] == key {
                return Some(Some(v));
            }
        }
        i = if i + 1 == n { 0 } else { i + 1 };
    }
    None
}

/// The key's and the value's bytes of the record at `at` in `records`, `None` when its lengths
/// do not fit them.
fn record_at(records: &[u8], at: usize) -> Option<(Range<usize>, Range<usize>)> {
    let (klen, a) = get_varint(records.get(at..)?)?;
    let (vlen, b) = get_varint(records.get(at + a..)?)?;
    let key = at + a + b;
    let value = key.checked_add(usize::try_from(klen).ok()?)?;
    let end = value.checked_add(usize::try_from(vlen).ok()?)?;
    (end <= records.len()).then_some((key..value, value..end))
}

/// Checks a block's index against the records that start in it, each `(offset, end, key
/// hash)` in the block: either the block has none, or it has exactly these records, each
/// found by its probe, its buckets after their last byte and a zero between. The error says
/// what is wrong.
pub(crate) fn verify(
    payload: &[u8],
    cap: usize,
    records: &[(u16, u16, u64)],
) -> Result<(), String> {
    let n = buckets(payload, cap);
    if n == 0 {
        return Ok(());
    }
    let Some(base) = cap.checked_sub(n * SLOT) else {
        return Err(format!(
            "a point index of {n} buckets is larger than the block"
        ));
    };
    let end = records.iter().map(|r| usize::from(r.1)).max();
    if n <= records.len() || end.is_none_or(|e| e >= base || payload[e] != 0) {
        return Err(format!(
            "a point index of {n} buckets for {} records ending at byte {end:?}: it must have \
             an empty bucket and lie after them",
            records.len()
        ));
    }
    let buckets = &payload[base..cap];
    let used = buckets
        .chunks_exact(SLOT)
        .filter(|b| u16::from_le_bytes([b[0], b[1]]) != EMPTY)
        .count();
    if used != records.len() {
        return Err(format!(
            "a point index holds {used} records, {} start in the block",
            records.len()
        ));
    }
    for &(offset, _, hash) in records {
        let mut i = home(hash, n);
        loop {
            let b = &buckets[i * SLOT..i * SLOT + SLOT];
            match u16::from_le_bytes([b[0], b[1]]) {
                o if o == offset && b[2] == fingerprint(hash) => break,
                EMPTY => {
                    return Err(format!(
                        "the point index does not find the record at byte {offset}"
                    ))
                }
                _ => i = if i + 1 == n { 0 } else { i + 1 },
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::put_varint;

    /// A block of `keys` (value = key repeated) with its index; the records' offsets, ends and
    /// hashes.
    fn block(keys: &[&[u8]], cap: usize) -> (Vec<u8>, Vec<(u16, u16, u64)>) {
        let mut payload = Vec::new();
        let mut records = Vec::new();
        for k in keys {
            let at = payload.len() as u16;
            put_varint(&mut payload, k.len() as u64);
            put_varint(&mut payload, 2 * k.len() as u64);
            payload.extend_from_slice(k);
            payload.extend_from_slice(k);
            payload.extend_from_slice(k);
            records.push((at, payload.len() as u16, key_hash(k)));
        }
        payload.resize(cap + FOOTER, 0);
        let slots: Vec<(u16, u64)> = records.iter().map(|r| (r.0, r.2)).collect();
        write(&mut payload, cap, &slots);
        (payload, records)
    }

    #[test]
    fn every_key_is_found_and_others_are_absent() {
        let keys: Vec<Vec<u8>> = (0..40u32)
            .map(|i| format!("key{i:04}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let cap = 4090;
        let (payload, records) = block(&refs, cap);
        assert_eq!(verify(&payload, cap, &records), Ok(()));
        for k in &refs {
            let v = probe(&payload, cap, k, key_hash(k)).unwrap().unwrap();
            assert_eq!(&payload[v], [*k, *k].concat().as_slice());
        }
        for i in 40..400u32 {
            let k = format!("key{i:04}").into_bytes();
            assert_eq!(probe(&payload, cap, &k, key_hash(&k)), Some(None));
        }
    }

    #[test]
    fn a_block_without_an_index_is_scanned() {
        let payload = vec![0u8; 100 + FOOTER];
        assert_eq!(probe(&payload, 100, b"a", key_hash(b"a")), None);
        assert_eq!(verify(&payload, 100, &[]), Ok(()));
    }

    #[test]
    fn verify_finds_a_wrong_index() {
        let cap = 1000;
        let (payload, records) = block(&[b"apple", b"banana", b"cherry"], cap);
        // A record missing from the index.
        let mut p = payload.clone();
        let base = cap - buckets(&p, cap) * SLOT;
        let slot = (0..buckets(&p, cap))
            .find(|i| p[base + i * SLOT..base + i * SLOT + 2] != [0xFF, 0xFF])
            .unwrap();
        p[base + slot * SLOT..base + slot * SLOT + 2].copy_from_slice(&[0xFF, 0xFF]);
        assert!(verify(&p, cap, &records).is_err());
        // A fingerprint changed.
        let mut p = payload.clone();
        p[base + slot * SLOT + 2] ^= 1;
        assert!(verify(&p, cap, &records).is_err());
        // More records than the index knows of.
        let mut more = records.clone();
        more.push((900, 910, key_hash(b"zebra")));
        assert!(verify(&payload, cap, &more).is_err());
        // Buckets over the records.
        let mut p = payload.clone();
        p[cap..cap + FOOTER].copy_from_slice(&330u16.to_le_bytes());
        assert!(verify(&p, cap, &records).is_err());
        // A bucket count larger than the block is refused by both.
        p[cap..cap + FOOTER].copy_from_slice(&400u16.to_le_bytes());
        assert!(verify(&p, cap, &records).is_err());
        assert_eq!(probe(&p, cap, b"apple", key_hash(b"apple")), None);
    }

    #[test]
    fn a_probe_never_reads_past_the_records() {
        // Buckets pointing at garbage: every probe answers or gives up, none panics.
        let cap = 64;
        let mut payload = vec![0xEEu8; cap + FOOTER];
        payload[cap..].copy_from_slice(&4u16.to_le_bytes());
        for i in 0..4 {
            let at = cap - 12 + i * SLOT;
            payload[at..at + 2].copy_from_slice(&(50u16 + i as u16).to_le_bytes());
            payload[at + 2] = fingerprint(key_hash(b"k"));
        }
        assert_eq!(probe(&payload, cap, b"k", key_hash(b"k")), None);
    }
}
