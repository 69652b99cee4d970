//! `size_in_bytes` checked against the allocator: every index reports what it really keeps.
//!
//! A counting global allocator measures the live heap bytes an index holds after its build
//! (everything it allocated and did not free) and the test compares them with the index's own
//! figure. The count is the measuring thread's own (see `counting_alloc`), so the harness's
//! threads allocating meanwhile do not change it; one `#[test]` runs all cases in sequence.

use lidx::mem::Art;
use lidx::mem::BTreeIndex;
use lidx::mem::BTreeParams;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{FitingParams, FitingTree};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::mem::{SampledPgm, SampledPgmParams};
use lidx::mem::{ZoneMap, ZoneMapParams};
use lidx::{OrderedMap, StaticIndex};

mod counting_alloc;

use counting_alloc::{live, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Builds an index and returns (reported bytes, live heap bytes it holds).
fn measure<I: StaticIndex<u64>>(build: impl FnOnce() -> lidx::Result<I>) -> (usize, usize) {
    let before = live();
    let index = build().unwrap();
    let held = live() - before;
    let reported = index.size_in_bytes();
    drop(index);
    (reported, held.max(0) as usize)
}

/// Like [`measure`], for an ordered map (which owns its keys and values).
fn measure_map<M: OrderedMap<u64, u64>>(build: impl FnOnce() -> M) -> (usize, usize) {
    let before = live();
    let map = build();
    let held = live() - before;
    let reported = map.size_in_bytes();
    drop(map);
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
    let mut unique = keys.clone();
    unique.dedup();
    let u = &unique;
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
            "art-bulk",
            measure_map(|| Art::bulk_load(u.iter().map(|&k| (k, k))).unwrap()),
        ),
        (
            "art-updated",
            measure_map(|| {
                let mut art = Art::new();
                for (i, &key) in u.iter().enumerate() {
                    art.insert(key.rotate_left(17), key).unwrap();
                    if i % 3 == 0 {
                        art.remove(&u[i / 2].rotate_left(17));
                    }
                }
                art
            }),
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
