//! [`ArtKey`]: the binary-comparable byte string a radix tree indexes a key by.
//!
//! A radix tree branches on one key byte per level, so it needs each key as a byte string whose
//! lexicographic (memcmp) order is the key order. The ART paper (Leis et al., ICDE 2013, §IV
//! "Binary-comparable keys") transforms keys for this: unsigned integers are stored big-endian,
//! signed integers get their sign bit flipped, IEEE floats are mapped to offset binary. Every
//! injective [`Key`] already has such a map, [`Key::to_model`] (see `lidx::key`), so a key's
//! bytes are `to_model()` in big-endian order, cut to the key's size; a [`Str16`] is its own 16
//! bytes (bytewise order is its order, and its model map is not injective).
//!
//! All encodings have a fixed length per key type, so no key is a proper prefix of another
//! one. The tree relies on this: an inner node never sits at the end of a key, and every key
//! ends in a leaf. The longest encoding is 16 bytes ([`MAX_KEY_BYTES`]), which bounds the depth
//! of any path (every inner node consumes at least one byte).

use crate::key::{Key, Str16};

/// The longest key encoding, in bytes; also the most inner nodes on a root-to-leaf path.
pub const MAX_KEY_BYTES: usize = 16;

/// A key with a fixed-length, binary-comparable byte encoding (see the module docs).
///
/// For any two keys `a` and `b`, `a.key_cmp(&b)` equals the lexicographic comparison of
/// `a.key_bytes()` and `b.key_bytes()`, and all encodings of one type have the same length
/// (at most [`MAX_KEY_BYTES`]).
pub trait ArtKey: Key {
    /// The encoding, a byte array of fixed length.
    type Bytes: AsRef<[u8]> + Copy;

    /// The key's bytes, most significant first.
    fn key_bytes(&self) -> Self::Bytes;
}

impl ArtKey for u64 {
    type Bytes = [u8; 8];
    #[inline(always)]
    fn key_bytes(&self) -> [u8; 8] {
        self.to_be_bytes()
    }
}

impl ArtKey for u32 {
    type Bytes = [u8; 4];
    #[inline(always)]
    fn key_bytes(&self) -> [u8; 4] {
        self.to_be_bytes()
    }
}

impl ArtKey for i64 {
    type Bytes = [u8; 8];
    #[inline(always)]
    fn key_bytes(&self) -> [u8; 8] {
        self.to_model().to_be_bytes()
    }
}

impl ArtKey for f64 {
    type Bytes = [u8; 8];
    #[inline(always)]
    fn key_bytes(&self) -> [u8; 8] {
        self.to_model().to_be_bytes()
    }
}

impl ArtKey for Str16 {
    type Bytes = [u8; 16];
    #[inline(always)]
    fn key_bytes(&self) -> [u8; 16] {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_bytes_follow_key_order<K: ArtKey>(sorted: &[K]) {
        for pair in sorted.windows(2) {
            let (a, b) = (pair[0].key_bytes(), pair[1].key_bytes());
            assert_eq!(a.as_ref().len(), K::SIZE);
            assert!(a.as_ref() < b.as_ref(), "{:?} !< {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn byte_order_is_key_order() {
        assert_bytes_follow_key_order(&[0u64, 1, 255, 256, 1 << 56, u64::MAX]);
        assert_bytes_follow_key_order(&[0u32, 1, 256, u32::MAX]);
        assert_bytes_follow_key_order(&[i64::MIN, -256, -1, 0, 1, 255, i64::MAX]);
        assert_bytes_follow_key_order(&[
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            2.0,
            f64::INFINITY,
        ]);
        let mut b = [0u8; 16];
        b[15] = 1;
        assert_bytes_follow_key_order(&[[0u8; 16], b, [1; 16], [0xff; 16]]);
    }
}
