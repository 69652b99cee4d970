//! `size_in_bytes` checked against the allocator: every index reports what it really keeps.
//!
//! A counting global allocator measures the live heap bytes an index holds after its build
//! (everything it allocated and did not free) and the test compares them with the index's own
//! figure. One `#[test]` runs all cases in sequence so no other test thread allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use lidx::mem::btree::BTreeParams;
use lidx::mem::btree_index::BTreeIndex;
use lidx::mem::btree_model::{BTreeModel, BTreeModelParams};
use lidx::mem::fiting::{FitingParams, FitingTree};
use lidx::mem::pgm::{Pgm, PgmParams};
use lidx::mem::radix_spline::{RadixSpline, RadixSplineParams};
use lidx::mem::rmi::{Rmi, RmiParams};
use lidx::mem::sampled_pgm::{SampledPgm, SampledPgmParams};
use lidx::mem::zone_map::{ZoneMap, ZoneMapParams};
use lidx::StaticIndex;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to `System` unchanged and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Builds an index and returns (reported bytes, live heap bytes it holds).
fn measure<I: StaticIndex<u64>>(build: impl FnOnce() -> lidx::Result<I>) -> (usize, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    let index = build().unwrap();
    let held = LIVE.load(Ordering::Relaxed) - before;
    let reported = index.size_in_bytes();
    drop(index);
    (reported, held.max(0) as usize)
}

#[test]
fn reported_bytes_match_the_allocator() {
    let keys: Vec<u64> = (0..200_000u64)
        .map(|i| i * i / 3 + (i % 7) * 1_000)
        .scan(0u64, |last, k| {
            *last = (*last).max(k);
            Some(*last)
        })
        .collect();
    let k = &keys;
    let cases = [
        ("pgm", measure(|| Pgm::build(k, PgmParams::new(16, 4)))),
        (
            "spgm",
            measure(|| SampledPgm::build(k, SampledPgmParams::new(16, 2))),
        ),
        (
            "rs",
            measure(|| RadixSpline::build(k, RadixSplineParams::new(12, 8))),
        ),
        ("rmi", measure(|| Rmi::build(k, RmiParams::new(4096)))),
        (
            "btree",
            measure(|| BTreeIndex::build(k, BTreeParams::default())),
        ),
        (
            "btree-model",
            measure(|| BTreeModel::build(k, BTreeModelParams::with_every(64))),
        ),
        (
            "fiting",
            measure(|| FitingTree::build(k, FitingParams::with_eps(16))),
        ),
        (
            "zone-map",
            measure(|| ZoneMap::build(k, ZoneMapParams::new(64))),
        ),
    ];
    for (name, (reported, held)) in cases {
        // Struct headers live on the stack here, so allow a small constant on top.
        let slack = held / 50 + 512;
        assert!(
            reported + slack >= held && reported <= held + slack,
            "{name}: reports {reported} bytes but holds {held} on the heap"
        );
    }
}
