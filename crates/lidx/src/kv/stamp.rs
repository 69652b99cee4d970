//! The 32-byte stamp that makes up the manifest's `CURRENT` file, and the little-endian
//! readers and magic/version check it shares with the manifest's and the WAL segments' codecs.
//!
//! | offset | size | field                                            |
//! |--------|------|--------------------------------------------------|
//! | 0      | 8    | magic (which file this is)                       |
//! | 8      | 4    | format version                                   |
//! | 12     | 4    | reserved, 0                                      |
//! | 16     | 8    | value (the manifest number)                      |
//! | 24     | 4    | crc32c of bytes 0..24                            |
//! | 28     | 4    | reserved, 0                                      |

use crate::error::{Error, Result};

/// Bytes of a stamp.
pub(super) const STAMP_BYTES: usize = 32;

/// An [`Error::Corrupt`] for a whole file (no block).
pub(crate) fn corrupt(file: &str, what: String) -> Error {
    Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    }
}

/// The little-endian `u32` at `at` (the caller checked the length).
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// The little-endian `u64` at `at` (the caller checked the length).
pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// [`Error::BadMagic`] or [`Error::UnsupportedVersion`] as far as `bytes` reach.
pub(crate) fn check_magic_version(
    file: &str,
    bytes: &[u8],
    magic: u64,
    version: u32,
) -> Result<()> {
    if bytes.len() >= 8 && le_u64(bytes, 0) != magic {
        return Err(Error::BadMagic {
            file: file.to_string(),
            expected: magic,
            got: le_u64(bytes, 0),
        });
    }
    if bytes.len() >= 12 && le_u32(bytes, 8) != version {
        return Err(Error::UnsupportedVersion {
            file: file.to_string(),
            got: le_u32(bytes, 8),
            supported: version,
        });
    }
    Ok(())
}

/// The stamp of `value` in a file of kind `magic`.
pub(crate) fn encode_stamp(magic: u64, version: u32, value: u64) -> [u8; STAMP_BYTES] {
    let mut b = [0u8; STAMP_BYTES];
    b[0..8].copy_from_slice(&magic.to_le_bytes());
    b[8..12].copy_from_slice(&version.to_le_bytes());
    b[16..24].copy_from_slice(&value.to_le_bytes());
    let crc = crc32c::crc32c(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// [`Error::Truncated`] when `bytes` is shorter than a `len`-byte header (`what`), and
/// [`Error::Corrupt`] when the crc32c at `crc_at` is not that of the bytes before it.
pub(crate) fn check_length_and_crc(
    file: &str,
    bytes: &[u8],
    len: usize,
    crc_at: usize,
    what: &str,
) -> Result<()> {
    if bytes.len() < len {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("{} bytes, shorter than the {len}-byte {what}", bytes.len()),
        });
    }
    let stored = le_u32(bytes, crc_at);
    let got = crc32c::crc32c(&bytes[..crc_at]);
    if stored != got {
        return Err(corrupt(
            file,
            format!("{what} checksum {got:#010x}, written as {stored:#010x}"),
        ));
    }
    Ok(())
}

/// The value of the stamp at the start of `bytes` (`what` names the stamp in errors): magic,
/// version, length, checksum and reserved bytes checked, in that order. Never panics.
pub(crate) fn decode_stamp(
    file: &str,
    bytes: &[u8],
    magic: u64,
    version: u32,
    what: &str,
) -> Result<u64> {
    check_magic_version(file, bytes, magic, version)?;
    check_length_and_crc(file, bytes, STAMP_BYTES, 24, what)?;
    if le_u32(bytes, 12) != 0 || le_u32(bytes, 28) != 0 {
        return Err(corrupt(file, format!("{what} reserved bytes are not 0")));
    }
    Ok(le_u64(bytes, 16))
}
