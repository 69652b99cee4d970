//! [`Start`]: the self-tuning adaptive radix tree (paper 004), an [`Art`] whose subtrees the
//! optimizer turns into multilevel nodes.
//!
//! What the paper says (§I, §IV): START takes an existing ART, determines the most suitable
//! subtrees with a cost model and transforms them; tuning runs offline and "only runs when
//! more than 10% of the data was changed"; inserts keep working and multilevel nodes fall back
//! to regular ART nodes when too many updates occur.
//!
//! What we do: `Start` is an [`Art`] (the same nodes, walks and map operations, which know the
//! multilevel kinds) plus its tuning parameters. [`Start::bulk_load`] builds the ART and tunes
//! it; [`Start::retune`] demotes every multilevel node and tunes again (callers decide when,
//! e.g. [`Start::changed_since_tune`] past 10% of the keys). Between tunings, inserts go into
//! multilevel nodes; a full MultiNode4 and a degraded rewired node fall back to ART nodes (see
//! `nodes.rs`).
//!
//! After each tuning the tree is also *placed* (not in the paper, see `arena.rs`): its leaves
//! and ART nodes are copied in key order into a huge-page [`Arena`] the `Start` owns, so a
//! lookup's reads below the multilevel nodes miss the cache but not the TLB. Nodes and leaves
//! made by later inserts come from the global allocator until the next `retune`.

use std::ops::RangeBounds;

use super::cost_model::CostModel;
use super::optimizer::{tune, Strategy, TuneReport};
use super::stats::NodeMix;
use crate::error::Result;
use crate::map::OrderedMap;
use crate::mem::art::arena::Arena;
use crate::mem::art::node::{NodeRef, View, ViewMut};
use crate::mem::art::{Art, ArtKey, Range};

/// How a [`Start`] tunes itself.
#[derive(Debug, Clone, PartialEq)]
pub struct StartParams {
    /// Node costs on this machine ([`super::cost_model::calibrate`]); the default is the
    /// paper's Table I.
    pub model: CostModel,
    /// Dynamic program (optimal under the model) or greedy.
    pub strategy: Strategy,
    /// A multilevel node may take this many times the bytes of the ART nodes it replaces.
    /// 1.0 (default) is the space rule of §III (START stays within ART's worst-case space);
    /// larger trades memory for more multilevel nodes, so shallower trees.
    pub budget_factor: f64,
    /// Allow flat huge-page Node64K/Node16M where a window is dense enough for the space
    /// budget (default). Off, dense windows are rewired like sparse ones: less memory above
    /// ~15% fill, but a kernel mapping per page and a TLB miss per lookup.
    pub flat_nodes: bool,
    /// Move the tuned tree's leaves and ART nodes into a huge-page arena (default; see
    /// `arena.rs`). Trades up to one huge page of memory, and dead copies of nodes changed
    /// after tuning until the next `retune`, for no page walk per level on large trees.
    pub huge_arena: bool,
}

impl Default for StartParams {
    fn default() -> Self {
        StartParams {
            model: CostModel::default(),
            strategy: Strategy::default(),
            budget_factor: 1.0,
            flat_nodes: true,
            huge_arena: true,
        }
    }
}

/// A self-tuning adaptive radix tree. See the module docs.
pub struct Start<K: ArtKey, V> {
    art: Art<K, V>,
    params: StartParams,
    changes: usize,
    last_report: TuneReport,
    /// Where the tree's nodes were placed by tunings; after `art` so it is dropped after the
    /// nodes in it.
    arenas: Vec<Arena>,
}

impl<K: ArtKey, V> Start<K, V> {
    /// An empty, untuned tree.
    pub fn new(params: StartParams) -> Self {
        Self::from_art(Art::new(), params)
    }

    /// Wraps `art` without tuning it.
    pub fn from_art(art: Art<K, V>, params: StartParams) -> Self {
        Start {
            art,
            params,
            changes: 0,
            last_report: TuneReport::default(),
            arenas: Vec::new(),
        }
    }

    /// Builds from pairs sorted by strictly increasing key (errors as [`Art::bulk_load`]) and
    /// tunes.
    pub fn bulk_load<I: IntoIterator<Item = (K, V)>>(
        pairs: I,
        params: StartParams,
    ) -> Result<Self> {
        let mut t = Self::from_art(Art::bulk_load(pairs)?, params);
        t.retune()?;
        Ok(t)
    }

    /// Runs the optimizer over the whole tree (multilevel nodes are first turned back into ART
    /// nodes) and transforms it.
    pub fn retune(&mut self) -> Result<TuneReport> {
        let len = self.art.len();
        let key_len = K::SIZE;
        let report = tune(
            self.art.root_mut(),
            len,
            key_len,
            &self.params.model,
            self.params.strategy,
            self.params.budget_factor,
            self.params.flat_nodes,
        )?;
        let mut report = report;
        if self.params.huge_arena {
            report.arena_bytes = self.place();
        }
        self.changes = 0;
        self.last_report = report;
        Ok(report)
    }

    /// Moves every leaf and ART node into a new arena (see the module docs); the arenas of
    /// earlier tunings are released once nothing is left in them. Returns the arena's resident
    /// bytes (0 without one).
    fn place(&mut self) -> usize {
        let root = self.art.root_mut();
        let Some(mut arena) = Arena::new(arena_need(root)) else {
            return 0;
        };
        if move_all(root, &mut arena) {
            self.arenas.clear();
        }
        let bytes = arena.resident_bytes();
        self.arenas.push(arena);
        bytes
    }

    /// Inserts and removals since the last tuning.
    pub fn changed_since_tune(&self) -> usize {
        self.changes
    }

    /// What the last tuning did.
    pub fn last_report(&self) -> TuneReport {
        self.last_report
    }

    /// Inner nodes per kind.
    pub fn node_mix(&self) -> NodeMix {
        NodeMix::of(&self.art)
    }

    /// The underlying tree.
    pub fn art(&self) -> &Art<K, V> {
        &self.art
    }

    /// All entries in key order.
    pub fn iter(&self) -> Range<'_, K, V> {
        self.art.iter()
    }
}

impl<K: ArtKey, V> OrderedMap<K, V> for Start<K, V> {
    type Range<'a>
        = Range<'a, K, V>
    where
        V: 'a;

    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        self.art.get(key)
    }

    fn insert(&mut self, key: K, value: V) -> Result<Option<V>> {
        let old = self.art.insert(key, value)?;
        self.changes += usize::from(old.is_none());
        Ok(old)
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let old = self.art.remove(key);
        self.changes += usize::from(old.is_some());
        old
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> Self::Range<'_> {
        self.art.range(range)
    }

    #[inline]
    fn lower_bound(&self, key: &K) -> Option<(&K, &V)> {
        self.art.lower_bound(key)
    }

    fn len(&self) -> usize {
        self.art.len()
    }

    /// Exact heap bytes as for [`Art`], rewired slot arrays counted by resident pages (shared
    /// pages once) plus their bookkeeping, not by their virtual size.
    /// Arenas count by their resident huge pages, in place of the nodes and leaves they hold.
    fn size_in_bytes(&self) -> usize {
        let arenas: usize = self.arenas.iter().map(Arena::resident_bytes).sum();
        self.art.size_in_bytes() - arena_live(self.art.root())
            + arenas
            + self.arenas.capacity() * std::mem::size_of::<Arena>()
            + std::mem::size_of::<Self>()
            - std::mem::size_of::<Art<K, V>>()
    }
}

/// Arena bytes that moving the subtree of `node` may take (alignment padding included).
fn arena_need<K, V>(node: &NodeRef<K, V>) -> usize {
    let slots = match node.view() {
        View::Rw(rw) => rw.array().movable_bytes() + 4095,
        _ => 0,
    };
    let own = slots + node.layout().map_or(0, |l| l.size() + l.align() - 1);
    own + node.children().map(|(_, c)| arena_need(c)).sum::<usize>()
}

/// Moves the subtree in `slot` into `arena`, each node before its children, children in key
/// order; false if the arena ran out (the tree is whole either way).
fn move_all<K, V>(slot: &mut NodeRef<K, V>, arena: &mut Arena) -> bool {
    if !slot.move_into(arena) {
        return false;
    }
    if let ViewMut::Rw(rw) = slot.view_mut() {
        if !rw.array_mut().move_into(arena) {
            return false;
        }
    }
    let frags: Vec<u32> = slot.children().map(|(f, _)| f).collect();
    for f in frags {
        let moved = if let ViewMut::Rw(rw) = slot.view_mut() {
            rw.with_child(f, |child| move_all(child, arena))
        } else {
            slot.find_child_mut(f).map(|child| move_all(child, arena))
        };
        if moved != Some(true) {
            return false;
        }
    }
    true
}

/// Bytes of the leaves and nodes below `node` (itself included) that live in an arena.
fn arena_live<K, V>(node: &NodeRef<K, V>) -> usize {
    let own = if node.in_arena() {
        node.layout().map_or(0, |l| l.size())
    } else {
        0
    };
    own + node.children().map(|(_, c)| arena_live(c)).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every leaf and ART node is in an arena, the rewired ones never.
    fn all_placed<K, V>(node: &NodeRef<K, V>) -> bool {
        node.in_arena() == node.layout().is_some() && node.children().all(|(_, c)| all_placed(c))
    }

    #[test]
    fn tuning_places_the_tree_in_one_arena_and_changes_keep_working() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| i * i * 7 + (i % 13)).collect();
        let mut t =
            Start::bulk_load(keys.iter().map(|&k| (k, k)), StartParams::default()).expect("sorted");
        if t.last_report().arena_bytes == 0 {
            return; // the kernel refused the arena: nothing to check
        }
        assert!(all_placed(t.art().root()));
        let before = t.size_in_bytes();
        // Removals copy leaves out of the arena; inserts (and node growth) use the heap.
        for &k in keys.iter().step_by(3) {
            assert_eq!(t.remove(&k), Some(k));
        }
        for i in 0..5_000u64 {
            let k = (1 << 40) + i * 977;
            assert_eq!(t.insert(k, k).expect("valid"), None);
        }
        assert!(!all_placed(t.art().root()));
        assert!(t.size_in_bytes() > before / 2);
        let report = t.retune().expect("tunes");
        assert!(report.arena_bytes > 0);
        assert!(all_placed(t.art().root()));
        assert_eq!(t.arenas.len(), 1, "the first arena is released");
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(&k), (i % 3 != 0).then_some(&k));
        }
        for i in 0..5_000u64 {
            let k = (1 << 40) + i * 977;
            assert_eq!(t.get(&k), Some(&k));
        }
        let heap = StartParams {
            huge_arena: false,
            ..StartParams::default()
        };
        let h = Start::bulk_load(keys.iter().map(|&k| (k, k)), heap).expect("sorted");
        assert_eq!(h.last_report().arena_bytes, 0);
        assert!(!h.art().root().in_arena());
    }
}
