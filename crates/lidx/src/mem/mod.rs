//! In-memory indexes: static indexes over sorted keys they do not own, and owned ordered maps.
//!
//! * Static indexes ([`crate::StaticIndex`]; build from sorted keys, then search windows):
//!   [`Pgm`] and its variants ([`SampledPgm`], [`CprPgm`], [`PgmZero`]), [`RadixSpline`] (and
//!   [`RadixSplineZero`]), [`Rmi`], [`FitingTree`], [`ZoneMap`] and [`LecoZoneMap`],
//!   [`BTreeIndex`] and [`BTreeModel`], and [`StringIndex`] over byte strings of any length.
//!   [`Smallest`] picks the smallest of several under an error bound. Saved to and loaded
//!   from bytes through [`Persist`].
//! * Updatable maps ([`crate::OrderedMap`]): [`Alex`], [`Lipp`], [`Art`], [`Start`],
//!   [`XIndexMap`], [`DynamicPgm`], [`FitingMap`], [`BTree`], [`SkipListMap`],
//!   [`HashKeyMap`], [`TrieMap`] and [`SortedArray`]; [`KeyMap`] is any of them chosen by a
//!   [`MapSpec`] at run time.

pub(crate) mod alex;
pub(crate) mod art;
pub(crate) mod btree;
pub(crate) mod btree_index;
pub(crate) mod btree_model;
pub(crate) mod dynamic_pgm;
pub(crate) mod fiting;
pub(crate) mod fiting_tree;
pub(crate) mod hash_map;
pub(crate) mod key_map;
pub(crate) mod leco_zone_map;
pub(crate) mod lipp;
pub(crate) mod map_spec;
pub(crate) mod persist;
pub(crate) mod pgm;
pub(crate) mod pgm_compressed;
pub(crate) mod pgm_zero;
pub(crate) mod radix_spline;
pub(crate) mod radix_spline_zero;
pub(crate) mod retrain_stats;
pub(crate) mod rmi;
pub(crate) mod sampled_pgm;
pub(crate) mod skiplist;
pub(crate) mod smallest;
pub(crate) mod sorted;
pub(crate) mod start;
pub(crate) mod string_index;
pub(crate) mod trie_map;
pub(crate) mod xindex;
pub(crate) mod zone_map;

// Static indexes: built once over sorted keys, answering windows ([`crate::StaticIndex`]).
pub use btree_index::BTreeIndex;
pub use btree_model::{BTreeModel, BTreeModelParams};
pub use fiting::{FitingParams, FitingTree};
pub use leco_zone_map::{LecoZoneMap, LecoZoneMapOf, RoughLecoZoneMap};
pub use pgm::{Pgm, PgmCursor, PgmParams};
pub use pgm_compressed::{CprPgm, CprPgmParams};
pub use pgm_zero::{PgmZero, PgmZeroParams};
pub use radix_spline::{RadixSpline, RadixSplineCursor, RadixSplineParams};
pub use radix_spline_zero::{RadixSplineZero, RadixSplineZeroParams};
pub use rmi::{Rmi, RmiParams};
pub use sampled_pgm::{SampledPgm, SampledPgmCursor, SampledPgmParams};
pub use smallest::{build_smallest, Smallest, SmallestParams};
pub use string_index::{StringIndex, StringIndexParams};
pub use zone_map::{ZoneMap, ZoneMapParams};

// Updatable in-memory maps ([`crate::OrderedMap`]).
pub use crate::catalog::MapSpec;
pub use crate::codec::{Decoder, Encoder};
pub use alex::{Alex, AlexKey, AlexParams, AlexRetrains, AlexStats, Range as AlexRange};
pub use art::{Art, ArtKey, Range as ArtRange, MAX_KEY_BYTES as ART_MAX_KEY_BYTES};
pub use btree::{BTree, BTreeParams, Range as BTreeRange};
pub use dynamic_pgm::{DynamicPgm, DynamicPgmParams, Range as DynamicPgmRange};
pub use fiting_tree::{
    Buffer as FitingBufferStrategy, BufferCursor as FitingBufferCursor, FitingBuffer, FitingGap,
    FitingInplace, FitingMap, FitingMapParams, Gap as FitingGapStrategy,
    Inplace as FitingInplaceStrategy, Insert as FitingInsert, InsertStrategy, Range as FitingRange,
    RetrainStats,
};
pub use hash_map::HashKeyMap;
pub use key_map::KeyMap;
pub use lipp::{Lipp, LippKey, LippParams, LippShape, Range as LippRange};
pub use persist::Persist;
pub use skiplist::{ByKeyOrder, SkipListMap, SkipListRange};
pub use sorted::SortedArray;
pub use start::{
    CacheState, CostModel, MultiNode4, NodeCost, NodeKind, NodeMix, PageStats, RadixIndex,
    RewiredArray, RewiredIter, RewiredParams, Start, StartParams, Strategy, TuneReport,
};
pub use trie_map::TrieMap;
pub use xindex::{XIndex, XIndexMap, XIndexParams, XIndexRange, XIndexStats};
