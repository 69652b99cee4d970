//! Model-based check of the `lsm` store engine (levels two runs apart, two runs at level 0,
//! so a few writes flush and compact; leveled for inputs of even length, tiered with two runs
//! a level for odd ones): random operation sequences through the fault-injecting device
//! against a `BTreeMap` (see [`super::store_ops`]).

use lidx::kv::{Engine, LsmSpec};

/// Runs the operations `data` decodes to on a new `lsm` store.
pub fn check(data: &[u8]) {
    let spec = LsmSpec {
        ratio: 2,
        l0: 2,
        bits: 10,
        runs: 1 + data.len() % 2,
    };
    super::store_ops::run(Engine::Lsm(spec), data);
}
