//! `lidx repro`: the papers' headline tables and figures as named experiments ([`plan`]: the
//! registry and its types; one file per paper), run by the existing commands and turned into
//! CSV, SVG and the records `lidx report` reads ([`render`]).

pub mod paper000;
pub mod paper001;
pub mod paper002;
pub mod paper003;
pub mod paper004;
pub mod plan;
pub mod render;

pub use plan::{all, select, Experiment, Plan, Scale, Status, Step, StepOutput};
