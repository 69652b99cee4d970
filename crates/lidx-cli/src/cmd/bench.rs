//! `lidx bench`: build indexes on a dataset, check every answer, time the lookups, print a
//! table and optionally write the records (JSON lines or CSV, see `lidx_bench::report`).
//! With `--on-disk`, the indexes are on-disk ones and the run is `bench_disk`'s.

use std::path::PathBuf;

use clap::Parser;
use lidx::catalog::{ByteIndexSpec, DiskMapSpec};
use lidx_bench::disk_registry::disk_index_forms;
use lidx_bench::keyfile::Keys;
use lidx_bench::map_runner::{self, InsertConfig};
use lidx_bench::registry::{IndexSpec, DEFAULT_INDEXES};
use lidx_bench::report;
use lidx_bench::runner::{self, BenchConfig};
use lidx_bench::string_runner::{self, StringIndexSpec, DEFAULT_STRING_INDEXES};
use lidx_bench::workload::Workload;
use lidx_bench::BenchError;

use super::args::{check_out_inputs, parse_ops, write_out};
use super::bench_disk::{DEFAULT_BYTE_INDEXES, DEFAULT_DISK_INDEXES};
use super::{is_string_dataset, load_any_dataset, load_numeric_dataset, Bars};

/// `--index`'s long help, listing every form the catalog (`lidx::catalog`) accepts, so it
/// cannot drift from it.
fn index_help() -> String {
    format!(
        "Comma-separated indexes, each `name[:param=value]...`, e.g. \
         `pgm:eps=16,rs:err=8,sorted`; numbers accept K/M/G and Ki/Mi/Gi suffixes.\n\n\
         In memory: {}. Default: {DEFAULT_INDEXES}.\n\n\
         With --on-disk: {}. Default: {DEFAULT_DISK_INDEXES}.\n\n\
         With --on-disk and a write workload or --updatable (paper 003's updatable indexes): \
         {}. Default: btree.\n\n\
         With --on-disk on text or str16 keys: {}. Default: \
         {DEFAULT_BYTE_INDEXES}.\n\n\
         On text keys: {}. Default: {DEFAULT_STRING_INDEXES}.\n\n\
         Zero is meaningful where it is accepted: `eps=0` and `err=0` ask for an exact model \
         (every window one position wide: as many segments as that takes), `bits=0` for a \
         radix table of one slot (the spline search does all the work).",
        IndexSpec::forms().join(", "),
        disk_index_forms(),
        DiskMapSpec::accepted_forms(),
        ByteIndexSpec::accepted_forms(),
        StringIndexSpec::accepted_forms(),
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

    /// Replace an existing `--out` file (without it an existing file is refused).
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

/// Runs `lidx bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.on_disk {
        return super::bench_disk::run(args);
    }
    if is_string_dataset(&args.dataset) {
        return run_text(args);
    }
    // Every usage error is reported before the (long) benchmark starts.
    let specs = IndexSpec::parse_list(args.index.as_deref().unwrap_or(DEFAULT_INDEXES))?;
    if args.workload.trim() == map_runner::INSERT_WORKLOAD {
        return run_inserts(args, &specs);
    }
    let workload = Workload::parse(&args.workload)?;
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("1M"))?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    if args.small_pages {
        crate::huge_pages::disable();
    }
    let config = BenchConfig {
        workload,
        queries,
        runs: args.runs,
        seed: args.seed,
        sample_every: args.sample_every,
        huge_pages: crate::huge_pages::enabled(),
    };

    let dataset = load_numeric_dataset(&args.dataset, args.seed)?;
    let mut bars = Bars::default();
    let records = runner::run(&dataset, &specs, config, &mut bars)?;
    anyhow::ensure!(
        !records.is_empty(),
        "none of the indexes `{}` is built into this binary",
        args.index.as_deref().unwrap_or(DEFAULT_INDEXES)
    );

    // In place before the last line on stdout: a closed pipe cannot leave a staged file.
    write_out(args.out.as_ref(), &records)?;
    let first = &records[0];
    println!(
        "{} ({} keys), {}, {} queries x {} runs, seed {}, {} ({} cores)",
        first.dataset,
        first.n,
        first.workload,
        first.queries,
        first.runs,
        first.seed,
        first.cpu,
        first.cores
    );
    println!("{}", report::table(&records));
    Ok(())
}

/// `lidx bench --workload insert` ([`lidx_bench::map_runner`]): bulk load a random half of the
/// distinct keys, insert the other half, every answer checked; a table (and `--out`).
fn run_inserts(args: Args, specs: &[IndexSpec]) -> anyhow::Result<()> {
    map_runner::check_specs(specs)?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    if args.small_pages {
        crate::huge_pages::disable();
    }
    let config = InsertConfig {
        runs: args.runs,
        seed: args.seed,
        sample_every: args.sample_every,
        huge_pages: crate::huge_pages::enabled(),
    };
    let dataset = load_numeric_dataset(&args.dataset, args.seed)?;
    let records = map_runner::run(&dataset, specs, config, &mut Bars::default())?;
    write_out(args.out.as_ref(), &records)?;
    let first = &records[0];
    println!(
        "{} ({} distinct keys), bulk load half then insert {} in random order, {} runs, seed {}, {} ({} cores)",
        first.dataset, first.n, first.queries, first.runs, first.seed, first.cpu, first.cores
    );
    println!("{}", report::table(&records));
    Ok(())
}

/// `lidx bench` on string keys, text or `str16` ([`lidx_bench::string_runner`]): uniform lookups of present
/// keys, every answer checked, a table (and the records in `--out`, JSON lines or CSV).
fn run_text(args: Args) -> anyhow::Result<()> {
    let specs =
        StringIndexSpec::parse_list(args.index.as_deref().unwrap_or(DEFAULT_STRING_INDEXES))?;
    if args.workload != "lookup" && args.workload != "lookup:uniform" {
        return Err(BenchError::BadSpec {
            what: "workload",
            got: args.workload.clone(),
            expected: "lookup (uniform over existing keys) for text keys".to_string(),
        }
        .into());
    }
    let queries = parse_ops("query count", args.queries.as_deref().unwrap_or("1M"))?;
    check_out_inputs(args.out.as_ref(), &args.dataset, args.force)?;
    let dataset = load_any_dataset(&args.dataset, args.seed)?;
    // 16-byte strings are byte strings of one length: the same indexes, the same order.
    let owned: Vec<Vec<u8>>;
    let keys = match &dataset.keys {
        Keys::Bytes(keys) => keys,
        Keys::Str16(keys) => {
            owned = keys.iter().map(|k| k.to_vec()).collect();
            &owned
        }
        other => {
            return Err(BenchError::KeyType {
                dataset: dataset.name.clone(),
                got: other.type_name(),
                expected: "expected text or str16 keys".to_string(),
            }
            .into())
        }
    };
    let records = string_runner::run(
        &dataset.name,
        keys,
        &specs,
        queries,
        args.runs,
        args.seed,
        &mut Bars::default(),
    )?;
    write_out(args.out.as_ref(), &records)?;
    println!(
        "{} ({} text keys), uniform lookups of present keys, {queries} queries x {} runs, seed {}",
        dataset.name,
        keys.len(),
        args.runs,
        args.seed
    );
    println!("{}", string_runner::table(&records));
    Ok(())
}
