//! Dataset specs and loading: a generator with a count, or an SOSD file.
//!
//! A spec is one of
//!
//! * `gen:<generator>:<count>`: `<generator>` is a name from [`crate::generate`]
//!   (`uniform-dense`, `uniform-sparse`, `normal`, `lognormal`, `zipf-gaps`, `cells`) or GRE's
//!   `gre:l=<n>,g=<n>` ([`crate::gre`]). The count is everything after the **last** colon, so
//!   the generator part may itself hold colons and commas: `gen:gre:l=1000,g=10:1M`. Counts
//!   are read by [`crate::count`]: `1000`, `10K`, `10M`, `1G` (powers of 1000) or `1Mi`.
//! * `gen:words:<count>`: word-like byte-string keys ([`crate::words`]);
//! * `gen:user:<count>`: YCSB-style keys of 16 to 64 bytes ([`crate::user_keys`]);
//! * a file of the user's, named by a prefix or extension ([`crate::keyfile`]): `text:<path>`
//!   or `<path>.txt` (one key a line), `sosd-u32:`, `sosd-i64:`, `sosd-f64:`, `str16:`, and
//!   `sosd:<path>` or a bare path for an SOSD `u64` file ([`crate::sosd`]). A missing file is
//!   [`BenchError::NoSuchFile`]; a spec with a colon before any slash that names no file is a
//!   bad spec, since it is usually a mistyped generator.
//!
//! [`load`] gives `u64` keys, what most commands take, and refuses other key types with
//! [`BenchError::KeyType`]; [`load_any`] gives keys of any type ([`Keys`]).
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
use crate::keyfile::{self, Format, Keys, FILE_FORMS};
use crate::{user_keys, words};

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

const EXPECTED: &str = "gen:<uniform-dense|uniform-sparse|normal|lognormal|zipf-gaps|cells|\
                        gre:l=<n>,g=<n>|words|user>:<count>, text:<path> (or <path>.txt), \
                        sosd:<path>, sosd-u32:<path>, sosd-i64:<path>, sosd-f64:<path>, \
                        str16:<path>, or the path of an SOSD u64 file";

/// A loaded dataset of any key type.
#[derive(Debug, Clone)]
pub struct AnyDataset {
    /// Name for reports: the generator or the file name.
    pub name: String,
    /// Sorted keys (duplicates possible).
    pub keys: Keys,
    /// Facts about how it was made or read.
    pub notes: Vec<String>,
}

impl AnyDataset {
    /// The dataset as `u64` keys: its own for `u64`; for `u32`, `i64` and `f64`, their
    /// order-preserving model image ([`lidx::Key::to_model`], injective for these types), on
    /// which every model already learns, so an in-memory index sees the same points (only the
    /// last mile compares `u64`s instead of the native type); a note says so. Strings have no
    /// injective image: `KeyType` for them.
    pub fn into_numeric_image(self) -> Result<Dataset> {
        use lidx::Key;
        fn image<K: Key>(keys: &[K]) -> Vec<u64> {
            keys.iter().map(|k| k.to_model()).collect()
        }
        let AnyDataset {
            name,
            keys,
            mut notes,
        } = self;
        let (keys, type_name) = match keys {
            Keys::U64(keys) => return Ok(Dataset { name, keys, notes }),
            Keys::U32(k) => (image(&k), "u32"),
            Keys::I64(k) => (image(&k), "i64"),
            Keys::F64(k) => (image(&k), "f64"),
            other => {
                return Err(BenchError::KeyType {
                    dataset: name,
                    got: other.type_name(),
                    expected: "this command takes numeric keys (u64, u32, i64, f64) or text keys"
                        .to_string(),
                })
            }
        };
        notes.push(format!(
            "{type_name} keys run on their order-preserving u64 image (the values models learn \
             on; exact for {type_name}): the last mile compares u64s"
        ));
        Ok(Dataset { name, keys, notes })
    }
}

/// What a `u64` command says to a dataset of another key type.
const U64_ONLY: &str = "this command takes u64 keys (`lidx stats` and `lidx table create` \
                        take every key type)";

/// Loads `spec` with `seed`, keys of any type.
pub fn load_any(spec: &str, seed: u64) -> Result<AnyDataset> {
    if let Some(count) = spec.strip_prefix("gen:words:") {
        let n = parse_count(count).ok_or_else(|| bad(spec))?;
        // A word is a vector (24 bytes) and its bytes, a dozen on average, and the generator
        // deduplicates through a set of them.
        crate::count::check_fits("dataset", n as u64, 96)?;
        let keys = words::generate(n, seed);
        let shared = words::shared_prefix_fraction(&keys);
        return Ok(AnyDataset {
            name: format!("words:{count}"),
            keys: Keys::Bytes(keys),
            notes: vec![
                format!("seed {seed}"),
                format!(
                    "{:.1}% of the keys share their first 8 bytes with a neighbour",
                    100.0 * shared
                ),
            ],
        });
    }
    if let Some(count) = spec.strip_prefix("gen:user:") {
        let n = parse_count(count).ok_or_else(|| bad(spec))?;
        // A key is a vector (24 bytes) and its 40 bytes on average, in a set while generated.
        crate::count::check_fits("dataset", n as u64, 128)?;
        return Ok(AnyDataset {
            name: format!("user:{count}"),
            keys: Keys::Bytes(user_keys::generate(n, seed)),
            notes: vec![format!(
                "seed {seed}; YCSB-style keys of {} to {} bytes",
                user_keys::MIN_LEN,
                user_keys::MAX_LEN
            )],
        });
    }
    if spec.starts_with("gen:") {
        let d = load(spec, seed)?;
        return Ok(AnyDataset {
            name: d.name,
            keys: Keys::U64(d.keys),
            notes: d.notes,
        });
    }
    load_file(spec)
}

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
    let only_u64 = |d: AnyDataset| match d.keys {
        Keys::U64(keys) => Ok(Dataset {
            name: d.name,
            keys,
            notes: d.notes,
        }),
        other => Err(BenchError::KeyType {
            dataset: d.name,
            got: other.type_name(),
            expected: U64_ONLY.to_string(),
        }),
    };
    let Some(body) = spec.strip_prefix("gen:") else {
        return only_u64(load_file(spec)?);
    };
    if body.starts_with("words:") || body.starts_with("user:") {
        return only_u64(load_any(spec, seed)?);
    }
    let (generator, count) = body.rsplit_once(':').ok_or_else(|| bad(spec))?;
    let n = parse_count(count).ok_or_else(|| bad(spec))?;
    // The keys and the generator's working copy.
    crate::count::check_fits("dataset", n as u64, 16)?;
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

fn load_file(spec: &str) -> Result<AnyDataset> {
    let (format, file) = keyfile::parse_spec(spec);
    let path = Path::new(file);
    if !path.exists() {
        // A spec with a colon before any slash is a mistyped spec (`lognormal:10M`), not a file.
        let looks_like_spec =
            spec.is_empty() || spec.split('/').next().is_some_and(|s| s.contains(':'));
        if looks_like_spec && file == spec {
            return Err(bad(spec));
        }
        return Err(BenchError::NoSuchFile {
            path: path.to_path_buf(),
            expected: EXPECTED.into(),
        });
    }
    let (keys, mut notes) = match keyfile::read(format, path) {
        Err(BenchError::SizeMismatch {
            header_count,
            actual_bytes,
            ..
        }) if format == Format::SosdU64 && keyfile::looks_like_u32(header_count, actual_bytes) => {
            return Err(BenchError::BadSpec {
                what: "dataset",
                got: spec.to_string(),
                expected: format!(
                    "sosd-u32:{file}: its size fits {header_count} u32 keys, not u64 keys \
                     (one of {FILE_FORMS})"
                ),
            });
        }
        other => other?,
    };
    if format == Format::SosdU64 {
        notes.push(format!("read from SOSD file {}", path.display()));
    }
    let name = path
        .file_name()
        .map_or_else(|| spec.to_string(), |f| f.to_string_lossy().into_owned());
    Ok(AnyDataset { name, keys, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sosd;

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
