//! A TPC-C database: the tuples in memory, the indexes on disk, and what every transaction
//! and check does through them: fetch a tuple id by key (a key the database must hold that is
//! not found is a wrong answer of the index, [`BenchError::WrongResult`], and ends the run),
//! and select a customer by id or by last name (clause 2.5.2.2).

use super::index::{range, IndexSet, Table};
use super::keys;
use super::schema::{Sizes, Tables};
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
    pub(crate) t: Tables,
    pub(crate) ix: IndexSet,
    pub(crate) warehouses: u32,
    pub(crate) sizes: Sizes,
    /// The index's label, for errors.
    pub(crate) label: String,
    pub(crate) scratch: Vec<(u64, u64)>,
}

impl Db {
    /// The tuple id under `key` in `table`'s index, which must hold it.
    pub(crate) fn fetch(&self, table: Table, key: u64) -> Result<u64> {
        self.ix
            .of(table)
            .get(key)?
            .ok_or_else(|| self.wrong(table, "get", key, "a key the database holds is missing"))
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

    /// The tuple id of customer `sel` of district (w, d): by id through the primary index, or
    /// by last name through the secondary one, every match fetched and sorted by the whole
    /// C_FIRST, the one at position ceil(n / 2) taken (clause 2.5.2.2).
    pub(crate) fn customer(&mut self, w: u32, d: u32, sel: CustomerSel) -> Result<u64> {
        let tid = match sel {
            CustomerSel::Id(c) => {
                let key = keys::customer(w, d, c);
                let tid = self.fetch(Table::Customer, key)?;
                let row = &self.t.customer[tid as usize];
                if (row.w, row.d, row.c) != (w, d, c) {
                    return Err(self.wrong(
                        Table::Customer,
                        "get",
                        key,
                        "another customer's tuple",
                    ));
                }
                tid
            }
            CustomerSel::Last(last) => {
                let (lo, hi) = keys::customer_name_range(w, d, last);
                let mut found = std::mem::take(&mut self.scratch);
                range(
                    self.ix.of(Table::CustomerName),
                    lo,
                    hi,
                    usize::MAX,
                    &mut found,
                )?;
                let customers = &self.t.customer;
                if found.iter().any(|&(_, tid)| {
                    let row = &customers[tid as usize];
                    (row.w, row.d, row.last) != (w, d, last)
                }) {
                    return Err(self.wrong(
                        Table::CustomerName,
                        "scan",
                        lo,
                        "another name's tuple",
                    ));
                }
                found.sort_by(|a, b| {
                    let (x, y) = (&customers[a.1 as usize], &customers[b.1 as usize]);
                    (&x.first, x.c).cmp(&(&y.first, y.c))
                });
                let picked = found
                    .get(found.len().saturating_sub(1) / 2)
                    .map(|&(_, tid)| tid);
                self.scratch = found;
                picked.ok_or_else(|| {
                    self.wrong(
                        Table::CustomerName,
                        "scan",
                        lo,
                        "no customer of a loaded last name",
                    )
                })?
            }
        };
        Ok(tid)
    }
}
