//! Counts as people write them on a command line: `10M` keys, `leaves=1Mi`, `--queries 500K`.
//!
//! One parser for every count lidx-bench reads (dataset sizes, index parameters, query counts):
//! digits (with optional `_` separators) and an optional suffix, `K`/`M`/`G` (either case) for
//! powers of 1000 or `Ki`/`Mi`/`Gi` for powers of 1024. No sign, no fraction, no surrounding
//! blanks; an overflowing value is refused.

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
