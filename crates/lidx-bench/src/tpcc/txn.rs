//! The five transactions (clauses 2.4-2.8) at the standard mix, their inputs drawn as the
//! spec draws them, and their execution against a [`Db`]: every read and write of a tuple goes
//! through its index first (paper 002 §10.6: "multiple index lookups/insertions (on disk)
//! followed by tuple fetches/insertions (in memory)").
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
use super::index::{range, Table};
use super::keys;
use super::random::{Constants, TpccRng, A_CUSTOMER, A_ITEM, A_LAST};
use super::schema::{push, History, NewOrder, Order, OrderLine, Stamp, DISTRICTS};
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
        let w_tid = self.fetch(Table::Warehouse, keys::warehouse(w))?;
        let d_tid = self.fetch(Table::District, keys::district(w, d))?;
        let c_tid = self.customer(w, d, CustomerSel::Id(c))?;
        let mut items = Vec::with_capacity(lines.len());
        for line in lines {
            match self.ix.of(Table::Item).get(keys::item(line.i))? {
                Some(tid) => items.push(tid),
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
        let district = &mut self.t.district[d_tid as usize];
        let o = district.next_o_id;
        if o > keys::MAX_ORDER_ID {
            return Err(BenchError::BadSpec {
                what: "tpcc transactions",
                got: format!("order {o} of warehouse {w} district {d}"),
                expected: format!("at most {} orders per district", keys::MAX_ORDER_ID),
            });
        }
        district.next_o_id += 1;
        let (w_tax, d_tax) = (self.t.warehouse[w_tid as usize].tax, district.tax);
        let all_local = lines.iter().all(|l| l.supply_w == w);
        let order = Order {
            c,
            entry_d: stamp,
            carrier: 0,
            ol_cnt: lines.len() as u32,
            all_local,
        };
        let o_tid = push(&mut self.t.order, order);
        self.ix
            .of_mut(Table::Order)
            .insert(keys::order(w, d, o), o_tid)?;
        let by_customer = keys::order_customer(w, d, c, o);
        self.ix
            .of_mut(Table::OrderCustomer)
            .insert(by_customer, o_tid)?;
        let no_tid = push(&mut self.t.new_order, NewOrder { w, d, o });
        self.ix
            .of_mut(Table::NewOrder)
            .insert(keys::order(w, d, o), no_tid)?;
        let mut total = 0i64;
        for ((line, &i_tid), ol) in lines.iter().zip(&items).zip(1..) {
            let s_tid = self.fetch(Table::Stock, keys::stock(line.supply_w, line.i))?;
            let stock = &mut self.t.stock[s_tid as usize];
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
            let item = &self.t.item[i_tid as usize];
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
            let ol_tid = push(&mut self.t.order_line, row);
            self.ix
                .of_mut(Table::OrderLine)
                .insert(keys::order_line(w, d, o, ol), ol_tid)?;
        }
        let discount = i64::from(self.t.customer[c_tid as usize].discount);
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
        let w_tid = self.fetch(Table::Warehouse, keys::warehouse(w))?;
        self.t.warehouse[w_tid as usize].ytd += amount;
        let d_tid = self.fetch(Table::District, keys::district(w, d))?;
        self.t.district[d_tid as usize].ytd += amount;
        let c_tid = self.customer(c_w, c_d, customer)?;
        let row = &mut self.t.customer[c_tid as usize];
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
        let history = History {
            c,
            c_d,
            c_w,
            d,
            w,
            date: stamp,
            amount,
        };
        let h_tid = push(&mut self.t.history, history);
        self.ix.of_mut(Table::History).insert(h_tid, h_tid)?;
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
        let c_tid = self.customer(w, d, customer)?;
        let c = self.t.customer[c_tid as usize].c;
        digest.write_i64(self.t.customer[c_tid as usize].balance);
        let (lo, hi) = keys::customer_orders(w, d, c);
        let mut found = std::mem::take(&mut self.scratch);
        range(
            self.ix.of(Table::OrderCustomer),
            lo,
            hi,
            usize::MAX,
            &mut found,
        )?;
        let Some(&(key, o_tid)) = found.last() else {
            return Err(self.wrong(
                Table::OrderCustomer,
                "scan",
                lo,
                "a customer without orders",
            ));
        };
        let o = keys::order_id_of(key);
        let order = &self.t.order[o_tid as usize];
        let (ol_cnt, carrier) = (order.ol_cnt, order.carrier);
        self.lines_of((w, d, o), ol_cnt, &mut found)?;
        for &(_, tid) in &found {
            let line = &self.t.order_line[tid as usize];
            digest.write_u32(line.i);
            digest.write_i64(line.amount);
            digest.write_u64(line.delivery_d);
        }
        self.scratch = found;
        digest.write_u32(o);
        digest.write_u32(carrier);
        Ok(Outcome::Committed)
    }

    /// The `ol_cnt` lines of order (w, d, o) into `found`, through the ORDER-LINE index; a
    /// count that differs is a wrong answer of the index.
    fn lines_of(
        &self,
        (w, d, o): (u32, u32, u32),
        ol_cnt: u32,
        found: &mut Vec<(u64, u64)>,
    ) -> Result<()> {
        let (lo, hi) = keys::order_lines(w, d, o, o + 1);
        range(self.ix.of(Table::OrderLine), lo, hi, 15, found)?;
        if found.len() != ol_cnt as usize {
            return Err(self.wrong(
                Table::OrderLine,
                "scan",
                lo,
                "an order's line count differs",
            ));
        }
        Ok(())
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
            range(self.ix.of(Table::NewOrder), lo, hi, 1, &mut found)?;
            let Some(&(key, _)) = found.first() else {
                continue;
            };
            self.ix.of_mut(Table::NewOrder).delete(key)?;
            let o = keys::order_id_of(key);
            let o_tid = self.fetch(Table::Order, keys::order(w, d, o))?;
            let order = &mut self.t.order[o_tid as usize];
            order.carrier = carrier;
            let (c, ol_cnt) = (order.c, order.ol_cnt);
            self.lines_of((w, d, o), ol_cnt, &mut found)?;
            let mut total = 0;
            for &(_, tid) in &found {
                let line = &mut self.t.order_line[tid as usize];
                line.delivery_d = stamp;
                total += line.amount;
            }
            let c_tid = self.fetch(Table::Customer, keys::customer(w, d, c))?;
            let customer = &mut self.t.customer[c_tid as usize];
            customer.balance += total;
            customer.delivery_cnt += 1;
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
        let d_tid = self.fetch(Table::District, keys::district(w, d))?;
        let next = self.t.district[d_tid as usize].next_o_id;
        let (lo, hi) = keys::order_lines(w, d, next.saturating_sub(20), next);
        let mut found = std::mem::take(&mut self.scratch);
        range(self.ix.of(Table::OrderLine), lo, hi, usize::MAX, &mut found)?;
        let mut items: Vec<u32> = found
            .iter()
            .map(|&(_, tid)| self.t.order_line[tid as usize].i)
            .collect();
        self.scratch = found;
        items.sort_unstable();
        items.dedup();
        let mut low = 0u32;
        for i in items {
            let s_tid = self.fetch(Table::Stock, keys::stock(w, i))?;
            if self.t.stock[s_tid as usize].quantity < threshold {
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
