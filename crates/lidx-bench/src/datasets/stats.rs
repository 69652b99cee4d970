//! Statistics of a sorted key set: size, duplicates, range, and two hardness measures.
//!
//! * **PGM segment counts** at eps 8, 64 and 512: the number of segments our optimal PLA
//!   ([`lidx::model::optimal_pla`]) needs. Papers 002 and 003 use this as the
//!   measure of how hard a dataset is for learned indexes (local hardness at small eps, global
//!   at large eps, as GRE does).
//! * **LIPP's conflict degree**: LIPP places keys into `n` slots with one linear model and
//!   calls the largest number of keys sharing a slot the conflict degree; its FMCD ("fastest
//!   minimum conflict degree") algorithm picks the model. We implement FMCD as the LIPP paper
//!   describes it (our own reading, see [`fmcd`]): grow a candidate degree `D` from 1; the
//!   model maps `keys[D]` and `keys[n-1-D]` across the `n - 2` inner slots, so a slot is
//!   `U = (keys[n-1-D] - keys[D]) / (n - 2)` wide; scan for `D + 1` consecutive keys closer
//!   than `U` (they could share a slot) and raise `D` (shrinking `U`) each time one is found.
//!   Both the scan position and `D` only grow, so this is one linear pass. When `D` exceeds
//!   `n/3`, FMCD gives up and uses the line through the extreme keys. The reported degree is
//!   then *measured* by mapping every key with the chosen model (slots are non-decreasing in
//!   the key, so the longest run of equal slots is the answer, in O(1) memory), not taken from
//!   the algorithm's bound.

use serde::Serialize;

use crate::error::Result;
use crate::keyfile::Keys;

/// Facts about a sorted key set. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DatasetStats {
    /// Number of keys.
    pub size: usize,
    /// Number of distinct keys.
    pub distinct: usize,
    /// Keys equal to their predecessor (`size - distinct`).
    pub duplicates: usize,
    /// Smallest key, if any.
    pub min: Option<u64>,
    /// Largest key, if any.
    pub max: Option<u64>,
    /// Optimal PLA segments at eps 8.
    pub pgm_segments_eps8: usize,
    /// Optimal PLA segments at eps 64.
    pub pgm_segments_eps64: usize,
    /// Optimal PLA segments at eps 512.
    pub pgm_segments_eps512: usize,
    /// Most keys sharing one of `size` slots under LIPP's FMCD model.
    pub lipp_conflict_degree: usize,
}

/// The stages [`compute`] reports to its progress hook, in order.
pub const STAGES: [&str; 5] = ["counting", "pla eps 8", "pla eps 64", "pla eps 512", "fmcd"];

/// Computes the statistics of sorted `keys`, calling `progress` with each stage of
/// [`STAGES`] as it starts (the PLA passes dominate: about a second per 10^7 keys each).
///
/// Returns the library's `OutOfOrder` error for unsorted keys.
pub fn compute(
    keys: &[u64],
    mut progress: Option<&mut dyn FnMut(&'static str)>,
) -> Result<DatasetStats> {
    let mut stage = |name| {
        if let Some(p) = progress.as_mut() {
            p(name)
        }
    };
    stage(STAGES[0]);
    lidx::raw::key::check_sorted(keys)?;
    let duplicates = keys.windows(2).filter(|w| w[0] == w[1]).count();
    let mut pla = |eps: usize, name| -> Result<usize> {
        stage(name);
        Ok(lidx::model::optimal_pla(keys, eps)?.len())
    };
    let (eps8, eps64, eps512) = (
        pla(8, STAGES[1])?,
        pla(64, STAGES[2])?,
        pla(512, STAGES[3])?,
    );
    stage(STAGES[4]);
    Ok(DatasetStats {
        size: keys.len(),
        distinct: keys.len() - duplicates,
        duplicates,
        min: keys.first().copied(),
        max: keys.last().copied(),
        pgm_segments_eps8: eps8,
        pgm_segments_eps64: eps64,
        pgm_segments_eps512: eps512,
        lipp_conflict_degree: conflict_degree(keys, fmcd(keys)),
    })
}

/// A linear map from key offsets (`key - keys[0]`) to slot numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotModel {
    /// Slots per unit of key.
    pub slope: f64,
    /// Slot of `keys[0]`.
    pub intercept: f64,
}

/// LIPP's FMCD model of sorted `keys` into `keys.len()` slots (module docs).
pub fn fmcd(keys: &[u64]) -> SlotModel {
    let n = keys.len();
    let off = |i: usize| (keys[i] - keys[0]) as f64;
    let extremes = || {
        let span = n.checked_sub(1).map_or(0.0, &off);
        SlotModel {
            slope: if span > 0.0 {
                (n - 1) as f64 / span
            } else {
                0.0
            },
            intercept: 0.0,
        }
    };
    if n < 3 {
        return extremes();
    }
    let slots = (n - 2) as f64;
    let width = |d: usize| (off(n - 1 - d) - off(d)) / slots;
    let (mut i, mut d) = (0usize, 1usize);
    let mut u = width(d);
    while i + d < n {
        while i + d < n && off(i + d) - off(i) >= u {
            i += 1;
        }
        if i + d >= n {
            break;
        }
        d += 1;
        if 3 * d > n {
            return extremes();
        }
        u = width(d);
    }
    if u <= 0.0 {
        return extremes();
    }
    // Centre the inner keys: the midpoint of keys[d] and keys[n-1-d] lands on slot n/2.
    let slope = 1.0 / u;
    SlotModel {
        slope,
        intercept: (n as f64 - slope * (off(d) + off(n - 1 - d))) / 2.0,
    }
}

/// The largest number of `keys` (sorted) that `model` puts into one of `keys.len()` slots.
pub fn conflict_degree(keys: &[u64], model: SlotModel) -> usize {
    let Some(&first) = keys.first() else {
        return 0;
    };
    let last_slot = keys.len() - 1;
    let slot = |k: u64| {
        let s = model.intercept + model.slope * (k - first) as f64;
        (s as usize).min(last_slot)
    };
    let (mut best, mut run, mut current) = (0, 0, usize::MAX);
    for &k in keys {
        let s = slot(k);
        if s == current {
            run += 1;
        } else {
            (current, run) = (s, 1);
        }
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Generator;

    #[test]
    fn counts_and_range() {
        let keys = [3u64, 3, 5, 9, 9, 9];
        let s = compute(&keys, None).unwrap();
        assert_eq!((s.size, s.distinct, s.duplicates), (6, 3, 3));
        assert_eq!((s.min, s.max), (Some(3), Some(9)));
        assert_eq!(s.lipp_conflict_degree, 3, "three equal keys share a slot");
        let empty = compute(&[], None).unwrap();
        assert_eq!(
            (empty.size, empty.min, empty.lipp_conflict_degree),
            (0, None, 0)
        );
        assert_eq!(empty.pgm_segments_eps8, 0);
    }

    #[test]
    fn progress_sees_every_stage_and_unsorted_keys_are_refused() {
        let mut seen = Vec::new();
        let mut hook = |s: &'static str| seen.push(s);
        compute(&[1, 2, 3], Some(&mut hook)).unwrap();
        assert_eq!(seen, STAGES);
        assert!(compute(&[2, 1], None).is_err());
    }

    #[test]
    fn hardness_orders_datasets() {
        let dense = compute(&Generator::UniformDense.generate(10_000, 1), None).unwrap();
        assert_eq!((dense.pgm_segments_eps8, dense.pgm_segments_eps512), (1, 1));
        // FMCD maps keys[1] to exactly slot 1.0; rounding may drop it into slot 0 with keys[0].
        assert!(dense.lipp_conflict_degree <= 2, "{dense:?}");
        let logn = compute(&Generator::Lognormal.generate(10_000, 1), None).unwrap();
        assert!(logn.pgm_segments_eps8 > logn.pgm_segments_eps64);
        assert!(logn.pgm_segments_eps64 >= logn.pgm_segments_eps512);
        assert!(logn.lipp_conflict_degree > 1);
    }

    #[test]
    fn fmcd_beats_the_extreme_line_on_a_skewed_set() {
        // One far outlier: the extreme line crams everything else into slot 0.
        let mut keys: Vec<u64> = (0..1000).collect();
        keys.push(1 << 40);
        let extreme = SlotModel {
            slope: (keys.len() - 1) as f64 / (1u64 << 40) as f64,
            intercept: 0.0,
        };
        assert_eq!(conflict_degree(&keys, extreme), 1000);
        assert!(conflict_degree(&keys, fmcd(&keys)) <= 2);
    }

    #[test]
    fn stats_serialize_to_json() {
        let s = compute(&[1, 2], None).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"lipp_conflict_degree\":1"), "{json}");
    }
}

/// Statistics of keys of any type ([`Keys`]): the figures a model sees are computed on the
/// keys' model image ([`lidx::Key::to_model`] for fixed-width types, which is exact for the
/// numbers; the first 8 bytes, big-endian and zero-padded, for strings, as the 16-byte key type
/// maps them), while counts, duplicates and the extremes are the keys' own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypedStats {
    /// `u64`, `u32`, `i64`, `f64`, `str16` or `text`.
    pub key_type: &'static str,
    /// Number of keys.
    pub size: usize,
    /// Number of distinct keys.
    pub distinct: usize,
    /// Keys equal to their predecessor.
    pub duplicates: usize,
    /// Smallest key, printed (strings escaped), if any.
    pub min: Option<String>,
    /// Largest key, printed, if any.
    pub max: Option<String>,
    /// What the model-space figures below are computed on.
    pub model_image: &'static str,
    /// The model image's statistics (its own `min`, `max` and duplicates are the image's).
    pub model: DatasetStats,
    /// Strings only: share of keys whose first 8 bytes equal a neighbour's, the keys a model
    /// of the first 8 bytes cannot tell apart.
    pub shared_first_8_bytes: Option<f64>,
    /// Text only: mean key length in bytes.
    pub mean_length: Option<f64>,
    /// Text only: longest key in bytes.
    pub max_length: Option<usize>,
}

/// Computes [`TypedStats`] of sorted `keys`.
pub fn compute_typed(
    keys: &Keys,
    progress: Option<&mut dyn FnMut(&'static str)>,
) -> Result<TypedStats> {
    fn fixed<K: lidx::Key>(keys: &[K], show: impl Fn(&K) -> String) -> (Vec<u64>, Basics) {
        let duplicates = keys
            .windows(2)
            .filter(|w| w[0].key_cmp(&w[1]).is_eq())
            .count();
        let basics = Basics {
            duplicates,
            min: keys.first().map(&show),
            max: keys.last().map(&show),
        };
        (keys.iter().map(|k| k.to_model()).collect(), basics)
    }
    let numbers = "the keys themselves (order-preserving map to u64)";
    let heads = "the first 8 bytes of each key, big-endian, zero-padded";
    let escape = |k: &[u8]| lidx::raw::mem::string_index::escape(k);
    let (image, basics, model_image) = match keys {
        Keys::U64(k) => {
            let (i, b) = fixed(k, u64::to_string);
            (i, b, numbers)
        }
        Keys::U32(k) => {
            let (i, b) = fixed(k, u32::to_string);
            (i, b, numbers)
        }
        Keys::I64(k) => {
            let (i, b) = fixed(k, i64::to_string);
            (i, b, numbers)
        }
        Keys::F64(k) => {
            let (i, b) = fixed(k, f64::to_string);
            (i, b, numbers)
        }
        Keys::Str16(k) => {
            let (i, b) = fixed(k, |s| escape(s));
            (i, b, heads)
        }
        Keys::Bytes(k) => {
            let basics = Basics {
                duplicates: k.windows(2).filter(|w| w[0] == w[1]).count(),
                min: k.first().map(|s| escape(s)),
                max: k.last().map(|s| escape(s)),
            };
            (
                k.iter().map(|s| lidx::raw::key::head8(s)).collect(),
                basics,
                heads,
            )
        }
    };
    let model = compute(&image, progress)?;
    let (shared, mean_length, max_length) = match keys {
        Keys::Bytes(k) => (
            Some(crate::words::shared_prefix_fraction(k)),
            Some(k.iter().map(Vec::len).sum::<usize>() as f64 / k.len().max(1) as f64),
            k.iter().map(Vec::len).max(),
        ),
        Keys::Str16(k) => {
            let owned: Vec<Vec<u8>> = k.iter().map(|s| s.to_vec()).collect();
            (
                Some(crate::words::shared_prefix_fraction(&owned)),
                None,
                None,
            )
        }
        _ => (None, None, None),
    };
    Ok(TypedStats {
        key_type: keys.type_name(),
        size: keys.len(),
        distinct: keys.len() - basics.duplicates,
        duplicates: basics.duplicates,
        min: basics.min,
        max: basics.max,
        model_image,
        model,
        shared_first_8_bytes: shared,
        mean_length,
        max_length,
    })
}

/// Counts and extremes of the keys themselves.
struct Basics {
    duplicates: usize,
    min: Option<String>,
    max: Option<String>,
}
