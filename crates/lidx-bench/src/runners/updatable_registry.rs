//! The updatable on-disk indexes of paper 003, by `--index` spec: what
//! [`crate::updatable_runner`] builds, as `Box<dyn DiskMap<u64>>`, for each run.
//!
//! ```text
//! btree                 the disk B+-tree (paper 003 §4), bulk loaded full
//! btree:fill=70         ... with 70% full nodes (room for inserts before splits)
//! alex                  ALEX on disk (paper 003 §3, Layout #2)
//! lipp                  LIPP on disk
//! dfiting:eps=64        the FITing-tree on disk (segments with delta buffers)
//! dpgm:eps=64           the dynamic PGM on disk (LSM-style levels of static PGMs)
//! btree-learned         Table 5's hybrid design: B+-tree leaves under a learned model
//! ```
//!
//! `eps` defaults to 64, paper 003 §5.3's setting for the FITing-tree and the PGM. Whether the
//! inner part lives in memory (§6.2, Figure 9) is a runtime choice given at build
//! ([`UpdateOptions::resident`]), not part of the spec.
//!
//! Only the structures this build of lidx has are built: [`UpdatableSpec::builder`] is the one
//! place that maps a spec to its `build`, one match arm per structure, and a name without one
//! is refused by [`UpdatableSpec::parse`] with [`BenchError::BadSpec`] before anything runs.
//! Every entry's payload is [`payload_of`] its key, so the runner can check every answer.

use lidx::disk::DiskMap;
use lidx::disk::{BTreeLearned, BTreeLearnedParams};
use lidx::disk::{DiskAlex, DiskAlexParams};
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskFiting, DiskFitingParams};
use lidx::disk::{DiskLipp, DiskLippParams};
use lidx::disk::{DiskPgm, DiskPgmParams};
use lidx::io::Storage;
use lidx::mem::PgmParams;

use crate::disk_registry::parse_items;
use crate::disk_workload::payload_of;
use crate::error::{BenchError, Result};

/// The accepted forms, for error messages and help.
pub const UPDATABLE_INDEX_FORMS: &str = "btree[:fill=<percent>], alex, lipp, \
    dfiting[:eps=<n>], dpgm[:eps=<n>], btree-learned";

/// The error bound of `dfiting` and `dpgm` when the spec gives none (paper 003 §5.3).
pub const DEFAULT_EPS: usize = 64;

/// Names only the updatable registry knows (`btree` is in both it and the read-only one).
const UPDATABLE_ONLY: [&str; 5] = ["alex", "lipp", "dfiting", "dpgm", "btree-learned"];

/// How an index is built, beyond its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateOptions {
    /// Bytes of payload per key.
    pub payload_size: usize,
    /// Inner nodes in memory (`AllInner`, paper 003 §6.2) or on disk (`None`, §6.1); the
    /// B+-tree also takes a number of top levels. The learned structures read `None` as "inner
    /// part on disk" and anything else as "in memory".
    pub resident: Resident,
}

/// Builds the index of a spec in `storage` under the file name `name` from the sorted unique
/// keys, open for writing afterwards.
pub type Builder = fn(
    spec: &UpdatableSpec,
    storage: &Storage,
    name: &str,
    keys: &[u64],
    options: &UpdateOptions,
) -> lidx::Result<Box<dyn DiskMap<u64>>>;

/// The payload every index is built with: [`payload_of`] its key.
pub fn bench_payload(_: usize, key: &u64, out: &mut [u8]) {
    payload_of(*key, out)
}

/// One updatable index of an `--index` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdatableSpec {
    /// The disk B+-tree.
    BTree {
        /// Bulk-load fill, percent of each node's capacity (1..=100).
        fill: u32,
    },
    /// ALEX on disk.
    Alex,
    /// LIPP on disk.
    Lipp,
    /// The FITing-tree on disk.
    Dfiting {
        /// Error bound of the segments.
        eps: usize,
    },
    /// The dynamic PGM on disk.
    Dpgm {
        /// Error bound of each level's PGM.
        eps: usize,
    },
    /// The hybrid design of paper 003 Table 5.
    BtreeLearned,
}

impl UpdatableSpec {
    /// Parses one item such as `btree:fill=70` or `dpgm:eps=32`; a structure this build does
    /// not have is [`BenchError::BadSpec`].
    pub fn parse(item: &str) -> Result<UpdatableSpec> {
        let bad = |expected: String| BenchError::BadSpec {
            what: "updatable on-disk index",
            got: item.to_string(),
            expected,
        };
        let forms = || bad(UPDATABLE_INDEX_FORMS.to_string());
        let mut parts = item.trim().split(':');
        let name = parts.next().unwrap_or_default();
        let mut value = |key: &str| -> Result<Option<usize>> {
            match parts.next() {
                None => Ok(None),
                Some(part) => match part.split_once('=') {
                    Some((k, v)) if k == key => crate::registry::parse_count(v)
                        .and_then(|c| usize::try_from(c).ok())
                        .map(Some)
                        .ok_or_else(forms),
                    _ => Err(forms()),
                },
            }
        };
        let eps = |v: Option<usize>| v.unwrap_or(DEFAULT_EPS);
        let spec = match name {
            "btree" => UpdatableSpec::BTree {
                fill: match value("fill")? {
                    None => 100,
                    Some(f @ 1..=100) => f as u32,
                    Some(_) => return Err(forms()),
                },
            },
            "dfiting" => UpdatableSpec::Dfiting {
                eps: eps(value("eps")?),
            },
            "dpgm" => UpdatableSpec::Dpgm {
                eps: eps(value("eps")?),
            },
            "alex" => UpdatableSpec::Alex,
            "lipp" => UpdatableSpec::Lipp,
            "btree-learned" => UpdatableSpec::BtreeLearned,
            _ => return Err(forms()),
        };
        if parts.next().is_some() {
            return Err(forms());
        }
        if spec.builder().is_none() {
            return Err(bad(format!(
                "an updatable index this build of lidx has: {} ({name} is not built yet)",
                Self::available().join(", ")
            )));
        }
        Ok(spec)
    }

    /// Parses a comma-separated list (at least one item).
    pub fn parse_list(list: &str) -> Result<Vec<UpdatableSpec>> {
        parse_items(list, UPDATABLE_INDEX_FORMS, UpdatableSpec::parse)
    }

    /// True when `item` names a structure only the updatable registry has (`alex`, `lipp`,
    /// `dfiting`, `dpgm`, `btree-learned`), with or without parameters.
    pub fn is_updatable_name(item: &str) -> bool {
        let name = item.trim().split(':').next().unwrap_or_default();
        UPDATABLE_ONLY.contains(&name)
    }

    /// The structures this build has, by name.
    pub fn available() -> Vec<&'static str> {
        let every = [
            ("btree", UpdatableSpec::BTree { fill: 100 }),
            ("alex", UpdatableSpec::Alex),
            ("lipp", UpdatableSpec::Lipp),
            ("dfiting", UpdatableSpec::Dfiting { eps: DEFAULT_EPS }),
            ("dpgm", UpdatableSpec::Dpgm { eps: DEFAULT_EPS }),
            ("btree-learned", UpdatableSpec::BtreeLearned),
        ];
        every
            .into_iter()
            .filter(|(_, spec)| spec.builder().is_some())
            .map(|(name, _)| name)
            .collect()
    }

    /// The canonical spelling, every parameter written out.
    pub fn label(&self) -> String {
        match self {
            UpdatableSpec::BTree { fill } => format!("btree:fill={fill}"),
            UpdatableSpec::Alex => "alex".to_string(),
            UpdatableSpec::Lipp => "lipp".to_string(),
            UpdatableSpec::Dfiting { eps } => format!("dfiting:eps={eps}"),
            UpdatableSpec::Dpgm { eps } => format!("dpgm:eps={eps}"),
            UpdatableSpec::BtreeLearned => "btree-learned".to_string(),
        }
    }

    /// The file name a run builds the index under: its label made file-name friendly, with
    /// an `upd.` prefix so that it never replaces a file `lidx build` made for the read-only
    /// benchmark (a run's writes change the index). An index of several files names the
    /// others after it.
    pub fn file_name(&self) -> String {
        format!("upd.{}", self.saved_name())
    }

    /// The file name `lidx build` saves the index under: its label made file-name friendly
    /// (`alex.lidx`, `dfiting.eps=64.lidx`); an index of several files names the others after
    /// it ([`Storage::files_of`] lists them all).
    pub fn saved_name(&self) -> String {
        format!("{}.lidx", self.label().replace(':', "."))
    }

    /// Opens the index saved in `storage` under `name`, for writing too when `writable`, its
    /// inner part in memory unless `resident` is [`Resident::None`] (as [`UpdateOptions`]).
    /// The structure's own `open` checks the files (magic, version, checksums) and reads the
    /// parameters they were built with.
    pub fn open(
        &self,
        storage: &Storage,
        name: &str,
        writable: bool,
        resident: Resident,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        let in_memory = resident != Resident::None;
        Ok(match self {
            UpdatableSpec::BTree { .. } => {
                Box::new(DiskBTree::<u64>::open(storage, name, resident, writable)?)
            }
            UpdatableSpec::Alex => Box::new(DiskAlex::open(storage, name, writable, in_memory)?),
            UpdatableSpec::Lipp => Box::new(DiskLipp::open(storage, name, writable, in_memory)?),
            UpdatableSpec::Dfiting { .. } => {
                Box::new(DiskFiting::open(storage, name, writable, resident)?)
            }
            UpdatableSpec::Dpgm { .. } => Box::new(DiskPgm::open(storage, name, writable)?),
            UpdatableSpec::BtreeLearned => {
                Box::new(BTreeLearned::<u64>::open(storage, name, writable)?)
            }
        })
    }

    /// True for the B+-tree, the baseline every figure is a ratio to.
    pub fn is_btree(&self) -> bool {
        matches!(self, UpdatableSpec::BTree { .. })
    }

    /// How this structure is built, `None` when this build of lidx does not have it: the one
    /// place a new structure is plugged in, with a match arm calling its `build`.
    pub fn builder(&self) -> Option<Builder> {
        match self {
            UpdatableSpec::BTree { .. } => Some(|spec, storage, name, keys, options| {
                let UpdatableSpec::BTree { fill } = *spec else {
                    unreachable!("the B+-tree's builder is only given its own spec")
                };
                let params = DiskBTreeParams {
                    payload_size: options.payload_size,
                    fill_factor: f64::from(fill) / 100.0,
                    resident: options.resident,
                };
                let tree = DiskBTree::build(storage, name, keys, bench_payload, params)?;
                Ok(Box::new(tree))
            }),
            UpdatableSpec::Alex => Some(|_, storage, name, keys, options| {
                let params = DiskAlexParams {
                    payload_size: options.payload_size,
                    ..DiskAlexParams::default()
                };
                let mut alex = DiskAlex::build(storage, name, keys, bench_payload, params)?;
                if options.resident == Resident::None {
                    return Ok(Box::new(alex));
                }
                DiskMap::flush(&mut alex)?;
                drop(alex);
                Ok(Box::new(DiskAlex::open(storage, name, true, true)?))
            }),
            UpdatableSpec::Lipp => Some(|_, storage, name, keys, options| {
                let params = DiskLippParams {
                    payload_size: options.payload_size,
                    ..DiskLippParams::default()
                };
                let mut lipp = DiskLipp::build(storage, name, keys, bench_payload, params)?;
                if options.resident == Resident::None {
                    return Ok(Box::new(lipp));
                }
                DiskMap::flush(&mut lipp)?;
                drop(lipp);
                Ok(Box::new(DiskLipp::open(storage, name, true, true)?))
            }),
            UpdatableSpec::Dfiting { .. } => Some(|spec, storage, name, keys, options| {
                let UpdatableSpec::Dfiting { eps } = *spec else {
                    unreachable!("the FITing-tree's builder is only given its own spec")
                };
                let params = DiskFitingParams {
                    payload_size: options.payload_size,
                    eps,
                    resident: options.resident,
                    ..DiskFitingParams::default()
                };
                Ok(Box::new(DiskFiting::build(
                    storage,
                    name,
                    keys,
                    bench_payload,
                    params,
                )?))
            }),
            UpdatableSpec::Dpgm { .. } => Some(|spec, storage, name, keys, options| {
                let UpdatableSpec::Dpgm { eps } = *spec else {
                    unreachable!("the PGM's builder is only given its own spec")
                };
                let defaults = DiskPgmParams::default();
                let params = DiskPgmParams {
                    payload_size: options.payload_size,
                    pgm: PgmParams {
                        eps,
                        ..defaults.pgm
                    },
                    ..defaults
                };
                Ok(Box::new(DiskPgm::build(
                    storage,
                    name,
                    keys,
                    bench_payload,
                    params,
                )?))
            }),
            UpdatableSpec::BtreeLearned => Some(|_, storage, name, keys, options| {
                let params = BTreeLearnedParams {
                    payload_size: options.payload_size,
                    ..BTreeLearnedParams::default()
                };
                Ok(Box::new(BTreeLearned::<u64>::build(
                    storage,
                    name,
                    keys,
                    bench_payload,
                    params,
                )?))
            }),
        }
    }

    /// Builds the index in `storage` under [`Self::file_name`] from the sorted unique `keys`,
    /// open for writing.
    pub fn build(
        &self,
        storage: &Storage,
        keys: &[u64],
        options: &UpdateOptions,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        self.build_as(storage, &self.file_name(), keys, options)
    }

    /// Builds the index in `storage` under the file `name` from the sorted unique `keys`, open
    /// for writing.
    pub fn build_as(
        &self,
        storage: &Storage,
        name: &str,
        keys: &[u64],
        options: &UpdateOptions,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        let build = self.builder().ok_or_else(|| BenchError::BadSpec {
            what: "updatable on-disk index",
            got: self.label(),
            expected: format!("one of {}", Self::available().join(", ")),
        })?;
        Ok(build(self, storage, name, keys, options)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_labels_and_refuses() {
        assert_eq!(
            UpdatableSpec::parse("btree").unwrap(),
            UpdatableSpec::BTree { fill: 100 }
        );
        assert_eq!(
            UpdatableSpec::parse(" btree:fill=70").unwrap().label(),
            "btree:fill=70"
        );
        for bad in [
            "btree:fill=0",
            "btree:fill=101",
            "btree:eps=3",
            "btree:fill=7:x",
            "tree",
            "",
        ] {
            let err = UpdatableSpec::parse(bad).unwrap_err().to_string();
            assert!(err.contains("dfiting[:eps=<n>]"), "{bad}: {err}");
        }
        for (name, label) in [
            ("alex", "alex"),
            ("lipp", "lipp"),
            ("dfiting:eps=32", "dfiting:eps=32"),
            ("dpgm", "dpgm:eps=64"),
            ("btree-learned", "btree-learned"),
        ] {
            assert!(UpdatableSpec::is_updatable_name(name));
            assert_eq!(UpdatableSpec::parse(name).unwrap().label(), label);
        }
        assert!(!UpdatableSpec::is_updatable_name("btree:fill=70"));
        assert_eq!(UpdatableSpec::available().len(), 6);
        assert_eq!(
            UpdatableSpec::parse_list("btree,btree:fill=50")
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            UpdatableSpec::parse("btree:fill=70").unwrap().file_name(),
            "upd.btree.fill=70.lidx"
        );
    }
}
