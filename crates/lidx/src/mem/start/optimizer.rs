//! START's optimizer: where multilevel nodes replace ART nodes (paper 004 §IV-A/B).
//!
//! What the paper says: the cost of a subtree is `C(n) = C_L(n)·#k(n) + Σ_{x ∈ child⁺(n,1)}
//! C(x)`; an `i`-level node `o` in place of `n` costs `C_L(o)·#k(n) + Σ_{x ∈ child⁺(n,i)}
//! C(x)`. A dynamic program computes bottom-up, per node, the optimal cost of its subtree and
//! the summed optimal costs of its descendants `1, 2, ...` levels down, picks the cheapest
//! option per node, and a second, top-down pass transforms the tree in bulk (§IV-B). A greedy
//! bottom-up replacement is the simpler alternative. A multilevel node must fit the space
//! budget of what it replaces (§III).
//!
//! What we do:
//! * **Levels are key bytes.** With path compression, "`i` levels down" is not "`i` key bytes
//!   on": we use windows of key bytes. For node `n` branching at byte `P`, the window of `s`
//!   bytes is `P..P+s`; its *frontier* is the set of subtrees that branch at or after `P+s`
//!   (and the leaves above that), which become the children of an `s`-byte node. Per node and
//!   `s = 1..=4` we keep the summed optimal cost of the frontier, its size (entries), and the
//!   bytes of the ART nodes inside the window; a parent combines its children's tables (a child
//!   whose own branching byte is inside the parent's window contributes its table for the rest
//!   of the window). This is the paper's cost array, indexed by key bytes.
//! * **Options** per node: its ART kind; a MultiNode4 for `s = 2..=4` when the frontier has at
//!   most 4 entries; a Node64K (`s = 2`); a Node16M (`s = 3`). All need the window inside the
//!   key.
//! * **Cache state** (§IV-A leaves open which nodes are hot): with uniform lookups over the
//!   keys (the paper's workload-agnostic model), a node is used in proportion to the keys
//!   below it, and the cache holds the most used bytes. A census of the ART before tuning
//!   fills [`CostModel::cache_bytes`] twice: with whole nodes in order of keys per byte (a
//!   node denser than the first one that does not fit in 1/16 of it, the share a private L2
//!   holds, is *cached*, since the cached costs are L1 costs), and with header lines in
//!   order of keys (a node with at least as many keys as the last header that fits is
//!   *header cached*); the rest is *uncached*. The cache is shared by all levels: giving each
//!   node `keys / total × cache_bytes` instead hands every level the whole cache, takes the
//!   header of every node of a 40 000-node level as cached in 32 MiB, and then sees no gain
//!   in removing that level.
//! * **Space budget** (§III: a multilevel node stays within the budgets of what it replaces, so
//!   START keeps ART's worst case of 52 bytes per key): a multilevel node over a subtree of `k`
//!   keys may take `budget_factor ×` the larger of the bytes of the ART nodes it replaces and
//!   what ART's worst case leaves to it, `52·k` minus the bytes of the ART nodes below its
//!   window. Rewired nodes are estimated at half-full shared pages (`16` bytes per entry) plus
//!   their page bookkeeping; flat ones at their whole array.
//! * **Flat Node64K/Node16M** (not in the paper, which measured "naïve" flat multilevel nodes
//!   as fast as a Node256, §V, but rejected them for space): where the budget allows the whole
//!   array (a dense window, above about 15% fill), the node is a flat huge-page array
//!   ([`crate::mem::RewiredArray::flat`]): no kernel mapping per page, no TLB miss per
//!   lookup. It is costed as the rewired kind (the same header and slot reads) without the
//!   page walk below, and preferred on a tie.
//! * **TLB misses** (not in the paper's model, whose CLFLUSH measurements keep the TLB warm):
//!   a node on 4 KiB pages is charged [`CostModel::page_walk`] more unless it is among the
//!   [`CostModel::tlb_entries`] most used nodes (the census again); a rewired node, whose
//!   header and slot sit on different pages, unless it is cached. A flat node on huge pages
//!   is never charged. On a tree far larger than the TLB's reach this is what a lookup pays
//!   per level on top of the cache miss (on this project's VM, 250-300 ns against a 100 ns
//!   miss, [`super::cost_model::measure_page_walk`]), so it favours flat nodes and fewer
//!   levels.
//! * **The arena is not in the model**: the TLB term above charges ART nodes off the TLB's
//!   reach a page walk even though `Start` then moves them onto huge pages (`arena.rs`),
//!   so with the arena the model overstates what the ART levels cost and leans towards
//!   multilevel nodes more than it needs to.
//! * **Kernel limits** (not in the paper): every hosted rewired page is a kernel mapping, and
//!   splitting the array's zero-page mapping around it costs up to two more; Linux allows
//!   `vm.max_map_count` (65 530 by default) per process, and each rewired node holds a memfd.
//!   The planner grants rewired nodes, in the order it chooses them, at most half of
//!   `max_map_count` mappings (3 per non-empty page) and 1 000 nodes; past that, only
//!   MultiNode4 and ART kinds are considered. Without this, the allocator itself runs out of
//!   mappings.
//! * **Greedy** ([`Strategy::Greedy`]): bottom-up, each node takes its cheapest option given
//!   the choices below it, and a window may not swallow a node already turned multilevel.

use std::collections::HashMap;

use super::cost_model::{CacheState, CostModel};
use crate::error::Result;
use crate::mem::art::multilevel::{demote_all, promote};
use crate::mem::art::node::{NodeKind, NodeRef, View, ViewMut};
use crate::mem::art::ArtKey;

/// How the optimizer places multilevel nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The dynamic program of §IV-B: optimal under the cost model.
    #[default]
    DynamicProgramming,
    /// Greedy bottom-up replacement (§IV-B's first approximation).
    Greedy,
}

/// Widest window considered (a MultiNode4 spans up to 4 key bytes).
const MAX_SPAN: usize = 4;

/// Bytes of a rewired node's bookkeeping per virtual page (counts and physical page ids).
const PAGE_META_BYTES: usize = 6;

/// ART's worst-case space per key (Leis et al. §IV-D; paper 004 §III): the budget a subtree's
/// keys give the nodes above them.
const ART_WORST_BYTES_PER_KEY: u64 = 52;

/// What the bottom-up pass knows about one subtree.
struct Sub {
    keys: u64,
    /// Optimal (or greedy) cost of the subtree.
    opt: f64,
    /// Per window `s` (index `s`, `1..=MAX_SPAN`): summed cost of the frontier.
    front: [f64; MAX_SPAN + 1],
    /// Per window: frontier entries.
    entries: [u64; MAX_SPAN + 1],
    /// Per window: bytes of the ART nodes inside it (this node included).
    inner: [u64; MAX_SPAN + 1],
    /// Bytes of every ART node of the subtree.
    bytes: u64,
    /// Per window: a node inside it (below this one) was made multilevel (greedy only).
    blocked: [bool; MAX_SPAN + 1],
    /// This node was made multilevel.
    chosen: bool,
}

/// A decision: the node at this address becomes `kind` over `span` bytes.
#[derive(Debug, Clone, Copy)]
struct Choice {
    kind: NodeKind,
    span: usize,
    replaced: usize,
    /// A flat huge-page array instead of rewired pages (Node64K/Node16M only).
    flat: bool,
}

/// What a tuning run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TuneReport {
    /// Model cost per lookup of the ART tree (ns).
    pub art_cost_ns: f64,
    /// Model cost per lookup after tuning (ns).
    pub tuned_cost_ns: f64,
    /// Multilevel nodes created, by kind: MultiNode4, Node64K, Node16M.
    pub created: [usize; 3],
    /// Resident bytes of the huge-page arena the tree was moved into (`arena.rs`); 0 if it
    /// was not (disabled, or the kernel refused).
    pub arena_bytes: usize,
}

/// The share of [`CostModel::cache_bytes`] (the last-level cache) whose nodes cost their
/// *cached* time: 1/16. The measured cached costs are L1 costs (§V: "the node resides
/// completely in L1 cache"); a node that is merely in the last-level cache pays about a
/// miss's worth more (paper §IV-A extrapolates with the cache latencies), so only the
/// hottest nodes, those a private L2 of 1/16 of the LLC would hold, are taken as cached.
const CACHED_SHARE: usize = 16;

/// Where the cache and the TLB end, from the census of the ART's nodes (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hotness {
    /// A node with more keys per byte than this is cached.
    cached_density: f64,
    /// A node with at least this many keys has its header cached.
    header_keys: u64,
    /// A node on 4 KiB pages with at least this many keys hits the TLB.
    tlb_keys: u64,
}

impl Hotness {
    /// The thresholds for `nodes` (keys below, bytes) and `model`: 0 where everything fits.
    fn of(mut nodes: Vec<(u64, u64)>, model: &CostModel) -> Self {
        let cache = (model.cache_bytes / CACHED_SHARE) as u64;
        nodes.sort_unstable_by(|a, b| (b.0 * a.1).cmp(&(a.0 * b.1)));
        let mut used = 0u64;
        let mut cached_density = 0.0;
        for &(keys, bytes) in &nodes {
            used += bytes;
            if used > cache {
                cached_density = keys as f64 / bytes.max(1) as f64;
                break;
            }
        }
        nodes.sort_unstable_by_key(|&(keys, _)| std::cmp::Reverse(keys));
        // More keys than the first node past the cache (or the TLB); 0 where all fit.
        let bar = |n: usize| nodes.get(n).map_or(0, |&(keys, _)| keys + 1);
        Hotness {
            cached_density,
            header_keys: bar(model.cache_bytes / 64),
            tlb_keys: bar(model.tlb_entries),
        }
    }
}

/// Keys below and bytes of every inner node of the subtree of `node` (ART nodes only, before
/// tuning); returns the subtree's key count.
fn census<K, V>(node: &NodeRef<K, V>, out: &mut Vec<(u64, u64)>) -> u64 {
    if node.header().is_none() {
        return u64::from(!node.is_empty());
    }
    let keys = node.children().map(|(_, c)| census(c, out)).sum();
    out.push((keys, node.node_bytes() as u64));
    keys
}

struct Planner<'m> {
    model: &'m CostModel,
    hot: Hotness,
    total: f64,
    key_len: usize,
    greedy: bool,
    budget_factor: f64,
    /// Flat Node64K/Node16M allowed.
    flat: bool,
    /// Kernel mappings still granted to rewired nodes.
    maps_left: usize,
    /// Rewired nodes still granted.
    rewired_left: usize,
    choices: HashMap<usize, Choice>,
}

/// Rewired nodes one tuning may create (each holds a memfd).
const MAX_REWIRED_NODES: usize = 1000;

/// Half of the kernel's per-process mapping limit.
fn mapping_budget() -> usize {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(65_530)
        / 2
}

/// Kernel mappings a rewired node of `span` bytes with `entries` children may need.
fn rewired_maps(span: usize, entries: usize) -> usize {
    3 * entries.min((1usize << (8 * span)) / 512) + 2
}

impl Planner<'_> {
    fn state(&self, keys: u64, bytes: usize) -> CacheState {
        if keys as f64 > self.hot.cached_density * bytes as f64 {
            CacheState::Cached
        } else if keys >= self.hot.header_keys {
            CacheState::HeaderCached
        } else {
            CacheState::Uncached
        }
    }

    /// Cost of a node of `kind` reached by `keys` keys' lookups, `bytes` large, `flat` for a
    /// flat huge-page array: the measured cost plus a page walk where the node is read from a
    /// 4 KiB page the TLB misses (see the module docs).
    fn cost(&self, kind: NodeKind, keys: u64, bytes: usize, flat: bool) -> f64 {
        let state = self.state(keys, bytes);
        let rewired = matches!(kind, NodeKind::Node64K | NodeKind::Node16M);
        let walk = match state {
            _ if flat => false,
            CacheState::Cached => false,
            _ if rewired => true,
            _ => keys < self.hot.tlb_keys,
        };
        let walk = if walk { self.model.page_walk } else { 0.0 };
        (self.model.of(kind).get(state) + walk) * keys as f64
    }

    /// The bottom-up pass over the subtree of `node` (`depth` key bytes deep); `None` for a
    /// leaf.
    fn plan<K, V>(&mut self, node: &NodeRef<K, V>, depth: usize) -> Option<Sub> {
        let h = node.header()?;
        let kind = h.kind();
        let branch = depth + h.prefix_len();
        let own = node.node_bytes() as u64;
        let mut sub = Sub {
            keys: 0,
            opt: 0.0,
            front: [0.0; MAX_SPAN + 1],
            entries: [0; MAX_SPAN + 1],
            inner: [own; MAX_SPAN + 1],
            bytes: own,
            blocked: [false; MAX_SPAN + 1],
            chosen: false,
        };
        for (_, child) in node.children() {
            let child_depth = branch + 1;
            match self.plan(child, child_depth) {
                None => {
                    sub.keys += 1;
                    for s in 1..=MAX_SPAN {
                        sub.entries[s] += 1;
                    }
                }
                Some(c) => {
                    sub.keys += c.keys;
                    sub.bytes += c.bytes;
                    let c_branch = child_depth + child.header().map_or(0, |h| h.prefix_len());
                    for s in 1..=MAX_SPAN {
                        if c_branch >= branch + s {
                            sub.front[s] += c.opt;
                            sub.entries[s] += 1;
                        } else {
                            let rest = branch + s - c_branch;
                            sub.front[s] += c.front[rest];
                            sub.entries[s] += c.entries[rest];
                            sub.inner[s] += c.inner[rest];
                            sub.blocked[s] |= c.blocked[rest] || c.chosen;
                        }
                    }
                }
            }
        }
        let regular = self.cost(kind, sub.keys, own as usize, false) + sub.front[1];
        let mut best = (regular, None);
        for s in 2..=MAX_SPAN {
            if branch + s > self.key_len || (self.greedy && sub.blocked[s]) {
                continue;
            }
            let entries = sub.entries[s] as usize;
            let below = sub.bytes - sub.inner[s];
            let allowed =
                sub.inner[s].max((ART_WORST_BYTES_PER_KEY * sub.keys).saturating_sub(below)) as f64
                    * self.budget_factor;
            let mut options = Vec::with_capacity(3);
            if entries <= 4 {
                options.push((NodeKind::MultiNode4, 64, false));
            }
            if s == 2 || s == 3 {
                let kind = if s == 2 {
                    NodeKind::Node64K
                } else {
                    NodeKind::Node16M
                };
                let slots = 1usize << (8 * s);
                let pages = slots / 512;
                if self.flat {
                    options.push((kind, 256 + slots * 8 + pages * 2 + pages / 8, true));
                }
                if self.rewired_left > 0 && rewired_maps(s, entries) <= self.maps_left {
                    options.push((kind, 256 + entries * 16 + pages * PAGE_META_BYTES, false));
                }
            }
            for (kind, bytes, flat) in options {
                if bytes as f64 > allowed {
                    continue;
                }
                let cost = self.cost(kind, sub.keys, bytes, flat) + sub.front[s];
                if cost < best.0 {
                    best = (
                        cost,
                        Some(Choice {
                            kind,
                            span: s,
                            replaced: sub.inner[s] as usize,
                            flat,
                        }),
                    );
                }
            }
        }
        sub.opt = best.0;
        if let Some(choice) = best.1 {
            if choice.kind != NodeKind::MultiNode4 && !choice.flat {
                self.rewired_left -= 1;
                self.maps_left -= rewired_maps(choice.span, sub.entries[choice.span] as usize);
            }
            sub.chosen = true;
            let addr = h as *const _ as usize;
            self.choices.insert(addr, choice);
        }
        Some(sub)
    }

    /// The top-down pass: applies the choices that survive (a node absorbed into a window
    /// above it is gone, so its own choice is never reached).
    fn apply<K: ArtKey, V>(
        &self,
        slot: &mut NodeRef<K, V>,
        depth: usize,
        report: &mut TuneReport,
    ) -> Result<()> {
        let Some(h) = slot.header() else {
            return Ok(());
        };
        let addr = h as *const _ as usize;
        if let Some(c) = self.choices.get(&addr) {
            promote(slot, depth, c.kind, c.span, c.replaced, c.flat)?;
            report.created[match c.kind {
                NodeKind::MultiNode4 => 0,
                NodeKind::Node64K => 1,
                _ => 2,
            }] += 1;
        }
        let branch = depth + slot.header().expect("an inner node").prefix_len() + slot.span();
        let frags: Vec<u32> = slot.children().map(|(f, _)| f).collect();
        for f in frags {
            if let ViewMut::Rw(rw) = slot.view_mut() {
                rw.with_child(f, |child| self.apply(child, branch, report))
                    .expect("listed child")?;
            } else {
                self.apply(
                    slot.find_child_mut(f).expect("listed child"),
                    branch,
                    report,
                )?;
            }
        }
        Ok(())
    }
}

/// Re-tunes the tree at `root` holding `len` keys of `key_len` bytes: turns every multilevel
/// node back into ART nodes, plans with `model` and `strategy`, and transforms in bulk. A
/// multilevel node may take `budget_factor` times its space budget (module docs); `flat`
/// allows flat Node64K/Node16M.
pub(super) fn tune<K: ArtKey, V>(
    root: &mut NodeRef<K, V>,
    len: usize,
    key_len: usize,
    model: &CostModel,
    strategy: Strategy,
    budget_factor: f64,
    flat: bool,
) -> Result<TuneReport> {
    demote_all(root);
    let mut nodes = Vec::new();
    census(root, &mut nodes);
    let mut planner = Planner {
        model,
        hot: Hotness::of(nodes, model),
        total: len.max(1) as f64,
        key_len,
        greedy: strategy == Strategy::Greedy,
        budget_factor,
        flat,
        maps_left: mapping_budget(),
        rewired_left: MAX_REWIRED_NODES,
        choices: HashMap::new(),
    };
    let Some(sub) = planner.plan(root, 0) else {
        return Ok(TuneReport::default());
    };
    let mut report = TuneReport {
        tuned_cost_ns: sub.opt / planner.total,
        ..TuneReport::default()
    };
    report.art_cost_ns = regular_cost(&planner, root, 0).0 / planner.total;
    planner.apply(root, 0, &mut report)?;
    Ok(report)
}

/// The model cost of the subtree as it is (ART nodes only), and its key count.
fn regular_cost<K, V>(p: &Planner<'_>, node: &NodeRef<K, V>, depth: usize) -> (f64, u64) {
    let Some(h) = node.header() else {
        return (0.0, u64::from(!node.is_empty()));
    };
    let branch = depth + h.prefix_len() + 1;
    let (below, keys) = node
        .children()
        .map(|(_, c)| regular_cost(p, c, branch))
        .fold((0.0, 0), |(a, k), (c, n)| (a + c, k + n));
    let flat = matches!(node.view(), View::Rw(n) if n.array().is_flat());
    (
        p.cost(h.kind(), keys, node.node_bytes(), flat) + below,
        keys,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planner(model: &CostModel, hot: Hotness) -> Planner<'_> {
        Planner {
            model,
            hot,
            total: 1e6,
            key_len: 8,
            greedy: false,
            budget_factor: 1.0,
            flat: true,
            maps_left: 0,
            rewired_left: 0,
            choices: HashMap::new(),
        }
    }

    #[test]
    fn the_census_shares_one_cache_and_one_tlb_among_all_levels() {
        let model = CostModel {
            cache_bytes: 64 * 100,
            tlb_entries: 10,
            ..CostModel::default()
        };
        // A root of 1000 keys (1 KiB), 10 nodes of 100 keys, 100 nodes of 10 keys (64 B).
        let mut nodes = vec![(1000, 1024)];
        nodes.extend([(100, 64); 10]);
        nodes.extend([(10, 64); 100]);
        let hot = Hotness::of(nodes, &model);
        // Whole nodes by density into 1/16 of the cache (400 bytes): 6 of the 10 nodes of
        // 100 keys fit, the 7th sets the bar.
        assert_eq!(hot.cached_density, 100.0 / 64.0);
        // 100 header lines: the root, the 10, and 89 of the 100: the bar is 11 keys.
        assert_eq!(hot.header_keys, 11);
        // 10 TLB entries: the root and 9 of the 10.
        assert_eq!(hot.tlb_keys, 101);
        let p = planner(&model, hot);
        assert_eq!(p.state(101, 64), CacheState::Cached);
        assert_eq!(p.state(1000, 1024), CacheState::HeaderCached);
        assert_eq!(p.state(10, 64), CacheState::Uncached);
        // A 2 MiB node of 100 keys is not cached, its header is.
        assert_eq!(p.state(100, 2 << 20), CacheState::HeaderCached);
        // Everything fits: everything is cached and hits the TLB.
        let all = Hotness::of(vec![(5, 64), (1, 64)], &CostModel::default());
        assert_eq!(
            (all.cached_density, all.header_keys, all.tlb_keys),
            (0.0, 0, 0)
        );
    }

    #[test]
    fn page_walks_are_charged_off_huge_pages_and_past_the_tlb() {
        let model = CostModel {
            page_walk: 40.0,
            ..CostModel::default()
        };
        let plain = |kind, state| model.of(kind).get(state);
        let hot = Hotness {
            cached_density: 1.0,
            header_keys: 100,
            tlb_keys: 1000,
        };
        let p = planner(&model, hot);
        let big = 1 << 30;
        // Uncached: every kind pays the walk except a flat array.
        assert_eq!(p.state(1, big), CacheState::Uncached);
        assert_eq!(
            p.cost(NodeKind::Node4, 1, big, false),
            plain(NodeKind::Node4, CacheState::Uncached) + 40.0
        );
        assert_eq!(
            p.cost(NodeKind::Node16M, 1, big, true),
            plain(NodeKind::Node16M, CacheState::Uncached)
        );
        // Header cached, past the TLB: an ART node and a rewired node pay it.
        assert_eq!(p.state(500, big), CacheState::HeaderCached);
        assert_eq!(
            p.cost(NodeKind::Node256, 500, big, false),
            (plain(NodeKind::Node256, CacheState::HeaderCached) + 40.0) * 500.0
        );
        // Header cached, within the TLB: only a rewired node, whose slot is on another page.
        assert_eq!(
            p.cost(NodeKind::Node256, 5000, big, false),
            plain(NodeKind::Node256, CacheState::HeaderCached) * 5000.0
        );
        assert_eq!(
            p.cost(NodeKind::Node64K, 5000, big, false),
            (plain(NodeKind::Node64K, CacheState::HeaderCached) + 40.0) * 5000.0
        );
        // Cached: nobody.
        assert_eq!(
            p.cost(NodeKind::Node64K, 1000, 64, false),
            plain(NodeKind::Node64K, CacheState::Cached) * 1000.0
        );
    }
}
