//! External-memory joins of tables on disk, with learned indexes (paper 000).
//!
//! Paper 000 asks whether learned indexes speed up joins whose tables live on disk. This module
//! holds the tables ([`table`]) the joins read and write.

pub mod learned_partition;
pub mod table;
pub mod unsorted_btree;

pub use table::{
    check_same_key_type, read_header, Scan, Table, TableHeader, TableKey, TableWriter, WindowReader,
};
