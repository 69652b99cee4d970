//! What the disk B+-tree's test files share: every resident mode, and a storage of 512-byte
//! blocks (30 entries a leaf, 31 children an inner node with u64 keys and 8-byte payloads), so
//! a few hundred keys make a tree of several levels that splits and merges all the time; and
//! rewriting a block under a valid checksum, for the damaged-file tests of both disk B+-trees.
#![allow(dead_code)]

use lidx::disk::Resident;
use lidx::io::{IoClass, SimProfile, Storage};

pub const MODES: [Resident; 4] = [
    Resident::None,
    Resident::AllInner,
    Resident::TopLevels(1),
    Resident::TopLevels(2),
];

pub fn small_storage() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
}

/// Changes the usable bytes of `block` of `file` and writes it back with a valid checksum, so
/// that the structure's own checks, not the device's, must catch the damage.
pub fn rewrite_block(storage: &Storage, file: &str, block: u64, change: impl FnOnce(&mut [u8])) {
    let device = storage.open(file, true).unwrap();
    let bs = storage.block_size();
    let mut buf = lidx::io::AlignedBuf::zeroed(bs);
    device
        .read_blocks(block, &mut buf, IoClass::Header)
        .unwrap();
    change(&mut buf[..bs - 4]);
    device
        .write_blocks(block, &mut buf, IoClass::Header)
        .unwrap();
    device.sync().unwrap();
}
