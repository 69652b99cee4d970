//! The byte B+-tree against a `BTreeMap`: random batches of puts and deletes with keys and
//! values of every size class (inline, overflowing, longer than a block), small blocks so
//! that leaves and inner nodes split and empty, lookups, ranges both ways, checkpoint images
//! and reopening from them, and the full check.

use std::collections::BTreeMap;
use std::ops::Bound;

use proptest::prelude::*;

use super::*;
use crate::io::{SimProfile, Storage};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn apply(tree: &mut ByteBTree, model: &mut Model, batch: &[(Vec<u8>, Option<Vec<u8>>)], seq: u64) {
    let mut last: BTreeMap<&[u8], Option<&[u8]>> = BTreeMap::new();
    for (k, v) in batch {
        last.insert(k, v.as_deref());
    }
    let ops: Vec<Op<'_>> = last.into_iter().collect();
    tree.apply(&ops, seq).unwrap();
    for (k, v) in ops {
        match v {
            Some(v) => model.insert(k.to_vec(), v.to_vec()),
            None => model.remove(k),
        };
    }
    tree.reclaim(seq);
}

fn agree(tree: &ByteBTree, model: &Model, probes: &[Vec<u8>]) {
    assert_eq!(tree.len(), model.len() as u64);
    for p in probes.iter().chain(model.keys()) {
        assert_eq!(tree.get(p).unwrap().as_ref(), model.get(p), "get {p:?}");
    }
    let all = |forward| {
        let mut c = tree.cursor(Bound::Unbounded, Bound::Unbounded, forward);
        let mut out = Vec::new();
        while let Some(kv) = c.next_record().unwrap() {
            out.push(kv);
        }
        out
    };
    let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(all(true), expected);
    let mut rev = expected.clone();
    rev.reverse();
    assert_eq!(all(false), rev);
    for w in probes.windows(2) {
        let (a, b) = if w[0] <= w[1] {
            (&w[0], &w[1])
        } else {
            (&w[1], &w[0])
        };
        for (start, end) in [
            (Bound::Included(a.clone()), Bound::Excluded(b.clone())),
            (Bound::Excluded(a.clone()), Bound::Included(b.clone())),
        ] {
            for forward in [true, false] {
                let mut c = tree.cursor(start.clone(), end.clone(), forward);
                let mut got = Vec::new();
                while let Some((k, _)) = c.next_record().unwrap() {
                    got.push(k);
                }
                let mut want: Vec<Vec<u8>> = model
                    .range::<Vec<u8>, _>((start.as_ref(), end.as_ref()))
                    .map(|(k, _)| k.clone())
                    .collect();
                if !forward {
                    want.reverse();
                }
                assert_eq!(got, want, "range {start:?}..{end:?} forward {forward}");
            }
        }
    }
    tree.check().unwrap();
}

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(0u8..4, 1..6),
        2 => proptest::collection::vec(any::<u8>(), 1..40),
        1 => (proptest::collection::vec(0u8..2, 60..70), 100usize..700)
            .prop_map(|(mut k, n)| { k.resize(n, 1); k }),
    ]
}

fn value_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..20),
        1 => (any::<u8>(), 100usize..3000).prop_map(|(b, n)| vec![b; n]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn the_tree_agrees_with_a_map_through_checkpoints(
        batches in proptest::collection::vec(
            proptest::collection::vec((key_strategy(), proptest::option::weighted(0.8, value_strategy())), 1..40),
            1..25),
        probes in proptest::collection::vec(key_strategy(), 2..8),
    ) {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap();
        let mut tree = ByteBTree::create(&storage, "pages").unwrap();
        let mut model = Model::new();
        let mut generation = 0;
        for (i, batch) in batches.iter().enumerate() {
            let seq = i as u64 + 1;
            apply(&mut tree, &mut model, batch, seq);
            if i % 7 == 6 {
                // A checkpoint, then reopen from it, as recovery does.
                generation += 1;
                let name = format!("image-{generation}");
                tree.sync().unwrap();
                tree.image().write(&storage, &name).unwrap();
                tree.checkpointed(seq);
                agree(&tree, &model, &probes);
                let image = Image::read(&storage, &name).unwrap();
                drop(tree);
                tree = ByteBTree::open(&storage, "pages", Some(image), seq, false).unwrap();
            }
        }
        agree(&tree, &model, &probes);
    }
}

#[test]
fn sorted_appends_fill_leaves_and_deletes_empty_the_tree() {
    let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 4096).unwrap();
    let mut tree = ByteBTree::create(&storage, "pages").unwrap();
    let mut model = Model::new();
    let n = 100_000u64;
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let batch: Vec<_> = chunk
            .iter()
            .map(|k| (k.to_be_bytes().to_vec(), Some(vec![1u8; 8])))
            .collect();
        apply(&mut tree, &mut model, &batch, chunk[0] + 1);
    }
    tree.check().unwrap();
    // 8-byte keys and values take 25 bytes a record with their slot: 163 a leaf when full.
    let leaves = tree.image().leaves.len() as u64;
    assert!(leaves <= n.div_ceil(163) + 1, "{leaves} leaves");
    assert!(
        tree.memory_bytes() < (leaves as usize) * 24,
        "{} bytes",
        tree.memory_bytes()
    );
    for k in (0..n).step_by(977) {
        assert_eq!(tree.get(&k.to_be_bytes()).unwrap(), Some(vec![1u8; 8]));
    }
    let batch: Vec<_> = (0..n).map(|k| (k.to_be_bytes().to_vec(), None)).collect();
    apply(&mut tree, &mut model, &batch, n + 1);
    assert!(tree.is_empty());
    assert_eq!(tree.image().leaves.len(), 0);
    agree(&tree, &model, &[vec![1]]);
}

#[test]
fn a_read_only_tree_keeps_its_writes_in_memory() {
    let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 4096).unwrap();
    let tree = ByteBTree::create(&storage, "pages").unwrap();
    drop(tree);
    let before = storage.file_bytes("pages");
    let mut tree = ByteBTree::open(&storage, "pages", None, 0, true).unwrap();
    tree.apply(&[(b"k".as_slice(), Some(vec![5u8; 9000].as_slice()))], 1)
        .unwrap();
    assert_eq!(tree.get(b"k").unwrap(), Some(vec![5u8; 9000]));
    assert_eq!(storage.file_bytes("pages"), before);
}
