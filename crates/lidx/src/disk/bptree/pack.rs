//! Cutting a level of children into nodes, and building the inner levels bottom-up: the one
//! bulk-load algorithm of both disk B+-trees.
//!
//! A level of `n` children (in key order, each with the smallest key or separator below it)
//! becomes `ceil(n / fill)` nodes ([`node_starts`]): spread evenly ([`Cut::Even`], so no node
//! is left nearly empty at the end, as paper 003's bulk load and a split in the middle of a
//! tree want) or full from the left ([`Cut::FullFromLeft`], for the right edge of a tree that
//! grows by appends, whose last node fills next). [`build_up`] repeats that level by level,
//! each node made by the caller (written to its block, or built in memory) and becoming a child
//! of the level above, until a level is one node: the root. The caller says how many children a
//! node takes (`fill`); the typed tree's fill factor and the byte tree's fanout both go there.

/// How a level's children are spread over its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Every node gets `n / nodes` children, give or take one.
    Even,
    /// Every node but the last gets `fill` children.
    FullFromLeft,
}

/// Start of part `j` of `n` items split evenly into `parts`.
#[inline]
pub(crate) fn split_at(n: usize, parts: usize, j: usize) -> usize {
    (n as u128 * j as u128 / parts as u128) as usize
}

/// Where each node's children start when `n` children are cut into `ceil(n / fill)` nodes (one
/// node when `n` is 0), then `n`: node `j` takes children `starts[j]..starts[j + 1]`.
pub(crate) fn node_starts(n: usize, fill: usize, cut: Cut) -> Vec<usize> {
    let nodes = n.div_ceil(fill).max(1);
    (0..=nodes)
        .map(|j| match cut {
            Cut::Even => split_at(n, nodes, j),
            Cut::FullFromLeft => (j * fill).min(n),
        })
        .collect()
}

/// The nodes of `level` over `children`, cut by [`node_starts`]: `make(level, chunk)` makes
/// one node from its children (in key order, left to right) and returns it as a child of the
/// level above, or the error that stops the build (the typed tree's writes fail with I/O
/// errors; the byte tree's nodes in memory cannot fail).
pub(crate) fn pack_level<C, E>(
    level: u32,
    children: Vec<C>,
    fill: usize,
    cut: Cut,
    make: &mut impl FnMut(u32, Vec<C>) -> Result<C, E>,
) -> Result<Vec<C>, E> {
    let starts = node_starts(children.len(), fill, cut);
    let mut rest = children.into_iter();
    starts
        .windows(2)
        .map(|w| make(level, rest.by_ref().take(w[1] - w[0]).collect()))
        .collect()
}

/// Builds the levels from `level` up over `children` (at least one), one [`pack_level`] each,
/// until a level is one node, and returns that root. Nodes are made level by level, left to
/// right, so a caller that writes each to the next block of a file writes one ascending run.
pub(crate) fn build_up<C, E>(
    mut level: u32,
    mut children: Vec<C>,
    fill: usize,
    cut: Cut,
    mut make: impl FnMut(u32, Vec<C>) -> Result<C, E>,
) -> Result<C, E> {
    loop {
        children = pack_level(level, children, fill, cut, &mut make)?;
        if children.len() == 1 {
            return Ok(children.pop().expect("one node"));
        }
        level += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_spread_evenly_or_fill_from_the_left() {
        assert_eq!(node_starts(10, 4, Cut::Even), [0, 3, 6, 10]);
        assert_eq!(node_starts(10, 4, Cut::FullFromLeft), [0, 4, 8, 10]);
        assert_eq!(node_starts(8, 4, Cut::FullFromLeft), [0, 4, 8]);
        assert_eq!(node_starts(0, 4, Cut::Even), [0, 0]);
        assert_eq!(node_starts(3, 4, Cut::Even), [0, 3]);
    }

    #[test]
    fn levels_are_built_bottom_up_left_to_right_to_one_root() {
        let mut made = Vec::new();
        let root = build_up(
            1,
            (0..10).collect::<Vec<u32>>(),
            3,
            Cut::Even,
            |level, kids| {
                made.push((level, kids.clone()));
                Ok::<_, ()>(kids[0] + 100 * level)
            },
        )
        .unwrap();
        assert_eq!(
            made,
            [
                (1, vec![0, 1]),
                (1, vec![2, 3, 4]),
                (1, vec![5, 6]),
                (1, vec![7, 8, 9]),
                (2, vec![100, 102]),
                (2, vec![105, 107]),
                (3, vec![300, 305]),
            ]
        );
        assert_eq!(root, 600);
    }
}
