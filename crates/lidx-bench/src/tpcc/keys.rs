//! How every TPC-C index key is packed into one `u64` (paper 002 §10.6 indexes `u64` keys on
//! disk): composite keys as fixed-width bit fields, most significant column first, so that the
//! integer order is the order of the columns' tuple and every range of a key prefix (the
//! orders of one district, the lines of one order) is one contiguous key range.
//!
//! | index | fields, high to low (bits) | used bits |
//! |---|---|---|
//! | WAREHOUSE | w (16) | 16 |
//! | DISTRICT | w (16), d (4) | 20 |
//! | CUSTOMER | w, d, c (12) | 32 |
//! | CUSTOMER by name | w, d, last name rank (10), first name prefix (18), c (12) | 60 |
//! | HISTORY | insertion sequence number (the spec gives HISTORY no key) | < 40 |
//! | NEW-ORDER, ORDER | w, d, o (24) | 44 |
//! | ORDER by customer | w, d, c (12), o (24) | 56 |
//! | ORDER-LINE | w, d, o (24), ol (4) | 48 |
//! | ITEM | i (17) | 17 |
//! | STOCK | w (16), i (17) | 33 |
//!
//! Limits that follow: at most 65,535 warehouses, 4,095 customers per district, 131,071 items,
//! 15 lines per order (the spec's own bounds) and 2^24 - 1 orders per district, which
//! [`super::TpccConfig::check`] enforces up front from the transaction count.
//!
//! **Last names** (clause 4.3.2.3) are three syllables picked by the digits of a number
//! 0..999. The number is not in the strings' order (`BARBARBAR` is 0, `ABLEABLEABLE` is 222),
//! so the key holds the name's rank among the 1000 names sorted as byte strings
//! ([`last_name_rank`]): a range of one rank is exactly the customers of one last name, and
//! ranks order like the names. **First names** are random alphanumeric strings of 8 to 16
//! characters (clause 4.3.3.1); the key holds the first three, each as its rank in the sorted
//! alphanumeric alphabet (6 bits each, [`first_name_prefix`]), then the customer id to make the
//! key unique. Two customers of one last name whose first names share their first three
//! characters are therefore ordered by id, not by name: the transactions that select by last
//! name fetch every match of the name (they need the count anyway) and sort the tuples by the
//! whole first name in memory, so the customer they pick is the spec's (clause 2.5.2.2).

use std::sync::OnceLock;

const W_BITS: u32 = 16;
const D_BITS: u32 = 4;
const C_BITS: u32 = 12;
const O_BITS: u32 = 24;
const OL_BITS: u32 = 4;
const I_BITS: u32 = 17;
const LAST_BITS: u32 = 10;
const FIRST_BITS: u32 = 18;

/// The largest warehouse number a key holds.
pub(crate) const MAX_WAREHOUSES: u32 = (1 << W_BITS) - 1;
/// The largest order number a key holds.
pub(crate) const MAX_ORDER_ID: u32 = (1 << O_BITS) - 1;

/// WAREHOUSE's key.
pub(crate) fn warehouse(w: u32) -> u64 {
    u64::from(w)
}

/// DISTRICT's key.
pub(crate) fn district(w: u32, d: u32) -> u64 {
    (u64::from(w) << D_BITS) | u64::from(d)
}

/// CUSTOMER's key.
pub(crate) fn customer(w: u32, d: u32, c: u32) -> u64 {
    (district(w, d) << C_BITS) | u64::from(c)
}

/// The CUSTOMER secondary index's key: (w, d, last name, first name prefix, c).
pub(crate) fn customer_name(w: u32, d: u32, last: u16, first: &[u8], c: u32) -> u64 {
    let name = (u64::from(last_name_rank(last)) << FIRST_BITS) | first_name_prefix(first);
    ((((district(w, d) << LAST_BITS) << FIRST_BITS) | name) << C_BITS) | u64::from(c)
}

/// The half-open key range of the customers of district (w, d) named `last`.
pub(crate) fn customer_name_range(w: u32, d: u32, last: u16) -> (u64, u64) {
    let prefix = (district(w, d) << LAST_BITS) | u64::from(last_name_rank(last));
    let shift = FIRST_BITS + C_BITS;
    (prefix << shift, (prefix + 1) << shift)
}

/// The CUSTOMER key of the customer a CUSTOMER-by-name key names (its w, d and c fields).
pub(crate) fn customer_of_name(key: u64) -> u64 {
    let district = key >> (C_BITS + FIRST_BITS + LAST_BITS);
    (district << C_BITS) | (key & ((1 << C_BITS) - 1))
}

/// ORDER's and NEW-ORDER's key.
pub(crate) fn order(w: u32, d: u32, o: u32) -> u64 {
    (district(w, d) << O_BITS) | u64::from(o)
}

/// The half-open key range of district (w, d)'s orders (and new orders).
pub(crate) fn district_orders(w: u32, d: u32) -> (u64, u64) {
    (order(w, d, 0), order(w, d + 1, 0))
}

/// The order number of an ORDER, NEW-ORDER or ORDER-by-customer key.
pub(crate) fn order_id_of(key: u64) -> u32 {
    (key & u64::from(MAX_ORDER_ID)) as u32
}

/// The ORDER secondary index's key: (w, d, c, o).
pub(crate) fn order_customer(w: u32, d: u32, c: u32, o: u32) -> u64 {
    (customer(w, d, c) << O_BITS) | u64::from(o)
}

/// The ORDER key of the order an ORDER-by-customer key names (its w, d and o fields).
pub(crate) fn order_of_customer(key: u64) -> u64 {
    let district = key >> (O_BITS + C_BITS);
    (district << O_BITS) | u64::from(order_id_of(key))
}

/// The half-open key range of customer (w, d, c)'s orders in the secondary index.
pub(crate) fn customer_orders(w: u32, d: u32, c: u32) -> (u64, u64) {
    (order_customer(w, d, c, 0), order_customer(w, d, c + 1, 0))
}

/// ORDER-LINE's key.
pub(crate) fn order_line(w: u32, d: u32, o: u32, ol: u32) -> u64 {
    (order(w, d, o) << OL_BITS) | u64::from(ol)
}

/// The half-open key range of the lines of orders `o_lo..o_hi` of district (w, d).
pub(crate) fn order_lines(w: u32, d: u32, o_lo: u32, o_hi: u32) -> (u64, u64) {
    (order_line(w, d, o_lo, 0), order_line(w, d, o_hi, 0))
}

/// The half-open key range of every line of district (w, d).
pub(crate) fn district_order_lines(w: u32, d: u32) -> (u64, u64) {
    (order_line(w, d, 0, 0), order_line(w, d + 1, 0, 0))
}

/// ITEM's key.
pub(crate) fn item(i: u32) -> u64 {
    u64::from(i)
}

/// STOCK's key.
pub(crate) fn stock(w: u32, i: u32) -> u64 {
    (u64::from(w) << I_BITS) | u64::from(i)
}

/// The three syllables of clause 4.3.2.3.
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..999): the syllables of its three decimal digits.
pub(crate) fn last_name(n: u16) -> String {
    let n = usize::from(n);
    [n / 100, n / 10 % 10, n % 10]
        .iter()
        .map(|&digit| SYLLABLES[digit])
        .collect()
}

/// The rank of last name `n` among the 1000 names sorted as byte strings (equal names, if any,
/// share a rank): what the key holds, so that key order is name order.
pub(crate) fn last_name_rank(n: u16) -> u16 {
    static RANKS: OnceLock<Vec<u16>> = OnceLock::new();
    let ranks = RANKS.get_or_init(|| {
        let mut names: Vec<String> = (0..1000).map(last_name).collect();
        names.sort();
        names.dedup();
        (0..1000)
            .map(|n| names.binary_search(&last_name(n)).unwrap_or_default() as u16)
            .collect()
    });
    ranks[usize::from(n)]
}

/// The alphanumeric characters of an a-string, in byte order (digits, upper, lower case).
pub(crate) const ALPHANUMERIC: &[u8; 62] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The first three characters of `first`, each as its rank in [`ALPHANUMERIC`] (6 bits), so
/// that prefixes order as the strings do; a character outside the alphabet counts as 0.
pub(crate) fn first_name_prefix(first: &[u8]) -> u64 {
    (0..3).fold(0, |acc, i| {
        let rank = first
            .get(i)
            .and_then(|c| ALPHANUMERIC.iter().position(|a| a == c))
            .unwrap_or(0);
        (acc << 6) | rank as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_name_ranks_order_like_the_names() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        let mut by_rank: Vec<u16> = (0..1000).collect();
        by_rank.sort_by_key(|&n| last_name_rank(n));
        for pair in by_rank.windows(2) {
            let (a, b) = (last_name(pair[0]), last_name(pair[1]));
            assert!(a <= b, "{a} ranks before {b}");
            assert_eq!(a == b, last_name_rank(pair[0]) == last_name_rank(pair[1]));
        }
        assert!((0..1000).all(|n| last_name_rank(n) < 1 << LAST_BITS));
    }

    #[test]
    fn composite_keys_order_like_their_columns() {
        assert!(order_line(1, 10, MAX_ORDER_ID, 15) < order_line(2, 1, 1, 1));
        assert!(order(3, 2, 7) < order(3, 2, 8));
        assert_eq!(order_id_of(order(9, 3, 4242)), 4242);
        assert_eq!(order_id_of(order_customer(9, 3, 2999, 77)), 77);
        let (w, d) = (MAX_WAREHOUSES, 10);
        assert_eq!(
            order_of_customer(order_customer(w, d, 4095, MAX_ORDER_ID)),
            order(w, d, MAX_ORDER_ID)
        );
        assert_eq!(
            customer_of_name(customer_name(w, d, 998, b"zzzzzzzzzzzzzzzz", 4095)),
            customer(w, d, 4095)
        );
        assert_eq!(
            customer_of_name(customer_name(1, 1, 0, b"0", 1)),
            customer(1, 1, 1)
        );
        let (lo, hi) = customer_orders(2, 5, 17);
        assert!(lo <= order_customer(2, 5, 17, MAX_ORDER_ID));
        assert!(order_customer(2, 5, 17, MAX_ORDER_ID) < hi);
        assert!(stock(1, 100_000) < stock(2, 1));
        let (lo, hi) = customer_name_range(4, 7, 123);
        let key = customer_name(4, 7, 123, b"zzzzzzzz", 4095);
        assert!(lo <= key && key < hi);
        assert!(customer_name(4, 7, 123, b"Abcdefgh", 1) < customer_name(4, 7, 123, b"abc", 0));
        assert!(customer_name(MAX_WAREHOUSES, 10, 999, b"zzz", 4095) < u64::MAX >> 3);
        assert!(first_name_prefix(b"09z") < first_name_prefix(b"0A0"));
    }
}
