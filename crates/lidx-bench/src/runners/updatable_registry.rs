//! The updatable on-disk indexes of paper 003, by `--index` spec ([`UpdatableSpec`], the
//! catalog's [`lidx::catalog::DiskMapSpec`]): what [`crate::updatable_runner`] builds, as
//! `Box<dyn DiskMap<u64>>`, for each run ([`DiskMapFiles`]).
//!
//! ```text
//! btree                 the disk B+-tree (paper 003 §4), bulk loaded full
//! btree:fill=70         ... with 70% full nodes (room for inserts before splits)
//! alex                  ALEX on disk (paper 003 §3, Layout #2)
//! lipp                  LIPP on disk
//! dfiting:eps=64        the FITing-tree on disk (segments with delta buffers)
//! dpgm:eps=64           the dynamic PGM on disk (LSM-style levels of static PGMs)
//! btree-learned         Table 5's hybrid design: B+-tree leaves under a learned model
//! film:eps=64:mem=10Mi  FILM (paper 002 §10.5): keys in learned leaves, payloads in an LRU
//!                       cache of `mem` bytes, the rest evicted to appended pages
//! ```
//!
//! `eps` defaults to 64, paper 003 §5.3's setting for the FITing-tree and the PGM. Whether the
//! inner part lives in memory (§6.2, Figure 9) is a runtime choice given at build
//! ([`UpdateOptions::resident`]), not part of the spec.
//!
//! [`DiskMapFiles::build_with`] is the one place that maps a spec to its `build`, one match arm
//! per structure. Every entry's payload is [`payload_of`] its key, so the runner can check every
//! answer.

use lidx::disk::DiskMap;
use lidx::disk::{BTreeLearned, BTreeLearnedParams};
use lidx::disk::{DiskAlex, DiskAlexParams};
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::disk::{DiskFiting, DiskFitingParams};
use lidx::disk::{DiskLipp, DiskLippParams};
use lidx::disk::{DiskPgm, DiskPgmParams};
use lidx::disk::{Film, FilmParams};
use lidx::io::Storage;
use lidx::mem::PgmParams;

pub use lidx::catalog::DiskMapSpec as UpdatableSpec;

use crate::disk_workload::payload_of;
use crate::error::Result;

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

/// The payload every index is built with: [`payload_of`] its key.
pub fn bench_payload(_: usize, key: &u64, out: &mut [u8]) {
    payload_of(*key, out)
}

/// Builds and opens a parsed [`UpdatableSpec`]: the disk-map role of the catalog. An extension
/// trait (the bench adds no inherent method to a catalog type) whose methods are all provided.
pub trait DiskMapFiles {
    /// The spec itself: every other method is provided, over it.
    fn spec(&self) -> &UpdatableSpec;

    /// The file name a run builds the index under: its label made file-name friendly, with
    /// an `upd.` prefix so that it never replaces a file `lidx build` made for the read-only
    /// benchmark (a run's writes change the index). An index of several files names the
    /// others after it.
    fn file_name(&self) -> String {
        format!("upd.{}", self.saved_name())
    }

    /// The file name `lidx build` saves the index under: its label made file-name friendly
    /// (`alex.lidx`, `dfiting.eps=64.lidx`); an index of several files names the others after
    /// it ([`Storage::files_of`] lists them all).
    fn saved_name(&self) -> String {
        format!("{}.lidx", self.spec().label().replace(':', "."))
    }

    /// Opens the index saved in `storage` under `name`, for writing too when `writable`, its
    /// inner part in memory unless `resident` is [`Resident::None`] (as [`UpdateOptions`]).
    /// The structure's own `open` checks the files (magic, version, checksums) and reads the
    /// parameters they were built with.
    fn open(
        &self,
        storage: &Storage,
        name: &str,
        writable: bool,
        resident: Resident,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        let in_memory = resident != Resident::None;
        Ok(match self.spec() {
            UpdatableSpec::BTree { .. } => {
                Box::new(DiskBTree::<u64>::open(storage, name, resident, writable)?)
            }
            UpdatableSpec::Alex {} => Box::new(DiskAlex::open(storage, name, writable, in_memory)?),
            UpdatableSpec::Lipp {} => Box::new(DiskLipp::open(storage, name, writable, in_memory)?),
            UpdatableSpec::Dfiting { .. } => {
                Box::new(DiskFiting::open(storage, name, writable, resident)?)
            }
            UpdatableSpec::Dpgm { .. } => Box::new(DiskPgm::open(storage, name, writable)?),
            UpdatableSpec::BtreeLearned {} => {
                Box::new(BTreeLearned::<u64>::open(storage, name, writable)?)
            }
            UpdatableSpec::Film { .. } => Box::new(Film::open(storage, name, writable)?),
        })
    }

    /// Builds the index in `storage` under [`Self::file_name`] from the sorted unique `keys`,
    /// open for writing.
    fn build(
        &self,
        storage: &Storage,
        keys: &[u64],
        options: &UpdateOptions,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        self.build_as(storage, &self.file_name(), keys, options)
    }

    /// Builds the index in `storage` under the file `name` from the sorted unique `keys`, open
    /// for writing, every payload [`bench_payload`] of its key.
    fn build_as(
        &self,
        storage: &Storage,
        name: &str,
        keys: &[u64],
        options: &UpdateOptions,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        self.build_with(storage, name, keys, &bench_payload, options)
    }

    /// [`Self::build_as`] with entry `i`'s payload written by `payload_of(i, &keys[i], out)`
    /// (TPC-C's indexes hold tuple ids): the one place a new structure is plugged in, with a
    /// match arm calling its `build`.
    fn build_with(
        &self,
        storage: &Storage,
        name: &str,
        keys: &[u64],
        payload_of: &dyn Fn(usize, &u64, &mut [u8]),
        options: &UpdateOptions,
    ) -> Result<Box<dyn DiskMap<u64>>> {
        let payload_size = options.payload_size;
        Ok(match *self.spec() {
            UpdatableSpec::BTree { fill } => {
                let params = DiskBTreeParams {
                    payload_size,
                    fill_factor: f64::from(fill) / 100.0,
                    resident: options.resident,
                };
                let map = DiskBTree::build(storage, name, keys, payload_of, params)?;
                Box::new(map)
            }
            UpdatableSpec::Alex {} => {
                let params = DiskAlexParams {
                    payload_size,
                    ..DiskAlexParams::default()
                };
                let mut alex = DiskAlex::build(storage, name, keys, payload_of, params)?;
                if options.resident == Resident::None {
                    return Ok(Box::new(alex));
                }
                DiskMap::flush(&mut alex)?;
                drop(alex);
                Box::new(DiskAlex::open(storage, name, true, true)?)
            }
            UpdatableSpec::Lipp {} => {
                let params = DiskLippParams {
                    payload_size,
                    ..DiskLippParams::default()
                };
                let mut lipp = DiskLipp::build(storage, name, keys, payload_of, params)?;
                if options.resident == Resident::None {
                    return Ok(Box::new(lipp));
                }
                DiskMap::flush(&mut lipp)?;
                drop(lipp);
                Box::new(DiskLipp::open(storage, name, true, true)?)
            }
            UpdatableSpec::Dfiting { eps } => {
                let params = DiskFitingParams {
                    payload_size,
                    eps,
                    resident: options.resident,
                    ..DiskFitingParams::default()
                };
                let map = DiskFiting::build(storage, name, keys, payload_of, params)?;
                Box::new(map)
            }
            UpdatableSpec::Dpgm { eps } => {
                let defaults = DiskPgmParams::default();
                let params = DiskPgmParams {
                    payload_size,
                    pgm: PgmParams {
                        eps,
                        ..defaults.pgm
                    },
                    ..defaults
                };
                Box::new(DiskPgm::build(storage, name, keys, payload_of, params)?)
            }
            UpdatableSpec::BtreeLearned {} => {
                let params = BTreeLearnedParams {
                    payload_size,
                    ..BTreeLearnedParams::default()
                };
                let map = BTreeLearned::<u64>::build(storage, name, keys, payload_of, params)?;
                Box::new(map)
            }
            UpdatableSpec::Film { eps, mem } => {
                let params = FilmParams {
                    payload_size,
                    eps,
                    memory_limit: mem,
                };
                Box::new(Film::build(storage, name, keys, payload_of, params)?)
            }
        })
    }
}

impl DiskMapFiles for UpdatableSpec {
    fn spec(&self) -> &UpdatableSpec {
        self
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
            ("film:mem=1Mi", "film:eps=64:mem=1048576"),
        ] {
            assert!(UpdatableSpec::is_updatable_name(name));
            assert_eq!(UpdatableSpec::parse(name).unwrap().label(), label);
        }
        assert!(!UpdatableSpec::is_updatable_name("btree:fill=70"));
        assert_eq!(UpdatableSpec::names().len(), 7);
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
