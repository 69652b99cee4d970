//! The disk B+-tree's `memory_bytes` checked against the allocator: what it reports is the heap
//! it holds (its resident levels and header) plus its own size, in every resident mode, after
//! build, after open and after inserts that split resident nodes and grow the tree. The count is
//! the measuring thread's own (see `counting_alloc`); one test function runs every mode.

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{SimProfile, Storage};

mod counting_alloc;

use counting_alloc::{live, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Heap bytes `tree` holds: live bytes with it minus live bytes once it is dropped (the storage
/// keeps its device, so only what the tree itself owns is freed), and what it reports.
fn held_and_reported(tree: DiskBTree<u64>) -> (isize, isize) {
    let reported = tree.memory_bytes() as isize - std::mem::size_of::<DiskBTree<u64>>() as isize;
    let with = live();
    drop(tree);
    (with - live(), reported)
}

#[test]
fn memory_bytes_match_the_allocator() {
    let keys: Vec<u64> = (0..40_000u64).map(|i| i * 4).collect();
    for mode in [
        Resident::None,
        Resident::TopLevels(1),
        Resident::TopLevels(2),
        Resident::AllInner,
    ] {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap();
        let tree = DiskBTree::build(
            &storage,
            "t",
            &keys,
            |_, _, _| {},
            DiskBTreeParams {
                resident: mode,
                ..DiskBTreeParams::default()
            },
        )
        .unwrap();
        let (held, reported) = held_and_reported(tree);
        assert_eq!(reported, held, "{mode:?} after build");
        let tree = DiskBTree::<u64>::open(&storage, "t", mode, true).unwrap();
        let (held, reported) = held_and_reported(tree);
        assert_eq!(reported, held, "{mode:?} after open");
        let mut tree = DiskBTree::<u64>::open(&storage, "t", mode, true).unwrap();
        for k in 0..20_000u64 {
            tree.insert(k * 8 + 1, &[1; 8]).unwrap();
        }
        tree.flush().unwrap();
        let height = tree.height();
        let (held, reported) = held_and_reported(tree);
        assert_eq!(reported, held, "{mode:?} after inserts (height {height})");
    }
}
