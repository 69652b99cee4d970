//! The SOSD binary key format for `u64` keys: read, write, and a pure decoder.
//!
//! Layout (all little-endian), as the SOSD benchmark's datasets are distributed:
//!
//! | offset      | size        | field                      |
//! |-------------|-------------|----------------------------|
//! | 0           | 8           | key count `n` (`u64`)      |
//! | 8           | `8 * n`     | keys (`u64` each)          |
//!
//! The header is always read and believed only if the file agrees with it: a file whose size is
//! not exactly `8 + 8 * n` is a [`BenchError::SizeMismatch`], and a file shorter than the header
//! is one too (with `header_count` 0 and the bytes it has), never a guess. The format does not
//! promise sorted keys; callers that need them check (every `lidx` builder does).
//!
//! [`decode_sosd`] works on bytes in memory (for fuzzers and tests); [`read_sosd`] shares its
//! size check and key decoding, streaming the file in large chunks.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{BenchError, Result};

/// Bytes of the count header.
pub const HEADER_BYTES: usize = 8;

/// Checks that a file of `actual_bytes` bytes whose header is `header` holds exactly the keys
/// the header announces, and returns their count.
fn check_size(header: Option<[u8; HEADER_BYTES]>, actual_bytes: u64, path: &Path) -> Result<u64> {
    let header_count = header.map_or(0, u64::from_le_bytes);
    let expected_bytes = header_count
        .checked_mul(8)
        .and_then(|b| b.checked_add(HEADER_BYTES as u64));
    if header.is_none() || expected_bytes != Some(actual_bytes) {
        return Err(BenchError::SizeMismatch {
            path: path.to_path_buf(),
            header_count,
            expected_bytes: expected_bytes.unwrap_or(u64::MAX),
            actual_bytes,
        });
    }
    Ok(header_count)
}

/// Appends the little-endian keys of `body` (a multiple of 8 bytes) to `out`.
fn decode_keys(body: &[u8], out: &mut Vec<u64>) {
    out.extend(
        body.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks_exact yields 8 bytes"))),
    );
}

/// Decodes an SOSD `u64` file held in memory, checking its size against its header exactly
/// as [`read_sosd`] does. Never panics, whatever the bytes.
pub fn decode_sosd(bytes: &[u8]) -> Result<Vec<u64>> {
    let header = bytes.first_chunk::<HEADER_BYTES>().copied();
    check_size(header, bytes.len() as u64, Path::new("<memory>"))?;
    let mut keys = Vec::with_capacity((bytes.len() - HEADER_BYTES) / 8);
    decode_keys(&bytes[HEADER_BYTES..], &mut keys);
    Ok(keys)
}

/// Reads the SOSD `u64` file at `path`: the header, a size check against the file's length,
/// then the keys in 8 MiB chunks (so memory stays at the keys plus one chunk).
pub fn read_sosd(path: impl AsRef<Path>) -> Result<Vec<u64>> {
    const CHUNK: usize = 8 << 20;
    let path = path.as_ref();
    let io = |source| BenchError::Io {
        path: PathBuf::from(path),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut header = [0u8; HEADER_BYTES];
    let header = match file.read_exact(&mut header) {
        Ok(()) => Some(header),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => None,
        Err(e) => return Err(io(e)),
    };
    let count = check_size(header, size, path)?;
    let mut keys = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut buf = vec![0u8; CHUNK];
    let mut left = count as usize * 8;
    while left > 0 {
        let chunk = &mut buf[..left.min(CHUNK)];
        file.read_exact(chunk).map_err(io)?;
        decode_keys(chunk, &mut keys);
        left -= chunk.len();
    }
    Ok(keys)
}

/// Writes `keys` to `path` in the SOSD `u64` format, replacing the file if it exists.
pub fn write_sosd(path: impl AsRef<Path>, keys: &[u64]) -> Result<()> {
    let path = path.as_ref();
    let io = |source| BenchError::Io {
        path: PathBuf::from(path),
        source,
    };
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(io)?);
    out.write_all(&(keys.len() as u64).to_le_bytes())
        .map_err(io)?;
    for chunk in keys.chunks(8192) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|k| k.to_le_bytes()).collect();
        out.write_all(&bytes).map_err(io)?;
    }
    out.into_inner()
        .map_err(|e| io(e.into_error()))?
        .sync_all()
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.sosd");
        let keys: Vec<u64> = (0..20_000).map(|i| i * 3 + (i % 7) * (1 << 40)).collect();
        write_sosd(&path, &keys).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            8 + 8 * keys.len() as u64
        );
        assert_eq!(read_sosd(&path).unwrap(), keys);
        write_sosd(&path, &[]).unwrap();
        assert_eq!(read_sosd(&path).unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn layout_is_little_endian_count_then_keys() {
        let mut bytes = 2u64.to_le_bytes().to_vec();
        bytes.extend(5u64.to_le_bytes());
        bytes.extend(u64::MAX.to_le_bytes());
        assert_eq!(decode_sosd(&bytes).unwrap(), [5, u64::MAX]);
    }

    #[test]
    fn truncated_oversized_and_empty_files_are_size_mismatches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.sosd");
        let mut good = 3u64.to_le_bytes().to_vec();
        good.extend([1u64, 2, 3].iter().flat_map(|k| k.to_le_bytes()));
        let cases: [(&[u8], u64, u64); 4] = [
            (&good[..good.len() - 1], 3, 31),
            (&[&good[..], &[0u8; 8]].concat(), 3, 40),
            (&[], 0, 0),
            (&good[..5], 0, 5),
        ];
        for (bytes, header, actual) in cases {
            std::fs::write(&path, bytes).unwrap();
            match read_sosd(&path) {
                Err(BenchError::SizeMismatch {
                    path: p,
                    header_count,
                    actual_bytes,
                    ..
                }) => {
                    assert_eq!((header_count, actual_bytes), (header, actual));
                    assert_eq!(p, path);
                }
                other => panic!("{} bytes: {other:?}", bytes.len()),
            }
        }
        // Issue 13: an empty file claimed a header ("header says 0 keys (8 bytes)").
        std::fs::write(&path, b"").unwrap();
        let said = read_sosd(&path).unwrap_err().to_string();
        assert!(
            said.contains("0 bytes, too short for the 8-byte SOSD header"),
            "{said}"
        );
        assert!(!said.contains("header says"), "{said}");
    }

    #[test]
    fn absurd_counts_do_not_overflow() {
        let bytes = u64::MAX.to_le_bytes();
        match decode_sosd(&bytes) {
            Err(BenchError::SizeMismatch { expected_bytes, .. }) => {
                assert_eq!(expected_bytes, u64::MAX)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let err = read_sosd("/nonexistent/keys.sosd").unwrap_err();
        assert!(matches!(err, BenchError::Io { .. }));
        assert!(err.to_string().contains("/nonexistent/keys.sosd"));
    }

    proptest! {
        #[test]
        fn decoder_never_panics_and_accepts_only_exact_sizes(
            bytes in proptest::collection::vec(any::<u8>(), 0..100),
        ) {
            if let Ok(keys) = decode_sosd(&bytes) {
                prop_assert_eq!(bytes.len(), 8 + 8 * keys.len());
            }
        }
    }
}
