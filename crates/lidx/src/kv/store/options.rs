//! The store's options: what is fixed when a store is created ([`CreateOptions`], recorded in
//! its `STORE` file) and what each open chooses ([`StoreOptions`]), and the size limits.

use crate::catalog::EngineSpec;
use crate::io::DEFAULT_BLOCK_SIZE;
use crate::kv::wal::{FsyncPolicy, WalRecovery};
use crate::mem::string_index::StringIndexParams;
use crate::mem::MapSpec;

/// Shortest key a store accepts, in bytes.
pub const MIN_KEY_BYTES: usize = 1;
/// Longest key a store accepts, in bytes (4 KiB: a key longer than a block spans blocks).
pub const MAX_KEY_BYTES: usize = 4096;
/// Largest value a store accepts, in bytes (16 MiB).
pub const MAX_VALUE_BYTES: usize = 16 << 20;
/// Smallest [`StoreOptions::log_space_ratio`] an open accepts: nearer 1, the collector would
/// rewrite most of the log to free a little of it (it leaves segments more than 90% live
/// alone, so it cannot go below about 1.11).
pub const MIN_LOG_SPACE_RATIO: f64 = 1.2;
/// Smallest [`StoreOptions::log_segment_bytes`] an open accepts (4 KiB: small segments are
/// for tests; a store makes at most 8 Mi segments in its life, 32 GiB of log at this size).
pub const MIN_LOG_SEGMENT_BYTES: u64 = 4 << 10;
/// Largest [`StoreOptions::log_segment_bytes`] an open accepts (1 GiB).
pub const MAX_LOG_SEGMENT_BYTES: u64 = 1 << 30;

/// Smallest [`StoreOptions::memory_budget`] an open accepts, in bytes (one block).
pub const MIN_MEMORY_BUDGET: usize = 4096;
/// Largest [`StoreOptions::memory_budget`] an open accepts, in bytes (256 GiB: the hybrid
/// engine's dynamic stage addresses its entries with 5-byte offsets).
pub const MAX_MEMORY_BUDGET: usize = 1 << 38;

/// The engine behind a store's one API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// Paper 002 §9's hybrid index over byte keys: a dynamic stage in memory, a static byte
    /// table located by a learned model on disk, folded together by merges.
    #[default]
    Hybrid,
    /// A disk B+-tree over byte keys with every inner node in memory, made durable by the
    /// same log with checkpoints (`crate::disk::byte_btree`): the baseline the hybrid is
    /// measured against, at the same durability.
    BTree,
    /// Paper 001 §III's setting (Viper): every record appended to a log on disk, an updatable
    /// in-memory map chosen by name ([`MapSpec`]) from each key to its record's place. Keys
    /// are exactly 8 bytes (a `u64` big-endian) for `log:<map>`, any length for
    /// `log:trie:<map>` ([`LogSpec`]); see `log/engine.rs` in this module.
    Log(LogSpec),
    /// A log-structured merge tree whose sorted runs are learned byte tables with key
    /// filters ([`LsmSpec`]; see `lsm/mod.rs` in this module): memory bounded by the budget,
    /// data on disk.
    Lsm(LsmSpec),
}

/// An `lsm` store's shape: `lsm[:ratio=10][:l0=4][:bits=10][:runs=1][:vmin=0]` ([`EngineSpec::Lsm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LsmSpec {
    /// Size ratio between adjacent levels (2 to 64).
    pub ratio: usize,
    /// Runs level 0 collects before they are merged into level 1 (1 to 64).
    pub l0: usize,
    /// Bits of key filter per record (0: none, up to 64).
    pub bits: usize,
    /// Runs each level below 0 holds (1 to 64): 1 is leveled, more is tiered.
    pub runs: usize,
    /// Values of at least this many bytes go to the value log (0: none do; up to 16 MiB);
    /// its segments are [`StoreOptions::log_segment_bytes`] long.
    pub vmin: usize,
}

impl Default for LsmSpec {
    fn default() -> Self {
        match EngineSpec::from_parts("lsm", &[]) {
            Some(EngineSpec::Lsm {
                ratio,
                l0,
                bits,
                runs,
                vmin,
            }) => LsmSpec {
                ratio,
                l0,
                bits,
                runs,
                vmin,
            },
            _ => unreachable!("the catalog has lsm"),
        }
    }
}

impl LsmSpec {
    /// The spec's canonical spelling, `lsm:ratio=10:l0=4:bits=10`, then `:runs=K` when tiered
    /// and `:vmin=N` when values go to a value log: what a `STORE` file records. A leveled
    /// store without a value log has the label builds before `runs` and `vmin` existed wrote
    /// and read, so they still open it; one with a value log they refuse as an engine they do
    /// not know, rather than read its references as values.
    pub fn label(self) -> String {
        let label = EngineSpec::from(self).label();
        let parts: Vec<&str> = label
            .split(':')
            .filter(|p| *p != "runs=1" && *p != "vmin=0")
            .collect();
        parts.join(":")
    }

    /// True when levels below 0 hold more than one run.
    pub fn tiered(self) -> bool {
        self.runs > 1
    }

    /// The spec `spelling` names (`lsm` with any of its parameters), if it is one.
    pub fn parse(spelling: &str) -> Option<LsmSpec> {
        match EngineSpec::parse_item(spelling)? {
            EngineSpec::Lsm {
                ratio,
                l0,
                bits,
                runs,
                vmin,
            } => Some(LsmSpec {
                ratio,
                l0,
                bits,
                runs,
                vmin,
            }),
            _ => None,
        }
    }
}

impl From<LsmSpec> for EngineSpec {
    fn from(lsm: LsmSpec) -> EngineSpec {
        EngineSpec::Lsm {
            ratio: lsm.ratio,
            l0: lsm.l0,
            bits: lsm.bits,
            runs: lsm.runs,
            vmin: lsm.vmin,
        }
    }
}

/// What keys a `log` store takes, and so what its map is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKeys {
    /// Exactly 8 bytes, a `u64` big-endian (paper 001's keys): the map is the [`MapSpec`]'s.
    U64,
    /// Any length the store takes: the map is a [`crate::mem::TrieMap`] of [`MapSpec`] maps
    /// over 8-byte slices of the key.
    Bytes,
}

/// A `log` store's index: its keys and its map, `log:<map>` or `log:trie:<map>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogSpec {
    /// The map from keys (or, for byte keys, from each 8-byte slice of them) to places.
    pub map: MapSpec,
    /// What keys the store takes.
    pub keys: LogKeys,
}

impl LogSpec {
    /// The map's label, `trie:`-prefixed for byte keys: what follows `log:` in an engine's
    /// name and what a `STORE` file records.
    pub fn label(self) -> String {
        match self.keys {
            LogKeys::U64 => self.map.label(),
            LogKeys::Bytes => format!("trie:{}", self.map.label()),
        }
    }

    /// The spec [`LogSpec::label`] wrote, if it names a map this build has (`trie:hash` is
    /// none: the trie's layers must be ordered).
    pub fn parse(spec: &str) -> Option<LogSpec> {
        let (keys, map) = match spec.strip_prefix("trie:") {
            Some(map) => (LogKeys::Bytes, map),
            None => (LogKeys::U64, spec),
        };
        MapSpec::parse(map)
            .ok()
            // The trie scans its layers in order, which the hash map cannot do but by a pass.
            .filter(|map| !(keys == LogKeys::Bytes && matches!(map, MapSpec::Hash {})))
            .map(|map| LogSpec { map, keys })
    }
}

impl Engine {
    /// The engine's name on the command line and in reports: `hybrid`, `btree` or `log`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Hybrid => EngineSpec::Hybrid {},
            Engine::BTree => EngineSpec::BTree {},
            Engine::Log(_) => EngineSpec::Log {},
            Engine::Lsm(lsm) => EngineSpec::from(lsm),
        }
        .name()
    }

    /// The engine with its parameters as [`Engine::parse`] reads it back: `hybrid`, `btree`,
    /// `log:alex:...` (the map's canonical label).
    pub fn label(self) -> String {
        match self {
            Engine::Log(log) => format!("log:{}", log.label()),
            Engine::Lsm(lsm) => lsm.label(),
            other => other.name().to_string(),
        }
    }

    /// The engine named `name` (`hybrid`, `btree`, `lsm[:param=value]...`,
    /// `log:<map>[:param=value]...` or `log:trie:<map>...`), if any.
    pub fn parse(name: &str) -> Option<Engine> {
        let (engine, map) = match name.split_once(':') {
            Some((engine, map)) => (engine, Some(map)),
            None => (name, None),
        };
        match (EngineSpec::from_parts(engine, &[])?, map) {
            (EngineSpec::Hybrid {}, None) => Some(Engine::Hybrid),
            (EngineSpec::BTree {}, None) => Some(Engine::BTree),
            (EngineSpec::Log {}, Some(map)) => LogSpec::parse(map).map(Engine::Log),
            (EngineSpec::Lsm { .. }, _) => LsmSpec::parse(name).map(Engine::Lsm),
            _ => None,
        }
    }

    /// Every accepted form, for messages: `hybrid, btree, log:<map>` with the maps' forms
    /// ([`EngineSpec::accepted_forms`]).
    pub fn forms() -> String {
        EngineSpec::accepted_forms()
    }

    pub(crate) fn code(self) -> u32 {
        match self {
            Engine::Hybrid => 1,
            Engine::BTree => 2,
            Engine::Log(_) => 3,
            Engine::Lsm(_) => 4,
        }
    }
}

/// How keys are shown and parsed by tools: a store holds byte strings either way, and a typed
/// key is stored in an order-preserving form ([`crate::kv::OrderedKey`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyFormat {
    /// Any byte strings (text shows as text, other bytes escaped).
    #[default]
    Bytes,
    /// `u64` keys as 8 big-endian bytes, shown as decimal numbers.
    U64,
}

impl KeyFormat {
    /// The format's name: `bytes` or `u64`.
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Bytes => "bytes",
            KeyFormat::U64 => "u64",
        }
    }

    pub(crate) fn code(self) -> u32 {
        match self {
            KeyFormat::Bytes => 0,
            KeyFormat::U64 => 1,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<KeyFormat> {
        match code {
            0 => Some(KeyFormat::Bytes),
            1 => Some(KeyFormat::U64),
            _ => None,
        }
    }
}

/// What is fixed when a store is created and recorded in its `STORE` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreateOptions {
    /// The engine (default hybrid).
    pub engine: Engine,
    /// Block size of the table files (default 4096, a multiple of 4096 up to 65536).
    pub block_size: usize,
    /// The static stage's model over separators.
    pub model: StringIndexParams,
    /// How tools show keys.
    pub key_format: KeyFormat,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            engine: Engine::Hybrid,
            block_size: DEFAULT_BLOCK_SIZE,
            model: StringIndexParams::default(),
            key_format: KeyFormat::Bytes,
        }
    }
}

/// Entries the `hybrid` engine's dynamic stage may always hold under
/// [`StoreOptions::merge_ratio`], however small the table: without a floor an empty table
/// would merge on every write.
pub(super) const MIN_RATIO_ENTRIES: usize = 1024;

/// What each open of a store chooses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoreOptions {
    /// When a write is acknowledged (default: after `fdatasync`, nothing acknowledged is lost).
    /// Under [`FsyncPolicy::Never`] the `lsm`, `hybrid` and `btree` engines also seal log
    /// segments without an fsync (their tables hold the records before a segment is removed;
    /// see the log's module docs, "Sealing unsynced"): a power loss may then lose a suffix of
    /// the acknowledged writes, never a write from the middle.
    pub fsync: FsyncPolicy,
    /// Memory the store may hold besides its cache (default 64 MiB, from
    /// [`MIN_MEMORY_BUDGET`] to [`MAX_MEMORY_BUDGET`]). `hybrid`: the dynamic
    /// stage and the table's model; the stage is frozen and merged when they reach it (a
    /// budget below the model's own size merges after every write). `btree`: its inner nodes
    /// are what they are (about 12 bytes per leaf), and the budget is the log it writes
    /// between checkpoints, so that both engines replay about as much after a crash.
    pub memory_budget: usize,
    /// With `Some(r)`, a merge also starts when the dynamic stage holds `1 / r` of the static
    /// stage's records (paper 002 §9.1's ratio trigger, 178 there), and at least
    /// `MIN_RATIO_ENTRIES`. Off by default: every merge rewrites the
    /// table, so a ratio trigger makes a bulk load quadratic (577 merges and 154 s for 10M
    /// `u64` keys with `r` = 178, against the memory budget alone; see `docs/results/store.md`).
    pub merge_ratio: Option<f64>,
    /// `log` engine: with `Some(r)` (default 1.5), the collector keeps the log's bytes within
    /// about `r` times the bytes of its live records, rewriting the live records of its
    /// emptiest segments at the head and removing them (at least [`MIN_LOG_SPACE_RATIO`]);
    /// `None` keeps every record, as paper 001 §III's runs do.
    pub log_space_ratio: Option<f64>,
    /// `log` engine: a segment of the log is closed before a record would take it past this
    /// many bytes (default 64 MiB, from [`MIN_LOG_SEGMENT_BYTES`] to
    /// [`MAX_LOG_SEGMENT_BYTES`]): the unit the collector frees. A record larger than it
    /// gets a segment of its own. `lsm` engine with a value log ([`LsmSpec::vmin`]): the
    /// same for its segments, but a value that goes there and is larger than a segment is
    /// refused ([`crate::Error::InvalidParameter`]) before it is logged.
    pub log_segment_bytes: u64,
    /// Bytes of page cache over the table files (default 8 MiB; 0 for none).
    pub cache_bytes: usize,
    /// Bytes of a cache of records, key to value, in front of the engine (default 0: none; at
    /// most [`MAX_MEMORY_BUDGET`]). Under a skewed read load it holds the hot records alone,
    /// where a block cache holds each with the cold ones beside it; its design and
    /// coherence with writes are in `kv/store/row_cache.rs`. Values over 16 KiB are not
    /// cached. Counted in [`super::StoreStats::memory_bytes`].
    pub row_cache_bytes: usize,
    /// Read table files with `O_DIRECT`, so the page cache above is all the caching there is
    /// (for benchmarks at a chosen memory); by default the OS caches them.
    pub direct_io: bool,
    /// Open without writing: a shared lock, no log replay into a writable log, no merges.
    pub read_only: bool,
    /// What opening does with a damaged log (default: cut only an incomplete last record; see
    /// [`WalRecovery`]). What it dropped is [`crate::kv::Store::recovery`].
    pub recovery: WalRecovery,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            fsync: FsyncPolicy::Always,
            memory_budget: 64 << 20,
            merge_ratio: None,
            log_space_ratio: Some(1.5),
            log_segment_bytes: 64 << 20,
            cache_bytes: 8 << 20,
            row_cache_bytes: 0,
            direct_io: false,
            read_only: false,
            recovery: WalRecovery::TornTail,
        }
    }
}
