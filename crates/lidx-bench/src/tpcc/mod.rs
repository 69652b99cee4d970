//! TPC-C with every index on disk and the tuples in memory: paper 002 §10.6 (Table 8), the
//! first mode of issue 34 (`lidx tpcc`).
//!
//! The nine tables (clause 1.3) are Rust structs in one `Vec` each, a tuple addressed by its
//! position (`schema`); every table has a primary-key index and CUSTOMER and ORDER a
//! secondary one (by last and first name, and by customer), eleven indexes in all, each a disk
//! structure that takes inserts and deletes ([`TpccIndexSpec`]: the disk B+-tree, paper 003's
//! structures, the hybrid index with a chosen static model), holding `u64` keys packed as
//! `keys` says and the tuple id as payload. The database is loaded for W warehouses
//! (`load`), the indexes bulk loaded, then one thread runs the five transactions at the
//! standard mix (`txn`) and, at the end, the consistency conditions 1-4 through the indexes
//! (`check`). [`run`] does that once per structure with the same seed: the same database,
//! the same transactions, so their digests must agree and their figures compare.
//!
//! Measured on this machine (2 cores, `docs/results/paper002.md`, TPC-C section): the figures
//! and the commands that produced them are there.

mod check;
mod db;
mod index;
mod keys;
mod load;
mod random;
mod run;
mod schema;
mod txn;

pub use index::TpccIndexSpec;
pub use run::{run, TpccConfig};
