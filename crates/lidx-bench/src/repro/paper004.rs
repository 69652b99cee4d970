//! Paper 004 (Fent et al., *START - Self-Tuning Adaptive Radix Tree*): the read-only
//! comparison of ART, START, RMI and RadixSpline (`lidx bench`, [`crate::runner`], every
//! lookup checked against binary search).
//!
//! What differs from the paper: generated SOSD-like keys (lognormal, uniform-dense, normal,
//! GRE) unless `--dataset` names real ones; START's cost model is the paper's Table I unless
//! `LIDX_START_COST_MODEL` names one measured by `lidx start calibrate`; 1M keys at `small`
//! scale instead of 200M. Table I (`lidx start calibrate`) and Fig. 8 (`lidx start bench`)
//! print tables but write no records, so they are listed as not reproducible yet.

use crate::repro::plan::{Context, Experiment, Figure, Plan, Sizes, Status, Step, StepOutput};

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

/// Paper 004's experiments.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "004-table1",
        title: "Performance evaluation of the individual nodes (node lookup costs)",
        section: "§V",
        small: SMALL,
        full: FULL,
        status: Status::NotYet(
            "`lidx start calibrate` measures the node costs but only prints them and saves the \
             cost model as text; it writes no records, so there is no CSV or SVG to make",
        ),
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
        status: Status::NotYet(
            "`lidx start bench` runs the read-mostly workload but only prints a table; it \
             writes no records, so there is no CSV or SVG to make",
        ),
    },
];
