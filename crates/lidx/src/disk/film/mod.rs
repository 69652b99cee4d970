//! FILM on disk: a learned index over data partitioned between memory and disk, with an LRU
//! over the data items that decides which of them stay in memory (Ma et al., *FILM: A Fully
//! Learned Index for Larger-Than-Memory Databases*, PVLDB 16(3), 2022), the index paper 002
//! §10.5 (Fig. 13) compares its hybrid index with.
//!
//! The FILM paper itself is not on this machine: what this module follows is FILM as paper
//! 002 §10.5 and §2 describe it and as its authors' public code shows it (read, not copied:
//! github.com/chaohcc/film, `film.h`, `filmadalru.h`, `filmadastorage.h`), so no section of
//! the FILM paper is cited here.
//!
//! What it follows:
//!
//! * **Learned leaves over all the data.** Every key stays in memory, in leaves of an optimal
//!   piecewise-linear approximation with error `eps` ([`crate::model::optimal_pla`]; FILM's
//!   models are the PGM's segmentation, as its README says). A leaf holds its keys and, per
//!   key, where its payload is: cached in memory or a (page, slot) locator of a record on
//!   disk. Paper 002 §10.5: "FILM must keep a 16-byte (page #, offset) pair in memory for
//!   every data item on disk, [so] it is impossible to force a small memory footprint".
//! * **Cold-data detection by an LRU over data items.** Cached payloads sit on one
//!   least-recently-used chain; when they take more than the memory limit (`mem`, bytes of
//!   cached items, each `payload + 16` bytes of chain), the coldest are evicted to disk.
//! * **Evictions are appends.** An evicted item is written to the open data page; a full page
//!   is written to the end of `<name>.data` in one request. Nothing on disk is rewritten in
//!   place: an item read back, updated or deleted leaves a dead record behind (counted in
//!   [`DiskIndex::storage_bytes`]'s `free`; the file is never compacted).
//! * **Swapping in.** A lookup of an item on disk reads its page (one block), moves the item to
//!   the front of the chain (it is hot now) and so may evict others: the data swapping between
//!   memory and disk whose cost, on write-heavy workloads, paper 002 §10.5 blames for FILM's
//!   "extremely low performance in the write-heavy workloads". A read-only handle reads without
//!   swapping in, and so does one whose `mem` holds no item (the item would be evicted at
//!   once, appending a copy of its record: such a read writes nothing).
//!
//! Where it simplifies or improves, and why:
//!
//! * **One item-level chain** instead of FILM's adaptive two-level chain (a global chain of
//!   leaves, local chains of items in each leaf, updated lazily on queries): the same order of
//!   eviction at O(1) per touch, at 16 bytes per cached item (key and two links).
//! * **Eviction item by item, as the limit is passed,** into an open page written when full.
//!   FILM's code recomputes its memory use to decide when to transfer, then evicts a large
//!   batch at once; both append whole pages, ours keeps the count of cached items exact at O(1).
//! * **8-byte locators** (`page << 16 | slot`) instead of FILM's 16-byte pair: our FILM keeps
//!   8 bytes less per on-disk item in memory than the paper's, which favours FILM wherever its
//!   memory is compared.
//! * **A binary search over the leaves' first keys** instead of FILM's upper learned levels;
//!   8 bytes per leaf.
//! * **Inserts anywhere, not only appends.** FILM is built for appends (paper 002 §2: "it
//!   requires cold data detection and append-only inserts"); its code sends a key below the
//!   last leaf's end to one sorted list beside the leaves. Here any key goes into its leaf's
//!   sorted arrays; each insert or delete since the leaf's model was fitted widens its search
//!   window by one (a shift moves every later key by one rank), and after `eps` of them the
//!   leaf is refitted, possibly into several leaves. An append is the same operation on the
//!   last leaf. Leaves hold at most [`MAX_LEAF`] keys (a fit cuts them at half of it), so one
//!   insert shifts at most that many.
//! * **Bulk load** keeps the highest keys cached (as if the keys had been appended in order,
//!   the newest hottest) and writes the rest to pages in key order.
//! * **Durability at flush.** `<name>` holds a snapshot of the in-memory part (keys, locators,
//!   cached payloads in chain order) written at every [`DiskMap::flush`]; reopening restores the
//!   index, chain order included. The layout is in [`format`]. A flush is crash-safe: it
//!   writes its snapshot where the committed one is not (before it if it fits, else past it),
//!   syncs, then writes a header of the next generation into the other of two header slots
//!   and syncs; open takes the newest header that decodes. A crash (a torn write, a failed
//!   write or sync) anywhere in a flush leaves the state before it, or the one after it once
//!   its header is written; data pages a committed snapshot refers to are never written
//!   again (below). Format version 2 rewrote the snapshot in place, then the header: a crash
//!   between lost the committed state, which open refused as damaged.
//!
//! Memory ([`DiskIndex::memory_bytes`]) counts everything: leaves (keys, locators, models),
//! the first keys, the chain and the cached payloads, the open data page.
//!
//! Measured (`lidx repro 002-fig13 --scale full`: 7.5M uniform keys, `sim:nvme`, medians of 3,
//! `docs/results/paper002.md`): with 58% of its items cached FILM reads 2.28x as fast as the
//! hybrid index at the paper's budget scaled (225.8 MB of memory against 512 KiB); with none
//! cached it still holds 121.4 MB (16.2 bytes an item) and reads no faster; it inserts at
//! 350-377 Kops/s modeled, 0.004 blocks written per insert, 3.5-13x the hybrid's.

pub(crate) mod format;

use std::sync::Arc;

use parking_lot::Mutex;

use crate::disk::{DiskIndex, DiskMap, PhaseClock, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::index::ApproxPos;
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::check_strictly_sorted;
use crate::model::{optimal_pla, LinearModel};

use format::{
    check_data_header, decode_header, decode_snapshot, encode_data_header, next_snapshot_first,
    slots_per_page, Header, Snapshot, DATA_FIRST, HEADER_SLOTS, IN_MEMORY, SNAPSHOT_FIRST,
};

/// Most keys in one leaf: bounds what one insert shifts (16 KiB of keys and locators) and one
/// refit refits. A first version cut leaves at `1 << 14` keys and refitted a full leaf on
/// every insert into it: 9.6 us per insert at the median on 7.5M uniform keys (002-fig13's
/// write-only run), against 1.3 us for the hybrid's; the binary search over the leaves' first
/// keys costs little more at this size.
pub const MAX_LEAF: usize = 1 << 10;

/// No link in the chain.
const NIL: u32 = u32::MAX;

/// Bytes one cached item costs against the memory limit beyond its payload: its key and the
/// chain's two links.
pub const CACHED_ITEM_OVERHEAD: usize = 16;

/// Parameters of [`Film::build`], all recorded in its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilmParams {
    /// Bytes of payload per key (default 8).
    pub payload_size: usize,
    /// Error bound of the leaves' models: larger is fewer leaves, longer searches in one.
    pub eps: usize,
    /// Bytes the cached data items may take (payload plus [`CACHED_ITEM_OVERHEAD`] each);
    /// the coldest beyond it go to disk. Keys and locators are not part of it: FILM keeps
    /// them for every item.
    pub memory_limit: u64,
}

impl Default for FilmParams {
    fn default() -> Self {
        FilmParams {
            payload_size: crate::disk::DEFAULT_PAYLOAD_SIZE,
            eps: 64,
            memory_limit: 64 << 20,
        }
    }
}

impl FilmParams {
    /// [`Error::InvalidParameter`] for an eps of 0 or above 2^20, or a payload of 0 or above
    /// 64 KiB.
    pub fn check(&self) -> Result<()> {
        if !(1..=1 << 20).contains(&self.eps) {
            return Err(Error::InvalidParameter {
                name: "eps",
                value: self.eps.to_string(),
                expected: "an error bound from 1 to 2^20, such as 64",
            });
        }
        if self.payload_size == 0 {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: "0".to_string(),
                expected: "at least 1 byte",
            });
        }
        crate::disk::flagged_records::check_payload_size(self.payload_size)
    }

    /// Cached items the memory limit holds.
    fn max_cached(&self) -> usize {
        let per = (self.payload_size + CACHED_ITEM_OVERHEAD) as u64;
        usize::try_from(self.memory_limit / per).unwrap_or(usize::MAX)
    }
}

/// What FILM did since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilmStats {
    /// Items evicted to disk.
    pub evictions: u64,
    /// Items read from disk back into memory.
    pub swap_ins: u64,
    /// Leaves refitted.
    pub refits: u64,
}

/// One leaf: a model over its keys and where each key's payload is.
#[derive(Clone, Debug)]
struct Leaf {
    /// Predicts a key's position in `keys`.
    model: LinearModel,
    /// The window's half width: `eps` plus the inserts and deletes since the fit.
    err: usize,
    keys: Vec<u64>,
    /// [`IN_MEMORY`] with the chain slot in `slot`, or `page << 16 | slot` on disk.
    locs: Vec<u64>,
}

/// A cached payload's locator: its chain slot below the in-memory flag bit.
const CACHED: u64 = 1 << 63;

impl Leaf {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Leaf>() + 8 * (self.keys.capacity() + self.locs.capacity())
    }

    /// The position of `key`, if present: a search of the model's window.
    fn find(&self, key: u64) -> Option<usize> {
        let w = ApproxPos::from_prediction(self.model.predict(key), self.err, self.keys.len());
        let at = w.lo + self.keys[w.lo..w.hi].partition_point(|&k| k < key);
        (self.keys.get(at) == Some(&key)).then_some(at)
    }
}

/// The least-recently-used chain of cached items, in slots that never move (freed slots are
/// reused), so a locator names its slot.
#[derive(Debug, Default)]
struct Chain {
    keys: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    payloads: Vec<u8>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    len: usize,
}

impl Chain {
    /// An empty chain with room for `n` items and the one a swap-in or insert adds before the
    /// eviction it causes: a chain grown by doubling would hold up to twice the memory its
    /// items need (measured: 321 MB for FILM's 224 MB on 7.5M keys, 58% of them cached).
    fn with_capacity(n: usize, ps: usize) -> Chain {
        Chain {
            keys: Vec::with_capacity(n + 1),
            prev: Vec::with_capacity(n + 1),
            next: Vec::with_capacity(n + 1),
            payloads: Vec::with_capacity((n + 1) * ps),
            head: NIL,
            tail: NIL,
            ..Chain::default()
        }
    }

    fn bytes(&self) -> usize {
        8 * self.keys.capacity()
            + 4 * (self.prev.capacity() + self.next.capacity() + self.free.capacity())
            + self.payloads.capacity()
    }

    fn payload(&self, slot: u32, ps: usize) -> &[u8] {
        &self.payloads[slot as usize * ps..(slot as usize + 1) * ps]
    }

    fn payload_mut(&mut self, slot: u32, ps: usize) -> &mut [u8] {
        &mut self.payloads[slot as usize * ps..(slot as usize + 1) * ps]
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        match p {
            NIL => self.head = n,
            p => self.next[p as usize] = n,
        }
        match n {
            NIL => self.tail = p,
            n => self.prev[n as usize] = p,
        }
    }

    fn link_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        match self.head {
            NIL => self.tail = s,
            h => self.prev[h as usize] = s,
        }
        self.head = s;
    }

    /// Caches `key` with `payload` as the most recently used; its slot.
    fn push_front(&mut self, key: u64, payload: &[u8]) -> u32 {
        let ps = payload.len();
        let s = match self.free.pop() {
            Some(s) => {
                self.keys[s as usize] = key;
                s
            }
            None => {
                self.keys.push(key);
                self.prev.push(NIL);
                self.next.push(NIL);
                self.payloads.resize(self.payloads.len() + ps, 0);
                (self.keys.len() - 1) as u32
            }
        };
        self.payload_mut(s, ps).copy_from_slice(payload);
        self.link_front(s);
        self.len += 1;
        s
    }

    fn touch(&mut self, s: u32) {
        if self.head != s {
            self.unlink(s);
            self.link_front(s);
        }
    }

    fn remove(&mut self, s: u32) {
        self.unlink(s);
        self.free.push(s);
        self.len -= 1;
    }

    /// Slots from the least to the most recently used.
    fn coldest_first(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len);
        let mut s = self.tail;
        while s != NIL {
            out.push(s);
            s = self.prev[s as usize];
        }
        out
    }
}

/// Where the newest header on disk and its snapshot are.
#[derive(Clone, Copy, Debug)]
struct Committed {
    /// The header's generation (0 before the build's flush).
    generation: u64,
    /// The snapshot's first block and its blocks.
    first: u64,
    blocks: u64,
}

/// Everything a [`Film`] changes, behind its lock (reads change the chain).
struct State {
    leaves: Vec<Leaf>,
    /// First key of each leaf.
    firsts: Vec<u64>,
    len: u64,
    chain: Chain,
    /// The data page evictions fill, `page` its page number.
    open: AlignedBuf,
    open_page: u64,
    open_used: usize,
    /// Dead records in pages (read back, updated or deleted since written).
    dead: u64,
    /// The state on disk, which a flush must not write over.
    committed: Committed,
    stats: FilmStats,
    timing: WriteBreakdown,
}

/// FILM (module docs). Reads take `&self` and may swap items in, behind a lock.
pub struct Film {
    name: String,
    head: Arc<dyn BlockDevice>,
    data: Arc<dyn BlockDevice>,
    writable: bool,
    params: FilmParams,
    block_size: usize,
    slots: usize,
    keys_fingerprint: u64,
    /// The id its data file's header records too.
    pair: u64,
    state: Mutex<State>,
}

impl std::fmt::Debug for Film {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Film")
            .field("name", &self.name)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// Leaves fitted to `keys` (with their `locs`) at error `eps`, a segment longer than half
/// [`MAX_LEAF`] cut into pieces of half of it, so that a new leaf takes that many inserts
/// before its size forces a refit.
fn fit(keys: &[u64], locs: &[u64], eps: usize) -> Result<Vec<Leaf>> {
    let segments = optimal_pla(keys, eps)?;
    let mut leaves = Vec::new();
    for (i, s) in segments.iter().enumerate() {
        let end = segments.get(i + 1).map_or(keys.len(), |n| n.first_rank);
        let mut start = s.first_rank;
        while start < end {
            let stop = end.min(start + MAX_LEAF / 2);
            let model = LinearModel {
                intercept: s.model.intercept - start as f64,
                ..s.model
            };
            leaves.push(Leaf {
                model,
                err: eps,
                keys: keys[start..stop].to_vec(),
                locs: locs[start..stop].to_vec(),
            });
            start = stop;
        }
    }
    Ok(leaves)
}

/// A new pair id for the FILM `name`: a hash, keyed by the OS's random source, of the time, the
/// process and the name (never 0), so that a data file is not taken for another build's.
fn new_pair_id(name: &str) -> u64 {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::collections::hash_map::RandomState::new()
        .hash_one((now, std::process::id(), name))
        .max(1)
}

fn data_name(name: &str) -> String {
    format!("{name}.data")
}

impl Film {
    /// Builds FILM `name` in `storage` (its header and snapshot in `name`, its data pages in
    /// `name.data`) from strictly ascending `keys`; `payload_of(i, &keys[i], out)` fills entry
    /// `i`'s payload. The highest keys the memory limit holds stay cached, the others go to
    /// data pages in key order. Flushed, open for writing.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidParameter`]
    /// (also for a payload too large for a record in one block), I/O.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[u64],
        mut payload_of: impl FnMut(usize, &u64, &mut [u8]),
        params: FilmParams,
    ) -> Result<Film> {
        params.check()?;
        check_strictly_sorted(keys)?;
        let block_size = storage.block_size();
        let usable = block_size - crate::io::BLOCK_TRAILER;
        let slots = slots_per_page(usable, params.payload_size);
        if slots == 0 {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: params.payload_size.to_string(),
                expected: "a payload that, with its 8-byte key, fits one block",
            });
        }
        let ps = params.payload_size;
        let head = storage.create(name)?;
        let data = storage.create(&data_name(name))?;
        let cached = keys.len().min(params.max_cached());
        let on_disk = keys.len() - cached;
        // The cold part, in key order, a batch of pages per request.
        let mut locs = Vec::with_capacity(keys.len());
        let mut payload = vec![0u8; ps];
        const BATCH: usize = 64;
        let pages = on_disk.div_ceil(slots);
        let mut page = 0usize;
        while page < pages {
            let count = BATCH.min(pages - page);
            let mut buf = AlignedBuf::zeroed(count * block_size);
            for p in 0..count {
                let block = &mut buf[p * block_size..(p + 1) * block_size];
                for slot in 0..slots {
                    let i = (page + p) * slots + slot;
                    if i >= on_disk {
                        break;
                    }
                    payload_of(i, &keys[i], &mut payload);
                    let at = slot * (8 + ps);
                    block[at..at + 8].copy_from_slice(&keys[i].to_le_bytes());
                    block[at + 8..at + 8 + ps].copy_from_slice(&payload);
                    locs.push(((page + p) as u64) << 16 | slot as u64);
                }
            }
            data.write_blocks(DATA_FIRST + page as u64, &mut buf, IoClass::Data)?;
            page += count;
        }
        let mut chain = Chain::with_capacity(cached, ps);
        for (i, key) in keys.iter().enumerate().skip(on_disk) {
            payload_of(i, key, &mut payload);
            locs.push(CACHED | u64::from(chain.push_front(*key, &payload)));
        }
        let leaves = fit(keys, &locs, params.eps)?;
        let pair = new_pair_id(name);
        let film = Film {
            name: name.to_string(),
            head,
            data,
            writable: true,
            params,
            block_size,
            slots,
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
            pair,
            state: Mutex::new(State {
                firsts: leaves.iter().map(|l| l.keys[0]).collect(),
                leaves,
                len: keys.len() as u64,
                chain,
                open: AlignedBuf::zeroed(block_size),
                open_page: pages as u64,
                open_used: 0,
                dead: 0,
                committed: Committed {
                    generation: 0,
                    first: SNAPSHOT_FIRST,
                    blocks: 0,
                },
                stats: FilmStats::default(),
                timing: WriteBreakdown::default(),
            }),
        };
        let mut block = AlignedBuf::zeroed(block_size);
        encode_data_header(
            params.payload_size,
            block_size as u32,
            pair,
            &mut block[..usable],
        );
        film.data.write_blocks(0, &mut block, IoClass::Header)?;
        // Generation 1 in both slots: a file always has two header blocks.
        let header = film.flush_state(&mut film.state.lock())?;
        film.write_header(&header, 0)?;
        film.head.sync()?;
        Ok(film)
    }

    /// Opens FILM `name` in `storage`, for writing too when `writable`, in the newest state
    /// on disk: that of the newest header (of the two slots) that decodes and whose snapshot
    /// does, which a crash during a flush leaves as the state before it or after it. Checks
    /// the header (magic, version, kind, key type, parameters), the snapshot (length, crc,
    /// entries) and that `name.data` holds the pages the header says.
    ///
    /// Errors, when no state opens: the newest decoded header's, else slot 0's
    /// ([`Error::UnsupportedVersion`] for a file of format 1 or 2: rebuild), or the first I/O
    /// error.
    pub fn open(storage: &Storage, name: &str, writable: bool) -> Result<Film> {
        let head = storage.open(name, writable)?;
        let data = storage.open(&data_name(name), writable)?;
        let block_size = head.block_size();
        let usable = head.payload_size();
        if head.len_blocks() == 0 {
            return Err(Error::Truncated {
                file: name.to_string(),
                what: "no header block".to_string(),
            });
        }
        let mut buf = AlignedBuf::zeroed(block_size);
        let (header, snap) = Self::newest_state(&head, &data, name, &mut buf)?;
        let snapshot_blocks = header.snapshot_blocks(usable);
        let ps = header.params.payload_size;
        let mut chain = Chain::with_capacity(snap.cached.len(), ps);
        let mut locs = snap.locs;
        for (i, key) in snap.cached.iter().enumerate() {
            let at = snap.keys.binary_search(key).map_err(|_| {
                crate::disk::header_fields::corrupt_block0(name, "a cached key is no entry")
            })?;
            let slot = chain.push_front(*key, &snap.payloads[i * ps..(i + 1) * ps]);
            locs[at] = CACHED | u64::from(slot);
        }
        let leaves = if snap.keys.is_empty() {
            Vec::new()
        } else {
            fit(&snap.keys, &locs, header.params.eps)?
        };
        let film = Film {
            name: name.to_string(),
            head,
            data,
            writable,
            params: header.params,
            block_size,
            slots: header.slots(),
            keys_fingerprint: header.keys_fingerprint,
            pair: header.pair,
            state: Mutex::new(State {
                firsts: leaves.iter().map(|l| l.keys[0]).collect(),
                leaves,
                len: header.len,
                chain,
                open: AlignedBuf::zeroed(block_size),
                open_page: header.pages,
                open_used: 0,
                dead: 0,
                committed: Committed {
                    generation: header.generation,
                    first: header.snapshot_first,
                    blocks: snapshot_blocks,
                },
                stats: FilmStats::default(),
                timing: WriteBreakdown::default(),
            }),
        };
        Ok(film)
    }

    /// The newest state on disk (see [`Film::open`]): the headers of `head`'s two slots
    /// that decode, newest generation first, and the first of them whose snapshot loads;
    /// then `data` checked against it. A slot that does not decode (torn by a crash while a
    /// flush wrote it) or whose snapshot does not load (a flush cut short after it wrote the
    /// header once: a later attempt wrote over the snapshot that header names) is passed over.
    /// Anything else (the block size, the data file) is the index's, not a slot's: an error.
    /// `buf` is a block.
    fn newest_state(
        head: &Arc<dyn BlockDevice>,
        data: &Arc<dyn BlockDevice>,
        name: &str,
        buf: &mut [u8],
    ) -> Result<(Header, Snapshot)> {
        let usable = head.payload_size();
        let mut headers = Vec::new();
        let mut errors = Vec::new();
        for slot in 0..HEADER_SLOTS.min(head.len_blocks()) {
            let decoded = head
                .read_blocks(slot, buf, IoClass::Header)
                .and_then(|()| decode_header(&buf[..usable], name));
            match decoded {
                Ok(h) => headers.push(h),
                Err(e @ Error::Io { .. }) => return Err(e),
                Err(e) => errors.push(e),
            }
        }
        headers.sort_by_key(|h| std::cmp::Reverse(h.generation));
        let mut newest = None;
        for (i, header) in headers.into_iter().enumerate() {
            crate::disk::header_fields::check_built_block_size(
                name,
                header.block_size,
                head.block_size(),
                false,
            )?;
            match Self::load_snapshot(head, name, &header) {
                Ok(snap) => {
                    newest = Some((header, snap));
                    break;
                }
                Err(e @ Error::Io { .. }) => return Err(e),
                // The newest header's error first: that of the state open was meant to give.
                Err(e) => errors.insert(i, e),
            }
        }
        let Some((header, snap)) = newest else {
            return Err(errors.swap_remove(0));
        };
        crate::disk::header_fields::check_header_blocks(
            &data_name(name),
            data.len_blocks(),
            DATA_FIRST + header.pages,
        )?;
        data.read_blocks(0, buf, IoClass::Header)?;
        check_data_header(&buf[..usable], &header, &data_name(name))?;
        Ok((header, snap))
    }

    /// The snapshot `header` names in `<name>` (`head`), checked against it.
    fn load_snapshot(head: &Arc<dyn BlockDevice>, name: &str, header: &Header) -> Result<Snapshot> {
        let (block_size, usable) = (head.block_size(), head.payload_size());
        let snapshot_blocks = header.snapshot_blocks(usable);
        crate::disk::header_fields::check_header_blocks(
            name,
            head.len_blocks(),
            header.snapshot_first + snapshot_blocks,
        )?;
        let mut raw = AlignedBuf::zeroed(snapshot_blocks as usize * block_size);
        if snapshot_blocks > 0 {
            head.read_blocks(header.snapshot_first, &mut raw, IoClass::Model)?;
        }
        let mut bytes = Vec::with_capacity(header.snapshot_bytes as usize);
        for block in raw.chunks_exact(block_size) {
            bytes.extend_from_slice(&block[..usable]);
        }
        bytes.truncate(header.snapshot_bytes as usize);
        decode_snapshot(&bytes, header, name)
    }

    /// Writes `header` into header slot `slot` (block `slot` of `<name>`).
    fn write_header(&self, header: &Header, slot: u64) -> Result<()> {
        let mut block = AlignedBuf::zeroed(self.block_size);
        header.encode(&mut block[..self.head.payload_size()]);
        self.head.write_blocks(slot, &mut block, IoClass::Header)
    }

    /// The parameters it was built with.
    pub fn params(&self) -> FilmParams {
        self.params
    }

    /// Evictions, swap-ins and refits since it was opened.
    pub fn stats(&self) -> FilmStats {
        self.state.lock().stats
    }

    /// Items whose payload is cached in memory now.
    pub fn cached_items(&self) -> usize {
        self.state.lock().chain.len
    }

    /// The leaf that holds `key` or would (none when the index is empty).
    fn leaf_of(st: &State, key: u64) -> Option<usize> {
        if st.leaves.is_empty() {
            return None;
        }
        Some(st.firsts.partition_point(|&f| f <= key).saturating_sub(1))
    }

    /// Reads the payload of the record at `loc` (on disk, or in the open page) into `out`,
    /// checking that the record is `key`'s. `page` holds the data page `loaded` names, and is
    /// read again only for another page (a scan of items evicted together reads their page
    /// once).
    fn read_record(
        &self,
        st: &State,
        key: u64,
        loc: u64,
        out: &mut [u8],
        page_buf: &mut AlignedBuf,
        loaded: &mut Option<u64>,
    ) -> Result<()> {
        let (page, slot) = (loc >> 16, (loc & 0xffff) as usize);
        let ps = self.params.payload_size;
        let at = slot * (8 + ps);
        let bytes: &[u8] = if page == st.open_page {
            &st.open
        } else {
            if *loaded != Some(page) {
                if page_buf.len() != self.block_size {
                    *page_buf = AlignedBuf::zeroed(self.block_size);
                }
                self.data
                    .read_blocks(DATA_FIRST + page, page_buf, IoClass::Leaf)?;
                *loaded = Some(page);
            }
            page_buf
        };
        let found = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if found != key {
            return Err(crate::disk::header_fields::corrupt_at(
                &data_name(&self.name),
                DATA_FIRST + page,
                format!("slot {slot} holds key {found}, the index says {key}"),
            ));
        }
        out.copy_from_slice(&bytes[at + 8..at + 8 + ps]);
        Ok(())
    }

    /// Evicts the coldest cached items to the open page until the memory limit holds them;
    /// writes each page as it fills.
    fn evict(&self, st: &mut State) -> Result<()> {
        let ps = self.params.payload_size;
        while st.chain.len > self.params.max_cached() {
            let s = st.chain.tail;
            let key = st.chain.keys[s as usize];
            let at = st.open_used * (8 + ps);
            st.open[at..at + 8].copy_from_slice(&key.to_le_bytes());
            st.open[at + 8..at + 8 + ps].copy_from_slice(st.chain.payload(s, ps));
            let loc = st.open_page << 16 | st.open_used as u64;
            let leaf = Self::leaf_of(st, key).expect("a cached key is in a leaf");
            let pos = st.leaves[leaf]
                .find(key)
                .expect("a cached key is in its leaf");
            st.leaves[leaf].locs[pos] = loc;
            st.chain.remove(s);
            st.open_used += 1;
            st.stats.evictions += 1;
            if st.open_used == self.slots {
                self.data
                    .write_blocks(DATA_FIRST + st.open_page, &mut st.open, IoClass::Data)?;
                st.open_page += 1;
                st.open_used = 0;
                st.open.fill(0);
            }
        }
        Ok(())
    }

    /// Refits leaf `leaf` once its window has widened by `eps` since its fit, or it holds too
    /// many keys.
    fn maybe_refit(&self, st: &mut State, leaf: usize) -> Result<()> {
        let l = &st.leaves[leaf];
        if l.err < 2 * self.params.eps && l.keys.len() <= MAX_LEAF {
            return Ok(());
        }
        let new = fit(&l.keys, &l.locs, self.params.eps)?;
        let firsts: Vec<u64> = new.iter().map(|l| l.keys[0]).collect();
        st.leaves.splice(leaf..=leaf, new);
        st.firsts.splice(leaf..=leaf, firsts);
        st.stats.refits += 1;
        Ok(())
    }

    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    fn check_payload(&self, payload: &[u8]) -> Result<()> {
        if payload.len() != self.params.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly the payload size the index was built with",
            });
        }
        Ok(())
    }

    /// Writes the open page (if it holds records) and the snapshot where the committed one is
    /// not, syncs both files, then writes the header of the next generation into the slot the
    /// committed header is not in, and syncs; the header written. A crash anywhere before the
    /// header is written leaves the committed state as it was (module docs). Evictions after
    /// it go to a new page: a page the committed snapshot refers to is never written again, so
    /// a torn write cannot take records already flushed (the price: a partly empty page per
    /// flush).
    fn flush_state(&self, st: &mut State) -> Result<Header> {
        if st.open_used > 0 {
            self.data
                .write_blocks(DATA_FIRST + st.open_page, &mut st.open, IoClass::Data)?;
            st.open_page += 1;
            st.open_used = 0;
            st.open.fill(0);
        }
        let pages = st.open_page;
        let ps = self.params.payload_size;
        let mut snap = Snapshot::default();
        for leaf in &st.leaves {
            snap.keys.extend_from_slice(&leaf.keys);
            snap.locs.extend(
                leaf.locs
                    .iter()
                    .map(|&l| if l & CACHED != 0 { IN_MEMORY } else { l }),
            );
        }
        for s in st.chain.coldest_first() {
            snap.cached.push(st.chain.keys[s as usize]);
            snap.payloads.extend_from_slice(st.chain.payload(s, ps));
        }
        let bytes = snap.encode(ps);
        let usable = self.head.payload_size();
        let blocks = bytes.len().div_ceil(usable);
        let old = st.committed;
        let first = next_snapshot_first(old.first, old.blocks, blocks as u64);
        if blocks > 0 {
            let mut raw = AlignedBuf::zeroed(blocks * self.block_size);
            for (i, chunk) in bytes.chunks(usable).enumerate() {
                raw[i * self.block_size..i * self.block_size + chunk.len()].copy_from_slice(chunk);
            }
            self.head.write_blocks(first, &mut raw, IoClass::Model)?;
        }
        self.data.sync()?;
        self.head.sync()?;
        let header = Header {
            params: self.params,
            block_size: self.block_size as u32,
            len: st.len,
            keys_fingerprint: self.keys_fingerprint,
            pages,
            snapshot_bytes: bytes.len() as u64,
            snapshot_crc: u64::from(crc32c::crc32c(&bytes)),
            pair: self.pair,
            generation: old.generation + 1,
            snapshot_first: first,
        };
        self.write_header(&header, header.slot())?;
        self.head.sync()?;
        st.committed = Committed {
            generation: header.generation,
            first,
            blocks: blocks as u64,
        };
        Ok(header)
    }
}

impl DiskIndex<u64> for Film {
    fn len(&self) -> u64 {
        self.state.lock().len
    }

    fn keys_fingerprint(&self) -> u64 {
        self.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.params.payload_size
    }

    fn get(&self, key: &u64, payload: &mut [u8]) -> Result<bool> {
        let ps = self.params.payload_size;
        let out = &mut payload[..ps];
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Some(leaf) = Self::leaf_of(st, *key) else {
            return Ok(false);
        };
        let Some(pos) = st.leaves[leaf].find(*key) else {
            return Ok(false);
        };
        let loc = st.leaves[leaf].locs[pos];
        if loc & CACHED != 0 {
            let s = (loc & !CACHED) as u32;
            out.copy_from_slice(st.chain.payload(s, ps));
            if self.writable {
                st.chain.touch(s);
            }
            return Ok(true);
        }
        self.read_record(st, *key, loc, out, &mut AlignedBuf::default(), &mut None)?;
        if self.writable && self.params.max_cached() > 0 {
            // Hot now: back into memory; the record on disk is dead. With no room for even
            // one item it would be evicted at once, appending a copy of what is on disk
            // already, so it stays where it is.
            let s = st.chain.push_front(*key, out);
            st.leaves[leaf].locs[pos] = CACHED | u64::from(s);
            st.dead += 1;
            st.stats.swap_ins += 1;
            self.evict(st)?;
        }
        Ok(true)
    }

    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        let ps = self.params.payload_size;
        let st = self.state.lock();
        let Some(mut leaf) = Self::leaf_of(&st, *start) else {
            return Ok(0);
        };
        let mut pos = st.leaves[leaf].keys.partition_point(|k| k < start);
        let mut n = 0;
        let mut payload = vec![0u8; ps];
        let (mut page_buf, mut loaded) = (AlignedBuf::default(), None);
        while n < limit && leaf < st.leaves.len() {
            let l = &st.leaves[leaf];
            if pos >= l.keys.len() {
                leaf += 1;
                pos = 0;
                continue;
            }
            let (key, loc) = (l.keys[pos], l.locs[pos]);
            if loc & CACHED != 0 {
                payload.copy_from_slice(st.chain.payload((loc & !CACHED) as u32, ps));
            } else {
                self.read_record(&st, key, loc, &mut payload, &mut page_buf, &mut loaded)?;
            }
            keys.push(key);
            payloads.extend_from_slice(&payload);
            n += 1;
            pos += 1;
        }
        Ok(n)
    }

    fn memory_bytes(&self) -> usize {
        let st = self.state.lock();
        std::mem::size_of::<Film>()
            + st.leaves.iter().map(Leaf::bytes).sum::<usize>()
            + std::mem::size_of::<Leaf>() * (st.leaves.capacity() - st.leaves.len())
            + 8 * st.firsts.capacity()
            + st.chain.bytes()
            + st.open.len()
    }

    fn disk_bytes(&self) -> u64 {
        (self.head.len_blocks() + self.data.len_blocks()) * self.block_size as u64
    }

    fn storage_bytes(&self) -> StorageBytes {
        let allocated = self.disk_bytes();
        let record = (8 + self.params.payload_size) as u64;
        let free = (self.state.lock().dead * record).min(allocated);
        StorageBytes {
            allocated,
            used: allocated - free,
            free,
        }
    }

    fn describe(&self) -> String {
        let st = self.state.lock();
        format!(
            "FILM (eps {}, {} leaves, {} of {} items cached under a {}-byte limit, {} data \
             pages)",
            self.params.eps,
            st.leaves.len(),
            st.chain.len,
            st.len,
            self.params.memory_limit,
            st.open_page + u64::from(st.open_used > 0)
        )
    }
}

impl DiskMap<u64> for Film {
    fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        self.check_writable("insert")?;
        self.check_payload(payload)?;
        let ps = self.params.payload_size;
        let mut clock = PhaseClock::start();
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let found = Self::leaf_of(st, key).map(|leaf| (leaf, st.leaves[leaf].find(key)));
        st.timing.search_ns += clock.lap();
        let replaced = match found {
            Some((leaf, Some(pos))) => {
                let loc = st.leaves[leaf].locs[pos];
                if loc & CACHED != 0 {
                    let s = (loc & !CACHED) as u32;
                    st.chain.payload_mut(s, ps).copy_from_slice(payload);
                    st.chain.touch(s);
                } else {
                    let s = st.chain.push_front(key, payload);
                    st.leaves[leaf].locs[pos] = CACHED | u64::from(s);
                    st.dead += 1;
                }
                true
            }
            Some((leaf, None)) => {
                let s = st.chain.push_front(key, payload);
                let l = &mut st.leaves[leaf];
                if l.keys.len() == l.keys.capacity() {
                    // A refit comes within `eps` inserts and sizes the arrays exactly: room for
                    // those, not a doubling.
                    l.keys.reserve_exact(self.params.eps);
                    l.locs.reserve_exact(self.params.eps);
                }
                let pos = l.keys.partition_point(|&k| k < key);
                l.keys.insert(pos, key);
                l.locs.insert(pos, CACHED | u64::from(s));
                l.err += 1;
                if pos == 0 {
                    st.firsts[leaf] = key;
                }
                st.len += 1;
                st.timing.insert_ns += clock.lap();
                self.maybe_refit(st, leaf)?;
                st.timing.smo_ns += clock.lap();
                false
            }
            None => {
                let s = st.chain.push_front(key, payload);
                st.leaves = fit(&[key], &[CACHED | u64::from(s)], self.params.eps)?;
                st.firsts = vec![key];
                st.len = 1;
                false
            }
        };
        st.timing.insert_ns += clock.lap();
        self.evict(st)?;
        st.timing.maintenance_ns += clock.lap();
        Ok(replaced)
    }

    fn delete(&mut self, key: &u64) -> Result<bool> {
        self.check_writable("delete")?;
        let mut clock = PhaseClock::start();
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Some(leaf) = Self::leaf_of(st, *key) else {
            return Ok(false);
        };
        let Some(pos) = st.leaves[leaf].find(*key) else {
            st.timing.search_ns += clock.lap();
            return Ok(false);
        };
        st.timing.search_ns += clock.lap();
        let l = &mut st.leaves[leaf];
        let loc = l.locs.remove(pos);
        l.keys.remove(pos);
        l.err += 1;
        if loc & CACHED != 0 {
            st.chain.remove((loc & !CACHED) as u32);
        } else {
            st.dead += 1;
        }
        st.len -= 1;
        st.timing.insert_ns += clock.lap();
        if st.leaves[leaf].keys.is_empty() {
            st.leaves.remove(leaf);
            st.firsts.remove(leaf);
        } else {
            if pos == 0 {
                st.firsts[leaf] = st.leaves[leaf].keys[0];
            }
            self.maybe_refit(st, leaf)?;
        }
        st.timing.smo_ns += clock.lap();
        Ok(true)
    }

    fn flush(&mut self) -> Result<()> {
        self.check_writable("flush")?;
        let mut guard = self.state.lock();
        let mut clock = PhaseClock::start();
        self.flush_state(&mut guard)?;
        guard.timing.maintenance_ns += clock.lap();
        Ok(())
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.state.lock().timing
    }
}
