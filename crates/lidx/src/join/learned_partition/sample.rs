//! Sampling both tables and fitting the bucket map (paper 000 §5.4): a seeded Bernoulli sample
//! of each table, one PGM on their union, and [`BucketMap`], the monotone function from a key
//! to its bucket (see [`super`] for why one model and why monotone).

use crate::error::{Error, Result};
use crate::key::Key;
use crate::mem::pgm::{Pgm, PgmParams};
use crate::model::linear::LinearModel;

/// Parameters of the learned route. The memory budget itself is the join's (`--memory`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LearnedPartitionParams {
    /// Fraction of each table's records sampled to fit the model, in `(0, 1]` (default 0.01,
    /// the paper's 1%). More samples give more even buckets at the cost of a longer fit and a
    /// larger sample in memory; tables so small that this gives fewer than
    /// [`MIN_SAMPLE`] keys are sampled at a higher rate.
    pub sample_rate: f64,
    /// Seed of the sampling (default fixed, so two runs partition identically).
    pub seed: u64,
    /// Error of the PGM fitted on the sample, in sample positions (default 16). Smaller means
    /// more segments and buckets closer to their target size.
    pub eps: usize,
    /// Target size of a bucket of the larger table, in blocks (default 1: the paper's one
    /// page). Larger buckets mean fewer of them: smaller run directories, larger in-memory sorts.
    pub bucket_blocks: usize,
}

impl Default for LearnedPartitionParams {
    fn default() -> Self {
        LearnedPartitionParams {
            sample_rate: 0.01,
            seed: 0x5eed_0000_0000_0ba5,
            eps: 16,
            bucket_blocks: 1,
        }
    }
}

/// What a pass over a table does with each record: `f(position, record bytes)`.
pub(super) type RecordVisitor<'a> = dyn FnMut(u64, &[u8]) -> Result<()> + 'a;

/// Smallest sample fitted when the table has that many records.
pub(super) const MIN_SAMPLE: u64 = 1024;

impl LearnedPartitionParams {
    /// [`Error::InvalidParameter`] for a sample rate outside `(0, 1]`, `eps == 0` or
    /// `bucket_blocks == 0`.
    pub(super) fn check(&self) -> Result<()> {
        if !(self.sample_rate > 0.0 && self.sample_rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "sample_rate",
                value: self.sample_rate.to_string(),
                expected: "a fraction in (0, 1]",
            });
        }
        if self.eps == 0 {
            return Err(Error::InvalidParameter {
                name: "eps",
                value: "0".to_string(),
                expected: "at least 1",
            });
        }
        if self.bucket_blocks == 0 {
            return Err(Error::InvalidParameter {
                name: "bucket_blocks",
                value: "0".to_string(),
                expected: "at least 1",
            });
        }
        Ok(())
    }

    /// Sampling threshold (on a 64-bit hash) for a table of `n` records.
    fn threshold(&self, n: u64) -> u64 {
        let rate = if n == 0 {
            1.0
        } else {
            self.sample_rate.max(MIN_SAMPLE as f64 / n as f64).min(1.0)
        };
        if rate >= 1.0 {
            u64::MAX
        } else {
            (rate * u64::MAX as f64) as u64
        }
    }
}

/// splitmix64's finalizer: a fixed, well-mixed hash of the record index.
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether record `index` of the table tagged `table` is in the sample.
#[inline]
fn sampled(seed: u64, table: u64, index: u64, threshold: u64) -> bool {
    threshold == u64::MAX
        || mix(seed
            ^ table.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ index.wrapping_mul(0xd6e8_feb8_6659_fd93))
            <= threshold
}

/// Appends to `sample` the keys of the sampled records among those `scan` yields (`index`,
/// record bytes, key first). `table` tags the table so two tables get independent samples.
/// Keys that cannot be ordered (NaN) are [`Error::InvalidKey`].
pub(super) fn sample_keys<K: Key>(
    params: &LearnedPartitionParams,
    table: u64,
    n: u64,
    sample: &mut Vec<K>,
    scan: impl FnOnce(&mut RecordVisitor<'_>) -> Result<()>,
) -> Result<()> {
    let threshold = params.threshold(n);
    scan(&mut |index, rec| {
        let key = K::read_from(&rec[..K::SIZE]);
        if let Some(reason) = key.invalid_reason() {
            return Err(Error::InvalidKey {
                index: index as usize,
                reason,
            });
        }
        if sampled(params.seed, table, index, threshold) {
            sample.push(key);
        }
        Ok(())
    })
}

/// The partition function: model-space key to bucket, non-decreasing in the key.
#[derive(Debug, Clone)]
pub(super) struct BucketMap {
    /// First model-space key of every bottom segment of the sample's PGM.
    first_keys: Vec<u64>,
    /// Per segment: its line and the rank range `[lo, hi]` its prediction is clamped to.
    models: Vec<(LinearModel, f64, f64)>,
    /// `buckets / sample length`: turns a sample rank into a bucket.
    scale: f64,
    buckets: usize,
    pgm_bytes: usize,
}

impl BucketMap {
    /// Fits the map on `sample` (sorted here) for `buckets` buckets.
    pub(super) fn fit<K: Key>(sample: &mut [K], buckets: usize, eps: usize) -> Result<BucketMap> {
        let buckets = buckets.max(1);
        sample.sort_unstable_by(|a, b| a.key_cmp(b));
        if sample.is_empty() || buckets == 1 {
            return Ok(BucketMap {
                first_keys: Vec::new(),
                models: Vec::new(),
                scale: 0.0,
                buckets,
                pgm_bytes: 0,
            });
        }
        let pgm = Pgm::build(sample, PgmParams::new(eps, 8))?;
        let segments = pgm.segments();
        let n = sample.len() as f64;
        let models = segments
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let hi = segments.get(i + 1).map_or(n, |next| next.first_rank as f64);
                (s.model, s.first_rank as f64, hi)
            })
            .collect();
        Ok(BucketMap {
            first_keys: segments.iter().map(|s| s.first_key).collect(),
            models,
            scale: buckets as f64 / n,
            buckets,
            pgm_bytes: pgm.size_in_bytes(),
        })
    }

    /// Number of buckets.
    pub(super) fn buckets(&self) -> usize {
        self.buckets
    }

    /// Bytes of the map in memory, plus the PGM it was taken from (which the fit held).
    pub(super) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.first_keys.capacity() * 8
            + self.models.capacity() * std::mem::size_of::<(LinearModel, f64, f64)>()
            + self.pgm_bytes
    }

    /// The bucket of model-space key `v`.
    #[inline]
    pub(super) fn bucket(&self, v: u64) -> usize {
        if self.first_keys.is_empty() {
            return 0;
        }
        let i = self
            .first_keys
            .partition_point(|&f| f <= v)
            .saturating_sub(1);
        let (model, lo, hi) = self.models[i];
        let rank = model.predict(v).clamp(lo, hi);
        ((rank * self.scale) as usize).min(self.buckets - 1)
    }
}
