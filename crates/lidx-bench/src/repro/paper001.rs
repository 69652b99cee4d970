//! Paper 001 (Ge et al., *Cutting Learned Index into Pieces*): the end-to-end YCSB figures
//! on the `log` store engine over each updatable map (`lidx ycsb --store log:<map>`,
//! [`crate::kv_runner`]), recovery and space (`lidx recovery`, [`crate::recovery_runner`]),
//! and the design dimensions (`lidx dims`, [`crate::approx_dimension`],
//! [`crate::structure_dimension`], [`crate::insert_dimension`]).
//!
//! What differs from the paper: the store is lidx's `log` engine (a log of 200-byte values and
//! the map in memory, `docs/results/paper001.md`), not Viper on NVM; at `small` scale the log
//! is a buffered file in the scratch directory, so the figures are wall clock of a loaded
//! machine; 100K-400K keys instead of 200M-800M.

use crate::repro::plan::{
    Axis, Context, Experiment, Figure, Lines, Plan, Scale, Sizes, Status, Step, StepOutput, X,
};

/// The maps of the end-to-end figures, the B+-tree first (the reference).
const MAPS: &str =
    "log:btree,log:art,log:alex,log:lipp,log:dpgm,log:fiting-buffer,log:fiting-inplace,log:xindex";
/// The same maps by their `lidx bench --index` names, for `lidx recovery`.
const RECOVERY_MAPS: &str = "btree,art,alex,lipp,dpgm,fiting-buffer,fiting-inplace,xindex";

const YCSB_SMALL: Sizes = Sizes {
    datasets: &["gen:uniform-sparse:200K"],
    ops: "50K",
};
const YCSB_FULL: Sizes = Sizes {
    datasets: &["gen:uniform-sparse:2M"],
    ops: "1M",
};
const RECOVERY_SMALL: Sizes = Sizes {
    datasets: &[
        "gen:lognormal:100K",
        "gen:lognormal:200K",
        "gen:lognormal:400K",
    ],
    ops: "",
};
const RECOVERY_FULL: Sizes = Sizes {
    datasets: &["gen:lognormal:1M", "gen:lognormal:4M", "gen:lognormal:10M"],
    ops: "",
};
const DIMS_SMALL: Sizes = Sizes {
    datasets: &["gen:lognormal:200K"],
    ops: "100K",
};
const DIMS_FULL: Sizes = Sizes {
    datasets: &["gen:lognormal:10M"],
    ops: "1M",
};

/// `lidx ycsb` of every map on `workloads`, 200-byte values as the paper's.
fn ycsb(c: &Context, workloads: &str) -> Plan {
    let steps = c
        .datasets
        .iter()
        .map(|dataset| {
            Step::new(StepOutput::Records, &["ycsb"])
                .arg("--dataset", dataset)
                .arg("--store", MAPS)
                .arg("--workload", workloads)
                .arg("--payload-size", "200")
                .arg("--ops", &c.ops)
                .arg("--memory-budget", "1G")
                .arg(
                    "--device",
                    format!("file-buffered:{}", c.work().join("kv").display()),
                )
        })
        .collect();
    Plan {
        steps,
        figure: Figure::Charts,
        files: Vec::new(),
    }
}

fn fig10(c: &Context) -> Plan {
    ycsb(c, "c,c:uniform")
}

fn fig13(c: &Context) -> Plan {
    ycsb(c, "write-only")
}

fn fig15(c: &Context) -> Plan {
    ycsb(c, "a,b,d,f")
}

const RECOVERY_LINE: &[&str] = &["map"];
const FIG16: &[Lines] = &[Lines {
    name: "recovery",
    x: X::Field(Axis::of("keys", &["n"])),
    ys: &[Axis::of("recovery", &["recovery_s"])],
    y_caption: "recovery time (s)",
    line: RECOVERY_LINE,
}];
const TABLE3: &[Lines] = &[Lines {
    name: "space",
    x: X::Series,
    ys: &[
        Axis::of("index", &["index_bytes"]).scaled(1.0 / 1048576.0),
        Axis::of("index + keys", &["index_keys_bytes"]).scaled(1.0 / 1048576.0),
        Axis::of("index + keys + values", &["index_keys_values_bytes"]).scaled(1.0 / 1048576.0),
    ],
    y_caption: "MiB in memory",
    line: &["dataset", "map"],
}];

/// `lidx recovery` of every map on each dataset: one timed reopening at `small` scale, the
/// median of 3 at `full`.
fn recovery(c: &Context, figure: &'static [Lines]) -> Plan {
    let runs = match c.scale {
        Scale::Small => "1",
        Scale::Full => "3",
    };
    let steps = c
        .datasets
        .iter()
        .map(|dataset| {
            Step::new(StepOutput::Records, &["recovery"])
                .arg("--dataset", dataset)
                .arg("--index", RECOVERY_MAPS)
                .arg("--payload-size", "200")
                .arg("--runs", runs)
                .arg("--dir", c.work().join("stores"))
        })
        .collect();
    Plan {
        steps,
        figure: Figure::Lines(figure),
        files: Vec::new(),
    }
}

fn fig16(c: &Context) -> Plan {
    recovery(c, FIG16)
}

fn table3(c: &Context) -> Plan {
    recovery(c, TABLE3)
}

/// One `lidx dims` command of a plan.
struct DimsRun<'a> {
    /// `approx`, `structure`, `insert`, `retrain`.
    dimension: &'a str,
    /// Arguments besides the dataset and the runs.
    args: &'a [&'a str],
    /// The SVGs it draws: `(flag, suffix)`, `--svg` into `<id>-<suffix>.svg`.
    svgs: &'a [(&'a str, &'a str)],
}

/// `lidx dims` runs on each dataset, with their SVGs drawn for the first dataset only.
fn dims(c: &Context, runs: &[DimsRun<'_>]) -> Plan {
    let mut steps = Vec::new();
    let mut files = Vec::new();
    for (d, dataset) in c.datasets.iter().enumerate() {
        for run in runs {
            let mut step = Step::new(StepOutput::Records, &["dims", run.dimension])
                .arg("--dataset", dataset)
                .arg("--runs", "1");
            step.args.extend(run.args.iter().map(|a| a.to_string()));
            if d == 0 {
                for &(flag, suffix) in run.svgs {
                    let file = c.staged(&format!("-{suffix}.svg"));
                    step = step.arg(flag, &file);
                    files.push(file);
                }
            }
            steps.push(step);
        }
    }
    Plan {
        steps,
        figure: Figure::ByCommand,
        files,
    }
}

fn fig17(c: &Context) -> Plan {
    let queries = ["--queries", c.ops.as_str()];
    dims(
        c,
        &[
            DimsRun {
                dimension: "approx",
                args: &queries,
                svgs: &[("--svg-time", "17b-time"), ("--svg-leaves", "17a-leaves")],
            },
            DimsRun {
                dimension: "structure",
                args: &queries,
                svgs: &[("--svg", "17c-structure")],
            },
        ],
    )
}

fn fig18(c: &Context) -> Plan {
    dims(
        c,
        &[
            DimsRun {
                dimension: "insert",
                args: &[],
                svgs: &[("--svg", "18a-insert")],
            },
            DimsRun {
                dimension: "retrain",
                args: &[],
                svgs: &[
                    ("--svg-progress", "18b-progress"),
                    ("--svg-count", "18c-count"),
                    ("--svg-total", "18c-total"),
                    ("--svg-average", "18c-average"),
                    ("--svg-tradeoff", "18d-tradeoff"),
                ],
            },
        ],
    )
}

/// Paper 001's experiments.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "001-fig10",
        title: "The end-to-end evaluation driven by read-only workloads",
        section: "§III-B",
        small: YCSB_SMALL,
        full: YCSB_FULL,
        status: Status::Ready(fig10),
    },
    Experiment {
        id: "001-fig13",
        title: "The end-to-end evaluation results driven by write-only workloads",
        section: "§III-C",
        small: YCSB_SMALL,
        full: YCSB_FULL,
        status: Status::Ready(fig13),
    },
    Experiment {
        id: "001-fig15",
        title: "The end-to-end evaluation driven by read-write-mixed workloads",
        section: "§III-D",
        small: YCSB_SMALL,
        full: YCSB_FULL,
        status: Status::Ready(fig15),
    },
    Experiment {
        id: "001-fig16",
        title: "The recover time of traditional and learned indexes",
        section: "§III-E2",
        small: RECOVERY_SMALL,
        full: RECOVERY_FULL,
        status: Status::Ready(fig16),
    },
    Experiment {
        id: "001-table3",
        title: "The space overhead of typical indexes",
        section: "§III-E1",
        small: RECOVERY_SMALL,
        full: RECOVERY_FULL,
        status: Status::Ready(table3),
    },
    Experiment {
        id: "001-fig17",
        title: "The performance of the Learned indexes (approximation algorithms, structures)",
        section: "§IV-A, §IV-B",
        small: DIMS_SMALL,
        full: DIMS_FULL,
        status: Status::Ready(fig17),
    },
    Experiment {
        id: "001-fig18",
        title: "The performance of the insertion and retraining strategy",
        section: "§IV-D, §IV-E, §IV-F",
        small: DIMS_SMALL,
        full: DIMS_FULL,
        status: Status::Ready(fig18),
    },
];
