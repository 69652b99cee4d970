//! Writing a user's file safely: the one way every command writes a result, a table, a
//! dataset, a report or records (`lidx join --out`, `lidx table create --out`, `lidx gen
//! --out`, `lidx report --out`, the records `--out` of `bench`, `ycsb`, `dims`, `start` and
//! `recovery`, the CSV and SVG of `--curve` and `dims`). Issues 13 and 30 (classes 2 and 3).
//!
//! * [`check`], before anything runs: an output is never one of the command's inputs
//!   (compared as files: the same path, or another path to the same file, by device and
//!   inode), with or without `--force`; an existing file is replaced only when `--force` asks
//!   for it. A refused command leaves every file as it was.
//! * [`Staging`]: a private directory made by `tempfile` beside the outputs (same file system,
//!   so a rename cannot cross one), registered with [`super::cleanup`] so it is removed on
//!   every exit path, signals included. Each output is written there under its own file name
//!   (so its extension still says its format), helper files (a join's thread parts and
//!   partitions) go there too, and nothing in it can collide with a user's file.
//!   [`Staging::commit`] fsyncs each output, renames it over its target and fsyncs the
//!   directory; until then the old file is untouched, and a failure or a signal leaves it as
//!   it was and nothing new.
//! * [`Batch`]: a command's several outputs (records, CSV, figures), each staged in the
//!   [`Staging`] of its directory and all renamed into place together once every one is
//!   whole; [`replace`] is a batch of one.
//!
//! A target that exists and is not a regular file (`/dev/stdout`, a FIFO) is written in place,
//! since renaming over it would replace the device node; a symbolic link is followed, so the
//! file it names is replaced and the link kept (index files and tables, which lidx writes only
//! as regular files, refuse such a target: [`check_regular`]). While a staging directory is
//! open SIGPIPE is ignored ([`super::cleanup`]): a closed stderr drops progress lines and the
//! command finishes; no command prints on stdout while one is open (its outputs are renamed
//! into place before its lines), and a failed print would unwind through the guards, which
//! remove what they hold.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use lidx_bench::BenchError;

use super::cleanup::Created;

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

/// The directory of `path` (`.` for a bare file name).
pub fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Where `out` is really written: `None` for an existing target that is not a regular file
/// (written in place), else the file a symbolic link names, or `out` itself.
fn resolve(out: &Path) -> anyhow::Result<Option<PathBuf>> {
    match std::fs::metadata(out) {
        Ok(meta) if !meta.is_file() => Ok(None),
        Ok(_) => std::fs::canonicalize(out)
            .map(Some)
            .with_context(|| format!("resolving {}", out.display())),
        Err(_) => Ok(Some(out.to_path_buf())),
    }
}

/// The directory a [`Staging`] for `out` belongs in: that of the file `out` really names (a
/// symbolic link followed), so the rename into place stays within one directory.
pub fn directory_of(out: &Path) -> anyhow::Result<PathBuf> {
    let target = resolve(out)?.unwrap_or_else(|| out.to_path_buf());
    Ok(parent(&target).to_path_buf())
}

/// Refuses an output `out` that exists and is not a regular file (a directory, a device, a
/// FIFO, a symbolic link): for the outputs lidx writes only as files of its own (index files,
/// tables), which [`Staging::file`] would otherwise leave to be written in place.
pub fn check_regular(out: &Path) -> Result<(), BenchError> {
    match std::fs::symlink_metadata(out) {
        Ok(meta) if !meta.is_file() => Err(refuse(
            out,
            "a regular file (it exists as a directory, device, FIFO or symbolic link; lidx \
             writes index files and tables only as regular files: remove it or choose \
             another directory)"
                .to_string(),
        )),
        _ => Ok(()),
    }
}

/// Outputs being written in a private directory beside their targets, renamed into place by
/// [`Staging::commit`]; dropped without a commit, the directory and all in it are removed and
/// every target is as it was.
#[derive(Debug)]
pub struct Staging {
    dir: Created,
    /// `(staged file, target)`; the two are equal for a target written in place.
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staging {
    /// A new private directory in `dir` (which must exist): `.lidx-<random>`.
    pub fn beside(dir: &Path) -> anyhow::Result<Staging> {
        let made = tempfile::Builder::new()
            .prefix(".lidx-")
            .tempdir_in(dir)
            .with_context(|| format!("creating a temporary directory in {}", dir.display()))?;
        // Registered before tempfile lets go of it, so there is no moment it is not removed.
        let created = Created::register(made.path());
        let _ = made.keep();
        Ok(Staging {
            dir: created,
            files: Vec::new(),
        })
    }

    /// The private directory, for helper files: removed with all it holds.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stages the output `out`: returns the path to write it at (in the private directory,
    /// under the target's file name; `out` itself for a device or FIFO).
    pub fn file(&mut self, out: &Path) -> anyhow::Result<PathBuf> {
        let Some(target) = resolve(out)? else {
            self.files.push((out.to_path_buf(), out.to_path_buf()));
            return Ok(out.to_path_buf());
        };
        let name = target
            .file_name()
            .with_context(|| format!("{} names no file", out.display()))?;
        let staged = self.dir().join(name);
        anyhow::ensure!(
            !self.files.iter().any(|(s, _)| *s == staged),
            "two outputs named {}",
            name.to_string_lossy()
        );
        self.files.push((staged.clone(), target));
        Ok(staged)
    }

    /// Renames every staged output over its target, each fsynced first, then fsyncs the
    /// targets' directories and removes the private directory. On an error nothing more is
    /// renamed and the private directory is removed.
    pub fn commit(self) -> anyhow::Result<()> {
        let moved: Vec<&(PathBuf, PathBuf)> = self.files.iter().filter(|(s, t)| s != t).collect();
        for (staged, _) in &moved {
            std::fs::File::open(staged)
                .and_then(|f| f.sync_all())
                .with_context(|| format!("syncing {}", staged.display()))?;
        }
        self.dir.while_locked(|| -> anyhow::Result<()> {
            for (staged, target) in &moved {
                std::fs::rename(staged, target).with_context(|| {
                    format!("renaming {} to {}", staged.display(), target.display())
                })?;
            }
            Ok(())
        })?;
        let mut dirs: Vec<&Path> = moved.iter().map(|(_, t)| parent(t)).collect();
        dirs.dedup();
        for dir in dirs {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .with_context(|| format!("syncing {}", dir.display()))?;
        }
        Ok(())
    }
}

/// Runs `write` on a staged file for `out` and, when it succeeds, renames it over `out`
/// ([`Staging::commit`]); when it fails, `out` is untouched and nothing new is left.
pub fn replace<T>(
    out: &Path,
    write: impl FnOnce(&Path) -> lidx_bench::Result<T>,
) -> anyhow::Result<T> {
    let mut batch = Batch::default();
    let value = batch.write(out, String::new(), write)?;
    batch.commit()?;
    Ok(value)
}

/// The outputs of one command (its records, a CSV, figures), each written to a staged file
/// first and all renamed into place by [`Batch::commit`] once every one is whole: a failure
/// on the last figure leaves every earlier output as it was too. One [`Staging`] per target
/// directory, so no rename crosses a directory's file system.
#[derive(Debug, Default)]
pub struct Batch {
    stagings: Vec<(PathBuf, Staging)>,
    /// What to say on stderr once the outputs are in place.
    notes: Vec<String>,
}

impl Batch {
    /// Runs `write` on a staged file for `out`; `note` (if not empty) is said on stderr once
    /// the batch is committed.
    pub fn write<T>(
        &mut self,
        out: &Path,
        note: String,
        write: impl FnOnce(&Path) -> lidx_bench::Result<T>,
    ) -> anyhow::Result<T> {
        let staged = match resolve(out)? {
            None => out.to_path_buf(),
            Some(target) => {
                let dir = parent(&target).to_path_buf();
                let at = match self.stagings.iter().position(|(d, _)| *d == dir) {
                    Some(at) => at,
                    None => {
                        self.stagings.push((dir.clone(), Staging::beside(&dir)?));
                        self.stagings.len() - 1
                    }
                };
                self.stagings[at].1.file(&target)?
            }
        };
        let value = write(&staged).with_context(|| format!("writing {}", out.display()))?;
        if !note.is_empty() {
            self.notes.push(note);
        }
        Ok(value)
    }

    /// Renames every staged output into place ([`Staging::commit`]), then says the notes.
    pub fn commit(self) -> anyhow::Result<()> {
        for (_, staging) in self.stagings {
            staging.commit()?;
        }
        for note in self.notes {
            note!("{note}");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True when `dir` holds `out` and nothing else.
    fn alone(dir: &Path, out: &Path) -> bool {
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries == [out]
    }

    #[test]
    fn a_commit_replaces_the_target_and_a_drop_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        std::fs::write(&out, "old").unwrap();
        let mut staging = Staging::beside(dir.path()).unwrap();
        let staged = staging.file(&out).unwrap();
        assert_eq!(
            staged.file_name(),
            out.file_name(),
            "the extension still says the format"
        );
        std::fs::write(&staged, "new").unwrap();
        std::fs::write(staging.dir().join("helper"), "scratch").unwrap();
        drop(staging);
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert!(alone(dir.path(), &out));
        let mut staging = Staging::beside(dir.path()).unwrap();
        std::fs::write(staging.file(&out).unwrap(), "new").unwrap();
        staging.commit().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(alone(dir.path(), &out));
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_nothing_new() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("keys.sosd");
        std::fs::write(&out, "old").unwrap();
        let failed = replace(&out, |staged| {
            std::fs::write(staged, "half").unwrap();
            Err::<(), _>(BenchError::BadSpec {
                what: "test",
                got: String::new(),
                expected: String::new(),
            })
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert!(alone(dir.path(), &out));
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_even_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        std::fs::write(&input, "data").unwrap();
        let link = dir.path().join("link");
        std::fs::hard_link(&input, &link).unwrap();
        for force in [false, true] {
            assert!(check(&link, &[("--dataset", &input)], force).is_err());
        }
        assert!(check(&input, &[], false).is_err());
        assert!(check(&input, &[], true).is_ok());
    }
}
