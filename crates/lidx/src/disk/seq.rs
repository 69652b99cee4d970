//! [`Seq`]: the sequence number that orders a store's writes, from 1, one per record (0 means
//! "no record").
//!
//! The write-ahead log ([`crate::kv::wal`]) assigns it, and the byte-key B+-tree
//! ([`super::byte_btree`]) stamps the pages it retires with it, so that a page is reused only
//! once no reader at an older sequence number can still reach it and the last checkpoint no
//! longer names it. It lives here, below both users, so that `disk` never imports from `kv`
//! (a dependency only points down: see the crate's layers); `kv::wal` re-exports it.

/// A record's sequence number: 1 for the first record ever appended to a log, then one more
/// per record. 0 means "no record".
pub type Seq = u64;
