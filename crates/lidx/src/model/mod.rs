//! CDF approximation: the models learned indexes are made of.
//!
//! All models work on model-space keys ([`crate::Key::to_model`]) and the CDF points of
//! `points`, which fix how duplicates are treated once for every algorithm.

pub(crate) mod greedy_pla;
pub(crate) mod leco;
pub(crate) mod linear;
pub(crate) mod lsa;
pub(crate) mod opt_pla;
pub(crate) mod points;
pub(crate) mod segment;
pub(crate) mod spline;
pub(crate) mod zero_interval;

pub use greedy_pla::greedy_pla;
pub use leco::{LecoArray, LecoParams};
pub use linear::LinearModel;
pub use lsa::{lsa, LsaSegment};
pub use opt_pla::{optimal_pla, optimal_pla_points};
pub use points::{cdf_points, CdfPoint, CdfPoints};
pub use segment::Segment;
pub use spline::spline_points;
