//! Which filters a [`crate::LidxTable`] takes over from DataFusion, and the key ranges they
//! come to.
//!
//! A filter is taken over (`Exact`) when it is, on the key column and literals only: a
//! comparison (`=`, `<`, `<=`, `>`, `>=`, either side), `BETWEEN` (not negated), `IN` (not
//! negated), or `AND` and `OR` of such filters. The scan then seeks the ranges the filter
//! comes to (`crate::ranges`) and reads only their records, so no row it returns needs
//! filtering and none it skips could have passed. Anything else, a predicate on the value,
//! `NOT IN`, `!=`, a function of the key, a `NULL` or a literal of another type, is
//! `Unsupported` and left to DataFusion's own `FilterExec`: refusing is always correct, so
//! whatever is not certain to come to exactly the same rows is refused.
//!
//! A literal is read as the key column's type would compare with it: an integer for `u64`
//! keys (a negative one or one past `u64::MAX` bounds nothing or everything, as the comparison
//! says), bytes or text for string keys. A table's string keys are exactly 16 bytes, compared
//! byte-wise with literals of any length as DataFusion compares binary values: for a shorter
//! literal `L` zero-padded to `P`, `key < L` is `key < P` and `key > L` is `key >= P`; for a
//! longer one cut to `T`, `key < L` is `key <= T`; `key = L` holds for no key of another length.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

use crate::ranges::{Cmp, Domain, KeyRange, KeyRanges};

/// A key type whose comparisons with literals this module translates.
pub(crate) trait PushKey: Domain {
    /// The keys `key <op> literal`, or `None` when the literal is not one this key compares
    /// with exactly.
    fn compare(op: Cmp, literal: &ScalarValue) -> Option<KeyRanges<Self>>;
}

impl PushKey for u64 {
    fn compare(op: Cmp, literal: &ScalarValue) -> Option<KeyRanges<Self>> {
        let v = integer(literal)?;
        Some(match u64::try_from(v) {
            Ok(v) => KeyRanges::compare(op, v),
            // Below every key: only `>` and `>=` hold, for all keys.
            Err(_) if v < 0 => match op {
                Cmp::Gt | Cmp::GtEq => KeyRanges::all(),
                _ => KeyRanges::none(),
            },
            // Above every key: only `<` and `<=` hold.
            Err(_) => match op {
                Cmp::Lt | Cmp::LtEq => KeyRanges::all(),
                _ => KeyRanges::none(),
            },
        })
    }
}

impl PushKey for [u8; 16] {
    fn compare(op: Cmp, literal: &ScalarValue) -> Option<KeyRanges<Self>> {
        let bytes = bytes(literal)?;
        if let Ok(exact) = <[u8; 16]>::try_from(bytes) {
            return Some(KeyRanges::compare(op, exact));
        }
        if bytes.len() < 16 {
            let mut padded = [0u8; 16];
            padded[..bytes.len()].copy_from_slice(bytes);
            return Some(match op {
                Cmp::Eq => KeyRanges::none(),
                Cmp::Lt | Cmp::LtEq => KeyRanges::compare(Cmp::Lt, padded),
                Cmp::Gt | Cmp::GtEq => KeyRanges::compare(Cmp::GtEq, padded),
            });
        }
        let cut: [u8; 16] = bytes[..16].try_into().expect("16 bytes");
        Some(match op {
            Cmp::Eq => KeyRanges::none(),
            Cmp::Lt | Cmp::LtEq => KeyRanges::compare(Cmp::LtEq, cut),
            Cmp::Gt | Cmp::GtEq => KeyRanges::compare(Cmp::Gt, cut),
        })
    }
}

impl PushKey for Vec<u8> {
    fn compare(op: Cmp, literal: &ScalarValue) -> Option<KeyRanges<Self>> {
        Some(KeyRanges::compare(op, bytes(literal)?.to_vec()))
    }
}

/// The value of an integer literal.
fn integer(literal: &ScalarValue) -> Option<i128> {
    Some(match literal {
        ScalarValue::Int8(Some(v)) => i128::from(*v),
        ScalarValue::Int16(Some(v)) => i128::from(*v),
        ScalarValue::Int32(Some(v)) => i128::from(*v),
        ScalarValue::Int64(Some(v)) => i128::from(*v),
        ScalarValue::UInt8(Some(v)) => i128::from(*v),
        ScalarValue::UInt16(Some(v)) => i128::from(*v),
        ScalarValue::UInt32(Some(v)) => i128::from(*v),
        ScalarValue::UInt64(Some(v)) => i128::from(*v),
        _ => return None,
    })
}

/// The bytes of a binary or text literal.
fn bytes(literal: &ScalarValue) -> Option<&[u8]> {
    match literal {
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => Some(b),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s.as_bytes()),
        _ => None,
    }
}

/// The keys `filter` holds for, when it is a filter on the column `key` that this module
/// takes over (module docs); `None` otherwise.
pub(crate) fn key_ranges<K: PushKey>(filter: &Expr, key: &str) -> Option<KeyRanges<K>> {
    let is_key = |e: &Expr| matches!(e, Expr::Column(c) if c.name == key);
    let literal = |e: &Expr| match e {
        Expr::Literal(v, _) => Some(v.clone()),
        _ => None,
    };
    match filter {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => Some(key_ranges(left, key)?.intersect(&key_ranges(right, key)?)),
            Operator::Or => Some(key_ranges(left, key)?.union(key_ranges(right, key)?)),
            _ => {
                let cmp = match op {
                    Operator::Eq => Cmp::Eq,
                    Operator::Lt => Cmp::Lt,
                    Operator::LtEq => Cmp::LtEq,
                    Operator::Gt => Cmp::Gt,
                    Operator::GtEq => Cmp::GtEq,
                    _ => return None,
                };
                if is_key(left) {
                    K::compare(cmp, &literal(right)?)
                } else if is_key(right) {
                    K::compare(cmp.flip(), &literal(left)?)
                } else {
                    None
                }
            }
        },
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) if is_key(expr) => {
            let from = K::compare(Cmp::GtEq, &literal(low)?)?;
            Some(from.intersect(&K::compare(Cmp::LtEq, &literal(high)?)?))
        }
        Expr::InList(InList {
            expr,
            list,
            negated: false,
        }) if is_key(expr) => {
            let mut points: Vec<KeyRange<K>> = Vec::with_capacity(list.len());
            for item in list {
                points.extend(
                    K::compare(Cmp::Eq, &literal(item)?)?
                        .ranges()
                        .iter()
                        .cloned(),
                );
            }
            Some(KeyRanges::of(points))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use datafusion::logical_expr::{col, lit};

    use super::*;

    fn members_u64(filter: &Expr) -> Option<Vec<u64>> {
        let ranges = key_ranges::<u64>(filter, "key")?;
        Some(
            (0..40)
                .filter(|k| ranges.ranges().iter().any(|r| r.contains(k)))
                .collect(),
        )
    }

    #[test]
    fn key_predicates_come_to_their_keys_and_others_are_refused() {
        let k = || col("key");
        assert_eq!(members_u64(&k().eq(lit(7u64))), Some(vec![7]));
        assert_eq!(members_u64(&lit(3i64).gt(k())), Some(vec![0, 1, 2]));
        assert_eq!(
            members_u64(&k().between(lit(5i32), lit(8u8))),
            Some(vec![5, 6, 7, 8])
        );
        assert_eq!(
            members_u64(&k().in_list(vec![lit(9u64), lit(2u64), lit(9u64)], false)),
            Some(vec![2, 9])
        );
        assert_eq!(
            members_u64(&k().lt(lit(2u64)).or(k().gt_eq(lit(38u64)))),
            Some(vec![0, 1, 38, 39])
        );
        assert_eq!(
            members_u64(&k().gt(lit(-5i64)).and(k().lt_eq(lit(1u64)))),
            Some(vec![0, 1])
        );
        assert_eq!(members_u64(&k().lt(lit(-1i64))), Some(vec![]));
        // Left to DataFusion: other columns, negations, other operators, NULLs, floats.
        assert_eq!(members_u64(&col("value").eq(lit(1u64))), None);
        assert_eq!(members_u64(&k().in_list(vec![lit(1u64)], true)), None);
        assert_eq!(members_u64(&k().not_eq(lit(1u64))), None);
        assert_eq!(members_u64(&k().eq(lit(ScalarValue::UInt64(None)))), None);
        assert_eq!(members_u64(&k().eq(lit(1.5f64))), None);
        assert_eq!(
            members_u64(&k().eq(lit(1u64)).or(col("value").eq(lit(1u64)))),
            None
        );
    }

    #[test]
    fn string_keys_compare_with_literals_of_any_length_byte_wise() {
        // Every 16-byte key built from these bytes, against what comparing the byte strings says.
        let keys: Vec<[u8; 16]> = [b"a".as_slice(), b"ab", b"abc", b"b"]
            .iter()
            .flat_map(|p| {
                [0u8, 1].map(|tail| {
                    let mut k = [0u8; 16];
                    k[..p.len()].copy_from_slice(p);
                    k[15] = tail;
                    k
                })
            })
            .collect();
        let literals: [&[u8]; 4] = [b"ab", b"ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0", &[b'a'; 17], b""];
        for literal in literals {
            let value = ScalarValue::Binary(Some(literal.to_vec()));
            for (op, cmp) in [
                (Cmp::Eq, Operator::Eq),
                (Cmp::Lt, Operator::Lt),
                (Cmp::LtEq, Operator::LtEq),
                (Cmp::Gt, Operator::Gt),
                (Cmp::GtEq, Operator::GtEq),
            ] {
                let ranges = <[u8; 16]>::compare(op, &value).expect("binary literal");
                for key in &keys {
                    let want = match cmp {
                        Operator::Eq => key.as_slice() == literal,
                        Operator::Lt => key.as_slice() < literal,
                        Operator::LtEq => key.as_slice() <= literal,
                        Operator::Gt => key.as_slice() > literal,
                        _ => key.as_slice() >= literal,
                    };
                    let got = ranges.ranges().iter().any(|r| r.contains(key));
                    assert_eq!(got, want, "{key:?} {cmp} {literal:?}");
                }
            }
        }
    }
}
