//! `lidx tpcc`: TPC-C with the tuples in memory and every index on disk, paper 002 §10.6
//! (Table 8), once per `--index` structure with the same database and transactions
//! ([`lidx_bench::tpcc`]), each index a `Store` of one engine (`kv:<engine>`), or with every
//! tuple and index in one durable store (`store:<engine>`, issue 34's second mode): a table of transactions per second (overall,
//! by type, New-Orders per minute), memory and disk bytes and blocks per transaction, and the
//! records in `--out` (JSON lines or CSV, kind `tpcc`, for `lidx report`). Every run ends
//! with the consistency conditions 1-4 checked through the indexes (a store's again after it
//! is closed and reopened); a failed one fails the command.

use clap::Parser;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use lidx_bench::disk_report::human_bytes;
use lidx_bench::kv_runner::StorageBase;
use lidx_bench::kv_store::parse_fsync;
use lidx_bench::records::TpccRecord;
use lidx_bench::tpcc::{self, KvMemory, TpccConfig, TpccIndexSpec};

use super::args::{check_out_inputs, parse_ops, write_out};
use super::disk::DeviceChoice;
use super::Bars;

/// Arguments of `lidx tpcc`.
#[derive(Debug, Parser)]
pub struct Args {
    /// Warehouses (W). Each takes about 75 MB of tuples in memory and 10 MB of indexes.
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,

    /// Transactions per index structure, at the standard mix (accepts 200K, 1M, ...).
    #[arg(long, default_value = "10K")]
    pub transactions: String,

    /// The structure of every index, comma-separated, each run in turn on the same database
    /// and transactions: `btree[:fill=<percent>]`, `alex`, `lipp`, `dfiting[:eps=<n>]`,
    /// `dpgm[:eps=<n>]`, `btree-learned` (the catalog's updatable disk maps), or
    /// `hybrid[:<model>]` (paper 002's hybrid index; `hybrid:cpr-pgm` is hybrid-PGM-disk, the
    /// default model `leco-zonemap` hybrid-LeCo-disk), `kv:<engine>` (each index a store of
    /// that engine, without fsync), or `store:<engine>`, with any engine `lidx kv create
    /// --engine` takes (`store:lsm`, `store:hybrid`, `store:btree`, `store:log:<map>`): every
    /// tuple and index in one durable store instead. Ratios are to the first.
    #[arg(long, default_value = "btree,hybrid:cpr-pgm,hybrid")]
    pub index: String,

    /// When a `store:` run's store acknowledges a transaction's commit: `always` (after
    /// `fdatasync`, the store's default: nothing acknowledged is lost), `every:<ms>` or
    /// `never`.
    #[arg(long, default_value = "always")]
    pub fsync: String,

    /// The memory of a `kv:` run's eleven stores in all, for an equal-memory comparison:
    /// bytes (`1M`; powers of 1000) or `first`, what the first `--index` structure held at
    /// its end. It is split among the stores by the entries each was loaded with (at least 8
    /// KiB each), each share a store's memory budget, with no page cache (the first mode's
    /// indexes have none). Without it each store keeps its defaults: a 64 MiB budget and an
    /// 8 MiB page cache.
    #[arg(long)]
    pub kv_memory: Option<String>,

    /// `sim:<profile>` (hdd, sata-ssd, nvme, optane, ram, `lat=<dur>,bw=<bytes/s>,p=<n>`:
    /// modeled time, blocks in memory), `file:<dir>` (O_DIRECT) or `file-buffered:<dir>`. The
    /// indexes live in a private subdirectory of <dir>, removed after each run.
    #[arg(long, default_value = "sim:nvme")]
    pub device: String,

    /// Block size in bytes (a power of two; at least 4096 for files).
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,

    /// Seed of the load and of the transactions.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// For tests only: divide the spec's 100,000 items and 3,000 customers (and orders) per
    /// district by this (a divisor of both, up to 100). 1 is TPC-C.
    #[arg(long, default_value_t = 1)]
    pub scale: u32,

    /// Also write the records here: `.jsonl`/`.json` for JSON lines, `.csv` for CSV.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,

    /// Replace an existing `--out` file (without it an existing file is refused).
    #[arg(long)]
    pub force: bool,
}

/// Runs `lidx tpcc`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let specs = TpccIndexSpec::parse_list(&args.index)?;
    let device = DeviceChoice::parse(&args.device, None)?;
    device.check_block_size(args.block_size)?;
    let config = TpccConfig {
        warehouses: args.warehouses,
        transactions: parse_ops("transaction count", &args.transactions)? as u64,
        seed: args.seed,
        scale: args.scale,
        device: args.device.clone(),
        fsync: parse_fsync(&args.fsync)?,
        kv_memory: args.kv_memory.as_deref().map(KvMemory::parse).transpose()?,
    };
    config.check()?;
    check_out_inputs(args.out.as_ref(), "", args.force)?;
    device.create_dir()?;
    // The indexes go in a private directory of this run's inside the device's directory,
    // removed when the command ends, on signals too: nothing of the user's there is touched.
    let private = match &device.dir {
        Some(dir) => Some(super::output::Staging::beside(dir)?),
        None => None,
    };
    let base = StorageBase {
        dir: private.as_ref().map(|p| p.dir().to_path_buf()),
        kind: device.kind.clone(),
        block_size: args.block_size,
        cache_blocks: 0,
    };
    let records = tpcc::run(&config, &specs, &base, &mut Bars::default())?;
    drop(private);
    write_out(args.out.as_ref(), &records)?;
    let first = &records[0];
    println!(
        "TPC-C, {} warehouse(s){}, {} transactions, seed {}, {} ({}-byte blocks, {} time), {} \
         ({} cores); consistency conditions 1-4 passed for every index (and every store after \
         a reopen)",
        first.warehouses,
        if first.scale > 1 {
            format!(" at 1/{} of the items and customers", first.scale)
        } else {
            String::new()
        },
        first.transactions,
        first.seed,
        first.device,
        first.block_size,
        first.timing,
        first.cpu,
        first.cores
    );
    println!("{}", table(&records));
    Ok(())
}

fn table(records: &[TpccRecord]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "index",
        "txn/s",
        "x first",
        "New-Order/min",
        "NO/s",
        "Pay/s",
        "OS/s",
        "Del/s",
        "SL/s",
        "memory",
        "disk",
        "space x first",
        "blocks read/txn",
        "written/txn",
        "merges",
        "run s",
        "drain s",
        "merge s",
        "stall s",
        "reopen s",
    ]);
    for r in records {
        let index = if r.kv_memory > 0 {
            format!(
                "{} ({} budget, no cache)",
                r.index,
                human_bytes(r.kv_memory)
            )
        } else {
            r.index.clone()
        };
        t.add_row([
            index,
            format!("{:.0}", r.tps),
            format!("{:.2}", r.tps_vs_first),
            format!("{:.0}", r.new_order_per_min),
            format!("{:.0}", r.tps_new_order),
            format!("{:.0}", r.tps_payment),
            format!("{:.0}", r.tps_order_status),
            format!("{:.0}", r.tps_delivery),
            format!("{:.0}", r.tps_stock_level),
            human_bytes(r.memory_bytes),
            human_bytes(r.disk_bytes),
            format!("{:.2}", r.space_vs_first),
            format!("{:.2}", r.blocks_read_per_txn),
            format!("{:.2}", r.blocks_written_per_txn),
            r.merges.to_string(),
            format!("{:.1}", r.run_s),
            format!("{:.1}", r.drain_s),
            format!("{:.1}", r.merge_s),
            format!("{:.2}", r.stall_s),
            format!("{:.2}", r.reopen_s),
        ]);
    }
    for column in 1..20 {
        if let Some(c) = t.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}
