//! What the store suites (conformance, faults, concurrency) share about the `lsm` engine: its
//! shapes small enough that a case's few writes flush, compact and reach several levels, and
//! the smallest budget it takes.

use lidx::kv::{Engine, LsmSpec, StoreOptions};

/// The engines the conformance and fault suites run: `hybrid`, `btree` and the small `lsm`
/// shapes.
#[allow(dead_code)] // not every suite runs every engine
pub const ENGINES: [Engine; 5] = [
    Engine::Hybrid,
    Engine::BTree,
    SMALL_LSM[0],
    SMALL_LSM[1],
    SMALL_LSM[2],
];

/// Levels two runs apart and two runs at level 0: leveled, then tiered (two runs a level,
/// merged alone into the next), then leveled with every value of 8 bytes or more in the value
/// log.
pub const SMALL_LSM: [Engine; 3] = [small_lsm(1, 0), small_lsm(2, 0), small_lsm(1, 8)];

const fn small_lsm(runs: usize, vmin: usize) -> Engine {
    Engine::Lsm(LsmSpec {
        ratio: 2,
        l0: 2,
        bits: 10,
        runs,
        vmin,
    })
}

/// `options` for `engine`: the `lsm` engine's smallest budget is two memtables of 4 KiB,
/// and value log segments of 2 MiB take the suites' largest values (1 MiB) while small ones
/// still fill several.
#[allow(dead_code)] // not every suite sizes its budgets by engine
pub fn options_for(engine: Engine, options: StoreOptions) -> StoreOptions {
    match engine {
        Engine::Lsm(spec) => StoreOptions {
            memory_budget: 8192,
            log_segment_bytes: if spec.vmin > 0 {
                2 << 20
            } else {
                options.log_segment_bytes
            },
            ..options
        },
        _ => options,
    }
}
