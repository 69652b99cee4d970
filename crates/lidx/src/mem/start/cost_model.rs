//! START's measured cost model (paper 004 §IV-A, Table I of §V).
//!
//! What the paper says: the cost `C_L(n)` of traversing a node kind is measured on the target
//! machine: the time to traverse two Node4 with the node in between, minus the time to traverse
//! the two Node4 alone (`C_L(n) = C'_L(n) - C_L(∅)`), the median of many runs separated by
//! LFENCE. It is measured with the node in L1 ("cached"), with only its first cache line in
//! L1 ("header cached") and flushed with CLFLUSH ("uncached").
//!
//! What we do: [`calibrate`] builds, per kind, a real tree `Node4 -> node -> Node4 -> leaf`
//! (the multilevel kinds made by the same `promote` the optimizer uses) and times
//! `OrderedMap::get` with the tools of `crate::mem::art::cache_control`; the baseline is the tree
//! `Node4 -> Node4 -> leaf`. "Uncached" flushes the node (for a rewired node: its header and
//! the slot read), "header cached" then reads its first line back. Costs are clamped at 0 ns
//! (a median below the baseline is noise). [`CostModel::default`] is Table I of the paper, so
//! tests and a first run need no calibration; [`CostModel::to_text`]/[`CostModel::parse`] save
//! and load a measured table (one line per kind, plus the cache size the optimizer assumes).

use std::fmt;

use crate::error::{Error, Result};
use crate::map::OrderedMap;
use crate::mem::art::cache_control::{flush_raw, median_ns};
use crate::mem::art::multilevel::promote;
use crate::mem::art::node::{NodeKind, View};
use crate::mem::art::Art;

/// Every node kind the model covers, in table order.
pub(crate) const KINDS: [NodeKind; 7] = [
    NodeKind::Node4,
    NodeKind::Node16,
    NodeKind::Node48,
    NodeKind::Node256,
    NodeKind::Node64K,
    NodeKind::Node16M,
    NodeKind::MultiNode4,
];

/// Where a node is when a lookup reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheState {
    /// All of it in L1.
    Cached,
    /// Its first cache line in L1.
    HeaderCached,
    /// Nothing of it in cache.
    Uncached,
}

/// Traversal costs of one node kind, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeCost {
    /// Node in L1.
    pub cached: f64,
    /// First cache line in L1.
    pub header_cached: f64,
    /// Node flushed.
    pub uncached: f64,
}

impl NodeCost {
    /// The cost in `state`.
    pub fn get(&self, state: CacheState) -> f64 {
        match state {
            CacheState::Cached => self.cached,
            CacheState::HeaderCached => self.header_cached,
            CacheState::Uncached => self.uncached,
        }
    }
}

/// Per-kind traversal costs and the cache size the optimizer assumes (Table I).
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// Costs, in the order of `KINDS`.
    pub costs: [NodeCost; 7],
    /// Bytes of cache the hot part of the tree shares (the last-level cache). The optimizer
    /// treats a node as cached when its share of lookups is at least its share of this cache.
    pub cache_bytes: usize,
    /// ns of a TLB miss (a page walk), which the measured costs leave out: CLFLUSH evicts a
    /// node from the caches, not its page from the TLB. The optimizer charges it to a node
    /// read from 4 KiB pages out of cache: an uncached ART node or MultiNode4, and a rewired
    /// node unless cached (its header and the slot read sit on different pages). A flat
    /// Node64K/Node16M on huge pages is not charged (a Node16M spans 64 of them). Higher
    /// favours flat nodes and fewer, wider levels. [`measure_page_walk`] measures it (`lidx
    /// start calibrate` saves it); a model file sets it (`page_walk N`).
    pub page_walk: f64,
    /// 4 KiB pages the data TLB holds (its reach is this many pages). The optimizer takes the
    /// pages of the this-many most used nodes as TLB hits and charges [`Self::page_walk`] to
    /// the others. A model file sets it (`tlb_entries N`).
    pub tlb_entries: usize,
}

impl Default for CostModel {
    /// Table I of the paper (Intel i9-7900X), an 8 MiB cache, a 25 ns page walk (an
    /// estimate for a walk whose page-table entries are in cache; the paper has no figure)
    /// and a 1536-entry TLB (the i9-7900X's second-level data TLB).
    fn default() -> Self {
        let c = |cached, header_cached, uncached| NodeCost {
            cached,
            header_cached,
            uncached,
        };
        CostModel {
            costs: [
                c(7.0, 7.0, 68.0),
                c(5.0, 77.0, 162.0),
                c(2.0, 165.0, 168.0),
                c(2.0, 88.0, 92.0),
                c(6.0, 87.0, 162.0),
                c(6.0, 88.0, 165.0),
                c(6.0, 6.0, 68.0),
            ],
            cache_bytes: 8 << 20,
            page_walk: 25.0,
            tlb_entries: 1536,
        }
    }
}

fn kind_index(kind: NodeKind) -> usize {
    KINDS
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is listed")
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Node4 => "Node4",
        NodeKind::Node16 => "Node16",
        NodeKind::Node48 => "Node48",
        NodeKind::Node256 => "Node256",
        NodeKind::Node64K => "Rewired64K",
        NodeKind::Node16M => "Rewired16M",
        NodeKind::MultiNode4 => "MultiNode4",
    }
}

impl CostModel {
    /// Table I's rows: each kind's name, the ART levels it spans (`1`, `2`, `3`, `2-4`) and
    /// its costs, in the order of `KINDS`.
    pub fn rows(&self) -> impl Iterator<Item = (&'static str, &'static str, NodeCost)> + '_ {
        KINDS.iter().zip(&self.costs).map(|(&kind, &c)| {
            let levels = match kind {
                NodeKind::MultiNode4 => "2-4",
                NodeKind::Node64K => "2",
                NodeKind::Node16M => "3",
                _ => "1",
            };
            (kind_name(kind), levels, c)
        })
    }

    /// The costs of `kind`.
    pub fn of(&self, kind: NodeKind) -> NodeCost {
        self.costs[kind_index(kind)]
    }

    /// The model as text: `cache_bytes N`, `page_walk NS`, `tlb_entries N`, then `kind cached
    /// header_cached uncached` per line.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "cache_bytes {}\npage_walk {:.2}\ntlb_entries {}\n",
            self.cache_bytes, self.page_walk, self.tlb_entries
        );
        for (kind, c) in KINDS.iter().zip(&self.costs) {
            s += &format!(
                "{} {:.2} {:.2} {:.2}\n",
                kind_name(*kind),
                c.cached,
                c.header_cached,
                c.uncached
            );
        }
        s
    }

    /// Reads what [`Self::to_text`] wrote; kinds left out keep their default costs.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |line: &str| {
            Error::InvalidParameter {
            name: "cost model",
            value: line.to_string(),
            expected: "`cache_bytes N`, `page_walk NS`, `tlb_entries N` or `<kind> <cached> <header_cached> <uncached>` (ns)",
        }
        };
        let mut model = CostModel::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields[0] == "cache_bytes" && fields.len() == 2 {
                model.cache_bytes = fields[1].parse().map_err(|_| bad(line))?;
                continue;
            }
            if fields[0] == "tlb_entries" && fields.len() == 2 {
                model.tlb_entries = fields[1].parse().map_err(|_| bad(line))?;
                continue;
            }
            if fields[0] == "page_walk" && fields.len() == 2 {
                model.page_walk = fields[1]
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(line))?;
                continue;
            }
            let kind = KINDS
                .iter()
                .find(|&&k| kind_name(k) == fields[0])
                .ok_or_else(|| bad(line))?;
            let nums: Vec<f64> = fields[1..]
                .iter()
                .map(|f| f.parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| bad(line))?;
            if nums.len() != 3 || nums.iter().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(bad(line));
            }
            model.costs[kind_index(*kind)] = NodeCost {
                cached: nums[0],
                header_cached: nums[1],
                uncached: nums[2],
            };
        }
        Ok(model)
    }
}

impl fmt::Display for CostModel {
    /// Table I: ns per lookup per kind and cache state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<12} {:>6} {:>8} {:>14} {:>9}",
            "[ns/lookup]", "Levels", "Cached", "Header Cached", "Uncached"
        )?;
        for (name, levels, c) in self.rows() {
            writeln!(
                f,
                "{name:<12} {levels:>6} {:>8.1} {:>14.1} {:>9.1}",
                c.cached, c.header_cached, c.uncached
            )?;
        }
        write!(
            f,
            "cache assumed by the optimizer: {} bytes; TLB: {} pages, a miss charged {:.1} ns",
            self.cache_bytes, self.tlb_entries, self.page_walk
        )
    }
}

/// A `u64` key from its first bytes (the rest 0).
fn key(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_be_bytes(b)
}

/// The measurement tree for `kind` (`None`: the baseline) and the key looked up through it.
fn probe_tree(kind: Option<NodeKind>) -> Result<(Art<u64, u64>, u64)> {
    // Byte 0 picks the root Node4's child (0 or 1); the node under test branches at byte 1
    // (over `span` bytes); below it, a Node4 branches at the next byte.
    let (span, fragments): (usize, Vec<Vec<u8>>) = match kind {
        None => (1, vec![vec![0]]),
        Some(NodeKind::MultiNode4) => (2, (0..4u8).map(|j| vec![j, j]).collect()),
        Some(NodeKind::Node64K) => (
            2,
            (0..4096u32)
                .map(|i| vec![(i >> 4) as u8, ((i * 61) % 256) as u8])
                .collect(),
        ),
        Some(NodeKind::Node16M) => (
            3,
            (0..4096u32)
                .map(|i| {
                    vec![
                        (i >> 4) as u8,
                        ((i * 61) % 256) as u8,
                        ((i * 97) % 256) as u8,
                    ]
                })
                .collect(),
        ),
        Some(k) => (1, (0..k.capacity()).map(|j| vec![j as u8]).collect()),
    };
    let mut keys = vec![key(&[1])];
    for frag in &fragments {
        for last in 0..2u8 {
            let mut b = vec![0u8];
            b.extend_from_slice(frag);
            b.push(last);
            keys.push(key(&b));
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let mut art = Art::bulk_load(keys.iter().map(|&k| (k, k)))?;
    if let Some(k) = kind.filter(|k| k.is_multilevel()) {
        let slot = art
            .root_mut()
            .find_child_mut(0)
            .expect("the node under test");
        promote(slot, 1, k, span, 0, false)?;
    }
    let mid = &fragments[fragments.len() / 2];
    let mut b = vec![0u8];
    b.extend_from_slice(mid);
    b.push(1);
    Ok((art, key(&b)))
}

/// Flushes the node under test (the root's child 0); `keep_header` reads its first line back.
fn flush_node(art: &Art<u64, u64>, key: u64, keep_header: bool) {
    let node = art.root().find_child(0).expect("the node under test");
    let header = node.header().expect("an inner node") as *const _ as *const u8;
    let len = match node.view() {
        View::Rw(rw) => {
            let span = rw.span();
            let frag = (key >> (8 * (7 - span))) as u32 & ((1u32 << (8 * span)) - 1);
            rw.array().flush_slot(frag as usize);
            node.node_bytes().min(256)
        }
        _ => node.node_bytes(),
    };
    // SAFETY: `header` points to the node, which spans at least `len` bytes (for a rewired
    // node, its struct, at most 256 bytes, is flushed; its slot was flushed above).
    unsafe { flush_raw(header, len) };
    if keep_header {
        // SAFETY: the first byte of a live node.
        std::hint::black_box(unsafe { header.read_volatile() });
    }
}

/// Bytes of each buffer [`measure_page_walk`] reads: far beyond any TLB's reach on 4 KiB
/// pages, within it on 2 MiB pages.
const WALK_BUFFER_BYTES: usize = 256 << 20;

/// ns per dependent random 8-byte read from a fresh `WALK_BUFFER_BYTES` mapping, advised
/// `advice` (`MADV_HUGEPAGE` or `MADV_NOHUGEPAGE`): the median of `rounds` rounds of `reads`
/// reads each.
#[cfg(target_os = "linux")]
fn random_read_ns(advice: libc::c_int, reads: usize, rounds: usize) -> Result<f64> {
    let words = WALK_BUFFER_BYTES / 8;
    // SAFETY: a private anonymous mapping of fresh pages; checked for failure below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            WALK_BUFFER_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(Error::io(
            "anonymous memory",
            "map a buffer to time page walks",
            &std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: the mapping above, `WALK_BUFFER_BYTES` long; the advice only changes how the
    // kernel backs it (ignored where unsupported).
    unsafe { libc::madvise(ptr, WALK_BUFFER_BYTES, advice) };
    // SAFETY: the mapping is readable and writable, zero-filled, `words` u64 long, and only
    // used through this slice until it is unmapped below.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u64>(), words) };
    // A random cyclic permutation of the words, so every read depends on the one before.
    let mut next: u64 = 0x9E37_79B9_7F4A_7C15;
    for (i, w) in buf.iter_mut().enumerate() {
        next = next
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *w = (i as u64) ^ (next >> 20);
    }
    let result = median_ns(
        rounds,
        || (),
        |()| {
            let mut x = 1u64;
            for _ in 0..reads {
                x = buf[(x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize % words] ^ x;
            }
            x
        },
    );
    // SAFETY: unmaps exactly the mapping made above; `buf` is not used after this.
    unsafe { libc::munmap(ptr, WALK_BUFFER_BYTES) };
    Ok(result? / reads as f64)
}

/// The cost of a TLB miss on this machine: the time of a dependent random read from a
/// 256 MiB buffer on 4 KiB pages minus the same on transparent huge pages (whose TLB entries
/// cover it), at least 0 ns. On a virtual machine a walk goes through two page tables and
/// this is often 10x the 25 ns of [`CostModel::default`]. Where huge pages are unavailable the
/// two reads cost the same and this is about 0: the optimizer then sees no walk anywhere.
/// Cost: about a second and 512 MiB of memory for the duration.
#[cfg(target_os = "linux")]
pub fn measure_page_walk() -> Result<f64> {
    const READS: usize = 200_000;
    const ROUNDS: usize = 5;
    let small = random_read_ns(libc::MADV_NOHUGEPAGE, READS, ROUNDS)?;
    let huge = random_read_ns(libc::MADV_HUGEPAGE, READS, ROUNDS)?;
    Ok((small - huge).max(0.0))
}

/// Measures every kind on this machine (`runs` timed lookups per kind and state, at least 1)
/// and returns the model with `cache_bytes` for the optimizer and the default page walk
/// (`lidx start calibrate` sets it from [`measure_page_walk`]).
pub fn calibrate(runs: usize, cache_bytes: usize) -> Result<CostModel> {
    let time = |kind: Option<NodeKind>, state: CacheState| -> Result<f64> {
        let (art, k) = probe_tree(kind)?;
        median_ns(
            runs,
            || match state {
                CacheState::Cached => {
                    std::hint::black_box(art.get(&k));
                }
                CacheState::HeaderCached => flush_node(&art, k, true),
                CacheState::Uncached => flush_node(&art, k, false),
            },
            |()| art.get(&k).copied(),
        )
    };
    let base = time(None, CacheState::Cached)?;
    let mut model = CostModel {
        cache_bytes,
        ..CostModel::default()
    };

    for (i, &kind) in KINDS.iter().enumerate() {
        let m = |s| time(Some(kind), s).map(|t| (t - base).max(0.0));
        model.costs[i] = NodeCost {
            cached: m(CacheState::Cached)?,
            header_cached: m(CacheState::HeaderCached)?,
            uncached: m(CacheState::Uncached)?,
        };
    }
    Ok(model)
}

/// The last-level cache size Linux reports for CPU 0, if any.
pub fn llc_bytes() -> Option<usize> {
    (0..8)
        .filter_map(|i| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let size = std::fs::read_to_string(format!("{dir}/size")).ok()?;
            let size = size.trim();
            let (num, mul) = match size.strip_suffix('K') {
                Some(n) => (n, 1024),
                None => match size.strip_suffix('M') {
                    Some(n) => (n, 1 << 20),
                    None => (size, 1),
                },
            };
            num.parse::<usize>().ok().map(|n| n * mul)
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_rejects_garbage() {
        let mut m = CostModel::default();
        m.costs[2].uncached = 123.5;
        m.cache_bytes = 12345;
        m.page_walk = 31.5;
        m.tlb_entries = 2048;
        assert_eq!(CostModel::parse(&m.to_text()).unwrap(), m);
        assert!(CostModel::parse("page_walk -1").is_err());
        assert!(CostModel::parse("tlb_entries x").is_err());
        assert!(CostModel::parse("Node4 1 2").is_err());
        assert!(CostModel::parse("Node5 1 2 3").is_err());
        assert!(CostModel::parse("Node4 1 -2 3").is_err());
        assert!(m.to_string().contains("Rewired16M"));
    }

    #[test]
    fn probe_trees_have_the_node_under_test() {
        for kind in KINDS {
            let (art, k) = probe_tree(Some(kind)).unwrap();
            assert_eq!(art.root().find_child(0).unwrap().kind(), Some(kind));
            assert_eq!(art.get(&k), Some(&k));
        }
        let (art, k) = probe_tree(None).unwrap();
        assert_eq!(art.get(&k), Some(&k));
    }

    #[test]
    fn calibration_gives_finite_costs() {
        let m = calibrate(3, 1 << 20).unwrap();
        assert!(m
            .costs
            .iter()
            .all(|c| c.cached.is_finite() && c.uncached >= 0.0));
    }
}
