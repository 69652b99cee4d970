//! The root (XIndex §3.1; paper 001 §II-B4: "the internal structure of XIndex is a double layer
//! RMI model"): the groups' pivot keys, a two-stage RMI that predicts a group's index from a
//! key, and one slot per group through which a compaction publishes the group's new version.
//!
//! The first stage is one least-squares line over all pivots; it picks one of `m` second-stage
//! lines, each fitted on the pivots routed to it. `m` starts at `groups / (4 * root_error)` as
//! in the paper and doubles until the mean error over the pivots is within `root_error`. An
//! exponential search from the prediction corrects the rest.
//!
//! What we do differently: a root is immutable; a group split or merge publishes a new root
//! with the RMI retrained at once, where the paper links the new groups from the old one and
//! rebuilds the root once per background round (§4.3). Splits are rare enough (one per
//! `4 * group_size / buffer` compactions) that retraining, linear in the number of groups, costs
//! less than the merges that cause it.

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::group::Group;
use crate::key::Key;
use crate::model::linear::LinearModel;
use crate::search;

/// Where a group is published; a compaction swaps the group, a split or merge the root.
pub(crate) struct Slot<K, V> {
    pub(crate) group: ArcSwap<Group<K, V>>,
}

impl<K, V> Slot<K, V> {
    pub(crate) fn new(group: Group<K, V>) -> Arc<Self> {
        Arc::new(Slot {
            group: ArcSwap::from_pointee(group),
        })
    }
}

struct Rmi {
    top: LinearModel,
    leaves: Vec<LinearModel>,
}

impl Rmi {
    fn leaf(&self, x: u64, groups: usize) -> usize {
        let guess = self.top.predict(x).max(0.0) as usize;
        (guess.saturating_mul(self.leaves.len()) / groups.max(1)).min(self.leaves.len() - 1)
    }

    fn predict(&self, x: u64, groups: usize) -> usize {
        self.leaves[self.leaf(x, groups)].predict(x).max(0.0) as usize
    }

    /// Trains on every pivot but the first, which stands for all keys below the second.
    fn train<K: Key>(pivots: &[K], error_bound: f64) -> Rmi {
        let n = pivots.len();
        let points = || {
            pivots
                .iter()
                .enumerate()
                .skip(usize::from(n > 1))
                .map(|(i, k)| (k.to_model(), i as f64))
        };
        let top = LinearModel::fit_least_squares(points());
        let mut leaves_n = (n as f64 / (4.0 * error_bound)).max(1.0) as usize;
        loop {
            let mut rmi = Rmi {
                top,
                leaves: vec![LinearModel::default(); leaves_n],
            };
            let mut routed: Vec<Vec<(u64, f64)>> = vec![Vec::new(); leaves_n];
            for (x, y) in points() {
                routed[rmi.leaf(x, n)].push((x, y));
            }
            for (leaf, points) in rmi.leaves.iter_mut().zip(&routed) {
                *leaf = LinearModel::fit_least_squares(points.iter().copied());
            }
            let error: f64 = points()
                .map(|(x, y)| (rmi.predict(x, n) as f64 - y).abs())
                .sum::<f64>()
                / points().count().max(1) as f64;
            if error <= error_bound || leaves_n >= n {
                return rmi;
            }
            leaves_n = (leaves_n * 2).min(n);
        }
    }
}

/// The root. See the module docs.
pub(crate) struct Root<K, V> {
    /// `pivots[i]` is the smallest key group `i` holds; `pivots[0]` is `K::MIN`.
    pub(crate) pivots: Vec<K>,
    pub(crate) slots: Vec<Arc<Slot<K, V>>>,
    rmi: Rmi,
}

impl<K: Key, V> Root<K, V> {
    /// The root over `slots`, whose groups start at `pivots` (the first one is taken as
    /// `K::MIN`: group 0 holds every key below `pivots[1]`).
    pub(crate) fn new(mut pivots: Vec<K>, slots: Vec<Arc<Slot<K, V>>>, error_bound: f64) -> Self {
        if let Some(first) = pivots.first_mut() {
            *first = K::MIN;
        }
        Root {
            rmi: Rmi::train(&pivots, error_bound),
            pivots,
            slots,
        }
    }

    /// Index of the group that holds `key`.
    #[inline]
    pub(crate) fn locate(&self, key: &K) -> usize {
        let hint = self.rmi.predict(key.to_model(), self.pivots.len());
        let pos = search::exponential(&self.pivots, *key, hint);
        if pos < self.pivots.len() && self.pivots[pos].key_cmp(key).is_eq() {
            pos
        } else {
            pos.saturating_sub(1)
        }
    }

    /// The root with the groups in `range` replaced by `replacement` (pivots and slots, in
    /// key order).
    pub(crate) fn replace(
        &self,
        range: std::ops::Range<usize>,
        replacement: Vec<(K, Arc<Slot<K, V>>)>,
        error_bound: f64,
    ) -> Self {
        let mut pivots = self.pivots.clone();
        let mut slots = self.slots.clone();
        let (new_pivots, new_slots): (Vec<K>, Vec<_>) = replacement.into_iter().unzip();
        pivots.splice(range.clone(), new_pivots);
        slots.splice(range, new_slots);
        Root::new(pivots, slots, error_bound)
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.pivots.len() * (K::SIZE + std::mem::size_of::<Arc<Slot<K, V>>>())
            + self.rmi.leaves.len() * LinearModel::BYTES
    }
}
