//! What the store suites (conformance, faults, concurrency) share about the `lsm` engine: its
//! shapes small enough that a case's few writes flush, compact and reach several levels, and
//! the smallest budget it takes.

use lidx::kv::{Engine, LsmSpec, StoreOptions};

/// Levels two runs apart and two runs at level 0: leveled, then tiered (two runs a level,
/// merged alone into the next).
pub const SMALL_LSM: [Engine; 2] = [small_lsm(1), small_lsm(2)];

const fn small_lsm(runs: usize) -> Engine {
    Engine::Lsm(LsmSpec {
        ratio: 2,
        l0: 2,
        bits: 10,
        runs,
    })
}

/// `options` for `engine`: the `lsm` engine's smallest budget is two memtables of 4 KiB.
#[allow(dead_code)] // not every suite sizes its budgets by engine
pub fn options_for(engine: Engine, options: StoreOptions) -> StoreOptions {
    match engine {
        Engine::Lsm(_) => StoreOptions {
            memory_budget: 8192,
            ..options
        },
        _ => options,
    }
}
