//! Where a TPC-C database's tuples live, and the one interface the transactions and the
//! consistency checks read and write them through, whichever mode runs (issue 34):
//!
//! - **memory** (paper 002 §10.6, the first mode): the tuples in `Vec`s ([`Tables`]), a tuple
//!   addressed by its position, every index on disk ([`IndexSet`]) pointing at positions;
//! - **store** (the second mode, the setting a user of lidx runs): every tuple and every
//!   secondary-index entry in one durable `lidx::kv::Store` ([`StoreTuples`]).
//!
//! A tuple is reached by its primary key and handed out as an owned row with its *locator*
//! (the position in memory, the primary key in the store); a transaction changes the row and
//! writes it back by locator (read-modify-write), so both modes run the same logic and read
//! the same values. A secondary index's entry locates its tuple the same way. [`Row`] ties
//! each row struct to its table, its `Vec` and its bytes in the store (a small fixed codec of
//! its fields, little-endian, variable-length fields with a 2-byte length).

use lidx::io::IoStats;

use super::index::{range, IndexSet, Table};
use super::schema::{
    Customer, District, History, Item, NewOrder, Order, OrderLine, Stock, Tables, Warehouse,
};
use super::store::StoreTuples;
use crate::error::Result;
use crate::kv_runner::StorageBase;

/// A table's row: where it lives in [`Tables`] and how it is stored as bytes.
pub(crate) trait Row: Sized + Clone {
    /// The table (its primary index).
    const TABLE: Table;
    /// The table's tuples in memory.
    fn rows(t: &Tables) -> &Vec<Self>;
    /// The same, to write.
    fn rows_mut(t: &mut Tables) -> &mut Vec<Self>;
    /// Appends the row's bytes to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// The row of `bytes`, `None` when they are not exactly one row's.
    fn decode(bytes: &[u8]) -> Option<Self>;
}

/// One column's bytes.
trait Field: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(bytes: &mut &[u8]) -> Option<Self>;
}

/// Splits `n` bytes off the front of `bytes`.
fn split<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if bytes.len() < n {
        return None;
    }
    let (head, tail) = bytes.split_at(n);
    *bytes = tail;
    Some(head)
}

macro_rules! int_field {
    ($($ty:ty),*) => {$(
        impl Field for $ty {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(bytes: &mut &[u8]) -> Option<Self> {
                let head = split(bytes, std::mem::size_of::<$ty>())?;
                Some(<$ty>::from_le_bytes(head.try_into().ok()?))
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64, i64);

impl Field for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn take(bytes: &mut &[u8]) -> Option<Self> {
        match u8::take(bytes)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Field for Vec<u8> {
    fn put(&self, out: &mut Vec<u8>) {
        // C_FIRST (16) and C_DATA (500) are the only ones, far below 64 KiB.
        (self.len() as u16).put(out);
        out.extend_from_slice(self);
    }
    fn take(bytes: &mut &[u8]) -> Option<Self> {
        let n = u16::take(bytes)?;
        split(bytes, usize::from(n)).map(<[u8]>::to_vec)
    }
}

impl<T: Field, const N: usize> Field for [T; N] {
    fn put(&self, out: &mut Vec<u8>) {
        self.iter().for_each(|x| x.put(out));
    }
    fn take(bytes: &mut &[u8]) -> Option<Self> {
        let items = (0..N).map(|_| T::take(bytes)).collect::<Option<Vec<T>>>()?;
        items.try_into().ok()
    }
}

macro_rules! row {
    ($ty:ident, $table:ident, $vec:ident, [$($field:ident),* $(,)?]) => {
        impl Row for $ty {
            const TABLE: Table = Table::$table;
            fn rows(t: &Tables) -> &Vec<Self> {
                &t.$vec
            }
            fn rows_mut(t: &mut Tables) -> &mut Vec<Self> {
                &mut t.$vec
            }
            fn encode(&self, out: &mut Vec<u8>) {
                $(self.$field.put(out);)*
            }
            fn decode(mut bytes: &[u8]) -> Option<Self> {
                let row = $ty { $($field: Field::take(&mut bytes)?,)* };
                bytes.is_empty().then_some(row)
            }
        }
    };
}

row!(Warehouse, Warehouse, warehouse, [tax, ytd]);
row!(District, District, district, [tax, ytd, next_o_id]);
row!(
    Customer,
    Customer,
    customer,
    [
        w,
        d,
        c,
        first,
        last,
        bad_credit,
        discount,
        credit_lim,
        balance,
        ytd_payment,
        payment_cnt,
        delivery_cnt,
        data,
    ]
);
row!(History, History, history, [c, c_d, c_w, d, w, date, amount]);
row!(NewOrder, NewOrder, new_order, [w, d, o]);
row!(
    Order,
    Order,
    order,
    [c, entry_d, carrier, ol_cnt, all_local]
);
row!(
    OrderLine,
    OrderLine,
    order_line,
    [i, supply_w, delivery_d, quantity, amount, dist_info]
);
row!(Item, Item, item, [price, original]);
row!(
    Stock,
    Stock,
    stock,
    [quantity, ytd, order_cnt, remote_cnt, dist, original]
);

/// The bytes of tuple `tid` of `table` in `t` (`None` for a secondary index, whose entries
/// are no tuple, or a position past the table's end).
pub(crate) fn encode_at(t: &Tables, table: Table, tid: u64, out: &mut Vec<u8>) -> Option<()> {
    fn one<R: Row>(t: &Tables, tid: u64, out: &mut Vec<u8>) -> Option<()> {
        R::rows(t).get(usize::try_from(tid).ok()?)?.encode(out);
        Some(())
    }
    match table {
        Table::Warehouse => one::<Warehouse>(t, tid, out),
        Table::District => one::<District>(t, tid, out),
        Table::Customer => one::<Customer>(t, tid, out),
        Table::History => one::<History>(t, tid, out),
        Table::NewOrder => one::<NewOrder>(t, tid, out),
        Table::Order => one::<Order>(t, tid, out),
        Table::OrderLine => one::<OrderLine>(t, tid, out),
        Table::Item => one::<Item>(t, tid, out),
        Table::Stock => one::<Stock>(t, tid, out),
        Table::CustomerName | Table::OrderCustomer => None,
    }
}

/// The tuples of a database and their indexes: in memory with every index on disk, or all in
/// one store.
pub(crate) enum Tuples {
    /// The first mode.
    Memory {
        /// The tuples.
        t: Tables,
        /// The eleven indexes, payload the tuple's position.
        ix: IndexSet,
    },
    /// The second mode.
    Store(StoreTuples),
}

impl Tuples {
    /// The tuple of `R`'s table under primary key `key` with its locator, if there is one.
    pub(crate) fn get<R: Row>(&self, key: u64) -> Result<Option<(u64, R)>> {
        match self {
            Tuples::Memory { ix, .. } => match ix.of(R::TABLE).get(key)? {
                Some(tid) => Ok(self.at::<R>(tid)?.map(|row| (tid, row))),
                None => Ok(None),
            },
            Tuples::Store(s) => Ok(s.get::<R>(key)?.map(|row| (key, row))),
        }
    }

    /// The tuple at locator `loc` (from [`Tuples::get`] or an index entry), if there is one.
    pub(crate) fn at<R: Row>(&self, loc: u64) -> Result<Option<R>> {
        match self {
            Tuples::Memory { t, .. } => Ok(usize::try_from(loc)
                .ok()
                .and_then(|tid| R::rows(t).get(tid))
                .cloned()),
            Tuples::Store(s) => s.get::<R>(loc),
        }
    }

    /// Writes `row` back at locator `loc` (which [`Tuples::get`] or an index entry gave);
    /// `false` if there is no tuple there.
    pub(crate) fn update<R: Row>(&mut self, loc: u64, row: R) -> Result<bool> {
        match self {
            Tuples::Memory { t, .. } => {
                match usize::try_from(loc)
                    .ok()
                    .and_then(|tid| R::rows_mut(t).get_mut(tid))
                {
                    Some(slot) => {
                        *slot = row;
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
            Tuples::Store(s) => {
                s.put::<R>(loc, &row);
                Ok(true)
            }
        }
    }

    /// Adds `row` under primary key `key`; returns its locator.
    pub(crate) fn insert<R: Row>(&mut self, key: u64, row: R) -> Result<u64> {
        match self {
            Tuples::Memory { t, ix } => {
                let tid = super::schema::push(R::rows_mut(t), row);
                ix.of_mut(R::TABLE).insert(key, tid)?;
                Ok(tid)
            }
            Tuples::Store(s) => {
                s.put::<R>(key, &row);
                Ok(key)
            }
        }
    }

    /// Adds secondary index `index`'s entry `key` for the tuple at `loc`.
    pub(crate) fn link(&mut self, index: Table, key: u64, loc: u64) -> Result<()> {
        match self {
            Tuples::Memory { ix, .. } => ix.of_mut(index).insert(key, loc),
            Tuples::Store(s) => {
                s.link(index, key);
                Ok(())
            }
        }
    }

    /// Removes the entry (and in the store the tuple) under `key` of `table`.
    pub(crate) fn delete(&mut self, table: Table, key: u64) -> Result<()> {
        match self {
            Tuples::Memory { ix, .. } => ix.of_mut(table).delete(key),
            Tuples::Store(s) => {
                s.delete(table, key);
                Ok(())
            }
        }
    }

    /// Up to `limit` entries of `table`'s index with keys in `lo..hi`, in key order, as (key,
    /// locator of the tuple), into `out` (cleared first). In the store, a range reads what
    /// the transaction's earlier writes committed, not its own pending ones: no transaction
    /// scans a range it has written.
    pub(crate) fn range(
        &self,
        table: Table,
        lo: u64,
        hi: u64,
        limit: usize,
        out: &mut Vec<(u64, u64)>,
    ) -> Result<()> {
        match self {
            Tuples::Memory { ix, .. } => range(ix.of(table), lo, hi, limit, out),
            Tuples::Store(s) => s.range(table, (lo, hi), limit, out),
        }
    }

    /// [`Tuples::range`] of `R`'s primary index with each tuple, as (key, locator, row);
    /// `None` when an entry's tuple is missing (a wrong answer of the index).
    pub(crate) fn rows<R: Row>(
        &self,
        lo: u64,
        hi: u64,
        limit: usize,
        out: &mut Vec<(u64, u64, R)>,
    ) -> Result<Option<()>> {
        out.clear();
        match self {
            Tuples::Memory { .. } => {
                let mut found = Vec::new();
                self.range(R::TABLE, lo, hi, limit, &mut found)?;
                for (key, tid) in found {
                    match self.at::<R>(tid)? {
                        Some(row) => out.push((key, tid, row)),
                        None => return Ok(None),
                    }
                }
                Ok(Some(()))
            }
            Tuples::Store(s) => s.rows((lo, hi), limit, out).map(Some),
        }
    }

    /// Drops a rolled-back transaction's pending writes (in a store; in memory a write is in
    /// place at once, and New-Order, the one transaction that rolls back, checks its items
    /// before its first write).
    pub(crate) fn abort(&mut self) {
        if let Tuples::Store(s) = self {
            s.abort();
        }
    }

    /// Makes the transaction's writes durable and visible together (the store's one write
    /// batch; in memory they are in place already).
    pub(crate) fn commit(&mut self) -> Result<()> {
        match self {
            Tuples::Memory { .. } => Ok(()),
            Tuples::Store(s) => s.commit(),
        }
    }
}

/// What a run reports of where the tuples and indexes are.
impl Tuples {
    /// The I/O of every storage so far.
    pub(crate) fn io(&self) -> IoStats {
        match self {
            Tuples::Memory { ix, .. } => ix.io(),
            Tuples::Store(s) => s.io(),
        }
    }

    /// Bytes in memory and on disk of the indexes (first mode) or of the store (tuples too).
    pub(crate) fn space(&self) -> Result<(u64, u64)> {
        match self {
            Tuples::Memory { ix, .. } => Ok((ix.memory_bytes(), ix.disk_bytes())),
            Tuples::Store(s) => s.space(),
        }
    }

    /// Merges, nanoseconds of merges, of stalled writes, and bytes logged (the hybrid
    /// indexes' write-ahead logs; the store's committed batches).
    pub(crate) fn counters(&self) -> Result<[u64; 4]> {
        match self {
            Tuples::Memory { ix, .. } => Ok(ix.merge_counters()),
            Tuples::Store(s) => s.counters(),
        }
    }

    /// Waits for background merges.
    pub(crate) fn drain(&self) -> Result<()> {
        match self {
            Tuples::Memory { ix, .. } => ix.drain(),
            Tuples::Store(s) => s.drain(),
        }
    }

    /// Where the storages are.
    pub(crate) fn base(&self) -> &StorageBase {
        match self {
            Tuples::Memory { ix, .. } => ix.base(),
            Tuples::Store(s) => s.base(),
        }
    }

    /// Closes everything and removes the directories the run made.
    pub(crate) fn remove(&mut self) -> Result<()> {
        match self {
            Tuples::Memory { ix, .. } => ix.remove(),
            Tuples::Store(s) => s.remove(),
        }
    }
}
