//! The rule of every command that writes a user's file (`lidx join --out`, `lidx table create
//! --out`, `lidx gen --out`, and the records `--out` of `bench`, `ycsb` and `recovery`): an output is never one of the command's inputs (compared as files: the same path,
//! or another path to the same file, by device and inode), and an existing file is replaced
//! only when `--force` asks for it. Both are checked before anything is opened for writing, so
//! a refused command leaves every file as it was (issue 13: `lidx join --out` naming an input
//! table truncated that input to 0 bytes before failing).
//!
//! [`replace`] writes an output beside its target and renames it over the target only once it
//! is whole, so a failed write (a full disk, a file size limit) leaves the old file as it was
//! and no partial one.

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

/// Runs `write` on a temporary file beside `out` (same directory, so the rename cannot cross
/// file systems) and, when it succeeds, renames it over `out` and syncs the directory; when it
/// fails, removes the temporary file and leaves `out` untouched. An existing `out` that is not
/// a regular file (`/dev/stdout`, a FIFO) is written in place, since renaming over it would
/// replace the device node; a symbolic link is followed, so the file it names is replaced.
pub fn replace<T>(
    out: &Path,
    write: impl FnOnce(&Path) -> lidx_bench::Result<T>,
) -> anyhow::Result<T> {
    use anyhow::Context;
    let target = match std::fs::metadata(out) {
        Ok(meta) if !meta.is_file() => {
            return write(out).with_context(|| format!("writing {}", out.display()))
        }
        Ok(_) => {
            std::fs::canonicalize(out).with_context(|| format!("resolving {}", out.display()))?
        }
        Err(_) => out.to_path_buf(),
    };
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let temp = target.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = write(&temp).with_context(|| format!("writing {}", out.display()));
    let renamed = written.and_then(|value| {
        std::fs::rename(&temp, &target)
            .with_context(|| format!("renaming {} to {}", temp.display(), target.display()))?;
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("syncing {}", dir.display()))?;
        Ok(value)
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    renamed
}
