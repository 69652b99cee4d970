//! The arguments of `lidx bench` ([`Args`]) and the default index lists of its on-disk modes:
//! what `bench` (the dispatch and the in-memory modes), `bench_disk` and `bench_updatable`
//! all read, kept apart from the three so that none imports another that imports it.

use std::path::PathBuf;

use clap::Parser;
use lidx::catalog::{ByteIndexSpec, DiskMapSpec, Role};
use lidx_bench::disk_registry::disk_index_forms;
use lidx_bench::registry::IndexSpec;
use lidx_bench::string_runner::StringIndexSpec;

/// `--index`'s long help, listing every form the catalog (`lidx::catalog`) accepts, so it
/// cannot drift from it.
fn index_help() -> String {
    format!(
        "Comma-separated indexes, each `name[:param=value]...`, e.g. \
         `pgm:eps=16,rs:err=8,sorted`; numbers accept K/M/G and Ki/Mi/Gi suffixes.\n\n\
         In memory: {}. Default: {}.\n\n\
         With --on-disk: {}. Default: {}.\n\n\
         With --on-disk and a write workload or --updatable (paper 003's updatable indexes): \
         {}. Default: {}.\n\n\
         With --on-disk on text or str16 keys: {}. Default: \
         {}.\n\n\
         On text keys: {}. Default: {}.\n\n\
         Zero is meaningful where it is accepted: `eps=0` and `err=0` ask for an exact model \
         (every window one position wide: as many segments as that takes), `bits=0` for a \
         radix table of one slot (the spline search does all the work).",
        IndexSpec::forms().join(", "),
        Role::StaticIndex.default_list(),
        disk_index_forms(),
        Role::DiskIndex.default_list(),
        DiskMapSpec::accepted_forms(),
        Role::DiskMap.default_list(),
        ByteIndexSpec::accepted_forms(),
        Role::ByteDiskIndex.default_list(),
        StringIndexSpec::accepted_forms(),
        Role::StringIndex.default_list(),
    )
}

/// Arguments of `lidx bench`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>` (e.g. gen:lognormal:10M, gen:uniform-dense:1M, gen:words:1M),
    /// the path of an SOSD u64 file, `sosd-u32:`/`sosd-i64:`/`sosd-f64:<path>` (run on the keys'
    /// order-preserving u64 image), `text:<path>` / `<path>.txt` (one key a line) or
    /// `str16:<path>` (both run the string indexes; with `--on-disk`, the byte-key ones).
    #[arg(long, default_value = "gen:lognormal:10M")]
    pub dataset: String,

    /// Comma-separated indexes, each `name[:param=value]...`, e.g. `pgm:eps=16,rs:err=8,sorted`.
    #[arg(long, long_help = index_help())]
    pub index: Option<String>,

    /// `lookup` (uniform over existing keys), `lookup:uniform` or `lookup:zipf` (YCSB's
    /// scrambled zipfian, theta 0.99). With --on-disk also `scan` (paper 003: the start key's
    /// lower bound and the next 99 items) or `scan:<items>`. In memory also `insert`: bulk load
    /// a random half of the distinct keys, time inserting the other half in random order
    /// (updatable maps only: the map names in --index's list, `btree` and `art`).
    ///
    /// With --on-disk also paper 003's write workloads on its updatable indexes: `write-only`,
    /// `read-heavy` (18 lookups and 2 inserts of every 20 operations), `write-heavy` (2 and 18)
    /// and `balanced` (10 and 10), on an index bulk loaded with --bulk-load of the keys,
    /// inserting keys held out of the load. Each run rebuilds every index (a bulk load of
    /// half the dataset: seconds for 10M keys) and checks its whole contents at the end (a
    /// scan of every key).
    #[arg(long, default_value = "lookup")]
    pub workload: String,

    /// Lookups per timed run (accepts 1M, 500K, ...). Costs 16 bytes of memory each.
    /// Default 1M, or 100K with --on-disk (O_DIRECT lookups take 0.1-1 ms each). With a write
    /// workload, operations of every kind; the inserts must fit in the held-out keys.
    #[arg(long)]
    pub queries: Option<String>,

    /// Timed runs over all queries; the report gives the median run's mean ("mean ns
    /// (throughput)": lookups back to back, whose memory misses the CPU overlaps).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,

    /// Time every N-th lookup individually for the p50/p99/p99.9 latencies ("p50 ns
    /// (latency)": one lookup alone, often slower than the back-to-back mean).
    #[arg(long, default_value_t = 16)]
    pub sample_every: usize,

    /// Seed of the generated dataset and of the workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Keep every allocation on ordinary 4 KiB pages. By default large allocations (the keys,
    /// index nodes and models) are advised as transparent huge pages on Linux, so lookups
    /// measure the index rather than TLB misses.
    #[arg(long)]
    pub small_pages: bool,

    /// Also write the records here: `.jsonl`/`.json` for JSON lines, `.csv` for CSV.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Also write the lookup keys of the timed loops here, in the order they run, as an SOSD
    /// file (a u64 count, then the keys, little-endian): the queries to give an outside
    /// harness (a C++ reference implementation) so it times the very same lookups. With
    /// `--workload insert`, the keys inserted, in insert order (the dataset's other distinct
    /// keys are the bulk-loaded half). In-memory lookup and insert runs only.
    #[arg(long)]
    pub queries_out: Option<PathBuf>,

    /// Replace an existing `--out` or `--queries-out` file (without it an existing file is
    /// refused).
    #[arg(long)]
    pub force: bool,

    /// Benchmark on-disk indexes: build them (or reuse the files `lidx build` wrote in the
    /// device's directory), then run the workload, counting blocks per operation.
    #[arg(long)]
    pub on_disk: bool,

    /// With --on-disk: `file:<dir>` (O_DIRECT), `file-buffered:<dir>`, or `sim:<profile>`
    /// (hdd, sata-ssd, nvme, optane, ram, or `lat=<dur>,bw=<bytes/s>,p=<n>`), which charges
    /// modeled time per request. A simulated device keeps its blocks in memory, loaded from
    /// --dir when given.
    #[arg(long, default_value = "sim:nvme", requires = "on_disk")]
    pub device: String,

    /// With --on-disk and a simulated device: the directory of the index files.
    #[arg(long, requires = "on_disk")]
    pub dir: Option<PathBuf>,

    /// With --on-disk: LRU page cache in blocks per index file (0 = none, every read goes to
    /// the device; paper 003 Figure 13 varies it). Costs a block of memory per block.
    #[arg(long, default_value_t = 0, requires = "on_disk")]
    pub cache_blocks: usize,

    /// With --on-disk: block size in bytes (a power of two; at least 4096 for files; paper 003
    /// Figure 11 compares 4096, 8192 and 16384).
    #[arg(long, default_value_t = 4096, requires = "on_disk")]
    pub block_size: usize,

    /// With --on-disk: the B+-tree's memory-resident levels, comma-separated to compare:
    /// `inner` (all inner nodes, paper 003's hybrid case), `none`, or a number of top levels.
    /// With the updatable runner it applies to every index (Figure 9): `inner` keeps a learned
    /// index's inner part in memory, `none` on disk; each choice is a run of its own.
    #[arg(long, default_value = "inner", requires = "on_disk")]
    pub resident: String,

    /// With --on-disk: the learned indexes' leaf fetching (paper 002 G1), comma-separated to
    /// compare: `all-at-once` (one request per window) or `one-by-one` (a request per block).
    #[arg(long, default_value = "all-at-once", requires = "on_disk")]
    pub fetch: String,

    /// With --on-disk: threads splitting the operations of each run (at least 1; the
    /// updatable runner takes 1).
    #[arg(
        long,
        default_value_t = 1,
        requires = "on_disk",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    pub threads: usize,

    /// With --on-disk: bytes of payload per key when an index is built (reused files keep
    /// theirs).
    #[arg(long, default_value_t = lidx::disk::DEFAULT_PAYLOAD_SIZE, requires = "on_disk")]
    pub payload_size: usize,

    /// With --on-disk: rebuild index files even when the directory already has them.
    #[arg(long, requires = "on_disk")]
    pub rebuild: bool,

    /// With --on-disk: run `lookup` and `scan` with the updatable runner too (paper 003's six
    /// workloads in one table): each run bulk loads the index with every key, then runs the
    /// workload on one thread. Implied by a write workload or an updatable-only index.
    #[arg(long, requires = "on_disk")]
    pub updatable: bool,

    /// With a write workload: percent of the distinct keys (shuffled by --seed) bulk loaded
    /// before the run; the inserts take the rest. Default 50: paper 003 bulk-loads 10M keys
    /// and inserts up to 10M more.
    #[arg(long, default_value = "50", requires = "on_disk")]
    pub bulk_load: String,
}
