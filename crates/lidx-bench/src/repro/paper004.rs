//! Paper 004 (Fent et al., *START - Self-Tuning Adaptive Radix Tree*): the read-only
//! comparison of ART, START, RMI and RadixSpline (`lidx bench`, [`crate::runner`], every
//! lookup checked against binary search).
//!
//! What differs from the paper: generated SOSD-like keys (lognormal, uniform-dense, normal,
//! GRE) unless `--dataset` names real ones; START's cost model is the paper's Table I unless
//! `LIDX_START_COST_MODEL` names one measured by `lidx start calibrate`; 1M keys at `small`
//! scale instead of 200M. Table I is `lidx start calibrate --json` on this machine, beside the
//! paper's figures (one run: the node costs do not depend on a dataset); Fig. 8 is `lidx start
//! bench`, whose read-mostly workload is 5% inserts of latest-skewed keys and 95% uniform
//! lookups, reported as the whole run's time per operation rather than throughput over time
//! (see [`crate::start_runner`]).

use crate::dataset::parse_count;
use crate::repro::plan::{
    Axis, Context, Experiment, Figure, Lines, Plan, Sizes, Status, Step, StepOutput, X,
};

const SMALL: Sizes = Sizes {
    datasets: &[
        "gen:lognormal:1M",
        "gen:uniform-dense:1M",
        "gen:normal:1M",
        "gen:gre:l=10000,g=100:1M",
    ],
    ops: "500K",
};
const FULL: Sizes = Sizes {
    datasets: &[
        "gen:lognormal:50M",
        "gen:uniform-dense:50M",
        "gen:normal:50M",
        "gen:gre:l=100000,g=1000:50M",
    ],
    ops: "10M",
};

fn fig7(c: &Context) -> Plan {
    let steps = c
        .datasets
        .iter()
        .map(|dataset| {
            Step::new(StepOutput::Records, &["bench"])
                .arg("--dataset", dataset)
                .arg("--index", "sorted,art,start,rmi,rs")
                .arg("--queries", &c.ops)
                .arg("--runs", "3")
        })
        .collect();
    Plan {
        steps,
        figure: Figure::Charts,
        files: Vec::new(),
    }
}

const TABLE1: &[Lines] = &[Lines {
    name: "node-costs",
    x: X::Series,
    ys: &[
        Axis::of("cached", &["cached_ns"]),
        Axis::of("header cached", &["header_cached_ns"]),
        Axis::of("uncached", &["uncached_ns"]),
    ],
    y_caption: "ns per node traversal (measured here)",
    line: &["node"],
}];

fn table1(c: &Context) -> Plan {
    Plan {
        steps: vec![Step::new(
            StepOutput::Stdout,
            &["start", "calibrate", "--json", "--force"],
        )
        .arg("--out", c.work().join("start-cost-model.txt"))],
        figure: Figure::Lines(TABLE1),
        files: Vec::new(),
    }
}

const FIG8: &[Lines] = &[
    Lines {
        name: "time-per-op",
        x: X::Series,
        ys: &[
            Axis::of("insert", &["insert_ns"]),
            Axis::of("lookup", &["lookup_ns"]),
            Axis::of("all operations", &["mixed_op_ns"]),
        ],
        y_caption: "ns per operation (read-mostly: 5% inserts, 95% lookups)",
        line: &["dataset", "tree"],
    },
    Lines {
        name: "throughput",
        x: X::Series,
        ys: &[Axis::of("Mops/s", &["mixed_ops_per_s"]).scaled(1e-6)],
        y_caption: "read-mostly throughput (Mops/s)",
        line: &["dataset", "tree"],
    },
];

fn fig8(c: &Context) -> Plan {
    // The withheld keys are 5% of the operations, the lookups 95% (YCSB B's mix, §VI-B).
    let withhold = parse_count(&c.ops).map_or_else(|| c.ops.clone(), |ops| (ops / 19).to_string());
    let steps = c
        .datasets
        .iter()
        .map(|dataset| {
            Step::new(StepOutput::Records, &["start", "bench"])
                .arg("--dataset", dataset)
                .arg("--withhold", &withhold)
                .arg("--lookups", &c.ops)
                .arg("--runs", "3")
        })
        .collect();
    Plan {
        steps,
        figure: Figure::Lines(FIG8),
        files: Vec::new(),
    }
}

/// Paper 004's experiments.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "004-table1",
        title: "Performance evaluation of the individual nodes (node lookup costs)",
        section: "§V",
        small: SMALL,
        full: FULL,
        status: Status::Ready(table1),
    },
    Experiment {
        id: "004-fig7",
        title: "Read-only performance of a regular ART and START in comparison to RMIs and RadixSplines",
        section: "§VI-A",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig7),
    },
    Experiment {
        id: "004-fig8",
        title: "Mixed read and write workload performance of a regular and a self-tuning ART",
        section: "§VI-B",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig8),
    },
];
