//! Key types an index can hold, and the order-preserving map models learn from.
//!
//! A [`Key`] has a total order (`key_cmp`) used by every search, and a map `to_model` into
//! `u64` that never reverses that order: `a < b` implies `a.to_model() <= b.to_model()`. Models
//! (PLA segments, splines, RMI) work on the `u64` image, subtracting a segment's first key in
//! integer arithmetic before converting to `f64`, so u64 keys above 2^53 keep their precision
//! where it matters (within a segment).
//!
//! | type      | order                         | `to_model`                              | injective |
//! |-----------|-------------------------------|-----------------------------------------|-----------|
//! | `u64`     | numeric                       | identity                                | yes       |
//! | `u32`     | numeric                       | widening                                | yes       |
//! | `i64`     | numeric                       | flip the sign bit                       | yes       |
//! | `f64`     | IEEE total order, -0.0 < +0.0 | sign-magnitude to offset binary         | yes       |
//! | [`Str16`] | bytewise (memcmp)             | first 8 bytes, big-endian               | no        |
//!
//! NaN has no place in the order: builders reject it with [`Error::InvalidKey`]. For `f64` the
//! order is the IEEE-754 total order restricted to non-NaN values, so `-0.0` sorts before `+0.0`
//! and the two are different keys; this keeps the order and the model map consistent.
//!
//! Fixed 16-byte strings are compared bytewise, but the model sees only their first 8 bytes.
//! Strings that share those 8 bytes are one point to a model, and an index widens its window to
//! cover the whole group (see `MODEL_INJECTIVE`): results stay exact, windows grow with the
//! size of such groups. (Paper 000 §6.5 maps strings to a base-256 `double`, which silently loses
//! precision past about 7 bytes; our map is exact about what it drops.)

use std::cmp::Ordering;
use std::fmt::Debug;

use crate::error::{Error, Result};

/// A fixed-width 16-byte string key, compared bytewise.
pub type Str16 = [u8; 16];

/// The `write_to` / `read_from` pair of a numeric key: its little-endian bytes.
macro_rules! little_endian_codec {
    () => {
        #[inline(always)]
        fn write_to(&self, out: &mut [u8]) {
            out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
        }
        #[inline(always)]
        fn read_from(bytes: &[u8]) -> Self {
            let mut raw = [0u8; Self::SIZE];
            raw.copy_from_slice(&bytes[..Self::SIZE]);
            Self::from_le_bytes(raw)
        }
    };
}

/// [`Key`] for a primitive integer: its own order, its full range, its little-endian bytes,
/// and `to_model` by `|k| model` (order-preserving into `u64`, injective).
macro_rules! integer_key {
    ($t:ty, |$k:ident| $model:expr) => {
        impl Key for $t {
            const NAME: &'static str = stringify!($t);
            const MODEL_INJECTIVE: bool = true;
            const SIZE: usize = std::mem::size_of::<$t>();
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn key_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            #[inline(always)]
            fn key_lt(&self, other: &Self) -> bool {
                *self < *other
            }
            #[inline(always)]
            fn to_model(self) -> u64 {
                let $k = self;
                $model
            }
            little_endian_codec!();
        }
    };
}

/// The first 8 bytes of a byte string, big-endian, zero-padded past its end: the model image
/// of a [`Str16`], and what any model that sees 8 bytes of a string key learns on. Monotone in
/// byte order (a smaller string never maps higher); strings sharing their first 8 bytes (or
/// differing only by trailing zeros within them) map alike.
#[inline]
pub fn head8(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(raw)
}

/// Byte order of two byte strings, as `a.cmp(b)`, comparing the first 8 bytes as one integer
/// when both have them: a merge compares every record of a table once, and for short keys the
/// call into `memcmp` cost more than the comparison (a quarter of a merge's time).
#[inline]
pub(crate) fn cmp_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
        if a.len() == 8 && b.len() == 8 {
            return std::cmp::Ordering::Equal;
        }
    }
    a.cmp(b)
}

/// A key an index can be built on. See the module docs for the order and model map of each type.
pub trait Key: Copy + Debug + Send + Sync + 'static {
    /// Short name used in reports and error messages (`"u64"`, `"str16"`, ...).
    const NAME: &'static str;
    /// True when `to_model` is strictly increasing, so equal model values mean equal keys.
    /// When false, indexes widen windows to cover every key sharing a model value.
    const MODEL_INJECTIVE: bool;
    /// Size of the key in bytes, as stored.
    const SIZE: usize;
    /// The smallest key.
    const MIN: Self;
    /// The largest key.
    const MAX: Self;

    /// The total order every search uses.
    fn key_cmp(&self, other: &Self) -> Ordering;

    /// `self < other` in the key order; the comparison inside branchless searches.
    #[inline(always)]
    fn key_lt(&self, other: &Self) -> bool {
        self.key_cmp(other) == Ordering::Less
    }

    /// Order-preserving (non-decreasing) map into the domain models learn on.
    fn to_model(self) -> u64;

    /// Why this value cannot be a key, if it cannot (NaN).
    #[inline]
    fn invalid_reason(&self) -> Option<&'static str> {
        None
    }

    /// Writes the key's on-disk form (`SIZE` bytes: little-endian numbers, raw string bytes)
    /// into `out[..SIZE]`.
    fn write_to(&self, out: &mut [u8]);

    /// Reads a key written by [`Key::write_to`] from `bytes[..SIZE]`. Every bit pattern decodes
    /// to some value (a corrupt `f64` may decode to NaN, which still has a place in
    /// `key_cmp`), so decoding never fails; checksums catch corruption.
    fn read_from(bytes: &[u8]) -> Self;
}

integer_key!(u64, |k| k);
integer_key!(u32, |k| u64::from(k));
// Flipping the sign bit maps the two's-complement order onto the unsigned one.
integer_key!(i64, |k| (k as u64) ^ (1 << 63));

impl Key for f64 {
    const NAME: &'static str = "f64";
    const MODEL_INJECTIVE: bool = true;
    const SIZE: usize = 8;
    const MIN: Self = f64::NEG_INFINITY;
    const MAX: Self = f64::INFINITY;
    #[inline(always)]
    fn key_cmp(&self, other: &Self) -> Ordering {
        self.to_model().cmp(&other.to_model())
    }
    #[inline(always)]
    fn key_lt(&self, other: &Self) -> bool {
        self.to_model() < other.to_model()
    }
    /// Negative values have all bits flipped, non-negative ones only the sign bit, which turns
    /// the sign-magnitude encoding into an unsigned one with the same order.
    #[inline(always)]
    fn to_model(self) -> u64 {
        let bits = self.to_bits();
        let mask = (((bits as i64) >> 63) as u64) | (1 << 63);
        bits ^ mask
    }
    #[inline]
    fn invalid_reason(&self) -> Option<&'static str> {
        self.is_nan()
            .then_some("NaN has no place in the key order; drop or replace NaN values")
    }
    little_endian_codec!();
}

impl Key for Str16 {
    const NAME: &'static str = "str16";
    const MODEL_INJECTIVE: bool = false;
    const SIZE: usize = 16;
    const MIN: Self = [0; 16];
    const MAX: Self = [u8::MAX; 16];
    #[inline(always)]
    fn key_cmp(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    #[inline(always)]
    fn to_model(self) -> u64 {
        head8(&self)
    }
    #[inline(always)]
    fn write_to(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(self);
    }
    #[inline(always)]
    fn read_from(bytes: &[u8]) -> Self {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&bytes[..16]);
        raw
    }
}

/// [`Error::KeyTypeMismatch`] unless a file whose header names key type `name` of `size` bytes
/// holds keys of type `K`: what every on-disk structure checks when it is opened.
pub fn check_key_type<K: Key>(file: &str, name: &str, size: u32) -> Result<()> {
    if name != K::NAME || size as usize != K::SIZE {
        return Err(Error::KeyTypeMismatch {
            file: file.to_string(),
            expected: K::NAME,
            got: name.to_string(),
        });
    }
    Ok(())
}

/// Checks that `keys` are valid and sorted ascending; equal neighbours (duplicates) are allowed.
///
/// Returns [`Error::InvalidKey`] for a NaN and [`Error::OutOfOrder`] for the first descent.
pub fn check_sorted<K: Key>(keys: &[K]) -> Result<()> {
    check_order(keys, false)
}

/// Like [`check_sorted`], but equal neighbours are an [`Error::DuplicateKey`].
pub(crate) fn check_strictly_sorted<K: Key>(keys: &[K]) -> Result<()> {
    check_order(keys, true)
}

fn check_order<K: Key>(keys: &[K], strict: bool) -> Result<()> {
    for (index, key) in keys.iter().enumerate() {
        check_next(index, index.checked_sub(1).map(|i| &keys[i]), key, strict)?;
    }
    Ok(())
}

/// Checks the key at `index` of a stream against the one before it (`previous`, `None` for
/// the first): [`Error::InvalidKey`] for a NaN, [`Error::OutOfOrder`] for a descent, and, when
/// `strict`, [`Error::DuplicateKey`] for an equal neighbour. For builders that consume an
/// iterator and cannot call [`check_sorted`] on a slice.
pub(crate) fn check_next<K: Key>(
    index: usize,
    previous: Option<&K>,
    key: &K,
    strict: bool,
) -> Result<()> {
    if let Some(reason) = key.invalid_reason() {
        return Err(Error::InvalidKey { index, reason });
    }
    let Some(previous) = previous else {
        return Ok(());
    };
    match previous.key_cmp(key) {
        Ordering::Greater => Err(Error::OutOfOrder {
            index,
            previous: format!("{previous:?}"),
            got: format!("{key:?}"),
        }),
        Ordering::Equal if strict => Err(Error::DuplicateKey {
            index,
            key: format!("{key:?}"),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_bytes_is_byte_order() {
        let keys: [&[u8]; 12] = [
            b"",
            b"a",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefgha",
            b"abcdefgi",
            b"abcdefh",
            &[0xff; 8],
            &[0xff; 9],
            &[0, 0, 0, 0, 0, 0, 0, 0],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0],
        ];
        for a in keys {
            for b in keys {
                assert_eq!(cmp_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    fn assert_model_order<K: Key>(sorted: &[K]) {
        for pair in sorted.windows(2) {
            assert!(pair[0].key_lt(&pair[1]), "{:?} !< {:?}", pair[0], pair[1]);
            assert!(pair[0].to_model() <= pair[1].to_model());
            if K::MODEL_INJECTIVE {
                assert!(pair[0].to_model() < pair[1].to_model());
            }
        }
    }

    #[test]
    fn model_map_preserves_order_on_edge_values() {
        assert_model_order(&[0u64, 1, 2, 1 << 53, (1 << 53) + 1, u64::MAX - 1, u64::MAX]);
        assert_model_order(&[0u32, 1, u32::MAX - 1, u32::MAX]);
        assert_model_order(&[i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX]);
        assert_model_order(&[
            f64::NEG_INFINITY,
            f64::MIN,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            f64::MAX,
            f64::INFINITY,
        ]);
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        b[15] = 1;
        let mut c = [0u8; 16];
        c[0] = 1;
        assert_model_order(&[a, b, c, [0xff; 16]]);
        a[7] = 9;
        assert_eq!(a.to_model(), 9);
    }

    #[test]
    fn nan_is_rejected_with_its_position() {
        let err = check_sorted(&[1.0, f64::NAN, 3.0]).unwrap_err();
        assert!(matches!(err, Error::InvalidKey { index: 1, .. }), "{err}");
    }

    #[test]
    fn descent_is_reported_with_both_keys() {
        let err = check_sorted(&[1u64, 5, 3]).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfOrder {
                index: 2,
                previous: "5".into(),
                got: "3".into()
            }
        );
        assert!(err.to_string().contains("sort the keys"));
    }

    #[test]
    fn duplicates_are_allowed_unless_strict() {
        assert!(check_sorted(&[1u64, 1, 2]).is_ok());
        assert!(matches!(
            check_strictly_sorted(&[1u64, 1, 2]),
            Err(Error::DuplicateKey { index: 1, .. })
        ));
        assert!(check_sorted::<u64>(&[]).is_ok());
    }

    fn assert_round_trip<K: Key>(keys: &[K]) {
        for key in keys {
            let mut bytes = vec![0xAAu8; K::SIZE + 3];
            key.write_to(&mut bytes);
            assert_eq!(&bytes[K::SIZE..], &[0xAA; 3], "writes exactly SIZE bytes");
            let back = K::read_from(&bytes);
            assert_eq!(back.key_cmp(key), Ordering::Equal, "{key:?}");
            assert_eq!(back.to_model(), key.to_model());
        }
    }

    #[test]
    fn on_disk_form_round_trips() {
        assert_round_trip(&[0u64, 1, u64::MAX, 0x0102_0304_0506_0708]);
        assert_round_trip(&[0u32, 7, u32::MAX]);
        assert_round_trip(&[i64::MIN, -1, 0, i64::MAX]);
        assert_round_trip(&[f64::NEG_INFINITY, -0.0, 0.0, 1.5, f64::MAX]);
        assert_round_trip(&[[0u8; 16], [0xFF; 16], *b"sixteen bytes!!!"]);
    }
}
