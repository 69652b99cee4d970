//! Joining one bucket pair in memory: sort both sides, merge equal keys, and the fallback for
//! a pair larger than the budget (key sub-ranges, see [`super`]): [`join_bucket`].

use super::reader::BucketReader;
use crate::error::{Error, Result};
use crate::key::Key;

/// What a join does with one match: `emit(key, left record, right record)`.
pub(super) type Emit<'a, K> = dyn FnMut(&K, &[u8], &[u8]) -> Result<()> + 'a;

/// Records of one side, with their keys in sorted order.
fn sort_records<K: Key>(recs: &[u8], rs: usize, index: &mut Vec<(K, u32)>) {
    index.clear();
    index.extend(
        recs.chunks_exact(rs)
            .enumerate()
            .map(|(i, r)| (K::read_from(&r[..K::SIZE]), i as u32)),
    );
    index.sort_unstable_by(|a, b| {
        a.0.key_cmp(&b.0).then_with(|| {
            let (x, y) = (a.1 as usize * rs, b.1 as usize * rs);
            recs[x..x + rs].cmp(&recs[y..y + rs])
        })
    });
}

/// Reusable buffers of [`join_bucket`].
pub(super) struct JoinScratch<K> {
    left: Vec<u8>,
    right: Vec<u8>,
    left_index: Vec<(K, u32)>,
    right_index: Vec<(K, u32)>,
}

impl<K> Default for JoinScratch<K> {
    fn default() -> Self {
        JoinScratch {
            left: Vec::new(),
            right: Vec::new(),
            left_index: Vec::new(),
            right_index: Vec::new(),
        }
    }
}

/// Sorts the two sides and emits every pair of records with equal keys, in key order.
fn merge<K: Key>(
    s: &mut JoinScratch<K>,
    lrs: usize,
    rrs: usize,
    emit: &mut Emit<'_, K>,
) -> Result<()> {
    sort_records(&s.left, lrs, &mut s.left_index);
    sort_records(&s.right, rrs, &mut s.right_index);
    let (li, ri) = (&s.left_index, &s.right_index);
    let (mut i, mut j) = (0, 0);
    while i < li.len() && j < ri.len() {
        match li[i].0.key_cmp(&ri[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let key = li[i].0;
                let i_end = i + li[i..]
                    .iter()
                    .take_while(|e| e.0.key_cmp(&key).is_eq())
                    .count();
                let j_end = j + ri[j..]
                    .iter()
                    .take_while(|e| e.0.key_cmp(&key).is_eq())
                    .count();
                for &(_, l) in &li[i..i_end] {
                    let l = &s.left[l as usize * lrs..(l as usize + 1) * lrs];
                    for &(_, r) in &ri[j..j_end] {
                        emit(&key, l, &s.right[r as usize * rrs..(r as usize + 1) * rrs])?;
                    }
                }
                i = i_end;
                j = j_end;
            }
        }
    }
    Ok(())
}

/// The key at which to cut the kept records of both sides so that fewer remain: their median,
/// or, when the median is the smallest kept key, the next larger key. `None` when every kept
/// record has the same key.
fn cut_key<K: Key>(s: &JoinScratch<K>, lrs: usize, rrs: usize) -> Option<K> {
    let mut keys: Vec<K> = s
        .left
        .chunks_exact(lrs)
        .map(|r| K::read_from(&r[..K::SIZE]))
        .chain(
            s.right
                .chunks_exact(rrs)
                .map(|r| K::read_from(&r[..K::SIZE])),
        )
        .collect();
    let mid = keys.len() / 2;
    let (below, median, _) = keys.select_nth_unstable_by(mid, |a, b| a.key_cmp(b));
    let median = *median;
    if below.iter().any(|k| k.key_lt(&median)) {
        return Some(median);
    }
    keys.iter()
        .filter(|k| median.key_lt(k))
        .min_by(|a, b| a.key_cmp(b))
        .copied()
}

fn retain_below<K: Key>(recs: &mut Vec<u8>, rs: usize, hi: &K) {
    let mut w = 0;
    for r in 0..recs.len() / rs {
        let at = r * rs;
        if K::read_from(&recs[at..at + K::SIZE]).key_lt(hi) {
            recs.copy_within(at..at + rs, w);
            w += rs;
        }
    }
    recs.truncate(w);
}

/// Joins bucket `b` of `left` with bucket `b` of `right`, calling `emit(key, left record,
/// right record)` for every match in key order. At most `cap` records (both sides together)
/// are held; a larger pair is joined in key sub-ranges (see the module docs).
pub(super) fn join_bucket<'p, K: Key>(
    left: &mut BucketReader<'p>,
    right: &mut BucketReader<'p>,
    b: usize,
    cap: usize,
    scratch: &mut JoinScratch<K>,
    emit: &mut Emit<'_, K>,
) -> Result<()> {
    let (lrs, rrs) = (left.part.record_size, right.part.record_size);
    let (ln, rn) = (left.part.bucket_len(b), right.part.bucket_len(b));
    if ln == 0 || rn == 0 {
        return Ok(());
    }
    scratch.left.clear();
    scratch.right.clear();
    if ln + rn <= cap as u64 {
        left.load(b, &mut scratch.left)?;
        right.load(b, &mut scratch.right)?;
        return merge(scratch, lrs, rrs, emit);
    }
    let cap = cap.max(2);
    let mut lo: Option<K> = None;
    loop {
        let mut hi: Option<K> = None;
        scratch.left.clear();
        scratch.right.clear();
        for side in [0, 1] {
            let reader = if side == 0 { &mut *left } else { &mut *right };
            reader.for_each(b, |rec| {
                let key = K::read_from(&rec[..K::SIZE]);
                if lo.is_some_and(|lo| key.key_lt(&lo)) || hi.is_some_and(|hi| !key.key_lt(&hi)) {
                    return Ok(());
                }
                let out = if side == 0 {
                    &mut scratch.left
                } else {
                    &mut scratch.right
                };
                out.extend_from_slice(rec);
                if scratch.left.len() / lrs + scratch.right.len() / rrs > cap {
                    let cut =
                        cut_key(scratch, lrs, rrs).ok_or_else(|| Error::InvalidParameter {
                            name: "memory",
                            value: format!("{cap} records for one bucket pair"),
                            expected: "room for every record of one key in both tables together",
                        })?;
                    retain_below(&mut scratch.left, lrs, &cut);
                    retain_below(&mut scratch.right, rrs, &cut);
                    hi = Some(cut);
                }
                Ok(())
            })?;
        }
        merge(scratch, lrs, rrs, emit)?;
        match hi {
            Some(h) => lo = Some(h),
            None => return Ok(()),
        }
    }
}
