//! The on-disk indexes over byte-string keys: `--index` specs of `lidx build` and
//! `lidx bench --on-disk` on text and `str16` datasets (the catalog's [`ByteIndexSpec`]), built
//! into files and reopened as `Box<dyn ByteDiskIndex>` ([`ByteIndexFiles`]), as
//! [`crate::disk_registry`] does for numeric keys.
//!
//! ```text
//! byte-table          lidx::disk::ByteTable: sorted records in blocks, located by the string
//!                     index over one separator per block (eps 32), one block per lookup
//!                     (paper 002 §9's static stage, over byte keys)
//! byte-table:eps=16   ... with the separator model's eps (smaller: narrower windows, more memory)
//! byte-btree          lidx::disk::ByteBTree: the byte B+-tree, inner nodes in memory, one
//!                     leaf read per lookup (paper 002 §10's equal-memory baseline)
//! ```
//!
//! A byte table is one file, `byte-table.eps=<e>.lidx`. A byte B+-tree is two, as the store
//! keeps it: its page file `byte-btree.lidx` and the checkpoint image that lists its leaves,
//! `byte-btree.image.lidx`, written after the page file is synced; opening reads the image and
//! no leaf. Every file carries its structure's magic number, format version and block
//! checksums, so a file opened as the other kind (or as a numeric index) is a typed
//! `BadMagic` error, never a figure of the wrong structure.
//!
//! Every record's value is [`payload_of_bytes`] its key, `payload_size` bytes, so answers can
//! be checked. The byte B+-tree takes keys of up to [`MAX_KEY_BYTES`] (4 KiB), as the store's
//! `btree` engine does; a longer one is [`lidx::Error::SizeLimit`]. Keys are the dataset's sorted unique byte strings (a `str16` key is its 16
//! bytes).

use std::ops::Bound;
use std::sync::Arc;

use lidx::disk::ByteBTree;
use lidx::disk::{ByteTable, ByteTableParams, ByteTableWriter};
use lidx::io::Storage;
use lidx::kv::MAX_KEY_BYTES;
use lidx::mem::StringIndexParams;
use lidx::raw::disk::byte_btree::Image;

use crate::disk_workload::payload_of_bytes;
pub use lidx::catalog::ByteIndexSpec;

use crate::error::Result;
use crate::store_keys::RankedKeys;

/// Records a byte B+-tree is built with per write: each batch appends to the rightmost leaf,
/// so leaves are filled whole, and memory stays bounded on large datasets.
const BTREE_BATCH: usize = 1 << 16;

/// What the byte-key runner asks of an on-disk index.
pub trait ByteDiskIndex: Send + Sync {
    /// Number of records.
    fn len(&self) -> u64;

    /// True when the index holds no record.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value stored under `key`, `None` when absent.
    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>>;

    /// Clears `out` and fills it with the first `limit` records whose key is `>= start`, in
    /// key order.
    fn scan(
        &self,
        start: &[u8],
        limit: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()>;

    /// Bytes kept in memory (models, separators, inner nodes).
    fn memory_bytes(&self) -> usize;

    /// Bytes of the index's files.
    fn disk_bytes(&self) -> u64;

    /// A short description for reports: structure and parameters.
    fn describe(&self) -> String;
}

impl ByteDiskIndex for Arc<ByteTable> {
    fn len(&self) -> u64 {
        ByteTable::len(self)
    }

    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        ByteTable::get(self, key)
    }

    fn scan(
        &self,
        start: &[u8],
        limit: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        let mut cursor = self.cursor(Bound::Included(start.to_vec()), Bound::Unbounded, true);
        take_records(limit, out, || cursor.next_record())
    }

    fn memory_bytes(&self) -> usize {
        ByteTable::memory_bytes(self)
    }

    fn disk_bytes(&self) -> u64 {
        ByteTable::disk_bytes(self)
    }

    fn describe(&self) -> String {
        let h = self.header();
        format!(
            "byte table, {} records in {} data blocks, string index eps {} threshold {}, \
             {} separator bytes",
            h.records, h.data_blocks, h.params.model.eps, h.params.model.threshold, h.index_bytes
        )
    }
}

/// Clears `out` and fills it with up to `limit` records of a cursor's `next`.
fn take_records(
    limit: usize,
    out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    mut next: impl FnMut() -> lidx::Result<Option<(Vec<u8>, Vec<u8>)>>,
) -> lidx::Result<()> {
    out.clear();
    while out.len() < limit {
        match next()? {
            Some(record) => out.push(record),
            None => break,
        }
    }
    Ok(())
}

/// A byte B+-tree opened read-only, with its image's size for [`ByteDiskIndex::disk_bytes`].
struct SavedBTree {
    tree: ByteBTree,
    image_bytes: u64,
    leaves: usize,
}

impl ByteDiskIndex for SavedBTree {
    fn len(&self) -> u64 {
        self.tree.len()
    }

    fn get(&self, key: &[u8]) -> lidx::Result<Option<Vec<u8>>> {
        self.tree.get(key)
    }

    fn scan(
        &self,
        start: &[u8],
        limit: usize,
        out: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> lidx::Result<()> {
        let mut cursor = self
            .tree
            .cursor(Bound::Included(start.to_vec()), Bound::Unbounded, true);
        take_records(limit, out, || cursor.next_record())
    }

    fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes()
    }

    fn disk_bytes(&self) -> u64 {
        self.tree.disk_bytes() + self.image_bytes
    }

    fn describe(&self) -> String {
        format!(
            "byte B+-tree, {} records in {} leaves, inner nodes in memory",
            self.tree.len(),
            self.leaves
        )
    }
}

/// Builds and opens a parsed [`ByteIndexSpec`]: the byte-key disk-index role of the catalog. An
/// extension trait (the bench adds no inherent method to a catalog type).
pub trait ByteIndexFiles: Sized {
    /// The spec itself: every method but [`Self::from_file_name`] is provided, over it.
    fn spec(&self) -> &ByteIndexSpec;

    /// The spec whose [`Self::file_name`] is `name` (`byte-table.eps=16.lidx`), `None` when no
    /// spec is named so.
    fn from_file_name(name: &str) -> Option<Self>;

    /// [`lidx::Error::IndexMismatch`] unless `model`, the separator model a byte table `file`
    /// records, is this spec's (eps as asked, the threshold at its default); `Ok` for a byte
    /// B+-tree spec, which has no model.
    fn check_table(&self, file: &str, model: StringIndexParams) -> Result<()> {
        let ByteIndexSpec::Table { eps } = *self.spec() else {
            return Ok(());
        };
        let asked = StringIndexParams {
            eps,
            ..StringIndexParams::default()
        };
        if model != asked {
            return Err(lidx::Error::IndexMismatch {
                file: file.to_string(),
                holds: table_label(model),
                asked: table_label(asked),
            }
            .into());
        }
        Ok(())
    }

    /// The file the index is found by: its label made file-name friendly, as
    /// [`crate::disk_registry::DiskIndexSpec::file_name`] (a byte B+-tree's page file).
    fn file_name(&self) -> String {
        format!("{}.lidx", self.spec().label().replace(':', "."))
    }

    /// Every file of the index: the byte B+-tree's image beside its page file.
    fn file_names(&self) -> Vec<String> {
        match self.spec() {
            ByteIndexSpec::Table { .. } => vec![self.file_name()],
            ByteIndexSpec::BTree {} => vec![self.file_name(), image_name(self.spec())],
        }
    }

    /// Builds the index in `storage` from the sorted unique `keys`, each with
    /// [`payload_of_bytes`] as its `payload_size`-byte value.
    fn build(&self, storage: &Storage, keys: &RankedKeys, payload_size: usize) -> Result<()> {
        let mut value = vec![0u8; payload_size];
        match *self.spec() {
            ByteIndexSpec::Table { eps } => {
                let model = StringIndexParams {
                    eps,
                    ..StringIndexParams::default()
                };
                let mut writer =
                    ByteTableWriter::create(storage, &self.file_name(), ByteTableParams { model })?;
                for rank in 0..keys.len() {
                    let key = keys.get(rank);
                    payload_of_bytes(key, &mut value);
                    writer.add(key, &value)?;
                }
                writer.finish()?;
            }
            ByteIndexSpec::BTree {} => {
                let mut tree = ByteBTree::create(storage, &self.file_name())?;
                let mut values = Vec::new();
                for first in (0..keys.len()).step_by(BTREE_BATCH) {
                    let ranks = first..(first + BTREE_BATCH).min(keys.len());
                    values.clear();
                    for rank in ranks.clone() {
                        let key = keys.get(rank);
                        if key.len() > MAX_KEY_BYTES {
                            return Err(lidx::Error::SizeLimit {
                                what: "key",
                                len: key.len(),
                                min: 1,
                                max: MAX_KEY_BYTES,
                            }
                            .into());
                        }
                        payload_of_bytes(key, &mut value);
                        values.extend_from_slice(&value);
                    }
                    let ops: Vec<(&[u8], Option<&[u8]>)> = ranks
                        .enumerate()
                        .map(|(i, rank)| {
                            let v = &values[i * payload_size..(i + 1) * payload_size];
                            (keys.get(rank), Some(v))
                        })
                        .collect();
                    tree.apply(&ops, 0)?;
                }
                tree.sync()?;
                tree.image().write(storage, &image_name(self.spec()))?;
            }
        }
        Ok(())
    }

    /// Opens the index's files in `storage` read-only. A file holding another structure is
    /// [`lidx::Error::BadMagic`]; a byte table built with other model parameters than this
    /// spec's (its header records them) is [`lidx::Error::IndexMismatch`], so two tables
    /// swapped in a `--dir` never report each other's figures. A byte B+-tree has no build
    /// parameters beyond its block size, which opening checks.
    fn open(&self, storage: &Storage) -> Result<Box<dyn ByteDiskIndex>> {
        match *self.spec() {
            ByteIndexSpec::Table { .. } => {
                let name = self.file_name();
                let table = ByteTable::open(storage, &name)?;
                self.check_table(&name, table.header().params.model)?;
                Ok(Box::new(Arc::new(table)))
            }
            ByteIndexSpec::BTree {} => {
                let image_name = image_name(self.spec());
                let image = Image::read(storage, &image_name)?;
                let image_bytes =
                    storage.open(&image_name, false)?.len_blocks() * storage.block_size() as u64;
                let leaves = image.leaves.len();
                let tree = ByteBTree::open(storage, &self.file_name(), Some(image), 0, true)?;
                Ok(Box::new(SavedBTree {
                    tree,
                    image_bytes,
                    leaves,
                }))
            }
        }
    }
}

impl ByteIndexFiles for ByteIndexSpec {
    fn spec(&self) -> &ByteIndexSpec {
        self
    }

    fn from_file_name(name: &str) -> Option<ByteIndexSpec> {
        let stem = name.strip_suffix(".lidx")?;
        ByteIndexSpec::parse(&stem.replace('.', ":"))
            .ok()
            .filter(|spec| spec.file_name() == name)
    }
}

/// The checkpoint image of a byte B+-tree, named after its page file.
fn image_name(spec: &ByteIndexSpec) -> String {
    format!("{}.image.lidx", spec.label().replace(':', "."))
}

/// A byte table's spec label with its model's threshold, which specs leave at its default.
fn table_label(model: StringIndexParams) -> String {
    format!(
        "byte-table:eps={} (separator threshold {})",
        model.eps, model.threshold
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BenchError;

    #[test]
    fn specs_parse_and_label() {
        for text in ["byte-table:eps=16", "byte-btree"] {
            assert_eq!(ByteIndexSpec::parse(text).unwrap().label(), text);
        }
        assert_eq!(
            ByteIndexSpec::parse("byte-table").unwrap(),
            ByteIndexSpec::Table { eps: 32 }
        );
        for bad in [
            "byte-table:eps=0",
            "byte-table:x=1",
            "byte-btree:fill=70",
            "btree",
            "",
        ] {
            assert!(ByteIndexSpec::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ByteIndexSpec::BTree {}.file_names(),
            ["byte-btree.lidx", "byte-btree.image.lidx"]
        );
        assert!(ByteIndexSpec::parse_list(" , ").is_err());
    }

    #[test]
    fn a_key_over_the_byte_btree_limit_is_a_typed_error() {
        let long = vec![b'k'; MAX_KEY_BYTES + 1];
        let keys = RankedKeys::encode(&crate::keyfile::Keys::Bytes(vec![b"a".to_vec(), long]));
        let storage = Storage::ram();
        let err = ByteIndexSpec::BTree {}
            .build(&storage, &keys, 8)
            .unwrap_err();
        assert!(
            matches!(err, BenchError::Index(lidx::Error::SizeLimit { len, .. }) if len == MAX_KEY_BYTES + 1),
            "{err}"
        );
        ByteIndexSpec::Table { eps: 8 }
            .build(&storage, &keys, 8)
            .unwrap();
    }
}
