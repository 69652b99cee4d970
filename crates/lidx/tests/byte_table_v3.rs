//! A byte table written by a build before version 4 (the point index) still reads: open,
//! `check`, gets of every key and of absent ones, and cursors both ways. The fixture is
//! `lidx build --dataset gen:words:400 --index byte-table` from commit 7a6790b (version 3,
//! 400 word keys), copied out of a scratch directory so the test never writes to it.

use std::ops::Bound;
use std::sync::Arc;

use lidx::disk::ByteTable;
use lidx::io::{DeviceKind, Storage};

#[test]
fn a_version_3_table_reads_as_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/byte-table-v3.lidx"
    );
    std::fs::copy(fixture, dir.path().join("t")).unwrap();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: false }, 4096).unwrap();
    let table = Arc::new(ByteTable::open(&storage, "t").unwrap());
    assert_eq!(table.header().version, 3);
    assert_eq!(table.check().unwrap(), 400);
    let forward: Vec<(Vec<u8>, Vec<u8>)> = table
        .cursor(Bound::Unbounded, Bound::Unbounded, true)
        .map(Result::unwrap)
        .collect();
    assert_eq!(forward.len(), 400);
    assert!(forward.windows(2).all(|w| w[0].0 < w[1].0));
    let mut backward: Vec<_> = table
        .cursor(Bound::Unbounded, Bound::Unbounded, false)
        .map(Result::unwrap)
        .collect();
    backward.reverse();
    assert_eq!(backward, forward);
    for (k, v) in &forward {
        assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
        let mut absent = k.clone();
        absent.push(0);
        if !forward.iter().any(|(other, _)| *other == absent) {
            assert_eq!(table.get(&absent).unwrap(), None);
        }
    }
}
