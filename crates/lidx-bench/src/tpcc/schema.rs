//! The nine TPC-C tables (clause 1.3) as tuples in memory, as paper 002 §10.6 keeps them: one
//! `Vec` per table, a tuple addressed by its position (the tuple id, the payload of every index
//! entry that points at it). Tuples are never moved; a delivered NEW-ORDER row stays in its
//! `Vec` (its index entry is what Delivery deletes).
//!
//! What is kept: every column a transaction reads or writes, or a consistency check sums.
//! Money is in cents (`i64`) and rates in hundredths of a percent (`u32`), so the sums of the
//! consistency checks are exact. Left out, since no transaction's logic or index touches them
//! and they only size the tuples: the name and address columns of WAREHOUSE, DISTRICT and
//! CUSTOMER, phone and since-date, I_NAME and I_IM_ID, and HISTORY's H_DATA; I_DATA and S_DATA
//! are generated (clause 4.3.3.1) but kept as whether they hold "ORIGINAL", the one thing
//! New-Order's brand-generic flag reads of them.

/// Districts per warehouse (clause 1.4.3).
pub(crate) const DISTRICTS: u32 = 10;

/// A timestamp: the number of the transaction that wrote it (1 for the load); 0 is null.
pub(crate) type Stamp = u64;

/// The populations of one warehouse (clause 4.3.3.1), scaled down by `--scale` for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// ITEM rows (100,000).
    pub(crate) items: u32,
    /// CUSTOMER rows per district, also the initial ORDER rows per district (3,000).
    pub(crate) customers: u32,
    /// Initial NEW-ORDER rows per district: the last 30% of the orders (900).
    pub(crate) new_orders: u32,
}

impl Sizes {
    /// The spec's sizes divided by `scale` (1: the spec's).
    pub(crate) fn scaled(scale: u32) -> Sizes {
        let customers = 3000 / scale;
        Sizes {
            items: 100_000 / scale,
            customers,
            new_orders: customers * 3 / 10,
        }
    }

    /// The first undelivered order of the load (2,101).
    pub(crate) fn first_new_order(&self) -> u32 {
        self.customers - self.new_orders + 1
    }

    /// The highest last-name number of the population: 999, or fewer customers' worth when
    /// scaled below 1,000 customers per district (each loaded customer `c <= 1000` is named
    /// `c - 1`, so every number drawn up to this one names somebody in every district).
    pub(crate) fn max_last_name(&self) -> u64 {
        u64::from(self.customers.min(1000) - 1)
    }
}

/// A WAREHOUSE row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Warehouse {
    pub(crate) tax: u32,
    pub(crate) ytd: i64,
}

/// A DISTRICT row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct District {
    pub(crate) tax: u32,
    pub(crate) ytd: i64,
    pub(crate) next_o_id: u32,
}

/// A CUSTOMER row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Customer {
    pub(crate) w: u32,
    pub(crate) d: u32,
    pub(crate) c: u32,
    pub(crate) first: Vec<u8>,
    /// The last name's number (0..999, [`super::keys::last_name`]).
    pub(crate) last: u16,
    /// C_CREDIT is "BC".
    pub(crate) bad_credit: bool,
    pub(crate) discount: u32,
    pub(crate) credit_lim: i64,
    pub(crate) balance: i64,
    pub(crate) ytd_payment: i64,
    pub(crate) payment_cnt: u32,
    pub(crate) delivery_cnt: u32,
    pub(crate) data: Vec<u8>,
}

/// A HISTORY row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct History {
    pub(crate) c: u32,
    pub(crate) c_d: u32,
    pub(crate) c_w: u32,
    pub(crate) d: u32,
    pub(crate) w: u32,
    pub(crate) date: Stamp,
    pub(crate) amount: i64,
}

/// A NEW-ORDER row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewOrder {
    pub(crate) w: u32,
    pub(crate) d: u32,
    pub(crate) o: u32,
}

/// An ORDER row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Order {
    pub(crate) c: u32,
    pub(crate) entry_d: Stamp,
    /// 0 is null (not delivered).
    pub(crate) carrier: u32,
    pub(crate) ol_cnt: u32,
    pub(crate) all_local: bool,
}

/// An ORDER-LINE row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OrderLine {
    pub(crate) i: u32,
    pub(crate) supply_w: u32,
    pub(crate) delivery_d: Stamp,
    pub(crate) quantity: u32,
    pub(crate) amount: i64,
    pub(crate) dist_info: [u8; 24],
}

/// An ITEM row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub(crate) price: i64,
    /// I_DATA holds "ORIGINAL".
    pub(crate) original: bool,
}

/// A STOCK row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stock {
    pub(crate) quantity: u32,
    pub(crate) ytd: i64,
    pub(crate) order_cnt: u32,
    pub(crate) remote_cnt: u32,
    /// S_DIST_01 .. S_DIST_10.
    pub(crate) dist: [[u8; 24]; DISTRICTS as usize],
    /// S_DATA holds "ORIGINAL".
    pub(crate) original: bool,
}

/// The nine tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Tables {
    pub(crate) warehouse: Vec<Warehouse>,
    pub(crate) district: Vec<District>,
    pub(crate) customer: Vec<Customer>,
    pub(crate) history: Vec<History>,
    pub(crate) new_order: Vec<NewOrder>,
    pub(crate) order: Vec<Order>,
    pub(crate) order_line: Vec<OrderLine>,
    pub(crate) item: Vec<Item>,
    pub(crate) stock: Vec<Stock>,
}

/// Appends `row` to `table` and returns its tuple id.
pub(crate) fn push<T>(table: &mut Vec<T>, row: T) -> u64 {
    table.push(row);
    (table.len() - 1) as u64
}
