//! What the writer children write, shared by the parent (which checks it) and the child (which
//! writes it): [`TortureSpec`], the store options of each cycle, the keys and the values.

use std::path::PathBuf;
use std::time::Duration;

use lidx::kv::{Engine, LogKeys, LogSpec, StoreOptions};
use lidx::kv::{FsyncPolicy, WalRecovery};

/// What every cycle's writer child does, the same for the parent and the child.
#[derive(Debug, Clone)]
pub struct TortureSpec {
    /// The store's directory.
    pub db: PathBuf,
    /// The store's engine.
    pub engine: Engine,
    /// Seed of the delays and of the children's operations.
    pub seed: u64,
    /// Writer threads of a child, 1 to [`MAX_WRITERS`] (1 with `power_loss`):
    /// [`TortureSpec::default_writers`] unless chosen.
    pub writers: u64,
    /// Also cut the unsynced end of the log after each kill (see the module docs).
    pub power_loss: bool,
    /// The harness's self-test: the children's first writer panics after this many
    /// acknowledged writes, which must fail the run.
    pub inject_panic_after: Option<u64>,
}

impl TortureSpec {
    /// The writers of a child when none are chosen: 2, or 1 with `power_loss`.
    pub fn default_writers(power_loss: bool) -> u64 {
        if power_loss {
            1
        } else {
            2
        }
    }

    /// The store options of `cycle` (cycle 0 creates the store): a small memory budget and
    /// small log segments, so merges, checkpoints or collections run all the time; `fsync always` with power loss or every third
    /// cycle, never otherwise.
    pub(super) fn options(&self, cycle: u64) -> StoreOptions {
        StoreOptions {
            fsync: if self.power_loss || cycle.is_multiple_of(3) {
                FsyncPolicy::Always
            } else {
                FsyncPolicy::Never
            },
            memory_budget: 256 << 10,
            cache_bytes: 1 << 20,
            // A `log` store's collector and checkpoints run all the time too.
            log_segment_bytes: 64 << 10,
            recovery: WalRecovery::TornTail,
            ..StoreOptions::default()
        }
    }
}

/// Most writer threads a child runs: each owns `KEYS / writers` keys, and a batch writes up
/// to 8 of them.
pub const MAX_WRITERS: u64 = 64;

/// Keys the children write.
pub const KEYS: u64 = 2_000;

/// A child that outlives this was not killed (its parent died): it stops.
pub(super) const CHILD_LIFETIME: Duration = Duration::from_secs(120);

/// Key `k`'s bytes: a name, then padding that makes some keys long (up to 3 KiB); for a
/// `log:<map>` store, whose keys are 8 bytes, `k` big-endian.
pub(super) fn key_bytes(engine: Engine, k: u64) -> Vec<u8> {
    if let Engine::Log(LogSpec {
        keys: LogKeys::U64, ..
    }) = engine
    {
        return k.to_be_bytes().to_vec();
    }
    let mut key = format!("key{k:05}").into_bytes();
    let pad = if k.is_multiple_of(97) {
        3000
    } else {
        (k % 7 * 40) as usize
    };
    key.resize(key.len() + pad, b'.');
    key
}

/// The value written with `version`: its 8 bytes repeated, 8 B to 200 KiB.
pub(super) fn value_bytes(version: u64) -> Vec<u8> {
    let len = if version.is_multiple_of(61) {
        200 << 10
    } else {
        8 * (1 + (version % 50) as usize)
    };
    version.to_le_bytes().repeat(len / 8)
}

/// The text of a panic's payload.
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}
