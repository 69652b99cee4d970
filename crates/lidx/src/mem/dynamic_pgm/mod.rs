//! The dynamic PGM-index: an updatable ordered map of LSM-style levels, each a sorted run with
//! its own static PGM (paper 001 §II-B, the "LRS" structure and PGM's offsite insertion;
//! paper 003 §2, Figure 1(b)). `map` says how levels fill and merge and how deletes work.

mod level;
mod map;
mod params;
mod range;

pub use map::DynamicPgm;
pub use params::DynamicPgmParams;
pub use range::Range;
