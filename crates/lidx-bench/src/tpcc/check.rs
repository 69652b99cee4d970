//! The TPC-C consistency conditions 1-4 (clauses 3.3.2.1-3.3.2.4), checked at the end of every
//! run through the indexes (each row found by a scan or a get of its index, then its tuple
//! read), so that an index that lost, duplicated or misplaced an entry fails them; with the
//! tuples in a store, once more after the store is closed and reopened:
//!
//! 1. W_YTD = sum(D_YTD) of the warehouse's districts;
//! 2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) of the district (the NEW-ORDER part when it
//!    has rows);
//! 3. max(NO_O_ID) - min(NO_O_ID) + 1 = the district's NEW-ORDER rows;
//! 4. sum(O_OL_CNT) = the district's ORDER-LINE rows.
//!
//! The first that fails is a [`BenchError::Inconsistent`] naming the condition, the warehouse,
//! the district and both sides.

use super::db::Db;
use super::index::Table;
use super::keys;
use super::schema::{District, Order, Warehouse, DISTRICTS};
use crate::error::{BenchError, Result};

/// Checks conditions 1-4 on every warehouse and district.
pub(crate) fn check(db: &Db) -> Result<()> {
    let mut rows = Vec::new();
    for w in 1..=db.warehouses {
        let fail = |condition: u8, district: Option<u32>, what: String| BenchError::Inconsistent {
            index: db.label.clone(),
            condition,
            warehouse: w,
            district,
            what,
        };
        let (_, warehouse) = db.fetch::<Warehouse>(keys::warehouse(w))?;
        let districts = db.rows::<District>(
            keys::district(w, 1),
            keys::district(w, DISTRICTS + 1),
            usize::MAX,
        )?;
        if districts.len() != DISTRICTS as usize {
            return Err(fail(
                1,
                None,
                format!("{} districts, not {DISTRICTS}", districts.len()),
            ));
        }
        let d_ytd: i64 = districts.iter().map(|(_, _, row)| row.ytd).sum();
        if warehouse.ytd != d_ytd {
            return Err(fail(
                1,
                None,
                format!("W_YTD {} != sum(D_YTD) {d_ytd} (cents)", warehouse.ytd),
            ));
        }
        for (d, (_, _, district)) in (1..).zip(districts) {
            let next = district.next_o_id;
            let (lo, hi) = keys::district_orders(w, d);
            let orders = db.rows::<Order>(lo, hi, usize::MAX)?;
            let max_o = orders
                .last()
                .map_or(0, |&(key, _, _)| keys::order_id_of(key));
            let ol_cnt: u64 = orders.iter().map(|(_, _, row)| u64::from(row.ol_cnt)).sum();
            if next - 1 != max_o {
                return Err(fail(
                    2,
                    Some(d),
                    format!("D_NEXT_O_ID - 1 = {} != max(O_ID) = {max_o}", next - 1),
                ));
            }
            db.tuples
                .range(Table::NewOrder, lo, hi, usize::MAX, &mut rows)?;
            if let (Some(&(first, _)), Some(&(last, _))) = (rows.first(), rows.last()) {
                let (min_no, max_no) = (keys::order_id_of(first), keys::order_id_of(last));
                if max_no != max_o {
                    return Err(fail(
                        2,
                        Some(d),
                        format!("max(O_ID) = {max_o} != max(NO_O_ID) = {max_no}"),
                    ));
                }
                let count = rows.len() as u64;
                if u64::from(max_no - min_no) + 1 != count {
                    return Err(fail(
                        3,
                        Some(d),
                        format!(
                            "max(NO_O_ID) - min(NO_O_ID) + 1 = {} != {count} NEW-ORDER rows",
                            max_no - min_no + 1
                        ),
                    ));
                }
            }
            let (lo, hi) = keys::district_order_lines(w, d);
            db.tuples
                .range(Table::OrderLine, lo, hi, usize::MAX, &mut rows)?;
            let lines = rows.len() as u64;
            if ol_cnt != lines {
                return Err(fail(
                    4,
                    Some(d),
                    format!("sum(O_OL_CNT) = {ol_cnt} != {lines} ORDER-LINE rows"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Silent;
    use crate::tpcc::run::tests::{sim_base, small};
    use crate::tpcc::run::{open, transactions};
    use crate::tpcc::schema::NewOrder;
    use crate::tpcc::TpccIndexSpec;

    fn condition(db: &Db) -> Option<u8> {
        match check(db) {
            Ok(()) => None,
            Err(BenchError::Inconsistent { condition, .. }) => Some(condition),
            Err(other) => panic!("not a consistency failure: {other}"),
        }
    }

    /// Changes district (1, d) by `change` and commits.
    fn change_district(db: &mut Db, d: u32, change: impl Fn(&mut District)) {
        let (loc, mut row) = db.fetch::<District>(keys::district(1, d)).unwrap();
        change(&mut row);
        db.put(loc, row).unwrap();
        db.tuples.commit().unwrap();
    }

    /// Each condition fails on a state that breaks it, with the tuples in memory and in a
    /// store: the checks can fail.
    #[test]
    fn a_corrupted_state_fails_the_condition_it_breaks() {
        for spec in ["btree", "store:lsm"] {
            let config = small(1000);
            let spec = TpccIndexSpec::parse(spec).unwrap();
            let (mut db, constants, _, _) =
                open(&config, &spec, &sim_base(), None, &mut Silent).unwrap();
            transactions(&config, &mut db, constants, &mut Silent).unwrap();
            assert_eq!(condition(&db), None);

            change_district(&mut db, 4, |row| row.ytd += 1);
            assert_eq!(condition(&db), Some(1));
            change_district(&mut db, 4, |row| row.ytd -= 1);

            change_district(&mut db, 3, |row| row.next_o_id += 1);
            assert_eq!(condition(&db), Some(2));
            change_district(&mut db, 3, |row| row.next_o_id -= 1);

            let (lo, hi) = keys::district_orders(1, 5);
            let mut rows = Vec::new();
            db.tuples
                .range(Table::NewOrder, lo, hi, usize::MAX, &mut rows)
                .unwrap();
            let middle = rows[rows.len() / 2].0;
            db.tuples.delete(Table::NewOrder, middle).unwrap();
            db.tuples.commit().unwrap();
            assert_eq!(condition(&db), Some(3));
            let o = keys::order_id_of(middle);
            db.tuples
                .insert(middle, NewOrder { w: 1, d: 5, o })
                .unwrap();
            db.tuples.commit().unwrap();
            assert_eq!(condition(&db), None);

            let (lo, hi) = keys::district_order_lines(1, 9);
            db.tuples
                .range(Table::OrderLine, lo, hi, 1, &mut rows)
                .unwrap();
            db.tuples.delete(Table::OrderLine, rows[0].0).unwrap();
            db.tuples.commit().unwrap();
            assert_eq!(condition(&db), Some(4));
            db.tuples.remove().unwrap();
        }
    }
}
