//! The store's crash-test harness (issue 13): run a `Store` under kills, then check what
//! survives. `lidx kv torture` is its command line; this module is the harness itself.
//!
//! Each cycle runs a writer child (the calling program again, with the arguments its caller
//! gives [`run`] for the cycle; the child calls [`child`]) on the store in the plan's
//! directory: [`TortureSpec::writers`] threads put, delete and batch-write (2 to 8 keys) byte
//! keys of 6 B to 3 KiB and values of 8 B to 200 KiB under a small memory budget, so merges
//! (`hybrid`) or checkpoints (`btree`) run all the time. The child prints each operation before
//! it starts (`begin`) and once it is acknowledged (`ack`); the parent kills it with `SIGKILL`
//! after a random delay, reopens the store, and checks that
//! - every acknowledged write is there with its exact value (no write lost),
//! - nothing is there that no operation wrote (no phantom), and an operation in flight at the
//!   kill is there whole or not at all (a batch never half-applied),
//! - a full scan shows exactly what lookups show,
//! - only the live table (or the last checkpoint's image) survives an interrupted merge, and
//!   `Store::check` finds nothing damaged.
//!
//! With [`TortureSpec::power_loss`] the harness also simulates losing what the disk had not
//! made durable: the child writes with `fsync always` and one writer (so the log's order is
//! the acknowledgement order), and after the kill the parent loses what was written after the
//! last acknowledged record, as a file system loses it: the log's last segment ends at a
//! random point after that record, or keeps its size with the pages from a random page
//! boundary on zeroed (a file system that grew the file before its data reached the disk).
//! Every acknowledged write must still be there. What it does not simulate: the loss of
//! block-file writes that were not synced (merges sync a table before the manifest names it,
//! so a lost one is a leftover the open removes).
//!
//! Any violation ends the run with a [`TortureError`] naming the cycle, the key and what was
//! expected; the store is left as it was for a look. So does a run that could pass without
//! testing anything (issue 30, class 8): a panic anywhere (a child's panic hook reports it to
//! the parent and aborts; the parent's own is caught) fails the run with the panic's message,
//! and so does a run in which no write was acknowledged; parameters outside their useful range
//! (more writers than [`MAX_WRITERS`], which would leave writers without keys; a longest delay
//! under [`MIN_MAX_DELAY_MS`], which kills children before they write) are refused by
//! [`TorturePlan::new`] before anything is created. A child dies with its parent: it asks the
//! kernel for `SIGKILL` when the parent dies (`PR_SET_PDEATHSIG`), and its writers also stop
//! once the parent is gone, so a killed run never leaves a child holding the store's lock.
//!
//! Why here and not in the command line: the harness is benchmark-side code (it drives a store
//! and judges it, as the runners do) and the CLI only parses and dispatches; the `lidx` library
//! stays free of process spawning and of the children's protocol.
//!
//! One file per part: `writes` (what the children write: [`TortureSpec`], the store options,
//! keys and values), `parent` (the plan, the cycles, the checks after each kill, [`Summary`]),
//! `child` (the writer child), `power_loss` (cutting the log's unsynced end), `error`
//! ([`TortureError`]).

mod child;
mod error;
mod parent;
mod power_loss;
mod writes;

pub use child::child;
pub use error::TortureError;
pub use parent::{run, Summary, TorturePlan, MIN_MAX_DELAY_MS};
pub use writes::{TortureSpec, KEYS, MAX_WRITERS};
