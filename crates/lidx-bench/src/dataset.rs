//! (to be written) Dataset specs and loading.

use crate::error::Result;

/// A loaded dataset: sorted u64 keys and what produced them.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Name for reports, e.g. `lognormal:10M` or a file name.
    pub name: String,
    /// Sorted keys (duplicates possible).
    pub keys: Vec<u64>,
    /// Facts about how it was made (e.g. the segment counts a `gre:` generator produced).
    pub notes: Vec<String>,
}

/// Loads `spec` (`gen:<generator>:<count>` or a path to an SOSD file) with `seed`.
pub fn load(spec: &str, seed: u64) -> Result<Dataset> {
    let _ = (spec, seed);
    todo!()
}
