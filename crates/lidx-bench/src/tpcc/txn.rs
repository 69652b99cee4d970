//! The five transactions (clauses 2.4-2.8) at the standard mix, their inputs drawn as the
//! spec draws them, and their execution against a [`Db`]: every read and write of a tuple goes
//! through its index first (paper 002 §10.6: "multiple index lookups/insertions (on disk)
//! followed by tuple fetches/insertions (in memory)"), a tuple read, changed and written back
//! whole, the same logic whether the tuples are in memory or in a store
//! ([`super::tuples::Tuples`]).
//!
//! **Mix** (clause 5.2.3): New-Order 45%, Payment 43%, Order-Status, Delivery and Stock-Level
//! 4% each, drawn per transaction. **Inputs**: the home warehouse uniform over the W
//! warehouses and the district uniform (one driver stands for every terminal); customers by
//! NURand(1023, 1, 3000), items by NURand(8191, 1, 100000), last names by NURand(255, 0, 999)
//! with `C_RUN`; 60% of Payments and Order-Statuses select the customer by last name; 1% of
//! order lines are supplied by a remote warehouse and 15% of Payments pay for a customer of a
//! remote warehouse (when W > 1); 1% of New-Orders end with an unused item id.
//!
//! Choices where the spec leaves the engine free: a New-Order reads its items before it writes
//! anything, so the invalid item of a rolled-back one (always its last, clause 2.4.1.5) ends it
//! with nothing written, the state a rollback leaves; Delivery runs its ten districts in the
//! transaction (clause 2.7.2.1 allows deferred execution, which changes no index operation);
//! a district without undelivered orders is skipped (clause 2.7.4.2). Each transaction feeds
//! what it read into a digest, which must come out the same for every index of a run.

use std::hash::Hasher;

use super::db::{CustomerSel, Db};
use super::index::Table;
use super::keys;
use super::random::{Constants, TpccRng, A_CUSTOMER, A_ITEM, A_LAST};
use super::schema::{
    Customer, District, History, Item, NewOrder, Order, OrderLine, Stamp, Stock, Warehouse,
    DISTRICTS,
};
use crate::error::{BenchError, Result};

/// The five transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Kind {
    /// Every kind, in the order of the records' columns.
    pub(crate) const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    /// Percent of the mix (clause 5.2.3's minimums, New-Order the rest).
    pub(crate) fn percent(self) -> u64 {
        match self {
            Kind::NewOrder => 45,
            Kind::Payment => 43,
            Kind::OrderStatus | Kind::Delivery | Kind::StockLevel => 4,
        }
    }

    /// Draws a kind at the mix.
    pub(crate) fn draw(rng: &mut TpccRng) -> Kind {
        let mut x = rng.uniform(1, 100);
        for kind in Kind::ALL {
            if x <= kind.percent() {
                return kind;
            }
            x -= kind.percent();
        }
        Kind::StockLevel
    }
}

/// One New-Order line: item, supplying warehouse, quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) i: u32,
    pub(crate) supply_w: u32,
    pub(crate) quantity: u32,
}

/// A transaction's input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    NewOrder {
        w: u32,
        d: u32,
        c: u32,
        lines: Vec<Line>,
    },
    Payment {
        w: u32,
        d: u32,
        c_w: u32,
        c_d: u32,
        customer: CustomerSel,
        amount: i64,
    },
    OrderStatus {
        w: u32,
        d: u32,
        customer: CustomerSel,
    },
    Delivery {
        w: u32,
        carrier: u32,
    },
    StockLevel {
        w: u32,
        d: u32,
        threshold: u32,
    },
}

/// What draws the inputs: the generator, the constants and the database's shape.
pub(crate) struct Driver<'a> {
    pub(crate) rng: &'a mut TpccRng,
    pub(crate) constants: Constants,
    pub(crate) warehouses: u32,
    pub(crate) sizes: super::schema::Sizes,
}

impl Driver<'_> {
    /// A warehouse other than `home`, uniformly, or `home` when it is the only one.
    fn remote(&mut self, home: u32) -> u32 {
        if self.warehouses == 1 {
            return home;
        }
        let other = self.rng.uniform32(1, self.warehouses - 1);
        if other >= home {
            other + 1
        } else {
            other
        }
    }

    fn customer_id(&mut self) -> u32 {
        let n = u64::from(self.sizes.customers);
        self.rng.nurand(A_CUSTOMER, 1, n, self.constants.customer) as u32
    }

    /// 60% by last name, 40% by id (clauses 2.5.1.2, 2.6.1.2).
    fn customer(&mut self) -> CustomerSel {
        if self.rng.percent(60) {
            let max = self.sizes.max_last_name();
            CustomerSel::Last(self.rng.nurand(A_LAST, 0, max, self.constants.last_run) as u16)
        } else {
            CustomerSel::Id(self.customer_id())
        }
    }

    /// Draws the input of a transaction of `kind`.
    pub(crate) fn input(&mut self, kind: Kind) -> Input {
        let w = self.rng.uniform32(1, self.warehouses);
        let d = self.rng.uniform32(1, DISTRICTS);
        match kind {
            Kind::NewOrder => {
                let c = self.customer_id();
                let count = self.rng.uniform32(5, 15);
                let rollback = self.rng.percent(1);
                let items = u64::from(self.sizes.items);
                let lines = (1..=count)
                    .map(|n| {
                        let i = if rollback && n == count {
                            self.sizes.items + 1
                        } else {
                            self.rng.nurand(A_ITEM, 1, items, self.constants.item) as u32
                        };
                        let supply_w = if self.rng.percent(1) {
                            self.remote(w)
                        } else {
                            w
                        };
                        let quantity = self.rng.uniform32(1, 10);
                        Line {
                            i,
                            supply_w,
                            quantity,
                        }
                    })
                    .collect();
                Input::NewOrder { w, d, c, lines }
            }
            Kind::Payment => {
                let (c_w, c_d) = if self.rng.percent(85) {
                    (w, d)
                } else {
                    (self.remote(w), self.rng.uniform32(1, DISTRICTS))
                };
                let customer = self.customer();
                let amount = self.rng.uniform(100, 500_000) as i64;
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    customer,
                    amount,
                }
            }
            Kind::OrderStatus => Input::OrderStatus {
                w,
                d,
                customer: self.customer(),
            },
            Kind::Delivery => Input::Delivery {
                w,
                carrier: self.rng.uniform32(1, 10),
            },
            Kind::StockLevel => Input::StockLevel {
                w,
                d,
                threshold: self.rng.uniform32(10, 20),
            },
        }
    }
}

/// The end of one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Committed,
    /// A New-Order with an unused item.
    RolledBack,
}

impl Db {
    /// Runs `input` at timestamp `stamp`, feeding what it read into `digest`.
    pub(crate) fn execute(
        &mut self,
        input: &Input,
        stamp: Stamp,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        match *input {
            Input::NewOrder { w, d, c, ref lines } => self.new_order(w, d, c, lines, stamp, digest),
            Input::Payment {
                w,
                d,
                c_w,
                c_d,
                customer,
                amount,
            } => self.payment((w, d), (c_w, c_d), customer, amount, stamp, digest),
            Input::OrderStatus { w, d, customer } => self.order_status(w, d, customer, digest),
            Input::Delivery { w, carrier } => self.delivery(w, carrier, stamp, digest),
            Input::StockLevel { w, d, threshold } => self.stock_level(w, d, threshold, digest),
        }
    }

    /// Clause 2.4.2.
    fn new_order(
        &mut self,
        w: u32,
        d: u32,
        c: u32,
        lines: &[Line],
        stamp: Stamp,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        let (_, warehouse) = self.fetch::<Warehouse>(keys::warehouse(w))?;
        let (d_loc, mut district) = self.fetch::<District>(keys::district(w, d))?;
        let (_, customer) = self.customer(w, d, CustomerSel::Id(c))?;
        let mut items = Vec::with_capacity(lines.len());
        for line in lines {
            match self.tuples.get::<Item>(keys::item(line.i))? {
                Some((_, item)) => items.push(item),
                None if line.i > self.sizes.items => {
                    digest.write_u32(line.i);
                    return Ok(Outcome::RolledBack);
                }
                None => {
                    return Err(self.wrong(
                        Table::Item,
                        "get",
                        keys::item(line.i),
                        "a loaded item is missing",
                    ))
                }
            }
        }
        let o = district.next_o_id;
        if o > keys::MAX_ORDER_ID {
            return Err(BenchError::BadSpec {
                what: "tpcc transactions",
                got: format!("order {o} of warehouse {w} district {d}"),
                expected: format!("at most {} orders per district", keys::MAX_ORDER_ID),
            });
        }
        district.next_o_id += 1;
        let (w_tax, d_tax) = (warehouse.tax, district.tax);
        self.put(d_loc, district)?;
        let all_local = lines.iter().all(|l| l.supply_w == w);
        let order = Order {
            c,
            entry_d: stamp,
            carrier: 0,
            ol_cnt: lines.len() as u32,
            all_local,
        };
        let o_loc = self.tuples.insert(keys::order(w, d, o), order)?;
        let by_customer = keys::order_customer(w, d, c, o);
        self.tuples.link(Table::OrderCustomer, by_customer, o_loc)?;
        self.tuples
            .insert(keys::order(w, d, o), NewOrder { w, d, o })?;
        let mut total = 0i64;
        for ((line, item), ol) in lines.iter().zip(&items).zip(1..) {
            let (s_loc, mut stock) = self.fetch::<Stock>(keys::stock(line.supply_w, line.i))?;
            stock.quantity = if stock.quantity >= line.quantity + 10 {
                stock.quantity - line.quantity
            } else {
                stock.quantity + 91 - line.quantity
            };
            stock.ytd += i64::from(line.quantity);
            stock.order_cnt += 1;
            if line.supply_w != w {
                stock.remote_cnt += 1;
            }
            let amount = i64::from(line.quantity) * item.price;
            let brand_generic = item.original && stock.original;
            digest.write_u32(stock.quantity);
            digest.write_u8(u8::from(brand_generic));
            total += amount;
            let row = OrderLine {
                i: line.i,
                supply_w: line.supply_w,
                delivery_d: 0,
                quantity: line.quantity,
                amount,
                dist_info: stock.dist[(d - 1) as usize],
            };
            self.put(s_loc, stock)?;
            self.tuples.insert(keys::order_line(w, d, o, ol), row)?;
        }
        let discount = i64::from(customer.discount);
        let taxes = 10_000 + i64::from(w_tax) + i64::from(d_tax);
        digest.write_i64(total * (10_000 - discount) / 10_000 * taxes / 10_000);
        digest.write_u32(o);
        Ok(Outcome::Committed)
    }

    /// Clause 2.5.2.
    fn payment(
        &mut self,
        (w, d): (u32, u32),
        (c_w, c_d): (u32, u32),
        customer: CustomerSel,
        amount: i64,
        stamp: Stamp,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        let (w_loc, mut warehouse) = self.fetch::<Warehouse>(keys::warehouse(w))?;
        warehouse.ytd += amount;
        self.put(w_loc, warehouse)?;
        let (d_loc, mut district) = self.fetch::<District>(keys::district(w, d))?;
        district.ytd += amount;
        self.put(d_loc, district)?;
        let (c_loc, mut row) = self.customer(c_w, c_d, customer)?;
        row.balance -= amount;
        row.ytd_payment += amount;
        row.payment_cnt += 1;
        let c = row.c;
        if row.bad_credit {
            let mut data = format!("{c} {c_d} {c_w} {d} {w} {amount} ").into_bytes();
            data.extend_from_slice(&row.data);
            data.truncate(500);
            row.data = data;
        }
        digest.write_u32(c);
        digest.write_i64(row.balance);
        self.put(c_loc, row)?;
        let history = History {
            c,
            c_d,
            c_w,
            d,
            w,
            date: stamp,
            amount,
        };
        self.tuples.insert(self.history_rows, history)?;
        self.history_rows += 1;
        Ok(Outcome::Committed)
    }

    /// Clause 2.6.2.
    fn order_status(
        &mut self,
        w: u32,
        d: u32,
        customer: CustomerSel,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        let (_, customer) = self.customer(w, d, customer)?;
        let c = customer.c;
        digest.write_i64(customer.balance);
        let (lo, hi) = keys::customer_orders(w, d, c);
        let mut found = std::mem::take(&mut self.scratch);
        self.tuples
            .range(Table::OrderCustomer, lo, hi, usize::MAX, &mut found)?;
        let last = found.last().copied();
        self.scratch = found;
        let Some((key, o_loc)) = last else {
            return Err(self.wrong(
                Table::OrderCustomer,
                "scan",
                lo,
                "a customer without orders",
            ));
        };
        let o = keys::order_id_of(key);
        let order = self.at::<Order>(Table::OrderCustomer, o_loc, key)?;
        for (_, _, line) in self.lines_of((w, d, o), order.ol_cnt)? {
            digest.write_u32(line.i);
            digest.write_i64(line.amount);
            digest.write_u64(line.delivery_d);
        }
        digest.write_u32(o);
        digest.write_u32(order.carrier);
        Ok(Outcome::Committed)
    }

    /// The `ol_cnt` lines of order (w, d, o), through the ORDER-LINE index; a count that
    /// differs is a wrong answer of the index.
    fn lines_of(
        &self,
        (w, d, o): (u32, u32, u32),
        ol_cnt: u32,
    ) -> Result<Vec<(u64, u64, OrderLine)>> {
        let (lo, hi) = keys::order_lines(w, d, o, o + 1);
        let found = self.rows::<OrderLine>(lo, hi, 15)?;
        if found.len() != ol_cnt as usize {
            return Err(self.wrong(
                Table::OrderLine,
                "scan",
                lo,
                "an order's line count differs",
            ));
        }
        Ok(found)
    }

    /// Clause 2.7.4.
    fn delivery(
        &mut self,
        w: u32,
        carrier: u32,
        stamp: Stamp,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        let mut found = std::mem::take(&mut self.scratch);
        for d in 1..=DISTRICTS {
            let (lo, hi) = keys::district_orders(w, d);
            self.tuples.range(Table::NewOrder, lo, hi, 1, &mut found)?;
            let Some(&(key, _)) = found.first() else {
                continue;
            };
            self.tuples.delete(Table::NewOrder, key)?;
            let o = keys::order_id_of(key);
            let (o_loc, mut order) = self.fetch::<Order>(keys::order(w, d, o))?;
            order.carrier = carrier;
            let (c, ol_cnt) = (order.c, order.ol_cnt);
            self.put(o_loc, order)?;
            let mut total = 0;
            for (_, loc, mut line) in self.lines_of((w, d, o), ol_cnt)? {
                line.delivery_d = stamp;
                total += line.amount;
                self.put(loc, line)?;
            }
            let (c_loc, mut customer) = self.fetch::<Customer>(keys::customer(w, d, c))?;
            customer.balance += total;
            customer.delivery_cnt += 1;
            self.put(c_loc, customer)?;
            digest.write_u32(o);
            digest.write_i64(total);
        }
        self.scratch = found;
        Ok(Outcome::Committed)
    }

    /// Clause 2.8.2.
    fn stock_level(
        &mut self,
        w: u32,
        d: u32,
        threshold: u32,
        digest: &mut impl Hasher,
    ) -> Result<Outcome> {
        let (_, district) = self.fetch::<District>(keys::district(w, d))?;
        let next = district.next_o_id;
        let (lo, hi) = keys::order_lines(w, d, next.saturating_sub(20), next);
        let mut items: Vec<u32> = self
            .rows::<OrderLine>(lo, hi, usize::MAX)?
            .into_iter()
            .map(|(_, _, line)| line.i)
            .collect();
        items.sort_unstable();
        items.dedup();
        let mut low = 0u32;
        for i in items {
            let (_, stock) = self.fetch::<Stock>(keys::stock(w, i))?;
            if stock.quantity < threshold {
                low += 1;
            }
        }
        digest.write_u32(low);
        Ok(Outcome::Committed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::schema::Sizes;

    fn driver(rng: &mut TpccRng, warehouses: u32) -> Driver<'_> {
        let constants = Constants::draw(&mut TpccRng::new(1, 0));
        Driver {
            rng,
            constants,
            warehouses,
            sizes: Sizes::scaled(1),
        }
    }

    /// 100,000 draws hold each type's share within half a percentage point.
    #[test]
    fn the_mix_is_the_standard_one() {
        let mut rng = TpccRng::new(3, 1);
        let n = 100_000;
        let mut counts = [0u64; 5];
        for _ in 0..n {
            counts[Kind::draw(&mut rng) as usize] += 1;
        }
        for kind in Kind::ALL {
            let share = 100.0 * counts[kind as usize] as f64 / n as f64;
            assert!(
                (share - kind.percent() as f64).abs() < 0.5,
                "{kind:?}: {share}%"
            );
        }
    }

    /// The input distributions: 1% rolled-back New-Orders, 1% remote lines, 15% remote
    /// Payments, 60% of customers by last name, every id in range, within tolerances.
    #[test]
    fn inputs_follow_the_spec() {
        let mut rng = TpccRng::new(5, 1);
        let mut d = driver(&mut rng, 10);
        let n = 40_000;
        let (mut rollbacks, mut lines, mut remote_lines) = (0, 0, 0);
        let (mut remote_pay, mut by_name) = (0, 0);
        for _ in 0..n {
            match d.input(Kind::NewOrder) {
                Input::NewOrder { w, c, lines: l, .. } => {
                    assert!((1..=3000).contains(&c));
                    rollbacks += u32::from(l.last().unwrap().i == 100_001);
                    assert!(l[..l.len() - 1]
                        .iter()
                        .all(|x| (1..=100_000).contains(&x.i)));
                    lines += l.len();
                    remote_lines += l.iter().filter(|x| x.supply_w != w).count();
                }
                other => panic!("{other:?}"),
            }
            match d.input(Kind::Payment) {
                Input::Payment {
                    w, c_w, customer, ..
                } => {
                    remote_pay += u32::from(c_w != w);
                    by_name += u32::from(matches!(customer, CustomerSel::Last(l) if l <= 999));
                }
                other => panic!("{other:?}"),
            }
        }
        let pct = |k: f64, of: f64| 100.0 * k / of;
        let n = f64::from(n);
        assert!(
            (pct(f64::from(rollbacks), n) - 1.0).abs() < 0.25,
            "{rollbacks}"
        );
        assert!((pct(remote_lines as f64, lines as f64) - 1.0).abs() < 0.2);
        assert!((pct(f64::from(remote_pay), n) - 15.0).abs() < 0.8);
        assert!((pct(f64::from(by_name), n) - 60.0).abs() < 1.0);
    }

    #[test]
    fn one_warehouse_has_no_remote_one() {
        let mut rng = TpccRng::new(5, 1);
        let mut d = driver(&mut rng, 1);
        for _ in 0..2000 {
            if let Input::Payment { c_w, .. } = d.input(Kind::Payment) {
                assert_eq!(c_w, 1);
            }
        }
    }
}
