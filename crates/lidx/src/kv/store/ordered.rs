//! [`OrderedKey`]: the fixed key types as byte strings whose byte order is their order, so a
//! store of typed keys ranges in the type's order.

use crate::key::Str16;

/// A key type with an order-preserving byte encoding: `a < b` exactly when
/// `a.ordered_bytes() < b.ordered_bytes()` byte-wise.
pub trait OrderedKey: Sized {
    /// The encoding.
    fn ordered_bytes(&self) -> Vec<u8>;
    /// The key back from its encoding; `None` for bytes no key encodes to.
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self>;
}

impl OrderedKey for u64 {
    /// Big-endian, 8 bytes.
    fn ordered_bytes(&self) -> Vec<u8> {
        self.to_be_bytes().to_vec()
    }
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self> {
        Some(u64::from_be_bytes(bytes.try_into().ok()?))
    }
}

impl OrderedKey for u32 {
    /// Big-endian, 4 bytes.
    fn ordered_bytes(&self) -> Vec<u8> {
        self.to_be_bytes().to_vec()
    }
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self> {
        Some(u32::from_be_bytes(bytes.try_into().ok()?))
    }
}

impl OrderedKey for i64 {
    /// Big-endian with the sign bit flipped, so negatives come first.
    fn ordered_bytes(&self) -> Vec<u8> {
        ((*self as u64) ^ (1 << 63)).to_be_bytes().to_vec()
    }
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self> {
        Some((u64::from_be_bytes(bytes.try_into().ok()?) ^ (1 << 63)) as i64)
    }
}

impl OrderedKey for f64 {
    /// IEEE bits, big-endian: negatives with every bit flipped, others with the sign bit
    /// set (the total order of `f64::total_cmp`; NaNs sort at the ends).
    fn ordered_bytes(&self) -> Vec<u8> {
        let bits = self.to_bits();
        let key = if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        };
        key.to_be_bytes().to_vec()
    }
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self> {
        let key = u64::from_be_bytes(bytes.try_into().ok()?);
        let bits = if key >> 63 == 1 {
            key & !(1 << 63)
        } else {
            !key
        };
        Some(f64::from_bits(bits))
    }
}

impl OrderedKey for Str16 {
    /// The 16 bytes as they are (a `Str16` already orders byte-wise).
    fn ordered_bytes(&self) -> Vec<u8> {
        self.to_vec()
    }
    fn from_ordered_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_order<K: OrderedKey + PartialOrd + std::fmt::Debug + Copy>(sorted: &[K]) {
        for w in sorted.windows(2) {
            assert!(
                w[0].ordered_bytes() < w[1].ordered_bytes(),
                "{:?} {:?}",
                w[0],
                w[1]
            );
        }
        for k in sorted {
            assert_eq!(K::from_ordered_bytes(&k.ordered_bytes()), Some(*k));
        }
    }

    #[test]
    fn encodings_keep_order_and_round_trip() {
        assert_order(&[0u64, 1, 255, 256, u64::MAX]);
        assert_order(&[0u32, 7, u32::MAX]);
        assert_order(&[i64::MIN, -2, -1, 0, 1, i64::MAX]);
        assert_order(&[
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            2.5,
            f64::INFINITY,
        ]);
        let mut a = [0u8; 16];
        a[0] = b'a';
        let mut b = a;
        b[1] = b'b';
        assert_order(&[a, b]);
        assert_eq!(u64::from_ordered_bytes(b"short"), None);
    }
}
