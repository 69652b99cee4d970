//! What `bench`, `bench --on-disk` and `ycsb` parse and write alike: operation counts, fetch
//! modes, and the records file (`--out`), checked before a run starts and written after it.

use std::path::PathBuf;

use lidx::disk::Fetch;
use lidx_bench::registry::parse_count;
use lidx_bench::report::{self, Format};
use lidx_bench::BenchError;
use serde::Serialize;

use super::output::Batch;

/// Parses a count of operations (`1M`, `500K`, `2000`) for the option `what`.
/// The operations are drawn up front (16 bytes each at most), so a count the machine cannot
/// hold is refused here.
pub fn parse_ops(what: &'static str, text: &str) -> Result<usize, BenchError> {
    let n = parse_count(text)
        .and_then(|q| usize::try_from(q).ok())
        .ok_or_else(|| BenchError::BadSpec {
            what,
            got: text.to_string(),
            expected: "a number such as 1000000, 500K or 2M".to_string(),
        })?;
    lidx_bench::count::check_fits(what, n as u64, 16)?;
    Ok(n)
}

/// `--log-space-ratio`: a number of at least [`lidx::kv::MIN_LOG_SPACE_RATIO`], or `off`
/// (`None`: the `log` engine keeps every record).
pub fn parse_space_ratio(text: &str) -> anyhow::Result<Option<f64>> {
    if text == "off" {
        return Ok(None);
    }
    text.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= lidx::kv::MIN_LOG_SPACE_RATIO)
        .map(Some)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--log-space-ratio {text:?}: expected a number of at least 1.2, such as 1.5, or \
                 off"
            )
        })
}

/// Parses a comma-separated list of fetch modes (paper 002 G1).
pub fn parse_fetches(text: &str) -> Result<Vec<Fetch>, BenchError> {
    text.split(',')
        .map(|f| {
            Fetch::parse(f).map_err(|_| BenchError::BadSpec {
                what: "fetch",
                got: f.to_string(),
                expected: "all-at-once or one-by-one, comma-separated".to_string(),
            })
        })
        .collect()
}

/// Refuses, before anything runs, an `--out` whose extension names no records format, one
/// that exists unless `force` (`--force`) asks to replace it, and one that is the file of the
/// dataset spec `dataset` (with or without `--force`: `lidx bench --out` naming its own
/// `--dataset` overwrote it).
pub fn check_out_inputs(
    out: Option<&PathBuf>,
    dataset: &str,
    force: bool,
) -> Result<(), BenchError> {
    if let Some(out) = out {
        Format::for_path(out)?;
        let inputs = super::dataset_inputs(dataset);
        super::output::check(out, &inputs, force)?;
    }
    Ok(())
}

/// Writes `records` to `--out`, if given (staged and renamed into place, see
/// [`super::output`]), and says so on stderr.
pub fn write_out<R: Serialize>(out: Option<&PathBuf>, records: &[R]) -> anyhow::Result<()> {
    let mut batch = Batch::default();
    stage_out(&mut batch, out, records)?;
    batch.commit()
}

/// Stages `records` for `--out`, if given, in `batch`: in place with the command's other
/// outputs when the batch commits.
pub fn stage_out<R: Serialize>(
    batch: &mut Batch,
    out: Option<&PathBuf>,
    records: &[R],
) -> anyhow::Result<()> {
    if let Some(out) = out {
        let note = format!("wrote {} records to {}", records.len(), out.display());
        batch.write(out, note, |staged| report::write_records(staged, records))?;
    }
    Ok(())
}
