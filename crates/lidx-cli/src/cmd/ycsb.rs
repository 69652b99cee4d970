//! `lidx ycsb`: paper 002 §10's read/write workloads on stores at equal memory, every read
//! checked; with `--curve`, the memory-throughput curve (Fig. 11).
//!
//! `--store` names the stores: the library's store engines through its one API (`btree`,
//! `hybrid`; later engines by their names) and the fixed-key adapters they generalize
//! (`adapter:btree`, `adapter:hybrid`), which measure what the API costs. The dataset's
//! unique keys are split 75/25 (`lidx_bench::ycsb`); each run builds fresh stores from the 75%
//! (untimed), runs the workload (`lidx_bench::kv_runner`) and drains the merges. The first
//! store runs first on every workload: its memory is what `--memory-budget <x>%` is a
//! percentage of, and every row's ratios are to it. `--curve` sweeps the adapters.
//!
//! Peers (`redb`, `fjall`, `lmdb`, `rocksdb` with the cargo feature `rocksdb`; the
//! `lidx-peers` crate) run beside them through the same store shape. Without
//! `--memory-limit` the budget is their cache and write buffer (three quarters and a quarter,
//! `lidx_bench::byte_store::PeerOptions::from_budget`), as it has always been. With
//! `--memory-limit L` every run, heap and page cache, is held to `L` by a memory cgroup, so
//! engines that live on the OS page cache get no more memory than the others, and each peer
//! sizes itself from `L` as its own documentation recommends for the workload (each peer's
//! module in `lidx-peers` cites what it followed); lidx's engines, unless `--memory-budget`
//! says otherwise, get the same share of `L` for their own memory: three quarters of it (five
//! eighths when a workload of the run writes) less their cache
//! (`lidx_bench::byte_store::lidx_budget_from_limit`). Each record says what its
//! store ran with (`config`, also printed under the table). A peer that cannot be built or
//! opened is a `skipped` row, never left out.
//!
//! Each store runs each workload in a child process of its own (`lidx_bench::kv_child`: this
//! command again, with a hidden flag), so a store that the memory cgroup kills, or that
//! crashes, is a `failed` row saying how, and the other stores still run and print. A
//! failure other than the memory cgroup's kill (a crash, a panic, a wrong answer) makes the
//! command exit non-zero after its table and records are out. `--curve` runs in this process.
//!
//! A dataset of any key type runs on the stores through the API: `u64` keys as 8 big-endian
//! bytes, the others (`u32`, `i64`, `f64`, `str16`, text) as their order-preserving bytes, the
//! workload drawn over their ranks (`lidx_bench::store_keys`). The adapters and `log:<map>`
//! (8-byte keys) take `u64` keys only and refuse other types by name (`log:trie:<map>` takes
//! them all).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use lidx::catalog::Role;
use lidx::kv::MIN_MEMORY_BUDGET;
use lidx_bench::byte_store::lidx_budget_from_limit;
use lidx_bench::keyfile::Keys;
use lidx_bench::kv_child::{report_panics, ChildReport, ChildRunner};
use lidx_bench::kv_runner::{self, KvBench, KvBenchConfig, KvSetup, RunAt, StorageBase};
use lidx_bench::kv_store::{parse_fsync, store_forms, DynamicKind, MemoryBudget, StoreSpec};
use lidx_bench::memory_limit::MemoryCgroup;
use lidx_bench::records::KvRecord;
use lidx_bench::store_keys::{RankedKeys, StoreKeys};
use lidx_bench::ycsb::YcsbWorkload;
use lidx_bench::{plot, BenchError};

use super::args::{check_out_inputs, parse_fetches, parse_ops, stage_out};
use super::disk::{unique_keys, DeviceChoice};
use super::output::Batch;
use super::{load_any_dataset, Bars};

/// `--store`'s long help: the engines as the catalog lists them and the bench's adapters
/// ([`store_forms`]), then the peers.
fn store_help() -> String {
    format!(
        "The stores, comma-separated; the first is the reference. The store's engines run \
         through its API (`lidx::kv::Store`) and the adapters run the structures they \
         generalize: {}. Peers, through the same store shape: `redb`, `fjall`, `lmdb` (heed), \
         `rocksdb` (only in a build with `--features rocksdb`; otherwise reported as skipped).",
        store_forms()
    )
}

/// Arguments of `lidx ycsb`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `read-only`, `write-only` (inserts) or `balanced` (50% inserts, 50% reads) (paper
    /// 002), or YCSB's core workloads (paper 001 §III): `a` (50% reads, 50% updates), `b`
    /// (95/5), `c` (reads), `d` (95% reads of the latest keys, 5% inserts), `e` (95% scans of
    /// 1-100 items, 5% inserts; stores through the API only), `f` (50% reads, 50%
    /// read-modify-writes), zipfian keys (`a:uniform` for uniform ones); comma-separated.
    /// Paper 001 uses 200-byte values: `--payload-size 200`.
    #[arg(long, default_value = "read-only,balanced,write-only")]
    pub workload: String,

    /// `gen:<generator>:<count>` (e.g. gen:lognormal:10M, gen:gre:l=1000,g=10:1M, gen:words:1M,
    /// gen:user:1M: YCSB-style string keys of 16 to 64 bytes), the path of an SOSD u64 file, or
    /// a file of the user's: `text:<path>` (or `<path>.txt`, one key a line), `sosd-u32:`, `sosd-i64:`, `sosd-f64:`, `str16:<path>`. Keys other than
    /// u64 run on the stores through the API only. 75% of the unique keys are loaded, inserts
    /// come from the rest.
    #[arg(long, default_value = "gen:lognormal:1M")]
    pub dataset: String,

    /// `sim:<profile>` (hdd, sata-ssd, nvme, optane, ram, `lat=<dur>,bw=<bytes/s>,p=<n>`:
    /// modeled time, in memory), `file:<dir>` (O_DIRECT) or `file-buffered:<dir>`. Each run's
    /// stores live in a fresh subdirectory of <dir>, removed after the run.
    #[arg(long, default_value = "sim:nvme")]
    pub device: String,

    /// Operations per run, all threads together (accepts 100K, 1M, ...). Inserts can use at
    /// most the 25% of keys held out of the initial load.
    #[arg(long, default_value = "100K")]
    pub ops: String,

    /// Threads, each running its own slice of the operations.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// The stores, comma-separated; the first is the reference: the store's engines, the
    /// bench's adapters, or peers (`--help` lists them).
    #[arg(long, default_value = Role::StoreEngine.default_list(), long_help = store_help())]
    pub store: String,

    /// The memory budget of the stores that take one (`hybrid`, `adapter:hybrid`; `btree`
    /// keeps its default log between checkpoints, 64 MB; `log:<map>` holds its whole map in
    /// memory and takes none): bytes (2M), a percentage of the reference's memory at the
    /// start of its run (10%), or `btree-peak`: what the reference held at the end of its run
    /// of the same workload (inserts grow a B+-tree's inner nodes). Default 100%: equal memory
    /// at the start; with `--memory-limit L`, three quarters of `L` (five eighths when a
    /// workload writes) less the cache (`--cache-blocks` x `--block-size`), the share of `L`
    /// each peer's own memory gets. A
    /// budget below the static model's own size merges after every write; in `--curve`'s
    /// sweep under a workload that writes, a budget that leaves under 16 KiB beside what the
    /// store holds built is a skipped row saying so.
    #[arg(long)]
    pub memory_budget: Option<String>,

    /// Hold each run (build, timed part, drain) of every store to this many bytes of memory,
    /// its heap and the OS page cache it faults in together, in a memory cgroup of its own
    /// (needs root; 64M, 1G: powers of 1000); each peer then sizes its caches and buffers from
    /// it as its documentation recommends. Without it, engines that read through the OS page
    /// cache (the peers) use as much of it as the machine has. Resident memory is recorded
    /// either way.
    #[arg(long)]
    pub memory_limit: Option<String>,

    /// `adapter:hybrid`'s static model: `cpr-pgm:eps=<n>`, `pgm:eps=<n>`, `pgm-zero:pages=<x>`,
    /// `leco-zonemap` or `auto:pages=<x>` (the smaller of the two at that expected I/O).
    /// Default: the hybrid's own default.
    #[arg(long)]
    pub hybrid_model: Option<String>,

    /// `adapter:hybrid`'s leaf fetching (paper 002 G1): `all-at-once` or `one-by-one`.
    #[arg(long, default_value = "all-at-once")]
    pub fetch: String,

    /// The write-ahead log of every store that has one: `never` fsyncs (the default: like
    /// `adapter:btree`, which writes each changed node without an fsync), `always` (fsync per
    /// group commit) or `every:<ms>`.
    #[arg(long, default_value = "never")]
    pub fsync: String,

    /// `adapter:hybrid`'s dynamic stage: `btree` (lidx's in-memory B+-tree, the paper's choice) or
    /// `sorted-runs` (two sorted arrays: 12 bytes per entry against the B+-tree's ~48, so a
    /// memory budget holds four times the entries and merges come four times less often).
    #[arg(long, default_value = Role::DynamicStage.default_list())]
    pub dynamic: String,

    /// Runs per store and workload (fresh stores each); the report gives the median run.
    /// Each run costs a fresh build of every store.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,

    /// Seed of the dataset and of the workload.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Bytes of payload per key.
    #[arg(long, default_value_t = lidx::disk::DEFAULT_PAYLOAD_SIZE)]
    pub payload_size: usize,

    /// Block size in bytes (a power of two; at least 4096 for files).
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,

    /// LRU page cache in blocks, one shared by a store's files (0 = none: every read goes to
    /// the device).
    #[arg(long, default_value_t = 0)]
    pub cache_blocks: usize,

    /// Bytes of record cache (key to value) of each lidx store (`Store` engines; 0 = none,
    /// the default; 48M: powers of 1000): `StoreOptions::row_cache_bytes`; and of the peer
    /// `rocksdb-rows`'s row cache, taken out of its block cache. Counted in the store's
    /// memory; with `--memory-limit` and no `--memory-budget`, taken from the budget of the
    /// stores that get one, as the block cache is.
    #[arg(long, default_value = "0")]
    pub row_cache: String,

    /// Also write the records here: `.jsonl`/`.json` for JSON lines, `.csv` for CSV.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Replace an existing `--out` file (without it an existing file is refused).
    #[arg(long)]
    pub force: bool,

    /// Sweep memory: `adapter:btree` with 0, 1, ... resident levels and `adapter:hybrid` at
    /// each of `--budgets` (paper 002 Fig. 11); `--store` is not used.
    #[arg(long)]
    pub curve: bool,

    /// With --curve: the hybrid's budgets, comma-separated.
    #[arg(long, default_value = "1%,2%,5%,10%,25%,50%,100%", requires = "curve")]
    pub budgets: String,

    /// With --curve: write the curve's points here as CSV.
    #[arg(long, requires = "curve")]
    pub csv: Option<PathBuf>,

    /// With --curve: draw throughput against memory here as SVG.
    #[arg(long, requires = "curve")]
    pub svg: Option<PathBuf>,

    /// Run as the child of one store on one workload (used by the command itself:
    /// `lidx_bench::kv_child`).
    #[arg(long, hide = true)]
    pub child_run: Option<String>,

    /// With --child-run: the directory the parent's runs live in.
    #[arg(long, hide = true, requires = "child_run")]
    pub child_dir: Option<PathBuf>,

    /// The harness's self-test: the child of the store at this index of `--store` aborts
    /// (SIGABRT) before its run, as a crash of an engine's own code would end it; the other
    /// stores must still run.
    #[arg(long, hide = true)]
    pub child_abort: Option<usize>,
}

/// Runs `lidx ycsb`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // Every usage error is reported before the (long) benchmark starts.
    let workloads = YcsbWorkload::parse_list(&args.workload)?;
    let device = DeviceChoice::parse(&args.device, None)?;
    let ops = parse_ops("operation count", &args.ops)?;
    let fetch = match parse_fetches(&args.fetch)?[..] {
        [one] => one,
        _ => {
            return Err(BenchError::BadSpec {
                what: "fetch",
                got: args.fetch.clone(),
                expected: "one of all-at-once or one-by-one".to_string(),
            }
            .into())
        }
    };
    let memory_limit = args
        .memory_limit
        .as_deref()
        .map(|l| {
            lidx_bench::count::parse_count(l).ok_or_else(|| BenchError::BadSpec {
                what: "--memory-limit",
                got: l.to_string(),
                expected: "bytes: 64000000, 64M, 1G (powers of 1000)".to_string(),
            })
        })
        .transpose()?;
    let row_cache = lidx_bench::count::parse_count(&args.row_cache)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= lidx::kv::MAX_MEMORY_BUDGET)
        .ok_or_else(|| BenchError::BadSpec {
            what: "--row-cache",
            got: args.row_cache.clone(),
            expected: "bytes up to 256 GiB: 0, 48000000, 48M (powers of 1000)".to_string(),
        })?;
    let block_cache = (args.cache_blocks * args.block_size) as u64;
    // The smaller share of a limit when any workload writes: the budget is decided once for
    // the whole run.
    let writes = workloads.iter().any(|w| w.writes());
    let budget = match (&args.memory_budget, memory_limit) {
        (Some(given), _) => MemoryBudget::parse(given)?,
        (None, Some(limit)) => MemoryBudget::Bytes(lidx_budget_from_limit(
            limit,
            block_cache,
            MIN_MEMORY_BUDGET as u64,
            writes,
        )),
        (None, None) => MemoryBudget::Percent(100.0),
    };
    // Under a limit, a store given a record cache pays for it from the budget the limit
    // leaves it; the others keep theirs.
    let budget_with_rows = match (&args.memory_budget, memory_limit) {
        (None, Some(limit)) if row_cache > 0 => Some(MemoryBudget::Bytes(lidx_budget_from_limit(
            limit,
            block_cache.saturating_add(row_cache as u64),
            MIN_MEMORY_BUDGET as u64,
            writes,
        ))),
        _ => None,
    };
    let budgets = MemoryBudget::parse_list(&args.budgets)?;
    let fsync = parse_fsync(&args.fsync)?;
    let dynamic = DynamicKind::parse(&args.dynamic)?;
    let hybrid = StoreSpec::hybrid(
        args.hybrid_model.as_deref(),
        fetch,
        Some(budget),
        fsync,
        dynamic,
    )?;
    let peers = lidx_peers::all();
    let stores: Vec<StoreSpec> =
        StoreSpec::parse_list(&args.store, Some(budget), fsync, &hybrid, &peers)?
            .iter()
            .map(|s| match (s, budget_with_rows) {
                (StoreSpec::Store(api), Some(b)) if api.budget.is_some() => {
                    s.with_budget(b).with_row_cache(row_cache)
                }
                _ => s.with_row_cache(row_cache),
            })
            .collect();
    if row_cache == 0
        && stores
            .iter()
            .any(|s| matches!(s, StoreSpec::Peer(p) if p.engine.name() == "rocksdb-rows"))
    {
        return Err(BenchError::BadSpec {
            what: "--store",
            got: args.store.clone(),
            expected: "rocksdb-rows with --row-cache <bytes> (its row cache; plain rocksdb \
                       has none)"
                .to_string(),
        }
        .into());
    }
    if !args.curve && stores[0].relative_budget() {
        return Err(BenchError::BadSpec {
            what: "--store",
            got: args.store.clone(),
            expected: format!(
                "a first store without a budget (btree, log:<map>, adapter:btree), or \
                 --memory-budget in bytes: {} is a share of the first store's memory",
                budget.label()
            ),
        }
        .into());
    }
    if args.threads == 0 || args.runs == 0 {
        return Err(BenchError::BadSpec {
            what: "--threads/--runs",
            got: format!("{}/{}", args.threads, args.runs),
            expected: "at least 1 each".to_string(),
        }
        .into());
    }
    let config = KvBenchConfig {
        ops,
        threads: args.threads,
        runs: args.runs,
        seed: args.seed,
        payload_size: args.payload_size,
        memory_limit,
    };
    if let Some(at) = &args.child_run {
        return child(&args, at, &device, &workloads, &stores, config);
    }
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    let inputs = super::dataset_inputs(&args.dataset);
    for figure in [&args.csv, &args.svg].into_iter().flatten() {
        super::output::check(figure, &inputs, args.force)?;
    }
    super::disk::check_cache(args.block_size, args.cache_blocks)?;
    let mut base = StorageBase {
        dir: device.dir.clone(),
        kind: device.kind.clone(),
        block_size: args.block_size,
        cache_blocks: args.cache_blocks,
    };
    device.check_block_size(args.block_size)?;

    let dataset = load_any_dataset(&args.dataset, args.seed)?;
    let (keys, key_bytes) = store_keys(dataset.keys, true);
    let key_bytes = Arc::new(key_bytes);
    // Refused before the device's directory is made, so a refusal leaves nothing behind.
    let checked = if args.curve {
        vec![StoreSpec::baseline()]
    } else {
        stores
    };
    for spec in &checked {
        spec.check_keys(&dataset.name, &key_bytes)?;
    }
    if let (Some(_), false) = (memory_limit, args.curve) {
        // Refused here, once, rather than by every child.
        MemoryCgroup::check_available(&format!("lidx-ycsb-probe-{}", std::process::id()))?;
    }
    device.create_dir()?;
    // The runs' stores go in a private directory of this run's inside the device's directory,
    // removed when the command ends, on signals too: nothing of the user's there is touched.
    let private = match &base.dir {
        Some(dir) => Some(super::output::Staging::beside(dir)?),
        None => None,
    };
    base.dir = private.as_ref().map(|p| p.dir().to_path_buf());
    let setup = KvSetup {
        dataset: &dataset.name,
        keys: &keys,
        key_bytes: &key_bytes,
        base: &base,
        config,
    };
    let mut bars = Bars::default();
    let mut failures = Vec::new();
    let records = if args.curve {
        kv_runner::curve(&setup, &workloads, &hybrid, &budgets, &mut bars)?
    } else {
        // Each store in a child process of its own: the same command line, the hidden flags.
        let own_args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let mut children = ChildRunner::new(own_args, base.dir.clone(), memory_limit)?;
        let records =
            kv_runner::compare_with(&setup, &workloads, &checked, &mut children, &mut bars)?;
        failures = children.failures().to_vec();
        records
    };

    drop(private);
    // In place before the last line on stdout: a closed pipe cannot leave a staged file. All
    // or none: a failure on the figure leaves the old records and CSV too.
    let mut batch = Batch::default();
    stage_out(&mut batch, args.out.as_ref(), &records)?;
    if let Some(csv) = &args.csv {
        let note = format!("wrote the curve to {}", csv.display());
        batch.write(csv, note, |staged| plot::write_csv(staged, &records))?;
    }
    if let Some(svg) = &args.svg {
        let title = format!(
            "{} on {}: throughput vs memory",
            records[0].dataset, records[0].device
        );
        let note = format!("drew the curve in {}", svg.display());
        batch.write(svg, note, |staged| {
            plot::write_svg(staged, &records, &title)
        })?;
    }
    batch.commit()?;
    let measured = records.iter().find(|r| r.skipped.is_none());
    print_header(measured.unwrap_or(&records[0]));
    for spec in &checked {
        if let StoreSpec::Peer(p) = spec {
            println!(
                "{}: {}; durability: {}",
                p.engine.name(),
                p.engine.version(),
                p.engine.durability()
            );
        }
    }
    if let Some(limit) = memory_limit {
        println!("every run held to {limit} bytes (heap and page cache) by a memory cgroup");
        if let (None, MemoryBudget::Bytes(bytes)) = (&args.memory_budget, budget) {
            let (share, workload) = if writes {
                (
                    "five eighths",
                    "writes (a workload of this run does; on one that only reads a peer gets \
                     three quarters)",
                )
            } else {
                ("three quarters", "only reads")
            };
            println!(
                "lidx's budget {bytes} bytes: {share} of the limit less the cache, the share \
                 each peer's own memory gets on a workload that {workload}"
            );
        }
    }
    println!("{}", kv_runner::table(&records));
    print!("{}", kv_runner::config_lines(&records));
    if !failures.is_empty() {
        anyhow::bail!(
            "{} store run(s) failed (their rows above say how; the other stores' records are \
             complete): {}",
            failures.len(),
            failures.join("; ")
        );
    }
    Ok(())
}

/// `lidx ycsb --child-run <at>`: runs the one store on the one workload `at` names
/// ([`RunAt::from_arg`]) in the parent's runs directory and writes how it ended on stdout
/// ([`ChildReport`]); the parent (`lidx_bench::kv_child::ChildRunner`) makes the row.
fn child(
    args: &Args,
    at: &str,
    device: &DeviceChoice,
    workloads: &[YcsbWorkload],
    stores: &[StoreSpec],
    config: KvBenchConfig,
) -> anyhow::Result<()> {
    report_panics();
    let at = RunAt::from_arg(at)?;
    let (Some(&workload), Some(spec)) = (workloads.get(at.workload), stores.get(at.store)) else {
        return Err(BenchError::BadSpec {
            what: "--child-run",
            got: at.to_arg(),
            expected: format!(
                "a workload below {} and a store below {}",
                workloads.len(),
                stores.len()
            ),
        }
        .into());
    };
    let run = || -> anyhow::Result<KvRecord> {
        let base = StorageBase {
            dir: args.child_dir.clone(),
            kind: device.kind.clone(),
            block_size: args.block_size,
            cache_blocks: args.cache_blocks,
        };
        let dataset = load_any_dataset(&args.dataset, args.seed)?;
        let (keys, key_bytes) = store_keys(dataset.keys, false);
        let bench = KvBench::new(
            &dataset.name,
            &keys,
            Arc::new(key_bytes),
            workload,
            &base,
            config,
        )?;
        if args.child_abort == Some(at.store) {
            note!("--child-abort {}: this child aborts", at.store);
            std::process::abort();
        }
        let spec = spec.resolve(at.reference.0, at.reference.1);
        Ok(kv_runner::run_here(&bench, &spec, &mut Bars::default())?)
    };
    match run() {
        Ok(record) => ChildReport::Record(Box::new(record)).send(),
        Err(error) => {
            note!("error: {error:#}");
            ChildReport::Error(format!("{error:#}")).send();
        }
    }
    Ok(())
}

/// The runner's keys and what they are as a store's bytes: a `u64` dataset's unique keys
/// themselves, any other's ranks into its order-preserving byte keys (a note says so, when
/// `tell`: the parent tells, not each child again).
fn store_keys(keys: Keys, tell: bool) -> (Vec<u64>, StoreKeys) {
    if let Keys::U64(keys) = keys {
        return (unique_keys(&keys), StoreKeys::U64);
    }
    let ranked = RankedKeys::encode(&keys);
    if !tell {
        return (ranked.ranks(), StoreKeys::Ranked(ranked));
    }
    note!(
        "note: {} {} keys ({} distinct) run as their order-preserving bytes on the stores through \
         the API",
        keys.len(),
        keys.type_name(),
        ranked.len()
    );
    (ranked.ranks(), StoreKeys::Ranked(ranked))
}

fn print_header(first: &KvRecord) {
    println!(
        "{} ({} keys loaded), {} ops x {} runs, {} thread(s), {}, {}-byte blocks, seed {}, {} \
         ({} cores); throughput {}",
        first.dataset,
        first.n_init,
        first.ops,
        first.runs,
        first.threads,
        first.device,
        first.block_size,
        first.seed,
        first.cpu,
        first.cores,
        if first.modeled_ops_per_s.is_some() {
            "modeled (CPU + device model), latencies modeled"
        } else {
            "wall clock"
        }
    );
}
