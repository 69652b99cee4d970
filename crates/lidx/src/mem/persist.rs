//! Saving static indexes: the [`Persist`] trait, the saved-model format of every index that an
//! on-disk learned index can hold.
//!
//! An on-disk learned index keeps its model in memory and writes it to its file so it can be
//! reopened without re-reading the keys. Each persistable index writes a little-endian byte
//! string with a [`crate::codec::Encoder`] and reads it back with a [`crate::codec::Decoder`],
//! tagged in the file header with its [`Persist::KIND`]. The bytes come from disk, so besides
//! the codec's bounds checks each `decode` validates the invariants its `search` relies on
//! (sorted segment keys, ranks within `len`, finite slopes, child indexes in range, all at most
//! [`crate::codec::MAX_LEN`]), so a decoded index answers every query without panicking.

use crate::codec::{Decoder, Encoder};
use crate::error::Result;
use crate::index::StaticIndex;
use crate::key::Key;

/// A static index that can be written to bytes and read back.
pub trait Persist<K: Key>: StaticIndex<K> + Sized {
    /// Stable identifier written in file headers: which index type the bytes hold.
    const KIND: u32;

    /// Appends the index to `out`.
    fn encode(&self, out: &mut Encoder);

    /// Reads an index written by [`Persist::encode`], validating it (see the module docs).
    fn decode(input: &mut Decoder<'_>) -> Result<Self>;

    /// The model's name as tools print it: by default the type's name without its path and
    /// parameters (`Pgm`, `ZoneMap`); a type that can hold one of several forms names the one
    /// it holds.
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        let name = full.split('<').next().unwrap_or(full);
        name.rsplit("::").next().unwrap_or(name).to_string()
    }
}
