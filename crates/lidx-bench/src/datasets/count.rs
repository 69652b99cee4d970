//! Counts as people write them on a command line: `10M` keys, `leaves=1Mi`, `--queries 500K`.
//!
//! One parser for every count lidx-bench reads (dataset sizes, index parameters, query counts),
//! the library's [`lidx::spec::parse_count`]: digits and an optional `K`/`M`/`G` or `Ki`/`Mi`/`Gi`
//! suffix.
//!
//! A count that sizes an allocation is checked against the memory the machine has
//! ([`check_fits`]) before anything is allocated, so `gen:lognormal:99999999999999` is a
//! usage error that says what fits instead of an abort when the allocation fails.

use crate::error::BenchError;

pub use lidx::spec::{parse_count, show_count};

/// Refuses `count` items of `bytes_each` bytes each (what `what` will allocate) when they need
/// more than the memory available now plus free swap (`/proc/meminfo`; no check where it
/// cannot be read): a [`BenchError::TooLarge`] naming the largest count that fits.
pub fn check_fits(what: &'static str, count: u64, bytes_each: u64) -> Result<(), BenchError> {
    let Some(available) = available_memory() else {
        return Ok(());
    };
    let needed = u128::from(count) * u128::from(bytes_each.max(1));
    if needed <= u128::from(available) {
        return Ok(());
    }
    Err(BenchError::TooLarge {
        what,
        count,
        bytes: needed,
        available,
        fits: available / bytes_each.max(1),
    })
}

/// Bytes of memory available now plus free swap, from `/proc/meminfo`.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        kb.checked_mul(1024)
    };
    Some(field("MemAvailable:")?.saturating_add(field("SwapFree:").unwrap_or(0)))
}
