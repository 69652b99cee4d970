//! The bulk-load decisions of a LIPP node, shared by the in-memory map ([`super::Node`]) and
//! the on-disk one ([`crate::disk::lipp`]): how many slots a node built from `n` keys gets,
//! which model places them ([`LinearModel::fit`], FMCD), and which runs of keys share a slot
//! (each run of one key becomes `DATA`, each longer run a child built the same way).
//!
//! Keeping these in one place means the two structures build the same tree from the same
//! keys: only where the slots live differs.

use super::model::{slots_per_key, LinearModel};
use super::params::LippParams;

/// Slots of the node made for two keys that met in one slot (the reference's choice).
pub(crate) const TWO_SLOTS: usize = 8;

/// The model and slot count of a node built from `keys` (sorted distinct model images): one
/// slot for zero or one key, [`TWO_SLOTS`] for two, else `n * slots_per_key(n)` with the
/// fitted model.
pub(crate) fn plan(keys: &[u64], params: &LippParams) -> (LinearModel, usize) {
    let slots = slot_count(keys.len());
    let model = match keys.len() {
        0 | 1 => LinearModel::FLAT,
        2 => LinearModel::two(keys[0], keys[1], TWO_SLOTS),
        _ => LinearModel::fit(keys, slots, params.fmcd),
    };
    (model, slots)
}

/// The slot count [`plan`] gives a node of `n` keys (known before its model is fitted).
pub(crate) fn slot_count(n: usize) -> usize {
    match n {
        0 | 1 => 1,
        2 => TWO_SLOTS,
        _ => n * slots_per_key(n),
    }
}

/// The runs of `keys` that `model` puts into one slot of `slots`, in key order, as
/// `(slot, start, end)`: keys `start..end` all predict to `slot`.
pub(crate) fn runs<'a>(
    keys: &'a [u64],
    model: &'a LinearModel,
    slots: usize,
) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
    let n = keys.len();
    let mut start = 0;
    let mut pos = keys.first().map_or(0, |&k| model.predict(k, slots));
    std::iter::from_fn(move || {
        if start >= n {
            return None;
        }
        let mut end = start + 1;
        let mut next = pos;
        while end < n {
            next = model.predict(keys[end], slots);
            if next != pos {
                break;
            }
            end += 1;
        }
        let run = (pos, start, end);
        (start, pos) = (end, next);
        Some(run)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_key_once_in_ascending_slots() {
        let keys: Vec<u64> = (0..500u64).map(|i| i * i / 3).collect::<Vec<_>>();
        let mut keys = keys;
        keys.dedup();
        let (model, slots) = plan(&keys, &LippParams::default());
        let runs: Vec<_> = runs(&keys, &model, slots).collect();
        assert_eq!(runs.first().map(|r| r.1), Some(0));
        assert_eq!(runs.last().map(|r| r.2), Some(keys.len()));
        assert!(runs.windows(2).all(|w| w[0].2 == w[1].1 && w[0].0 < w[1].0));
        assert!(runs.iter().all(|r| r.0 < slots));
    }
}
