//! The byte-string learned index against binary search: every window holds the lower bound and
//! is no wider than `2 * eps + 2 + threshold`, for present, absent, extreme and shared-prefix
//! keys, at several parameters, and on proptest-generated sets.

use lidx::mem::{StringIndex, StringIndexParams};
use lidx::Error;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PARAMS: [StringIndexParams; 3] = [
    StringIndexParams {
        eps: 1,
        threshold: 1,
    },
    StringIndexParams {
        eps: 4,
        threshold: 3,
    },
    StringIndexParams {
        eps: 32,
        threshold: 32,
    },
];

/// Checks `probe` against `partition_point` on an index over `keys` at every parameter set.
fn check(keys: &[Vec<u8>], probes: &[Vec<u8>]) {
    for params in PARAMS {
        let index = StringIndex::build(keys, params).unwrap();
        assert_eq!(index.len(), keys.len());
        for q in keys.iter().chain(probes) {
            let want = keys.partition_point(|k| k < q);
            let w = index.search(q);
            assert!(
                w.lo <= want && want <= w.hi && w.hi <= keys.len(),
                "{params:?} {q:?}: {w:?}, want {want}"
            );
            assert!(w.hi - w.lo <= index.max_window(), "{params:?} {q:?}: {w:?}");
            assert_eq!(index.lower_bound(keys, q), want, "{params:?} {q:?}");
        }
    }
}

/// Probes around every key: itself, one byte more, one byte less, its last byte changed.
fn probes_around(keys: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = vec![vec![], vec![0], vec![0xFF; 3]];
    for k in keys {
        let mut longer = k.clone();
        longer.push(0);
        out.push(longer);
        if let Some((last, head)) = k.split_last() {
            out.push(head.to_vec());
            let mut up = head.to_vec();
            up.push(last.wrapping_add(1));
            out.push(up);
        }
    }
    out
}

fn sorted(mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.sort();
    keys
}

#[test]
fn empty_and_single_key() {
    check(&[], &[vec![], b"a".to_vec()]);
    let one = vec![b"word".to_vec()];
    check(&one, &probes_around(&one));
    let empty_key = vec![Vec::new()];
    check(&empty_key, &probes_around(&empty_key));
}

#[test]
fn all_keys_equal() {
    let keys = vec![b"same".to_vec(); 500];
    check(&keys, &probes_around(&keys[..1]));
    let index = StringIndex::build(&keys, StringIndexParams::default()).unwrap();
    let w = index.search(b"same");
    assert_eq!((w.lo, w.hi), (0, 0), "a run of duplicates answers exactly");
}

#[test]
fn keys_that_are_prefixes_of_each_other() {
    let mut keys: Vec<Vec<u8>> = (0..200).map(|n| vec![0u8; n]).collect();
    keys.extend((0..200).map(|n| {
        let mut k = b"a".to_vec();
        k.resize(1 + n, 0);
        k
    }));
    let keys = sorted(keys);
    check(&keys, &probes_around(&keys));
}

#[test]
fn long_shared_prefixes_and_long_keys() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let prefix: Vec<u8> = (0..150).map(|_| rng.gen()).collect();
    let mut keys: Vec<Vec<u8>> = (0..3000)
        .map(|_| {
            let mut k = prefix.clone();
            let tail = rng.gen_range(0..20);
            k.extend((0..tail).map(|_| rng.gen_range(b'a'..=b'd')));
            k
        })
        .collect();
    keys.extend((0..50).map(|_| (0..1024).map(|_| rng.gen_range(b'x'..=b'z')).collect()));
    let mut keys = sorted(keys);
    keys.dedup();
    let probes = probes_around(&keys);
    check(&keys, &probes);
}

#[test]
fn word_like_keys_with_duplicates() {
    let stems = [
        "inter",
        "international",
        "interna",
        "nation",
        "national",
        "nat",
    ];
    let ends = ["", "s", "ly", "ism", "ist", "ists", "al", "alise", "alised"];
    let mut keys = Vec::new();
    for (i, s) in stems.iter().enumerate() {
        for e in ends {
            for rep in 0..(1 + i % 3) {
                keys.push(format!("{s}{e}").into_bytes());
                keys.push(format!("{s}{e} {rep}").into_bytes());
            }
        }
    }
    let keys = sorted(keys);
    check(&keys, &probes_around(&keys));
}

#[test]
fn bad_input_is_a_typed_error() {
    let keys = vec![b"b".to_vec(), b"a".to_vec()];
    match StringIndex::build(&keys, StringIndexParams::default()) {
        Err(Error::OutOfOrder {
            index,
            previous,
            got,
        }) => assert_eq!((index, previous.as_str(), got.as_str()), (1, "b", "a")),
        other => panic!("{other:?}"),
    }
    let zero = StringIndexParams {
        eps: 0,
        threshold: 4,
    };
    assert!(matches!(
        StringIndex::build(&[b"a"], zero),
        Err(Error::InvalidParameter { name: "eps", .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn windows_hold_the_lower_bound(
        keys in prop::collection::vec(
            prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xFF]), 0..24),
            0..300,
        ),
        probes in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..40),
    ) {
        let keys = sorted(keys);
        check(&keys, &probes);
    }
}
