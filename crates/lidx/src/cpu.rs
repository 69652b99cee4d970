//! What lookups assume about the core they run on: how many cache misses it keeps in flight.
//!
//! A lookup in an array larger than the caches is a chain of misses, and the learned indexes
//! ask for lines before they read them (software prefetches, [`crate::search`]) so that the
//! misses overlap. A core has a fixed number of slots for misses of its own (fill buffers on
//! Intel cores, miss address buffers on AMD's); a line asked for but never read holds one of
//! them, and delays the lines of the lookups after it. So the number of lines worth asking
//! for is a property of the core, and the two kinds of machine lidx is measured on differ:
//!
//! * On the 2-core Intel Xeon VM of sessions 53-60 (family 6 model 167), the PGM's last mile
//!   was fastest with the 12 lines around the prediction (of its window's 18), and a bottom
//!   level too large for the caches was faster without its window prefetched. On a second
//!   Intel Xeon VM (model 207, session 71) that choice, with session 64's layout below, took
//!   0.35-0.92x the C++ PGM-index's time on all eleven key sets; 16 lines were not tried there.
//! * On the 2-core AMD EPYC VMs (Zen 3, Zen 4, Zen 5) more lines in flight pay: on the Zen 3
//!   VM (session 61) 16 lines around the prediction beat 12 on all ten key sets measured, and
//!   the bottom level's window prefetch, which had helped on Zen 4 and Zen 5, helped again; on
//!   the Zen 5 VM (session 62) 16 beat 12 on nine of eleven, and the choice was within the
//!   noise of the best variant on all eleven. Since the PGM keeps each segment's model beside
//!   its first key (session 64), no core prefetches the bottom level's window: on the Zen 5
//!   VM it then cost time on four of the six key sets that took it, and was within the noise
//!   on the other two.
//!
//! The figures are in [`crate::mem::Pgm`]'s docs and `docs/results/cpp-references.md`. The
//! choice is made from the vendor the processor reports (CPUID leaf 0), once per process:
//! AMD's (and Hygon's, whose cores are Zen) keep many misses in flight, every other core is
//! taken to keep few. Prefetches are hints, so the choice changes timings only, never an
//! answer.

use std::sync::OnceLock;

/// Whether this core keeps many misses in flight (AMD's Zen cores): lookups then ask for more
/// lines ahead of their loads. Read once per process and cached (CPUID exits to the
/// hypervisor in a VM, so it is not cheap).
pub(crate) fn many_misses_in_flight() -> bool {
    static MANY: OnceLock<bool> = OnceLock::new();
    *MANY.get_or_init(|| is_zen(&vendor()))
}

/// Whether a CPUID vendor string names a Zen core's maker.
fn is_zen(vendor: &[u8; 12]) -> bool {
    vendor == b"AuthenticAMD" || vendor == b"HygonGenuine"
}

/// The processor's vendor string (CPUID leaf 0: EBX, EDX, ECX).
#[cfg(target_arch = "x86_64")]
fn vendor() -> [u8; 12] {
    let r = std::arch::x86_64::__cpuid(0);
    let mut v = [0u8; 12];
    v[..4].copy_from_slice(&r.ebx.to_le_bytes());
    v[4..8].copy_from_slice(&r.edx.to_le_bytes());
    v[8..].copy_from_slice(&r.ecx.to_le_bytes());
    v
}

/// No vendor to read off other architectures: their cores are taken to keep few misses.
#[cfg(not(target_arch = "x86_64"))]
fn vendor() -> [u8; 12] {
    [0; 12]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zen_makers_are_recognised() {
        assert!(is_zen(b"AuthenticAMD"));
        assert!(is_zen(b"HygonGenuine"));
        assert!(!is_zen(b"GenuineIntel"));
        assert!(!is_zen(&[0; 12]));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vendor_is_read_in_cpuid_order() {
        // Every x86-64 vendor string is printable ASCII ("GenuineIntel", "AuthenticAMD", ...).
        let v = vendor();
        assert!(v.iter().all(|b| b.is_ascii_graphic()), "{v:?}");
        assert_eq!(many_misses_in_flight(), is_zen(&v));
    }
}
