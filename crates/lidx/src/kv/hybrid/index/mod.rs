//! [`HybridIndex`]: the dynamic stage, the frozen stage, the static stage, the log and the
//! background merge put together. See the module docs of [`super`] for the design.
//!
//! One file per part: [`state`] (the index's state), [`open`] (create, reopen, recovery),
//! [`write`] (a write's path, freezing, merges), [`read`] (lookups, scans, sizes and counters),
//! [`cursor`] (the scans' cursors over each stage).

mod cursor;
mod open;
mod read;
mod state;
mod write;

pub use state::HybridIndex;
