//! Range cursors: the records between two bounds, forward or backward, from the tree as it
//! was when the cursor was made (it holds that root; the caller keeps the blocks it reads from
//! being reused, see [`super::space`]).

use std::ops::Bound;
use std::sync::Arc;

use crate::disk::bptree::try_lower_bound_by;
use crate::error::{Error, Result};

use super::leaf::{LeafRef, SlotRef};
use super::node::{Kids, Node};
use super::pages::PageIo;
use super::tree::ByteBTree;

/// A cursor over a [`ByteBTree`]'s records within bounds, in key order or reverse key order.
pub struct BTreeCursor {
    io: PageIo,
    /// The path to the current leaf: each node and the child taken.
    stack: Vec<(Arc<Node>, usize)>,
    /// The current leaf's block (empty for the empty tree's leaf), its number and records.
    leaf: Vec<u8>,
    block: u64,
    count: usize,
    /// Forward: the next slot; backward: one past it.
    pos: usize,
    forward: bool,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    positioned: bool,
    done: bool,
}

impl ByteBTree {
    /// A cursor over the records within `start..end`, ascending when `forward`.
    pub fn cursor(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>, forward: bool) -> BTreeCursor {
        BTreeCursor::new(self.io().clone(), self.root(), start, end, forward)
    }
}

fn probe(b: &Bound<Vec<u8>>) -> Option<&[u8]> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    }
}

impl BTreeCursor {
    pub(crate) fn new(
        io: PageIo,
        root: Arc<Node>,
        start: Bound<Vec<u8>>,
        end: Bound<Vec<u8>>,
        forward: bool,
    ) -> BTreeCursor {
        BTreeCursor {
            io,
            stack: vec![(root, 0)],
            leaf: Vec::new(),
            block: 0,
            count: 0,
            pos: 0,
            forward,
            start,
            end,
            positioned: false,
            done: false,
        }
    }

    /// Descends from the node on top of the stack to a leaf, through the child holding `key`
    /// (or the first or last child), and loads that leaf.
    fn descend(&mut self, key: Option<&[u8]>) -> Result<()> {
        loop {
            let (node, _) = self.stack.last().expect("a path");
            let node = Arc::clone(node);
            let i = match key {
                Some(k) => node.child_index(k),
                None if self.forward => 0,
                None => node.len() - 1,
            };
            self.stack.last_mut().expect("a path").1 = i;
            match &node.kids {
                Kids::Leaves(l) => return self.load(l[i]),
                Kids::Nodes(n) => self.stack.push((Arc::clone(&n[i]), 0)),
            }
        }
    }

    /// Moves to the next leaf in the cursor's direction; false after the last.
    fn next_leaf(&mut self) -> Result<bool> {
        loop {
            let Some((node, i)) = self.stack.last_mut() else {
                return Ok(false);
            };
            let more = if self.forward {
                *i + 1 < node.len()
            } else {
                *i > 0
            };
            if more {
                if self.forward {
                    *i += 1;
                } else {
                    *i -= 1;
                }
                let (node, i) = (Arc::clone(node), *i);
                match &node.kids {
                    Kids::Leaves(l) => self.load(l[i])?,
                    Kids::Nodes(n) => {
                        self.stack.push((Arc::clone(&n[i]), 0));
                        self.descend(None)?;
                    }
                }
                return Ok(true);
            }
            self.stack.pop();
        }
    }

    /// Reads the leaf at `block` and stands at its start (or end, backward).
    fn load(&mut self, block: u64) -> Result<()> {
        self.block = block;
        if block == 0 {
            self.leaf.clear();
            self.count = 0;
        } else {
            self.leaf = self.io.read_leaf(block)?;
            self.count = self.view()?.len();
        }
        self.pos = if self.forward { 0 } else { self.count };
        Ok(())
    }

    fn view(&self) -> Result<LeafRef<'_>> {
        LeafRef::parse(
            &self.leaf[..self.io.geometry.payload],
            self.io.file(),
            self.block,
        )
    }

    fn slot(&self, i: usize) -> Result<SlotRef<'_>> {
        self.view()?.slot(i)
    }

    /// Positions at the first record inside the near bound.
    fn position(&mut self) -> Result<()> {
        let near = if self.forward { &self.start } else { &self.end }.clone();
        self.descend(probe(&near))?;
        if let Some(k) = probe(&near) {
            // The first slot at or past the bound, in the cursor's direction.
            self.pos = try_lower_bound_by(self.count, |mid| {
                let ord = self.io.cmp(self.slot(mid)?, k)?;
                Ok::<_, Error>(match (&near, self.forward) {
                    (Bound::Included(_), true) => ord.is_lt(),
                    (Bound::Excluded(_), true) => ord.is_le(),
                    (Bound::Included(_), false) => ord.is_le(),
                    (_, false) => ord.is_lt(),
                    (Bound::Unbounded, true) => false,
                })
            })?;
        }
        Ok(())
    }

    /// The next record, `None` after the last.
    pub fn next_record(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.done {
            return Ok(None);
        }
        if !self.positioned {
            self.positioned = true;
            if let Err(e) = self.position() {
                self.done = true;
                return Err(e);
            }
        }
        loop {
            let has = if self.forward {
                self.pos < self.count
            } else {
                self.pos > 0
            };
            if has {
                break;
            }
            match self.next_leaf() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(None);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        let at = if self.forward { self.pos } else { self.pos - 1 };
        let read = self.slot(at).and_then(|slot| {
            let key = self.io.full_key(slot)?;
            Ok((key, self.io.value(slot)?))
        });
        let (key, value) = match read {
            Ok(kv) => kv,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        let far = if self.forward { &self.end } else { &self.start };
        let inside = match far {
            Bound::Unbounded => true,
            Bound::Included(b) if self.forward => key <= *b,
            Bound::Excluded(b) if self.forward => key < *b,
            Bound::Included(b) => key >= *b,
            Bound::Excluded(b) => key > *b,
        };
        if !inside {
            self.done = true;
            return Ok(None);
        }
        if self.forward {
            self.pos += 1;
        } else {
            self.pos -= 1;
        }
        Ok(Some((key, value)))
    }
}
