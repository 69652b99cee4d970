//! A user's own keys: text files and typed binaries, named by an explicit prefix or extension,
//! never guessed from the bytes.
//!
//! | spec | keys |
//! |---|---|
//! | `text:<path>`, or a path ending in `.txt` | byte strings, one a line |
//! | `sosd:<path>`, `sosd-u64:<path>` (and a bare path, as before) | `u64` |
//! | `sosd-u32:<path>` | `u32` |
//! | `sosd-i64:<path>` | `i64` |
//! | `sosd-f64:<path>` | `f64` (NaN refused) |
//! | `str16:<path>` | 16-byte strings |
//!
//! The binaries share SOSD's layout: a little-endian `u64` count, then the items, little-endian
//! numbers or raw 16-byte strings; the size must match the count, and the keys must be sorted
//! (duplicates allowed), as SOSD's files are.
//!
//! Text files: each line is a key, its `\n` (and a `\r` before it, for files written on
//! Windows) removed, every other byte kept, UTF-8 or not. An empty line is an error naming its
//! line number (an empty key cannot be stored); a final newline does not make an empty last
//! line. Word lists are seldom in key order (a frequency list is sorted by count), so text keys
//! are sorted on load, and the dataset's notes say so and count the duplicates.

use std::path::{Path, PathBuf};

use lidx::raw::key::check_sorted;
use lidx::{Key, Str16};

use crate::error::{BenchError, Result};
use crate::sosd;

/// Keys of any type a dataset can hold, sorted.
#[derive(Debug, Clone, PartialEq)]
pub enum Keys {
    /// `u64` keys.
    U64(Vec<u64>),
    /// `u32` keys.
    U32(Vec<u32>),
    /// `i64` keys.
    I64(Vec<i64>),
    /// `f64` keys (no NaN).
    F64(Vec<f64>),
    /// Fixed 16-byte strings.
    Str16(Vec<Str16>),
    /// Byte strings of any length (text files).
    Bytes(Vec<Vec<u8>>),
}

impl Keys {
    /// The key type's name: `u64`, `u32`, `i64`, `f64`, `str16`, or `text`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Keys::U64(_) => "u64",
            Keys::U32(_) => "u32",
            Keys::I64(_) => "i64",
            Keys::F64(_) => "f64",
            Keys::Str16(_) => "str16",
            Keys::Bytes(_) => "text",
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Keys::U64(k) => k.len(),
            Keys::U32(k) => k.len(),
            Keys::I64(k) => k.len(),
            Keys::F64(k) => k.len(),
            Keys::Str16(k) => k.len(),
            Keys::Bytes(k) => k.len(),
        }
    }

    /// True when there is no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The file formats of the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One key a line.
    Text,
    /// SOSD layout, `u64` items.
    SosdU64,
    /// SOSD layout, `u32` items.
    SosdU32,
    /// SOSD layout, `i64` items.
    SosdI64,
    /// SOSD layout, `f64` items.
    SosdF64,
    /// SOSD layout, 16-byte string items.
    Str16,
}

/// The forms a file dataset may take, for messages.
pub const FILE_FORMS: &str = "text:<path> (or <path>.txt), sosd:<path>, sosd-u32:<path>, \
    sosd-i64:<path>, sosd-f64:<path>, str16:<path>, or the path of an SOSD u64 file";

/// The format and path a spec names: by prefix, then by a `.txt` extension; a bare path is an
/// SOSD `u64` file.
pub fn parse_spec(spec: &str) -> (Format, &str) {
    const PREFIXES: [(&str, Format); 7] = [
        ("text:", Format::Text),
        ("sosd:", Format::SosdU64),
        ("sosd-u64:", Format::SosdU64),
        ("sosd-u32:", Format::SosdU32),
        ("sosd-i64:", Format::SosdI64),
        ("sosd-f64:", Format::SosdF64),
        ("str16:", Format::Str16),
    ];
    for (prefix, format) in PREFIXES {
        if let Some(path) = spec.strip_prefix(prefix) {
            return (format, path);
        }
    }
    if spec.ends_with(".txt") {
        return (Format::Text, spec);
    }
    (Format::SosdU64, spec)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads `path` in `format`; returns the sorted keys and notes on what was done to them.
pub fn read(format: Format, path: &Path) -> Result<(Keys, Vec<String>)> {
    let bytes = || std::fs::read(path).map_err(io(path));
    Ok(match format {
        // Streamed: memory stays at the keys plus one chunk.
        Format::SosdU64 => {
            let keys = sosd::read_sosd(path)?;
            check_sorted(&keys)?;
            (Keys::U64(keys), vec![])
        }
        Format::Text => read_text(path, &bytes()?)?,
        Format::SosdU32 => (Keys::U32(typed(path, &bytes()?)?), vec![]),
        Format::SosdI64 => (Keys::I64(typed(path, &bytes()?)?), vec![]),
        Format::SosdF64 => (Keys::F64(typed(path, &bytes()?)?), vec![]),
        Format::Str16 => (Keys::Str16(typed(path, &bytes()?)?), vec![]),
    })
}

/// Decodes an SOSD-layout file of `K` items (the layout of [`crate::sosd`], other widths) and
/// checks their order.
fn typed<K: Key>(path: &Path, bytes: &[u8]) -> Result<Vec<K>> {
    let header: [u8; 8] = bytes
        .get(..8)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| size_mismatch(path, 0, K::SIZE, bytes.len()))?;
    let count = u64::from_le_bytes(header);
    let expected = count
        .checked_mul(K::SIZE as u64)
        .and_then(|b| b.checked_add(8));
    if expected != Some(bytes.len() as u64) {
        return Err(size_mismatch(path, count, K::SIZE, bytes.len()));
    }
    let keys: Vec<K> = bytes[8..].chunks_exact(K::SIZE).map(K::read_from).collect();
    check_sorted(&keys)?;
    Ok(keys)
}

fn size_mismatch(path: &Path, count: u64, size: usize, actual: usize) -> BenchError {
    BenchError::SizeMismatch {
        path: path.to_path_buf(),
        header_count: count,
        expected_bytes: count.saturating_mul(size as u64).saturating_add(8),
        actual_bytes: actual as u64,
    }
}

/// True when a file of `len` bytes whose header says `count` holds `u32` items: what a bare
/// path to one of SOSD's `*_uint32` files looks like when read as `u64`.
pub fn looks_like_u32(count: u64, len: u64) -> bool {
    count.checked_mul(4).and_then(|b| b.checked_add(8)) == Some(len)
}

/// One key a line, sorted; notes say whether the file was in order and how many duplicates
/// it holds.
fn read_text(path: &Path, bytes: &[u8]) -> Result<(Keys, Vec<String>)> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut keys = Vec::new();
    if !bytes.is_empty() {
        for (i, line) in body.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                return Err(BenchError::EmptyKey {
                    path: path.to_path_buf(),
                    line: i as u64 + 1,
                });
            }
            keys.push(line.to_vec());
        }
    }
    let mut notes = vec![format!(
        "read {} text keys from {}",
        keys.len(),
        path.display()
    )];
    if !keys.windows(2).all(|w| w[0] <= w[1]) {
        keys.sort_unstable();
        notes.push(format!(
            "sorted {} keys: the file was not in key order",
            keys.len()
        ));
    }
    let duplicates = keys.windows(2).filter(|w| w[0] == w[1]).count();
    if duplicates > 0 {
        notes.push(format!("{duplicates} duplicate keys (kept)"));
    }
    Ok((Keys::Bytes(keys), notes))
}

/// The path of a file spec, for messages and existence checks.
pub fn path_of(spec: &str) -> PathBuf {
    PathBuf::from(parse_spec(spec).1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_their_format_by_prefix_or_extension() {
        assert_eq!(parse_spec("text:w"), (Format::Text, "w"));
        assert_eq!(parse_spec("words.txt"), (Format::Text, "words.txt"));
        assert_eq!(parse_spec("sosd-u32:b"), (Format::SosdU32, "b"));
        assert_eq!(parse_spec("str16:s"), (Format::Str16, "s"));
        assert_eq!(
            parse_spec("books_200M_uint64"),
            (Format::SosdU64, "books_200M_uint64")
        );
    }

    #[test]
    fn text_keys_are_sorted_and_empty_lines_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.txt");
        std::fs::write(&path, b"pear\r\napple\nfig\napple\n").unwrap();
        let (keys, notes) = read(Format::Text, &path).unwrap();
        let want: Vec<Vec<u8>> = vec![
            b"apple".to_vec(),
            b"apple".to_vec(),
            b"fig".to_vec(),
            b"pear".to_vec(),
        ];
        assert_eq!(keys, Keys::Bytes(want));
        assert!(
            notes.iter().any(|n| n.contains("not in key order")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.contains("1 duplicate")), "{notes:?}");
        std::fs::write(&path, b"a\n\nb\n").unwrap();
        match read(Format::Text, &path) {
            Err(BenchError::EmptyKey { line: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn typed_binaries_check_size_order_and_nan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let file = |items: &[u8], count: u64| {
            let mut b = count.to_le_bytes().to_vec();
            b.extend_from_slice(items);
            std::fs::write(&path, b).unwrap();
        };
        let u32s: Vec<u8> = [1u32, 7, 9].iter().flat_map(|k| k.to_le_bytes()).collect();
        file(&u32s, 3);
        assert_eq!(
            read(Format::SosdU32, &path).unwrap().0,
            Keys::U32(vec![1, 7, 9])
        );
        assert!(matches!(
            read(Format::SosdU64, &path),
            Err(BenchError::SizeMismatch { .. })
        ));
        assert!(looks_like_u32(3, 20));
        let f64s: Vec<u8> = [1.0f64, f64::NAN]
            .iter()
            .flat_map(|k| k.to_le_bytes())
            .collect();
        file(&f64s, 2);
        assert!(matches!(
            read(Format::SosdF64, &path),
            Err(BenchError::Index(lidx::Error::InvalidKey { .. }))
        ));
        let i64s: Vec<u8> = [5i64, -3].iter().flat_map(|k| k.to_le_bytes()).collect();
        file(&i64s, 2);
        assert!(matches!(
            read(Format::SosdI64, &path),
            Err(BenchError::Index(lidx::Error::OutOfOrder { index: 1, .. }))
        ));
    }
}
