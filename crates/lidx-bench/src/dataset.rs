//! Dataset specs and loading: a generator with a count, or an SOSD file.
//!
//! A spec is one of
//!
//! * `gen:<generator>:<count>`: `<generator>` is a name from [`crate::generate`]
//!   (`uniform-dense`, `uniform-sparse`, `normal`, `lognormal`, `zipf-gaps`) or GRE's
//!   `gre:l=<n>,g=<n>` ([`crate::gre`]). The count is everything after the **last** colon, so
//!   the generator part may itself hold colons and commas: `gen:gre:l=1000,g=10:1M`. Counts
//!   are read by [`crate::count`]: `1000`, `10K`, `10M`, `1G` (powers of 1000) or `1Mi`.
//! * anything else is a path to an SOSD `u64` file ([`crate::sosd`]); a path that does not
//!   exist is a bad spec rather than an I/O error, since it is usually a mistyped generator.
//!
//! The CLI's `--index` option takes a comma-separated list, but `--dataset` takes exactly one
//! spec, so GRE's comma needs no quoting beyond the shell's.
//!
//! Generated keys depend only on the spec and the seed. Loaded keys are checked to be sorted
//! (duplicates allowed); an unsorted file is refused with the library's `OutOfOrder`.

use std::path::Path;

use crate::error::{BenchError, Result};
use crate::generate::Generator;
use crate::gre::{self, GreParams};
use crate::sosd;

/// A loaded dataset: sorted u64 keys and what produced them.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Name for reports, e.g. `lognormal:10M` or a file name.
    pub name: String,
    /// Sorted keys (duplicates possible).
    pub keys: Vec<u64>,
    /// Facts about how it was made (e.g. the segment counts a `gre:` generator produced).
    pub notes: Vec<String>,
}

const EXPECTED: &str = "gen:<uniform-dense|uniform-sparse|normal|lognormal|zipf-gaps|\
                        gre:l=<n>,g=<n>>:<count> or a path to an SOSD file";

fn bad(spec: &str) -> BenchError {
    BenchError::BadSpec {
        what: "dataset",
        got: spec.to_string(),
        expected: EXPECTED.into(),
    }
}

/// Parses a key count as [`crate::count::parse_count`] does, as a `usize`.
pub fn parse_count(text: &str) -> Option<usize> {
    crate::count::parse_count(text).and_then(|n| usize::try_from(n).ok())
}

/// Loads `spec` (`gen:<generator>:<count>` or a path to an SOSD file) with `seed`.
pub fn load(spec: &str, seed: u64) -> Result<Dataset> {
    let Some(body) = spec.strip_prefix("gen:") else {
        return load_file(spec);
    };
    let (generator, count) = body.rsplit_once(':').ok_or_else(|| bad(spec))?;
    let n = parse_count(count).ok_or_else(|| bad(spec))?;
    if generator.starts_with("gre:") {
        let params = GreParams::parse(generator).map_err(|_| bad(spec))?;
        let out = gre::generate(params, n, seed)?;
        let notes = vec![
            format!("seed {seed}"),
            format!(
                "gre produced {} segments at eps {} (requested {}) and {} at eps {} \
                 (requested {}), counted by lidx's optimal PLA",
                out.local_segments,
                gre::LOCAL_EPS,
                params.local,
                out.global_segments,
                gre::GLOBAL_EPS,
                params.global
            ),
        ];
        return Ok(Dataset {
            name: body.to_string(),
            keys: out.keys,
            notes,
        });
    }
    let generator = Generator::parse(generator).map_err(|_| bad(spec))?;
    Ok(Dataset {
        name: body.to_string(),
        keys: generator.generate(n, seed),
        notes: vec![format!("seed {seed}")],
    })
}

fn load_file(spec: &str) -> Result<Dataset> {
    let path = Path::new(spec);
    if !path.exists() {
        // A spec with a colon before any slash is a mistyped spec (`lognormal:10M`), not a file.
        let looks_like_spec =
            spec.is_empty() || spec.split('/').next().is_some_and(|s| s.contains(':'));
        if looks_like_spec {
            return Err(bad(spec));
        }
        return Err(BenchError::NoSuchFile {
            path: path.to_path_buf(),
            expected: EXPECTED.into(),
        });
    }
    let keys = sosd::read_sosd(path)?;
    lidx::key::check_sorted(&keys)?;
    let name = path
        .file_name()
        .map_or_else(|| spec.to_string(), |f| f.to_string_lossy().into_owned());
    Ok(Dataset {
        name,
        keys,
        notes: vec![format!("read from SOSD file {}", path.display())],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_decimal_suffixes() {
        assert_eq!(parse_count("1000"), Some(1000));
        assert_eq!(parse_count("10K"), Some(10_000));
        assert_eq!(parse_count("10k"), Some(10_000));
        assert_eq!(parse_count("3M"), Some(3_000_000));
        assert_eq!(parse_count("1G"), Some(1_000_000_000));
        for bad in ["", "K", "1.5M", "-3", "10X", "1KK", " 10"] {
            assert_eq!(parse_count(bad), None, "{bad}");
        }
    }

    #[test]
    fn generator_specs_load_reproducibly() {
        let a = load("gen:lognormal:2K", 5).unwrap();
        assert_eq!(a.name, "lognormal:2K");
        assert_eq!(a.keys.len(), 2000);
        assert_eq!(a.keys, load("gen:lognormal:2K", 5).unwrap().keys);
        assert_ne!(a.keys, load("gen:lognormal:2K", 6).unwrap().keys);
    }

    #[test]
    fn gre_specs_keep_their_commas_and_colons_and_report_counts() {
        let d = load("gen:gre:l=20,g=2:10K", 1).unwrap();
        assert_eq!(d.name, "gre:l=20,g=2:10K");
        assert_eq!(d.keys.len(), 10_000);
        let note = d
            .notes
            .iter()
            .find(|n| n.starts_with("gre produced"))
            .unwrap();
        assert!(
            note.contains("(requested 20)") && note.contains("(requested 2)"),
            "{note}"
        );
    }

    #[test]
    fn sosd_files_load_and_must_be_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("books.sosd");
        sosd::write_sosd(&path, &[1, 2, 2, 9]).unwrap();
        let d = load(path.to_str().unwrap(), 0).unwrap();
        assert_eq!((d.name.as_str(), d.keys), ("books.sosd", vec![1, 2, 2, 9]));
        sosd::write_sosd(&path, &[3, 1]).unwrap();
        assert!(matches!(
            load(path.to_str().unwrap(), 0),
            Err(BenchError::Index(lidx::Error::OutOfOrder { index: 1, .. }))
        ));
    }

    #[test]
    fn a_missing_file_says_no_such_file() {
        let err = load("no/such/books.sosd", 0).unwrap_err();
        assert!(matches!(err, BenchError::NoSuchFile { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("no such file: no/such/books.sosd;"),
            "{err}"
        );
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        for spec in [
            "gen:lognormal",
            "gen:lognormal:ten",
            "gen:gaussian:10",
            "gen:gre:l=1,g=5:100",
            "lognormal:10M",
            "",
        ] {
            match load(spec, 0) {
                Err(BenchError::BadSpec {
                    what: "dataset",
                    got,
                    expected,
                }) => {
                    assert_eq!(got, spec);
                    assert_eq!(expected, EXPECTED);
                }
                other => panic!("{spec}: {other:?}"),
            }
        }
    }
}
