//! ALEX's cost model: what a data node is expected to cost per operation, from where its keys
//! would land in a gapped array against where its model predicts them.
//!
//! A lookup's cost is the exponential search from the predicted slot, about
//! `log2(|predicted - actual| + 1)` iterations; an insert's is the shifts it makes, which in a
//! run of `r` packed slots average about `r^2 / 4` over the run. The node's cost is
//! `20 * iterations + 0.5 * shifts * insert_fraction`, and each level of inner nodes adds
//! `20` for the traversal plus `5e-7` per byte of model (the reference's weights; the ALEX
//! paper's cost model, summarised by paper 001 §II-A: "ALEX decides ... by a cost model").
//! The weights are the reference implementation's; the paper gives the form, not the numbers.

use super::model::LinearModel;

/// Weight of one exponential-search iteration.
pub(crate) const SEARCH_ITERATION_WEIGHT: f64 = 20.0;
/// Weight of one shifted slot on an insert.
pub(crate) const SHIFT_WEIGHT: f64 = 0.5;
/// Weight of descending one more node.
pub(crate) const NODE_LOOKUP_WEIGHT: f64 = 20.0;
/// Weight of one byte of index structure, charged to every key below it.
pub(crate) const MODEL_SIZE_WEIGHT: f64 = 5e-7;

/// A data node's expected cost and the averages it comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct NodeCost {
    pub(crate) cost: f64,
    pub(crate) search_iterations: f64,
    pub(crate) shifts: f64,
}

/// Capacity of a data node holding `n` keys at `density` (at least one free slot).
pub(crate) fn capacity_for(n: usize, density: f64) -> usize {
    ((n as f64 / density) as usize).max(n + 1)
}

/// The expected cost of a data node built from the `n` sorted keys given by `key_at` at
/// `density`, with `model` fitted on their ranks (it is scaled to the capacity here).
/// Walks the model-based placement without building anything.
pub(crate) fn expected_cost(
    n: usize,
    key_at: impl Fn(usize) -> u64,
    model: &LinearModel,
    density: f64,
    insert_fraction: f64,
) -> NodeCost {
    if n == 0 {
        return NodeCost::default();
    }
    let capacity = capacity_for(n, density);
    let mut model = *model;
    model.scale(capacity as f64 / n as f64);
    let mut stats = PlacementStats::new();
    let mut next_free = 0;
    for i in 0..n {
        let predicted = model.slot(key_at(i), capacity);
        let mut actual = predicted.max(next_free);
        let remaining = n - i;
        if capacity - actual < remaining {
            actual = capacity - remaining;
            for j in i..n {
                stats.add(actual, model.slot(key_at(j), capacity));
                actual += 1;
            }
            break;
        }
        stats.add(actual, predicted);
        next_free = actual + 1;
    }
    stats.cost(insert_fraction)
}

/// Bits of an error's mantissa looked up in [`LOG2_TABLE`].
const TABLE_BITS: u32 = 10;

/// `log2(1 + i / 1024)` for `i < 1024`.
static LOG2_TABLE: std::sync::LazyLock<Vec<f64>> = std::sync::LazyLock::new(|| {
    (0..1usize << TABLE_BITS)
        .map(|i| ((i + (1 << TABLE_BITS)) as f64).log2() - f64::from(TABLE_BITS))
        .collect()
});

/// `log2(error + 1)`: the expected exponential-search iterations for a key `error` slots from
/// its prediction. Exact below 1024; above, the exponent plus the logarithm of the next 10
/// bits from a table, which is at most `log2(1 + 1/1024)`, 0.0014 iterations, too low. The bulk
/// load spent two fifths of its time in `f64::log2` (perf, 10M lognormal keys: the fanout
/// tree's coarse levels have errors of thousands of slots).
#[inline(always)]
fn log2_of_error(table: &[f64], error: usize) -> f64 {
    let x = error as u64 + 1;
    let exponent = x.ilog2();
    let mantissa = if exponent < TABLE_BITS {
        // Small errors: exact, as the fraction of an exact power of two.
        x << (TABLE_BITS - exponent)
    } else {
        x >> (exponent - TABLE_BITS)
    };
    table[mantissa as usize & ((1 << TABLE_BITS) - 1)] + f64::from(exponent)
}

/// Running averages of search iterations and shifts over placed keys.
pub(crate) struct PlacementStats {
    table: &'static [f64],
    log_error: f64,
    count: usize,
    /// One past the last placed slot (0 before any).
    end: usize,
    run_start: usize,
    shifts: u64,
}

impl PlacementStats {
    pub(crate) fn new() -> Self {
        PlacementStats {
            table: &LOG2_TABLE,
            log_error: 0.0,
            count: 0,
            end: 0,
            run_start: 0,
            shifts: 0,
        }
    }

    /// A key placed at `actual`, predicted at `predicted`; keys come in slot order.
    #[inline(always)]
    pub(crate) fn add(&mut self, actual: usize, predicted: usize) {
        self.log_error += log2_of_error(self.table, actual.abs_diff(predicted));
        if actual > self.end || self.count == 0 {
            let run = (self.end - self.run_start) as u64;
            self.shifts += run * run / 4;
            self.run_start = actual;
        }
        self.end = actual + 1;
        self.count += 1;
    }

    pub(crate) fn cost(&self, insert_fraction: f64) -> NodeCost {
        if self.count == 0 {
            return NodeCost::default();
        }
        let run = (self.end - self.run_start) as u64;
        let count = self.count as f64;
        let search_iterations = self.log_error / count;
        let shifts = (self.shifts + run * run / 4) as f64 / count;
        NodeCost {
            cost: SEARCH_ITERATION_WEIGHT * search_iterations
                + SHIFT_WEIGHT * shifts * insert_fraction,
            search_iterations,
            shifts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::alex::model::fit;

    #[test]
    fn linear_keys_cost_little_and_clustered_keys_cost_more() {
        let even = |i: usize| 10 * i as u64;
        let m = fit(1000, even);
        let c = expected_cost(1000, even, &m, 0.7, 1.0);
        assert!(c.search_iterations < 0.5 && c.shifts < 1.0, "{c:?}");
        let skewed = |i: usize| (i as u64).pow(3);
        let m = fit(1000, skewed);
        let s = expected_cost(1000, skewed, &m, 0.7, 1.0);
        assert!(s.cost > c.cost * 5.0, "{s:?} vs {c:?}");
        assert_eq!(expected_cost(0, even, &m, 0.7, 1.0), NodeCost::default());
    }

    #[test]
    fn tabulated_logarithms_are_close() {
        for e in (0..5000).chain([1 << 20, 123_456_789, usize::MAX >> 1]) {
            let exact = ((e + 1) as f64).log2();
            let got = log2_of_error(&LOG2_TABLE, e);
            assert!(
                got <= exact + 1e-12 && exact - got < 0.0015,
                "{e}: {got} vs {exact}"
            );
        }
        assert_eq!(log2_of_error(&LOG2_TABLE, 0), 0.0);
        assert_eq!(log2_of_error(&LOG2_TABLE, 7), 3.0);
    }

    #[test]
    fn packed_runs_count_quadratic_shifts() {
        let mut p = PlacementStats::new();
        for slot in 0..10 {
            p.add(slot, slot);
        }
        let c = p.cost(1.0);
        assert_eq!(c.shifts, 2.5);
        assert_eq!(c.search_iterations, 0.0);
    }
}
