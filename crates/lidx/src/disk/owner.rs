//! The owner stamp of a file that belongs to a store: the store's id and the file's
//! generation, written into the file's header so that a file copied in from another store, or
//! an older copy of the store's own file put back, is told apart from the file the store
//! wrote (issue 30, class 4).
//!
//! Layout (24 bytes, little-endian, at an offset each format's header table gives):
//!
//! | offset | size | field                                   |
//! |--------|------|-----------------------------------------|
//! | 0      | 16   | store id (random, made at `create`)     |
//! | 16     | 8    | generation of the file in its store     |
//!
//! A file written outside a store (a table or tree `lidx build` saves) has owner
//! [`FileOwner::NONE`]: store 0, generation 0.

use std::fmt;

/// Bytes of an encoded [`FileOwner`].
pub(crate) const OWNER_BYTES: usize = 24;

/// Which store a file belongs to, and which generation of the store's files it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileOwner {
    /// The store's id (0: no store).
    pub store: u128,
    /// The file's generation in that store.
    pub generation: u64,
}

impl FileOwner {
    /// The owner of a file written outside any store.
    pub const NONE: FileOwner = FileOwner {
        store: 0,
        generation: 0,
    };

    /// Writes the stamp at `out[at..at + OWNER_BYTES]` (the caller sized `out`).
    pub fn encode_at(&self, out: &mut [u8], at: usize) {
        out[at..at + 16].copy_from_slice(&self.store.to_le_bytes());
        out[at + 16..at + OWNER_BYTES].copy_from_slice(&self.generation.to_le_bytes());
    }

    /// Reads the stamp at `b[at..at + OWNER_BYTES]`; `None` when `b` is too short.
    pub fn decode_at(b: &[u8], at: usize) -> Option<FileOwner> {
        let store = b.get(at..at + 16)?.try_into().ok()?;
        let generation = b.get(at + 16..at + OWNER_BYTES)?.try_into().ok()?;
        Some(FileOwner {
            store: u128::from_le_bytes(store),
            generation: u64::from_le_bytes(generation),
        })
    }
}

impl fmt::Display for FileOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "store {:032x}, generation {}",
            self.store, self.generation
        )
    }
}
