//! ART-specific tests: node kinds at their growth and shrink boundaries, path compression
//! (short, long, longer than stored), lazy expansion, and structural invariants after random
//! operations. The map behaviour against `BTreeMap` for every key type is in
//! `tests/map_conformance.rs`.

use std::collections::BTreeMap;
use std::ops::Bound;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::node::{NodeKind, NodeRef};
use super::{Art, ArtKey};
use crate::{OrderedMap, Str16};

/// Checks every structural invariant below `node` (which holds keys sharing `path[..depth]`)
/// and returns its number of leaves.
fn check_node<K: ArtKey, V>(node: &NodeRef<K, V>, path: &[u8], depth: usize) -> usize {
    if let Some(leaf) = node.as_leaf() {
        let kb = leaf.key.key_bytes();
        assert_eq!(
            &kb.as_ref()[..depth],
            &path[..depth],
            "leaf under the wrong path"
        );
        return 1;
    }
    let h = node.header().expect("no empty slot inside the tree");
    let (count, plen) = (h.count(), h.prefix_len());
    let allowed = match h.kind() {
        NodeKind::Node4 => 2..=4,
        NodeKind::Node16 => 4..=16,
        NodeKind::Node48 => 13..=48,
        NodeKind::Node256 => 37..=256,
        multilevel => panic!("ART builds no {multilevel:?}"),
    };
    assert!(
        allowed.contains(&count),
        "{:?} with {count} children",
        h.kind()
    );
    assert_eq!(node.children().count(), count);
    let first = node.min_leaf().unwrap().key.key_bytes();
    let first = first.as_ref();
    assert!(depth + plen < first.len(), "inner node at the end of a key");
    assert_eq!(h.stored_prefix(), &first[depth..depth + plen.min(8)]);
    let mut own = path.to_vec();
    own[depth..depth + plen].copy_from_slice(&first[depth..depth + plen]);
    let mut leaves = 0;
    let mut last = None;
    for (byte, child) in node.children() {
        assert!(last < Some(byte), "children out of order");
        last = Some(byte);
        own[depth + plen] = byte as u8;
        leaves += check_node(child, &own, depth + plen + 1);
    }
    leaves
}

fn check<K: ArtKey, V>(art: &Art<K, V>) {
    let leaves = if art.root().is_empty() {
        0
    } else {
        check_node(art.root(), &[0; 16], 0)
    };
    assert_eq!(leaves, art.len());
    let keys: Vec<K> = art.iter().map(|(k, _)| *k).collect();
    assert!(keys.windows(2).all(|w| w[0].key_lt(&w[1])));
    assert_eq!(keys.len(), art.len());
}

fn root_kind<K: ArtKey, V>(art: &Art<K, V>) -> Option<NodeKind> {
    art.root().kind()
}

#[test]
fn node_kinds_change_at_exact_boundaries() {
    let base = 0x1122_3344_5566_7700u64;
    let mut art = Art::new();
    let grown = |n: usize| match n {
        0 | 1 => None,
        2..=4 => Some(NodeKind::Node4),
        5..=16 => Some(NodeKind::Node16),
        17..=48 => Some(NodeKind::Node48),
        _ => Some(NodeKind::Node256),
    };
    for n in 1..=256u64 {
        art.insert(base + n - 1, n).unwrap();
        assert_eq!(root_kind(&art), grown(n as usize), "after growing to {n}");
        check(&art);
    }
    let shrunk = |n: usize| match n {
        0 | 1 => None,
        2..=3 => Some(NodeKind::Node4),
        4..=12 => Some(NodeKind::Node16),
        13..=36 => Some(NodeKind::Node48),
        _ => Some(NodeKind::Node256),
    };
    for n in (0..256u64).rev() {
        assert_eq!(art.remove(&(base + n)), Some(n + 1));
        assert_eq!(
            root_kind(&art),
            shrunk(n as usize),
            "after shrinking to {n}"
        );
        check(&art);
        assert_eq!(art.get(&(base + n)), None);
        if n > 0 {
            assert_eq!(art.get(&(base + n - 1)), Some(&n));
        }
    }
    assert!(art.is_empty() && art.root().is_empty());
    for n in [4usize, 5, 16, 17, 48, 49] {
        let art = Art::bulk_load((0..n as u64).map(|i| (base + i, i))).unwrap();
        assert_eq!(root_kind(&art), grown(n), "bulk load of {n}");
        check(&art);
    }
}

#[test]
fn regrowing_after_a_shrink_keeps_every_child() {
    let mut art = Art::new();
    for b in 0..49u64 {
        art.insert(b << 8, b).unwrap();
    }
    for round in 0..3 {
        for b in 12..49u64 {
            assert_eq!(art.remove(&(b << 8)), Some(b), "round {round}");
        }
        assert_eq!(root_kind(&art), Some(NodeKind::Node16));
        for b in (12..49u64).rev() {
            art.insert(b << 8, b).unwrap();
        }
        assert_eq!(root_kind(&art), Some(NodeKind::Node256));
        check(&art);
        assert!(art.iter().map(|(k, _)| *k).eq((0..49).map(|b| b << 8)));
    }
}

#[test]
fn keys_differing_only_in_the_last_byte_share_one_compressed_path() {
    let keys: Vec<u64> = (0..10).map(|i| 0xdead_beef_0102_0300 + i * 7).collect();
    let art = Art::bulk_load(keys.iter().map(|&k| (k, k))).unwrap();
    let h = art.root().header().unwrap();
    assert_eq!(h.prefix_len(), 7);
    assert_eq!(h.stored_prefix(), &keys[0].to_be_bytes()[..7]);
    assert!(art.root().children().all(|(_, c)| c.is_leaf()));
    for &k in &keys {
        assert_eq!(art.get(&k), Some(&k));
    }
    assert_eq!(art.get(&(keys[0] + 1)), None);
    assert_eq!(
        art.get(&(keys[0] ^ (1 << 40))),
        None,
        "mismatch inside the prefix"
    );
    assert_eq!(art.lower_bound(&0).map(|e| *e.0), Some(keys[0]));
    assert_eq!(art.lower_bound(&(keys[0] + 1)).map(|e| *e.0), Some(keys[1]));
    assert_eq!(art.lower_bound(&(keys[9] + 1)), None);
    assert_eq!(art.lower_bound(&u64::MAX), None);
}

#[test]
fn keys_differing_only_in_the_first_byte_are_leaves_under_the_root() {
    let low = 0x00ff_ffff_ffff_ff17u64;
    let keys: Vec<u64> = (0..20u64).map(|i| (i << 56) | low).collect();
    let mut art = Art::new();
    for &k in keys.iter().rev() {
        art.insert(k, k).unwrap();
    }
    let h = art.root().header().unwrap();
    assert_eq!((h.prefix_len(), h.count()), (0, 20));
    assert!(
        art.root().children().all(|(_, c)| c.is_leaf()),
        "lazy expansion"
    );
    check(&art);
    assert_eq!(art.lower_bound(&(low + 1)).map(|e| *e.0), Some(keys[1]));
    assert_eq!(art.lower_bound(&(keys[19] + 1)), None);
    // A key sharing the first byte with a leaf turns that leaf into a Node4.
    art.insert(keys[3] - 1, 0).unwrap();
    let child = art.root().find_child(3).unwrap();
    let ch = child.header().unwrap();
    assert_eq!((ch.kind(), ch.prefix_len()), (NodeKind::Node4, 6));
    check(&art);
}

/// A string key: 12 shared bytes, then `tail`.
fn s12(tail: [u8; 4]) -> Str16 {
    let mut s = *b"common-prefix...";
    s[12..].copy_from_slice(&tail);
    s
}

#[test]
fn compressed_paths_longer_than_the_stored_prefix() {
    let keys: Vec<Str16> = (0..30u8).map(|i| s12([0, 0, 7, i * 3])).collect();
    let mut art = Art::bulk_load(keys.iter().map(|&k| (k, 1u32))).unwrap();
    let h = art.root().header().unwrap();
    assert_eq!(h.prefix_len(), 15, "only 8 of them are stored");
    check(&art);
    for &k in &keys {
        assert_eq!(art.get(&k), Some(&1));
    }
    // Probes that differ from the path in its unstored part (bytes 8..15).
    let mut below = keys[0];
    below[10] = b'a';
    let mut above = keys[0];
    above[10] = b'z';
    assert_eq!(art.get(&below), None);
    assert_eq!(art.get(&above), None);
    assert_eq!(art.lower_bound(&below).map(|e| *e.0), Some(keys[0]));
    assert_eq!(art.lower_bound(&above), None);
    assert!(art
        .range(below..above)
        .map(|e| *e.0)
        .eq(keys.iter().copied()));
    assert_eq!(art.range(above..).count(), 0);
    let mut beyond = keys[0];
    beyond[14] = 8;
    assert_eq!(art.lower_bound(&beyond), None);
    // Splitting the path inside its unstored part, then merging it back.
    art.insert(above, 2).unwrap();
    art.insert(below, 3).unwrap();
    let h = art.root().header().unwrap();
    assert_eq!((h.prefix_len(), h.count()), (10, 3));
    check(&art);
    assert_eq!(art.lower_bound(&below).map(|e| *e.0), Some(below));
    assert_eq!(art.lower_bound(&keys[29]).map(|e| *e.0), Some(keys[29]));
    let mut after_last = keys[29];
    after_last[15] += 1;
    assert_eq!(art.lower_bound(&after_last).map(|e| *e.0), Some(above));
    assert_eq!(art.remove(&below), Some(3));
    assert_eq!(art.remove(&above), Some(2));
    let h = art.root().header().unwrap();
    assert_eq!(h.prefix_len(), 15, "merged back: 10 + 1 + 4 bytes");
    check(&art);
    assert!(art.iter().map(|e| *e.0).eq(keys.iter().copied()));
}

#[test]
fn strings_with_common_twelve_byte_prefixes_match_a_btreemap() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut art = Art::new();
    let mut reference = BTreeMap::new();
    for step in 0..4000u32 {
        let tail = [
            rng.gen_range(0..3),
            rng.gen_range(0..4),
            rng.gen(),
            rng.gen(),
        ];
        let mut k = s12(tail);
        k[rng.gen_range(8..12)] ^= rng.gen_range(0..2);
        if rng.gen_bool(0.3) {
            assert_eq!(art.remove(&k), reference.remove(&k));
        } else {
            assert_eq!(art.insert(k, step).unwrap(), reference.insert(k, step));
        }
        let probe = s12([rng.gen_range(0..4), rng.gen(), rng.gen(), rng.gen()]);
        assert_eq!(
            art.lower_bound(&probe),
            reference.range(probe..).next(),
            "{probe:?}"
        );
        assert!(art
            .range(probe..)
            .take(3)
            .eq(reference.range(probe..).take(3)));
        let after = (Bound::Excluded(k), Bound::Unbounded);
        assert!(art.range(after).take(3).eq(reference.range(after).take(3)));
        if step % 500 == 0 {
            check(&art);
        }
    }
    check(&art);
    assert!(art.iter().eq(reference.iter()));
}

#[test]
fn dense_and_sparse_u64() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let dense: Vec<u64> = (1000..21_000).collect();
    let mut sparse: Vec<u64> = (0..20_000).map(|_| rng.gen()).collect();
    sparse.sort_unstable();
    sparse.dedup();
    for keys in [dense, sparse] {
        let art = Art::bulk_load(keys.iter().map(|&k| (k, !k))).unwrap();
        let mut inserted = Art::new();
        for &k in keys.iter().rev() {
            inserted.insert(k, !k).unwrap();
        }
        check(&art);
        check(&inserted);
        assert!(art.iter().eq(inserted.iter()));
        for _ in 0..2000 {
            let probe = rng.gen_range(0..=keys[keys.len() - 1] + 1);
            let want = keys.partition_point(|&k| k < probe);
            let got = art.lower_bound(&probe).map(|e| *e.0);
            assert_eq!(got, keys.get(want).copied());
            assert_eq!(inserted.lower_bound(&probe).map(|e| *e.0), got);
            let present = keys[rng.gen_range(0..keys.len())];
            assert_eq!(art.get(&present), Some(&!present));
        }
    }
}

#[test]
fn visit_reports_every_inner_node_bottom_up() {
    let keys: Vec<u64> = (0..5000u64).map(|i| i * i * 31).collect();
    let art = Art::bulk_load(keys.iter().map(|&k| (k, ()))).unwrap();
    let mut seen = 0;
    let mut children = 0;
    let mut bytes = 0;
    let mut parents_last = Vec::new();
    art.visit_post_order(|info| {
        seen += 1;
        children += info.children;
        bytes += info.kind.size_in_bytes::<u64, ()>();
        assert!(info.depth + info.prefix_len < 8);
        assert_eq!(info.node.header().unwrap().count(), info.children);
        parents_last.push(info.depth);
    });
    // A tree with `seen` inner nodes and `len` leaves has `seen + len - 1` edges.
    assert_eq!(children, seen + art.len() - 1);
    assert_eq!(parents_last.last(), Some(&0), "the root comes last");
    assert_eq!(
        art.size_in_bytes(),
        std::mem::size_of::<Art<u64, ()>>() + art.len() * 8 + bytes
    );
}

#[test]
fn bulk_load_refuses_bad_input() {
    assert!(matches!(
        Art::bulk_load([(1u64, 0u8), (3, 0), (2, 0)]),
        Err(crate::Error::OutOfOrder { index: 2, .. })
    ));
    assert!(matches!(
        Art::bulk_load([(1u64, 0u8), (1, 0)]),
        Err(crate::Error::DuplicateKey { index: 1, .. })
    ));
    assert!(matches!(
        Art::bulk_load([(1.0, 0u8), (f64::NAN, 0)]),
        Err(crate::Error::InvalidKey { index: 1, .. })
    ));
    let mut art = Art::new();
    assert!(matches!(
        art.insert(f64::NAN, 1),
        Err(crate::Error::InvalidKey { .. })
    ));
    assert!(art.is_empty());
}

#[test]
fn values_are_dropped_exactly_once() {
    use std::rc::Rc;
    let marker = Rc::new(());
    {
        let mut art = Art::bulk_load((0..300u64).map(|k| (k * 3, Rc::clone(&marker)))).unwrap();
        for k in 0..200u64 {
            art.remove(&(k * 3));
            art.insert(k * 5 + 1, Rc::clone(&marker)).unwrap();
        }
        assert_eq!(Rc::strong_count(&marker), art.len() + 1);
    }
    assert_eq!(Rc::strong_count(&marker), 1);
}

proptest! {
    #[test]
    fn random_string_operations_keep_the_invariants(
        ops in proptest::collection::vec((0u8..3, 0u8..4, 0u8..4, any::<u8>()), 0..300),
    ) {
        let mut art = Art::new();
        let mut reference = BTreeMap::new();
        for (i, &(op, a, b, c)) in ops.iter().enumerate() {
            let mut k = s12([a, b, 0, c]);
            k[9] = a;
            match op {
                0 | 1 => prop_assert_eq!(art.insert(k, i).unwrap(), reference.insert(k, i)),
                _ => prop_assert_eq!(art.remove(&k), reference.remove(&k)),
            }
            prop_assert_eq!(art.lower_bound(&k), reference.range(k..).next());
        }
        check(&art);
        prop_assert!(art.iter().eq(reference.iter()));
    }
}
