//! [`AlexParams`]: ALEX's tuning knobs, with the reference implementation's defaults.

use crate::error::{Error, Result};

/// Tuning parameters of an [`super::Alex`] map. Fractions are whole percents.
///
/// Defaults are those of the reference implementation (`microsoft/ALEX`): 16 MiB nodes,
/// densities 60 / 70 / 80 %, a write-heavy expected workload (100 % inserts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlexParams {
    /// Largest node in bytes: a data node holds at most `max_node_bytes / size_of::<(K, V)>()`
    /// slots and an inner node at most `max_node_bytes / 8` children (a power of two). Larger
    /// nodes make a shallower tree and faster average operations, at the price of longer
    /// worst-case inserts (one expansion or split copies a whole node). Default 16 MiB; at
    /// least 4 KiB, at most 1 GiB.
    pub max_node_bytes: usize,
    /// Density of a data node after it grows (its slots that hold keys, in percent); below it,
    /// a node shrinks. Lower leaves more gaps: fewer shifts per insert, more memory.
    pub min_density_percent: u32,
    /// Density of data nodes after a bulk load, in percent.
    pub init_density_percent: u32,
    /// Density at which a data node grows (or splits) before the next insert, in percent;
    /// also its density after it shrinks.
    pub max_density_percent: u32,
    /// Share of inserts the cost model expects among operations, in percent (0 = read-only):
    /// more makes the bulk load favour smaller nodes with fewer shifts.
    pub expected_insert_percent: u32,
}

impl Default for AlexParams {
    fn default() -> Self {
        AlexParams {
            max_node_bytes: 1 << 24,
            min_density_percent: 60,
            init_density_percent: 70,
            max_density_percent: 80,
            expected_insert_percent: 100,
        }
    }
}

/// The parameters as the algorithm uses them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Derived {
    pub(crate) max_data_slots: usize,
    pub(crate) max_fanout: usize,
    pub(crate) min_density: f64,
    pub(crate) init_density: f64,
    pub(crate) max_density: f64,
    pub(crate) insert_fraction: f64,
}

impl Derived {
    /// Most keys a bulk-loaded data node may hold.
    pub(crate) fn max_data_keys(&self) -> usize {
        (self.max_data_slots as f64 * self.init_density) as usize
    }
}

impl AlexParams {
    /// Checks the parameters and derives node limits for slots of `slot_bytes` bytes.
    pub(crate) fn derive(&self, slot_bytes: usize) -> Result<Derived> {
        if !(4096..=1 << 30).contains(&self.max_node_bytes) {
            return Err(Error::InvalidParameter {
                name: "max_node_bytes",
                value: self.max_node_bytes.to_string(),
                expected: "4096 to 1073741824 bytes",
            });
        }
        let (lo, init, hi) = (
            self.min_density_percent,
            self.init_density_percent,
            self.max_density_percent,
        );
        if !(0 < lo && lo < init && init < hi && hi < 100) {
            return Err(Error::InvalidParameter {
                name: "density_percent",
                value: format!("{lo}/{init}/{hi}"),
                expected: "0 < min < init < max < 100 (percent)",
            });
        }
        if self.expected_insert_percent > 100 {
            return Err(Error::InvalidParameter {
                name: "expected_insert_percent",
                value: self.expected_insert_percent.to_string(),
                expected: "0 to 100 (percent)",
            });
        }
        let max_fanout = 1usize << (self.max_node_bytes / 8).ilog2();
        Ok(Derived {
            max_data_slots: (self.max_node_bytes / slot_bytes.max(1)).max(64),
            max_fanout,
            min_density: f64::from(lo) / 100.0,
            init_density: f64::from(init) / 100.0,
            max_density: f64::from(hi) / 100.0,
            insert_fraction: f64::from(self.expected_insert_percent) / 100.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_reference_and_bad_values_are_refused() {
        let d = AlexParams::default().derive(16).unwrap();
        assert_eq!((d.max_data_slots, d.max_fanout), (1 << 20, 1 << 21));
        for bad in [
            AlexParams {
                max_node_bytes: 100,
                ..AlexParams::default()
            },
            AlexParams {
                min_density_percent: 75,
                ..AlexParams::default()
            },
            AlexParams {
                max_density_percent: 100,
                ..AlexParams::default()
            },
            AlexParams {
                expected_insert_percent: 101,
                ..AlexParams::default()
            },
        ] {
            assert!(matches!(
                bad.derive(16),
                Err(Error::InvalidParameter { .. })
            ));
        }
    }
}
