//! Internal invariants of XIndex under random operations: every group's array sorted, keys
//! inside the group's pivot range, no key live twice, no forwarded record left once a write
//! returns, and the same contents as a `BTreeMap`.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::cell::CellRead;
use super::*;
use crate::map::OrderedMap;

fn small() -> XIndexParams {
    XIndexParams {
        group_size: 8,
        error_bound: 2,
        buffer_size: 4,
        root_error_bound: 2,
    }
}

fn check_invariants(index: &XIndex<u64, u64>) {
    let root = index.root();
    let mut seen = BTreeMap::new();
    assert_eq!(root.pivots.len(), root.slots.len());
    for (i, slot) in root.slots.iter().enumerate() {
        let group = slot.group.load();
        assert!(group.temp.is_none(), "group {i} left compacting");
        let keys = &group.array.keys;
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "group {i} unsorted");
        let in_range = |k: &u64| {
            (i == 0 || *k >= root.pivots[i]) && root.pivots.get(i + 1).is_none_or(|hi| k < hi)
        };
        for (pos, k) in keys.iter().enumerate() {
            assert!(in_range(k), "group {i}: key {k} outside its range");
            assert!(
                !matches!(group.array.cells[pos].read(), CellRead::Forwarded),
                "group {i}: record {k} still forwarded"
            );
            if let Some(v) = group.array.read(pos) {
                assert!(seen.insert(*k, v).is_none(), "key {k} live twice");
            }
        }
        for (k, _, v) in group.buffer.live_records() {
            assert!(
                in_range(&k),
                "group {i}: buffered key {k} outside its range"
            );
            assert!(seen.insert(k, v).is_none(), "key {k} live twice");
        }
    }
    assert_eq!(seen.len(), index.len());
}

proptest! {
    #[test]
    fn structure_stays_consistent(
        initial in proptest::collection::btree_set(0u64..2000, 0..300),
        ops in proptest::collection::vec((0u8..3, 0u64..2000), 0..600),
    ) {
        let entries: Vec<(u64, u64)> = initial.iter().map(|&k| (k, k)).collect();
        let mut reference: BTreeMap<u64, u64> = entries.iter().copied().collect();
        let index = XIndex::bulk_load(entries, small()).unwrap();
        for (step, (kind, key)) in ops.into_iter().enumerate() {
            let v = step as u64;
            match kind {
                0 | 1 => prop_assert_eq!(index.insert(key, v).unwrap(), reference.insert(key, v)),
                _ => prop_assert_eq!(index.remove(&key), reference.remove(&key)),
            }
        }
        check_invariants(&index);
        let mut all = Vec::new();
        index.scan(&0, usize::MAX, &mut all);
        prop_assert!(all.iter().copied().eq(reference.iter().map(|(k, v)| (*k, *v))));
        let map = XIndexMap::from(index);
        prop_assert!(map.range(..).map(|(k, v)| (*k, *v)).eq(reference.iter().map(|(k, v)| (*k, *v))));
    }
}

#[test]
fn inserts_split_groups_and_removals_merge_them() {
    let index = XIndex::<u64, u64>::new(small()).unwrap();
    for k in 0..2000 {
        index.insert(k * 3, k).unwrap();
    }
    let grown = index.group_count();
    assert!(grown > 20, "{grown} groups");
    check_invariants(&index);
    for k in 0..1990 {
        assert_eq!(index.remove(&(k * 3)), Some(k));
    }
    check_invariants(&index);
    assert!(
        index.group_count() < grown / 2,
        "{} groups",
        index.group_count()
    );
    assert_eq!(index.len(), 10);
}

#[test]
fn a_misfit_group_is_split_at_load() {
    // Keys doubling at every step: four lines cannot fit 64 of them within one position on
    // average, so the load halves the group until they do.
    let keys: Vec<u64> = (0..64).map(|i| 1u64 << i).collect();
    let entries = keys.iter().map(|&k| (k, k)).collect();
    let params = XIndexParams {
        group_size: 64,
        error_bound: 1,
        ..XIndexParams::default()
    };
    let index = XIndex::<u64, u64>::bulk_load(entries, params).unwrap();
    assert!(index.group_count() > 1);
    for k in keys {
        assert_eq!(index.get(&k), Some(k));
    }
}

#[test]
fn zero_parameters_are_refused() {
    for params in [
        XIndexParams {
            group_size: 0,
            ..small()
        },
        XIndexParams {
            error_bound: 0,
            ..small()
        },
        XIndexParams {
            buffer_size: 0,
            ..small()
        },
        XIndexParams {
            root_error_bound: 0,
            ..small()
        },
    ] {
        assert!(matches!(
            XIndex::<u64, u64>::new(params),
            Err(crate::Error::InvalidParameter { .. })
        ));
    }
}

#[test]
fn maps_are_send_and_sync() {
    fn is<T: Send + Sync>() {}
    is::<XIndex<u64, u64>>();
    is::<XIndexMap<f64, u64>>();
}

/// The two phases of a compaction, step by step: writes through the old group after the merge
/// reach the new array through its forwards, and after phase 2 the old cells are sealed.
#[test]
fn two_phase_compaction_keeps_writes_made_through_the_old_group() {
    use std::sync::Arc;

    use super::buffer::DeltaBuffer;
    use super::cell::Op;
    use super::group::{build_arrays, merge, Group, GroupArray, GroupWrite};

    let done = |w: GroupWrite<u64>| match w {
        GroupWrite::Done { previous, .. } => Some(previous),
        GroupWrite::Retry => None,
    };
    let array = Arc::new(GroupArray::new(&[(10u64, 1u64), (20, 2)], 32.0));
    let g0 = Group::new(array, Arc::new(DeltaBuffer::new()));
    assert_eq!(done(g0.write(&15, Op::Put(3), 100)), Some(None));

    // Phase 1: freeze, publish the group with a temporary buffer, merge.
    let temp = Arc::new(DeltaBuffer::new());
    g0.buffer.freeze();
    let g1 = g0.with_temp(Arc::clone(&temp));
    assert_eq!(
        done(g0.write(&17, Op::Put(4), 100)),
        None,
        "frozen buffer took a record"
    );
    assert_eq!(done(g1.write(&17, Op::Put(4), 100)), Some(None));
    let arrays = build_arrays(merge(&[&g1]), &[&g1], &[], 32.0);
    assert_eq!(&*arrays[0].keys, &[10, 15, 20]);
    let g2 = Group::new(Arc::clone(&arrays[0]), temp);

    // Between the phases both groups write the same cells.
    assert_eq!(done(g1.write(&10, Op::Put(11), 100)), Some(Some(1)));
    assert_eq!(done(g1.write(&15, Op::Put(13), 100)), Some(Some(3)));
    assert_eq!(done(g1.write(&20, Op::Remove, 100)), Some(Some(2)));
    assert_eq!(
        [10, 15, 17, 20].map(|k| g2.get(&k)),
        [Some(11), Some(13), Some(4), None]
    );
    assert_eq!(done(g2.write(&10, Op::Put(21), 100)), Some(Some(11)));
    assert_eq!(g1.get(&10), Some(21));

    // Phase 2: the new array takes the final values, the old cells are sealed.
    arrays[0].settle();
    assert_eq!(
        done(g1.write(&10, Op::Put(0), 100)),
        None,
        "sealed cell written"
    );
    assert_eq!(
        done(g1.write(&15, Op::Remove, 100)),
        None,
        "sealed cell written"
    );
    assert_eq!(g1.get(&10), Some(21));
    assert_eq!(done(g2.write(&10, Op::Put(31), 100)), Some(Some(21)));
    assert_eq!((g2.get(&10), g1.get(&10)), (Some(31), Some(21)));
    assert_eq!(done(g2.write(&20, Op::Put(5), 100)), Some(None));
    assert_eq!(g2.get(&20), Some(5));
}

/// Regression (CI, stop 23): a scan read a key's array record, the key was removed and
/// inserted again into the buffer, and the scan read it there too: the key came out twice.
/// `collect` sees that interleaving as a group whose array and buffers all hold the key live;
/// it must give the key once, with the value read last (the temporary buffer's).
#[test]
fn a_key_seen_in_array_and_buffers_during_a_scan_comes_out_once() {
    use super::buffer::DeltaBuffer;
    use super::group::{Group, GroupArray};
    use std::sync::Arc;

    let array = Arc::new(GroupArray::new(&[(10u64, 1u64), (20, 2), (30, 3)], 2.0));
    let buffer = Arc::new(DeltaBuffer::new());
    buffer.insert(20, 4);
    buffer.insert(25, 5);
    let temp = Arc::new(DeltaBuffer::new());
    temp.insert(20, 6);
    let group = Group::new(array, buffer).with_temp(temp);
    for limit in 1..=5 {
        let mut out = Vec::new();
        group.collect(&0, None, limit, &mut out);
        let all = [(10, 1), (20, 6), (25, 5), (30, 3)];
        assert_eq!(out, all[..limit.min(4)], "limit {limit}");
    }
}
