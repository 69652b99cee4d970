//! The disk B+-tree's write breakdown (paper 003 Figure 6, `DiskMap::write_breakdown`): each
//! phase is charged when the tree does that work, and the four parts add up to the time the
//! writes took, read by the same clock from outside, on every resident mode.

mod disk_btree_common;

use lidx::disk::{DiskBTree, DiskBTreeParams};
use lidx::disk::{DiskMap, PhaseClock, WriteBreakdown};
use lidx::io::{IoClass, SimProfile, Storage};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use disk_btree_common::{small_storage, MODES};

/// Runs `write` on `tree`, timing it from outside: the tree's own breakdown must grow by no
/// more than the outside time.
fn timed(outside: &mut u64, write: impl FnOnce() -> lidx::Result<bool>) -> bool {
    let mut clock = PhaseClock::start();
    let out = write().unwrap();
    *outside += clock.lap();
    out
}

/// `modeled`: the storage is a simulated device whose modeled time dominates, so the parts must
/// account for most of the outside time; on `ram` the times are wall CPU time only, where a
/// preemption between the two clocks' reads (a loaded machine) adds to the outside alone, so
/// only the upper bound is checked there.
fn check_sum(parts: WriteBreakdown, outside: u64, what: &str, modeled: bool) {
    let inside = parts.total_ns();
    assert!(
        inside <= outside,
        "{what}: {parts:?} over {outside} ns outside"
    );
    if modeled {
        assert!(
            inside * 2 >= outside,
            "{what}: {parts:?}, {outside} ns outside"
        );
    }
}

#[test]
fn breakdown_charges_each_phase_and_sums_to_the_write_time() {
    // On a slow simulated device the modeled device time dominates, as on a disk, so the parts
    // must account for it (a wall clock alone would miss it); on `ram` the CPU time does.
    let slow = Storage::in_memory(SimProfile::named("sata-ssd").unwrap(), 512).unwrap();
    for (storage, modeled, (m, resident)) in [(small_storage(), false), (slow, true)]
        .iter()
        .flat_map(|(s, modeled)| MODES.into_iter().enumerate().map(move |m| (s, *modeled, m)))
    {
        let name = format!("breakdown{m}");
        let bulk: Vec<u64> = (0..300u64).map(|k| k * 2).collect();
        let params = DiskBTreeParams {
            payload_size: 8,
            fill_factor: 1.0,
            resident,
        };
        let mut tree = DiskBTree::build(
            storage,
            &name,
            &bulk,
            |_, k, out| out.copy_from_slice(&k.to_le_bytes()),
            params,
        )
        .unwrap();
        let map: &mut dyn DiskMap<u64> = &mut tree;
        assert_eq!(map.write_breakdown(), WriteBreakdown::default());
        let mut outside = 0;
        let mut inserts: Vec<u64> = (0..3000u64).map(|k| k * 2 + 1).collect();
        inserts.shuffle(&mut ChaCha8Rng::seed_from_u64(7));
        let before = storage.stats();
        for &k in &inserts {
            assert!(!timed(&mut outside, || map.insert(k, &k.to_le_bytes())));
        }
        // Updates in place: search and insert only.
        let grown = map.write_breakdown();
        for &k in &inserts[..100] {
            assert!(timed(&mut outside, || map.insert(k, &(k + 1).to_le_bytes())));
        }
        let updated = map.write_breakdown();
        assert_eq!(
            (updated.smo_ns, updated.maintenance_ns),
            (grown.smo_ns, grown.maintenance_ns)
        );
        assert!(updated.search_ns > grown.search_ns && updated.insert_ns > grown.insert_ns);
        let io = storage.stats() - before;
        assert!(
            io.blocks_written(IoClass::Leaf) >= 3100,
            "{resident:?}: {io:?}"
        );
        assert!(
            io.blocks_written(IoClass::Inner) > 0,
            "splits write inner nodes"
        );
        // Splits up to new roots: structural modifications and the root splits' flushes.
        assert!(grown.search_ns > 0 && grown.insert_ns > 0, "{grown:?}");
        assert!(grown.smo_ns > 0 && grown.maintenance_ns > 0, "{grown:?}");
        check_sum(updated, outside, &format!("{resident:?} inserts"), modeled);

        // Deletes down to a few keys: merges, borrows and root collapses.
        let mut all: Vec<u64> = bulk.iter().chain(&inserts).copied().collect();
        all.shuffle(&mut ChaCha8Rng::seed_from_u64(8));
        for &k in &all[..all.len() - 10] {
            assert!(timed(&mut outside, || map.delete(&k)));
        }
        assert!(!timed(&mut outside, || map.delete(&u64::MAX)));
        let shrunk = map.write_breakdown();
        assert!(shrunk.smo_ns > updated.smo_ns, "{shrunk:?}");
        check_sum(shrunk, outside, &format!("{resident:?} deletes"), modeled);
        assert_eq!(map.len(), 10);
    }
}
