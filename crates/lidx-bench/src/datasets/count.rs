//! Counts as people write them on a command line: `10M` keys, `leaves=1Mi`, `--queries 500K`.
//!
//! One parser for every count lidx-bench reads (dataset sizes, index parameters, query counts):
//! digits (with optional `_` separators) and an optional suffix, `K`/`M`/`G` (either case) for
//! powers of 1000 or `Ki`/`Mi`/`Gi` for powers of 1024. No sign, no fraction, no surrounding
//! blanks; an overflowing value is refused.
//!
//! A count that sizes an allocation is checked against the memory the machine has
//! ([`check_fits`]) before anything is allocated, so `gen:lognormal:99999999999999` is a
//! usage error that says what fits instead of an abort when the allocation fails.

use crate::error::BenchError;

/// Parses `123`, `64K`, `1M`, `2G`, `64Ki`, `1Mi`, `1Gi` (and `_` digit separators).
pub fn parse_count(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    let base: u64 = digits.parse().ok()?;
    let multiplier: u64 = match suffix {
        "" => 1,
        "K" | "k" => 1_000,
        "M" | "m" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return None,
    };
    base.checked_mul(multiplier)
}

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

/// `1000000` -> `1M`, `2000000000` -> `2G`, `1048576` -> `1Mi`; other values as plain digits.
pub fn show_count(v: u64) -> String {
    match v {
        0 => "0".to_string(),
        v if v % 1_000_000_000 == 0 => format!("{}G", v / 1_000_000_000),
        v if v % 1_000_000 == 0 => format!("{}M", v / 1_000_000),
        v if v % (1 << 30) == 0 => format!("{}Gi", v >> 30),
        v if v % (1 << 20) == 0 => format!("{}Mi", v >> 20),
        v => v.to_string(),
    }
}
