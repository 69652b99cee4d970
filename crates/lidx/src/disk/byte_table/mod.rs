//! The byte table: a static file of sorted, unique byte-string keys with byte-string values,
//! located through a learned model. It is the static stage of the store's hybrid engine
//! ([`crate::kv::store`]), the byte-key form of [`crate::disk::static_learned`].
//!
//! # Layout
//!
//! Block 0 is the header ([`format`]); blocks `1..=data_blocks` carry the **record stream**;
//! the blocks after them carry the **separator stream**. Every block has the device's crc32c
//! trailer, so a flipped bit is an error naming the file and block.
//!
//! * A record is `varint(key length) varint(value length) key value`. Records are packed into
//!   the data blocks' payloads back to back, in key order. A record that fits in a block but
//!   not in the rest of the current one starts the next block (the rest is zero padding), so
//!   it is read in one block; a longer one (a key longer than a block, a 1 MiB value) runs on
//!   across consecutive blocks, read in one request once its length is known. Each data block starts
//!   with a 2-byte field: the offset of the first record that starts in it (`0xFFFF` when none
//!   does, inside a long value), which `check` compares against the separators.
//! * From version 4 each data block ends with a **point index** ([`slots`]): a small hash
//!   table from the keys that start in the block to their records, in the block's padding, so
//!   a cached lookup reads a few lines of its block rather than scanning it.
//! * The separator stream has one entry per data block in which a record starts: the stream
//!   position of that record (delta-coded) and a **separator**: the shortest prefix of its key
//!   that is above the key before it (paper 002 §9 keeps first keys; a separator is enough to
//!   route and is usually a few bytes, like LevelDB's index blocks). The first entry keeps the
//!   whole first key, so a key below the table is refused without I/O.
//!
//! # Lookups
//!
//! Open reads the separators into one arena and builds a [`StringIndex`](crate::mem::StringIndex) over them (the model
//! over keys of any length: PGMs on 8-byte chunks, descending into longer prefixes where keys
//! share them, see [`crate::mem::string_index`]). A lookup asks the model for a window of at most
//! `2 eps + 2 + threshold` separators, binary-searches the window in memory, and reads the one
//! data block where its candidate record run starts: one block per lookup for records that fit
//! in a block. The model is derived and not stored: it is rebuilt at open from the separators,
//! which takes milliseconds for the one entry per block (4 KiB) of data.
//!
//! Where we differ from paper 002 §9: the paper's static stage fits its model on every key and
//! keeps only the model in memory, which needs fixed-size records to turn a position into a
//! block. With records of any length we fit the model on one key per block instead, and keep
//! those separators in memory too; a block of 4 KiB holding records of ~30 bytes makes that
//! well under a byte per key (the store's `stats` reports the figure).

mod filter;
mod format;
mod locator;
mod slots;
mod table;
mod writer;

pub(crate) use filter::KeyFilter;
pub(crate) use format::shortest_separator;
pub use format::{
    ByteTableHeader, ByteTableKind, ByteTableParams, FilterShape, BYTE_TABLE_MAGIC,
    BYTE_TABLE_VERSION,
};
pub(crate) use slots::key_hash;
pub(crate) use table::MergeRecords;
pub use table::{ByteTable, TableCursor};
pub use writer::ByteTableWriter;

#[cfg(test)]
mod tests;
