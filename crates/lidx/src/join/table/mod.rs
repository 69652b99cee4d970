//! Join tables: a header block, then fixed-size `(key, value)` records in blocks.
//!
//! Paper 000 §5.1 stores a table as "a dense array with a 16-byte header at the start of the
//! file", divided logically into 4 KiB blocks; readers keep "a set of blocks" in memory large
//! enough for a search window and load "the set of contiguous blocks, starting with the block
//! containing the key" when the key is not there; writers buffer records and flush when the
//! buffer is full. We keep the header and the record format, and differ where our I/O layer
//! asks us to:
//!
//! * Every block ends with the io layer's 4-byte crc32c trailer ([`crate::io::checksum`]), so a
//!   block has `block_size - 4` payload bytes. Records never straddle two blocks: a block holds
//!   `floor(payload / record_size)` records (255 of 16 bytes in a 4 KiB block, 12 bytes unused),
//!   so a record is read with the block that holds it and no copy.
//! * The header has block 0 to itself (the rest of its payload is zero): record `i` is then in
//!   block `1 + i / per_block` at byte `(i % per_block) * record_size`, with no special first
//!   block. That costs one block per table.
//! * The header is the paper's 16 bytes followed by a magic number, a format version and a
//!   content fingerprint of the records (layout and checks: [`TableHeader`], `table/header.rs`), so that a saved index
//!   is bound to exactly the records it was built from. A file with fewer blocks than the count
//!   needs is [`crate::Error::Truncated`], one with more is [`crate::Error::Corrupt`].
//! * The writer writes the header last (in [`TableWriter::finish`]), so a table whose writer
//!   never finished fails its header block's checksum instead of looking empty.
//!
//! Tables carry no order flag: the sorted joins check order while they stream
//! ([`crate::key::check_next`]), and unsorted tables are plain tables too.
//!
//! One file per part: `header` (the header's codec, the key types), `file` (an open
//! [`Table`]), `prefetch` (the background reader both readers stream
//! with), `scan` (sequential reads, [`Scan`]), `window` (an INLJ's forward windows,
//! [`WindowReader`], and [`WindowHold`], a reader put aside between batches of probes), `writer` ([`TableWriter`]). `file` imports no reader: each reader's file
//! adds its constructor to [`Table`].

mod file;
mod header;
mod prefetch;
mod scan;
mod window;
mod writer;

pub use file::Table;
pub use header::{
    check_same_key_type, read_header, TableHeader, TableKey, HEADER_BYTES, TABLE_MAGIC,
};
pub use scan::Scan;
pub use window::{WindowHold, WindowReader};
pub use writer::TableWriter;
pub(crate) use writer::{write_table_header, WRITE_BLOCKS};
