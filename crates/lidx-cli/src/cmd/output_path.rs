//! The rule of every command that writes a user's file (`lidx join --out`, `lidx table create
//! --out`, `lidx gen --out`): an output is never one of the command's inputs (compared as files: the same path,
//! or another path to the same file, by device and inode), and an existing file is replaced
//! only when `--force` asks for it. Both are checked before anything is opened for writing, so
//! a refused command leaves every file as it was (issue 13: `lidx join --out` naming an input
//! table truncated that input to 0 bytes before failing).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use lidx_bench::BenchError;

/// True when `a` and `b` are the same existing file (after symbolic links).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn refuse(out: &Path, expected: String) -> BenchError {
    BenchError::BadSpec {
        what: "out",
        got: out.display().to_string(),
        expected,
    }
}

/// Checks the output file `out` against the `inputs` (`(flag, path)`) and `force`: a usage
/// error ([`BenchError::BadSpec`] on `out`) when it is one of the inputs, or when it exists
/// and `force` is false.
pub fn check(out: &Path, inputs: &[(&str, &Path)], force: bool) -> Result<(), BenchError> {
    for (flag, input) in inputs {
        if out == *input || same_file(out, input) {
            return Err(refuse(
                out,
                format!("an output that is not an input (it is the input of {flag})"),
            ));
        }
    }
    if !force && std::fs::symlink_metadata(out).is_ok() {
        return Err(refuse(
            out,
            "a path that does not exist yet, or --force to replace the existing file".to_string(),
        ));
    }
    Ok(())
}
