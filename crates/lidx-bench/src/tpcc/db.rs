//! A TPC-C database: its tuples and indexes ([`Tuples`], in memory with every index on disk
//! or all in one store) and what every transaction and check does through them: fetch a
//! tuple by key (a key the database must hold that is not found is a wrong answer of the
//! index, [`BenchError::WrongResult`], and ends the run), write it back, and select a
//! customer by id or by last name (clause 2.5.2.2).

use super::index::Table;
use super::keys;
use super::schema::{Customer, Sizes};
use super::tuples::{Row, Tuples};
use crate::error::{BenchError, Result};

/// How a transaction names its customer (clauses 2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CustomerSel {
    /// By C_ID.
    Id(u32),
    /// By C_LAST (the name's number).
    Last(u16),
}

/// The tuples and their indexes.
pub(crate) struct Db {
    pub(crate) tuples: Tuples,
    pub(crate) warehouses: u32,
    pub(crate) sizes: Sizes,
    /// The index's label, for errors.
    pub(crate) label: String,
    pub(crate) scratch: Vec<(u64, u64)>,
    /// HISTORY rows so far: the next one's key (the spec gives HISTORY no key).
    pub(crate) history_rows: u64,
}

impl Db {
    /// The tuple of `R`'s table under `key`, which the database must hold, with its locator.
    pub(crate) fn fetch<R: Row>(&self, key: u64) -> Result<(u64, R)> {
        self.tuples
            .get::<R>(key)?
            .ok_or_else(|| self.wrong(R::TABLE, "get", key, "a key the database holds is missing"))
    }

    /// The tuple at `loc`, which an entry of `index` under `key` gave.
    pub(crate) fn at<R: Row>(&self, index: Table, loc: u64, key: u64) -> Result<R> {
        self.tuples
            .at::<R>(loc)?
            .ok_or_else(|| self.wrong(index, "scan", key, "an entry without its tuple"))
    }

    /// Writes `row` back at `loc`, which [`Db::fetch`] or an index gave.
    pub(crate) fn put<R: Row>(&mut self, loc: u64, row: R) -> Result<()> {
        if self.tuples.update(loc, row)? {
            return Ok(());
        }
        Err(self.wrong(R::TABLE, "update", loc, "no tuple where the index points"))
    }

    /// Up to `limit` tuples of `R`'s table with keys in `lo..hi`, in key order, as (key,
    /// locator, row).
    pub(crate) fn rows<R: Row>(
        &self,
        lo: u64,
        hi: u64,
        limit: usize,
    ) -> Result<Vec<(u64, u64, R)>> {
        let mut out = Vec::new();
        match self.tuples.rows(lo, hi, limit, &mut out)? {
            Some(()) => Ok(out),
            None => Err(self.wrong(R::TABLE, "scan", lo, "an entry without its tuple")),
        }
    }

    /// A wrong answer of `table`'s index.
    pub(crate) fn wrong(&self, table: Table, op: &'static str, key: u64, what: &str) -> BenchError {
        BenchError::WrongResult {
            index: format!("{} ({})", self.label, table.name()),
            op,
            key,
            what: what.to_string(),
        }
    }

    /// Customer `sel` of district (w, d) with its locator: by id through the primary index,
    /// or by last name through the secondary one, every match fetched and sorted by the
    /// whole C_FIRST, the one at position ceil(n / 2) taken (clause 2.5.2.2).
    pub(crate) fn customer(&mut self, w: u32, d: u32, sel: CustomerSel) -> Result<(u64, Customer)> {
        match sel {
            CustomerSel::Id(c) => {
                let key = keys::customer(w, d, c);
                let (loc, row) = self.fetch::<Customer>(key)?;
                if (row.w, row.d, row.c) != (w, d, c) {
                    return Err(self.wrong(
                        Table::Customer,
                        "get",
                        key,
                        "another customer's tuple",
                    ));
                }
                Ok((loc, row))
            }
            CustomerSel::Last(last) => {
                let (lo, hi) = keys::customer_name_range(w, d, last);
                let mut found = std::mem::take(&mut self.scratch);
                self.tuples
                    .range(Table::CustomerName, lo, hi, usize::MAX, &mut found)?;
                let mut matches = Vec::with_capacity(found.len());
                for &(key, loc) in &found {
                    let row = self.at::<Customer>(Table::CustomerName, loc, key)?;
                    if (row.w, row.d, row.last) != (w, d, last) {
                        return Err(self.wrong(
                            Table::CustomerName,
                            "scan",
                            lo,
                            "another name's tuple",
                        ));
                    }
                    matches.push((loc, row));
                }
                self.scratch = found;
                matches.sort_by(|(_, x), (_, y)| (&x.first, x.c).cmp(&(&y.first, y.c)));
                let middle = matches.len().saturating_sub(1) / 2;
                if middle >= matches.len() {
                    return Err(self.wrong(
                        Table::CustomerName,
                        "scan",
                        lo,
                        "no customer of a loaded last name",
                    ));
                }
                Ok(matches.swap_remove(middle))
            }
        }
    }
}
