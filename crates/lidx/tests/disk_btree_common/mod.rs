//! What the disk B+-tree's test files share: every resident mode, and a storage of 512-byte
//! blocks (30 entries a leaf, 31 children an inner node with u64 keys and 8-byte payloads), so
//! a few hundred keys make a tree of several levels that splits and merges all the time.

use lidx::disk::Resident;
use lidx::io::{SimProfile, Storage};

pub const MODES: [Resident; 4] = [
    Resident::None,
    Resident::AllInner,
    Resident::TopLevels(1),
    Resident::TopLevels(2),
];

pub fn small_storage() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
}
