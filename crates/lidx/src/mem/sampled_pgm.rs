//! Sampled PGM: a PGM-index on every `every`-th key, its window scaled back to the full array.
//!
//! Paper 000 §6.1 (and §6.6): "A sampled version of PGM index is built on every 128th key with a
//! max-error of 2. The search window returned by this index is scaled up to get the actual search
//! window in the dataset." The index is `every` times smaller than a PGM with the same error on
//! all keys, at the price of a window about `(2 * eps + 3) * every` positions wide.
//!
//! The paper does not say how the window is scaled; we make it exact for every key, present or
//! absent, duplicates included. Let the sample be `s[i] = keys[i * every]` and `j` the sample's
//! lower bound of the key, inside the inner window `[lo, hi]`. Then `s[j - 1] < key <= s[j]`,
//! so the full lower bound lies in `((j - 1) * every, j * every]`, or up to `len` when `j` is
//! the sample's length. Scaling both ends of `[lo, hi]` that way gives the outer window.

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::mem::pgm::{Pgm, PgmCursor, PgmParams};

/// Parameters of a [`SampledPgm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampledPgmParams {
    /// Sample every `every`-th key (at least 1). Larger means a smaller index but a window
    /// `every` times wider.
    pub every: usize,
    /// Maximum error of the PGM on the sample, in sample positions.
    pub eps: usize,
}

impl Default for SampledPgmParams {
    /// `every = 128`, `eps = 2`, as in paper 000 §6.1.
    fn default() -> Self {
        SampledPgmParams { every: 128, eps: 2 }
    }
}

impl SampledPgmParams {
    /// Parameters with the given sampling rate and error.
    pub fn new(every: usize, eps: usize) -> Self {
        SampledPgmParams { every, eps }
    }
}

/// A PGM-index on a sample of the keys; see the module docs.
#[derive(Debug, Clone)]
pub struct SampledPgm<K> {
    n: usize,
    every: usize,
    inner: Pgm<K>,
}

impl<K: Key> SampledPgm<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Returns `OutOfOrder` or
    /// `InvalidKey` for bad keys (all keys are checked, not only the sample) and
    /// `InvalidParameter` for `every = 0` or an `eps` above 2^32.
    pub fn build(keys: &[K], params: SampledPgmParams) -> Result<Self> {
        if params.every == 0 {
            return Err(Error::InvalidParameter {
                name: "every",
                value: "0".into(),
                expected: "at least 1 (1 samples every key)",
            });
        }
        check_sorted(keys)?;
        let sample: Vec<K> = keys.iter().step_by(params.every).copied().collect();
        let inner = Pgm::build(&sample, PgmParams::new(params.eps, 4))?;
        Ok(SampledPgm {
            n: keys.len(),
            every: params.every,
            inner,
        })
    }

    /// The PGM-index on the sample.
    pub fn inner(&self) -> &Pgm<K> {
        &self.inner
    }
}

impl<K: Key> StaticIndex<K> for SampledPgm<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        self.scale(self.inner.search(key))
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() - std::mem::size_of::<Pgm<K>>() + self.inner.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        StaticIndex::shape(&self.inner)
    }
}

impl<K: Key> SampledPgm<K> {
    /// A cursor for non-decreasing keys, walking the sample PGM's bottom level (paper 000
    /// §4.1, optimization 1); its windows are those of [`StaticIndex::search`].
    pub fn cursor(&self) -> SampledPgmCursor<'_, K> {
        SampledPgmCursor {
            index: self,
            inner: self.inner.cursor(),
        }
    }

    /// The window in the full keys of the sample's window `w` (see the module docs).
    #[inline(always)]
    fn scale(&self, w: ApproxPos) -> ApproxPos {
        let m = self.inner.len();
        let lo = if w.lo == 0 {
            0
        } else {
            (w.lo - 1) * self.every + 1
        };
        let hi = if w.hi == m { self.n } else { w.hi * self.every };
        ApproxPos {
            pos: (w.pos * self.every).clamp(lo, hi),
            lo,
            hi,
        }
    }
}

/// A [`PgmCursor`] over the sample, its windows scaled to the full keys. Keys must come in
/// non-decreasing order.
pub struct SampledPgmCursor<'a, K> {
    index: &'a SampledPgm<K>,
    inner: PgmCursor<'a, K>,
}

impl<K: Key> SampledPgmCursor<'_, K> {
    /// The window of `key`, which must be `>=` every key searched before with this cursor.
    #[inline]
    pub fn search(&mut self, key: K) -> ApproxPos {
        self.index.scale(self.inner.search(key))
    }
}

/// Encoding (kind [`SampledPgm::KIND`]): `n: u64, every: u64`, then the sample's [`Pgm`]
/// encoding. `decode` checks `1 <= every <= 2^62`, `n <= 2^62`, the inner PGM (see its
/// encoding) and that it was built on exactly `ceil(n / every)` sampled keys.
impl<K: Key> Persist<K> for SampledPgm<K> {
    const KIND: u32 = 2;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.every);
        self.inner.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        let n = input.usize_at_most(MAX_LEN, "key count")?;
        let every = input.usize_at_most(MAX_LEN, "sampling stride")?;
        if every == 0 {
            return Err(input.corrupt("sampling stride is 0"));
        }
        let inner = Pgm::decode(input)?;
        if inner.len() != n.div_ceil(every) {
            return Err(input.corrupt(format!(
                "sample of {} keys for {n} keys sampled every {every}",
                inner.len()
            )));
        }
        Ok(SampledPgm { n, every, inner })
    }
}
