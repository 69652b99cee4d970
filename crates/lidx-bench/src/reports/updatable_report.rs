//! Reports of updatable on-disk indexes under paper 003's six workloads: the [`DiskUpdateRecord`]
//! schema, the ratios to the B+-tree of the same run, and the terminal table.
//!
//! One record per index and workload, with what paper 003 reports of it: blocks read and
//! written per operation split into inner and leaf (Table 4), requests, time and throughput
//! (Figs. 3, 5), where a write's time goes (Fig. 6, per write), bulk-load time and index size
//! (Fig. 7), storage after the writes (Fig. 10), p99 and standard deviation of the latency
//! (Fig. 12). Records go to JSON lines or CSV through [`crate::report::write_records`]; times
//! are microseconds, sizes bytes, `modeled_*` present only on simulated devices, the write
//! breakdown only when the workload writes. Every `*_vs_btree` figure is the index's over the
//! B+-tree's of the same run and workload ([`add_btree_ratios`]), absent when no B+-tree ran.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::disk_report::human_bytes;
use crate::records::DiskUpdateRecord;

/// Fills every record's `*_vs_btree` ratios against the B+-tree record of the same dataset,
/// workload and device: the first whose index starts with `btree:` and has the same
/// resident choice (the label's `:resident=` part), else the first B+-tree record. Records
/// without a B+-tree beside them keep `None`. A ratio whose denominator is 0 is `None`.
pub fn add_btree_ratios(records: &mut [DiskUpdateRecord]) {
    let resident = |label: &str| label.rsplit_once(":resident=").map(|(_, r)| r.to_string());
    let same_run = |a: &DiskUpdateRecord, b: &DiskUpdateRecord| {
        (&a.dataset, &a.workload, &a.device) == (&b.dataset, &b.workload, &b.device)
    };
    let baselines: Vec<Option<DiskUpdateRecord>> = records
        .iter()
        .map(|r| {
            let trees = || {
                records
                    .iter()
                    .filter(|b| b.index.starts_with("btree:") && same_run(r, b))
            };
            trees()
                .find(|b| resident(&b.index) == resident(&r.index))
                .or_else(|| trees().next())
                .cloned()
        })
        .collect();
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    for (r, base) in records.iter_mut().zip(baselines) {
        let Some(b) = base else { continue };
        r.throughput_vs_btree = ratio(r.ops_per_s(), b.ops_per_s());
        r.read_blocks_vs_btree = ratio(r.read_blocks_per_op, b.read_blocks_per_op);
        r.write_blocks_vs_btree = ratio(r.write_blocks_per_op, b.write_blocks_per_op);
        r.p99_vs_btree = ratio(r.p99_us(), b.p99_us());
        r.build_vs_btree = ratio(r.build_s, b.build_s);
        r.index_bytes_vs_btree = ratio(r.index_bytes as f64, b.index_bytes as f64);
        r.storage_vs_btree = ratio(r.storage_bytes as f64, b.storage_bytes as f64);
    }
}

/// The terminal table of the key columns, one row per record.
pub fn table(records: &[DiskUpdateRecord]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "index",
        "workload",
        "read/op in+leaf",
        "write/op in+leaf",
        "Kops/s",
        "vs btree",
        "p99 us",
        "sd us",
        "search/ins/smo/maint us",
        "build s",
        "size",
        "after writes",
    ]);
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in records {
        let breakdown = match (r.search_us, r.insert_us, r.smo_us, r.maintenance_us) {
            (Some(s), Some(i), Some(m), Some(t)) => format!("{s:.1}/{i:.1}/{m:.1}/{t:.1}"),
            _ => "-".to_string(),
        };
        table.add_row(vec![
            r.index.clone(),
            r.workload.clone(),
            format!("{:.2}+{:.2}", r.inner_read_per_op, r.leaf_read_per_op),
            format!("{:.2}+{:.2}", r.inner_write_per_op, r.leaf_write_per_op),
            format!("{:.2}", r.ops_per_s() / 1e3),
            opt(r.throughput_vs_btree, 2),
            format!("{:.1}", r.p99_us()),
            format!("{:.1}", r.modeled_stddev_us.unwrap_or(r.wall_stddev_us)),
            breakdown,
            format!("{:.2}", r.build_s),
            human_bytes(r.index_bytes),
            human_bytes(r.storage_bytes),
        ]);
    }
    for column in table.column_iter_mut().skip(2) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}
