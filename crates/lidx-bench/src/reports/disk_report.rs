//! Reports of on-disk benchmarks: the [`DiskRecord`] schema and its terminal table.
//!
//! Records go to JSON lines or CSV through [`crate::report::write_records`], like the in-memory
//! [`crate::records::BenchRecord`]s. Times are microseconds, sizes bytes; `modeled_*` fields are
//! present only on simulated devices. Block counts are what reached the device (cache misses),
//! per operation; `inner` and `leaf` split them as paper 003 Table 4 does (a learned index's
//! data blocks count as leaf blocks).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::records::DiskRecord;

/// The terminal table of the key columns, one row per record.
pub fn table(records: &[DiskRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "memory",
        "disk",
        "free",
        "blocks/op",
        "inner",
        "leaf",
        "req/op",
        "wall us",
        "wall p99",
        "model us",
        "model p99",
        "Kops/s",
    ]);
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in records {
        let ops = r.modeled_ops_per_s.unwrap_or(r.wall_ops_per_s);
        table.add_row(vec![
            r.index.clone(),
            human_bytes(r.memory_bytes),
            human_bytes(r.disk_bytes),
            r.free_bytes.map_or("-".to_string(), human_bytes),
            format!("{:.3}", r.blocks_per_op),
            format!("{:.3}", r.inner_blocks_per_op),
            format!("{:.3}", r.leaf_blocks_per_op),
            format!("{:.3}", r.requests_per_op),
            format!("{:.1}", r.wall_us),
            format!("{:.1}", r.wall_p99_us),
            opt(r.modeled_us, 1),
            opt(r.modeled_p99_us, 1),
            format!("{:.2}", ops / 1e3),
        ]);
    }
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}

/// `1234567` -> `1.2 MB` (powers of 1000).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} KB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.2} GB", b / 1e9),
    }
}
