//! The rewired virtual array behind START's Node64K and Node16M (paper 004 §III-A).
//!
//! What the paper says (§III-A, Fig. 3 and 4): a 2-level node (`256^2` child pointers) or a
//! 3-level node (`256^3` child pointers, `2^15` virtual pages of 4 KiB) is a flat array indexed
//! by 2 or 3 key bytes, but its pages are *rewired*: a main-memory file (`memfd_create`) is
//! mapped page by page with `mmap`, so that "multiple compatible and sparsely populated virtual
//! pages can share one physical page" and "empty pages do not consume any physical memory" (they
//! stay mapped to the zero page until the first write). Because several virtual pages then show
//! the same memory, each entry carries a tag (pointer tagging) that must match the page number of
//! the slot being read; an entry with another tag belongs to another virtual page and reads as
//! empty. Inserts that collide with a foreign entry are resolved by "explicit unsharing".
//!
//! # Layout
//!
//! * A slot is one `u64`. Bits 63..48 hold the tag, bits 47..0 the child word
//!   ([`MAX_WORD`]); 0 is an empty slot. The tag is the *virtual page number* of the slot,
//!   `idx >> log2(slots per page)`: at most 2^15 pages of 512 slots for a Node16M on 4 KiB
//!   pages, so 16 tag bits are enough for every size this type accepts (`slots_log2 <= 24`).
//!   A lookup is one load and one compare: `raw >> 48 == idx >> page_shift` selects
//!   `raw & MAX_WORD`, else 0. Slot 0 of page 0 reads 0 whether empty or not, as 0 is empty.
//! * Virtual page states. *Empty*: a private anonymous read-only mapping, i.e. the kernel's
//!   zero page, no memory. *Hosted*: mapped `MAP_SHARED | MAP_FIXED` onto one page of the memfd
//!   (a *physical page*). A physical page hosts one or more virtual pages (its *tenants*) whose
//!   entries sit at pairwise different slot offsets; a per-physical-page occupancy bitmap says
//!   which offsets are taken. A physical page with one tenant is what the paper calls private.
//! * Sharing policy (the paper does not spell one out): a virtual page that gets its first entry
//!   moves onto an *open* physical page (fewer than
//!   [`RewiredParams::max_share_fill_percent`] of its slots used) whose slot is free, found by
//!   probing the most recently opened candidates, else onto a fresh physical page. An insert
//!   that lands on a slot held by another tenant *unshares* the page: its own entries are copied
//!   out and cleared, and the virtual page is remapped onto another open page where all of them
//!   plus the new one fit, or onto a fresh page. A virtual page whose last entry is removed goes
//!   back to the zero page; a physical page without tenants is released with
//!   `fallocate(PUNCH_HOLE)` and reused.
//!
//! # What we do differently, and why
//!
//! * The memfd is sized once to the virtual size with `ftruncate` (a sparse file costs nothing
//!   until written) instead of grown: there are never more physical than virtual pages, so
//!   physical page ids simply index into it.
//! * Child words are limited to 48 bits (user-space pointers on x86-64 and AArch64 fit, with
//!   room for low tag bits); [`RewiredArray::set`] rejects wider words.
//! * Every rewired page is a separate kernel mapping (VMA), and Linux allows 65 530 per process
//!   by default (`vm.max_map_count`), about two fully populated Node16M. If the kernel refuses
//!   `memfd_create` or any mapping, at construction or in the middle of an insert, the array
//!   falls back to a plain zeroed allocation with the same slot encoding (so `get` is the same
//!   code) and reports it: [`RewiredArray::is_rewired`], [`RewiredArray::fallback_reason`].
//!   Fallback memory is obtained from the allocator zeroed; large zeroed blocks come from
//!   `mmap` and stay unbacked until written, so [`RewiredArray::resident_bytes`] counts the
//!   pages ever written (the KISS-tree behaviour the paper compares with, §VII-A).

use super::arena::Arena;
use crate::error::{Error, Result};

/// Bits of a child word; the bits above hold the slot's tag.
pub(crate) const WORD_BITS: u32 = 48;

/// The largest child word a slot can hold.
pub(crate) const MAX_WORD: u64 = (1 << WORD_BITS) - 1;

/// The largest accepted `slots_log2` (a Node16M: three key bytes).
pub(crate) const MAX_SLOTS_LOG2: u32 = 24;

/// Slots of a Node64K (two key bytes).
pub(crate) const NODE64K_SLOTS_LOG2: u32 = 16;

/// Slots of a Node16M (three key bytes).
pub(crate) const NODE16M_SLOTS_LOG2: u32 = 24;

/// Open physical pages probed before a fresh one is taken.
const MAX_PROBE: usize = 16;

/// No physical page: the virtual page is empty (zero page).
const NO_PAGE: u32 = u32::MAX;

/// Page size assumed when the OS does not say.
const DEFAULT_PAGE_BYTES: usize = 4096;

/// Parameters of a [`RewiredArray`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewiredParams {
    /// A physical page accepts new tenants only while fewer than this percentage of its slots is
    /// used (0..=100). Higher packs sparse pages tighter (less memory) but makes collisions, and
    /// so unsharing on insert, more likely (slower inserts). 0 gives every non-empty virtual page
    /// its own physical page, as in the KISS-tree.
    pub max_share_fill_percent: u32,
    /// Skip rewiring and use the plain fallback allocation (for tests and comparisons).
    pub force_fallback: bool,
    #[doc(hidden)]
    /// Fault injection for tests: the mapping call after this many successful ones fails.
    pub fail_mapping_after: Option<usize>,
}

impl Default for RewiredParams {
    /// Share physical pages up to half full; rewire when the kernel allows.
    fn default() -> Self {
        RewiredParams {
            max_share_fill_percent: 50,
            force_fallback: false,
            fail_mapping_after: None,
        }
    }
}

/// Page counts of a [`RewiredArray`], for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageStats {
    /// Virtual pages of the array.
    pub virtual_pages: usize,
    /// Virtual pages with at least one entry.
    pub nonempty_pages: usize,
    /// Physical pages with at least one tenant (for the fallback: pages ever written).
    pub physical_pages: usize,
    /// Physical pages with two or more tenants.
    pub shared_pages: usize,
}

/// A virtual array of `2^slots_log2` tagged child slots whose sparse pages share memory.
///
/// `get` costs one load and one compare and never enters the kernel; `set` and `remove` may
/// remap a page. See the module docs for the layout.
pub struct RewiredArray {
    /// First slot: the rewired mapping or the fallback buffer.
    base: *mut u64,
    /// Number of slots, `2^slots_log2`.
    slots: usize,
    /// log2 of slots per page; the tag of slot `idx` is `idx >> page_shift`.
    page_shift: u32,
    /// Bytes per page.
    page_bytes: usize,
    /// Non-empty slots.
    len: usize,
    /// Entries per virtual page.
    counts: Vec<u16>,
    backing: Backing,
}

// SAFETY: the array owns its mapping (or buffer) exclusively; nothing in it is tied to the
// creating thread, so it can move to another thread.
unsafe impl Send for RewiredArray {}
// SAFETY: methods taking `&self` only read the slots; every write takes `&mut self`.
unsafe impl Sync for RewiredArray {}

enum Backing {
    Rewired(Rewiring),
    Plain {
        /// Owns the slots `base` points into.
        _buf: PlainBuf,
        /// One bit per virtual page ever written.
        touched: Vec<u64>,
        touched_pages: usize,
        /// Virtual pages per unit of resident memory: 1, or the pages of one huge page when the
        /// buffer is backed by huge pages (a touched huge page is resident as a whole).
        region_pages: usize,
        /// Why the array fell back; `None` for an array made flat on purpose
        /// ([`RewiredArray::flat`]).
        reason: Option<String>,
    },
}

/// The memory of a plain (not rewired) array.
enum PlainBuf {
    /// A zeroed heap allocation (large ones come from `mmap`, unbacked until written).
    Heap(Vec<u64>),
    /// An anonymous mapping aligned to, and advised for, transparent huge pages.
    Huge(os::HugeBuf),
    /// Slots in a START arena (`arena.rs`), which owns and counts the memory.
    Arena,
}

/// Bookkeeping of the memfd and its pages.
struct Rewiring {
    map: os::Mapping,
    /// Physical page of each virtual page, or [`NO_PAGE`].
    vphys: Vec<u32>,
    phys: Vec<PhysPage>,
    /// Occupancy bitmaps, `words` per physical page.
    bits: Vec<u64>,
    /// Slots per page.
    page_slots: usize,
    /// `u64` words of one occupancy bitmap.
    words: usize,
    /// Released physical page ids.
    free: Vec<u32>,
    /// Candidate hosts for new tenants (ids whose `open` flag is set).
    open: Vec<u32>,
    /// Physical pages that hold memory.
    resident_pages: usize,
    /// A page accepts new tenants while `used + new entries <= share_limit`.
    share_limit: u32,
    /// Remaining successful mappings before an injected failure.
    fail_after: Option<usize>,
}

#[derive(Clone, Copy, Default)]
struct PhysPage {
    used: u32,
    tenants: u32,
    /// Listed in `Rewiring::open`.
    open: bool,
    /// Holds memory (written since created or last punched).
    resident: bool,
}

impl RewiredArray {
    /// An empty array of `2^slots_log2` slots with default parameters.
    pub fn new(slots_log2: u32) -> Result<Self> {
        Self::with_params(slots_log2, RewiredParams::default())
    }

    /// An empty array of `2^slots_log2` slots (`slots_log2 <= 24`).
    ///
    /// Falls back to a plain allocation, without error, if the kernel refuses rewiring; see
    /// [`RewiredArray::fallback_reason`].
    pub fn with_params(slots_log2: u32, params: RewiredParams) -> Result<Self> {
        if slots_log2 > MAX_SLOTS_LOG2 {
            return Err(Error::InvalidParameter {
                name: "slots_log2",
                value: slots_log2.to_string(),
                expected: "at most 24 (a Node16M)",
            });
        }
        if params.max_share_fill_percent > 100 {
            return Err(Error::InvalidParameter {
                name: "max_share_fill_percent",
                value: params.max_share_fill_percent.to_string(),
                expected: "a percentage, 0..=100",
            });
        }
        let slots = 1usize << slots_log2;
        let page_bytes = os::page_bytes().unwrap_or(DEFAULT_PAGE_BYTES);
        let page_slots = page_bytes / 8;
        let page_shift = page_slots.trailing_zeros();
        let vpages = slots.div_ceil(page_slots);
        let mut array = RewiredArray {
            base: std::ptr::null_mut(),
            slots,
            page_shift,
            page_bytes,
            len: 0,
            counts: vec![0; vpages],
            backing: Backing::Plain {
                _buf: PlainBuf::Heap(Vec::new()),
                touched: Vec::new(),
                touched_pages: 0,
                region_pages: 1,
                reason: None,
            },
        };
        let reason = if params.force_fallback {
            "fallback forced by RewiredParams::force_fallback".to_string()
        } else if !page_slots.is_power_of_two() || slots < page_slots {
            format!("{slots} slots do not fill one {page_bytes}-byte page")
        } else {
            match os::Mapping::create(slots * 8) {
                Ok(map) => {
                    let share_limit =
                        (page_slots as u64 * params.max_share_fill_percent as u64 / 100) as u32;
                    let words = page_slots.div_ceil(64);
                    array.base = map.base();
                    array.backing = Backing::Rewired(Rewiring {
                        map,
                        vphys: vec![NO_PAGE; vpages],
                        phys: Vec::new(),
                        bits: Vec::new(),
                        page_slots,
                        words,
                        free: Vec::new(),
                        open: Vec::new(),
                        resident_pages: 0,
                        share_limit,
                        fail_after: params.fail_mapping_after,
                    });
                    return Ok(array);
                }
                Err(e) => format!("rewiring refused by the kernel: {e}"),
            }
        };
        array.switch_to_plain(reason);
        Ok(array)
    }

    /// An empty flat array of `2^slots_log2` slots: no rewiring, no page sharing, the same slot
    /// encoding. For dense nodes, where sharing saves nothing and every rewired page would be
    /// a kernel mapping and a TLB entry: the slots live in one anonymous mapping aligned to
    /// and advised for transparent huge pages (Linux `MADV_HUGEPAGE`), so a lookup in a node
    /// of up to 128 MiB misses the TLB rarely. Resident memory is counted by the huge page.
    /// Where huge pages are unavailable, a zeroed heap buffer.
    pub fn flat(slots_log2: u32) -> Result<Self> {
        let mut array = Self::with_params(
            slots_log2,
            RewiredParams {
                force_fallback: true,
                ..RewiredParams::default()
            },
        )?;
        let (buf, region_pages) = match os::HugeBuf::create(array.slots * 8) {
            Some(h) => (
                PlainBuf::Huge(h),
                (os::HUGE_PAGE_BYTES / array.page_bytes).max(1),
            ),
            None => (PlainBuf::Heap(vec![0u64; array.slots]), 1),
        };
        array.switch_to(buf, region_pages, None);
        Ok(array)
    }

    /// The child word in slot `idx`, 0 if the slot is empty or `idx` is out of range.
    #[inline]
    pub fn get(&self, idx: usize) -> u64 {
        if idx >= self.slots {
            return 0;
        }
        // SAFETY: `idx < slots` and `base` points to `slots` readable `u64`s: the whole virtual
        // range is mapped readable (zero page or memfd pages), or it is the fallback buffer.
        let raw = unsafe { self.base.add(idx).read() };
        decode(raw, idx >> self.page_shift)
    }

    /// Slot `idx` in place, raw (page tag included), if it holds an entry of its own page: the
    /// same load and compare as [`RewiredArray::get`], for a tree that reads child references
    /// where they are stored. Valid until the next `&mut` call.
    #[inline]
    pub fn slot_ref(&self, idx: usize) -> Option<&u64> {
        if idx >= self.slots {
            return None;
        }
        // SAFETY: as in `get`; the reference lives no longer than `&self`, and every write to
        // the slots takes `&mut self`.
        let raw = unsafe { &*self.base.add(idx) };
        (decode(*raw, idx >> self.page_shift) != 0).then_some(raw)
    }

    /// Stores `word` (`1..=MAX_WORD`) in slot `idx`, replacing what was there.
    ///
    /// May remap pages; if the kernel refuses a mapping, the array switches to the plain
    /// fallback (reported by [`RewiredArray::fallback_reason`]) and the store still succeeds.
    pub fn set(&mut self, idx: usize, word: u64) -> Result<()> {
        if idx >= self.slots {
            return Err(Error::InvalidParameter {
                name: "idx",
                value: idx.to_string(),
                expected: "a slot index below 2^slots_log2",
            });
        }
        if word == 0 || word > MAX_WORD {
            return Err(Error::InvalidParameter {
                name: "word",
                value: format!("{word:#x}"),
                expected: "a non-zero child word below 2^48 (0 is the empty slot; use remove)",
            });
        }
        let page = idx >> self.page_shift;
        let offset = idx & self.page_mask();
        let raw = ((page as u64) << WORD_BITS) | word;
        let slot = self.slot_ptr(idx);
        // SAFETY: `idx < slots`, so `slot` is inside the readable range (see `get`).
        let current = unsafe { slot.read_volatile() };
        if is_own(current, page) {
            // SAFETY: a slot holding an entry of its own page is on a writable mapping (a
            // memfd page or the fallback buffer).
            unsafe { slot.write_volatile(raw) };
            return Ok(());
        }
        let outcome = match &mut self.backing {
            Backing::Plain {
                touched,
                touched_pages,
                ..
            } => {
                // SAFETY: the fallback buffer is writable.
                unsafe { slot.write_volatile(raw) };
                if touched[page / 64] & (1 << (page % 64)) == 0 {
                    touched[page / 64] |= 1 << (page % 64);
                    *touched_pages += 1;
                }
                Ok(())
            }
            Backing::Rewired(rw) => rw.place(page, offset, raw, self.counts[page], self.base),
        };
        match outcome {
            Ok(()) => {
                self.counts[page] += 1;
                self.len += 1;
                Ok(())
            }
            Err(Unplaced { reason, moved }) => {
                // The page's own entries (if any) were taken off it and its bookkeeping cleared
                // before the failed mapping; re-store them in the fallback.
                self.len -= moved.len();
                self.counts[page] = 0;
                self.switch_to_plain(reason);
                for (i, w) in moved {
                    self.set(i, w)?;
                }
                self.set(idx, word)
            }
        }
    }

    /// Empties slot `idx` and returns the word it held, if any.
    pub fn remove(&mut self, idx: usize) -> Option<u64> {
        if idx >= self.slots {
            return None;
        }
        let page = idx >> self.page_shift;
        let slot = self.slot_ptr(idx);
        // SAFETY: `idx < slots`, inside the readable range.
        let current = unsafe { slot.read_volatile() };
        if !is_own(current, page) {
            return None;
        }
        // SAFETY: the slot holds an entry of its own page, so it is on a writable mapping.
        unsafe { slot.write_volatile(0) };
        self.counts[page] -= 1;
        self.len -= 1;
        let offset = idx & self.page_mask();
        if let Backing::Rewired(rw) = &mut self.backing {
            let emptied = self.counts[page] == 0;
            if let Err(reason) = rw.vacate(page, offset, emptied, self.base) {
                self.switch_to_plain(reason);
            }
        }
        Some(current & MAX_WORD)
    }

    /// Number of non-empty slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no slot holds an entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots, `2^slots_log2`.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Bytes of address space the slots span (8 per slot).
    pub fn virtual_bytes(&self) -> usize {
        self.slots * 8
    }

    /// Bytes of physical memory backing the slots: rewired, the memfd pages that hold memory
    /// (shared pages count once); fallback, the pages ever written.
    ///
    /// Not the process RSS: the kernel adds a shared page to `VmRSS` once per virtual page that
    /// maps it, which overstates a rewired array (10 000 random entries in a Node16M: 172 KiB
    /// here and in [`RewiredArray::kernel_resident_bytes`], +34 MiB of `VmRSS`).
    pub fn resident_bytes(&self) -> usize {
        match &self.backing {
            Backing::Rewired(rw) => rw.resident_pages * self.page_bytes,
            Backing::Plain {
                _buf: PlainBuf::Arena,
                ..
            } => 0,
            Backing::Plain {
                touched,
                touched_pages,
                region_pages,
                ..
            } => {
                if *region_pages <= 1 {
                    return touched_pages * self.page_bytes;
                }
                let words = (region_pages / 64).max(1);
                let regions = touched
                    .chunks(words)
                    .filter(|c| c.iter().any(|&w| w != 0))
                    .count();
                regions * region_pages * self.page_bytes
            }
        }
    }

    /// The kernel's own count of memory in the memfd (`fstat` blocks), to check
    /// [`RewiredArray::resident_bytes`]; `None` for the fallback or if `fstat` fails.
    pub fn kernel_resident_bytes(&self) -> Option<usize> {
        match &self.backing {
            Backing::Rewired(rw) => rw.map.allocated_bytes(),
            Backing::Plain { .. } => None,
        }
    }

    /// Heap bytes of the bookkeeping beside the slots (page tables of the kernel not included).
    pub fn metadata_bytes(&self) -> usize {
        let counts = self.counts.capacity() * std::mem::size_of::<u16>();
        counts
            + match &self.backing {
                Backing::Rewired(rw) => {
                    rw.vphys.capacity() * 4
                        + rw.phys.capacity() * std::mem::size_of::<PhysPage>()
                        + rw.bits.capacity() * 8
                        + (rw.free.capacity() + rw.open.capacity()) * 4
                }
                Backing::Plain { touched, .. } => touched.capacity() * 8,
            }
    }

    /// Page counts for reports.
    pub fn page_stats(&self) -> PageStats {
        let nonempty_pages = self.counts.iter().filter(|&&c| c > 0).count();
        let (physical_pages, shared_pages) = match &self.backing {
            Backing::Rewired(rw) => (
                rw.phys.iter().filter(|p| p.tenants > 0).count(),
                rw.phys.iter().filter(|p| p.tenants > 1).count(),
            ),
            Backing::Plain { touched_pages, .. } => (*touched_pages, 0),
        };
        PageStats {
            virtual_pages: self.counts.len(),
            nonempty_pages,
            physical_pages,
            shared_pages,
        }
    }

    /// True while the slots live on rewired memfd pages; false after a fallback.
    pub fn is_rewired(&self) -> bool {
        matches!(self.backing, Backing::Rewired(_))
    }

    /// Why the array uses the plain fallback, `None` while it is rewired.
    pub fn fallback_reason(&self) -> Option<&str> {
        match &self.backing {
            Backing::Rewired(_) => None,
            Backing::Plain { reason, .. } => reason.as_deref(),
        }
    }

    /// True for an array made flat on purpose ([`RewiredArray::flat`]).
    pub fn is_flat(&self) -> bool {
        matches!(self.backing, Backing::Plain { reason: None, .. })
    }

    /// Bytes [`RewiredArray::move_into`] would move: a flat array on small pages (one below a
    /// huge page, so not on one), else 0.
    pub(crate) fn movable_bytes(&self) -> usize {
        match &self.backing {
            Backing::Plain {
                _buf: PlainBuf::Heap(_),
                reason: None,
                ..
            } => self.slots * 8,
            _ => 0,
        }
    }

    /// Moves the slots of a flat array on small pages into `arena`, which then owns and counts
    /// their memory (`resident_bytes` becomes 0): a lookup through a flat Node64K (512 KiB)
    /// then misses no TLB. Nothing for other arrays; false if the arena is full.
    pub(crate) fn move_into(&mut self, arena: &mut Arena) -> bool {
        let bytes = self.movable_bytes();
        if bytes == 0 {
            return true;
        }
        let layout = std::alloc::Layout::from_size_align(bytes, 4096).expect("a valid size");
        let Some(dst) = arena.alloc(layout) else {
            return false;
        };
        // SAFETY: `base` is the flat heap buffer of `slots` words and `dst` fresh arena memory
        // of as many bytes; the copy keeps every slot (tags included), then the buffer is
        // dropped and `base` repointed while `&mut self` excludes readers.
        unsafe { std::ptr::copy_nonoverlapping(self.base, dst.cast::<u64>(), self.slots) };
        if let Backing::Plain { _buf, .. } = &mut self.backing {
            *_buf = PlainBuf::Arena;
        }
        self.base = dst.cast();
        true
    }

    /// The non-empty slots `(idx, word)` in index order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// The non-empty slots with index `>= start`, in index order.
    pub fn iter_from(&self, start: usize) -> Iter<'_> {
        Iter {
            array: self,
            next: start,
        }
    }

    /// Evicts the cache line of slot `idx` (for cold-lookup measurements, §IV-A).
    pub fn flush_slot(&self, idx: usize) {
        if idx < self.slots {
            // SAFETY: `idx < slots`, so the 8 bytes of the slot are mapped and readable.
            unsafe { super::cache_control::flush_raw(self.slot_ptr(idx) as *const u8, 8) };
        }
    }

    fn page_mask(&self) -> usize {
        (1 << self.page_shift) - 1
    }

    fn slot_ptr(&self, idx: usize) -> *mut u64 {
        self.base.wrapping_add(idx)
    }

    /// Copies every entry into a zeroed buffer and drops the mapping.
    fn switch_to_plain(&mut self, reason: String) {
        self.switch_to(PlainBuf::Heap(vec![0u64; self.slots]), 1, Some(reason));
    }

    /// Copies every entry into `buf` (zeroed, `slots` long) and drops the mapping.
    fn switch_to(&mut self, mut buf: PlainBuf, region_pages: usize, reason: Option<String>) {
        let slots = match &mut buf {
            PlainBuf::Heap(v) => v.as_mut_ptr(),
            PlainBuf::Huge(h) => h.base(),
            PlainBuf::Arena => unreachable!("arrays only switch to fresh buffers"),
        };
        // SAFETY: both buffers are `self.slots` zeroed, writable, exclusively owned `u64`s.
        let dst = unsafe { std::slice::from_raw_parts_mut(slots, self.slots) };
        let mut touched = vec![0u64; self.counts.len().div_ceil(64)];
        let mut touched_pages = 0;
        let page_slots = 1usize << self.page_shift;
        let pages = self
            .counts
            .iter()
            .zip(dst.chunks_mut(page_slots))
            .enumerate();
        for (page, (&count, chunk)) in pages {
            if count == 0 {
                continue;
            }
            touched[page / 64] |= 1 << (page % 64);
            touched_pages += 1;
            let first = page * page_slots;
            for (o, dst) in chunk.iter_mut().enumerate() {
                // SAFETY: pages with entries are mapped (their bookkeeping is cleared before
                // any remap that could fail), and `first + o < slots`.
                let raw = unsafe { self.slot_ptr(first + o).read_volatile() };
                if is_own(raw, page) {
                    *dst = raw;
                }
            }
        }
        self.base = slots;
        self.backing = Backing::Plain {
            _buf: buf,
            touched,
            touched_pages,
            region_pages,
            reason,
        };
    }
}

impl std::fmt::Debug for RewiredArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewiredArray")
            .field("slots", &self.slots)
            .field("len", &self.len)
            .field("rewired", &self.is_rewired())
            .field("resident_bytes", &self.resident_bytes())
            .finish()
    }
}

/// The word of `raw` if its tag is `page`, else 0.
#[inline(always)]
fn decode(raw: u64, page: usize) -> u64 {
    if raw >> WORD_BITS == page as u64 {
        raw & MAX_WORD
    } else {
        0
    }
}

/// True if `raw` is an entry of `page` (not empty, tag matches).
fn is_own(raw: u64, page: usize) -> bool {
    raw != 0 && raw >> WORD_BITS == page as u64
}

/// A store that could not be placed because the kernel refused a mapping.
struct Unplaced {
    reason: String,
    /// The page's own entries, taken off its old physical page: `(idx, word)`.
    moved: Vec<(usize, u64)>,
}

impl Rewiring {
    /// Places the new entry `raw` at `offset` of virtual page `page` (holding `count` entries).
    fn place(
        &mut self,
        page: usize,
        offset: usize,
        raw: u64,
        count: u16,
        base: *mut u64,
    ) -> std::result::Result<(), Unplaced> {
        let page_slots = self.page_slots;
        let page_ptr = base.wrapping_add(page * page_slots);
        let host = self.vphys[page];
        let mut moved = Vec::new();
        if host != NO_PAGE {
            if !self.taken(host, offset) {
                // SAFETY: the page is mapped writable onto `host`; `offset < page_slots`.
                unsafe { page_ptr.add(offset).write_volatile(raw) };
                self.take(host, offset);
                return Ok(());
            }
            // Unshare: another tenant holds this offset. Take the page's entries off `host`.
            moved.reserve(count as usize);
            for o in 0..page_slots {
                // SAFETY: inside the page mapped onto `host`.
                let slot = unsafe { page_ptr.add(o) };
                // SAFETY: as above, readable and writable.
                let v = unsafe { slot.read_volatile() };
                if is_own(v, page) {
                    moved.push((o, v));
                    // SAFETY: as above.
                    unsafe { slot.write_volatile(0) };
                    self.release_slot(host, o);
                }
            }
            self.vphys[page] = NO_PAGE;
            self.leave(host);
            debug_assert!(
                self.phys[host as usize].tenants > 0,
                "the colliding tenant stays"
            );
        }
        let mut mask = vec![0u64; self.words];
        mask[offset / 64] |= 1 << (offset % 64);
        for &(o, _) in &moved {
            mask[o / 64] |= 1 << (o % 64);
        }
        let target = self.find_host(&mask, moved.len() as u32 + 1, host);
        if let Err(reason) = self.map_page(page_ptr, target) {
            self.free_if_unused(target);
            let first = page * page_slots;
            return Err(Unplaced {
                reason,
                moved: moved
                    .into_iter()
                    .map(|(o, v)| (first + o, v & MAX_WORD))
                    .collect(),
            });
        }
        self.vphys[page] = target;
        let p = &mut self.phys[target as usize];
        p.tenants += 1;
        if !p.resident {
            p.resident = true;
            self.resident_pages += 1;
        }
        for (o, v) in moved.into_iter().chain(std::iter::once((offset, raw))) {
            // SAFETY: the page is now mapped writable onto `target`, whose bitmap showed every
            // one of these offsets free.
            unsafe { page_ptr.add(o).write_volatile(v) };
            self.take(target, o);
        }
        Ok(())
    }

    /// Bookkeeping after the entry at `offset` of `page` was cleared; `emptied` if it was the
    /// page's last entry, which sends the page back to the zero page.
    fn vacate(
        &mut self,
        page: usize,
        offset: usize,
        emptied: bool,
        base: *mut u64,
    ) -> std::result::Result<(), String> {
        let host = self.vphys[page];
        self.release_slot(host, offset);
        if emptied {
            self.vphys[page] = NO_PAGE;
            self.leave(host);
            let page_bytes = self.page_slots * 8;
            let addr = base.wrapping_add(page * self.page_slots) as *mut u8;
            self.count_mapping()?;
            // SAFETY: `addr` is a page-aligned page inside the array's reservation, which this
            // array owns; no reference into it is alive (`&mut self`).
            unsafe { self.map.map_zero(addr, page_bytes) }?;
            self.free_if_unused(host);
        }
        Ok(())
    }

    fn taken(&self, host: u32, offset: usize) -> bool {
        self.bits[host as usize * self.words + offset / 64] & (1 << (offset % 64)) != 0
    }

    fn take(&mut self, host: u32, offset: usize) {
        self.bits[host as usize * self.words + offset / 64] |= 1 << (offset % 64);
        self.phys[host as usize].used += 1;
    }

    fn release_slot(&mut self, host: u32, offset: usize) {
        self.bits[host as usize * self.words + offset / 64] &= !(1 << (offset % 64));
        let p = &mut self.phys[host as usize];
        p.used -= 1;
        if p.used < self.share_limit && !p.open {
            p.open = true;
            self.open.push(host);
        }
    }

    fn leave(&mut self, host: u32) {
        self.phys[host as usize].tenants -= 1;
    }

    /// Releases the memory of a physical page without tenants and lists it for reuse.
    fn free_if_unused(&mut self, host: u32) {
        let p = &mut self.phys[host as usize];
        if p.tenants > 0 {
            return;
        }
        debug_assert_eq!(p.used, 0, "a page without tenants holds no entries");
        debug_assert!(!self.free.contains(&host), "a page is released once");
        if p.resident {
            let page_bytes = self.page_slots * 8;
            if self.map.punch(host as usize * page_bytes, page_bytes) {
                p.resident = false;
                self.resident_pages -= 1;
            }
        }
        self.free.push(host);
    }

    /// A physical page where the offsets in `mask` (`k` entries) are free: a probed open page
    /// (not `exclude`) or a fresh one.
    fn find_host(&mut self, mask: &[u64], k: u32, exclude: u32) -> u32 {
        let mut probes = 0;
        let mut i = self.open.len();
        while i > 0 && probes < MAX_PROBE {
            i -= 1;
            let q = self.open[i];
            let p = self.phys[q as usize];
            if p.tenants == 0 || p.used >= self.share_limit {
                self.phys[q as usize].open = false;
                self.open.swap_remove(i);
                continue;
            }
            probes += 1;
            let bits = &self.bits[q as usize * self.words..(q as usize + 1) * self.words];
            if q != exclude
                && p.used + k <= self.share_limit
                && bits.iter().zip(mask).all(|(b, m)| b & m == 0)
            {
                return q;
            }
        }
        let q = match self.free.pop() {
            Some(q) => q,
            None => {
                self.phys.push(PhysPage::default());
                self.bits.resize(self.bits.len() + self.words, 0);
                (self.phys.len() - 1) as u32
            }
        };
        debug_assert!(self.phys.len() <= self.vphys.len());
        let p = &mut self.phys[q as usize];
        if k < self.share_limit && !p.open {
            p.open = true;
            self.open.push(q);
        }
        q
    }

    fn map_page(&mut self, page_ptr: *mut u64, host: u32) -> std::result::Result<(), String> {
        self.count_mapping()?;
        let page_bytes = self.page_slots * 8;
        // SAFETY: `page_ptr` is a page-aligned page inside the array's reservation, owned by
        // this array, with no reference into it alive; `host` is below the memfd's page count
        // (there are never more physical than virtual pages).
        unsafe {
            self.map
                .map_file_page(page_ptr as *mut u8, page_bytes, host as usize * page_bytes)
        }
    }

    /// Applies the injected mapping failure of [`RewiredParams::fail_mapping_after`].
    fn count_mapping(&mut self) -> std::result::Result<(), String> {
        match &mut self.fail_after {
            Some(0) => Err("injected mapping failure".to_string()),
            Some(n) => {
                *n -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }
}

/// Iterator over the non-empty slots of a [`RewiredArray`], in index order.
pub struct Iter<'a> {
    array: &'a RewiredArray,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        let a = self.array;
        while self.next < a.slots {
            let idx = self.next;
            let page = idx >> a.page_shift;
            if a.counts[page] == 0 {
                self.next = (page + 1) << a.page_shift;
                continue;
            }
            self.next += 1;
            let word = a.get(idx);
            if word != 0 {
                return Some((idx, word));
            }
        }
        None
    }
}

/// The system calls behind rewiring.
#[cfg(target_os = "linux")]
mod os {
    use std::io;

    /// The OS page size.
    pub(super) fn page_bytes() -> Option<usize> {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        (n > 0).then_some(n as usize)
    }

    /// Bytes of a transparent huge page (x86-64 and AArch64 with 4 KiB pages).
    pub(super) const HUGE_PAGE_BYTES: usize = 2 << 20;

    /// A zeroed anonymous mapping of whole huge pages, aligned to one, advised for them.
    pub(super) struct HugeBuf {
        base: *mut u8,
        bytes: usize,
    }

    impl HugeBuf {
        /// `None` if the size is under one huge page or the kernel refuses.
        pub(super) fn create(bytes: usize) -> Option<HugeBuf> {
            if bytes < HUGE_PAGE_BYTES {
                return None;
            }
            let bytes = bytes.next_multiple_of(HUGE_PAGE_BYTES);
            let over = bytes + HUGE_PAGE_BYTES;
            // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    over,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                return None;
            }
            let start = raw as usize;
            let aligned = start.next_multiple_of(HUGE_PAGE_BYTES);
            let (head, tail) = (aligned - start, over - (aligned - start) - bytes);
            // SAFETY: the head and tail are the parts of our mapping outside the aligned range;
            // unmapping them leaves `aligned..aligned + bytes` mapped. The advice only changes
            // how that range is backed.
            unsafe {
                if head > 0 {
                    libc::munmap(raw, head);
                }
                if tail > 0 {
                    libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
                }
                libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
            }
            Some(HugeBuf {
                base: aligned as *mut u8,
                bytes,
            })
        }

        pub(super) fn base(&self) -> *mut u64 {
            self.base as *mut u64
        }
    }

    impl Drop for HugeBuf {
        fn drop(&mut self) {
            // SAFETY: `base..base + bytes` is the mapping this value owns; no slot reference
            // outlives the array that owns this value.
            unsafe { libc::munmap(self.base as *mut libc::c_void, self.bytes) };
        }
    }

    /// A memfd as large as the reservation, and the reservation mapped to the zero page.
    pub(super) struct Mapping {
        fd: libc::c_int,
        base: *mut u8,
        bytes: usize,
    }

    fn last_error(call: &str) -> String {
        format!("{call}: {}", io::Error::last_os_error())
    }

    impl Mapping {
        pub(super) fn create(bytes: usize) -> Result<Mapping, String> {
            // SAFETY: the name is a NUL-terminated string; flags are valid.
            let fd = unsafe { libc::memfd_create(c"lidx-rewired".as_ptr(), libc::MFD_CLOEXEC) };
            if fd < 0 {
                return Err(last_error("memfd_create"));
            }
            // SAFETY: `fd` is the memfd just created; growing a file allocates nothing.
            if unsafe { libc::ftruncate(fd, bytes as libc::off_t) } != 0 {
                let e = last_error("ftruncate");
                // SAFETY: `fd` is open and owned here.
                unsafe { libc::close(fd) };
                return Err(e);
            }
            // SAFETY: a fresh anonymous read-only reservation; reads see the zero page.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    bytes,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                let e = last_error("mmap");
                // SAFETY: `fd` is open and owned here.
                unsafe { libc::close(fd) };
                return Err(e);
            }
            Ok(Mapping {
                fd,
                base: base as *mut u8,
                bytes,
            })
        }

        pub(super) fn base(&self) -> *mut u64 {
            self.base as *mut u64
        }

        /// Maps the page at `addr` onto the memfd page at `file_offset`, writable and shared.
        ///
        /// # Safety
        /// `addr..addr + len` must be page-aligned, inside this reservation, and not borrowed.
        pub(super) unsafe fn map_file_page(
            &self,
            addr: *mut u8,
            len: usize,
            file_offset: usize,
        ) -> Result<(), String> {
            // SAFETY: by the caller's contract the range is ours to replace; MAP_FIXED replaces
            // exactly that range.
            let got = unsafe {
                libc::mmap(
                    addr as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    self.fd,
                    file_offset as libc::off_t,
                )
            };
            if got == libc::MAP_FAILED {
                return Err(last_error("mmap(MAP_FIXED | MAP_SHARED)"));
            }
            Ok(())
        }

        /// Maps the page at `addr` back to the zero page (anonymous, read-only).
        ///
        /// # Safety
        /// As [`Mapping::map_file_page`].
        pub(super) unsafe fn map_zero(&self, addr: *mut u8, len: usize) -> Result<(), String> {
            // SAFETY: by the caller's contract the range is ours to replace.
            let got = unsafe {
                libc::mmap(
                    addr as *mut libc::c_void,
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if got == libc::MAP_FAILED {
                return Err(last_error("mmap(MAP_FIXED | MAP_ANONYMOUS)"));
            }
            Ok(())
        }

        /// Frees the memory of a memfd range; false if the kernel refused.
        pub(super) fn punch(&self, offset: usize, len: usize) -> bool {
            // SAFETY: `fd` is our memfd; punching a hole never touches mapped addresses' validity
            // (no virtual page maps this range any more).
            unsafe {
                libc::fallocate(
                    self.fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                ) == 0
            }
        }

        /// Bytes of memory the kernel has allocated to the memfd.
        pub(super) fn allocated_bytes(&self) -> Option<usize> {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: `st` is a valid out-pointer for one `stat`; `fd` is open.
            if unsafe { libc::fstat(self.fd, st.as_mut_ptr()) } != 0 {
                return None;
            }
            // SAFETY: fstat succeeded and filled `st`.
            let st = unsafe { st.assume_init() };
            Some(st.st_blocks as usize * 512)
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: `base..base + bytes` is the reservation this value owns; no slot reference
            // outlives the array that owns this value. `fd` is open and owned.
            unsafe {
                libc::munmap(self.base as *mut libc::c_void, self.bytes);
                libc::close(self.fd);
            }
        }
    }
}

/// Rewiring needs Linux's `memfd_create`; elsewhere every array uses the fallback.
#[cfg(not(target_os = "linux"))]
mod os {
    pub(super) fn page_bytes() -> Option<usize> {
        None
    }

    pub(super) enum Mapping {}

    pub(super) const HUGE_PAGE_BYTES: usize = 2 << 20;

    pub(super) enum HugeBuf {}

    impl HugeBuf {
        pub(super) fn create(_bytes: usize) -> Option<HugeBuf> {
            None
        }
        pub(super) fn base(&self) -> *mut u64 {
            match *self {}
        }
    }

    impl Mapping {
        pub(super) fn create(_bytes: usize) -> Result<Mapping, String> {
            Err("rewiring needs Linux memfd_create".to_string())
        }
        pub(super) fn base(&self) -> *mut u64 {
            match *self {}
        }
        pub(super) unsafe fn map_file_page(
            &self,
            _addr: *mut u8,
            _len: usize,
            _file_offset: usize,
        ) -> Result<(), String> {
            match *self {}
        }
        pub(super) unsafe fn map_zero(&self, _addr: *mut u8, _len: usize) -> Result<(), String> {
            match *self {}
        }
        pub(super) fn punch(&self, _offset: usize, _len: usize) -> bool {
            match *self {}
        }
        pub(super) fn allocated_bytes(&self) -> Option<usize> {
            match *self {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn page_slots(a: &RewiredArray) -> usize {
        1 << a.page_shift
    }

    /// Checks every observable against the model, and the resident count against the kernel.
    fn check(a: &RewiredArray, model: &BTreeMap<usize, u64>) {
        assert_eq!(a.len(), model.len());
        let got: Vec<(usize, u64)> = a.iter().collect();
        let want: Vec<(usize, u64)> = model.iter().map(|(&i, &w)| (i, w)).collect();
        assert_eq!(got, want);
        let ps = page_slots(a);
        for &i in model.keys() {
            let page = i / ps;
            for probe in [i, page * ps, (page + 1) * ps - 1, i ^ 1, i + ps] {
                assert_eq!(a.get(probe), model.get(&probe).copied().unwrap_or(0));
            }
            let from = a.iter_from(i).next();
            assert_eq!(from, Some((i, model[&i])));
        }
        if let Some(kernel) = a.kernel_resident_bytes() {
            assert_eq!(
                a.resident_bytes(),
                kernel,
                "bookkeeping disagrees with fstat"
            );
        }
        let stats = a.page_stats();
        if a.is_rewired() {
            assert!(stats.physical_pages <= stats.nonempty_pages);
        }
        assert_eq!(
            stats.nonempty_pages,
            model
                .keys()
                .map(|i| i / ps)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(usize, u64),
        Remove(usize),
    }

    /// Slot indices that crowd a few pages and offsets (collisions), plus the last page and
    /// anywhere at all.
    fn index(slots_log2: u32) -> impl Strategy<Value = usize> {
        let slots = 1usize << slots_log2;
        let pages = slots / 512;
        prop_oneof![
            4 => (0..6usize, 0..12usize).prop_map(|(p, o)| p * 512 + o),
            1 => (0..12usize).prop_map(move |o| (pages - 1) * 512 + o),
            1 => 0..slots,
        ]
    }

    fn ops(slots_log2: u32) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            3 => (index(slots_log2), 1..=MAX_WORD).prop_map(|(i, w)| Op::Set(i, w)),
            1 => index(slots_log2).prop_map(Op::Remove),
        ];
        prop::collection::vec(op, 0..120)
    }

    fn run(slots_log2: u32, params: RewiredParams, ops: Vec<Op>) {
        let mut a = RewiredArray::with_params(slots_log2, params).unwrap();
        assert_eq!(a.is_rewired(), !params.force_fallback);
        let mut model = BTreeMap::new();
        for op in ops {
            match op {
                Op::Set(i, w) => {
                    a.set(i, w).unwrap();
                    model.insert(i, w);
                }
                Op::Remove(i) => assert_eq!(a.remove(i), model.remove(&i)),
            }
            assert_eq!(a.len(), model.len());
        }
        check(&a, &model);
        if params.fail_mapping_after.is_none() {
            assert_eq!(a.is_rewired(), !params.force_fallback);
        }
        for i in model.keys().copied().collect::<Vec<_>>() {
            assert_eq!(a.remove(i), model.remove(&i));
        }
        check(&a, &model);
        if a.is_rewired() {
            assert_eq!(a.resident_bytes(), 0, "every released page is punched");
        }
    }

    fn params() -> impl Strategy<Value = RewiredParams> {
        (
            prop_oneof![Just(0u32), Just(5), Just(50), Just(100)],
            any::<bool>(),
            prop::option::weighted(0.2, 0..40usize),
        )
            .prop_map(|(fill, force, fail)| RewiredParams {
                max_share_fill_percent: fill,
                force_fallback: force,
                fail_mapping_after: fail,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        #[test]
        fn node64k_matches_btreemap(p in params(), ops in ops(NODE64K_SLOTS_LOG2)) {
            run(NODE64K_SLOTS_LOG2, p, ops);
        }

        #[test]
        fn node16m_matches_btreemap(p in params(), ops in ops(NODE16M_SLOTS_LOG2)) {
            run(NODE16M_SLOTS_LOG2, p, ops);
        }
    }

    #[test]
    fn flat_arrays_hold_entries_and_count_resident_memory() {
        for log2 in [NODE64K_SLOTS_LOG2, NODE16M_SLOTS_LOG2] {
            let mut a = RewiredArray::flat(log2).unwrap();
            assert!(a.is_flat() && !a.is_rewired() && a.fallback_reason().is_none());
            let mut model = BTreeMap::new();
            for i in 0..300usize {
                let idx = (i * 7919 + 13) % a.slots();
                a.set(idx, i as u64 + 1).unwrap();
                model.insert(idx, i as u64 + 1);
            }
            check(&a, &model);
            let resident = a.resident_bytes();
            assert!(resident >= a.page_stats().nonempty_pages * page_slots(&a) * 8);
            assert!(resident <= a.virtual_bytes().next_multiple_of(2 << 20));
            for (&idx, &w) in model.iter().take(100) {
                assert_eq!(a.remove(idx), Some(w));
            }
            let model: BTreeMap<usize, u64> = model.into_iter().skip(100).collect();
            check(&a, &model);
        }
    }

    #[test]
    fn foreign_entries_read_empty() {
        let mut a = RewiredArray::new(NODE64K_SLOTS_LOG2).unwrap();
        assert!(a.is_rewired(), "{:?}", a.fallback_reason());
        let ps = page_slots(&a);
        a.set(5, 0xAAAA).unwrap();
        a.set(ps + 7, 0xBBBB).unwrap();
        let stats = a.page_stats();
        assert_eq!((stats.physical_pages, stats.shared_pages), (1, 1));
        assert_eq!(a.resident_bytes(), a.page_bytes);
        for o in 0..ps {
            let own0 = if o == 5 { 0xAAAA } else { 0 };
            let own1 = if o == 7 { 0xBBBB } else { 0 };
            assert_eq!(a.get(o), own0, "page 0 offset {o}");
            assert_eq!(a.get(ps + o), own1, "page 1 offset {o}");
        }
        // A page never written reads empty everywhere (zero page).
        assert!((2 * ps..3 * ps).all(|i| a.get(i) == 0));
    }

    #[test]
    fn collision_unshares() {
        let mut a = RewiredArray::new(NODE64K_SLOTS_LOG2).unwrap();
        let ps = page_slots(&a);
        a.set(5, 1).unwrap();
        a.set(ps + 7, 2).unwrap();
        assert_eq!(a.page_stats().shared_pages, 1);
        a.set(ps + 5, 3).unwrap();
        let stats = a.page_stats();
        assert_eq!((stats.physical_pages, stats.shared_pages), (2, 0));
        assert_eq!(a.resident_bytes(), 2 * a.page_bytes);
        assert_eq!(a.kernel_resident_bytes(), Some(2 * a.page_bytes));
        assert_eq!((a.get(5), a.get(ps + 7), a.get(ps + 5)), (1, 2, 3));
        assert_eq!(a.get(7), 0);
        // A third page whose slot 9 is free on the first page joins it.
        a.set(2 * ps + 9, 4).unwrap();
        assert_eq!(a.page_stats().physical_pages, 2);
        assert_eq!(a.resident_bytes(), 2 * a.page_bytes);
    }

    #[test]
    fn sparse_fill_stays_small() {
        let mut a = RewiredArray::new(NODE16M_SLOTS_LOG2).unwrap();
        assert!(a.is_rewired(), "{:?}", a.fallback_reason());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut model = BTreeMap::new();
        let mut resident = 0;
        for n in 0..3000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x as usize) & (a.slots() - 1);
            a.set(i, n + 1).unwrap();
            model.insert(i, n + 1);
            // Resident memory counts whole physical pages and never shrinks on a store.
            let stats = a.page_stats();
            assert_eq!(a.resident_bytes(), stats.physical_pages * a.page_bytes);
            assert!(a.resident_bytes() >= resident);
            resident = a.resident_bytes();
        }
        check(&a, &model);
        let stats = a.page_stats();
        // One page per non-empty virtual page would be the KISS-tree cost; sharing is far less.
        assert!(
            a.resident_bytes() * 10 < stats.nonempty_pages * a.page_bytes,
            "{stats:?}"
        );
        assert!(a.resident_bytes() * 1000 < a.virtual_bytes());
        assert!(a.metadata_bytes() < a.virtual_bytes() / 100);
    }

    #[test]
    fn bad_input_is_rejected() {
        assert!(matches!(
            RewiredArray::new(25),
            Err(Error::InvalidParameter {
                name: "slots_log2",
                ..
            })
        ));
        let p = RewiredParams {
            max_share_fill_percent: 101,
            ..RewiredParams::default()
        };
        assert!(RewiredArray::with_params(16, p).is_err());
        let mut a = RewiredArray::new(16).unwrap();
        assert!(a.set(1 << 16, 1).is_err());
        assert!(a.set(3, 0).is_err());
        assert!(a.set(3, MAX_WORD + 1).is_err());
        assert_eq!(a.get(usize::MAX), 0);
        assert_eq!(a.remove(1 << 16), None);
        assert!(a.is_empty());
    }

    #[test]
    fn tiny_arrays_fall_back_and_report() {
        let mut a = RewiredArray::new(3).unwrap();
        assert!(!a.is_rewired());
        assert!(a.fallback_reason().unwrap().contains("page"));
        a.set(7, 42).unwrap();
        assert_eq!(a.iter().collect::<Vec<_>>(), [(7, 42)]);
        let forced = RewiredArray::with_params(
            16,
            RewiredParams {
                force_fallback: true,
                ..RewiredParams::default()
            },
        )
        .unwrap();
        assert!(forced.fallback_reason().unwrap().contains("forced"));
    }

    #[test]
    fn mapping_failure_falls_back_with_contents() {
        let p = RewiredParams {
            fail_mapping_after: Some(2),
            ..RewiredParams::default()
        };
        let mut a = RewiredArray::with_params(NODE64K_SLOTS_LOG2, p).unwrap();
        let ps = page_slots(&a);
        a.set(5, 1).unwrap();
        a.set(ps + 7, 2).unwrap();
        assert!(a.is_rewired());
        // The collision needs a third mapping, which fails mid-unshare.
        a.set(ps + 5, 3).unwrap();
        assert!(!a.is_rewired());
        assert!(a.fallback_reason().unwrap().contains("injected"));
        let all: Vec<_> = a.iter().collect();
        assert_eq!(all, [(5, 1), (ps + 5, 3), (ps + 7, 2)]);
    }
}
