//! PGM-Disk: the PGM-index with disk-based zero intervals (paper 002 §6.1-6.2, guideline G3).
//!
//! Paper 002 §6.2 applies eq. 5 to the PGM-index's build: its bottom level is the optimal PLA
//! where a prediction anywhere in the key's own page (data block of `per_block` records) counts
//! as error 0, so a segment may be off by up to `eps` outside the page. At the same expected I/O
//! pages per lookup it needs far fewer segments (Table 3: 48-55% fewer at 1.5 pages). Queries
//! are unchanged but for the window, which covers whole pages.
//!
//! What we do: the bottom level comes from [`crate::model::zero_interval`] (the exact intervals,
//! their proof for present and absent keys, and the `f64` guarantee are there); the upper levels
//! and the descent are those of [`Pgm`], which this wraps (built with error
//! [`zero_interval::half_width`], its prediction clamped to the next segment's first rank as
//! usual). [`StaticIndex::search`] returns the window of whole pages
//! [`zero_interval::page_window`]: a static learned index built with the same `per_block` at item
//! granularity reads exactly the pages of `[pos - eps, pos + eps]`, `1 + 2 eps / P` on average
//! ([`zero_interval::zero_expected_pages`]), one when `eps = 0`. Built on the keys with another
//! records-per-block or granularity, windows stay correct but no longer match blocks.

use crate::codec::{Decoder, Encoder};
use crate::error::Result;
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::model::points::cdf_points;
use crate::model::zero_interval::{self, ZeroPlaBuilder, MAX_ZERO_PARAM};

/// Parameters of a [`PgmZero`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmZeroParams {
    /// Maximum error outside the key's page, in positions. Larger means fewer segments (less
    /// memory) but more pages read per lookup: `1 + 2 eps / per_block` on average
    /// ([`zero_interval::zero_eps_for_expected_pages`] derives it from a budget of pages).
    pub eps: usize,
    /// Records per page (data block): the page a prediction may fall anywhere in. It must be
    /// the data file's records per block for windows to match blocks.
    pub per_block: usize,
    /// Maximum error of the upper levels, in segments, as [`PgmParams::eps_recursive`].
    pub eps_recursive: usize,
}

impl Default for PgmZeroParams {
    /// `eps = 63` (1.49 expected pages), `per_block = 255` (16-byte records in 4 KiB blocks),
    /// `eps_recursive = 8` as [`PgmParams::default`].
    fn default() -> Self {
        PgmZeroParams {
            eps: 63,
            per_block: 255,
            eps_recursive: PgmParams::default().eps_recursive,
        }
    }
}

impl PgmZeroParams {
    /// Parameters with the given error, page size and upper-level error.
    pub fn new(eps: usize, per_block: usize, eps_recursive: usize) -> Self {
        PgmZeroParams {
            eps,
            per_block,
            eps_recursive,
        }
    }

    /// The inner PGM's parameters: its error is the page-aware band's half-width.
    fn inner(&self) -> PgmParams {
        PgmParams::new(
            zero_interval::half_width(self.eps, self.per_block),
            self.eps_recursive,
        )
    }
}

/// The PGM-index with disk-based zero intervals over `n` sorted keys of type `K`.
#[derive(Debug, Clone)]
pub struct PgmZero<K> {
    params: PgmZeroParams,
    inner: Pgm<K>,
}

impl<K: Key> PgmZero<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Errors: `OutOfOrder` or
    /// `InvalidKey` for bad keys; `InvalidParameter` for a `per_block` of 0 or above 2^31, an
    /// `eps` above 2^31, or an `eps_recursive` PGM refuses.
    pub fn build(keys: &[K], params: PgmZeroParams) -> Result<Self> {
        zero_interval::validate(params.eps, params.per_block)?;
        check_sorted(keys)?;
        let mut builder = ZeroPlaBuilder::new(params.eps, params.per_block);
        let mut bottom = Vec::new();
        for p in cdf_points(keys) {
            bottom.extend(builder.add_point(p));
        }
        bottom.extend(builder.finish());
        let inner = Pgm::from_segments(keys.len(), params.inner(), bottom)?;
        Ok(PgmZero { params, inner })
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> PgmZeroParams {
        self.params
    }

    /// Number of segments in the bottom level.
    pub fn segment_count(&self) -> usize {
        self.inner.segment_count()
    }
}

impl<K: Key> StaticIndex<K> for PgmZero<K> {
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
        std::mem::size_of::<Self>() - std::mem::size_of::<Pgm<K>>() + self.inner.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        self.inner.shape()
    }
}

/// Writes the page parameters every zero-interval model's encoding starts with.
pub(crate) fn encode_page_params(out: &mut Encoder, per_block: usize, eps: usize) {
    out.usize(per_block);
    out.usize(eps);
}

/// Reads what [`encode_page_params`] wrote, checking `1 <= per_block <= 2^31` and
/// `eps <= 2^31`; returns `(per_block, eps, the inner model's error they imply)`.
pub(crate) fn decode_page_params(input: &mut Decoder<'_>) -> Result<(usize, usize, usize)> {
    let per_block = input.usize_at_most(MAX_ZERO_PARAM, "records per block")?;
    let eps = input.usize_at_most(MAX_ZERO_PARAM, "eps")?;
    if per_block == 0 {
        return Err(input.corrupt("0 records per block"));
    }
    Ok((per_block, eps, zero_interval::half_width(eps, per_block)))
}

/// Encoding (kind [`PgmZero::KIND`]): `per_block: u64, eps: u64`, then the inner PGM's encoding
/// (kind 1). `decode` checks `1 <= per_block <= 2^31`, `eps <= 2^31`, the inner PGM as kind 1
/// does, and that its error is `eps + (per_block - 1) / 2`.
impl<K: Key> Persist<K> for PgmZero<K> {
    const KIND: u32 = 8;

    fn encode(&self, out: &mut Encoder) {
        encode_page_params(out, self.params.per_block, self.params.eps);
        self.inner.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let (per_block, eps, expected) = decode_page_params(input)?;
        let inner = Pgm::<K>::decode(input)?;
        if inner.eps() != expected {
            return Err(input.corrupt(format!(
                "inner PGM error {} (expected {expected})",
                inner.eps()
            )));
        }
        let params = PgmZeroParams::new(eps, per_block, inner.params().eps_recursive);
        Ok(PgmZero { params, inner })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_pages_and_segments_fewer() {
        let keys: Vec<u64> = (0..50_000u64).map(|i| i * i / 7 + (i % 97) * 31).collect();
        let mut keys = keys;
        keys.sort_unstable();
        keys.dedup();
        let zero = PgmZero::build(&keys, PgmZeroParams::new(8, 64, 4)).unwrap();
        let plain = Pgm::build(&keys, PgmParams::new(8, 4)).unwrap();
        assert!(zero.segment_count() < plain.segment_count());
        for (i, k) in keys.iter().enumerate().step_by(13) {
            let w = zero.search(*k);
            assert!(w.lo <= i && i < w.hi, "{i}: {w:?}");
            assert_eq!(w.lo % 64, 0);
            assert!(w.hi.is_multiple_of(64) || w.hi == keys.len());
            assert!(w.hi - w.lo <= 2 * 64, "{w:?}");
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        for params in [
            PgmZeroParams::new(4, 0, 4),
            PgmZeroParams::new(usize::MAX, 4, 4),
            PgmZeroParams::new(4, 4, 0),
        ] {
            assert!(matches!(
                PgmZero::build(&[1u64, 2], params),
                Err(crate::Error::InvalidParameter { .. })
            ));
        }
    }
}
