//! The node mix of an ART or START tree: how many inner nodes of each kind (paper 004 §VI
//! explains START's results per dataset by which multilevel nodes it chose), and how many
//! rewired nodes run on the plain fallback instead of shared memfd pages (§III-A), and how many
//! are flat on purpose.

use std::fmt;

use super::cost_model::KINDS;
use crate::mem::art::node::{NodeKind, View};
use crate::mem::art::{Art, ArtKey};

/// Inner nodes per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeMix {
    /// Counts in the order of `KINDS` (Node4, Node16, Node48, Node256, Node64K, Node16M,
    /// MultiNode4).
    pub counts: [usize; 7],
    /// Rewired nodes whose slots use the plain fallback (the kernel refused rewiring).
    pub rewired_fallbacks: usize,
    /// Node64K/Node16M made flat on purpose (dense windows, `RewiredArray::flat`).
    pub flat: usize,
    /// Resident bytes of all rewired slot arrays.
    pub rewired_resident_bytes: usize,
}

impl NodeMix {
    /// The mix of `art`'s tree.
    pub fn of<K: ArtKey, V>(art: &Art<K, V>) -> Self {
        let mut mix = NodeMix::default();
        art.visit_post_order(|info| {
            let i = KINDS.iter().position(|&k| k == info.kind).expect("listed");
            mix.counts[i] += 1;
            if let View::Rw(rw) = info.node.view() {
                let (rewired, flat) = (rw.array().is_rewired(), rw.array().is_flat());
                mix.rewired_fallbacks += usize::from(!rewired && !flat);
                mix.flat += usize::from(flat);
                mix.rewired_resident_bytes += rw.array().resident_bytes();
            }
        });
        mix
    }

    /// Nodes of `kind`.
    pub fn count(&self, kind: NodeKind) -> usize {
        self.counts[KINDS.iter().position(|&k| k == kind).expect("listed")]
    }
}

impl fmt::Display for NodeMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = ["N4", "N16", "N48", "N256", "R64K", "R16M", "MN4"];
        let parts: Vec<String> = names
            .iter()
            .zip(&self.counts)
            .filter(|(_, &c)| c > 0)
            .map(|(n, c)| format!("{n}={c}"))
            .collect();
        write!(f, "{}", parts.join(" "))?;
        if self.flat > 0 {
            write!(f, " (flat: {})", self.flat)?;
        }
        if self.rewired_fallbacks > 0 {
            write!(f, " (rewired fallbacks: {})", self.rewired_fallbacks)?;
        }
        Ok(())
    }
}
