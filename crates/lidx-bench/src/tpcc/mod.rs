//! TPC-C with every index on disk and the tuples in memory: paper 002 §10.6 (Table 8), the
//! first mode of issue 34 (`lidx tpcc`); and the second mode, every tuple and index in one
//! durable store (`--index store:<engine>`, `store`), through the same transactions
//! (`tuples` is the one interface both modes read and write tuples through).
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
//! Measured (2-core AMD EPYC VM, 10 warehouses, 200,000 transactions; `docs/results/paper002.md`,
//! TPC-C section, has the commands and every figure): the hybrid index 1.45x the disk
//! B+-tree's transactions per second on O_DIRECT files (hybrid-LeCo 1.34x; 1.59-1.60x modeled
//! on `sim:nvme`) at 0.83x its index space, the paper's 0.69x only against a B+-tree with 70%
//! full leaves (0.65x).

mod check;
mod db;
mod index;
mod keys;
mod load;
mod random;
mod run;
mod schema;
mod store;
mod tuples;
mod txn;

pub use index::{TpccIndexSpec, KV_PREFIX, STORE_PREFIX};
pub use run::{run, KvMemory, TpccConfig};
