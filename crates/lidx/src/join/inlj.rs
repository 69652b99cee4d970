//! Indexed nested-loop joins on sorted tables: stream the smaller table, look each key up in an
//! index over the larger one (paper 000 §4.1, §5.3).
//!
//! For each key of the outer (smaller) table the index over the inner (larger) table returns a
//! window; the inner table's blocks holding it are read in one request by a
//! [`crate::join::WindowReader`], and a binary search in them finds the key's lower bound. The indexes:
//!
//! * B+-tree as a model ([`BTreeModel`], §5.2, §6.1): a B+-tree over every `W`-th key, W = 256
//!   by default; descended from the root for every key, as the paper's baseline.
//! * PGM ([`Pgm`]): eps 128 by default (a window of 258 records, the paper's "error window of
//!   256").
//! * Sampled PGM ([`SampledPgm`]): every 128th key, eps 2, the window scaled (the paper's pick,
//!   §6.6); about 770 records.
//! * RadixSpline ([`RadixSpline`]): 20 radix bits, max error 128. The paper takes SOSD's
//!   Pareto-optimal setting per dataset (radix bits 16 to 28, error 256).
//! * RMI ([`Rmi`]): two layers, 2^20 linear leaves (our default, sized for 10^7-10^8 keys); the
//!   paper takes SOSD's CDFShop-tuned RMI. Its window is not configurable.
//!
//! `--window W` (§6.5: 256, 1024, 4096) sets the window width in records: B+-tree stride `W`,
//! PGM and RadixSpline error `W / 2 - 1`, sampled PGM every `W / 6`-th key with eps 2 (its
//! scaled window is at most 6 samples). Whatever the window, it is read in one request.
//!
//! Both optimizations of §4.1 for the learned indexes: (1) a cursor walks the last level of
//! models forward ([`crate::mem::PgmCursor`], the sampled PGM's cursor over its sample
//! PGM, [`crate::mem::RadixSplineCursor`] over the spline knots), galloping rather
//! than stepping so that a large table ratio does not cost a walk over every model; the RMI's
//! root is one linear model, as cheap as a step of that walk, so it is evaluated per key;
//! (2) the window never moves backwards: its start is raised to the previous key's lower
//! bound. The B+-tree gets (2) as well (it is free) but not (1), as in the paper.
//!
//! Keys: both tables must be sorted with unique keys (the paper's tables, §5.2 "K_i > K_{i-1}").
//! The outer table's order is checked while it streams and the inner table's when its index
//! is built ([`Error::OutOfOrder`], [`Error::DuplicateKey`]); a saved index is reused only for
//! the table it was built on (see [`crate::join::table_index`]).
//!
//! Strings (§6.2): the paper maps a 16-byte string to a double in base 256, which keeps ~7
//! bytes (53 bits) and so cannot tell apart keys that share a 7-byte prefix. Our models see
//! [`Key::to_model`], the first 8 bytes as a big-endian integer: order-preserving, exact on 8
//! bytes, and not injective beyond; [`ApproxPos::for_key`] widens the window to cover every key
//! that shares those 8 bytes, so lookups stay exact at the price of wider windows when many
//! keys share an 8-byte prefix (tested with keys sharing 12-byte prefixes).

use crate::error::{Error, Result};
use crate::index::{ApproxPos, StaticIndex};
use crate::io::Storage;
use crate::join::output::OutputWriter;
use crate::join::sides::{split_range, Sides};
use crate::join::table::TableKey;
use crate::join::table_index::{load_or_build, IndexLoad};
use crate::key::Key;
use crate::mem::btree_model::{BTreeModel, BTreeModelParams};
use crate::mem::persist::Persist;
use crate::mem::pgm::{Pgm, PgmCursor, PgmParams};
use crate::mem::radix_spline::{RadixSpline, RadixSplineCursor, RadixSplineParams};
use crate::mem::rmi::{Rmi, RmiParams};
use crate::mem::sampled_pgm::{SampledPgm, SampledPgmCursor, SampledPgmParams};

/// Windows for keys in non-decreasing order.
pub trait WindowCursor<K> {
    /// The window of `key`, which is `>=` every key asked before.
    fn window(&mut self, key: K) -> ApproxPos;
}

/// An index used by the INLJ: saved and reloaded, and walked by a cursor.
pub trait JoinIndex<K: Key>: Persist<K> {
    /// The cursor type.
    type Cursor<'a>: WindowCursor<K>
    where
        Self: 'a;
    /// A cursor at the start of the keys.
    fn cursor(&self) -> Self::Cursor<'_>;
}

/// A "cursor" that descends from the root for every key.
pub struct Descend<'a, I>(&'a I);

impl<K: Key, I: StaticIndex<K>> WindowCursor<K> for Descend<'_, I> {
    #[inline]
    fn window(&mut self, key: K) -> ApproxPos {
        self.0.search(key)
    }
}

impl<K: Key> WindowCursor<K> for PgmCursor<'_, K> {
    #[inline]
    fn window(&mut self, key: K) -> ApproxPos {
        self.search(key)
    }
}

impl<K: Key> WindowCursor<K> for SampledPgmCursor<'_, K> {
    #[inline]
    fn window(&mut self, key: K) -> ApproxPos {
        self.search(key)
    }
}

impl<K: Key> WindowCursor<K> for RadixSplineCursor<'_, K> {
    #[inline]
    fn window(&mut self, key: K) -> ApproxPos {
        self.search(key)
    }
}

impl<K: Key> JoinIndex<K> for BTreeModel<K> {
    type Cursor<'a> = Descend<'a, Self>;
    fn cursor(&self) -> Self::Cursor<'_> {
        Descend(self)
    }
}

impl<K: Key> JoinIndex<K> for Rmi {
    type Cursor<'a> = Descend<'a, Self>;
    fn cursor(&self) -> Self::Cursor<'_> {
        Descend(self)
    }
}

impl<K: Key> JoinIndex<K> for Pgm<K> {
    type Cursor<'a> = PgmCursor<'a, K>;
    fn cursor(&self) -> Self::Cursor<'_> {
        Pgm::cursor(self)
    }
}

impl<K: Key> JoinIndex<K> for SampledPgm<K> {
    type Cursor<'a> = SampledPgmCursor<'a, K>;
    fn cursor(&self) -> Self::Cursor<'_> {
        SampledPgm::cursor(self)
    }
}

impl<K: Key> JoinIndex<K> for RadixSpline<K> {
    type Cursor<'a> = RadixSplineCursor<'a, K>;
    fn cursor(&self) -> Self::Cursor<'_> {
        RadixSpline::cursor(self)
    }
}

/// Which index an INLJ uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InljIndex {
    /// B+-tree over every W-th key.
    BTree,
    /// PGM-index.
    Pgm,
    /// PGM-index on a sample.
    SampledPgm,
    /// RadixSpline.
    RadixSpline,
    /// Two-layer RMI.
    Rmi,
}

impl InljIndex {
    /// Short name, used in saved index file names.
    pub fn name(self) -> &'static str {
        match self {
            InljIndex::BTree => "btree",
            InljIndex::Pgm => "pgm",
            InljIndex::SampledPgm => "sampled-pgm",
            InljIndex::RadixSpline => "rs",
            InljIndex::Rmi => "rmi",
        }
    }
}

/// Checks a `--window` value: at least 16 records.
pub fn check_window(window: Option<usize>) -> Result<()> {
    match window {
        Some(w) if w < 16 => Err(Error::InvalidParameter {
            name: "window",
            value: w.to_string(),
            expected: "a window of at least 16 records, such as 256, 1024 or 4096",
        }),
        _ => Ok(()),
    }
}

/// The saved index file name for `index` over the table `table` with `window`.
pub(crate) fn index_file_name(table: &str, index: InljIndex, window: Option<usize>) -> String {
    match (index, window) {
        (InljIndex::Rmi, _) | (_, None) => format!("{table}.{}.idx", index.name()),
        (_, Some(w)) => format!("{table}.{}.w{w}.idx", index.name()),
    }
}

/// Runs the INLJ with `index` over the inner table; returns the index's load figures and
/// `(count, checksum)`. `before_join` is called once the index is in memory, so the caller can
/// time the join alone.
pub(crate) fn run<K: TableKey>(
    sides: &Sides<'_, K>,
    index: InljIndex,
    window: Option<usize>,
    threads: usize,
    before_join: &mut dyn FnMut(),
) -> Result<(IndexLoad, (u64, u64))> {
    check_window(window)?;
    let tag = window.unwrap_or(0) as u64;
    let storage = sides.inner_storage;
    let name = index_file_name(sides.inner_name, index, window);
    match index {
        InljIndex::BTree => {
            let every = window.unwrap_or(256);
            with_index(sides, storage, &name, tag, threads, before_join, |k| {
                BTreeModel::build(k, BTreeModelParams::with_every(every))
            })
        }
        InljIndex::Pgm => {
            let eps = window.map_or(128, |w| w / 2 - 1);
            with_index(sides, storage, &name, tag, threads, before_join, |k| {
                Pgm::build(k, PgmParams::new(eps, 4))
            })
        }
        InljIndex::SampledPgm => {
            let every = window.map_or(128, |w| w / 6);
            with_index(sides, storage, &name, tag, threads, before_join, |k| {
                SampledPgm::build(k, SampledPgmParams::new(every, 2))
            })
        }
        InljIndex::RadixSpline => {
            let err = window.map_or(128, |w| w / 2 - 1);
            with_index(sides, storage, &name, tag, threads, before_join, |k| {
                RadixSpline::build(k, RadixSplineParams::new(20, err))
            })
        }
        InljIndex::Rmi => with_index(
            sides,
            storage,
            &name,
            0,
            threads,
            before_join,
            |k: &[K]| Rmi::build(k, RmiParams::default()),
        ),
    }
}

fn with_index<K: TableKey, M: JoinIndex<K>>(
    sides: &Sides<'_, K>,
    storage: &Storage,
    name: &str,
    tag: u64,
    threads: usize,
    before_join: &mut dyn FnMut(),
    build: impl FnOnce(&[K]) -> Result<M>,
) -> Result<(IndexLoad, (u64, u64))> {
    let (index, load) = load_or_build(storage, name, sides.inner, tag, build)?;
    before_join();
    let parts = split_range(sides.outer.len(), threads);
    let out = sides.write(parts.len(), |t, w| {
        probe(sides, &index, parts[t].clone(), w)
    })?;
    Ok((load, out))
}

/// The INLJ loop over outer records `range`.
fn probe<K: TableKey, M: JoinIndex<K>>(
    sides: &Sides<'_, K>,
    index: &M,
    range: std::ops::Range<u64>,
    out: &mut OutputWriter<K>,
) -> Result<()> {
    let mut cursor = index.cursor();
    let mut reader = sides.inner.window_reader();
    let mut scan = sides.outer.scan(range)?;
    let mut floor = 0u64;
    while let Some(key) = scan.key() {
        let w = cursor.window(key);
        let lo = (w.lo as u64).max(floor);
        let hi = (w.hi as u64).max(lo);
        let pos = reader.lower_bound(lo, hi, key)?;
        floor = pos;
        if let Some((found, value)) = reader.found() {
            if found == key {
                sides.emit(out, &key, scan.value(), value)?;
                // Keys are unique: the next outer key's lower bound is past this match.
                floor = pos + 1;
            }
        }
        scan.advance_sorted()?;
    }
    Ok(())
}
