//! [`RetrainStats`]: how often an updatable learned map rebuilt models while it was updated, and
//! how long that took — the quantities of paper 001 §IV-E (Fig. 18 (b), (c): retraining count,
//! average and total time while inserting).
//!
//! A FITing-tree counts one retrain per segment it re-segments (a full in-place segment or a
//! full delta buffer); the dynamic PGM counts one per merge of its levels (each merge rebuilds
//! the target level's PGM). Time is wall-clock time of the rebuild, model fitting and data
//! movement included, measured with [`std::time::Instant`]. ALEX counts its node reshapes in
//! the same unit ([`crate::mem::AlexRetrains`]).
//!
//! It lives in `mem`, beside the maps that count with it, rather than inside one of them, so
//! that no map imports another's internals for it; its public path stays
//! [`crate::mem::RetrainStats`].

use std::time::{Duration, Instant};

/// Retraining counters of an updatable learned map. See the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetrainStats {
    /// Number of retrains since the map was built.
    pub count: u64,
    /// Their total wall-clock time.
    pub total: Duration,
}

impl RetrainStats {
    /// Average time of one retrain (zero when there was none).
    pub fn average(&self) -> Duration {
        match u32::try_from(self.count) {
            Ok(0) => Duration::ZERO,
            Ok(n) => self.total / n,
            Err(_) => Duration::from_secs_f64(self.total.as_secs_f64() / self.count as f64),
        }
    }

    /// Counts one retrain that started at `start`.
    pub(crate) fn record(&mut self, start: Instant) {
        self.count += 1;
        self.total += start.elapsed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_divides_total_by_count() {
        let mut s = RetrainStats::default();
        assert_eq!(s.average(), Duration::ZERO);
        s.count = 4;
        s.total = Duration::from_millis(10);
        assert_eq!(s.average(), Duration::from_micros(2500));
    }
}
