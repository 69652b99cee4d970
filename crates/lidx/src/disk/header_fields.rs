//! Fixed-offset fields of the on-disk structures' blocks, and the checks every header block
//! starts with.
//!
//! Each file format keeps its own byte layout, with its offset table at the top of its codec file
//! and a diagram in `docs/format.md` (as redb's `header.rs`). What they share is here, so that a
//! field is read and written one way and a wrong file is refused with the same typed errors
//! whatever structure it was opened as:
//!
//! * little-endian `u32`, `u64` and `f64` fields at byte offsets ([`u32_at`], [`u64_at`],
//!   [`f64_at`], [`put_u32`], [`put_u64`], [`put_u64s`]): the layouts are tables of offsets,
//!   so the code that follows them reads by offset too (a header written in order, like
//!   ALEX's, uses [`crate::codec::Encoder`] instead);
//! * the start of a header block ([`HeaderStart`]): magic `u64` at 0 ([`Error::BadMagic`]),
//!   format version `u32` at 8 ([`Error::UnsupportedVersion`], whose message tells the user to
//!   rebuild), and, in the formats that have one, a kind `u32` at 12; a block too short for the
//!   header is [`Error::Corrupt`] for block 0 or [`Error::Truncated`], as each format chose
//!   ([`Short`]);
//! * the block size a header records ([`check_block_size`]): a power of two from 512 bytes to
//!   16 MiB, as [`crate::io::check_block_size`] allows for a device;
//! * the key type name, 16 bytes zero-padded ([`put_key_name`], [`key_name_at`]), and its
//!   check against the key type a caller asks for ([`check_key_at`], through
//!   [`crate::key::check_key_type`]).
//!
//! Anything else a header says is checked by its own decoder, which knows what its fields
//! mean; [`corrupt_block0`] is the error it gives ([`corrupt_at`] for any other block).

use crate::error::{Error, Result};
use crate::key::Key;

/// Offset of the magic number in every header block.
pub(crate) const MAGIC_AT: usize = 0;
/// Offset of the format version.
pub(crate) const VERSION_AT: usize = 8;
/// Offset of the kind, in the formats that record one.
pub(crate) const KIND_AT: usize = 12;
/// Bytes of a key type name field.
pub(crate) const KEY_NAME_BYTES: usize = 16;

/// The little-endian `u32` at `at` (the caller has checked that `b` holds it).
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian `u64` at `at` (the caller has checked that `b` holds it).
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The `f64` whose bits are the little-endian `u64` at `at`.
pub(crate) fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_bits(u64_at(b, at))
}

/// Writes `v` little-endian at `at`.
pub(crate) fn put_u32(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes `v` little-endian at `at`.
pub(crate) fn put_u64(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Writes each `(offset, value)` as a little-endian `u64`.
pub(crate) fn put_u64s(out: &mut [u8], fields: &[(usize, u64)]) {
    for &(at, v) in fields {
        put_u64(out, at, v);
    }
}

/// Writes the key type name `name` into the [`KEY_NAME_BYTES`] at `at`, zero-padded (cut to
/// fit; every `Key::NAME` fits).
pub(crate) fn put_key_name(out: &mut [u8], at: usize, name: &str) {
    let field = &mut out[at..at + KEY_NAME_BYTES];
    field.fill(0);
    let n = name.len().min(KEY_NAME_BYTES);
    field[..n].copy_from_slice(&name.as_bytes()[..n]);
}

/// The key type name in the [`KEY_NAME_BYTES`] at `at`: the bytes before the first zero;
/// `Err` with them decoded lossily when they are not UTF-8.
pub(crate) fn key_name_at(b: &[u8], at: usize) -> std::result::Result<&str, String> {
    let raw = &b[at..at + KEY_NAME_BYTES];
    let len = raw.iter().position(|&c| c == 0).unwrap_or(KEY_NAME_BYTES);
    std::str::from_utf8(&raw[..len]).map_err(|_| String::from_utf8_lossy(&raw[..len]).into_owned())
}

/// Writes `K`'s name at `name_at` and its size (`u32`) at `size_at`: what [`check_key_at`]
/// checks.
pub(crate) fn put_key_at<K: Key>(out: &mut [u8], name_at: usize, size_at: usize) {
    put_key_name(out, name_at, K::NAME);
    put_u32(out, size_at, K::SIZE as u32);
}

/// [`Error::KeyTypeMismatch`] unless the key type name at `name_at` and the key size (`u32`)
/// at `size_at` are those of `K`; a name that is not UTF-8 is a mismatch too.
pub(crate) fn check_key_at<K: Key>(
    b: &[u8],
    name_at: usize,
    size_at: usize,
    file: &str,
) -> Result<()> {
    let name: std::borrow::Cow<'_, str> = match key_name_at(b, name_at) {
        Ok(name) => name.into(),
        Err(lossy) => lossy.into(),
    };
    crate::key::check_key_type::<K>(file, &name, u32_at(b, size_at))
}

/// [`Error::Corrupt`] for block `block` of `file`.
pub(crate) fn corrupt_at(file: &str, block: u64, what: impl Into<String>) -> Error {
    Error::Corrupt {
        file: file.to_string(),
        block: Some(block),
        what: what.into(),
    }
}

/// [`Error::Corrupt`] for block 0 (the header) of `file`.
pub(crate) fn corrupt_block0(file: &str, what: impl Into<String>) -> Error {
    corrupt_at(file, 0, what)
}

/// [`Error::Corrupt`] for block 0 of `file` unless `block_size` is a power of two from 512
/// bytes to 16 MiB; the usable bytes of such a block otherwise.
pub(crate) fn check_block_size(block_size: u32, file: &str) -> Result<usize> {
    if !block_size.is_power_of_two() || !(512..=1 << 24).contains(&block_size) {
        return Err(corrupt_block0(
            file,
            format!("block size {block_size} is invalid: not a power of two from 512 to 16 MiB"),
        ));
    }
    Ok(block_size as usize - crate::io::BLOCK_TRAILER)
}

/// [`Error::Corrupt`] for block 0 of `file` unless the block size it was `built` with is the
/// one it is `opened` with. `advise` words it with how to open it (the B+-tree family); without
/// it, the short form of the disk PGM and FITing-tree.
pub(crate) fn check_built_block_size(
    file: &str,
    built: u32,
    opened: usize,
    advise: bool,
) -> Result<()> {
    if built as usize == opened {
        return Ok(());
    }
    Err(corrupt_block0(
        file,
        if advise {
            format!(
                "built with {built}-byte blocks but opened with {opened}-byte blocks; open it \
                 with a Storage of the block size it was built with"
            )
        } else {
            format!("built with {built}-byte blocks, opened with {opened}-byte blocks")
        },
    ))
}

/// [`Error::Truncated`] for `file` if it holds fewer than the `header` blocks it says it has.
pub(crate) fn check_header_blocks(file: &str, present: u64, header: u64) -> Result<()> {
    if present < header {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("{present} blocks, the header says {header}"),
        });
    }
    Ok(())
}

/// Which error a block too short for its header gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Short {
    /// [`Error::Corrupt`] for block 0.
    Corrupt,
    /// [`Error::Truncated`].
    Truncated,
}

/// What the first bytes of a header block must say. See the module docs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeaderStart {
    /// The header, in errors ("header", "meta block", "the manifest").
    what: &'static str,
    /// Magic number at offset 0.
    magic: u64,
    /// Format version at offset 8 (the only one this build reads).
    version: u32,
    /// Kind at offset 12, in the formats that record one.
    kind: Option<u32>,
    /// Bytes of the header: a shorter block is refused before any field is read.
    bytes: usize,
    /// The error of a shorter block.
    short: Short,
}

impl HeaderStart {
    /// A header of `bytes` bytes that starts with `magic` and `version`, no kind; a shorter
    /// block is [`Error::Corrupt`].
    pub(crate) const fn new(what: &'static str, magic: u64, version: u32, bytes: usize) -> Self {
        HeaderStart {
            what,
            magic,
            version,
            kind: None,
            bytes,
            short: Short::Corrupt,
        }
    }

    /// The same with kind `kind` at offset 12.
    pub(crate) const fn kind(self, kind: u32) -> Self {
        HeaderStart {
            kind: Some(kind),
            ..self
        }
    }

    /// The same, a shorter block being [`Error::Truncated`].
    pub(crate) const fn truncated(self) -> Self {
        HeaderStart {
            short: Short::Truncated,
            ..self
        }
    }

    /// Writes the magic, the version and the kind (if any) at the start of `out`.
    pub(crate) fn encode(&self, out: &mut [u8]) {
        put_u64(out, MAGIC_AT, self.magic);
        put_u32(out, VERSION_AT, self.version);
        if let Some(kind) = self.kind {
            put_u32(out, KIND_AT, kind);
        }
    }

    /// Checks the length of `bytes` (block 0's usable bytes, or more), the magic, the version
    /// and the kind, in that order, with the typed errors of the module docs for `file`.
    pub(crate) fn check(&self, bytes: &[u8], file: &str) -> Result<()> {
        if bytes.len() < self.bytes {
            let what = format!(
                "{} needs {} bytes, the block holds {}",
                self.what,
                self.bytes,
                bytes.len()
            );
            return Err(match self.short {
                Short::Corrupt => corrupt_block0(file, what),
                Short::Truncated => Error::Truncated {
                    file: file.to_string(),
                    what,
                },
            });
        }
        let magic = u64_at(bytes, MAGIC_AT);
        if magic != self.magic {
            return Err(Error::BadMagic {
                file: file.to_string(),
                expected: self.magic,
                got: magic,
            });
        }
        let version = u32_at(bytes, VERSION_AT);
        if version != self.version {
            return Err(Error::UnsupportedVersion {
                file: file.to_string(),
                got: version,
                supported: self.version,
            });
        }
        if let Some(kind) = self.kind {
            let got = u32_at(bytes, KIND_AT);
            if got != kind {
                return Err(corrupt_block0(
                    file,
                    format!("kind {got}: {} has kind {kind}", self.what),
                ));
            }
        }
        Ok(())
    }
}

/// Asserts that `decode` refuses `good`, a header block it accepts, with a flipped magic
/// ([`Error::BadMagic`]) and with another version ([`Error::UnsupportedVersion`]): that a
/// decoder checks its [`HeaderStart`].
#[cfg(test)]
pub(crate) fn assert_start_checked<T: std::fmt::Debug>(
    good: &[u8],
    decode: impl Fn(&[u8]) -> Result<T>,
) {
    decode(good).unwrap();
    let mut bad = good.to_vec();
    bad[MAGIC_AT + 1] ^= 1;
    assert!(matches!(decode(&bad), Err(Error::BadMagic { .. })));
    let mut bad = good.to_vec();
    bad[VERSION_AT] ^= 0x40;
    assert!(matches!(
        decode(&bad),
        Err(Error::UnsupportedVersion { .. })
    ));
}

/// Encodes `value` into a block of 4092 usable bytes, asserts that `decode` gives it back and
/// checks its [`HeaderStart`] ([`assert_start_checked`]); returns the block.
#[cfg(test)]
pub(crate) fn assert_round_trip<T: std::fmt::Debug + PartialEq>(
    value: &T,
    encode: impl Fn(&T, &mut [u8]),
    decode: impl Fn(&[u8]) -> Result<T>,
) -> Vec<u8> {
    let mut buf = vec![0u8; 4092];
    encode(value, &mut buf);
    assert_eq!(&decode(&buf).unwrap(), value);
    assert_start_checked(&buf, decode);
    buf
}

/// Asserts that `decode` refuses with [`Error::Corrupt`] for block 0 each copy of `good` (a
/// header block it accepts) that `damage` changed at one of the `offsets`: that it checks the
/// field there.
#[cfg(test)]
pub(crate) fn assert_fields_checked<T: std::fmt::Debug>(
    good: &[u8],
    offsets: impl IntoIterator<Item = usize>,
    damage: impl Fn(&mut [u8], usize),
    decode: impl Fn(&[u8]) -> Result<T>,
) {
    for at in offsets {
        let mut bad = good.to_vec();
        damage(&mut bad, at);
        assert!(
            matches!(decode(&bad), Err(Error::Corrupt { block: Some(0), .. })),
            "field at {at}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: HeaderStart =
        HeaderStart::new("header", u64::from_le_bytes(*b"lidxTEST"), 3, 40).kind(2);

    #[test]
    fn fields_round_trip() {
        let mut b = [0xaau8; 64];
        START.encode(&mut b);
        put_u64s(&mut b, &[(16, 7), (24, 1.5f64.to_bits())]);
        put_key_name(&mut b, 32, "u64");
        assert_eq!(u64_at(&b, 16), 7);
        assert_eq!(f64_at(&b, 24), 1.5);
        assert_eq!(key_name_at(&b, 32), Ok("u64"));
        START.check(&b, "f").unwrap();
        put_key_at::<u64>(&mut b, 32, 12);
        check_key_at::<u64>(&b, 32, 12, "f").unwrap();
        assert!(matches!(
            check_key_at::<u32>(&b, 32, 12, "f"),
            Err(Error::KeyTypeMismatch { .. })
        ));
        b[32] = 0xff;
        assert!(key_name_at(&b, 32).is_err());
        assert!(matches!(
            check_key_at::<u64>(&b, 32, 12, "f"),
            Err(Error::KeyTypeMismatch { .. })
        ));
    }

    #[test]
    fn the_start_gives_typed_errors() {
        let mut b = [0u8; 64];
        START.encode(&mut b);
        let mut bad = b;
        bad[MAGIC_AT] ^= 1;
        assert!(matches!(
            START.check(&bad, "f"),
            Err(Error::BadMagic { .. })
        ));
        let mut old = b;
        old[VERSION_AT] = 2;
        crate::error::assert_refused_as_old(START.check(&old, "f").unwrap_err(), 2, 3);
        let mut bad = b;
        bad[KIND_AT] = 1;
        assert!(matches!(
            START.check(&bad, "f"),
            Err(Error::Corrupt { block: Some(0), .. })
        ));
        assert!(matches!(
            START.check(&b[..39], "f"),
            Err(Error::Corrupt { block: Some(0), .. })
        ));
        let truncating = START.truncated();
        assert!(matches!(
            truncating.check(&b[..39], "f"),
            Err(Error::Truncated { .. })
        ));
        for bs in [0u32, 511, 1000, 1 << 25] {
            assert!(check_block_size(bs, "f").is_err(), "{bs}");
        }
        assert_eq!(check_block_size(4096, "f").unwrap(), 4092);
    }
}
