//! The initial population of W warehouses (clause 4.3.3.1), into the tables and the
//! `(key, tuple id)` entries each index is bulk loaded from.
//!
//! As the clause says: 100,000 items (10% with "ORIGINAL" in I_DATA); per warehouse 100,000
//! stock rows and 10 districts (D_NEXT_O_ID = 3,001, D_YTD = 30,000.00, W_YTD = 300,000.00); per
//! district 3,000 customers (the first 1,000 named by their id - 1, the others by
//! NURand(255, 0, 999) with `C_LOAD`; 10% with bad credit), a history row each, 3,000 orders
//! for a random permutation of the customers with 5 to 15 lines each (the first 2,100
//! delivered, the last 900 in NEW-ORDER). `--scale s` divides the items and the customers (so
//! the orders) by `s`, for tests.

use super::index::Table;
use super::keys;
use super::random::{Constants, TpccRng, A_LAST};
use super::schema::{
    push, Customer, District, History, Item, NewOrder, Order, OrderLine, Sizes, Stock, Tables,
    Warehouse, DISTRICTS,
};

/// The load's timestamp.
pub(crate) const LOAD_STAMP: u64 = 1;

/// Index entries of a load: per [`Table`] slot, `(key, tuple id)`.
pub(crate) type Entries = Vec<Vec<(u64, u64)>>;

/// Populates `warehouses` warehouses of `sizes` from `rng`.
pub(crate) fn load(
    warehouses: u32,
    sizes: Sizes,
    constants: &Constants,
    rng: &mut TpccRng,
) -> (Tables, Entries) {
    let mut t = Tables::default();
    let mut e: Entries = vec![Vec::new(); Table::ALL.len()];
    reserve(&mut t, &mut e, warehouses, sizes);
    for i in 1..=sizes.items {
        let price = rng.uniform(100, 10_000) as i64;
        let (_, original) = rng.data_string(26, 50);
        let tid = push(&mut t.item, Item { price, original });
        add(&mut e, Table::Item, keys::item(i), tid);
    }
    for w in 1..=warehouses {
        let tax = rng.uniform32(0, 2000);
        let tid = push(
            &mut t.warehouse,
            Warehouse {
                tax,
                ytd: 30_000_000,
            },
        );
        add(&mut e, Table::Warehouse, keys::warehouse(w), tid);
        for i in 1..=sizes.items {
            let quantity = rng.uniform32(10, 100);
            let mut dist = [[0u8; 24]; DISTRICTS as usize];
            for d in &mut dist {
                d.copy_from_slice(&rng.a_string(24, 24));
            }
            let (_, original) = rng.data_string(26, 50);
            let stock = Stock {
                quantity,
                ytd: 0,
                order_cnt: 0,
                remote_cnt: 0,
                dist,
                original,
            };
            let tid = push(&mut t.stock, stock);
            add(&mut e, Table::Stock, keys::stock(w, i), tid);
        }
        for d in 1..=DISTRICTS {
            let district = District {
                tax: rng.uniform32(0, 2000),
                ytd: 3_000_000,
                next_o_id: sizes.customers + 1,
            };
            let tid = push(&mut t.district, district);
            add(&mut e, Table::District, keys::district(w, d), tid);
            load_customers(&mut t, &mut e, (w, d), sizes, constants, rng);
            load_orders(&mut t, &mut e, (w, d), sizes, rng);
        }
    }
    (t, e)
}

/// Reserves what the load fills, exactly (order lines: the mean of 10 per order, plus 1%), so
/// that no table or entry list grows by doubling (a doubled `Vec` holds up to twice its rows):
/// 10 warehouses and 200,000 transactions on the B+-tree peaked at 885 MB resident.
fn reserve(t: &mut Tables, e: &mut Entries, warehouses: u32, sizes: Sizes) {
    let w = warehouses as usize;
    let districts = w * DISTRICTS as usize;
    let customers = districts * sizes.customers as usize;
    let lines = customers * 101 / 10;
    let new_orders = districts * sizes.new_orders as usize;
    t.warehouse.reserve_exact(w);
    t.district.reserve_exact(districts);
    t.item.reserve_exact(sizes.items as usize);
    t.stock.reserve_exact(w * sizes.items as usize);
    t.customer.reserve_exact(customers);
    t.history.reserve_exact(customers);
    t.order.reserve_exact(customers);
    t.order_line.reserve_exact(lines);
    t.new_order.reserve_exact(new_orders);
    for table in Table::ALL {
        let n = match table {
            Table::Warehouse => w,
            Table::District => districts,
            Table::Item => sizes.items as usize,
            Table::Stock => w * sizes.items as usize,
            Table::OrderLine => lines,
            Table::NewOrder => new_orders,
            Table::Customer
            | Table::CustomerName
            | Table::History
            | Table::Order
            | Table::OrderCustomer => customers,
        };
        e[table as usize].reserve_exact(n);
    }
}

/// Adds `key` pointing at tuple `tid` to `table`'s entries.
fn add(e: &mut Entries, table: Table, key: u64, tid: u64) {
    e[table as usize].push((key, tid));
}

fn load_customers(
    t: &mut Tables,
    e: &mut Entries,
    (w, d): (u32, u32),
    sizes: Sizes,
    constants: &Constants,
    rng: &mut TpccRng,
) {
    for c in 1..=sizes.customers {
        let last = if c <= 1000 {
            (c - 1) as u16
        } else {
            rng.nurand(A_LAST, 0, 999, constants.last_load) as u16
        };
        let customer = Customer {
            w,
            d,
            c,
            first: rng.a_string(8, 16),
            last,
            bad_credit: rng.percent(10),
            discount: rng.uniform32(0, 5000),
            credit_lim: 5_000_000,
            balance: -1000,
            ytd_payment: 1000,
            payment_cnt: 1,
            delivery_cnt: 0,
            data: rng.a_string(300, 500),
        };
        let name_key = keys::customer_name(w, d, last, &customer.first, c);
        let tid = push(&mut t.customer, customer);
        add(e, Table::Customer, keys::customer(w, d, c), tid);
        add(e, Table::CustomerName, name_key, tid);
        let history = History {
            c,
            c_d: d,
            c_w: w,
            d,
            w,
            date: LOAD_STAMP,
            amount: 1000,
        };
        let tid = push(&mut t.history, history);
        add(e, Table::History, tid, tid);
    }
}

fn load_orders(
    t: &mut Tables,
    e: &mut Entries,
    (w, d): (u32, u32),
    sizes: Sizes,
    rng: &mut TpccRng,
) {
    let customers = rng.permutation(sizes.customers);
    let first_new = sizes.first_new_order();
    for (o, &c) in (1..).zip(&customers) {
        let delivered = o < first_new;
        let order = Order {
            c,
            entry_d: LOAD_STAMP,
            carrier: if delivered { rng.uniform32(1, 10) } else { 0 },
            ol_cnt: rng.uniform32(5, 15),
            all_local: true,
        };
        let ol_cnt = order.ol_cnt;
        let tid = push(&mut t.order, order);
        add(e, Table::Order, keys::order(w, d, o), tid);
        add(
            e,
            Table::OrderCustomer,
            keys::order_customer(w, d, c, o),
            tid,
        );
        for ol in 1..=ol_cnt {
            let mut dist_info = [0u8; 24];
            dist_info.copy_from_slice(&rng.a_string(24, 24));
            let line = OrderLine {
                i: rng.uniform32(1, sizes.items),
                supply_w: w,
                delivery_d: if delivered { LOAD_STAMP } else { 0 },
                quantity: 5,
                amount: if delivered {
                    0
                } else {
                    rng.uniform(1, 999_999) as i64
                },
                dist_info,
            };
            let tid = push(&mut t.order_line, line);
            add(e, Table::OrderLine, keys::order_line(w, d, o, ol), tid);
        }
        if !delivered {
            let tid = push(&mut t.new_order, NewOrder { w, d, o });
            add(e, Table::NewOrder, keys::order(w, d, o), tid);
        }
    }
}
