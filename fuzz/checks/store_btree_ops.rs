//! Model-based check of the `btree` store engine: random operation sequences through the
//! fault-injecting device against a `BTreeMap` (see [`super::store_ops`]).

use lidx::kv::Engine;

/// Runs the operations `data` decodes to on a new `btree` store.
pub fn check(data: &[u8]) {
    super::store_ops::run(Engine::BTree, data);
}
