//! The clock of [`super::WriteBreakdown`]: where an updatable index's write time goes (paper 003
//! §6.1.3, Figure 6), phase by phase.
//!
//! Paper 003 times the four steps of a write (search, insertion, structural modification,
//! maintenance) on a real disk, where the time of a step includes its I/O. On a simulated
//! device the I/O costs no wall time, only modeled time ([`crate::io::sim::thread_modeled_ns`]),
//! so a wall clock alone would show where the CPU time goes and hide the device. A
//! [`PhaseClock`] reads both: a phase's time is its wall time plus the modeled device time of
//! the requests this thread issued in it (zero on a real file, whose requests take wall time).
//! One `Instant` read and one thread-local read per phase, so it can run on every write.

use std::time::Instant;

use crate::io::sim::thread_modeled_ns;

/// Wall time plus this thread's modeled device time, split into laps (module docs).
#[derive(Clone, Copy, Debug)]
pub struct PhaseClock {
    wall: Instant,
    modeled: u64,
}

impl PhaseClock {
    /// A clock whose first lap starts now.
    pub fn start() -> Self {
        PhaseClock {
            wall: Instant::now(),
            modeled: thread_modeled_ns(),
        }
    }

    /// Nanoseconds since the start or the previous lap (wall + modeled device time); the next
    /// lap starts now.
    pub fn lap(&mut self) -> u64 {
        let next = PhaseClock::start();
        let ns = next.wall.duration_since(self.wall).as_nanos() as u64
            + next.modeled.saturating_sub(self.modeled);
        *self = next;
        ns
    }
}
