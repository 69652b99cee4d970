//! A node's slot array: one flag byte per slot (`NULL`, `DATA`, `NODE`) beside an array of
//! untagged items, each an entry or a child pointer.
//!
//! Paper 003 §2 describes a LIPP node as a data array typed by a bit array; its §4 on-disk
//! layout replaces the bitmap with a flag per slot. We keep a flag per slot (a byte, read
//! with one load, no bit arithmetic) but in an array beside the items rather than inside each
//! one: a tagged item (a Rust enum) is 24 bytes for `u64 -> u64`, the untagged one 16, and
//! with the flag 17. Measured on 10M lognormal keys against the enum layout: 2.11 GB became
//! 1.54 GB, and the bulk load went from 0.6x to 1.0-1.2x the reference's speed (its time went
//! mostly to faulting in and clearing pages). A lookup prefetches the item at the predicted
//! position before it reads the flag, so the two loads overlap.
//!
//! The unsafe code is confined to this file: an item is initialized exactly when its flag is
//! not `NULL`, and read as the variant its flag names. [`Slots`] hands out the safe views
//! [`SlotRef`], [`SlotMut`] and the owned [`Slot`], and drops what its flags say it holds.

use std::mem::{ManuallyDrop, MaybeUninit};

use super::node::Node;

const NULL: u8 = 0;
const DATA: u8 = 1;
const NODE: u8 = 2;

/// An untagged slot content: which field is live is the slot's flag.
union Item<K, V> {
    data: ManuallyDrop<(K, V)>,
    child: ManuallyDrop<Box<Node<K, V>>>,
}

/// The slots of a node. See the module docs.
pub(crate) struct Slots<K, V> {
    flags: Box<[u8]>,
    items: Box<[MaybeUninit<Item<K, V>>]>,
}

/// A slot's content, owned.
pub(crate) enum Slot<K, V> {
    /// Empty: no key predicted here so far (or its entry was removed).
    Null,
    /// One entry.
    Data(K, V),
    /// Two or more entries predicted here, in a child node.
    Node(Box<Node<K, V>>),
}

/// A slot's content, borrowed.
pub(crate) enum SlotRef<'a, K, V> {
    Null,
    Data(&'a K, &'a V),
    Node(&'a Node<K, V>),
}

/// A slot's content, borrowed mutably.
pub(crate) enum SlotMut<'a, K, V> {
    Null,
    Data(&'a mut K, &'a mut V),
    Node(&'a mut Node<K, V>),
}

impl<K, V> Slots<K, V> {
    /// `n` `NULL` slots (zeroed flags: fresh pages are not written until used).
    pub(crate) fn new(n: usize) -> Self {
        Slots {
            flags: vec![NULL; n].into_boxed_slice(),
            items: Box::new_uninit_slice(n),
        }
    }

    /// Number of slots.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.flags.len()
    }

    /// Starts loading item `i` into the cache, so that reading flag `i` and then the item
    /// costs one memory latency, not two in a row (measured: the flag load took half of an
    /// insert's time on 10M keys without it).
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        // SAFETY: a prefetch is a hint that never faults and reads nothing the program sees;
        // SSE, which it needs, is part of every x86_64 target.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                self.items.as_ptr().wrapping_add(i).cast(),
            );
        }
    }

    /// Slot `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> SlotRef<'_, K, V> {
        self.prefetch(i);
        match self.flags[i] {
            NULL => SlotRef::Null,
            DATA => {
                // SAFETY: a DATA flag means `items[i]` was initialized with its `data` field
                // (`set`) and not taken since (`take` clears the flag first).
                let (k, v) = unsafe { &*self.items[i].assume_init_ref().data };
                SlotRef::Data(k, v)
            }
            _ => {
                // SAFETY: a NODE flag means `items[i]` holds a live `child` (as above).
                let child = unsafe { &*self.items[i].assume_init_ref().child };
                SlotRef::Node(child)
            }
        }
    }

    /// Slot `i`, mutably.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, i: usize) -> SlotMut<'_, K, V> {
        self.prefetch(i);
        match self.flags[i] {
            NULL => SlotMut::Null,
            DATA => {
                // SAFETY: as in `get`; `&mut self` makes the borrow unique.
                let (k, v) = unsafe { &mut *self.items[i].assume_init_mut().data };
                SlotMut::Data(k, v)
            }
            _ => {
                // SAFETY: as in `get`; `&mut self` makes the borrow unique.
                let child = unsafe { &mut **self.items[i].assume_init_mut().child };
                SlotMut::Node(child)
            }
        }
    }

    /// Moves slot `i`'s content out, leaving it `NULL`.
    pub(crate) fn take(&mut self, i: usize) -> Slot<K, V> {
        let flag = std::mem::replace(&mut self.flags[i], NULL);
        match flag {
            NULL => Slot::Null,
            DATA => {
                // SAFETY: the DATA flag says `data` is live; the flag is now NULL, so this is
                // the one read that moves it out and nothing reads or drops it again.
                let (k, v) = unsafe {
                    ManuallyDrop::into_inner(std::ptr::read(&self.items[i].assume_init_ref().data))
                };
                Slot::Data(k, v)
            }
            _ => {
                // SAFETY: as above, for the `child` a NODE flag says is live.
                let child = unsafe {
                    ManuallyDrop::into_inner(std::ptr::read(&self.items[i].assume_init_ref().child))
                };
                Slot::Node(child)
            }
        }
    }

    /// Stores `slot` in slot `i`, dropping what was there.
    pub(crate) fn set(&mut self, i: usize, slot: Slot<K, V>) {
        drop(self.take(i));
        match slot {
            Slot::Null => {}
            Slot::Data(k, v) => {
                self.items[i] = MaybeUninit::new(Item {
                    data: ManuallyDrop::new((k, v)),
                });
                self.flags[i] = DATA;
            }
            Slot::Node(child) => {
                self.items[i] = MaybeUninit::new(Item {
                    child: ManuallyDrop::new(child),
                });
                self.flags[i] = NODE;
            }
        }
    }

    /// Every slot in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = SlotRef<'_, K, V>> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Every slot's content in order, moved out.
    pub(crate) fn into_contents(mut self) -> impl Iterator<Item = Slot<K, V>> {
        (0..self.len()).map(move |i| self.take(i))
    }

    /// Bytes of the flags and items.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.len() * (1 + std::mem::size_of::<Item<K, V>>())
    }
}

impl<K, V> Drop for Slots<K, V> {
    fn drop(&mut self) {
        for i in 0..self.len() {
            if self.flags[i] != NULL {
                drop(self.take(i));
            }
        }
    }
}
