//! LeCo learned compression: an immutable sequence of `u64` values with O(1) random access.
//!
//! Paper 002 §7 (G4), after LeCo (its reference \[18\]): "the dataset is divided into multiple
//! partitions, and a linear model (θ0, θ1) is applied to each partition"; each value is stored
//! as its error from the model in `b` bits, `b` the partition's widest error, so a value is
//! decoded from its partition's model and one bit-packed error. Paper 002 uses it for the first
//! keys of a learned index's models (§7) and for the block minimums of a zone map (§8); §8.2
//! relaxes the exactness: a zone map only needs *some* separator inside an interval per block
//! ("rough" separators), chosen so that the errors are narrow.
//!
//! What we do, and why:
//!
//! * **Fixed power-of-two partitions.** Value `i` lives in partition `i >> shift`, so `get` needs
//!   no directory search. LeCo also offers variable-length partitions (split where the fit
//!   breaks); they need a search over partition starts on every access and pay off only where
//!   the data changes regime inside a partition. Instead we try every partition size from 16
//!   to 1024 and keep the smallest encoding ([`LecoParams::partition`] fixes one), so the
//!   automatic choice is never larger than any fixed size in that range, at seven encodings'
//!   build cost.
//! * **Exact decoding with a float slope.** A partition stores `base: u64`, `slope: f64` and a
//!   width `w`; value `j` of the partition is
//!   `base + trunc(slope * j) + delta_j (mod 2^64)`, `delta_j < 2^w`. The errors are computed at
//!   build time with the very same expression (`f64` multiplication is deterministic), so any
//!   slope decodes exactly; the slope only decides how narrow the errors are. Working modulo
//!   `2^64` handles `u64::MAX` and huge gaps: if a fitted line would need errors wider than 64
//!   bits, the partition falls back to slope 0, whose errors are the values minus their minimum.
//! * **Minimax slope.** LeCo fits least squares; the width depends on the *spread* of the
//!   errors, so we minimise the spread: for intervals `[lo_j, hi_j]` the spread for slope `s` is
//!   `max_j(lo_j - s*j) - min_j(hi_j - s*j)` (clamped at 0), a convex function of `s` that a
//!   golden-section search minimises (in `f64`, to within 1/256 of the spread); exact values
//!   are the case `lo_j == hi_j`. Given the slope, the value picked in interval `j` is the one
//!   nearest the line, which achieves that spread.
//! * **Memory.** Per partition 24 bytes (base, slope, bit offset and width packed in one word),
//!   then the bit-packed errors with one padding word so a read of two words never leaves the
//!   vector.
//!
//! [`LecoArray::lower_bound`] and [`LecoArray::upper_bound`] binary-search non-decreasing
//! sequences: first over the partitions' first values, then inside one partition.

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};

/// Partition sizes the automatic choice tries: `2^4 ..= 2^10`.
const AUTO_SHIFTS: std::ops::RangeInclusive<u32> = 4..=10;
/// Largest partition size accepted (`2^20`), in a parameter or in decoded bytes.
const MAX_SHIFT: u32 = 20;
/// Bit offsets share a word with the width, so the error bits must stay below `2^56`.
const MAX_BITS: u128 = 1 << 56;
/// Bytes of one partition in the encoding: base, slope, width.
const PART_BYTES: usize = 17;

/// Parameters of a [`LecoArray`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LecoParams {
    /// Values per partition, a power of two from 1 to 2^20; `None` (the default) tries 16 to
    /// 1024 and keeps the smallest encoding. Larger partitions spend less on models (24 bytes
    /// each) but their errors are as wide as the worst fit anywhere inside; building with
    /// `None` costs seven encodings.
    pub partition: Option<usize>,
}

impl LecoParams {
    /// A fixed partition size.
    pub fn with_partition(partition: usize) -> Self {
        LecoParams {
            partition: Some(partition),
        }
    }

    fn shifts(&self) -> Result<std::ops::RangeInclusive<u32>> {
        match self.partition {
            None => Ok(AUTO_SHIFTS),
            Some(p) if p.is_power_of_two() && p.trailing_zeros() <= MAX_SHIFT => {
                let s = p.trailing_zeros();
                Ok(s..=s)
            }
            Some(p) => Err(Error::InvalidParameter {
                name: "partition",
                value: p.to_string(),
                expected: "a power of two from 1 to 2^20",
            }),
        }
    }
}

/// One partition's model.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Part {
    base: u64,
    slope: f64,
    /// Bit offset of the first error `<< 8 | width`.
    offset_width: u64,
}

/// A compressed, random-access, immutable sequence of `u64` values (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LecoArray {
    n: usize,
    shift: u32,
    parts: Vec<Part>,
    words: Vec<u64>,
}

/// `trunc(slope * j)`, saturating: the model part of a value, shared by encoder and decoder.
#[inline(always)]
fn line(slope: f64, j: usize) -> i64 {
    (slope * j as f64) as i64
}

/// Width in bits of `spread` (0 for 0).
fn width_of(spread: u128) -> u32 {
    128 - spread.leading_zeros()
}

/// The spread of the errors for `slope` over intervals `[lo_j, hi_j]`, and the largest
/// `lo_j - line(j)` (the offset the chosen values are pulled towards).
fn spread(lo: &[u64], hi: &[u64], slope: f64) -> (i128, i128) {
    let mut max_a = i128::MIN;
    let mut min_b = i128::MAX;
    for (j, (&l, &h)) in lo.iter().zip(hi).enumerate() {
        let at = i128::from(line(slope, j));
        max_a = max_a.max(i128::from(l) - at);
        min_b = min_b.min(i128::from(h) - at);
    }
    ((max_a - min_b).max(0), max_a)
}

/// [`spread`]'s spread in `f64` over values relative to an origin: the slope search's
/// objective, without the 128-bit arithmetic and the truncation of the exact one.
fn spread_f64(lo: &[f64], hi: &[f64], slope: f64) -> f64 {
    // Four lanes, so the maxima and minima are not one chain of dependent operations.
    let mut max_a = [f64::NEG_INFINITY; 4];
    let mut min_b = [f64::INFINITY; 4];
    let (lo4, hi4) = (lo.chunks_exact(4), hi.chunks_exact(4));
    let tail = lo4.remainder().len();
    for (c, (l, h)) in lo4.zip(hi4).enumerate() {
        for i in 0..4 {
            let at = slope * (4 * c + i) as f64;
            max_a[i] = max_a[i].max(l[i] - at);
            min_b[i] = min_b[i].min(h[i] - at);
        }
    }
    for j in lo.len() - tail..lo.len() {
        let at = slope * j as f64;
        max_a[0] = max_a[0].max(lo[j] - at);
        min_b[0] = min_b[0].min(hi[j] - at);
    }
    let max_a = max_a.into_iter().fold(f64::NEG_INFINITY, f64::max);
    let min_b = min_b.into_iter().fold(f64::INFINITY, f64::min);
    (max_a - min_b).max(0.0)
}

/// The slope of smallest spread for one partition (see the module docs). The search runs on
/// `f64` copies of the bounds relative to `lo[0]` (in `scratch`): the slope it finds is the
/// minimax one up to rounding, and [`spread`] then computes the errors of that slope exactly.
/// A golden-section search in `f64` builds 45K values in a fifth of the time of the ternary
/// search in exact 128-bit arithmetic it replaces (a store's merge builds two of these
/// arrays over the new table's blocks).
fn best_slope(lo: &[u64], hi: &[u64], scratch: &mut (Vec<f64>, Vec<f64>)) -> f64 {
    if lo.len() < 2 {
        return 0.0;
    }
    let origin = i128::from(lo[0]);
    let rel = |v: u64| (i128::from(v) - origin) as f64;
    let (lo_f, hi_f) = scratch;
    lo_f.clear();
    hi_f.clear();
    lo_f.extend(lo.iter().map(|&v| rel(v)));
    hi_f.extend(hi.iter().map(|&v| rel(v)));
    let mut s_lo = f64::INFINITY;
    let mut s_hi = f64::NEG_INFINITY;
    for j in 1..lo.len() {
        for d in [lo_f[j] - lo_f[j - 1], hi_f[j] - hi_f[j - 1]] {
            s_lo = s_lo.min(d);
            s_hi = s_hi.max(d);
        }
    }
    // Golden-section search: one new evaluation per step, the bracket shrinking by 0.618. A
    // slope off by `e` moves the spread by at most `e * len`: stop when that is half a unit,
    // or a 1/256 of the spread found (a width in bits barely notices it).
    let len = lo.len() as f64;
    let f = |s: f64| spread_f64(lo_f, hi_f, s);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (s_lo, s_hi);
    let (mut c, mut d) = (b - phi * (b - a), a + phi * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..160 {
        if (b - a) * len <= 0.5f64.max(fc.min(fd) / 256.0) {
            break;
        }
        if fc < fd {
            b = d;
            (d, fd) = (c, fc);
            c = b - phi * (b - a);
            fc = f(c);
        } else {
            a = c;
            (c, fc) = (d, fd);
            d = a + phi * (b - a);
            fd = f(d);
        }
    }
    (a + b) / 2.0
}

/// Bit-packed errors being written.
#[derive(Default)]
struct BitWriter {
    words: Vec<u64>,
    bits: u64,
}

impl BitWriter {
    fn push(&mut self, value: u64, width: u32) {
        if width == 0 {
            return;
        }
        let at = (self.bits % 64) as u32;
        if at == 0 {
            self.words.push(0);
        }
        let last = self.words.len() - 1;
        self.words[last] |= value << at;
        if at + width > 64 {
            self.words.push(value >> (64 - at));
        }
        self.bits += u64::from(width);
    }
}

impl LecoArray {
    /// Compresses `values` exactly. Returns `InvalidParameter` for a partition size that is
    /// not a power of two up to 2^20.
    pub fn build(values: &[u64], params: LecoParams) -> Result<Self> {
        Self::build_within(values, values, params)
    }

    /// Compresses *some* sequence `v` with `lo[i] <= v[i] <= hi[i]`, picking the values that
    /// compress best (paper 002 §8.2's rough separators); [`LecoArray::get`] returns the picked
    /// values. When the intervals are non-decreasing (each `lo` and `hi` at least the previous
    /// `hi`), so is the picked sequence. Returns `InvalidParameter` for a bad partition size,
    /// lengths that differ or an interval with `lo > hi`.
    pub fn build_within(lo: &[u64], hi: &[u64], params: LecoParams) -> Result<Self> {
        let shifts = params.shifts()?;
        if lo.len() != hi.len() {
            return Err(Error::InvalidParameter {
                name: "hi",
                value: format!("{} bounds", hi.len()),
                expected: "as many upper bounds as lower bounds",
            });
        }
        if let Some(i) = (0..lo.len()).find(|&i| lo[i] > hi[i]) {
            return Err(Error::InvalidParameter {
                name: "lo",
                value: format!("lo[{i}] = {} > hi[{i}] = {}", lo[i], hi[i]),
                expected: "every lower bound at most its upper bound",
            });
        }
        let mut best: Option<LecoArray> = None;
        for shift in shifts {
            let candidate = Self::encode_with(lo, hi, shift);
            if best
                .as_ref()
                .is_none_or(|b| candidate.size_in_bytes() < b.size_in_bytes())
            {
                best = Some(candidate);
            }
        }
        Ok(best.expect("at least one partition size is tried"))
    }

    fn encode_with(lo: &[u64], hi: &[u64], shift: u32) -> Self {
        let size = 1usize << shift;
        let mut parts = Vec::with_capacity(lo.len().div_ceil(size));
        let mut out = BitWriter::default();
        let mut errors = Vec::with_capacity(size);
        let mut scratch = (Vec::with_capacity(size), Vec::with_capacity(size));
        for (lo, hi) in lo.chunks(size).zip(hi.chunks(size)) {
            let mut slope = best_slope(lo, hi, &mut scratch);
            let (spread_, mut max_a) = spread(lo, hi, slope);
            if spread_ >= 1 << 64 {
                slope = 0.0;
                max_a = spread(lo, hi, slope).1;
            }
            errors.clear();
            // The picked value of interval j is line(j) + min(max_a, hi_j - line(j)): the
            // nearest to the line shifted by max_a, inside [lo_j, hi_j].
            errors.extend(hi.iter().enumerate().map(|(j, &h)| {
                let at = i128::from(line(slope, j));
                max_a.min(i128::from(h) - at)
            }));
            let base = errors.iter().copied().min().unwrap_or(0);
            let width = width_of((errors.iter().max().unwrap_or(&base) - base) as u128);
            debug_assert!(width <= 64);
            parts.push(Part {
                base: base as u64,
                slope,
                offset_width: out.bits << 8 | u64::from(width),
            });
            for &e in &errors {
                out.push((e - base) as u64, width);
            }
        }
        out.words.push(0);
        out.words.shrink_to_fit();
        LecoArray {
            n: lo.len(),
            shift,
            parts,
            words: out.words,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Values per partition.
    pub fn partition(&self) -> usize {
        1 << self.shift
    }

    /// Bytes held: the structure, the partition models and the error words.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.parts.capacity() * std::mem::size_of::<Part>()
            + self.words.capacity() * std::mem::size_of::<u64>()
    }

    /// Value `i`. Panics if `i >= len()`, as slice indexing does.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        assert!(i < self.n, "index {i} out of {} values", self.n);
        let part = self.parts[i >> self.shift];
        let j = i & ((1 << self.shift) - 1);
        let width = (part.offset_width & 0xff) as u32;
        let delta = if width == 0 {
            0
        } else {
            let bit = (part.offset_width >> 8) + j as u64 * u64::from(width);
            let w = (bit / 64) as usize;
            let pair = u128::from(self.words[w]) | u128::from(self.words[w + 1]) << 64;
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1 << width) - 1
            };
            (pair >> (bit % 64)) as u64 & mask
        };
        part.base
            .wrapping_add(line(part.slope, j) as u64)
            .wrapping_add(delta)
    }

    /// Every value, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.n).map(|i| self.get(i))
    }

    /// Number of leading values for which `pred` holds, `pred` being true then false along the
    /// sequence (a partition point): partitions' first values first, then inside one partition.
    fn partition_point(&self, pred: impl Fn(u64) -> bool) -> usize {
        let size = 1usize << self.shift;
        let mut lo = 0;
        let mut hi = self.parts.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid << self.shift)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return 0;
        }
        let mut a = ((lo - 1) << self.shift) + 1;
        let mut b = (lo << self.shift).min(self.n);
        debug_assert!(b - a < size);
        while a < b {
            let mid = a + (b - a) / 2;
            if pred(self.get(mid)) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    }

    /// For a non-decreasing sequence, the first index whose value is `>= v` (`len()` if none).
    pub fn lower_bound(&self, v: u64) -> usize {
        self.partition_point(|x| x < v)
    }

    /// For a non-decreasing sequence, the first index whose value is `> v` (`len()` if none).
    pub fn upper_bound(&self, v: u64) -> usize {
        self.partition_point(|x| x <= v)
    }

    /// True when the values never decrease.
    pub fn is_non_decreasing(&self) -> bool {
        let mut prev = 0;
        self.iter().all(|v| {
            let ok = v >= prev;
            prev = v;
            ok
        })
    }

    /// Appends the array: `n: u64, shift: u8`, per partition `base: u64, slope: f64 (bits),
    /// width: u8`, then `words: u64` and that many error words (the last one padding).
    pub fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.u8(self.shift as u8);
        for p in &self.parts {
            out.u64(p.base);
            out.f64(p.slope);
            out.u8((p.offset_width & 0xff) as u8);
        }
        out.usize(self.words.len());
        for &w in &self.words {
            out.u64(w);
        }
    }

    /// Reads an array written by [`LecoArray::encode`]. Checks the partition size, that the
    /// bytes hold every partition before allocating, widths `<= 64`, finite slopes and that the
    /// error words are exactly the ones the widths need, so `get` never reads outside them.
    #[doc(hidden)]
    pub fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let n = input.usize_at_most(MAX_LEN, "value count")?;
        let shift = u32::from(input.u8()?);
        if shift > MAX_SHIFT {
            return Err(input.corrupt(format!("partition size 2^{shift} exceeds 2^{MAX_SHIFT}")));
        }
        let count = n.div_ceil(1 << shift);
        if count > input.remaining() / PART_BYTES {
            return Err(input.corrupt(format!("{count} partitions do not fit the bytes left")));
        }
        let mut parts = Vec::with_capacity(count);
        let mut bits: u128 = 0;
        for p in 0..count {
            let base = input.u64()?;
            let slope = input.f64_finite("partition slope")?;
            let width = input.u8()?;
            if width > 64 {
                return Err(input.corrupt(format!("error width {width} exceeds 64")));
            }
            let values = (n - (p << shift)).min(1 << shift);
            parts.push(Part {
                base,
                slope,
                offset_width: (bits as u64) << 8 | u64::from(width),
            });
            bits += values as u128 * u128::from(width);
            if bits >= MAX_BITS {
                return Err(input.corrupt("error bits exceed 2^56"));
            }
        }
        let expected = bits.div_ceil(64) as usize + 1;
        let words = input.count(8, "error word count")?;
        if words != expected {
            return Err(input.corrupt(format!(
                "{words} error words where the widths need {expected}"
            )));
        }
        // Exactly `words` words (the count was checked against the bytes left): collecting
        // through `Result` would grow the vector by doubling, up to twice the memory the array
        // measures at build, and a reopened index would hold more than the chooser measured
        // (`mem::smallest`).
        let mut read = Vec::with_capacity(words);
        for _ in 0..words {
            read.push(input.u64()?);
        }
        let words = read;
        Ok(LecoArray {
            n,
            shift,
            parts,
            words,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(a: &LecoArray) -> LecoArray {
        let mut e = Encoder::new();
        a.encode(&mut e);
        let bytes = e.into_bytes();
        let mut d = Decoder::new("leco", &bytes);
        let back = LecoArray::decode(&mut d).unwrap();
        d.finish().unwrap();
        // A decoded array holds exactly what the built one did, no spare capacity.
        assert_eq!(back.size_in_bytes(), a.size_in_bytes());
        back
    }

    fn check_exact(values: &[u64], params: LecoParams) {
        let a = LecoArray::build(values, params).unwrap();
        assert_eq!(a.len(), values.len());
        assert_eq!(a.iter().collect::<Vec<_>>(), values);
        assert_eq!(round_trip(&a), a);
    }

    #[test]
    fn extremes_and_gaps_decode_exactly() {
        let cases: Vec<Vec<u64>> = vec![
            vec![],
            vec![u64::MAX],
            vec![0, u64::MAX, 0, u64::MAX, 1],
            vec![u64::MAX; 40],
            (0..300).map(|i| i * (u64::MAX / 300)).collect(),
            (0..300).map(|i| u64::MAX - i * 3).collect(),
            (0..100)
                .map(|i| if i % 2 == 0 { 0 } else { u64::MAX })
                .collect(),
        ];
        for values in &cases {
            for p in [None, Some(1), Some(2), Some(16), Some(1 << 20)] {
                check_exact(values, LecoParams { partition: p });
            }
        }
    }

    #[test]
    fn linear_data_needs_no_error_bits() {
        let values: Vec<u64> = (0..4096u64).map(|i| 1_000 + 37 * i).collect();
        let a = LecoArray::build(&values, LecoParams::default()).unwrap();
        assert!(a.words.len() <= 2, "{} words", a.words.len());
        assert_eq!(a.lower_bound(1_037), 1);
        assert_eq!(a.lower_bound(1_038), 2);
        assert_eq!(a.upper_bound(1_037), 2);
        assert_eq!(a.lower_bound(u64::MAX), 4096);
        assert_eq!(a.lower_bound(0), 0);
    }

    #[test]
    fn rough_values_stay_in_their_intervals_and_compress() {
        let hi: Vec<u64> = (0..2000u64).map(|i| i * i * 7 + (i % 5) * 3).collect();
        let lo: Vec<u64> = std::iter::once(0)
            .chain(hi.windows(2).map(|w| (w[0] + 1).min(w[1])))
            .collect();
        let exact = LecoArray::build(&hi, LecoParams::default()).unwrap();
        let rough = LecoArray::build_within(&lo, &hi, LecoParams::default()).unwrap();
        for (i, v) in rough.iter().enumerate() {
            assert!(lo[i] <= v && v <= hi[i], "{i}: {v}");
        }
        assert!(rough.is_non_decreasing());
        assert!(rough.size_in_bytes() < exact.size_in_bytes());
    }

    #[test]
    fn bad_parameters_are_refused() {
        for p in [0, 3, 1 << 21] {
            let err = LecoArray::build(&[1], LecoParams::with_partition(p)).unwrap_err();
            assert!(matches!(
                err,
                Error::InvalidParameter {
                    name: "partition",
                    ..
                }
            ));
        }
        let err = LecoArray::build_within(&[5], &[4], LecoParams::default()).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "lo", .. }));
        let err = LecoArray::build_within(&[5], &[], LecoParams::default()).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "hi", .. }));
    }

    #[test]
    fn corrupt_bytes_are_refused() {
        let values: Vec<u64> = (0..500u64).map(|i| i * i).collect();
        let a = LecoArray::build(&values, LecoParams::with_partition(64)).unwrap();
        let mut e = Encoder::new();
        a.encode(&mut e);
        let bytes = e.into_bytes();
        for cut in 0..bytes.len() {
            let mut d = Decoder::new("leco", &bytes[..cut]);
            assert!(LecoArray::decode(&mut d).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0xa5;
            let mut d = Decoder::new("leco", &bad);
            if let Ok(b) = LecoArray::decode(&mut d) {
                b.iter().for_each(drop);
            }
        }
    }

    proptest! {
        #[test]
        fn matches_a_vec(
            values in prop::collection::vec(
                prop_oneof![any::<u64>(), 0..1000u64, Just(u64::MAX), Just(0)], 0..600),
            shift in 0u32..8,
            sorted in any::<bool>(),
        ) {
            let mut values = values;
            if sorted {
                values.sort_unstable();
            }
            let a = LecoArray::build(&values, LecoParams::with_partition(1 << shift)).unwrap();
            prop_assert_eq!(a.iter().collect::<Vec<_>>(), values.clone());
            prop_assert_eq!(round_trip(&a), a.clone());
            if sorted {
                for probe in values.iter().flat_map(|&v| [v, v.wrapping_add(1), v.wrapping_sub(1)]) {
                    prop_assert_eq!(a.lower_bound(probe), values.partition_point(|&x| x < probe));
                    prop_assert_eq!(a.upper_bound(probe), values.partition_point(|&x| x <= probe));
                }
            }
        }

        #[test]
        fn smooth_sorted_data_is_exact(
            start in any::<u64>(),
            gaps in prop::collection::vec(0..1u64 << 40, 1..2000),
        ) {
            let mut values = vec![start];
            for g in gaps {
                let next = values.last().unwrap().saturating_add(g);
                values.push(next);
            }
            let a = LecoArray::build(&values, LecoParams::default()).unwrap();
            prop_assert_eq!(a.iter().collect::<Vec<_>>(), values);
        }
    }
}
