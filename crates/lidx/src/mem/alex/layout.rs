//! Laying out a data node's slots: entries in increasing key order, each written at the slot its
//! model predicts, or at the first free one after the entry before it, keeping room for the
//! rest; a gap holds the next key to its right and a default value, and the trailing gaps
//! `K::MAX` (the layout `data_node` describes; paper 001 §II-A, "model-based insertion").
//!
//! [`Layout`] writes the slots one entry at a time. The bulk load and splits feed it sorted
//! entries; a resize feeds it straight from the old node ([`Layout::move_from`]). Resizes are
//! the bulk of an insert's work past the search (a third of its instructions and about a
//! seventh of its time on 10M lognormal keys), so every slot is written once, in order, into
//! uninitialised arrays. Measured as the expansions' total time while 5M keys are inserted into
//! a map of the other 5M of 10M lognormal keys (Intel Xeon VM, huge pages checked; the first
//! row session 55's eight passes, the others session 60's runs of three passes, alternated):
//!
//! | resize | expansions' total |
//! |---|---:|
//! | every slot pushed onto a `Vec` (session 55) | 202-208 ms |
//! | written once into uninitialised arrays, the old node read by an iterator (session 55's code, e4fe8ec; 167-175 ms in its own runs) | 160-169 ms |
//! | the old node's bitmap words looped over here, values moved out by a read instead of `std::mem::take` (which wrote a default back into an array about to be freed), slots and bitmap bits written without bounds checks (session 60) | 140-150 ms |
//! | and, for values that need no drop, the first slot after the entry before written whatever it is (session 60) | **106-117 ms** |
//!
//! The last row is a branch: an entry follows zero, one or more gaps in an order the processor
//! cannot predict, so the loop that fills them mispredicted its exit about once an entry. The
//! slot after the entry before is either the first gap or the entry's own slot, so it is
//! written with the key and a default value before the loop, and the entry overwrites it when
//! it is its own; the loop then runs only for two gaps or more. A value that needs a drop
//! keeps the plain loop: its overwritten default would never be dropped. Writing the second
//! slot the same way gained nothing more (109-114 against 109-118 ms). Callgrind of the same
//! inserts (one pass): 3,236M instructions before session 60's rows, 3,036M after the first
//! (the resize 1,006M to 816M); the reference's 2,656M.

use std::mem::{needs_drop, MaybeUninit};

use super::model::LinearModel;
use crate::key::Key;

/// A node's slots being written. See the module docs.
pub(crate) struct Layout<K, V> {
    keys: Box<[MaybeUninit<K>]>,
    values: Box<[MaybeUninit<V>]>,
    bitmap: Box<[u64]>,
    model: LinearModel,
    /// Entries announced.
    n: usize,
    /// Entries placed so far.
    placed: usize,
    /// Slots `..filled` are written.
    filled: usize,
}

/// A finished layout: slot keys and values, the bitmap of the occupied slots, and the first
/// and last keys held (none when empty).
pub(crate) struct Slots<K, V> {
    pub(crate) keys: Box<[K]>,
    pub(crate) values: Box<[V]>,
    pub(crate) bitmap: Box<[u64]>,
    pub(crate) first: Option<K>,
    pub(crate) last: Option<K>,
}

impl<K: Key, V: Default> Layout<K, V> {
    /// Room for `n` entries in `capacity >= n` slots (at least one), placed by `model`
    /// (already scaled to `capacity`).
    pub(crate) fn new(n: usize, model: LinearModel, capacity: usize) -> Self {
        assert!(
            capacity >= n && capacity > 0,
            "{n} entries in {capacity} slots"
        );
        Layout {
            keys: Box::new_uninit_slice(capacity),
            values: Box::new_uninit_slice(capacity),
            bitmap: vec![0u64; capacity.div_ceil(64)].into_boxed_slice(),
            model,
            n,
            placed: 0,
            filled: 0,
        }
    }

    /// Places the next entry (its key above every key placed before).
    #[inline(always)]
    pub(crate) fn push(&mut self, key: K, value: V) {
        let (capacity, n, i) = (self.keys.len(), self.n, self.placed);
        // A hard assertion, as is `new`'s: the unchecked writes below rely on both.
        assert!(i < n, "more entries than the {n} announced");
        // At the prediction, after the entry before, and leaving a slot for each one after.
        let predicted = self.model.slot(key.to_model(), capacity + 1);
        let pos = predicted.max(self.filled).min(capacity - (n - i));
        let (keys, values) = (self.keys.as_mut_ptr(), self.values.as_mut_ptr());
        // SAFETY: `filled <= pos < capacity`. `i < n <= capacity` (checked above and in
        // `new`), so `pos <= capacity - (n - i) < capacity`; and the entry before sat at most
        // at `capacity - (n - i) - 1`, so `filled <= capacity - (n - i)`. The bitmap has a
        // word for every 64 slots. Writing a `MaybeUninit` slot twice drops nothing.
        unsafe {
            let mut from = self.filled;
            if !needs_drop::<V>() {
                // The first gap or the entry's own slot, overwritten below if it is (see the
                // module docs: the loop alone mispredicted its exit).
                (*keys.add(from)).write(key);
                (*values.add(from)).write(V::default());
                from += 1;
            }
            for j in from..pos {
                (*keys.add(j)).write(key);
                (*values.add(j)).write(V::default());
            }
            (*keys.add(pos)).write(key);
            (*values.add(pos)).write(value);
            *self.bitmap.get_unchecked_mut(pos / 64) |= 1 << (pos % 64);
        }
        self.filled = pos + 1;
        self.placed = i + 1;
    }

    /// Places every entry of an old node, in slot order: its slot keys and values and the
    /// bitmap of its occupied slots, whose keys increase. The values move out; the old
    /// arrays are freed without dropping them again.
    pub(crate) fn move_from(&mut self, keys: &[K], values: Box<[V]>, bitmap: &[u64]) {
        // SAFETY: `MaybeUninit<V>` has the layout of `V`, so the slice's allocation is the
        // same; from here on a value is dropped only where read out or dropped below.
        let values: Box<[MaybeUninit<V>]> =
            unsafe { Box::from_raw(Box::into_raw(values) as *mut [MaybeUninit<V>]) };
        let values = &values[..keys.len()];
        for (w, &word) in bitmap.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // SAFETY: every slot of the old array was initialised, and each occupied slot
                // is read once (its bit is cleared above); the gaps are dropped below.
                let value = unsafe { values[i].assume_init_read() };
                self.push(keys[i], value);
            }
        }
        if needs_drop::<V>() {
            for (i, value) in values.iter().enumerate() {
                if bitmap[i / 64] >> (i % 64) & 1 == 0 {
                    // SAFETY: a gap's value was initialised and not read out above.
                    drop(unsafe { value.assume_init_read() });
                }
            }
        }
    }

    /// The finished slots: every entry announced must have been placed.
    pub(crate) fn finish(mut self) -> Slots<K, V> {
        assert_eq!(self.placed, self.n, "entries placed against announced");
        let capacity = self.keys.len();
        for j in self.filled..capacity {
            self.keys[j].write(K::MAX);
            self.values[j].write(V::default());
        }
        // SAFETY: every slot below `filled` was written by `push` and every slot from
        // `filled` to `capacity` just above.
        let (keys, values) = unsafe { (self.keys.assume_init(), self.values.assume_init()) };
        // A gap holds the next key, so slot 0 holds the first key; the last sits at `filled - 1`.
        let (first, last) = match self.n {
            0 => (None, None),
            _ => (Some(keys[0]), Some(keys[self.filled - 1])),
        };
        Slots {
            keys,
            values,
            bitmap: self.bitmap,
            first,
            last,
        }
    }
}
