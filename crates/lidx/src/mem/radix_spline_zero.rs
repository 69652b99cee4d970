//! RadixSpline-Disk: RadixSpline with disk-based zero intervals (paper 002 §6.1-6.2, G3).
//!
//! Paper 002 §6.2 applies eq. 5 to RadixSpline's build: the greedy spline corridor accepts an
//! interpolation anywhere in the key's own page (data block of `per_block` records), and up to
//! `eps` outside it, so fewer knots are needed at the same expected I/O pages (Table 3: 43% fewer
//! at 1.5 pages).
//!
//! What we do: the knots come from [`zero_interval::zero_spline_points`] (exact intervals and
//! proofs there), CDF points as in the plain spline; the radix table and the interpolation are
//! those of [`RadixSpline`], which this wraps (with error `zero_interval::half_width`, recorded
//! only). [`StaticIndex::search`] returns the window of whole pages of
//! [`zero_interval::page_window`], `1 + 2 eps / P` pages on average.

use crate::codec::{Decoder, Encoder};
use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::mem::pgm_zero::{decode_page_params, encode_page_params};
use crate::mem::radix_spline::{RadixSpline, RadixSplineParams};
use crate::model::points::cdf_points;
use crate::model::zero_interval;

/// Parameters of a [`RadixSplineZero`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RadixSplineZeroParams {
    /// Maximum interpolation error outside the key's page, in positions. Larger means fewer
    /// knots (less memory) but more pages read per lookup: `1 + 2 eps / per_block` on average.
    pub eps: usize,
    /// Records per page (data block); must be the data file's for windows to match blocks.
    pub per_block: usize,
    /// Bits of the radix table, as [`RadixSplineParams::radix_bits`] (at most 30).
    pub radix_bits: usize,
}

impl Default for RadixSplineZeroParams {
    /// `eps = 63` (1.49 expected pages), `per_block = 255`, `radix_bits = 18`.
    fn default() -> Self {
        RadixSplineZeroParams {
            eps: 63,
            per_block: 255,
            radix_bits: RadixSplineParams::default().radix_bits,
        }
    }
}

impl RadixSplineZeroParams {
    /// Parameters with the given error, page size and table bits.
    pub fn new(eps: usize, per_block: usize, radix_bits: usize) -> Self {
        RadixSplineZeroParams {
            eps,
            per_block,
            radix_bits,
        }
    }

    fn inner(&self) -> RadixSplineParams {
        RadixSplineParams::new(
            self.radix_bits,
            zero_interval::half_width(self.eps, self.per_block),
        )
    }
}

/// RadixSpline with disk-based zero intervals over `n` sorted keys of type `K`.
#[derive(Debug, Clone)]
pub struct RadixSplineZero<K> {
    params: RadixSplineZeroParams,
    inner: RadixSpline<K>,
}

impl<K: Key> RadixSplineZero<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Errors: `OutOfOrder` or
    /// `InvalidKey` for bad keys; `InvalidParameter` for a `per_block` of 0 or above 2^31, an
    /// `eps` above 2^31, or more than 30 radix bits.
    pub fn build(keys: &[K], params: RadixSplineZeroParams) -> Result<Self> {
        zero_interval::validate(params.eps, params.per_block)?;
        check_sorted(keys)?;
        let knots =
            zero_interval::zero_spline_points(cdf_points(keys), params.eps, params.per_block);
        let inner = RadixSpline::from_knots(keys.len(), params.inner(), knots)?;
        Ok(RadixSplineZero { params, inner })
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> RadixSplineZeroParams {
        self.params
    }

    /// Number of knots.
    pub fn knot_count(&self) -> usize {
        self.inner.knots().len()
    }
}

impl<K: Key> StaticIndex<K> for RadixSplineZero<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        let (eps, per_block) = (self.params.eps, self.params.per_block);
        let predict = |v| self.inner.predict(v);
        zero_interval::window_for_key(key, eps, per_block, self.inner.len(), predict)
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<RadixSpline<K>>()
            + self.inner.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        self.inner.shape()
    }
}

/// Encoding (kind [`RadixSplineZero::KIND`]): `per_block: u64, eps: u64`, then the inner
/// RadixSpline's encoding (kind 3). `decode` checks `1 <= per_block <= 2^31`, `eps <= 2^31`,
/// the inner spline as kind 3 does, and that its error is `eps + (per_block - 1) / 2`.
impl<K: Key> Persist<K> for RadixSplineZero<K> {
    const KIND: u32 = 9;

    fn encode(&self, out: &mut Encoder) {
        encode_page_params(out, self.params.per_block, self.params.eps);
        self.inner.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let (per_block, eps, expected) = decode_page_params(input)?;
        let inner = RadixSpline::<K>::decode(input)?;
        let inner_params = inner.params();
        if inner_params.max_error != expected {
            return Err(input.corrupt(format!("inner spline error {}", inner_params.max_error)));
        }
        let params = RadixSplineZeroParams::new(eps, per_block, inner_params.radix_bits);
        Ok(RadixSplineZero { params, inner })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_pages_and_knots_fewer() {
        let mut keys: Vec<u64> = (0..50_000u64).map(|i| i * i / 7 + (i % 97) * 31).collect();
        keys.sort_unstable();
        keys.dedup();
        let zero = RadixSplineZero::build(&keys, RadixSplineZeroParams::new(8, 64, 12)).unwrap();
        let plain = RadixSpline::build(&keys, RadixSplineParams::new(12, 8)).unwrap();
        assert!(
            zero.knot_count() < plain.knots().len(),
            "{} {}",
            zero.knot_count(),
            plain.knots().len()
        );
        for (i, k) in keys.iter().enumerate().step_by(13) {
            let w = zero.search(*k);
            assert!(w.lo <= i && i < w.hi, "{i}: {w:?}");
            assert_eq!(w.lo % 64, 0);
            assert!(w.hi - w.lo <= 2 * 64, "{w:?}");
        }
        assert_eq!(zero.search(u64::MAX).hi, keys.len());
    }

    #[test]
    fn bad_parameters_are_refused() {
        for params in [
            RadixSplineZeroParams::new(4, 0, 4),
            RadixSplineZeroParams::new(usize::MAX, 4, 4),
            RadixSplineZeroParams::new(4, 4, 31),
        ] {
            assert!(matches!(
                RadixSplineZero::build(&[1u64, 2], params),
                Err(crate::Error::InvalidParameter { .. })
            ));
        }
    }
}
