//! RadixSpline: an error-bounded linear spline over the CDF with a radix table on top.
//!
//! Paper 000 §2.2: "a single-pass learned index that uses a linear spline model to model the CDF
//! and employs a radix table to speed up lookup of spline models ... parameterizable in two
//! parameters, the error-bound of the linear spline model and the number of the bits to use for
//! a radix table" (§6.6 uses the SOSD Pareto-optimal settings, radix bits 16 to 28, error 256).
//! Knots come from the greedy spline corridor ([`crate::model::spline`]). The radix table maps
//! the top `radix_bits` bits of `key - min_key`, after shifting out the bits that every key
//! shares (the common prefix of the key range), to the first knot with that prefix; a query
//! binary-searches the knots between `table[p]` and `table[p + 1]`, interpolates between the
//! two knots around the key, and returns the window of width `2 * max_error + 2`.
//!
//! What we do differently, and why:
//!
//! * Keys are model-space `u64` ([`Key::to_model`]) and the window comes from
//!   [`ApproxPos::for_key`], so duplicates and 16-byte strings keep the window contract.
//! * The interpolation error bound holds for the `f64` arithmetic queries run (see
//!   [`crate::model::spline`]); the reference code's bound is for exact arithmetic.
//! * `max_error = 0` is allowed and makes every CDF point a knot.

use std::marker::PhantomData;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::spline::{interpolate, spline_points};

/// The largest radix table: 2^30 entries of 4 bytes.
const MAX_RADIX_BITS: usize = 30;

/// The largest `max_error` accepted.
const MAX_ERROR: usize = 1 << 32;

/// Parameters of a [`RadixSpline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RadixSplineParams {
    /// Bits of the radix table (at most 30): `2^radix_bits` entries of 4 bytes. More bits cost
    /// memory and narrow the binary search among knots.
    pub radix_bits: usize,
    /// Maximum interpolation error, in positions. Larger means fewer knots (less memory) but a
    /// wider final window.
    pub max_error: usize,
}

impl Default for RadixSplineParams {
    /// `radix_bits = 18`, `max_error = 32`.
    fn default() -> Self {
        RadixSplineParams {
            radix_bits: 18,
            max_error: 32,
        }
    }
}

impl RadixSplineParams {
    /// Parameters with the given table bits and error.
    pub fn new(radix_bits: usize, max_error: usize) -> Self {
        RadixSplineParams {
            radix_bits,
            max_error,
        }
    }

    fn validate(&self) -> Result<()> {
        if self.radix_bits > MAX_RADIX_BITS {
            return Err(Error::InvalidParameter {
                name: "radix_bits",
                value: self.radix_bits.to_string(),
                expected: "at most 30",
            });
        }
        if self.max_error > MAX_ERROR {
            return Err(Error::InvalidParameter {
                name: "max_error",
                value: self.max_error.to_string(),
                expected: "at most 2^32",
            });
        }
        Ok(())
    }
}

/// RadixSpline over `n` sorted keys of type `K` (which it does not store).
#[derive(Debug, Clone)]
pub struct RadixSpline<K> {
    n: usize,
    params: RadixSplineParams,
    /// Model-space key of the first knot; queries subtract it.
    min_key: u64,
    /// Right shift that leaves the top `radix_bits` bits of `key - min_key`.
    shift: u32,
    /// `table[p]`: index of the first knot whose prefix is `>= p`, for every prefix `p` of the
    /// key range plus one (at most `2^radix_bits + 1` entries).
    table: Vec<u32>,
    knots: Vec<CdfPoint>,
    _key: PhantomData<fn() -> K>,
}

impl<K: Key> RadixSpline<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Returns `OutOfOrder` or
    /// `InvalidKey` for bad keys, `InvalidParameter` for more than 30 radix bits or an error
    /// above 2^32.
    pub fn build(keys: &[K], params: RadixSplineParams) -> Result<Self> {
        params.validate()?;
        check_sorted(keys)?;
        Self::from_knots(
            keys.len(),
            params,
            spline_points(cdf_points(keys), params.max_error),
        )
    }

    /// The knots of the spline.
    pub fn knots(&self) -> &[CdfPoint] {
        &self.knots
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> RadixSplineParams {
        self.params
    }

    /// The spline over `n` keys through `knots` fitted elsewhere (the page-aware fit of
    /// [`crate::mem::radix_spline_zero`]), whose ranks may exceed `n`.
    #[doc(hidden)]
    pub fn from_knots(n: usize, params: RadixSplineParams, knots: Vec<CdfPoint>) -> Result<Self> {
        params.validate()?;
        if knots.len() > u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "max_error",
                value: params.max_error.to_string(),
                expected: "large enough that the spline has fewer than 2^32 knots",
            });
        }
        Ok(Self::with_table(n, params, knots))
    }

    /// The spline over `n` keys through `knots`, with the radix table built over them.
    fn with_table(n: usize, params: RadixSplineParams, knots: Vec<CdfPoint>) -> Self {
        let (min_key, shift, table) = radix_table(&knots, params.radix_bits);
        RadixSpline {
            n,
            params,
            min_key,
            shift,
            table,
            knots,
            _key: PhantomData,
        }
    }

    /// Prediction for model-space key `x` (the index must not be empty).
    #[doc(hidden)]
    #[inline(always)]
    pub fn predict(&self, x: u64) -> f64 {
        let last = self.knots.len() - 1;
        if x <= self.min_key {
            return self.knots[0].y as f64;
        }
        if x >= self.knots[last].x {
            // At the last knot exactly, or past every key.
            return if x == self.knots[last].x {
                self.knots[last].y as f64
            } else {
                self.n as f64
            };
        }
        let prefix = ((x - self.min_key) >> self.shift) as usize;
        let begin = self.table[prefix] as usize;
        let end = (self.table[prefix + 1] as usize + 1).min(self.knots.len());
        // The first knot with key >= x; it exists (the last knot is above x) and is not the
        // first knot (which is below x).
        let range = &self.knots[begin..end];
        let mut base = 0usize;
        let mut len = range.len();
        while len > 1 {
            let half = len / 2;
            base = if range[base + half - 1].x < x {
                base + half
            } else {
                base
            };
            len -= half;
        }
        let i = begin + base;
        interpolate(self.knots[i - 1], self.knots[i], x)
    }
}

impl<K: Key> RadixSpline<K> {
    /// A cursor for non-decreasing keys: it walks the knots forward instead of going through
    /// the radix table and a binary search for every key (paper 000 §4.1, optimization 1).
    pub fn cursor(&self) -> RadixSplineCursor<'_, K> {
        RadixSplineCursor { rs: self, knot: 1 }
    }

    /// [`RadixSpline::predict`] with the knot search galloping forward from knot `from`
    /// (which must be at or before the first knot `>= x`); also returns that knot.
    #[inline(always)]
    fn predict_from(&self, from: usize, x: u64) -> (f64, usize) {
        let last = self.knots.len() - 1;
        if x <= self.min_key || x >= self.knots[last].x {
            return (self.predict(x), from);
        }
        // The first knot >= x is after the first knot and at or before the last.
        let mut at = from.max(1);
        let mut step = 1;
        while self.knots[at].x < x {
            let next = (at + step).min(last);
            if self.knots[next].x < x {
                at = next;
                step *= 2;
            } else {
                // knots[at] < x <= knots[next]: binary search (at, next].
                let (mut lo, mut hi) = (at + 1, next);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if self.knots[mid].x < x {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                at = lo;
            }
        }
        (interpolate(self.knots[at - 1], self.knots[at], x), at)
    }
}

/// A forward walk over a [`RadixSpline`]'s knots for keys in non-decreasing order (a join's
/// sorted outer table). [`RadixSplineCursor::search`] returns the windows of
/// [`StaticIndex::search`]; a key smaller than the previous one may get a wrong window.
pub struct RadixSplineCursor<'a, K> {
    rs: &'a RadixSpline<K>,
    knot: usize,
}

impl<K: Key> RadixSplineCursor<'_, K> {
    /// The window of `key`, which must be `>=` every key searched before with this cursor.
    #[inline]
    pub fn search(&mut self, key: K) -> ApproxPos {
        let rs = self.rs;
        if rs.n == 0 {
            return ApproxPos::default();
        }
        let v = key.to_model();
        let (pred, knot) = rs.predict_from(self.knot, v);
        self.knot = knot;
        ApproxPos::for_key(key, rs.params.max_error, rs.n, |x| {
            if x == v {
                pred
            } else {
                rs.predict_from(knot, x).0
            }
        })
    }
}

/// The radix table over `knots`: the first model-space key, the shift that keeps `radix_bits`
/// bits of a key's offset from it, and for every prefix the first knot at or above it.
fn radix_table(knots: &[CdfPoint], radix_bits: usize) -> (u64, u32, Vec<u32>) {
    let min_key = knots.first().map_or(0, |k| k.x);
    let range = knots.last().map_or(0, |k| k.x - min_key);
    let range_bits = u64::BITS - range.leading_zeros();
    // At most 63 so the shift is defined; with 0 radix bits and a range of 2^63 or more
    // the top prefix is then 1, and the table gets the 3 entries that needs.
    let shift = range_bits.saturating_sub(radix_bits as u32).min(63);
    let entries = (range >> shift) as usize + 2;
    let mut table = Vec::with_capacity(entries);
    for (i, knot) in knots.iter().enumerate() {
        let prefix = ((knot.x - min_key) >> shift) as usize;
        while table.len() <= prefix {
            table.push(i as u32);
        }
    }
    table.resize(entries, knots.len() as u32);
    (min_key, shift, table)
}

impl<K: Key> StaticIndex<K> for RadixSpline<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        if self.n == 0 {
            return ApproxPos::default();
        }
        ApproxPos::for_key(key, self.params.max_error, self.n, |x| self.predict(x))
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.table.len() * std::mem::size_of::<u32>()
            + self.knots.len() * std::mem::size_of::<CdfPoint>()
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.knots.len()),
            height: Some(1),
        }
    }
}

/// Encoding (kind [`RadixSpline::KIND`]): `n: u64, radix_bits: u64, max_error: u64, knots: u64`,
/// the knots as `(x: u64, y: u64)`, then `entries: u64` and the radix table as `u32`s.
/// `decode` checks the parameters' limits, `n <= 2^62`, that there are knots exactly when
/// `n > 0`, that knot keys strictly increase and ranks never decrease nor exceed `n`, and that
/// the table is exactly the one the knots and `radix_bits` give (it is stored so that its size is
/// bounded by the bytes read, and compared rather than trusted).
impl<K: Key> Persist<K> for RadixSpline<K> {
    const KIND: u32 = 3;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.params.radix_bits);
        out.usize(self.params.max_error);
        out.usize(self.knots.len());
        for k in &self.knots {
            out.u64(k.x);
            out.usize(k.y);
        }
        out.usize(self.table.len());
        for &t in &self.table {
            out.u32(t);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let n = input.usize_at_most(MAX_LEN, "key count")?;
        let params = RadixSplineParams::new(
            input.usize_at_most(MAX_RADIX_BITS, "radix bits")?,
            input.usize_at_most(MAX_ERROR, "max_error")?,
        );
        let count = input.count(16, "knot count")?;
        if (n == 0) != (count == 0) || count > u32::MAX as usize {
            return Err(input.corrupt(format!("{count} knots over {n} keys")));
        }
        let mut knots: Vec<CdfPoint> = Vec::with_capacity(count);
        for _ in 0..count {
            let x = input.u64()?;
            let y = input.usize_at_most(n, "knot rank")?;
            if knots.last().is_some_and(|p| p.x >= x || p.y > y) {
                return Err(input.corrupt("knots out of order"));
            }
            knots.push(CdfPoint { x, y });
        }
        let entries = input.count(4, "radix table length")?;
        let range = knots.last().map_or(0, |k| k.x - knots[0].x);
        let shift = (u64::BITS - range.leading_zeros())
            .saturating_sub(params.radix_bits as u32)
            .min(63);
        if entries != (range >> shift) as usize + 2 {
            return Err(input.corrupt(format!("radix table of {entries} entries")));
        }
        let spline = Self::with_table(n, params, knots);
        for &expected in &spline.table {
            if input.u32()? != expected {
                return Err(input.corrupt("radix table does not match the knots"));
            }
        }
        Ok(spline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_points_at_first_knot_of_each_prefix() {
        let keys: Vec<u64> = (0..5000u64).map(|i| i * i).collect();
        let rs = RadixSpline::build(&keys, RadixSplineParams::new(6, 4)).unwrap();
        assert!(rs.table.len() <= 65);
        for (p, &first) in rs.table.iter().enumerate() {
            let first = first as usize;
            assert!(rs.knots[..first]
                .iter()
                .all(|k| (((k.x - rs.min_key) >> rs.shift) as usize) < p));
            if let Some(k) = rs.knots.get(first) {
                assert!((((k.x - rs.min_key) >> rs.shift) as usize) >= p);
            }
        }
        assert_eq!(
            StaticIndex::<u64>::shape(&rs).segments,
            Some(rs.knots().len())
        );
    }

    #[test]
    fn bad_parameters_are_refused() {
        let err = RadixSpline::build(&[1u64], RadixSplineParams::new(31, 4)).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameter {
                name: "radix_bits",
                ..
            }
        ));
        let err = RadixSpline::build(&[1u64], RadixSplineParams::new(8, usize::MAX)).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameter {
                name: "max_error",
                ..
            }
        ));
    }
}
