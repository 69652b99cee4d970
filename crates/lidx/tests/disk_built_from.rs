//! Issue 30, class 6: every on-disk index `lidx build` writes over fixed-size keys records the
//! fingerprint of the keys it was built from, keeps it through writes and a reopen, and
//! `disk::check_built_from` refuses a dataset of the same size with one key changed
//! (`Error::StaleIndex` naming the file and both fingerprints). Before, these files were bound
//! to their dataset by key count only.

use lidx::disk::keys_fingerprint;
use lidx::disk::{check_built_from, DiskIndex, DiskMap};
use lidx::disk::{AnyStaticLearned, StaticLearned, StaticLearnedParams};
use lidx::disk::{BTreeLearned, BTreeLearnedParams};
use lidx::disk::{DiskAlex, DiskAlexParams};
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskFiting, DiskFitingParams};
use lidx::disk::{DiskLipp, DiskLippParams};
use lidx::disk::{DiskPgm, DiskPgmParams};
use lidx::io::{SimProfile, Storage};
use lidx::mem::{Pgm, PgmParams};
use lidx::Error;

fn payload(_: usize, key: &u64, out: &mut [u8]) {
    out.copy_from_slice(&key.to_le_bytes()[..out.len()]);
}

/// Checks the binding of `index` (the file `file`) to `keys`: accepted as is, refused with one
/// key changed, the same count.
fn bound(file: &str, index: &dyn DiskIndex<u64>, keys: &[u64]) {
    assert_eq!(index.keys_fingerprint(), keys_fingerprint(keys), "{file}");
    check_built_from(file, index, keys).unwrap();
    let mut other = keys.to_vec();
    *other.last_mut().unwrap() += 1;
    match check_built_from(file, index, &other) {
        Err(Error::StaleIndex {
            file: f,
            expected,
            found,
        }) => {
            assert_eq!(f, file);
            assert_eq!(expected, keys_fingerprint(&other));
            assert_eq!(found, keys_fingerprint(keys));
            let said = check_built_from(file, index, &other)
                .unwrap_err()
                .to_string();
            assert!(said.contains("rebuild with lidx build"), "{said}");
        }
        other => panic!("{file}: {other:?}"),
    }
}

#[test]
fn every_fixed_key_index_is_bound_to_the_keys_it_was_built_from() {
    let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 4096).unwrap();
    let keys: Vec<u64> = (0..20_000u64).map(|i| i * 37 + (i % 7)).collect();

    let mut tree = DiskBTree::build(
        &storage,
        "btree",
        &keys,
        payload,
        DiskBTreeParams::default(),
    )
    .unwrap();
    bound("btree", &tree, &keys);
    // A write changes the keys, not what the file was built from.
    tree.insert(1, &[0; 8]).unwrap();
    tree.flush().unwrap();
    drop(tree);
    let tree = DiskBTree::<u64>::open(&storage, "btree", Resident::AllInner, false).unwrap();
    bound("btree", &tree, &keys);

    let params = StaticLearnedParams::default();
    StaticLearned::build(&storage, "pgm", &keys, payload, params, |k| {
        Pgm::build(k, PgmParams::new(16, 4))
    })
    .unwrap();
    bound(
        "pgm",
        &AnyStaticLearned::<u64>::open(&storage, "pgm", None).unwrap(),
        &keys,
    );

    let mut alex =
        DiskAlex::build(&storage, "alex", &keys, payload, DiskAlexParams::default()).unwrap();
    alex.flush().unwrap();
    drop(alex);
    bound(
        "alex",
        &DiskAlex::open(&storage, "alex", false, false).unwrap(),
        &keys,
    );

    let mut lipp =
        DiskLipp::build(&storage, "lipp", &keys, payload, DiskLippParams::default()).unwrap();
    lipp.flush().unwrap();
    drop(lipp);
    bound(
        "lipp",
        &DiskLipp::open(&storage, "lipp", false, false).unwrap(),
        &keys,
    );

    drop(DiskPgm::build(&storage, "dpgm", &keys, payload, DiskPgmParams::default()).unwrap());
    bound(
        "dpgm",
        &DiskPgm::open(&storage, "dpgm", false).unwrap(),
        &keys,
    );

    let fiting = DiskFitingParams::default();
    drop(DiskFiting::build(&storage, "fiting", &keys, payload, fiting).unwrap());
    bound(
        "fiting",
        &DiskFiting::open(&storage, "fiting", false, Resident::None).unwrap(),
        &keys,
    );

    let learned = BTreeLearnedParams::default();
    let mut index = BTreeLearned::build(&storage, "btl", &keys, payload, learned).unwrap();
    index.flush().unwrap();
    drop(index);
    bound(
        "btl",
        &BTreeLearned::<u64>::open(&storage, "btl", false).unwrap(),
        &keys,
    );
}
