//! Paper 003 (Lan et al., *Updatable Learned Indexes Meet Disk-Resident DBMS*): its figures and
//! tables as `lidx bench --on-disk --updatable` runs of the updatable runner
//! ([`crate::updatable_runner`]), one command per workload, device and setting.
//!
//! What differs from the paper: simulated devices (`sim:hdd`, `sim:sata-ssd`, paper 002's
//! profiles) instead of its HDD and SSD, so throughput is the modeled one and block counts are
//! exact; `lognormal` and `uniform-sparse` generated keys stand for FB / OSM / YCSB unless
//! `--dataset` names real data; 8-byte payloads. The PGM on disk (`dpgm`) keeps its models in
//! memory, so the all-on-disk runs (Fig. 3, 5, 10, 12) leave it out, as the README's table does.
//! The figures' hybrid designs of Table 5 other than the learned-inner B+-tree
//! (`btree-learned`) are not built.

use crate::repro::plan::{
    Axis, Context, Experiment, Figure, Lines, Plan, Sizes, Status, Step, StepOutput, X,
};

/// Every index of the paper that runs with everything on disk.
const ALL_ON_DISK: &str = "btree,alex,lipp,dfiting";
/// Every index, the PGM included (inner nodes or models in memory).
const INNER_IN_MEMORY: &str = "btree,alex,lipp,dfiting,dpgm";

const SMALL: Sizes = Sizes {
    datasets: &["gen:lognormal:200K"],
    ops: "20K",
};
const FULL: Sizes = Sizes {
    datasets: &["gen:lognormal:10M", "gen:uniform-sparse:10M"],
    ops: "1M",
};

/// One `lidx bench --on-disk --updatable` run.
fn run(
    context: &Context,
    dataset: &str,
    index: &str,
    workload: &str,
    device: &str,
    resident: &str,
) -> Step {
    Step::new(StepOutput::Records, &["bench", "--on-disk", "--updatable"])
        .arg("--dataset", dataset)
        .arg("--index", index)
        .arg("--workload", workload)
        .arg("--device", device)
        .arg("--resident", resident)
        .arg("--queries", &context.ops)
        .arg("--runs", "1")
}

/// What names a line: the fields of an [`crate::records::DiskUpdateRecord`] that vary.
/// The device's description names its cache and block size too, so only the plots that
/// compare devices (Fig. 3, 5) name lines by it.
const LINE: &[&str] = &["dataset", "workload", "index"];
const LINE_BY_DEVICE: &[&str] = &["dataset", "device", "workload", "index"];

const THROUGHPUT: Axis = Axis::of(
    "throughput (Kops/s, modeled)",
    &["modeled_ops_per_s", "wall_ops_per_s"],
)
.scaled(1e-3);
const READ_BLOCKS: Axis = Axis::of("blocks read per operation", &["read_blocks_per_op"]);
const WRITE_BLOCKS: Axis = Axis::of("blocks written per operation", &["write_blocks_per_op"]);
const INDEX_BYTES: Axis = Axis::of(
    "index bytes after the bulk load (log scale)",
    &["index_bytes"],
)
.log_bytes();

/// One plot of paper-003 records, a line per dataset, workload and index.
const fn plot(name: &'static str, x: X, ys: &'static [Axis], y_caption: &'static str) -> Lines {
    Lines {
        name,
        x,
        ys,
        y_caption,
        line: LINE,
    }
}

/// The same, a line per device too.
const fn plot_by_device(
    name: &'static str,
    x: X,
    ys: &'static [Axis],
    y_caption: &'static str,
) -> Lines {
    Lines {
        line: LINE_BY_DEVICE,
        ..plot(name, x, ys, y_caption)
    }
}

const FIG3: &[Lines] = &[plot_by_device(
    "throughput",
    X::Field(READ_BLOCKS),
    &[THROUGHPUT],
    "throughput (Kops/s, modeled)",
)];
const TABLE4: &[Lines] = &[plot(
    "blocks",
    X::Series,
    &[
        Axis::of("inner", &["inner_read_per_op"]),
        Axis::of("leaf", &["leaf_read_per_op"]),
        READ_BLOCKS,
    ],
    "blocks read per operation",
)];
const FIG5: &[Lines] = &[plot_by_device(
    "throughput",
    X::Field(WRITE_BLOCKS),
    &[THROUGHPUT],
    "throughput (Kops/s, modeled)",
)];
const FIG6: &[Lines] = &[plot(
    "breakdown",
    X::Series,
    &[
        Axis::of("search", &["search_us"]),
        Axis::of("insert", &["insert_us"]),
        Axis::of("SMO", &["smo_us"]),
        Axis::of("maintenance", &["maintenance_us"]),
    ],
    "time per write (us)",
)];
const FIG7: &[Lines] = &[plot(
    "bulkload",
    X::Field(INDEX_BYTES),
    &[Axis::of("bulk load", &["build_s"])],
    "bulk-load time (s)",
)];
const FIG10: &[Lines] = &[plot(
    "storage",
    X::Field(INDEX_BYTES),
    &[Axis::of("storage", &["storage_bytes"]).scaled(1.0 / 1048576.0)],
    "MiB on disk after the operations",
)];
const FIG11: &[Lines] = &[plot(
    "blocks",
    X::Field(Axis::of("block size (bytes)", &["block_size"])),
    &[READ_BLOCKS],
    "blocks read per lookup",
)];
const FIG12: &[Lines] = &[plot(
    "latency",
    X::Series,
    &[
        Axis::of("mean", &["modeled_us", "wall_us"]),
        Axis::of("p99", &["modeled_p99_us", "wall_p99_us"]),
        Axis::of("stddev", &["modeled_stddev_us", "wall_stddev_us"]),
    ],
    "latency (us, modeled)",
)];
const FIG13: &[Lines] = &[plot(
    "blocks",
    X::Field(Axis::of("LRU cache (blocks per file)", &["cache_blocks"])),
    &[READ_BLOCKS],
    "blocks read per lookup",
)];

/// A plan of `run` over every dataset and each (index list, workload, device, resident)
/// setting, once per extra `(flag, value)` when there are any.
fn plan(
    context: &Context,
    settings: &[(&str, &str, &str, &str)],
    extra: &[(&str, &str)],
    figure: &'static [Lines],
) -> Plan {
    let mut steps = Vec::new();
    for dataset in &context.datasets {
        for &(index, workload, device, resident) in settings {
            let base = run(context, dataset, index, workload, device, resident);
            if extra.is_empty() {
                steps.push(base.clone());
            }
            for &(flag, value) in extra {
                steps.push(base.clone().arg(flag, value));
            }
        }
    }
    Plan {
        steps,
        figure: Figure::Lines(figure),
        files: Vec::new(),
    }
}

fn fig3(c: &Context) -> Plan {
    let settings = [
        (ALL_ON_DISK, "lookup", "sim:hdd", "none"),
        (ALL_ON_DISK, "lookup", "sim:sata-ssd", "none"),
        (ALL_ON_DISK, "scan", "sim:hdd", "none"),
        (ALL_ON_DISK, "scan", "sim:sata-ssd", "none"),
    ];
    plan(c, &settings, &[], FIG3)
}

fn table4(c: &Context) -> Plan {
    let settings = [
        (ALL_ON_DISK, "lookup", "sim:hdd", "none"),
        (ALL_ON_DISK, "scan", "sim:hdd", "none"),
        (INNER_IN_MEMORY, "lookup", "sim:hdd", "inner"),
        (INNER_IN_MEMORY, "scan", "sim:hdd", "inner"),
    ];
    plan(c, &settings, &[], TABLE4)
}

fn table5(c: &Context) -> Plan {
    let settings = [
        ("btree,btree-learned", "lookup", "sim:hdd", "inner"),
        ("btree,btree-learned", "scan", "sim:hdd", "inner"),
    ];
    plan(c, &settings, &[], TABLE4)
}

fn fig5(c: &Context) -> Plan {
    let mut settings = Vec::new();
    for device in ["sim:hdd", "sim:sata-ssd"] {
        for workload in ["write-only", "read-heavy", "write-heavy", "balanced"] {
            settings.push((ALL_ON_DISK, workload, device, "none"));
        }
    }
    plan(c, &settings, &[], FIG5)
}

fn fig6(c: &Context) -> Plan {
    let settings = [(ALL_ON_DISK, "write-only", "sim:hdd", "none")];
    plan(c, &settings, &[], FIG6)
}

fn fig7(c: &Context) -> Plan {
    let settings = [(INNER_IN_MEMORY, "lookup", "sim:hdd", "inner")];
    plan(c, &settings, &[], FIG7)
}

fn fig10(c: &Context) -> Plan {
    let settings = [
        (ALL_ON_DISK, "write-only", "sim:hdd", "none"),
        (ALL_ON_DISK, "balanced", "sim:hdd", "none"),
    ];
    plan(c, &settings, &[], FIG10)
}

fn fig11(c: &Context) -> Plan {
    let settings = [(ALL_ON_DISK, "lookup", "sim:hdd", "none")];
    let sizes = [
        ("--block-size", "1024"),
        ("--block-size", "2048"),
        ("--block-size", "4096"),
        ("--block-size", "8192"),
        ("--block-size", "16384"),
    ];
    plan(c, &settings, &sizes, FIG11)
}

fn fig12(c: &Context) -> Plan {
    let settings = [
        (ALL_ON_DISK, "lookup", "sim:hdd", "none"),
        (ALL_ON_DISK, "write-only", "sim:hdd", "none"),
    ];
    plan(c, &settings, &[], FIG12)
}

fn fig13(c: &Context) -> Plan {
    let settings = [(ALL_ON_DISK, "lookup", "sim:hdd", "none")];
    let caches = [
        ("--cache-blocks", "0"),
        ("--cache-blocks", "2"),
        ("--cache-blocks", "8"),
        ("--cache-blocks", "32"),
        ("--cache-blocks", "128"),
    ];
    plan(c, &settings, &caches, FIG13)
}

/// Paper 003's experiments.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "003-fig3",
        title: "Search Performance Comparison on HDD and SSD: the entire index is disk-resident using blocks of size 4KB",
        section: "§6.1.1-6.1.2",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig3),
    },
    Experiment {
        id: "003-table4",
        title: "An Analysis of Fetched Block Counts for Lookup-Only and Scan-Only Workloads",
        section: "§6.1.1, §6.2.1",
        small: SMALL,
        full: FULL,
        status: Status::Ready(table4),
    },
    Experiment {
        id: "003-table5",
        title: "An Average Fetched Block Count for Search on HDD under the Hybrid Design (learned-inner B+-tree only)",
        section: "§6.1.2",
        small: SMALL,
        full: FULL,
        status: Status::Ready(table5),
    },
    Experiment {
        id: "003-fig5",
        title: "Write Performance Comparison on HDD and SSD: the entire index is disk-resident using blocks of size 4KB",
        section: "§6.1.3-6.1.4",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig5),
    },
    Experiment {
        id: "003-fig6",
        title: "Write Performance Breakdown",
        section: "§6.1.3",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig6),
    },
    Experiment {
        id: "003-fig7",
        title: "Bulkload Performance on HDD",
        section: "§6.1.5",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig7),
    },
    Experiment {
        id: "003-fig10",
        title: "Storage Usage on Disk: the entire index is disk-resident using blocks of size 4KB",
        section: "§6.3",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig10),
    },
    Experiment {
        id: "003-fig11",
        title: "Fetched Block Count under Different Block Sizes",
        section: "§6.4",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig11),
    },
    Experiment {
        id: "003-fig12",
        title: "Tail Latency of the Lookup-Only Workload and Write-Only Workload on HDD",
        section: "§6.5",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig12),
    },
    Experiment {
        id: "003-fig13",
        title: "An Average Fetched Block Count from Disk under Different Buffer Sizes on the Lookup-Only Workload",
        section: "§6.6",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig13),
    },
];
