//! Model-based check of the `lsm` store engine (levels two runs apart, two runs at level 0,
//! so a few writes flush and compact; leveled, or tiered with two runs a level when bit 4 of
//! the setup byte, the first, is set; values of 16 bytes or more in the value log, whose
//! segments are the setup's 4-32 KiB log segments, when bit 5 is: [`super::store_ops`] reads
//! bits 0-3): random operation sequences through the fault-injecting device against a
//! `BTreeMap`.

use lidx::kv::{Engine, LsmSpec};

/// Runs the operations `data` decodes to on a new `lsm` store.
pub fn check(data: &[u8]) {
    let bit = |mask: u8| data.first().is_some_and(|b| b & mask != 0);
    let spec = LsmSpec {
        ratio: 2,
        l0: 2,
        bits: 10,
        runs: 1 + usize::from(bit(0x10)),
        vmin: if bit(0x20) { 16 } else { 0 },
    };
    super::store_ops::run(Engine::Lsm(spec), data);
}
