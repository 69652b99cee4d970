//! Cache flushing and timing for START's measured cost model (paper 004 §IV-A, Table I).
//!
//! What the paper says (§IV-A): the cost `C_L(n)` of traversing a node is measured on the target
//! machine in an isolated experiment, "the median of multiple runs, separated by an LFENCE
//! instruction as a speculation barrier", once with the node in L1 and once cold, "explicitly
//! clearing the cache for these nodes using CLFLUSH"; §V adds a "header cached" case where only
//! the node's first cache line is warm. This module provides the three tools that needs:
//!
//! * `flush` (tests) / [`flush_raw`]: `CLFLUSH` every 64-byte line of a byte range, then `MFENCE` so
//!   the flushes complete before the next load (x86-64). Elsewhere there is no unprivileged
//!   line flush, so the fallback evicts *everything* by reading a 64 MiB buffer
//!   (`evict_caches`), larger than any last-level cache we target; slower, same effect on the
//!   measured node.
//! * [`timestamp`]: a serialized time stamp. On x86-64 `RDTSC` between two `LFENCE`s, converted
//!   with [`ticks_per_ns`] (calibrated once against the monotonic clock); elsewhere the monotonic
//!   clock itself.
//! * [`median_ns`]: repeat `setup` (untimed, e.g. a flush) then `measured` (timed) and return the
//!   median. The median includes the fixed cost of two time stamps; as in the paper, subtract a
//!   baseline measured the same way (`C_L(n) = C'_L(n) - C_L(∅)`).

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Bytes of a cache line.
pub(crate) const CACHE_LINE: usize = 64;

/// Bytes read by `evict_caches`: larger than the last-level caches we target.
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(crate) const EVICT_BYTES: usize = 64 << 20;

/// Evicts the cache lines holding `value` from every cache level.
#[cfg(test)]
pub(crate) fn flush<T: ?Sized>(value: &T) {
    // SAFETY: a reference points to `size_of_val` readable bytes.
    unsafe { flush_raw(value as *const T as *const u8, std::mem::size_of_val(value)) }
}

/// Evicts the cache lines of `ptr..ptr + len` from every cache level.
///
/// # Safety
/// The range must be mapped (CLFLUSH of an unmapped address faults).
pub(crate) unsafe fn flush_raw(ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_clflush, _mm_mfence};
        let end = ptr as usize + len;
        let mut line = ptr as usize & !(CACHE_LINE - 1);
        while line < end {
            // SAFETY: `line` lies in a cache line that overlaps the caller's mapped range, and
            // mappings are page-granular, so the line is mapped.
            unsafe { _mm_clflush(line as *const u8) };
            line += CACHE_LINE;
        }
        // SAFETY: MFENCE needs SSE2, part of the x86-64 baseline.
        unsafe { _mm_mfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (ptr, len);
        evict_caches();
    }
}

/// Evicts (most of) every cache by reading `EVICT_BYTES` of other data, one load per line:
/// where CLFLUSH is not available.
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(crate) fn evict_caches() {
    static BUFFER: OnceLock<Vec<u8>> = OnceLock::new();
    // Written with non-zero bytes so the pages are real memory, not the shared zero page.
    let buf = BUFFER.get_or_init(|| vec![1u8; EVICT_BYTES]);
    let mut sum = 0u8;
    for line in buf.chunks(CACHE_LINE) {
        sum = sum.wrapping_add(black_box(line[0]));
    }
    black_box(sum);
}

/// A speculation barrier: later instructions do not start before earlier ones complete.
#[inline(always)]
pub(crate) fn serialize() {
    // SAFETY: LFENCE needs SSE2, part of the x86-64 baseline.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_lfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// A serialized time stamp in ticks (see [`ticks_per_ns`]).
#[inline(always)]
pub(crate) fn timestamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        serialize();
        // SAFETY: RDTSC is available on every x86-64 CPU and reads no memory.
        let t = unsafe { std::arch::x86_64::_rdtsc() };
        serialize();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        serialize();
        let t = epoch().elapsed().as_nanos() as u64;
        serialize();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn epoch() -> &'static Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now)
}

/// Ticks of [`timestamp`] per nanosecond (calibrated once, for 5 ms, on first use).
pub(crate) fn ticks_per_ns() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        let start = Instant::now();
        let t0 = timestamp();
        while start.elapsed() < Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        let t1 = timestamp();
        let ns = start.elapsed().as_nanos() as f64;
        let rate = (t1.wrapping_sub(t0)) as f64 / ns;
        if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            1.0
        }
    })
}

/// Runs `setup` then times `measured` on its output, `runs` times; returns the median in ns.
///
/// `setup` is not timed (flush the node there for a cold measurement). Results pass through
/// `black_box` so the measured work is not optimized away. `runs` must be at least 1.
pub(crate) fn median_ns<S, R>(
    runs: usize,
    mut setup: impl FnMut() -> S,
    mut measured: impl FnMut(S) -> R,
) -> Result<f64> {
    if runs == 0 {
        return Err(Error::InvalidParameter {
            name: "runs",
            value: "0".to_string(),
            expected: "at least 1 run",
        });
    }
    let mut ticks = Vec::with_capacity(runs);
    for _ in 0..runs {
        let input = black_box(setup());
        let t0 = timestamp();
        let out = measured(input);
        let t1 = timestamp();
        black_box(out);
        ticks.push(t1.wrapping_sub(t0));
    }
    ticks.sort_unstable();
    let mid = runs / 2;
    let median = if runs % 2 == 1 {
        ticks[mid] as f64
    } else {
        (ticks[mid - 1] as f64 + ticks[mid] as f64) / 2.0
    };
    Ok(median / ticks_per_ns())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_are_plausible() {
        let data = vec![7u64; 4096];
        let cached = median_ns(
            301,
            || black_box(&data[100]) as *const u64,
            // SAFETY: the pointer comes from `data`, alive for the whole test.
            |p| unsafe { p.read_volatile() },
        )
        .unwrap();
        let cold = median_ns(
            301,
            || {
                flush(&data[100]);
                &data[100] as *const u64
            },
            // SAFETY: as above.
            |p| unsafe { p.read_volatile() },
        )
        .unwrap();
        assert!(cached.is_finite() && cached > 0.0, "cached {cached}");
        assert!(cold.is_finite() && cold > 0.0, "cold {cold}");
        assert!(
            cold >= cached,
            "a flushed load ({cold} ns) beat a cached one ({cached} ns)"
        );
    }

    #[test]
    fn zero_runs_is_an_error() {
        assert!(matches!(
            median_ns(0, || (), |_| ()),
            Err(Error::InvalidParameter { name: "runs", .. })
        ));
    }

    #[test]
    fn flush_and_evict_keep_data() {
        let data: Vec<u32> = (0..1000).collect();
        flush(&data[..]);
        flush(&data[3..3]);
        evict_caches();
        assert!(data.iter().enumerate().all(|(i, &v)| v == i as u32));
        let rate = ticks_per_ns();
        assert!(rate.is_finite() && rate > 0.0);
        assert!(timestamp() > 0);
    }
}
