//! One TPC-C run per index structure: load (untimed), bulk load the indexes (untimed), the
//! transactions on one thread (timed, each transaction alone: its input is drawn before the
//! clock starts), the merges they left running (timed apart), the consistency checks, a
//! [`TpccRecord`].
//!
//! On a simulated device a transaction's time is modeled: this thread's CPU time plus the
//! device model's time of its requests, as `lidx ycsb` measures (`crate::kv_runner`); the
//! run's is [`lidx::io::SimProfile::elapsed_ns`] of all requests (merges' included) with that
//! thread's sum, plus the time writes stalled waiting for a merge. The merges' own CPU time
//! runs on another thread and is not in the modeled figure (it is `merge_s`; on this 2-core
//! machine it competes with the transactions for the cores, which the wall clock of a file
//! device shows). On a file device it is the wall clock. Blocks read and written count every
//! request of the eleven storages during the transactions and the drain, merges included;
//! the hybrid's write-ahead log is a file of its directory, not of its block device, and is
//! not in them: its bytes per transaction are a column of their own.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::time::Instant;

use lidx::io::DeviceKind;
use lidx::kv::{FsyncPolicy, MAX_MEMORY_BUDGET};

use super::check::check;
use super::db::Db;
use super::index::{IndexSet, Table, TpccIndexSpec};
use super::keys::{MAX_ORDER_ID, MAX_WAREHOUSES};
use super::load::{load, LOAD_STAMP};
use super::random::{Constants, TpccRng};
use super::schema::Sizes;
use super::store::StoreTuples;
use super::tuples::Tuples;
use super::txn::{Driver, Kind, Outcome};
use crate::error::{BenchError, Result};
use crate::kv_runner::StorageBase;
use crate::kv_store::fsync_label;
use crate::records::{RecordKind, TpccRecord};
use crate::report::Machine;
use crate::runner::Progress;
use crate::runners::core::ThreadRun;

/// What one `lidx tpcc` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpccConfig {
    /// Warehouses (W).
    pub warehouses: u32,
    /// Transactions per index structure.
    pub transactions: u64,
    /// Seed of the load and the transactions.
    pub seed: u64,
    /// Divides the spec's items (100,000) and customers per district (3,000), for tests; 1
    /// runs the spec's populations.
    pub scale: u32,
    /// The device as the user named it, for the records.
    pub device: String,
    /// When a `store:` run's store acknowledges a commit (the store's default: after
    /// `fdatasync`).
    pub fsync: FsyncPolicy,
    /// The memory of a `kv:` run's eleven stores in all, for an equal-memory comparison;
    /// `None` leaves each store its defaults (a 64 MiB budget and an 8 MiB page cache).
    pub kv_memory: Option<KvMemory>,
}

/// How much memory a `kv:` run's stores get in all (`lidx tpcc --kv-memory`): split among
/// the eleven stores (8 KiB each, the rest by the entries each was loaded with), each share
/// a store's memory budget, with no page cache, as the first mode's
/// indexes have none (every leaf they read comes from the device).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvMemory {
    /// This many bytes.
    Bytes(u64),
    /// What the run's first structure held in memory at its end (its record's
    /// `memory_bytes`): equal memory with it.
    First,
}

/// The smallest share of a `kv:` run's memory a store gets: the `lsm` engine's smallest
/// budget (two 4 KiB memtables; `lidx`'s `MIN_LSM_BUDGET`, which it does not export).
pub(crate) const KV_MIN_SHARE: u64 = 8 << 10;

/// The shares of `bytes` for stores loaded with `entries` entries each: [`KV_MIN_SHARE`] each,
/// and what is left split in proportion to the entries (rounded down, so they sum to at most
/// `bytes`). `BadSpec` when `bytes` does not cover the floors or passes what a store may take
/// ([`MAX_MEMORY_BUDGET`]); `what` says where `bytes` came from.
pub(crate) fn kv_shares(bytes: u64, entries: &[usize], what: &str) -> Result<Vec<usize>> {
    let floors = KV_MIN_SHARE * entries.len() as u64;
    if bytes < floors || bytes > MAX_MEMORY_BUDGET as u64 {
        return Err(BenchError::BadSpec {
            what: "--kv-memory",
            got: format!("{bytes} bytes ({what})"),
            expected: format!(
                "from {floors} bytes ({} KiB for each of {} stores) to {MAX_MEMORY_BUDGET}",
                KV_MIN_SHARE >> 10,
                entries.len()
            ),
        });
    }
    let total = entries.iter().map(|&n| n as u128).sum::<u128>().max(1);
    let left = u128::from(bytes - floors);
    Ok(entries
        .iter()
        .map(|&n| (u128::from(KV_MIN_SHARE) + left * n as u128 / total) as usize)
        .collect())
}

impl KvMemory {
    /// Parses `first` or a byte count (`1000000`, `1M`: powers of 1000).
    pub fn parse(text: &str) -> Result<KvMemory> {
        let text = text.trim();
        if text == "first" {
            return Ok(KvMemory::First);
        }
        match crate::count::parse_count(text) {
            Some(bytes) if bytes > 0 => Ok(KvMemory::Bytes(bytes)),
            _ => Err(BenchError::BadSpec {
                what: "--kv-memory",
                got: text.to_string(),
                expected: "bytes (1000000, 1M, 1G: powers of 1000) or `first` (the memory \
                           the run's first --index structure held)"
                    .to_string(),
            }),
        }
    }
}

impl TpccConfig {
    /// Refuses what the keys cannot hold or the spec does not define, before anything runs.
    pub fn check(&self) -> Result<()> {
        let bad = |what: &'static str, got: String, expected: String| {
            Err(BenchError::BadSpec {
                what,
                got,
                expected,
            })
        };
        if self.warehouses == 0 || self.warehouses > MAX_WAREHOUSES {
            return bad(
                "--warehouses",
                self.warehouses.to_string(),
                format!("1 to {MAX_WAREHOUSES} warehouses"),
            );
        }
        if self.transactions == 0 || self.transactions > u64::from(MAX_ORDER_ID - 3000) {
            return bad(
                "--transactions",
                self.transactions.to_string(),
                format!(
                    "1 to {} transactions (a district's order numbers are 24 bits)",
                    MAX_ORDER_ID - 3000
                ),
            );
        }
        if let Some(KvMemory::Bytes(bytes)) = self.kv_memory {
            kv_shares(bytes, &[0; Table::ALL.len()], "as given")?;
        }
        if !(1..=100).contains(&self.scale) || 3000 % self.scale != 0 || 100_000 % self.scale != 0 {
            return bad(
                "--scale",
                self.scale.to_string(),
                "1 (the spec's populations) or a divisor of both 3000 and 100000 up to 100 \
                 (2, 4, 5, 8, 10, 20, 25, 40, 50, 100), for tests"
                    .to_string(),
            );
        }
        Ok(())
    }
}

/// Runs TPC-C once per spec with the same database and transactions, each on fresh storages
/// under `base` (removed after its run); fails on the first wrong answer, failed consistency
/// condition, or digest that differs from the first structure's.
pub fn run(
    config: &TpccConfig,
    specs: &[TpccIndexSpec],
    base: &StorageBase,
    progress: &mut dyn Progress,
) -> Result<Vec<TpccRecord>> {
    config.check()?;
    if config.kv_memory == Some(KvMemory::First)
        && matches!(
            specs.first(),
            None | Some(TpccIndexSpec::Kv(_) | TpccIndexSpec::Store(_))
        )
    {
        return Err(BenchError::BadSpec {
            what: "--kv-memory",
            got: "first".to_string(),
            expected: "a first --index item of the first mode (not kv: or store:: its \
                       indexes' memory is what the kv: stores get), or a byte count"
                .to_string(),
        });
    }
    let mut records: Vec<TpccRecord> = Vec::new();
    for spec in specs {
        let kv_bytes = match (config.kv_memory, records.first()) {
            (Some(KvMemory::Bytes(bytes)), _) => Some(bytes),
            (Some(KvMemory::First), Some(first)) => Some(first.memory_bytes),
            _ => None,
        };
        let record = run_one(config, spec, base, kv_bytes, progress)?;
        if let Some(first) = records.first() {
            if first.digest != record.digest {
                return Err(BenchError::WrongResult {
                    index: record.index,
                    op: "tpcc",
                    key: 0,
                    what: format!(
                        "the transactions read other values (digest {}) than with {} ({})",
                        record.digest, first.index, first.digest
                    ),
                });
            }
        }
        records.push(record);
    }
    let (tps, space) = (records[0].tps, records[0].index_bytes);
    for r in &mut records {
        r.tps_vs_first = r.tps / tps;
        r.space_vs_first = r.index_bytes as f64 / space.max(1) as f64;
    }
    Ok(records)
}

/// One structure's run; `kv_bytes`: the memory a `kv:` run's stores share (`--kv-memory`,
/// resolved).
fn run_one(
    config: &TpccConfig,
    spec: &TpccIndexSpec,
    base: &StorageBase,
    kv_bytes: Option<u64>,
    progress: &mut dyn Progress,
) -> Result<TpccRecord> {
    let (mut db, constants, load_s, build_s) = open(config, spec, base, kv_bytes, progress)?;
    let outcome = transactions(config, &mut db, constants, progress);
    progress.end();
    let removed = db.tuples.remove();
    let mut record = outcome?;
    removed?;
    record.index = db.label;
    if let (TpccIndexSpec::Kv(_), Some(bytes)) = (spec, kv_bytes) {
        record.kv_memory = bytes;
    }
    record.load_s = load_s;
    record.build_s = build_s;
    Ok(record)
}

/// Loads the database of `config` and bulk loads its indexes as `spec` under `base` (or, for
/// `store:<engine>`, its tuples and indexes into a new store); returns it with the run's
/// constants and the seconds of the load and of the build.
pub(crate) fn open(
    config: &TpccConfig,
    spec: &TpccIndexSpec,
    base: &StorageBase,
    kv_bytes: Option<u64>,
    progress: &mut dyn Progress,
) -> Result<(Db, Constants, f64, f64)> {
    let label = spec.label();
    let sizes = Sizes::scaled(config.scale);
    let started = Instant::now();
    progress.begin(&format!("tpcc {label}: load"), 0);
    let mut load_rng = TpccRng::new(config.seed, 0);
    let constants = Constants::draw(&mut load_rng);
    let (mut tables, entries) = load(config.warehouses, sizes, &constants, &mut load_rng);
    // What the transactions add, at most (45% New-Orders of up to 15 lines, 43% Payments),
    // reserved now so that no table grows by doubling while the clock runs.
    let n = usize::try_from(config.transactions).unwrap_or(usize::MAX);
    tables.order.reserve_exact(n / 2);
    tables.new_order.reserve_exact(n / 2);
    tables.order_line.reserve_exact(n.saturating_mul(7));
    tables.history.reserve_exact(n / 2);
    let load_s = started.elapsed().as_secs_f64();
    progress.begin(&format!("tpcc {label}: build indexes"), 0);
    let started = Instant::now();
    let history_rows = tables.history.len() as u64;
    let tuples = match spec {
        TpccIndexSpec::Store(engine) => Tuples::Store(StoreTuples::create(
            *engine,
            config.fsync,
            base,
            &tables,
            entries,
            &label,
        )?),
        _ => Tuples::Memory {
            ix: IndexSet::build(spec, base, entries, kv_bytes)?,
            t: tables,
        },
    };
    let build_s = started.elapsed().as_secs_f64();
    let db = Db {
        tuples,
        warehouses: config.warehouses,
        sizes,
        label,
        scratch: Vec::new(),
        history_rows,
    };
    Ok((db, constants, load_s, build_s))
}

/// The timed part, the drain and the checks, as a record without its index and load times.
pub(crate) fn transactions(
    config: &TpccConfig,
    db: &mut Db,
    constants: Constants,
    progress: &mut dyn Progress,
) -> Result<TpccRecord> {
    let simulated = match &db.tuples.base().kind {
        DeviceKind::Sim(profile) => Some(profile.clone()),
        DeviceKind::File { .. } | DeviceKind::FileCached => None,
    };
    let mut rng = TpccRng::new(config.seed, 1);
    let mut driver = Driver {
        rng: &mut rng,
        constants,
        warehouses: config.warehouses,
        sizes: db.sizes,
    };
    let mut runs: Vec<ThreadRun> = Kind::ALL
        .iter()
        .map(|_| {
            if simulated.is_some() {
                ThreadRun::new()
            } else {
                ThreadRun::wall_only()
            }
        })
        .collect();
    let mut counts = [0u64; 5];
    let mut rollbacks = 0;
    let mut digest = DefaultHasher::new();
    let io_before = db.tuples.io();
    let [merges_before, merge_before, stall_before, log_before] = db.tuples.counters()?;
    progress.begin(
        &format!("tpcc {}: transactions", db.label),
        config.transactions,
    );
    let started = Instant::now();
    for n in 0..config.transactions {
        let kind = Kind::draw(driver.rng);
        let input = driver.input(kind);
        let stamp = LOAD_STAMP + 1 + n;
        let slot = kind as usize;
        let outcome = runs[slot].time(|| {
            let outcome = db.execute(&input, stamp, &mut digest)?;
            match outcome {
                Outcome::RolledBack => db.tuples.abort(),
                _ => db.tuples.commit()?,
            }
            Ok::<_, BenchError>(outcome)
        })?;
        counts[slot] += 1;
        rollbacks += u64::from(outcome == Outcome::RolledBack);
        if n % 1024 == 1023 {
            progress.advance(1024);
        }
    }
    let run_s = started.elapsed().as_secs_f64();
    let io_run = db.tuples.io() - io_before;
    let stall_ns = db.tuples.counters()?[2] - stall_before;
    progress.begin(&format!("tpcc {}: drain merges, check", db.label), 0);
    let started = Instant::now();
    db.tuples.drain()?;
    let drain_s = started.elapsed().as_secs_f64();
    let io = db.tuples.io() - io_before;
    let [merges, merge_ns, _, log_bytes] = db.tuples.counters()?;
    let (merges, merge_ns) = (merges - merges_before, merge_ns - merge_before);
    let (memory, disk) = db.tuples.space()?;
    let started = Instant::now();
    check(db)?;
    let check_s = started.elapsed().as_secs_f64();
    // Every entry the store acknowledged is there after a clean close and reopen, and the
    // conditions hold again. (Not a crash: the store's own crash tests are that evidence.)
    let mut reopen_s = 0.0;
    if let Tuples::Store(store) = &mut db.tuples {
        let before = store.fingerprint()?;
        let started = Instant::now();
        store.reopen()?;
        reopen_s = started.elapsed().as_secs_f64();
        if store.fingerprint()? != before {
            return Err(BenchError::WrongResult {
                index: db.label.clone(),
                op: "reopen",
                key: 0,
                what: "the store's entries after a close and reopen differ from before".into(),
            });
        }
        check(db)?;
    }

    let kind_ns: Vec<u64> = runs
        .iter()
        .map(|r| {
            if simulated.is_some() {
                r.modeled_ns
            } else {
                r.wall_ns
            }
        })
        .collect();
    // A write stalled on a merge spends no CPU and issues no request: the modeled time adds
    // it, as `lidx ycsb` does (the wall clock has it already).
    let total_ns = match &simulated {
        Some(profile) => profile.elapsed_ns(&io_run, kind_ns.iter().sum()) + stall_ns,
        None => kind_ns.iter().sum(),
    };
    let per_s = |count: u64, ns: u64| count as f64 / (ns.max(1) as f64 / 1e9);
    let rate = |kind: Kind| per_s(counts[kind as usize], kind_ns[kind as usize]);
    let txns = config.transactions as f64;
    let machine = Machine::detect();
    let store = matches!(db.tuples, Tuples::Store(_));
    Ok(TpccRecord {
        schema: RecordKind::Tpcc.schema(),
        command: crate::records::command_line(),
        warehouses: u64::from(config.warehouses),
        scale: u64::from(config.scale),
        transactions: config.transactions,
        seed: config.seed,
        device: config.device.clone(),
        block_size: db.tuples.base().block_size as u64,
        tuples: if store { "store" } else { "memory" }.to_string(),
        fsync: if store {
            fsync_label(config.fsync)
        } else {
            String::new()
        },
        timing: if simulated.is_some() {
            "modeled"
        } else {
            "wall"
        }
        .to_string(),
        tps: per_s(config.transactions, total_ns),
        new_order_per_min: 60.0 * per_s(counts[Kind::NewOrder as usize], total_ns),
        tps_new_order: rate(Kind::NewOrder),
        tps_payment: rate(Kind::Payment),
        tps_order_status: rate(Kind::OrderStatus),
        tps_delivery: rate(Kind::Delivery),
        tps_stock_level: rate(Kind::StockLevel),
        mix: counts.map(|c| c.to_string()).join("/"),
        rollbacks,
        memory_bytes: memory,
        disk_bytes: disk,
        index_bytes: memory + disk,
        blocks_read_per_txn: io.read_blocks as f64 / txns,
        blocks_written_per_txn: io.write_blocks as f64 / txns,
        merges,
        log_bytes_per_txn: (log_bytes - log_before) as f64 / txns,
        run_s,
        drain_s,
        merge_s: merge_ns as f64 / 1e9,
        stall_s: stall_ns as f64 / 1e9,
        check_s,
        reopen_s,
        digest: format!("{:016x}", digest.finish()),
        cpu: machine.cpu,
        cores: machine.cores,
        lidx_version: env!("CARGO_PKG_VERSION").to_string(),
        ..TpccRecord::default()
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use lidx::io::SimProfile;

    use super::*;
    use crate::runner::Silent;

    /// A simulated NVMe device in memory (the hybrid's log under the temporary directory).
    pub(crate) fn sim_base() -> StorageBase {
        StorageBase {
            dir: None,
            kind: DeviceKind::Sim(SimProfile::parse("nvme").unwrap()),
            block_size: 4096,
            cache_blocks: 0,
        }
    }

    /// One warehouse at a tenth of the spec's items and customers.
    pub(crate) fn small(transactions: u64) -> TpccConfig {
        TpccConfig {
            warehouses: 1,
            transactions,
            seed: 7,
            scale: 10,
            device: "sim:nvme".to_string(),
            fsync: FsyncPolicy::Always,
            kv_memory: None,
        }
    }

    #[test]
    fn one_warehouse_passes_its_checks_on_the_btree_and_the_hybrid() {
        let specs = TpccIndexSpec::parse_list("btree, hybrid:cpr-pgm, hybrid").unwrap();
        let records = run(&small(4000), &specs, &sim_base(), &mut Silent).unwrap();
        let labels: Vec<&str> = records.iter().map(|r| r.index.as_str()).collect();
        assert_eq!(
            labels,
            ["btree:fill=100", "hybrid:cpr-pgm:64", "hybrid:leco-zonemap"]
        );
        for r in &records {
            assert_eq!(r.digest, records[0].digest);
            let mix: Vec<u64> = r.mix.split('/').map(|n| n.parse().unwrap()).collect();
            assert_eq!(mix.iter().sum::<u64>(), 4000);
            assert!(mix.iter().all(|&n| n > 0), "{}", r.mix);
            assert!(r.tps > 0.0 && r.new_order_per_min > 0.0 && r.tps_stock_level > 0.0);
            assert!(r.memory_bytes > 0 && r.disk_bytes > 0);
            assert!(r.blocks_read_per_txn > 1.0, "{}", r.blocks_read_per_txn);
            assert!(r.blocks_written_per_txn > 0.0);
            assert_eq!(r.timing, "modeled");
        }
        assert!(records[0].rollbacks > 0 && records[0].rollbacks < 40);
        assert_eq!(records[0].tps_vs_first, 1.0);
    }

    /// The second mode: every tuple and index in one store, whose transactions read what the
    /// first mode's read (equal digests), whose checks pass before and after a reopen, and
    /// whose figures are the store's.
    #[test]
    fn a_store_run_reads_what_the_first_mode_reads_and_survives_a_reopen() {
        let specs =
            TpccIndexSpec::parse_list("btree, store:lsm, store:btree, store:hybrid").unwrap();
        let records = run(&small(1500), &specs, &sim_base(), &mut Silent).unwrap();
        let labels: Vec<&str> = records.iter().map(|r| r.index.as_str()).collect();
        assert_eq!(
            labels,
            [
                "btree:fill=100",
                "store:lsm:ratio=10:l0=4:bits=10",
                "store:btree",
                "store:hybrid"
            ]
        );
        assert_eq!(records[0].tuples, "memory");
        assert_eq!(records[0].fsync, "");
        assert_eq!(records[0].reopen_s, 0.0);
        for r in &records[1..] {
            assert_eq!(r.digest, records[0].digest, "{}", r.index);
            assert_eq!(r.mix, records[0].mix);
            assert_eq!(r.rollbacks, records[0].rollbacks);
            assert_eq!((r.tuples.as_str(), r.fsync.as_str()), ("store", "always"));
            assert!(r.reopen_s > 0.0);
            assert!(r.tps > 0.0 && r.tps_delivery > 0.0);
            // The store holds the tuples: far more than the first mode's indexes.
            assert!(r.disk_bytes > records[0].disk_bytes, "{}", r.index);
            assert!(r.memory_bytes > 0);
            assert!(r.log_bytes_per_txn > 100.0, "{}", r.log_bytes_per_txn);
            assert!(r.blocks_read_per_txn + r.blocks_written_per_txn > 0.0);
        }
    }

    /// A New-Order that ends with an unused item writes nothing to the store (its writes
    /// would have been one batch); the same order without that item writes one.
    #[test]
    fn a_rolled_back_new_order_writes_nothing_to_the_store() {
        use crate::tpcc::txn::{Input, Line};
        let config = small(10);
        let spec = TpccIndexSpec::parse("store:lsm").unwrap();
        let (mut db, _, _, _) = open(&config, &spec, &sim_base(), None, &mut Silent).unwrap();
        let line = |i| Line {
            i,
            supply_w: 1,
            quantity: 5,
        };
        let order = |lines| Input::NewOrder {
            w: 1,
            d: 1,
            c: 1,
            lines,
        };
        let mut digest = DefaultHasher::new();
        let logged = |db: &Db| db.tuples.counters().unwrap()[3];
        let before = logged(&db);
        let rolled_back = order(vec![line(1), line(2), line(db.sizes.items + 1)]);
        let outcome = db.execute(&rolled_back, LOAD_STAMP + 1, &mut digest);
        assert_eq!(outcome.unwrap(), Outcome::RolledBack);
        db.tuples.commit().unwrap();
        assert_eq!(logged(&db), before);
        let committed = order(vec![line(1), line(2)]);
        let outcome = db.execute(&committed, LOAD_STAMP + 2, &mut digest);
        assert_eq!(outcome.unwrap(), Outcome::Committed);
        db.tuples.commit().unwrap();
        assert!(logged(&db) > before);
        db.tuples.remove().unwrap();
    }

    /// `store:<engine>` takes what `lidx kv create --engine` takes; anything else, and no
    /// engine, gets the message listing the accepted forms.
    #[test]
    fn a_store_item_names_an_engine_the_store_accepts() {
        assert_eq!(
            TpccIndexSpec::parse("store:lsm:runs=4").unwrap().label(),
            "store:lsm:ratio=10:l0=4:bits=10:runs=4"
        );
        // A log store of byte keys holds the tagged keys; one of 8-byte keys cannot.
        assert!(TpccIndexSpec::parse("store:log:trie:btree").is_ok());
        for bad in [
            "store:",
            "store:lsmx",
            "store:log",
            "store:hybrid:x",
            "store:log:btree",
        ] {
            let err = TpccIndexSpec::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("store:<engine>") && err.contains("lsm"),
                "{bad}: {err}"
            );
        }
    }

    /// `--kv-memory`: the `kv:` stores share the given bytes (or the first structure's
    /// memory) as their budgets, with no page cache, and read what the B+-tree reads; `first`
    /// needs a first structure of the first mode, and a size must cover the floors.
    #[test]
    fn kv_stores_at_a_given_or_the_first_structure_s_memory() {
        let specs = TpccIndexSpec::parse_list("btree, kv:hybrid").unwrap();
        // Every store at its 8 KiB floor: the stores merge, where at their defaults (a 64 MiB
        // budget each) they do not.
        let config = TpccConfig {
            kv_memory: Some(KvMemory::Bytes(90_112)),
            ..small(300)
        };
        let records = run(&config, &specs, &sim_base(), &mut Silent).unwrap();
        assert_eq!(records[0].kv_memory, 0, "not a kv: run");
        assert_eq!(records[1].kv_memory, 90_112);
        assert_eq!(records[1].digest, records[0].digest);
        let defaults = run(&small(300), &specs[1..], &sim_base(), &mut Silent).unwrap();
        assert_eq!(defaults[0].kv_memory, 0);
        assert!(
            records[1].merges > 0 && defaults[0].merges == 0,
            "merges at the floor {}, at the defaults {}",
            records[1].merges,
            defaults[0].merges
        );
        // One warehouse at a tenth of the items: the B+-tree's inner nodes are fewer bytes
        // than eleven stores' floors.
        let first = TpccConfig {
            kv_memory: Some(KvMemory::First),
            ..small(300)
        };
        let err = run(&first, &specs, &sim_base(), &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("what the first structure held") && err.contains("90112"),
            "{err}"
        );
        for bad_first in ["kv:hybrid, btree", "store:hybrid, kv:hybrid"] {
            let specs = TpccIndexSpec::parse_list(bad_first).unwrap();
            let err = run(&first, &specs, &sim_base(), &mut Silent).unwrap_err();
            assert!(err.to_string().contains("first mode"), "{bad_first}: {err}");
        }
        let small_bytes = TpccConfig {
            kv_memory: Some(KvMemory::Bytes(50_000)),
            ..small(300)
        };
        assert!(small_bytes.check().is_err());
        assert_eq!(KvMemory::parse("1M").unwrap(), KvMemory::Bytes(1_000_000));
        assert_eq!(KvMemory::parse(" first ").unwrap(), KvMemory::First);
        for bad in ["", "0", "lots", "-1"] {
            let err = KvMemory::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("--kv-memory") && err.contains("first"),
                "{bad}: {err}"
            );
        }
    }

    /// Each store gets its floor and a share of the rest by its entries; the shares never
    /// sum past the bytes, and bytes that do not cover the floors are refused.
    #[test]
    fn kv_shares_give_each_store_its_floor_and_the_rest_by_entries() {
        let floor = KV_MIN_SHARE as usize;
        let shares = kv_shares(3 * KV_MIN_SHARE + 3000, &[0, 1000, 2000], "as given").unwrap();
        assert_eq!(shares, [floor, floor + 1000, floor + 2000]);
        let shares = kv_shares(1_000_000, &[7, 0, 123_456, 99], "as given").unwrap();
        assert!(shares.iter().sum::<usize>() <= 1_000_000);
        assert!(shares.iter().all(|&s| s >= floor));
        assert!(shares[2] > shares[3] && shares[3] > shares[0]);
        let err = kv_shares(3 * KV_MIN_SHARE - 1, &[1, 2, 3], "as given").unwrap_err();
        assert!(err.to_string().contains("24576"), "{err}");
        assert!(kv_shares(u64::MAX, &[1], "as given").is_err());
    }

    /// `kv:<engine>`: each of the eleven indexes a store of that engine, the tuples in
    /// memory; the transactions read what they read on the disk B+-tree.
    #[test]
    fn store_engines_as_the_eleven_indexes_read_what_the_btree_reads() {
        let specs = TpccIndexSpec::parse_list("btree, kv:lsm, kv:btree").unwrap();
        let records = run(&small(1500), &specs, &sim_base(), &mut Silent).unwrap();
        let labels: Vec<&str> = records.iter().map(|r| r.index.as_str()).collect();
        assert_eq!(
            labels,
            ["btree:fill=100", "kv:lsm:ratio=10:l0=4:bits=10", "kv:btree"]
        );
        for r in &records[1..] {
            assert_eq!(r.digest, records[0].digest, "{}", r.index);
            assert_eq!(r.mix, records[0].mix);
            assert_eq!(r.rollbacks, records[0].rollbacks);
            assert_eq!(r.tuples, "memory");
            assert!(r.tps > 0.0 && r.tps_delivery > 0.0);
            assert!(r.memory_bytes > 0 && r.disk_bytes > 0, "{}", r.index);
            assert!(r.blocks_read_per_txn + r.blocks_written_per_txn > 0.0);
        }
    }

    /// `kv:<engine>` takes what `lidx kv create --engine` takes; anything else, and no
    /// engine, gets the message listing the accepted forms.
    #[test]
    fn a_kv_item_names_an_engine_the_store_accepts() {
        assert_eq!(
            TpccIndexSpec::parse("kv:lsm").unwrap(),
            TpccIndexSpec::Kv(lidx::kv::Engine::parse("lsm").unwrap())
        );
        for bad in ["kv:", "kv:nonsense"] {
            let err = TpccIndexSpec::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("kv:<engine>") && err.contains("lsm"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn paper_003_structures_run_too() {
        let specs = TpccIndexSpec::parse_list("btree-learned,dpgm").unwrap();
        let records = run(&small(500), &specs, &sim_base(), &mut Silent).unwrap();
        assert_eq!(records[0].digest, records[1].digest);
    }

    #[test]
    fn refuses_what_the_keys_or_the_spec_cannot_hold() {
        let refused = |config: TpccConfig, what: &str| {
            let err = run(
                &config,
                &[TpccIndexSpec::parse("btree").unwrap()],
                &sim_base(),
                &mut Silent,
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(what), "{err}");
        };
        refused(
            TpccConfig {
                warehouses: 0,
                ..small(10)
            },
            "--warehouses",
        );
        refused(
            TpccConfig {
                warehouses: 70_000,
                ..small(10)
            },
            "--warehouses",
        );
        refused(
            TpccConfig {
                scale: 7,
                ..small(10)
            },
            "--scale",
        );
        refused(small(0), "--transactions");
        for bad in ["tree", "hybrid:zonemap", "", "btree,,x"] {
            let err = TpccIndexSpec::parse_list(bad).unwrap_err().to_string();
            assert!(err.contains("hybrid[:<model>]"), "{bad}: {err}");
        }
    }
}
