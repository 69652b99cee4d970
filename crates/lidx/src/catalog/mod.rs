//! The catalog: every structure lidx builds, named once, with its parameters, their defaults and
//! the help text a command shows for them.
//!
//! Each structure is one row of a [`param_specs!`](crate::param_specs) table (the one
//! `name[:param=value]...` grammar of [`crate::spec`]); a table is the set of structures that
//! can play one [`Role`]. A structure of several roles is one row of the table whose variant the
//! other roles reuse: the in-memory maps ([`MapSpec`]) are also static indexes
//! ([`IndexSpec::Map`]), the disk B+-tree ([`DiskMapSpec::BTree`]) is both an updatable disk map
//! and a read-only disk index. The tables hold no code that builds anything: whoever builds a
//! role (the store's `log` engine, the benchmark's runners) matches on the parsed spec.
//!
//! The same name may stand for two structures in two roles: `btree` is the in-memory B+-tree
//! where an in-memory index is asked for and the disk B+-tree where a disk one is; a role's
//! table resolves it.
//!
//! Not here: the benchmark's comparison engines (RocksDB, LMDB, redb and the others of
//! `lidx-peers`, named by those adapters) and its typed adapters (`adapter:btree`,
//! `adapter:hybrid`), which are no lidx structure and are named by the bench beside the
//! [`Role::StoreEngine`] forms it lists.

mod disk;
mod memory;
mod role;
mod store;
mod text;

pub use disk::{granularity_text, ByteIndexSpec, DiskMapSpec, DiskModelSpec, Granularity};
pub use memory::{IndexSpec, MapSpec};
pub use role::{parse_list, BadSpec, Role};
pub use store::{DynamicStageSpec, EngineSpec};
pub use text::StringIndexSpec;
