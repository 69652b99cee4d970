//! CDF approximation: the models learned indexes are made of.
//!
//! All models work on model-space keys ([`crate::Key::to_model`]) and the CDF points of
//! [`points`], which fix how duplicates are treated once for every algorithm.

pub mod greedy_pla;
pub mod leco;
pub mod linear;
pub mod lsa;
pub mod opt_pla;
pub mod points;
pub mod segment;
pub mod spline;
pub mod zero_interval;

pub use linear::LinearModel;
pub use points::{cdf_points, CdfPoint};
pub use segment::Segment;
