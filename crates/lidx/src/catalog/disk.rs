//! The on-disk structures: the updatable disk maps of paper 003 ([`DiskMapSpec`],
//! [`Role::DiskMap`]; its disk B+-tree is also the read-only disk index `lidx build` and `lidx
//! bench --on-disk` run), the models of the static learned disk index ([`DiskModelSpec`],
//! [`Role::DiskIndex`]: paper 002's, and the in-memory registry's learned models) and the
//! on-disk indexes over byte-string keys ([`ByteIndexSpec`], [`Role::ByteDiskIndex`]).
//!
//! A static learned index's model takes one more parameter, whatever the model:
//! `gran=item|page|<g>` (what one model point stands for, [`Granularity`]; `item` by default,
//! and the only one the zero-interval models, fitted per block, accept).
//!
//! Runtime choices are not part of a spec: how many levels stay in memory and how blocks are
//! fetched are given when a file is opened, so one file serves every setting.

use super::role::{one_of, parse_list, BadSpec};
use super::IndexSpec;
#[cfg(doc)]
use super::Role;
use crate::spec::{split_item, Milli, ZeroEps};

crate::param_specs! {
    /// One updatable on-disk map (paper 003), with its parameters.
    pub enum DiskMapSpec [labels: Digits] {
        /// The disk B+-tree (paper 003 §4), bulk loaded with `fill`% full nodes; also the
        /// read-only disk index's baseline.
        BTree = "btree" {
            /// Bulk-load fill, percent of each node's capacity: lower leaves room for inserts
            /// before splits, in more blocks.
            fill: u32 = 100 in 1..=100 => "<percent>",
        },
        /// ALEX on disk (paper 003 §3, Layout #2).
        Alex = "alex" {},
        /// LIPP on disk.
        Lipp = "lipp" {},
        /// The FITing-tree on disk: segments with delta buffers.
        Dfiting = "dfiting" {
            /// Error bound of the segments (paper 003 §5.3's 64): larger is fewer segments,
            /// longer searches within one.
            eps: usize = 64 => "<n>",
        },
        /// The dynamic PGM on disk: LSM-style levels of static PGMs.
        Dpgm = "dpgm" {
            /// Error bound of each level's PGM (paper 003 §5.3's 64): larger is smaller models,
            /// more blocks per lookup.
            eps: usize = 64 => "<n>",
        },
        /// Paper 003 Table 5's hybrid design: B+-tree leaves under a learned model.
        BtreeLearned = "btree-learned" {},
        /// FILM (Ma et al., PVLDB 16(3) 2022; paper 002 §10.5): every key in memory in
        /// learned leaves, the payloads of the hottest items cached under an LRU, the others
        /// evicted to appended data pages with an in-memory locator each
        /// ([`crate::disk::Film`]).
        Film = "film" {
            /// Error bound of the leaves' models: larger is fewer leaves, longer searches.
            eps: usize = 64 in 1..=1_048_576 => "<n>",
            /// Bytes the cached data items may take (payload + 16 bytes each); the coldest
            /// beyond it are evicted to disk. Keys and locators come on top, for every item.
            mem: u64 = 67108864 => "<bytes>",
        },
    }
}

crate::param_specs! {
    /// The model of a static learned disk index (records in blocks, the model in memory): one
    /// of paper 002's, or a learned model of the in-memory registry with its parameters.
    /// Labels write numbers in plain digits: they name files (`pgm-zero.pages=1.5...lidx`).
    pub enum DiskModelSpec [labels: Digits] {
        /// The zone map: the minimum key of every block.
        ZoneMap = "zonemap" {},
        /// PGM-Disk: the PGM with disk-based zero intervals (paper 002 G3).
        PgmZero = "pgm-zero" {
            /// Error outside the key's page, `eps=<e>`, or `pages=<p>` expected blocks per
            /// lookup (eq. 4) to derive it from: fewer pages is a larger model.
            eps: ZeroEps = 1.5 => "<e>|pages=<p>",
            /// Error of the upper levels: smaller is more upper segments.
            eps_rec: usize = 8 => "<r>",
        },
        /// RadixSpline-Disk: RadixSpline with disk-based zero intervals (paper 002 G3).
        RsZero = "rs-zero" {
            /// As for `pgm-zero`.
            eps: ZeroEps = 1.5 => "<e>|pages=<p>",
            /// Radix table bits: more is a larger table, a narrower spline search.
            bits: usize = 18 => "<b>",
        },
        /// `CprLeCo_PGM_D`: the LeCo-compressed PGM (paper 002 G4).
        CprPgm = "cpr-pgm" {
            /// Target maximum error: smaller is more segments, fewer blocks per lookup.
            eps: usize = 64 => "<n>",
        },
        /// The zone map with LeCo-compressed minimums (paper 002 G5).
        LecoZoneMap = "leco-zonemap" {},
        /// `LeCo-Zonemap-D`: the LeCo zone map with rough separators, same answers.
        LecoZoneMapRough = "leco-zonemap-rough" {},
        /// The smaller of `cpr-pgm` and `leco-zonemap-rough` at `pages` expected blocks per
        /// lookup (paper 002 eq. 4 gives the PGM's eps).
        Auto = "auto" {
            /// Expected blocks per lookup: fewer is a larger model.
            pages: Milli = 1.5 in Milli(1000)..=Milli(1_000_000) => "<expected pages>",
        },
    }
    extra
    /// A learned model of the in-memory registry ([`IndexSpec::is_disk_model`]).
    Learned(IndexSpec)
}

crate::param_specs! {
    /// One on-disk index over byte-string keys, with its parameters.
    pub enum ByteIndexSpec [labels: Digits] {
        /// The byte table ([`crate::disk::ByteTable`]): sorted records in blocks, located by the
        /// string index over one separator per block, one block per lookup (paper 002 §9's
        /// static stage, over byte keys).
        Table = "byte-table" {
            /// The separator model's eps: smaller is narrower windows, more memory.
            eps: usize = 32 in 1.. => "<e>",
        },
        /// The byte B+-tree ([`crate::disk::ByteBTree`]): inner nodes in memory, one leaf read
        /// per lookup (paper 002 §10's equal-memory baseline).
        BTree = "byte-btree" {},
    }
}

impl DiskMapSpec {
    /// True for the B+-tree, the baseline every figure is a ratio to.
    pub fn is_btree(&self) -> bool {
        matches!(self, DiskMapSpec::BTree { .. })
    }

    /// True when `item` names a structure only this table has (not the disk B+-tree, which is
    /// a read-only disk index too), with or without parameters.
    pub fn is_updatable_name(item: &str) -> bool {
        let name = item.trim().split(':').next().unwrap_or_default();
        DiskMapSpec::names()
            .iter()
            .any(|&n| n == name && n != DiskMapSpec::BTree { fill: 100 }.name())
    }
}

impl ByteIndexSpec {
    /// True when `item` names a byte-key index (`byte-...`), whether or not it parses.
    pub fn is_byte_name(item: &str) -> bool {
        item.trim().starts_with("byte-")
    }
}

impl DiskMapSpec {
    /// Parses one item such as `btree:fill=70` or `dpgm:eps=32`.
    pub fn parse(item: &str) -> Result<DiskMapSpec, BadSpec> {
        DiskMapSpec::parse_item(item).ok_or_else(|| {
            BadSpec::new(
                "updatable on-disk index",
                item,
                DiskMapSpec::accepted_forms(),
            )
        })
    }

    /// Parses a comma-separated list (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<DiskMapSpec>, BadSpec> {
        parse_list(
            list,
            "on-disk index list",
            &DiskMapSpec::accepted_forms(),
            DiskMapSpec::parse,
        )
    }

    /// Every accepted form, for messages and help.
    pub fn accepted_forms() -> String {
        DiskMapSpec::forms().join(", ")
    }
}

impl DiskModelSpec {
    /// True for the zero-interval models, fitted to the records of each block: they predict
    /// items, so `gran=item` is the only granularity they take.
    pub fn is_zero_interval(&self) -> bool {
        matches!(
            self,
            DiskModelSpec::PgmZero { .. } | DiskModelSpec::RsZero { .. }
        )
    }

    /// Parses a model with its optional `gran=` (anywhere among the parameters; the last one
    /// counts): `pgm:eps=4:gran=16`, `pgm-zero:pages=1.5`. `None` when the model is no
    /// [`DiskModelSpec`], an in-memory index that is no learned model, or a zero-interval
    /// model at another granularity than `item`.
    pub fn parse_with_granularity(item: &str) -> Option<(DiskModelSpec, Granularity)> {
        let (name, mut pairs) = split_item(item)?;
        let mut granularity = None;
        pairs.retain(|&(key, value)| match key {
            "gran" => {
                granularity = Some(parse_granularity(value));
                false
            }
            _ => true,
        });
        let model = DiskModelSpec::from_parts(name, &pairs)?;
        let granularity = granularity.unwrap_or(Some(Granularity::Item))?;
        match model {
            DiskModelSpec::Learned(spec) if !spec.is_disk_model() => None,
            model if model.is_zero_interval() && granularity != Granularity::Item => None,
            model => Some((model, granularity)),
        }
    }

    /// The label of the model at `granularity`: `pgm:eps=64:eps_rec=8:gran=item`.
    pub fn label_at(&self, granularity: Granularity) -> String {
        format!("{}:gran={}", self.label(), granularity_text(granularity))
    }

    /// The accepted forms of a read-only disk index ([`Role::DiskIndex`]), for messages and
    /// help: the disk B+-tree's, paper 002's models' and the in-memory learned models', each
    /// with its optional granularity.
    pub fn disk_index_forms() -> String {
        format!(
            "{}, {}, or a learned index of the in-memory registry ({}) with its parameters; \
             each model takes an optional :gran=item|page|<g> (item only for the zero-interval \
             models)",
            DiskMapSpec::BTree { fill: 100 }.form(),
            DiskModelSpec::own_forms().join(", "),
            IndexSpec::disk_model_names().join(", ")
        )
    }
}

/// `item`, `page` or a number of records per model point (at least 1).
fn parse_granularity(text: &str) -> Option<Granularity> {
    match text {
        "item" => Some(Granularity::Item),
        "page" => Some(Granularity::Page),
        g => g
            .parse::<usize>()
            .ok()
            .filter(|&g| g > 0)
            .map(Granularity::MiniPage),
    }
}

/// The granularity as `gran=` spells it.
pub fn granularity_text(g: Granularity) -> String {
    match g {
        Granularity::Item => "item".to_string(),
        Granularity::Page => "page".to_string(),
        Granularity::MiniPage(g) => g.to_string(),
    }
}

impl ByteIndexSpec {
    /// Parses one item: `byte-table`, `byte-table:eps=16` or `byte-btree`.
    pub fn parse(item: &str) -> Result<ByteIndexSpec, BadSpec> {
        ByteIndexSpec::parse_item(item).ok_or_else(|| {
            BadSpec::new(
                "on-disk index for byte-string keys",
                item,
                ByteIndexSpec::accepted_forms(),
            )
        })
    }

    /// Parses a comma-separated list of byte-key indexes (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<ByteIndexSpec>, BadSpec> {
        parse_list(
            list,
            "on-disk index list",
            &ByteIndexSpec::accepted_forms(),
            ByteIndexSpec::parse,
        )
    }

    /// Every accepted form, for messages and help: `byte-table[:eps=<e>] or byte-btree`.
    pub fn accepted_forms() -> String {
        one_of(&ByteIndexSpec::forms())
    }
}

/// What one model point stands for (paper 002 §5, guideline G2).
///
/// With group size `G` (1, `g`, or the records per block), the model is built on the first
/// key of every group of `G` consecutive records, so it predicts group numbers; the window of
/// group numbers `[glo, ghi)` becomes the window of items `[(glo - 1) * G, ghi * G)` (see
/// [`StaticLearned::window`] for why one group more on the left).
///
/// Paper 002 eq. 3 fixes the last-mile range `R_i = 2 eps = 2 eps' G`: a model with error
/// `eps'` in groups searches as many items as an item-level model with `eps = eps' G`, and
/// needs more memory for it (a tighter fit of fewer points). Eq. 4 gives the expected blocks
/// read all-at-once, `1 + (R_i - G) / P` for `P` records per block: for the same `R_i` a
/// larger `G` reads fewer blocks, down to exactly `R_i / P` at page level, where windows start
/// and end on block boundaries. So to compare granularities at equal `R_i`, give the model
/// `eps / G`: e.g. item level with PGM `eps = 64` against mini-pages of 16 with `eps = 4`.
///
/// The model's own windows add a margin: an eps-bounded model's window is `2 eps + 2` points
/// wide ([`ApproxPos::from_prediction`]), and the extra group on the left makes a window of
/// `2 eps' + 3` groups, i.e. `(2 eps' + 3) G` items where the paper counts `2 eps' G`. Small
/// `eps'` at page level therefore reads several blocks all-at-once; a zone map (exact, window
/// of one group) reads one.
///
/// [`StaticLearned::window`]: crate::disk::StaticLearned::window
/// [`ApproxPos::from_prediction`]: crate::ApproxPos::from_prediction
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Granularity {
    /// Every record is a model point; the model predicts item ranks (paper 002's
    /// recommendation: the least memory for a given last-mile range).
    #[default]
    Item,
    /// Every `g`-th record is a model point (`g >= 1`): between item and page.
    MiniPage(usize),
    /// The first record of every data block is a model point; the model predicts blocks.
    Page,
}

impl Granularity {
    /// Records per model point, given the records per block.
    pub fn group(self, per_block: usize) -> usize {
        match self {
            Granularity::Item => 1,
            Granularity::MiniPage(g) => g,
            Granularity::Page => per_block,
        }
    }

    /// `item`, `mini-page:<g>` or `page`, as [`Granularity::parse`] reads it.
    pub fn name(self) -> String {
        match self {
            Granularity::Item => "item".to_string(),
            Granularity::MiniPage(g) => format!("mini-page:{g}"),
            Granularity::Page => "page".to_string(),
        }
    }

    /// Parses `item`, `page` or `mini-page:<g>`.
    pub fn parse(s: &str) -> crate::Result<Granularity> {
        let bad = || crate::Error::InvalidParameter {
            name: "granularity",
            value: s.to_string(),
            expected: "item, page, or mini-page:<g> with g >= 1",
        };
        match s {
            "item" => Ok(Granularity::Item),
            "page" => Ok(Granularity::Page),
            _ => {
                let g = s.strip_prefix("mini-page:").ok_or_else(bad)?;
                let g: usize = g.parse().map_err(|_| bad())?;
                if g == 0 {
                    return Err(bad());
                }
                Ok(Granularity::MiniPage(g))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::StringIndexSpec;

    /// Regression: the labels of these tables name files (`dfiting.eps=1000000.lidx`) and
    /// records, so they keep the plain digits the hand-written labels wrote; the catalog's
    /// first version shortened them (`eps=1M`) and an index saved before was not found.
    #[test]
    fn file_naming_labels_keep_plain_digits() {
        let disk = |item: &str| DiskMapSpec::parse(item).expect(item).label();
        assert_eq!(disk("dfiting:eps=1M"), "dfiting:eps=1000000");
        assert_eq!(disk("dpgm:eps=1048576"), "dpgm:eps=1048576");
        let bytes = |item: &str| ByteIndexSpec::parse(item).expect(item).label();
        assert_eq!(bytes("byte-table:eps=1000000"), "byte-table:eps=1000000");
        let text = |item: &str| StringIndexSpec::parse_item(item).expect(item).label();
        assert_eq!(
            text("strings:eps=1000000"),
            "strings:eps=1000000:threshold=32"
        );
        assert_eq!(text("head8:eps=2000000"), "head8:eps=2000000");
    }

    #[test]
    fn disk_models_keep_their_labels() {
        for (item, label) in [
            ("zonemap", "zonemap:gran=item"),
            ("zonemap:gran=page", "zonemap:gran=page"),
            (
                "pgm-zero:pages=1.5",
                "pgm-zero:pages=1.5:eps_rec=8:gran=item",
            ),
            (
                "pgm-zero:eps_rec=4:pages=2",
                "pgm-zero:pages=2:eps_rec=4:gran=item",
            ),
            (
                "pgm-zero:eps=1000000",
                "pgm-zero:eps=1000000:eps_rec=8:gran=item",
            ),
            ("rs-zero", "rs-zero:pages=1.5:bits=18:gran=item"),
            ("cpr-pgm:gran=16", "cpr-pgm:eps=64:gran=16"),
            ("leco-zonemap-rough", "leco-zonemap-rough:gran=item"),
            ("auto:pages=1.333:gran=page", "auto:pages=1.333:gran=page"),
            ("pgm:gran=16:eps=4", "pgm:eps=4:eps_rec=8:gran=16"),
            ("rmi", "rmi:leaves=1Mi:gran=item"),
        ] {
            let (model, gran) = DiskModelSpec::parse_with_granularity(item).expect(item);
            assert_eq!(model.label_at(gran), label, "{item}");
        }
        for item in [
            "pgm-zero:eps=1:gran=page",
            "rs-zero:eps=1:pages=2",
            "pgm-zero:pages=0.5",
            "auto:pages=1001",
            "zonemap:eps=3",
            "zonemap:gran=0",
            "sorted",
            "alex",
            "leco-zonemap:x",
        ] {
            assert!(
                DiskModelSpec::parse_with_granularity(item).is_none(),
                "{item}"
            );
        }
    }
}
