//! Last-mile searches: the exact `lower_bound` inside a window an index predicted.
//!
//! All functions return the position of the first key `>= key` in the slice (its length when
//! there is none), the same answer as `slice.partition_point(|k| k < key)`, duplicates included.
//!
//! * [`branchless_binary`] is the search every index uses by default (paper 000 §5.2): the loop
//!   has a fixed trip count for a given length and its one data-dependent choice compiles to a
//!   conditional move, so the CPU never mispredicts.
//! * [`linear`] scans forward; best for windows of a few dozen keys.
//! * [`exponential`] gallops outward from a hint (the predicted position), then bisects; its
//!   cost grows with the log of the prediction's actual error, not of the window.
//! * [`interpolation`] probes where the key's model value falls between the ends of the current
//!   range, falling back to a bisection step whenever a probe fails to halve the range, so its
//!   worst case stays logarithmic.
//!
//! Inside the crate, two variants of the bisection leave the prefetching to their caller: one
//! without the per-step prefetches, for a window whose lines were prefetched already, and one
//! for a length known when compiling (the PGM's full window at its default `eps`), unrolled,
//! after `prefetch_centred` asked for the window's middle lines.
//!
//! This module works on plain slices and sits right above `crate::key`: the window types and
//! the index contract of `crate::index` build on it ([`crate::index::lower_bound_in`] runs a
//! [`LastMile`] inside an [`crate::index::ApproxPos`]), never the other way round.

use crate::key::Key;

/// Which last-mile search to run inside a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastMile {
    /// [`branchless_binary`].
    #[default]
    Binary,
    /// [`linear`].
    Linear,
    /// [`exponential`] from the window's predicted position.
    Exponential,
    /// [`interpolation`].
    Interpolation,
}

impl LastMile {
    /// Position of the first key `>= key` in `keys`, searched as this method does; `hint` is
    /// where [`LastMile::Exponential`] starts, the others ignore it.
    #[inline]
    pub fn lower_bound<K: Key>(self, keys: &[K], key: K, hint: usize) -> usize {
        match self {
            LastMile::Binary => branchless_binary(keys, key),
            LastMile::Linear => linear(keys, key),
            LastMile::Exponential => exponential(keys, key, hint),
            LastMile::Interpolation => interpolation(keys, key),
        }
    }
}

/// Ranges longer than this many keys prefetch the next probe's two candidates: without a
/// branch the CPU cannot speculate ahead, so on arrays larger than the cache each probe would
/// otherwise wait for its own miss. Short ranges sit in a few cache lines and skip the cost.
const PREFETCH_ABOVE: usize = 64;

/// Starts loading the cache line holding `ptr`.
#[inline(always)]
pub(crate) fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Windows of at most this many bytes are prefetched whole before their last-mile search.
pub const PREFETCH_WINDOW_BYTES: usize = 4096;

/// Asks the CPU to start loading every cache line of `window` when it is at most
/// [`PREFETCH_WINDOW_BYTES`] long. A binary search over a window of a few hundred keys otherwise
/// waits for one miss per probe; with the lines requested up front the misses overlap (PGM at
/// eps 64 on 50M lognormal keys: about 10% faster lookups). Longer windows (the sorted-array
/// baseline's is the whole array) are left to [`branchless_binary`]'s own prefetching.
#[inline(always)]
pub fn prefetch_window<K>(window: &[K]) {
    let bytes = std::mem::size_of_val(window);
    if bytes > PREFETCH_WINDOW_BYTES {
        return;
    }
    let start = window.as_ptr() as usize;
    let mut line = start & !(CACHE_LINE - 1);
    while line < start + bytes {
        prefetch(line as *const u8);
        line += CACHE_LINE;
    }
}

/// Starts loading `N` consecutive cache lines from the line at `line`, unrolled: straight-line
/// code, no loop.
#[inline(always)]
fn prefetch_run<const N: usize>(line: usize) {
    for i in 0..N {
        prefetch(line.wrapping_add(i * CACHE_LINE) as *const u8);
    }
}

/// Bytes in a cache line.
const CACHE_LINE: usize = 64;

/// The most lines [`prefetch_lines`] issues (its runs are the bits of a 6-bit count).
const MAX_PREFETCH_LINES: usize = 63;

/// Cache lines a window of at most `max_keys` keys of type `K` can touch, wherever it starts
/// (one more than its bytes need when it straddles a line boundary), or 0 when the window can be
/// longer than [`PREFETCH_WINDOW_BYTES`] or needs more than 63 lines (no prefetch: [`branchless_binary`] prefetches its own
/// probes on long ranges). For an index whose windows are bounded by a parameter (the PGM's
/// `2 * eps + 2`), computed once at build and given to every [`prefetch_lines`].
pub const fn window_lines<K>(max_keys: usize) -> usize {
    let bytes = max_keys.saturating_mul(std::mem::size_of::<K>());
    let lines = bytes.div_ceil(CACHE_LINE) + 1;
    if bytes > PREFETCH_WINDOW_BYTES || lines > MAX_PREFETCH_LINES {
        0
    } else {
        lines
    }
}

/// Asks the CPU to load `lines` (at most 63) consecutive cache lines from the one holding
/// `start`: the lines of a window whose first key is at `start`, `lines` being the index's
/// [`window_lines`].
///
/// Unlike [`prefetch_window`], which loops over exactly the lines the window spans, the count
/// here is the same for every lookup of an index, and the prefetches are issued as straight-line
/// runs picked by the bits of `lines` (a few branches that always go the same way for a given
/// index) rather than by a loop whose trip count varies from one lookup to the next. Measured
/// on the 2-core AMD EPYC VM (PGM, eps 64, 2M uniform lookups, median of 5 passes, same
/// process): 50M lognormal keys 166 ns a lookup against 202 ns with the loop, 10M 134 against
/// 139; a loop with the fixed count, and a `match` on it, were as slow as the varying loop.
#[inline(always)]
pub fn prefetch_lines<K>(start: *const K, lines: usize) {
    let mut line = start as usize & !(CACHE_LINE - 1);
    if lines & 32 != 0 {
        prefetch_run::<32>(line);
        line += 32 * CACHE_LINE;
    }
    if lines & 16 != 0 {
        prefetch_run::<16>(line);
        line += 16 * CACHE_LINE;
    }
    if lines & 8 != 0 {
        prefetch_run::<8>(line);
        line += 8 * CACHE_LINE;
    }
    if lines & 4 != 0 {
        prefetch_run::<4>(line);
        line += 4 * CACHE_LINE;
    }
    if lines & 2 != 0 {
        prefetch_run::<2>(line);
        line += 2 * CACHE_LINE;
    }
    if lines & 1 != 0 {
        prefetch_run::<1>(line);
    }
}

/// Starts loading the `LINES` consecutive cache lines centred on the line holding `centre`
/// (`LINES / 2` before it, the rest from it on), unrolled: for a window too wide to fetch whole
/// at no cost, the lines its bisection most often reads. A bisection of a window centred on a
/// prediction probes the middle first, then a quarter of the window to either side, and ends
/// where the key is, which the prediction places near the middle; the window's outer lines are
/// read only for keys far from it. A core keeps only about a dozen misses of its own in flight,
/// so every line asked for but not read delays the lines of the next lookups.
///
/// Measured with the PGM's default window (130 keys, 18 lines) on the Intel Xeon VM, 2M
/// uniform lookups of present keys: in a throwaway timer (median of 5-7 passes, variants
/// alternated in one process), 12 lines centred on the prediction took 0.86x the time of all
/// 18 on 50M lognormal keys (203-204 ns against 235-238); 10 and 14 lines were slower than 12
/// on most key sets, and the 7 lines of the bisection's first three steps slower than all 18.
/// Through `lidx bench` (three alternated rounds, `docs/results/cpp-references.md`, session
/// 59): 0.83-0.90x the time at 50M lognormal, `gre` and `uniform-sparse` keys, 0.90-0.92x at
/// 50M `cells`, 0.87-0.94x at 200M lognormal, 0.89-0.98x at 10M lognormal (six pairs of
/// seven; the seventh 1.13x), `cells`, `gre` and `uniform-sparse` keys; `zipf-gaps` keys within
/// the noise (0.93-1.03x). A core that keeps more misses in flight wants more lines: the PGM
/// asks for 16 on the Zen 3 VM ([`crate::cpu`]).
#[inline(always)]
pub(crate) fn prefetch_centred<K, const LINES: usize>(centre: *const K) {
    let first = (centre as usize & !(CACHE_LINE - 1)).wrapping_sub(LINES / 2 * CACHE_LINE);
    prefetch_run::<LINES>(first);
}

/// Branchless binary search (paper 000 §5.2, after "Beautiful Branchless Binary Search"), with
/// the two candidate next probes prefetched on long ranges (Khuong & Morin's layout study).
#[inline]
pub fn branchless_binary<K: Key>(keys: &[K], key: K) -> usize {
    bisect::<K, true>(keys, key)
}

/// [`branchless_binary`] without its prefetches, for a window whose lines were all requested
/// already ([`prefetch_lines`]): the prefetches would be issued for lines on their way, and
/// the test of the range's length on every step cost instructions (callgrind, a PGM lookup at
/// eps 64 before its full windows took [`branchless_binary_fixed`]: about 16).
#[inline]
pub(crate) fn branchless_binary_prefetched<K: Key>(keys: &[K], key: K) -> usize {
    bisect::<K, false>(keys, key)
}

/// A branchless bisection without prefetches over a window whose length is known when
/// compiling, its lines asked for by the caller ([`prefetch_centred`] for the PGM): the
/// bisection unrolls into a fixed run of loads and conditional moves (callgrind, the PGM at its
/// default eps of 64 on 1M lognormal keys: 41 instructions fewer a lookup, 396 -> 355).
#[inline(always)]
pub(crate) fn branchless_binary_fixed<K: Key, const N: usize>(keys: &[K; N], key: K) -> usize {
    partition_fixed(keys, |k| k.key_lt(&key))
}

/// The number of leading `items` for which `is_before` holds (true on a prefix, false after
/// it), by a branchless bisection whose length is known when compiling: the fixed-length
/// searches of [`branchless_binary_fixed`].
#[inline(always)]
pub(crate) fn partition_fixed<T, const N: usize>(
    items: &[T; N],
    is_before: impl Fn(&T) -> bool,
) -> usize {
    if N == 0 {
        return 0;
    }
    let mut base = 0usize;
    let mut len = N;
    while len > 1 {
        let half = len / 2;
        // base + half < base + len <= N: the loop keeps base + len <= N, and the compiler
        // sees it once N is a constant.
        base = std::hint::select_unpredictable(is_before(&items[base + half]), base + half, base);
        len -= half;
    }
    base + usize::from(is_before(&items[base]))
}

/// The bisection of [`branchless_binary`] (`PREFETCH`) and [`branchless_binary_prefetched`].
#[inline(always)]
fn bisect<K: Key, const PREFETCH: bool>(keys: &[K], key: K) -> usize {
    let mut len = keys.len();
    if len == 0 {
        return 0;
    }
    let mut base = 0usize;
    while len > 1 {
        let half = len / 2;
        if PREFETCH && len > PREFETCH_ABOVE {
            // Both places the next probe can land; whichever is taken is already on its way.
            prefetch(keys.as_ptr().wrapping_add(base + half / 2));
            prefetch(keys.as_ptr().wrapping_add(base + half + half / 2));
        }
        // SAFETY: base + len <= keys.len() holds before the loop and is kept by every step
        // (base grows by half while len shrinks by half), and half < len, so base + half is
        // in bounds.
        let probe = unsafe { keys.get_unchecked(base + half) };
        // A conditional move, not a branch: the outcome is a coin flip per probe.
        base = std::hint::select_unpredictable(probe.key_lt(&key), base + half, base);
        len -= half;
    }
    // SAFETY: len == 1 and base + len <= keys.len().
    base + usize::from(unsafe { keys.get_unchecked(base) }.key_lt(&key))
}

/// The name the rest of the crate calls the default search by.
pub use branchless_binary as branchless_lower_bound;

/// The first index in `0..len` for which `is_less(i)` is false, by bisection, when `is_less` is
/// true on a prefix and false after it: the lower bound over items that are not a slice, such
/// as the keys of a block decoded on demand.
pub fn lower_bound_by(len: usize, mut is_less: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if is_less(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Forward scan.
#[inline]
pub fn linear<K: Key>(keys: &[K], key: K) -> usize {
    keys.iter()
        .position(|k| !k.key_lt(&key))
        .unwrap_or(keys.len())
}

/// Galloping search outward from `hint` (clamped into the slice), then a binary search in the
/// bracket it found.
pub fn exponential<K: Key>(keys: &[K], key: K, hint: usize) -> usize {
    let n = keys.len();
    if n == 0 {
        return 0;
    }
    let hint = hint.min(n - 1);
    let (lo, hi) = if keys[hint].key_lt(&key) {
        // Answer is after hint: gallop right until a key >= key.
        let mut step = 1;
        let mut lo = hint + 1;
        loop {
            let probe = hint + step;
            if probe >= n {
                break (lo, n);
            }
            if !keys[probe].key_lt(&key) {
                break (lo, probe);
            }
            lo = probe + 1;
            step *= 2;
        }
    } else {
        // Answer is at or before hint: gallop left until a key < key.
        let mut step = 1;
        let mut hi = hint;
        loop {
            if step > hint {
                break (0, hi);
            }
            let probe = hint - step;
            if keys[probe].key_lt(&key) {
                break (probe + 1, hi);
            }
            hi = probe;
            step *= 2;
        }
    };
    lo + branchless_binary(&keys[lo..hi], key)
}

/// Interpolation search on the keys' model values; correct for any key type because every
/// decision is a key comparison, the model value only chooses where to probe.
pub fn interpolation<K: Key>(keys: &[K], key: K) -> usize {
    const LINEAR_BELOW: usize = 16;
    let target = key.to_model();
    // Invariant: the answer is in [lo, hi].
    let (mut lo, mut hi) = (0usize, keys.len());
    let mut bisect = false;
    while hi - lo > LINEAR_BELOW {
        let before = hi - lo;
        let probe = if bisect {
            lo + before / 2
        } else {
            let first = keys[lo].to_model();
            let last = keys[hi - 1].to_model();
            if target <= first {
                lo
            } else if target >= last {
                hi - 1
            } else {
                let frac = (target - first) as f64 / (last - first) as f64;
                lo + ((before - 1) as f64 * frac) as usize
            }
        };
        if keys[probe].key_lt(&key) {
            lo = probe + 1;
        } else {
            hi = probe;
        }
        bisect = (hi - lo) * 2 > before;
    }
    lo + linear(&keys[lo..hi], key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fixed-length search on `keys` when it has `N` of them.
    fn fixed_agrees<const N: usize>(keys: &[u64], key: u64, expect: usize) {
        if let Ok(fixed) = <&[u64; N]>::try_from(keys) {
            assert_eq!(
                branchless_binary_fixed(fixed, key),
                expect,
                "fixed {N} {key}"
            );
        }
    }

    fn all_agree(keys: &[u64], key: u64) {
        let expect = keys.partition_point(|k| *k < key);
        assert_eq!(branchless_binary(keys, key), expect, "binary {key}");
        assert_eq!(
            branchless_binary_prefetched(keys, key),
            expect,
            "prefetched {key}"
        );
        fixed_agrees::<0>(keys, key, expect);
        fixed_agrees::<1>(keys, key, expect);
        fixed_agrees::<19>(keys, key, expect);
        fixed_agrees::<130>(keys, key, expect);
        assert_eq!(linear(keys, key), expect, "linear {key}");
        assert_eq!(interpolation(keys, key), expect, "interpolation {key}");
        for hint in [
            0,
            keys.len() / 3,
            keys.len().saturating_sub(1),
            keys.len() + 5,
        ] {
            assert_eq!(
                exponential(keys, key, hint),
                expect,
                "exponential {key} {hint}"
            );
        }
        for method in [
            LastMile::Binary,
            LastMile::Linear,
            LastMile::Exponential,
            LastMile::Interpolation,
        ] {
            assert_eq!(method.lower_bound(keys, key, keys.len() / 2), expect);
        }
    }

    #[test]
    fn edge_inputs() {
        all_agree(&[], 5);
        all_agree(&[7], 0);
        all_agree(&[7], 7);
        all_agree(&[7], u64::MAX);
        all_agree(&[3; 40], 3);
        all_agree(&[3; 40], 4);
        let mixed: Vec<u64> = vec![0, 0, 1, 5, 5, 5, 9, u64::MAX - 1, u64::MAX, u64::MAX];
        for key in [0, 1, 2, 5, 6, 9, 10, u64::MAX - 1, u64::MAX] {
            all_agree(&mixed, key);
        }
    }

    #[test]
    fn string_keys_use_bytewise_order() {
        let mut keys: Vec<[u8; 16]> = (0..100u8)
            .map(|i| {
                let mut k = [0u8; 16];
                k[15] = i;
                k[3] = i / 10;
                k
            })
            .collect();
        keys.sort();
        for probe in keys.iter().copied().chain([[0u8; 16], [0xff; 16]]) {
            let expect = keys.partition_point(|k| *k < probe);
            assert_eq!(branchless_binary(&keys, probe), expect);
            assert_eq!(interpolation(&keys, probe), expect);
            assert_eq!(exponential(&keys, probe, 50), expect);
        }
    }

    #[test]
    fn fixed_windows_match_partition_point() {
        // Windows of the PGM's default lengths, dense with duplicates and sparse.
        for step in [0u64, 1, 3, 1000] {
            let keys: Vec<u64> = (0..130u64).map(|i| 5 + (i / 3) * step).collect();
            for probe in 0..=keys[129] + 2 {
                all_agree(&keys, probe);
                all_agree(&keys[..19], probe);
                if step > 100 && probe > 200 {
                    break;
                }
            }
            for &probe in &keys {
                all_agree(&keys, probe);
                all_agree(&keys, probe + 1);
            }
        }
    }

    proptest! {
        #[test]
        fn searches_match_partition_point(
            mut keys in proptest::collection::vec(any::<u64>(), 0..300),
            probes in proptest::collection::vec(any::<u64>(), 1..20),
            small in proptest::collection::vec(0u64..50, 0..300),
        ) {
            keys.sort_unstable();
            for &p in &probes {
                all_agree(&keys, p);
            }
            let mut small = small;
            small.sort_unstable();
            for p in 0..52 {
                all_agree(&small, p);
            }
        }
    }
}
