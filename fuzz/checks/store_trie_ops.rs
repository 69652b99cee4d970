//! Model-based check of the `log:trie:<map>` store engine (the `log` engine over byte keys):
//! random operation sequences against a `BTreeMap` (see [`super::store_ops`]), over a B+-tree
//! of tiny nodes, so that the trie's layers grow into maps and split within a few writes.

use lidx::kv::Engine;

/// Runs the operations `data` decodes to on a new `log:trie:btree` store.
pub fn check(data: &[u8]) {
    let engine = Engine::parse("log:trie:btree:leaf=4:inner=4").expect("a log engine's name");
    super::store_ops::run(engine, data);
}
