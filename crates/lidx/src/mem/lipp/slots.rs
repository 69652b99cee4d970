//! A node's memory: one allocation holding its [`Header`] (model and statistics), a flag byte
//! per slot (`NULL`, `DATA`, `NODE`), and an array of untagged items, each an entry or a child.
//!
//! Paper 003 §2 describes a LIPP node as a data array typed by a bit array; its §4 on-disk
//! layout replaces the bitmap with a flag per slot. We keep a flag per slot (a byte, read
//! with one load, no bit arithmetic) in an array beside the items rather than inside each
//! one: a tagged item (a Rust enum) is 24 bytes for `u64 -> u64`, the untagged one 16, and
//! with the flag 17. Measured on 10M lognormal keys against the enum layout: 2.11 GB became
//! 1.54 GB, and the bulk load went from 0.6x to 1.0-1.2x the reference's speed (its time went
//! mostly to faulting in and clearing pages). A lookup prefetches the item at the predicted
//! position before it reads the flag, so the two loads overlap.
//!
//! The header, the flags and the items share one allocation, laid out in that order (the
//! reference allocates a node, its items and two bitmaps apart): a conflict makes one
//! allocation instead of three, and a small node's flags sit in the cache line right after its
//! header (a two-entry node is 48 bytes of header, 8 of flags and 128 of items), so the
//! hardware's adjacent-line prefetch often brings them with the header.
//!
//! The unsafe code is confined to this file: an item is initialized exactly when its flag is
//! not `NULL`, and read as the variant its flag names. [`Node`] owns its block and hands out
//! the safe views [`SlotRef`], [`SlotMut`] and the owned [`Slot`], and drops what its flags say
//! it holds.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ptr::NonNull;

use super::node::Header;

const NULL: u8 = 0;
const DATA: u8 = 1;
const NODE: u8 = 2;

/// An untagged slot content: which field is live is the slot's flag.
union Item<K, V> {
    data: ManuallyDrop<(K, V)>,
    child: ManuallyDrop<Node<K, V>>,
}

/// A LIPP node: an owned block of header, flags and items (see the module docs). It derefs to
/// its [`Header`]; `node.rs` builds nodes, `insert.rs` and the others walk them.
pub(crate) struct Node<K, V> {
    block: NonNull<Header>,
    /// Slot count, kept here rather than in the header: a lookup reads it from the parent's
    /// item, already in cache, and it can never be changed through the header.
    slot_count: usize,
    _owns: PhantomData<(K, V)>,
}

// SAFETY: a node owns its block exclusively (no shared pointers into it), like a `Box` of the
// header, flags and `(K, V)` entries, so it may move to or be shared with another thread when
// the entries may.
unsafe impl<K: Send, V: Send> Send for Node<K, V> {}
// SAFETY: as above: `&Node` gives only shared access to the entries.
unsafe impl<K: Sync, V: Sync> Sync for Node<K, V> {}

/// A slot's content, owned.
pub(crate) enum Slot<K, V> {
    /// Empty: no key predicted here so far (or its entry was removed).
    Null,
    /// One entry.
    Data(K, V),
    /// Two or more entries predicted here, in a child node.
    Node(Node<K, V>),
}

/// A slot's content, borrowed.
pub(crate) enum SlotRef<'a, K, V> {
    Null,
    Data(&'a K, &'a V),
    Node(&'a Node<K, V>),
}

/// What a slot holds, without a borrow of it: an iterative walk down a mutable tree reads
/// the kind, then borrows the child with [`Node::child_mut`] (a `SlotMut` from the same node
/// could not be dropped in favour of the node again within one loop iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Data,
    Node,
}

/// A slot's content, borrowed mutably.
pub(crate) enum SlotMut<'a, K, V> {
    Null,
    Data(&'a mut K, &'a mut V),
    Node(&'a mut Node<K, V>),
}

/// The panic of a slot index past the end, out of line: formatted in place, its arguments
/// were stored on the stack on every level of a lookup.
#[cold]
#[inline(never)]
fn slot_out_of_range(i: usize, len: usize) -> ! {
    panic!("slot {i} of {len}")
}

/// The panic of a `set` on a slot that holds something, out of line.
#[cold]
#[inline(never)]
fn slot_occupied(i: usize) -> ! {
    panic!("slot {i} is set while it holds an entry or a child")
}

/// The panic of a `child_mut` on a slot that holds no child, out of line.
#[cold]
#[inline(never)]
fn not_a_child(i: usize) -> ! {
    panic!("slot {i} holds no child")
}

/// Where the flags start: right after the header.
const FLAGS_AT: usize = std::mem::size_of::<Header>();

impl<K, V> Node<K, V> {
    /// Where the items start in a block of `len` slots.
    #[inline(always)]
    fn items_at(len: usize) -> usize {
        // A power of two: rounding up is a mask, where `next_multiple_of` compiled to a
        // test and a conditional move on every level of a lookup.
        let align = std::mem::align_of::<Item<K, V>>();
        (FLAGS_AT + len + (align - 1)) & !(align - 1)
    }

    /// The block of a node of `len` slots.
    fn layout(len: usize) -> Layout {
        let bytes = len
            .checked_mul(std::mem::size_of::<Item<K, V>>())
            .and_then(|items| items.checked_add(Self::items_at(len)));
        let align = std::mem::align_of::<Header>().max(std::mem::align_of::<Item<K, V>>());
        bytes
            .and_then(|bytes| Layout::from_size_align(bytes, align).ok())
            .expect("a LIPP node's slots fit in the address space")
    }

    /// A node of `len` slots (at least one), every one `NULL`, with `header`. The flags are
    /// written; the items stay uninitialized, so the pages under a large node's items are
    /// not touched until used.
    pub(crate) fn with_header(len: usize, header: Header) -> Self {
        assert!(len >= 1, "a node has at least one slot");
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (a header and one slot at least).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(block) = NonNull::new(raw.cast::<Header>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: the block is fresh, aligned for the header and `layout.size()` bytes long,
        // which covers the header and `len` flags after it.
        unsafe {
            block.as_ptr().write(header);
            raw.add(FLAGS_AT).write_bytes(NULL, len);
        }
        Node {
            block,
            slot_count: len,
            _owns: PhantomData,
        }
    }

    /// Number of slots.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.slot_count
    }

    #[inline(always)]
    fn header(&self) -> &Header {
        // SAFETY: the block starts with the header written in `with_header`, alive as long as
        // the node.
        unsafe { self.block.as_ref() }
    }

    #[inline(always)]
    fn flags(&self) -> *mut u8 {
        // SAFETY: the flags start at FLAGS_AT inside the block (see `layout`).
        unsafe { self.block.as_ptr().cast::<u8>().add(FLAGS_AT) }
    }

    #[inline(always)]
    fn items(&self) -> *mut MaybeUninit<Item<K, V>> {
        // SAFETY: the items start at `items_at(len)` inside the block (see `layout`).
        unsafe {
            self.block
                .as_ptr()
                .cast::<u8>()
                .add(Self::items_at(self.len()))
                .cast()
        }
    }

    /// Flag `i`, checked against the slot count.
    #[inline(always)]
    fn flag(&self, i: usize) -> u8 {
        if i >= self.len() {
            slot_out_of_range(i, self.len());
        }
        // SAFETY: `i < len`, and every flag was written in `with_header`.
        unsafe { *self.flags().add(i) }
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
                self.items().wrapping_add(i).cast(),
            );
        }
    }

    /// Slot `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> SlotRef<'_, K, V> {
        self.prefetch(i);
        match self.flag(i) {
            NULL => SlotRef::Null,
            DATA => {
                // SAFETY: a DATA flag means item `i` (`i < len`, checked by `flag`) was
                // initialized with its `data` field (`set`) and not taken since (`take`
                // clears the flag first).
                let (k, v) = unsafe { &*(*self.items().add(i)).assume_init_ref().data };
                SlotRef::Data(k, v)
            }
            _ => {
                // SAFETY: a NODE flag means item `i` holds a live `child` (as above).
                let child = unsafe { &*(*self.items().add(i)).assume_init_ref().child };
                SlotRef::Node(child)
            }
        }
    }

    /// Slot `i`, mutably.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, i: usize) -> SlotMut<'_, K, V> {
        self.prefetch(i);
        match self.flag(i) {
            NULL => SlotMut::Null,
            DATA => {
                // SAFETY: as in `get`; `&mut self` makes the borrow unique.
                let (k, v) = unsafe { &mut *(*self.items().add(i)).assume_init_mut().data };
                SlotMut::Data(k, v)
            }
            _ => {
                // SAFETY: as in `get`; `&mut self` makes the borrow unique.
                let child = unsafe { &mut *(*self.items().add(i)).assume_init_mut().child };
                SlotMut::Node(child)
            }
        }
    }

    /// What slot `i` holds (prefetching its item, as `get` does).
    #[inline(always)]
    pub(crate) fn kind(&self, i: usize) -> Kind {
        self.prefetch(i);
        match self.flag(i) {
            NULL => Kind::Null,
            DATA => Kind::Data,
            _ => Kind::Node,
        }
    }

    /// The child in slot `i`, which must be a `NODE` slot (see [`Kind`]).
    #[inline(always)]
    pub(crate) fn child_mut(&mut self, i: usize) -> &mut Node<K, V> {
        if self.flag(i) != NODE {
            not_a_child(i);
        }
        // SAFETY: a NODE flag means item `i` (`i < len`, checked by `flag`) holds a live
        // `child`; `&mut self` makes the borrow unique.
        unsafe { &mut (*self.items().add(i)).assume_init_mut().child }
    }

    /// Moves slot `i`'s content out, leaving it `NULL`.
    pub(crate) fn take(&mut self, i: usize) -> Slot<K, V> {
        let flag = self.flag(i);
        // SAFETY: `i < len` (checked by `flag`); `&mut self` makes the write unique.
        unsafe { *self.flags().add(i) = NULL };
        match flag {
            NULL => Slot::Null,
            DATA => {
                // SAFETY: the DATA flag said `data` is live; the flag is now NULL, so this is
                // the one read that moves it out and nothing reads or drops it again.
                let (k, v) = unsafe {
                    ManuallyDrop::into_inner(std::ptr::read(
                        &(*self.items().add(i)).assume_init_ref().data,
                    ))
                };
                Slot::Data(k, v)
            }
            _ => {
                // SAFETY: as above, for the `child` a NODE flag said is live.
                let child = unsafe {
                    ManuallyDrop::into_inner(std::ptr::read(
                        &(*self.items().add(i)).assume_init_ref().child,
                    ))
                };
                Slot::Node(child)
            }
        }
    }

    /// Stores `slot` in slot `i`, which must be `NULL`: every caller fills a fresh node or a
    /// slot it has just found `NULL` or emptied with [`Node::take`], so checking the flag
    /// replaces a `take` whose result would always be dropped unread.
    pub(crate) fn set(&mut self, i: usize, slot: Slot<K, V>) {
        if self.flag(i) != NULL {
            slot_occupied(i);
        }
        let (item, flag) = match slot {
            Slot::Null => return,
            Slot::Data(k, v) => (
                Item {
                    data: ManuallyDrop::new((k, v)),
                },
                DATA,
            ),
            Slot::Node(child) => (
                Item {
                    child: ManuallyDrop::new(child),
                },
                NODE,
            ),
        };
        // SAFETY: `i < len` (checked by `flag`); the slot is NULL, so nothing live is
        // overwritten; the flag is set only once the item is written.
        unsafe {
            self.items().add(i).write(MaybeUninit::new(item));
            *self.flags().add(i) = flag;
        }
    }

    /// Every slot in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = SlotRef<'_, K, V>> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Every slot's content in order, moved out; the block is freed when the iterator is.
    pub(crate) fn into_contents(mut self) -> impl Iterator<Item = Slot<K, V>> {
        (0..self.len()).map(move |i| self.take(i))
    }

    /// Bytes of this node's block (header, flags, items), its children's excluded.
    pub(crate) fn block_bytes(&self) -> usize {
        Self::layout(self.len()).size()
    }
}

impl<K, V> std::ops::Deref for Node<K, V> {
    type Target = Header;

    #[inline(always)]
    fn deref(&self) -> &Header {
        self.header()
    }
}

impl<K, V> std::ops::DerefMut for Node<K, V> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Header {
        // SAFETY: as in `header`; `&mut self` makes the borrow unique.
        unsafe { self.block.as_mut() }
    }
}

impl<K, V> Drop for Node<K, V> {
    fn drop(&mut self) {
        for i in 0..self.len() {
            if self.flag(i) != NULL {
                drop(self.take(i));
            }
        }
        let layout = Self::layout(self.len());
        // SAFETY: the block was allocated in `with_header` with this layout (`len` never
        // changes), and nothing points into it any more.
        unsafe { std::alloc::dealloc(self.block.as_ptr().cast(), layout) };
    }
}
