//! ALEX, an updatable adaptive learned index (Ding et al., SIGMOD 2020), as an owned ordered
//! map: [`Alex`].
//!
//! Paper 001 ("Cutting learned index into pieces", §II-A) takes ALEX apart into its insertion
//! strategy, "Gap" (gapped arrays filled by model-based insertion), its structure, "ATS" (an
//! asymmetric tree whose inner nodes route by model and whose shape a cost model chooses), and
//! its retraining (expand, split sideways or down, driven by the cost model and density); paper
//! 003 §2-3 describes the node layout. The ALEX paper itself is not in our folder; the
//! algorithm follows the reference implementation (`microsoft/ALEX`), read, not copied.
//!
//! One file per concept (this one only declares):
//!
//! * `map`: [`Alex`] itself, its reads and the map traits; `key`: the key types ([`AlexKey`]);
//! * `model`: the linear models, least squares with sampling;
//! * `cost`: the cost model (search iterations, shifts, traversal, model size);
//! * `data_node`: the gapped array with its bitmap, exponential search, inserts with shifts,
//!   removes with contraction, resizing; `layout`: writing a node's slots, at a build and at
//!   every resize;
//! * `inner_node`: routing by model into power-of-two child slots, children owning runs;
//! * `fanout`: the fanout tree that sizes nodes at bulk load;
//! * `build`: the bulk load; `update`: inserts, expansion, retraining and splits, removes;
//!   `widen`: the root's key domain widened for appends;
//!   `retrains`: their counts and times; `iter`: ranges over the chain of data nodes.
//!
//! Where we differ from the reference, and why:
//!
//! * Nodes live in two arenas indexed by `u32` (data nodes and inner nodes); data nodes are
//!   chained left to right for scans. A split reuses the old node's id, so ids never free.
//! * Models subtract a per-node base key in integer arithmetic before going to `f64` (see
//!   `model`), so `u64` keys past 2^53 keep their precision inside a node.
//! * The root's key domain widens to the right only (`widen`), once per fill of a data node
//!   that holds at least 16 keys past the domain and at least half of its keys; the
//!   reference widens both ways after enough keys fall outside. Keys below the domain go to
//!   the leftmost data node, which splits down as it fills: decreasing inserts deepen the
//!   left edge. Increasing inserts into an empty map took 43.6 µs an insert at 3M keys
//!   before the widening (the right edge 1,407 levels deep at 2M), 0.18-0.22 µs after
//!   (depth 2); random order 0.42-0.49 µs, with the same tree as before the widening. Appends
//!   past the span of an inner node below the root still split down: that takes a root slot
//!   holding more keys than a data node can (at the default sizes about 800K keys a slot of
//!   a root at its 2^21 slots), or small nodes (`max_node_bytes` of a few KiB).
//! * A sideways split whose keys all route to one half of the node's slots gives the other
//!   half to an empty node (repeatedly), where the reference splits down: appends then fill
//!   the empty nodes beside it instead of deepening the tree under it. Keys that all route
//!   to one slot still split down.
//! * Splits cut in two (the reference's default "decide between retraining and splitting in
//!   two"), or narrow as above, and never propagate upwards (the reference's default too).
//!   Inner nodes are never merged or shrunk, and data nodes only shrink (as in the
//!   reference).
//! * Lookups do not count themselves (`get` takes `&self` and maps are `Sync`); the measured
//!   cost that triggers retraining counts inserts only. The reference counts both.
//! * Keys: [`AlexKey`] is implemented for `u64`, `u32`, `i64` and `f64`, whose model images are
//!   injective. `Str16` is refused at compile time: the model sees only its first 8 bytes, so
//!   keys sharing them would pile into one predicted slot and defeat the gapped array.
//! * Values must be `Default` (gap slots hold one; see `data_node`).
//!
//! # Measured against the reference
//!
//! 2-core Xeon VM shared with other jobs (noisy: single rounds swing by 2x); keys from `lidx
//! gen` (seed 42); the reference built `g++ -O3 -march=native`, ours in release; C++ then
//! Rust in separate processes, one round under the benchmark lock; transparent huge pages on
//! both sides (`glibc.malloc.hugetlb=1`); the same 2M uniform queries of existing keys
//! (splitmix64), every answer checked; inserts: a random half bulk-loaded, the other half
//! inserted in random order (same permutation both sides), every key checked after.
//!
//! * 10M lognormal, five rounds, ours against the reference in the same round: lookups
//!   1.05, 0.58, 1.07, 0.82, 1.02x its time, median 1.02x (ours 136-187 ns, the reference's
//!   129-236 ns); inserts 0.88, 0.97, 0.99, 1.19, 0.95x its throughput, median 0.97x
//!   (3.0-4.2 M/s); bulk load 1.19-1.85x its speed, median 1.67x (2.7-4.6 s against 4.5-5.5
//!   s). Before this round of work, in the same rounds: lookups median 1.04x (0.61-1.12),
//!   inserts median 0.91x (0.86-1.13): in this session the old code was already near the
//!   targets, so the earlier 1.25-2.0x and 0.49-0.70x were mostly the machine's noise; the
//!   changes here gain a few percent on lookups and about 7% on inserts.
//! * 10M `zipf-gaps`, the one round where the reference ran unhindered: lookups 1.11x
//!   (376 against 339 ns), inserts 0.87x (1.37 against 1.59 M/s), bulk load 1.40x.
//! * 50M lognormal (lookups and bulk load only): two rounds, both under heavy contention
//!   (the reference's bulk load took 64-72 s where the issue measured 19.4 s); ratios from
//!   0.55x to 2.5x, not usable. Not measured cleanly.
//!
//! What the profile says (perf, callgrind on 1M keys):
//!
//! * a lookup's time is its cache misses: more than half of it waits on the key slot at the
//!   prediction, as the reference's does; a tenth went to a data node's header spread over
//!   two lines, now one (see `data_node`). Evaluating models in `f64` without AVX-512 costs
//!   more instructions than the reference's `-march=native` build; the conversions are now
//!   the short ones (`crate::model::linear`).
//! * inserts ran 1.35x the reference's instructions (424M against 315M for 500k inserts), all
//!   of it in data node resizes: 16.6k instructions a resize against 8.5k, from slots we
//!   initialised (keys to `K::MAX`, values to `V::default()`) before placing the entries over
//!   them, and bounds-checked per-key work. A resize now writes each slot once (session 54),
//!   into uninitialised arrays (session 55: 745 -> 654 instructions an insert on 10M lognormal
//!   keys, the reference 532), straight from the old node's bitmap words (session 60: 608),
//!   and with one branch fewer an entry, which the processor mispredicted (see `layout`: the
//!   resizes' time down a third since session 55). Prefetching the value slot and bitmap word
//!   at the prediction hides their misses behind the key's.
//! * the bulk load is faster: it spends its time in the fanout tree's costing (tabulated
//!   logarithms, see `cost`) and faulting pages in.

pub(crate) mod build;
pub(crate) mod cost;
pub(crate) mod data_node;
pub(crate) mod fanout;
pub(crate) mod inner_node;
mod iter;
mod key;
mod layout;
mod map;
pub(crate) mod model;
pub(crate) mod params;
mod retrains;
mod update;
mod widen;

pub use iter::Range;
pub use key::AlexKey;
pub use map::{Alex, AlexStats};
pub use params::AlexParams;
pub use retrains::AlexRetrains;

#[cfg(test)]
mod tests;
