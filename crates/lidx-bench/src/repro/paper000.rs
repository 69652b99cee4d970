//! Paper 000 (Chesetti & Pandey, *Evaluating Learned Indexes for External-Memory Joins*): its
//! join figures as `lidx table create` (the larger table and samples of it at each size ratio)
//! followed by `lidx join` runs, each printing one `join` record ([`crate::records::JoinRecord`]);
//! every join's output is checked by the command against the keys.
//!
//! What differs from the paper: a simulated SATA SSD (`sim:sata-ssd`, paper 002's Table 2
//! profile) instead of its SSD, so the tables sit in memory and each request is charged the
//! model's time; generated lognormal keys instead of FB / OSM / books / wiki unless `--dataset`
//! names real data; at `small` scale 500K keys instead of 800M; the thread counts stop at 2
//! (the machine's cores).

use crate::repro::plan::{
    Axis, Context, Experiment, Figure, Lines, Plan, Sizes, Status, Step, StepOutput, X,
};

const SMALL: Sizes = Sizes {
    datasets: &["gen:lognormal:500K"],
    ops: "",
};
const FULL: Sizes = Sizes {
    datasets: &["gen:lognormal:50M"],
    ops: "",
};

const DEVICE: &str = "sim:sata-ssd";
const JOIN_SECONDS: Axis = Axis::of("join", &["join_seconds"]);
const LINE: &[&str] = &["dataset", "algo", "window", "threads"];

/// The tables of one dataset, then one `lidx join` per (algorithm, ratio, threads, window).
fn joins(c: &Context, ratios: &[&str], runs: &[(&str, &str, Option<&str>)]) -> Plan {
    let mut steps = Vec::new();
    for (d, dataset) in c.datasets.iter().enumerate() {
        let dir = c.work().join(format!("tables{d}"));
        steps.push(
            Step::new(StepOutput::Nothing, &["table", "create", "--force"])
                .arg("--from", dataset)
                .arg("--ratio", ratios.join(","))
                .arg("--out", format!("{}/", dir.display())),
        );
        for ratio in ratios {
            for &(algo, threads, window) in runs {
                let mut step = Step::new(StepOutput::Stdout, &["join", "--force"])
                    .arg("--algo", algo)
                    .arg("--left", dir.join(format!("r{ratio}")))
                    .arg("--right", dir.join("large"))
                    .arg("--out", c.work().join("joined"))
                    .arg("--threads", threads)
                    .arg("--device", DEVICE);
                if let Some(window) = window {
                    step = step.arg("--window", window);
                }
                steps.push(step);
            }
        }
    }
    Plan {
        steps,
        figure: Figure::Lines(FIGURES),
        files: Vec::new(),
    }
}

/// Every join plan draws time against the smaller table's size, and against index memory.
const FIGURES: &[Lines] = &[
    Lines {
        name: "time",
        x: X::Field(Axis::of("rows of the smaller table (log scale)", &["left_count"]).log_bytes()),
        ys: &[JOIN_SECONDS],
        y_caption: "join time (s)",
        line: LINE,
    },
    Lines {
        name: "index",
        x: X::Field(Axis::of("index memory (bytes, log scale)", &["index_bytes"]).log_bytes()),
        ys: &[JOIN_SECONDS, Axis::of("index build", &["index_seconds"])],
        y_caption: "seconds",
        line: LINE,
    },
];

const ALGOS: [&str; 7] = [
    "sort-merge",
    "hash",
    "inlj-btree",
    "inlj-pgm",
    "inlj-sampled-pgm",
    "inlj-rs",
    "inlj-rmi",
];
const INDEXED: [&str; 5] = [
    "inlj-btree",
    "inlj-pgm",
    "inlj-sampled-pgm",
    "inlj-rs",
    "inlj-rmi",
];

fn fig3(c: &Context) -> Plan {
    let runs: Vec<_> = ALGOS.iter().map(|a| (*a, "1", None)).collect();
    joins(c, &["1", "10", "100"], &runs)
}

fn fig5(c: &Context) -> Plan {
    let mut runs = Vec::new();
    for threads in ["1", "2"] {
        for algo in [
            "sort-merge",
            "hash",
            "inlj-btree",
            "inlj-pgm",
            "inlj-sampled-pgm",
        ] {
            runs.push((algo, threads, None));
        }
    }
    joins(c, &["10"], &runs)
}

fn fig6(c: &Context) -> Plan {
    let mut runs = Vec::new();
    for window in ["256", "1024", "4096"] {
        for algo in ["inlj-pgm", "inlj-sampled-pgm", "inlj-rs"] {
            runs.push((algo, "1", Some(window)));
        }
    }
    joins(c, &["10"], &runs)
}

fn fig7(c: &Context) -> Plan {
    let runs: Vec<_> = INDEXED.iter().map(|a| (*a, "1", None)).collect();
    joins(c, &["10"], &runs)
}

fn table2(c: &Context) -> Plan {
    let runs: Vec<_> = ["64", "256", "1024", "4096"]
        .iter()
        .map(|w| ("inlj-pgm", "1", Some(*w)))
        .collect();
    joins(c, &["10"], &runs)
}

/// Paper 000's experiments.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "000-fig3",
        title: "Performance comparison of various join methods for increasing table size ratios",
        section: "§6.2",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig3),
    },
    Experiment {
        id: "000-fig5",
        title: "Performance of join methods as the number of threads increase",
        section: "§6.4",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig5),
    },
    Experiment {
        id: "000-fig6",
        title: "Performance of learned index-based join with various search window sizes",
        section: "§6.5",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig6),
    },
    Experiment {
        id: "000-fig7",
        title: "Index size, build time and performance of learned indexes and B-tree",
        section: "§6.6",
        small: SMALL,
        full: FULL,
        status: Status::Ready(fig7),
    },
    Experiment {
        id: "000-table2",
        title: "Index size of PGM index as search window size varies",
        section: "§6.5",
        small: SMALL,
        full: FULL,
        status: Status::Ready(table2),
    },
];
