//! `lidx gen`: write a generated dataset to a file: an SOSD file for `u64` keys, a text file
//! (one key a line, in key order) for the string keys of `gen:words:<count>` and
//! `gen:user:<count>`. An existing
//! `--out` is replaced only with `--force` ([`super::output`]), and then only once the new
//! file is whole: it is written beside `--out` and renamed over it, so a failed write (a full
//! disk) keeps the old file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Parser;
use lidx_bench::keyfile::Keys;
use lidx_bench::{sosd, BenchError};

use super::{load_any_dataset, output, spinner};

/// Arguments of `lidx gen`.
#[derive(Debug, Parser)]
pub struct Args {
    /// `gen:<generator>:<count>`, e.g. gen:lognormal:10M, gen:zipf-gaps:1M,
    /// gen:gre:l=1000,g=10:1M, gen:words:7M or gen:user:1M (string keys: `--out` must end in
    /// `.txt`).
    #[arg(long)]
    pub dataset: String,

    /// The file to write: SOSD, or text for word-like keys. An existing file is replaced
    /// only with `--force`.
    #[arg(long)]
    pub out: PathBuf,

    /// Replace `--out` if it exists.
    #[arg(long)]
    pub force: bool,

    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Runs `lidx gen`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // Checked before generating, which can take minutes; a dataset read from a file is an
    // input the output must not be.
    let inputs = super::dataset_inputs(&args.dataset);
    output::check(&args.out, &inputs, args.force)?;
    let dataset = load_any_dataset(&args.dataset, args.seed)?;
    type Writer<'a> = Box<dyn FnOnce(&Path) -> lidx_bench::Result<u64> + 'a>;
    let write: Writer = match &dataset.keys {
        Keys::U64(keys) => {
            Box::new(|path: &Path| sosd::write_sosd(path, keys).map(|()| 8 + 8 * keys.len() as u64))
        }
        Keys::Bytes(keys) if args.out.extension().is_some_and(|e| e == "txt") => {
            Box::new(|path: &Path| write_text(path, keys))
        }
        other => {
            return Err(BenchError::BadSpec {
                what: "--out",
                got: args.out.display().to_string(),
                expected: format!(
                    "a .txt file for text keys ({} holds {} keys)",
                    dataset.name,
                    other.type_name()
                ),
            }
            .into())
        }
    };
    let bar = spinner(&format!("writing {}", args.out.display()));
    // Written beside --out and renamed over it only when whole: a failed write (a full disk)
    // leaves the old file as it was, and no partial file that would read as a broken dataset.
    let written = output::replace(&args.out, write);
    bar.finish_and_clear();
    let bytes = written?;
    println!(
        "wrote {} keys of {} to {} ({bytes} bytes)",
        dataset.keys.len(),
        dataset.name,
        args.out.display(),
    );
    Ok(())
}

/// Writes `keys` one a line; returns the bytes written.
fn write_text(path: &Path, keys: &[Vec<u8>]) -> lidx_bench::Result<u64> {
    let io = |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    let mut bytes = 0;
    for key in keys {
        out.write_all(key).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        bytes += key.len() as u64 + 1;
    }
    out.flush().map_err(io)?;
    Ok(bytes)
}
