//! The PGM-index: a static index made of levels of optimal piecewise-linear models.
//!
//! Paper 000 §2.2: "Each level is an error bounded linear regression model built using piecewise
//! linear approximation ... the lowest level approximating the CDF curve of the data. Higher
//! levels are built recursively as PLA models approximating the list consisting of end points of
//! the line segments in the next level." The bottom level is the optimal PLA of the data's CDF
//! with error `eps` ([`crate::model::opt_pla`], paper 001 §IV-A's Opt-PLA); level `i + 1` is the
//! optimal PLA, with error `eps_recursive`, of the first keys of level `i`'s segments against
//! their positions, until a level has one segment (the root).
//!
//! A query descends from the root: each segment predicts the position of the right segment one
//! level down, clamped (as PGM does) to the first position covered by the next segment, since
//! the key is below that segment's first key; a forward scan of the `2 * eps_recursive + 3`
//! window around the prediction, to the last first key `<= key`, picks the segment. At the
//! bottom the segment's prediction, clamped the same way, gives the window of
//! [`ApproxPos::for_key`], at most `2 * eps + 2` wide for injective keys.
//!
//! What we do differently, and why:
//!
//! * Levels are stored flat in one array, bottom level first, each segment as a 32-byte entry
//!   (first key, slope, intercept, next position) aligned to 32, and each level ends with a
//!   sentinel entry whose key stops every scan. PGM's reference code also stores whole
//!   segments, in 16 bytes (a `float` slope and a 32-bit intercept), with a sentinel; we keep
//!   the `f64` models, whose error bound is proved as evaluated (below), and the saved format.
//!   Until session 64 the first keys and the models were two parallel arrays, so that a scan
//!   read only keys; but then the model of the segment a scan stops on is a second miss that
//!   waits for the scan. On the Zen 5 VM (session 64; throwaway timer, 2M uniform lookups of
//!   present keys, each build in its own process beside the C++ PGM-index 64/8, seven passes
//!   alternated with it, the median of the per-pass ratios to its time) the interleaved
//!   entries took 0.79x the C++ time where the two arrays took 1.02x on 50M `zipf-gaps` keys,
//!   0.94x against 1.15x on 200M lognormal, 0.73x against 1.04x on 50M `cells` and 0.66x
//!   against 0.95x on 10M `zipf-gaps` in a first round; in a second, 0.61-0.88x on all eleven
//!   key sets measured against 0.69-1.27x (`docs/results/cpp-references.md`).
//! * Each level's window is scanned forward until a key is too large, as PGM's code does: a
//!   branch the core predicts, so it runs ahead into the next level and the last mile before
//!   the scan's loads arrive. Sessions 53-58 bisected it without a branch; on the Intel Xeon VM
//!   (session 59) the scan is faster on every key set measured (`step_down` has the figures).
//! * Models predict on model-space keys ([`Key::to_model`]); duplicates and string keys are
//!   handled by the CDF points of [`crate::model::points`] and the window of
//!   [`ApproxPos::for_key`], which PGM's code does not define.
//! * The maximum error holds for the `f64` models as evaluated (see [`crate::model::opt_pla`]).
//! * A lookup is kept to few instructions, since every lookup is a chain of misses and the
//!   fewer instructions each takes, the more of them the core keeps in flight. Predictions are
//!   clamped on the float ([`crate::model::linear`]), and the default `eps`'s 130-key window
//!   is bisected with a constant length. On the Intel Xeon VM (callgrind, 1M lognormal keys) a
//!   lookup went from 475 to 334 instructions, and on 10M keys from 174-206 ns to 126-130 ns,
//!   1.9x our binary search (`docs/results/cpp-references.md`, session 53; the upper levels
//!   were then bisected, see the scan above).
//! * The last mile of a full default window prefetches the 12 lines around the prediction, not
//!   all 18 of the window: the bisection reads the outer lines only for keys far from the
//!   prediction, and each line asked for holds one of the dozen misses a core keeps in flight.
//!   PGM's code prefetches nothing and searches with a branch. On the Intel Xeon VM this took
//!   50M lognormal keys from 235-238 to 203-204 ns a lookup (see [`search::prefetch_centred`]).
//! * How many lines to ask for depends on the core: one that keeps many misses in flight (the
//!   AMD EPYC VMs' Zen cores, [`crate::cpu`]) takes the 16 around the prediction (chosen when
//!   the index is built or loaded, never saved). PGM's code has one layout for every core.
//!   Those cores also prefetched a large bottom level's search window before scanning it
//!   while the models were apart from the keys (sessions 61-63); with the entries
//!   interleaved, on the Zen 5 VM, it cost time on four of the six key sets measured whose
//!   bottom level was past its 256 KiB bound (10M and 50M `zipf-gaps`, 50M `cells`, 200M
//!   lognormal; 50M `cells` 0.87x the C++ time with it, 0.74x without) and was within the
//!   noise on the other two (10M `cells`, 50M `gre`), so no core takes it.

use std::marker::PhantomData;

use crate::codec::{Decoder, Encoder, MAX_LEN};
use crate::error::{Error, Result};
use crate::index::{ApproxPos, Shape, StaticIndex};
use crate::key::{check_sorted, Key};
use crate::mem::persist::Persist;
use crate::model::linear::{position_of, LinearModel};
use crate::model::opt_pla::{optimal_pla_points, OptPlaBuilder};
use crate::model::points::{cdf_points, CdfPoint};
use crate::model::segment::Segment;
use crate::search;

/// The largest `eps` or `eps_recursive` accepted; windows of this size are already useless.
const MAX_EPS: usize = 1 << 32;

/// `InvalidParameter` for a bottom-level `eps` over [`MAX_EPS`]; the FITing-tree's segments
/// share the bound.
pub(crate) fn check_eps(eps: usize) -> Result<()> {
    if eps > MAX_EPS {
        return Err(Error::InvalidParameter {
            name: "eps",
            value: eps.to_string(),
            expected: "at most 2^32",
        });
    }
    Ok(())
}
/// Parameters of a [`Pgm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgmParams {
    /// Maximum error of the bottom level, in positions. Larger means fewer segments (less
    /// memory, a shallower tree) but a wider final window (a longer last-mile search).
    pub eps: usize,
    /// Maximum error of the upper levels, in segments, at least 1 (so that every level is at
    /// most half the one below). Larger means fewer levels but a wider window to search in
    /// each level.
    pub eps_recursive: usize,
}

impl Default for PgmParams {
    /// `eps = 64` as the PGM-index; `eps_recursive = 8` rather than its 4: on 50M lognormal
    /// keys it gives 3 levels instead of 4 and about 7% faster lookups (measured with
    /// `lidx bench --index pgm:eps_rec=4,pgm:eps_rec=8,pgm:eps_rec=16`; 16 was no better).
    fn default() -> Self {
        PgmParams {
            eps: 64,
            eps_recursive: 8,
        }
    }
}

impl PgmParams {
    /// Parameters with the given errors.
    pub fn new(eps: usize, eps_recursive: usize) -> Self {
        PgmParams { eps, eps_recursive }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        check_eps(self.eps)?;
        if !(1..=MAX_EPS).contains(&self.eps_recursive) {
            return Err(Error::InvalidParameter {
                name: "eps_recursive",
                value: self.eps_recursive.to_string(),
                expected: "from 1 to 2^32 (with 1, every upper segment still covers two or more)",
            });
        }
        Ok(())
    }
}

/// One segment as lookups read it: its first key beside its model, 32 bytes aligned to 32, so
/// that an entry never spans two cache lines and the line that a level's scan stops on holds
/// the model the next step needs (see the module docs).
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    /// First model-space key of the segment.
    key: u64,
    slope: f64,
    intercept: f64,
    /// First position covered by the next segment of the level (the level below's length for
    /// the last segment): no key of this segment can have a larger lower bound.
    next_pos: usize,
}

impl Entry {
    /// The entry after a level's last segment, whose key (`u64::MAX`, above every key a
    /// descent compares, see [`Pgm::find_segment`]) ends every scan of the level.
    fn sentinel(below_len: usize) -> Self {
        Entry {
            key: u64::MAX,
            slope: 0.0,
            intercept: below_len as f64,
            next_pos: below_len,
        }
    }
}

/// One level's place in the flat array: `len` segments from `offset`, then its sentinel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Level {
    offset: usize,
    len: usize,
}

/// The PGM-index over `n` sorted keys of type `K` (which it does not store).
#[derive(Debug, Clone)]
pub struct Pgm<K> {
    n: usize,
    params: PgmParams,
    /// Every segment of every level, bottom level first, each level followed by its
    /// [`Entry::sentinel`].
    entries: Vec<Entry>,
    /// Bottom level first; the last level has one segment.
    levels: Vec<Level>,
    /// Cache lines a bottom-level window can span ([`search::window_lines`] of `2 * eps + 2`
    /// keys), prefetched by `lower_bound` (a full 130-key window prefetches its 12 or 16
    /// middle lines instead).
    window_lines: usize,
    /// Whether a full default window asks for [`CENTRED_LINES_MANY`] lines around the
    /// prediction rather than [`CENTRED_LINES`]: true on a core that keeps many misses in
    /// flight ([`crate::cpu::many_misses_in_flight`]), chosen when the index is built or
    /// loaded, never saved.
    wide: bool,
    _key: PhantomData<fn() -> K>,
}

impl<K: Key> Pgm<K> {
    /// Builds the index on sorted `keys` (duplicates allowed). Returns `OutOfOrder` or
    /// `InvalidKey` for bad keys, `InvalidParameter` for an error above 2^32 or an
    /// `eps_recursive` of 0.
    pub fn build(keys: &[K], params: PgmParams) -> Result<Self> {
        params.validate()?;
        check_sorted(keys)?;
        let mut builder = OptPlaBuilder::new(params.eps);
        let mut bottom = Vec::with_capacity(keys.len() / (params.eps.max(1) * 16) + 1);
        for p in cdf_points(keys) {
            bottom.extend(builder.add_point(p));
        }
        bottom.extend(builder.finish());
        Ok(Self::from_bottom(keys.len(), params, bottom))
    }

    /// The index over `n` keys whose bottom level was fitted elsewhere (the page-aware fit of
    /// [`crate::mem::pgm_zero`]). Each segment's `first_rank` must be the true rank of its first
    /// CDF point, the first one 0: `search` clamps predictions to the next segment's.
    #[doc(hidden)]
    pub fn from_segments(n: usize, params: PgmParams, bottom: Vec<Segment>) -> Result<Self> {
        params.validate()?;
        Ok(Self::from_bottom(n, params, bottom))
    }

    /// The prediction `search` makes for model-space key `v`: its bottom segment's model,
    /// clamped to the next segment's first rank. The index must not be empty.
    #[doc(hidden)]
    #[inline]
    pub fn predict(&self, v: u64) -> f64 {
        let i = self.find_segment(v);
        self.model(i)
            .predict(v)
            .min(self.entries[i].next_pos as f64)
    }

    /// Stacks the upper levels on `bottom` (the optimal PLA of the data) and lays them out.
    fn from_bottom(n: usize, params: PgmParams, bottom: Vec<Segment>) -> Self {
        let mut levels_segments = vec![bottom];
        while let Some(last) = levels_segments.last().filter(|l| l.len() > 1) {
            let points = last
                .iter()
                .enumerate()
                .map(|(y, s)| CdfPoint { x: s.first_key, y });
            let up = optimal_pla_points(points, params.eps_recursive);
            levels_segments.push(up);
        }
        let total: usize = levels_segments.iter().map(|l| l.len() + 1).sum();
        let mut entries = Vec::with_capacity(total);
        let mut levels = Vec::with_capacity(levels_segments.len());
        let mut below_len = n;
        for segments in levels_segments.iter().filter(|s| !s.is_empty()) {
            levels.push(Level {
                offset: entries.len(),
                len: segments.len(),
            });
            for (i, s) in segments.iter().enumerate() {
                entries.push(Entry {
                    key: s.first_key,
                    slope: s.model.slope,
                    intercept: s.model.intercept,
                    next_pos: segments.get(i + 1).map_or(below_len, |t| t.first_rank),
                });
            }
            entries.push(Entry::sentinel(below_len));
            below_len = segments.len();
        }
        Pgm {
            n,
            params,
            entries,
            levels,
            window_lines: window_lines::<K>(params),
            wide: crate::cpu::many_misses_in_flight(),
            _key: PhantomData,
        }
    }

    /// Number of levels, the bottom level included (0 when built on no keys).
    pub fn height(&self) -> usize {
        self.levels.len()
    }

    /// The bottom level's segments (the optimal PLA of the data).
    pub fn segments(&self) -> Vec<Segment> {
        let Some(bottom) = self.levels.first() else {
            return Vec::new();
        };
        (0..bottom.len)
            .map(|i| Segment {
                first_key: self.entries[i].key,
                first_rank: if i == 0 {
                    0
                } else {
                    self.entries[i - 1].next_pos
                },
                model: self.model(i),
            })
            .collect()
    }

    /// Number of segments in the bottom level.
    pub fn segment_count(&self) -> usize {
        self.levels.first().map_or(0, |l| l.len)
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> PgmParams {
        self.params
    }

    /// Maximum error of the bottom level.
    pub fn eps(&self) -> usize {
        self.params.eps
    }

    /// Bytes of the index structure (keys and models of every level).
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.entries.len() * std::mem::size_of::<Entry>()
            + self.levels.len() * std::mem::size_of::<Level>()
    }

    /// The model of the segment at flat index `i`, exactly as the builder produced it.
    #[inline(always)]
    fn model(&self, i: usize) -> LinearModel {
        let e = &self.entries[i];
        LinearModel {
            x0: e.key,
            slope: e.slope,
            intercept: e.intercept,
        }
    }

    /// Index in the bottom level of the last segment whose first key is `<= max(v, first key)`.
    ///
    /// The descent compares `min(v, u64::MAX - 1)`, below every level's sentinel. For `v ==
    /// u64::MAX` that can stop one segment before a last segment whose first key is `u64::MAX`;
    /// the window is still right, as for any key between two segments' first keys: the
    /// prediction is clamped to that segment's first position, the lower bound of `u64::MAX`.
    #[inline(always)]
    fn find_segment(&self, v: u64) -> usize {
        let k = v.max(self.entries[0].key).min(u64::MAX - 1);
        let top = self.levels.len() - 1;
        let mut up = self.levels[top].offset;
        for l in (0..top).rev() {
            up = self.step_down(up, self.levels[l], k);
        }
        up
    }

    /// The segment of `level` (flat index) whose first key is the last `<= k`, from segment
    /// `up` of the level above; `k` is below `u64::MAX`.
    ///
    /// Keys before `pos - eps - 1` are `<= k` and keys after `pos + eps + 1` above it (see the
    /// module docs), so the answer lies at or after the key just before that window, and that
    /// key (or the level's first, every level's first key being the smallest, `<= k`) is
    /// `<= k`: a forward scan from it stops at the answer, at the latest on the level's
    /// sentinel. The scan's exit is a branch, which the core predicts and runs past, into the
    /// next level and the last mile, before the scan's loads arrive; a bisection without a
    /// branch makes every later load wait for all of its steps. The line the scan stops on
    /// holds the segment's model, which the next step reads.
    ///
    /// Measured with a throwaway timer on the Intel Xeon VM (2M uniform lookups of present
    /// keys, median of 5 passes, variants alternated in one process, with the last mile of
    /// `search::prefetch_centred`), ns a lookup, the scan against the fixed 19-key bisection
    /// it replaced: 10M lognormal 129.4 / 134.4, `cells` 155.1 / 163.0, `gre` 120.0 / 121.0,
    /// `uniform-sparse` 91.0 / 96.0, `zipf-gaps` 168.7 / 180.2; 50M lognormal 198.2 / 206.4,
    /// `cells` 220.6-228.7 / 236.7-242.9, `gre` 193.8 / 200.0, `uniform-sparse` 189.3 / 200.9,
    /// `zipf-gaps` 273.9-283.8 / 324.3-329.6; 200M lognormal 258.1 / 270.6. A branchy
    /// bisection of the window was slower than both (50M lognormal 228.4, `zipf-gaps` 489.5).
    /// Written with each window sliced with checked bounds, and the bottom level inside the
    /// descent's loop, the same scan took 159.5 ns on 10M lognormal keys where this form took
    /// 112.4 (two runs of the timer). (Those runs had first keys and models in two arrays;
    /// the entries are interleaved since session 64, see the module docs.)
    #[inline(always)]
    fn step_down(&self, up: usize, level: Level, k: u64) -> usize {
        let eps = self.params.eps_recursive;
        let pos = position_of(self.model(up).predict(k), self.entries[up].next_pos);
        // pos <= next_pos <= level.len (built so, and checked when decoded), and eps >= 1, so
        // the scan starts inside the level, and its sentinel (at level.offset + level.len, key
        // u64::MAX > k) ends it.
        let mut i = level.offset + pos.saturating_sub(eps + 2);
        // SAFETY: i + 1 <= level.offset + level.len, the sentinel's index, before each read
        // (above); unchecked reads, since a scan with checked bounds was slower (above). The
        // scan is not bounded by the window: models that break their error bound (a damaged
        // file that still decodes) cost a longer scan, up to the level's length, not a read
        // outside it.
        while unsafe { self.entries.get_unchecked(i + 1) }.key <= k {
            i += 1;
        }
        i
    }
}

/// A full last-mile window at the default `eps` (64): `2 * 64 + 2` keys. Any window of exactly
/// this length takes the unrolled search, whatever `eps`; others (other `eps`, or a window cut
/// at either end of the keys) take the loop.
const DEFAULT_BOTTOM_WINDOW: usize = 130;

/// Cache lines prefetched around the prediction in a full default window (of its 18):
/// [`search::prefetch_centred`] has the measurements. Other `eps` keep the whole window's
/// prefetch: 12 centred lines of a 34-line window (`eps` 128, 50M keys, Intel Xeon VM, two
/// rounds) took 0.79-0.81x the time on `gre` keys but 1.08-1.18x on lognormal ones.
const CENTRED_LINES: usize = 12;

/// [`CENTRED_LINES`] on a core that keeps many misses in flight ([`crate::cpu`]). On the Zen 3
/// VM (session 61; throwaway timer, 2M uniform lookups of present keys, variants and the C++
/// PGM-index alternated pass by pass in one process, nine passes, the median of the per-pass
/// ratios to the C++ time) 16 lines took 0.83-0.95x the time of 12 on all ten key sets (10M and
/// 50M lognormal, `cells`, `gre`, `uniform-sparse`, `zipf-gaps`); 14 lines were between the
/// two, all 18 slower than 16 on seven of the ten. On the Intel Xeon VM 16 lines took 1.10x the
/// time of 12 (50M lognormal, session 59), so that core keeps 12.
const CENTRED_LINES_MANY: usize = 16;

/// The cache lines a window of `params` can span (`2 * eps + 2` keys, see
/// [`ApproxPos::from_prediction`]; [`ApproxPos::for_key`] can widen it for keys whose model
/// map is not injective, and such a wider window is searched with the search's own prefetches).
fn window_lines<K>(params: PgmParams) -> usize {
    search::window_lines::<K>(params.eps.saturating_mul(2).saturating_add(2))
}

impl<K: Key> StaticIndex<K> for Pgm<K> {
    #[inline]
    fn search(&self, key: K) -> ApproxPos {
        if self.n == 0 {
            return ApproxPos::default();
        }
        let v = key.to_model();
        self.window_at(self.find_segment(v), key, v)
    }

    /// The window, then every cache line a window of this index can span prefetched in one
    /// straight run ([`search::prefetch_lines`]: the count depends on `eps`, not on the
    /// lookup), then a branchless binary search inside the window. A window of exactly 130
    /// keys (a full one at the default `eps` of 64) has only its 12 middle lines (16 on a core
    /// that keeps many misses in flight), around the prediction, prefetched
    /// (`search::prefetch_centred`) and is bisected with a constant
    /// length; one wider than `2 * eps + 2` (non-injective keys) keeps the search's own
    /// prefetches.
    #[inline]
    fn lower_bound(&self, keys: &[K], key: K) -> usize {
        debug_assert_eq!(keys.len(), self.n);
        let w = self.search(key);
        let window = &keys[w.lo..w.hi];
        if let Ok(fixed) = <&[K; DEFAULT_BOTTOM_WINDOW]>::try_from(window) {
            // The default eps's full window: the lines around its middle (the prediction, for
            // the windows of `ApproxPos::around`), and a bisection of constant length.
            let centre = fixed.as_ptr().wrapping_add(DEFAULT_BOTTOM_WINDOW / 2);
            if self.wide {
                search::prefetch_centred::<K, CENTRED_LINES_MANY>(centre);
            } else {
                search::prefetch_centred::<K, CENTRED_LINES>(centre);
            }
            return w.lo + search::branchless_binary_fixed(fixed, key);
        }
        if self.window_lines == 0 || window.len() > 2 * self.params.eps + 2 {
            return w.lo + search::branchless_lower_bound(window, key);
        }
        search::prefetch_lines(window.as_ptr(), self.window_lines);
        w.lo + search::branchless_binary_prefetched(window, key)
    }

    fn len(&self) -> usize {
        self.n
    }

    fn size_in_bytes(&self) -> usize {
        Pgm::size_in_bytes(self)
    }

    fn shape(&self) -> Shape {
        Shape {
            segments: Some(self.segment_count()),
            height: Some(self.height()),
        }
    }
}

impl<K: Key> Pgm<K> {
    /// The window of `key` (model value `v`) from bottom segment `i`, the last whose first key
    /// is `<= max(v, first key)`.
    #[inline(always)]
    fn window_at(&self, i: usize, key: K, v: u64) -> ApproxPos {
        let model = self.model(i);
        let next_pos = self.entries[i].next_pos;
        if K::MODEL_INJECTIVE {
            // One clamp, to the next segment's first rank (at most n, also for segments handed
            // to `from_segments`): the general path below clamps to it as a float, then to n.
            // Both give the same window for every finite prediction (fitted models are finite).
            let pos = position_of(model.predict(v), next_pos.min(self.n));
            return ApproxPos::around(pos, self.params.eps, self.n);
        }
        let next_key = Some(self.entries[i + 1].key).filter(|_| i + 1 < self.levels[0].len);
        ApproxPos::for_key(key, self.params.eps, self.n, |x| {
            if x != v && next_key.is_some_and(|next| x >= next) {
                // Only v + 1 for non-injective keys: it is the next segment's first key.
                return next_pos as f64;
            }
            model.predict(x).min(next_pos as f64)
        })
    }

    /// A cursor for non-decreasing keys: it walks the bottom level forward instead of
    /// descending from the root for every key (paper 000 §4.1, optimization 1). See
    /// [`PgmCursor`].
    pub fn cursor(&self) -> PgmCursor<'_, K> {
        let mut cursor = PgmCursor {
            pgm: self,
            seg: 0,
            seg_end: u64::MAX,
            model: LinearModel {
                x0: 0,
                slope: 0.0,
                intercept: 0.0,
            },
            next_pos: 0.0,
        };
        if self.n > 0 {
            cursor.enter(0);
        }
        cursor
    }
}

/// A walk along a [`Pgm`]'s bottom level for keys given in non-decreasing order (a join's
/// sorted outer table): [`PgmCursor::search`] returns the same window as
/// [`StaticIndex::search`], finding the key's segment by galloping forward from the previous
/// key's segment, so `m` keys over `s` segments cost `O(m + s)` comparisons at most and no
/// root-to-leaf descent. The current segment's model, its end (the next segment's first key)
/// and its cap (the next segment's first position) are held in the cursor, so a key in the
/// same segment as the one before costs one comparison and one prediction. A key smaller
/// than the previous one gives a window that may miss its lower bound.
pub struct PgmCursor<'a, K> {
    pgm: &'a Pgm<K>,
    seg: usize,
    /// First model-space key of the segment after `seg`; `u64::MAX` after the last.
    seg_end: u64,
    model: LinearModel,
    /// Predictions are capped at the next segment's first position.
    next_pos: f64,
}

impl<K: Key> PgmCursor<'_, K> {
    /// The window of `key`, which must be `>=` every key searched before with this cursor.
    #[inline]
    pub fn search(&mut self, key: K) -> ApproxPos {
        let pgm = self.pgm;
        let v = key.to_model();
        if v >= self.seg_end {
            // Compared as the descent compares it (`Pgm::find_segment`), so that the window is
            // the same as `search`'s for every key, u64::MAX included.
            let bottom = &pgm.entries[..pgm.levels[0].len];
            self.enter(gallop_last_le(bottom, self.seg, v.min(u64::MAX - 1)));
        }
        if K::MODEL_INJECTIVE {
            let pred = self.model.predict(v).min(self.next_pos);
            ApproxPos::from_prediction(pred, pgm.params.eps, pgm.n)
        } else {
            pgm.window_at(self.seg, key, v)
        }
    }

    /// Makes bottom segment `seg` the current one.
    #[cold]
    fn enter(&mut self, seg: usize) {
        let pgm = self.pgm;
        self.seg = seg;
        // The next segment's first key, or the bottom level's sentinel's (u64::MAX).
        self.seg_end = pgm.entries[seg + 1].key;
        self.model = pgm.model(seg);
        self.next_pos = pgm.entries[seg].next_pos as f64;
    }
}

/// The last index `>= from` of `entries` (sorted by key) whose key is `<= v` (`from` when none
/// after it is): galloping forward, then a binary search in the last stride.
#[inline]
fn gallop_last_le(entries: &[Entry], from: usize, v: u64) -> usize {
    let mut at = from;
    let mut step = 1;
    while at + step < entries.len() && entries[at + step].key <= v {
        at += step;
        step *= 2;
    }
    // entries[at].key <= v (or at == from); the answer is in [at, min(at + step, len)).
    let mut n = (at + step).min(entries.len()) - at;
    while n > 1 {
        let half = n / 2;
        if entries[at + half].key <= v {
            at += half;
        }
        n -= half;
    }
    at
}

/// Encoding (kind [`Pgm::KIND`]): `n: u64, eps: u64, eps_recursive: u64, height: u64`, the
/// `height` level lengths (`u64`, bottom level first), then every segment of every level in the
/// same order as `(first_key: u64, slope: f64, intercept: f64, next_pos: u64)`. `decode` checks
/// the parameters' limits, that `n == 0` exactly when there are no levels, that level lengths
/// strictly decrease to a root of one segment, that each level's first keys are non-decreasing
/// and start with the bottom level's first key, that slopes are finite and non-negative and
/// intercepts finite, and that each level's `next_pos` values are non-decreasing, at most the
/// length of the level below (`n` for the bottom) and end exactly at it.
impl<K: Key> Persist<K> for Pgm<K> {
    const KIND: u32 = 1;

    fn encode(&self, out: &mut Encoder) {
        out.usize(self.n);
        out.usize(self.params.eps);
        out.usize(self.params.eps_recursive);
        out.usize(self.levels.len());
        for level in &self.levels {
            out.usize(level.len);
        }
        for level in &self.levels {
            for e in &self.entries[level.offset..level.offset + level.len] {
                out.u64(e.key);
                out.f64(e.slope);
                out.f64(e.intercept);
                out.usize(e.next_pos);
            }
        }
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self> {
        const SEGMENT_BYTES: usize = 32;
        let n = input.usize_at_most(MAX_LEN, "key count")?;
        let params = PgmParams::new(
            input.usize_at_most(MAX_EPS, "eps")?,
            input.usize_at_most(MAX_EPS, "eps_recursive")?,
        );
        if params.eps_recursive == 0 {
            return Err(input.corrupt("eps_recursive is 0"));
        }
        let height = input.count(8, "level count")?;
        if (n == 0) != (height == 0) {
            return Err(input.corrupt(format!("{height} levels over {n} keys")));
        }
        let mut levels = Vec::with_capacity(height);
        let (mut total, mut offset) = (0usize, 0usize);
        for l in 0..height {
            let len = input.usize_at_most(MAX_LEN, "level length")?;
            let below = levels.last().map_or(usize::MAX, |b: &Level| b.len);
            if len == 0 || len >= below || (l + 1 == height) != (len == 1) {
                return Err(input.corrupt(format!(
                    "level {l} has {len} segments (level below: {below}, height {height})"
                )));
            }
            levels.push(Level { offset, len });
            total += len;
            offset += len + 1;
        }
        if total > input.remaining() / SEGMENT_BYTES {
            return Err(input.corrupt(format!("{total} segments do not fit the bytes left")));
        }
        let mut entries: Vec<Entry> = Vec::with_capacity(offset);
        let mut below_len = n;
        for (l, level) in levels.iter().enumerate() {
            for i in 0..level.len {
                let key = input.u64()?;
                let slope = input.f64_finite("slope")?;
                let intercept = input.f64_finite("intercept")?;
                let next_pos = input.usize_at_most(below_len, "next segment's position")?;
                let first = i == 0 && (l == 0 || key == entries[0].key);
                let ordered = i > 0 && entries.last().is_some_and(|p| p.key <= key);
                if !(first || ordered) {
                    return Err(input.corrupt(format!("level {l}: first keys out of order")));
                }
                if slope < 0.0 {
                    return Err(input.corrupt(format!("level {l}: negative slope {slope}")));
                }
                let last = i + 1 == level.len;
                let prev_next = if i == 0 {
                    0
                } else {
                    entries.last().map_or(0, |e| e.next_pos)
                };
                if next_pos < prev_next || (last && next_pos != below_len) {
                    return Err(input.corrupt(format!(
                        "level {l}: next positions are not non-decreasing up to {below_len}"
                    )));
                }
                entries.push(Entry {
                    key,
                    slope,
                    intercept,
                    next_pos,
                });
            }
            entries.push(Entry::sentinel(below_len));
            below_len = level.len;
        }
        Ok(Pgm {
            n,
            params,
            entries,
            levels,
            window_lines: window_lines::<K>(params),
            wide: crate::cpu::many_misses_in_flight(),
            _key: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_lines_cover_every_window() {
        // 130 keys of 8 bytes (eps 64) span 16.25 lines: 18 when the first is misaligned.
        assert_eq!(window_lines::<u64>(PgmParams::new(64, 8)), 18);
        assert_eq!(window_lines::<u64>(PgmParams::new(1 << 20, 8)), 0);
        // 2 * 247 + 2 keys need 62 + 1 lines; from eps 248 the 6-bit count would overflow.
        assert_eq!(window_lines::<u64>(PgmParams::new(247, 8)), 63);
        for eps in 248..=256 {
            assert_eq!(window_lines::<u64>(PgmParams::new(eps, 8)), 0, "eps {eps}");
        }
    }

    /// `n` increasing keys, the gap before key `i` given by `gap(i, r)` for a pseudo-random
    /// `r` (xorshift, fixed seed).
    fn gapped_keys(n: u64, gap: impl Fn(u64, u64) -> u64) -> Vec<u64> {
        let mut x = 7u64;
        (0..n)
            .scan(0u64, |k, i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *k += gap(i, x);
                Some(*k)
            })
            .collect()
    }

    #[test]
    fn every_level_scan_lands_on_the_right_segment() {
        // Gaps of 1 to 1000 and runs of equal gaps, so that segments are short and their
        // windows start at, and end past, the ends of every level; eps_recursive 1 and 2 give
        // many levels. Each key, and the keys just around it: the segment the descent lands
        // on against the last bottom-level first key <= it, and the lookup against
        // partition_point.
        let keys = gapped_keys(
            200_000,
            |i, r| if (i / 500) % 2 == 0 { 1 + r % 1000 } else { 3 },
        );
        for params in [
            PgmParams::new(1, 1),
            PgmParams::new(4, 2),
            PgmParams::new(64, 8),
            PgmParams::new(2, 8),
        ] {
            let mut pgm = Pgm::build(&keys, params).unwrap();
            assert!(pgm.height() >= 2, "{params:?}: height {}", pgm.height());
            let firsts: Vec<u64> = pgm.entries[..pgm.levels[0].len]
                .iter()
                .map(|e| e.key)
                .collect();
            // Both cores' last miles (12 lines around the prediction of a full 130-key window,
            // at eps 64, and 16).
            for wide in [false, true] {
                pgm.wide = wide;
                for &k in keys.iter().step_by(7) {
                    for q in [k - 1, k, k + 1] {
                        let segment = firsts.partition_point(|&x| x <= q).saturating_sub(1);
                        assert_eq!(pgm.find_segment(q), segment, "{params:?} key {q}");
                        let want = keys.partition_point(|&x| x < q);
                        assert_eq!(pgm.lower_bound(&keys, q), want, "{params:?} key {q}");
                    }
                }
                assert_eq!(pgm.lower_bound(&keys, 0), 0);
                assert_eq!(pgm.lower_bound(&keys, u64::MAX), keys.len());
            }
        }
    }

    #[test]
    fn a_large_bottom_level_answers_right() {
        // Gaps of 1 to 1000 with eps 1: about one segment every 18 keys, so 1M keys give a
        // bottom level of about 55,000 segments, past the caches of the machines measured.
        let keys = gapped_keys(1_000_000, |_, r| 1 + r % 1000);
        let pgm = Pgm::build(&keys, PgmParams::new(1, 8)).unwrap();
        assert!(
            pgm.segment_count() > 40_000,
            "{} segments",
            pgm.segment_count()
        );
        for (i, &k) in keys.iter().enumerate().step_by(3) {
            assert_eq!(pgm.lower_bound(&keys, k), i);
            assert_eq!(pgm.lower_bound(&keys, k + 1), i + 1, "absent key {}", k + 1);
        }
        assert_eq!(pgm.lower_bound(&keys, 0), 0);
        assert_eq!(pgm.lower_bound(&keys, u64::MAX), keys.len());
    }

    #[test]
    fn entries_fill_half_a_line_and_the_choice_follows_the_core() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        assert_eq!(std::mem::align_of::<Entry>(), 32);
        // A loaded index chooses its last mile for the core it is loaded on, as a built one
        // does, and has the same entries, sentinels included.
        let keys = gapped_keys(100_000, |_, r| 1 + r % 1000);
        let pgm = Pgm::build(&keys, PgmParams::new(1, 8)).unwrap();
        assert_eq!(pgm.wide, crate::cpu::many_misses_in_flight());
        let mut out = Encoder::new();
        pgm.encode(&mut out);
        let bytes = out.into_bytes();
        // The saved format has no sentinels: 4 + height words, then 32 bytes a segment.
        let segments: usize = pgm.levels.iter().map(|l| l.len).sum();
        assert_eq!(bytes.len(), 8 * (4 + pgm.height()) + 32 * segments);
        let loaded = Pgm::<u64>::decode(&mut Decoder::new("pgm", &bytes)).unwrap();
        assert_eq!(loaded.wide, pgm.wide);
        assert_eq!(loaded.levels, pgm.levels);
        assert_eq!(loaded.entries, pgm.entries);
        for level in &pgm.levels {
            let sentinel = pgm.entries[level.offset + level.len];
            assert_eq!(sentinel.key, u64::MAX);
        }
        assert_eq!(
            pgm.entries.len(),
            pgm.levels.iter().map(|l| l.len + 1).sum()
        );
    }

    #[test]
    fn keys_up_to_u64_max_answer_right() {
        // The descent compares keys below u64::MAX, the sentinels' key: a last segment whose
        // first key is u64::MAX (alone, or after equal keys) is found through its neighbour.
        for tail in [
            vec![u64::MAX],
            vec![u64::MAX; 5],
            vec![u64::MAX - 1, u64::MAX],
        ] {
            let mut keys = gapped_keys(50_000, |_, r| 1 + r % 100);
            keys.extend(&tail);
            for params in [
                PgmParams::new(1, 1),
                PgmParams::new(4, 2),
                PgmParams::new(64, 8),
            ] {
                let pgm = Pgm::build(&keys, params).unwrap();
                for q in [u64::MAX, u64::MAX - 1, u64::MAX - 2, keys[49_999], 0] {
                    let want = keys.partition_point(|&x| x < q);
                    assert_eq!(
                        pgm.lower_bound(&keys, q),
                        want,
                        "{params:?} {tail:?} key {q}"
                    );
                    let mut cursor = pgm.cursor();
                    assert_eq!(
                        cursor.search(q),
                        pgm.search(q),
                        "{params:?} {tail:?} key {q}"
                    );
                }
            }
        }
    }

    #[test]
    fn levels_shrink_to_one_root() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| i * i + (i % 13) * 1000).collect();
        let mut keys = keys;
        keys.sort_unstable();
        let pgm = Pgm::build(&keys, PgmParams::new(4, 2)).unwrap();
        assert!(pgm.height() >= 2, "{:?}", pgm.shape());
        let lens: Vec<usize> = pgm.levels.iter().map(|l| l.len).collect();
        assert_eq!(*lens.last().unwrap(), 1);
        assert!(lens.windows(2).all(|w| w[0] > w[1]), "{lens:?}");
        assert_eq!(pgm.segments().len(), lens[0]);
        assert_eq!(pgm.segments()[0].first_rank, 0);
        for (i, k) in keys.iter().enumerate().step_by(7) {
            assert_eq!(
                pgm.lower_bound(&keys, *k),
                keys.partition_point(|x| x < k),
                "{i}"
            );
        }
        assert!(pgm.size_in_bytes() > lens[0] * 32);
    }

    #[test]
    fn huge_eps_is_refused() {
        let err = Pgm::build(&[1u64], PgmParams::new(usize::MAX, 4)).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "eps", .. }));
        for rec in [0, (1 << 32) + 1] {
            let err = Pgm::build(&[1u64], PgmParams::new(4, rec)).unwrap_err();
            assert!(matches!(
                err,
                Error::InvalidParameter {
                    name: "eps_recursive",
                    ..
                }
            ));
        }
    }

    #[test]
    fn empty_index_answers_zero() {
        let pgm = Pgm::<u64>::build(&[], PgmParams::default()).unwrap();
        assert_eq!(pgm.search(5), ApproxPos::default());
        assert_eq!(pgm.height(), 0);
        assert!(pgm.segments().is_empty());
    }
}
