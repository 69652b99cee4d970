//! `lidx verify --dir DIR`: read every index file and table in a directory and say what is
//! damaged (issue 13).
//!
//! Each file is recognized by the magic number in its first bytes, never by its name, and read
//! whole through the structure's own check:
//! - a disk B+-tree (`lidx build --index btree`): every inner node (read at open) and every
//!   leaf along the sibling chain, each link checked against the tree, the entries counted
//!   against the header;
//! - a static learned index (`pgm`, `rs`, zone maps, ...): every data block in order, the key
//!   order across blocks, every key found in its model's window, the count against the header;
//! - a byte table (`lidx build --index byte-table` of string keys): every block and record,
//!   every key found through its model;
//! - a byte B+-tree (`lidx build --index byte-btree`: a page file and the image that lists its
//!   leaves): every leaf, every key found through the inner nodes;
//! - a join table (`lidx table create`): every record block, the content fingerprint against
//!   the header's;
//! - a saved join index (`<table>.<index>.idx`): its header and model checksums, and its binding
//!   to the table beside it (the same record count and content fingerprint: a stale index is
//!   damage, since `lidx join` would refuse it).
//!
//! A file named as `lidx build` names an index (`btree.fill=70.lidx`,
//! `pgm.eps=64.eps_rec=4.gran=item.lidx`, `byte-table.eps=16.lidx`) must hold that index: its
//! header records its build parameters, and a file holding others (renamed over another's
//! name) is damage ([`lidx::Error::IndexMismatch`]), since `lidx bench --on-disk` would refuse
//! it. A file of another name is read as whatever it holds.
//!
//! What it cannot see: a record of a static learned file or B+-tree changed under a valid
//! checksum that keeps the keys in order and within the model's error (those files carry no
//! content fingerprint; join tables do).
//!
//! A directory that holds a store (a `STORE` file) is checked as `lidx kv check` does. Every
//! block's checksum is verified on the way by the device. Files that are not lidx's are listed
//! as skipped. Exit code 1 when anything is damaged.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use lidx::disk::btree::{DiskBTree, Resident};
use lidx::disk::byte_btree::{ByteBTree, Image};
use lidx::disk::byte_table::ByteTable;
use lidx::disk::static_learned::AnyStaticLearned;
use lidx::io::{DeviceKind, Storage};
use lidx::join::table_index::read_saved;
use lidx::join::{read_header, Table};
use lidx::kv::store::Store;
use lidx::{Key, Str16};
use lidx_bench::byte_disk_registry::ByteIndexSpec;
use lidx_bench::disk_registry::{self, DiskIndexSpec};
use serde_json::json;

/// Arguments of `lidx verify`.
#[derive(Debug, Parser)]
pub struct Args {
    /// The directory whose files to read (not its subdirectories).
    #[arg(long)]
    pub dir: PathBuf,
    /// Print one JSON object a file instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What a file is, from its magic number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    DiskBTree,
    StaticLearned,
    ByteTable,
    /// A byte B+-tree's checkpoint image, which lists the leaves of its page file.
    ByteBTreeImage,
    /// A byte B+-tree's page file, read through its image.
    ByteBTreePages,
    JoinTable,
    JoinIndex,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::DiskBTree => "disk B+-tree",
            Kind::StaticLearned => "static learned index",
            Kind::ByteTable => "byte table",
            Kind::ByteBTreeImage => "byte B+-tree",
            Kind::ByteBTreePages => "byte B+-tree pages",
            Kind::JoinTable => "join table",
            Kind::JoinIndex => "saved join index",
        }
    }
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The kind of the file whose first bytes are `head`, and the block size its header gives.
fn classify(head: &[u8]) -> Option<(Kind, usize)> {
    use lidx::disk::byte_btree::{IMAGE_MAGIC, PAGES_MAGIC};
    use lidx::disk::byte_table::BYTE_TABLE_MAGIC;
    use lidx::join::table::TABLE_MAGIC;
    use lidx::join::table_index::INDEX_MAGIC;
    let block = |at: usize| le_u32(head, at).map_or(4096, |b| b as usize);
    match le_u64(head, 0)? {
        m if m == lidx::disk::btree::header::MAGIC => Some((Kind::DiskBTree, block(36))),
        m if m == lidx::disk::static_learned::header::MAGIC => {
            Some((Kind::StaticLearned, block(36)))
        }
        m if m == BYTE_TABLE_MAGIC => Some((Kind::ByteTable, block(12))),
        m if m == IMAGE_MAGIC => Some((Kind::ByteBTreeImage, block(12))),
        m if m == PAGES_MAGIC => Some((Kind::ByteBTreePages, block(12))),
        m if m == INDEX_MAGIC => Some((Kind::JoinIndex, 4096)),
        _ if le_u64(head, 16) == Some(TABLE_MAGIC) => Some((Kind::JoinTable, 4096)),
        _ => None,
    }
}

/// The key type name a typed header holds at bytes 16..32.
fn key_name(head: &[u8]) -> String {
    let raw = head.get(16..32).unwrap_or_default();
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// What one file's check found.
struct Verdict {
    file: String,
    kind: Option<Kind>,
    /// Records read, or what is wrong.
    result: Result<String, String>,
}

/// Runs `lidx verify`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = &args.dir;
    if !dir.is_dir() {
        return Err(lidx_bench::BenchError::BadSpec {
            what: "dir",
            got: dir.display().to_string(),
            expected: "an existing directory of index files or tables".to_string(),
        }
        .into());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut verdicts = Vec::new();
    if dir.join("STORE").is_file() {
        verdicts.push(check_store(dir));
    }
    let heads: Vec<Vec<u8>> = names
        .iter()
        .map(|n| head(&dir.join(n)).unwrap_or_default())
        .collect();
    let kinds: Vec<(String, Option<(Kind, usize)>)> = names
        .iter()
        .zip(&heads)
        .map(|(n, h)| (n.clone(), classify(h)))
        .collect();
    let tables: Vec<&str> = kinds
        .iter()
        .filter(|(_, k)| k.is_some_and(|(k, _)| k == Kind::JoinTable))
        .map(|(n, _)| n.as_str())
        .collect();
    let store = dir.join("STORE").is_file();
    for ((name, kind), head) in kinds.iter().zip(&heads) {
        // A store's table, pages and images were read by its check.
        if store && kind.is_some() {
            continue;
        }
        let result = match kind {
            None => continue,
            Some((kind, block_size)) => verify_file(dir, name, head, *kind, *block_size, &tables),
        };
        verdicts.push(Verdict {
            file: name.clone(),
            kind: kind.map(|k| k.0),
            result: result.map_err(|e| format!("{e:#}")),
        });
    }
    let skipped = kinds.iter().filter(|(_, k)| k.is_none()).count();
    let damaged = verdicts.iter().filter(|v| v.result.is_err()).count();
    for v in &verdicts {
        let kind = v.kind.map_or("store", Kind::name);
        if args.json {
            let (ok, what) = match &v.result {
                Ok(what) => (true, what),
                Err(what) => (false, what),
            };
            println!(
                "{}",
                json!({"file": v.file, "kind": kind, "ok": ok, "what": what})
            );
        } else {
            match &v.result {
                Ok(what) => println!("ok       {}  ({kind}: {what})", v.file),
                Err(what) => println!("DAMAGED  {}  ({kind}): {what}", v.file),
            }
        }
    }
    if !args.json {
        println!(
            "{} files verified, {damaged} damaged, {skipped} other files skipped",
            verdicts.len()
        );
    }
    if damaged > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// The first bytes of `path` (a header's worth), `None` when unreadable.
fn head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(128);
    std::fs::File::open(path)
        .ok()?
        .take(128)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

fn check_store(dir: &Path) -> Verdict {
    let result = match Store::check(dir) {
        Ok(report) if report.is_sound() => Ok(format!(
            "{} table records, {} log records",
            report.table_records, report.log_records
        )),
        Ok(report) => Err(report
            .damage
            .iter()
            .map(|d| format!("{}: {}", d.file, d.what))
            .collect::<Vec<_>>()
            .join("; ")),
        Err(e) => Err(e.to_string()),
    };
    Verdict {
        file: "STORE (the store in this directory)".to_string(),
        kind: None,
        result,
    }
}

fn verify_file(
    dir: &Path,
    name: &str,
    head: &[u8],
    kind: Kind,
    block_size: usize,
    tables: &[&str],
) -> anyhow::Result<String> {
    let storage = Storage::new(dir, DeviceKind::File { direct: false }, block_size)?;
    Ok(match kind {
        Kind::DiskBTree => {
            let n = typed(&key_name(head), |k| match k {
                KeyOf::U64 => btree::<u64>(&storage, name),
                KeyOf::U32 => btree::<u32>(&storage, name),
                KeyOf::I64 => btree::<i64>(&storage, name),
                KeyOf::F64 => btree::<f64>(&storage, name),
                KeyOf::Str16 => btree::<Str16>(&storage, name),
            })?;
            let header = lidx::disk::btree::decode_header(head, name)?;
            check_name(name, &disk_registry::btree_label(&header.params()))?;
            format!("{n} entries")
        }
        Kind::StaticLearned => {
            let n = typed(&key_name(head), |k| match k {
                KeyOf::U64 => learned::<u64>(&storage, name),
                KeyOf::U32 => learned::<u32>(&storage, name),
                KeyOf::I64 => learned::<i64>(&storage, name),
                KeyOf::F64 => learned::<f64>(&storage, name),
                KeyOf::Str16 => learned::<Str16>(&storage, name),
            })?;
            let params = lidx::disk::static_learned::read_header(&storage, name)?.params();
            check_name(name, &disk_registry::learned_label(&params))?;
            format!("{n} records, each in its model's window")
        }
        Kind::ByteTable => {
            let table = ByteTable::open(&storage, name)?;
            let n = table.check()?;
            if let Some(spec) = ByteIndexSpec::from_file_name(name) {
                spec.check_table(name, table.header().params.model)?;
            }
            format!("{n} records, each found through its model")
        }
        Kind::ByteBTreeImage => {
            let pages = pages_of(name)?;
            let image = Image::read(&storage, name)?;
            let n = ByteBTree::open(&storage, &pages, Some(image), 0, true)?.check()?;
            format!("{n} records in {pages}, each found through the inner nodes")
        }
        Kind::ByteBTreePages => {
            let image = name
                .strip_suffix(".lidx")
                .map(|s| format!("{s}.image.lidx"));
            match image.filter(|i| dir.join(i).is_file()) {
                Some(image) => format!("read through {image}"),
                None => anyhow::bail!(
                    "no image of its leaves beside it ({}): nothing can read it as a tree",
                    name
                ),
            }
        }
        Kind::JoinTable => {
            let header = read_header(&storage, name)?;
            let n = match header.key_size {
                16 => Table::<Str16>::open(&storage, name)?.verify()?,
                _ => Table::<u64>::open(&storage, name)?.verify()?,
            };
            format!("{n} records, fingerprint {:#018x}", header.fingerprint)
        }
        Kind::JoinIndex => {
            let (spec, model) = read_saved(&storage, name)?;
            let table = tables
                .iter()
                .filter(|t| name.starts_with(&format!("{t}.")))
                .max_by_key(|t| t.len());
            match table {
                None => format!(
                    "{} model bytes; no table of it here, so its binding is not checked",
                    model.len()
                ),
                Some(t) => {
                    let header = read_header(&storage, t)?;
                    if (header.count, header.fingerprint) != (spec.count, spec.fingerprint) {
                        anyhow::bail!(
                            "stale: built from {} records with fingerprint {:#018x}, the table \
                             {t} holds {} with {:#018x} (lidx join rebuilds it)",
                            spec.count,
                            spec.fingerprint,
                            header.count,
                            header.fingerprint
                        );
                    }
                    format!("{} model bytes, bound to {t}", model.len())
                }
            }
        }
    })
}

/// [`lidx::Error::IndexMismatch`] when `name` is the file name `lidx build` gives a numeric
/// index spec and the file's header records another (`holds`, a spec label).
fn check_name(name: &str, holds: &str) -> anyhow::Result<()> {
    match DiskIndexSpec::from_file_name(name) {
        Some(spec) if spec.label() != holds => Err(lidx::Error::IndexMismatch {
            file: name.to_string(),
            holds: holds.to_string(),
            asked: format!("{} (its name)", spec.label()),
        }
        .into()),
        _ => Ok(()),
    }
}

/// The page file of a byte B+-tree's image `X.image.lidx` (as `lidx build` names them): `X.lidx`.
fn pages_of(image: &str) -> anyhow::Result<String> {
    match image.strip_suffix(".image.lidx") {
        Some(base) => Ok(format!("{base}.lidx")),
        None => anyhow::bail!(
            "an image not named `<index>.image.lidx`, so its page file is unknown (a store's \
             image is checked with its store)"
        ),
    }
}

/// The key types a typed header names.
enum KeyOf {
    U64,
    U32,
    I64,
    F64,
    Str16,
}

fn typed(name: &str, f: impl FnOnce(KeyOf) -> lidx::Result<u64>) -> anyhow::Result<u64> {
    let k = match name {
        "u64" => KeyOf::U64,
        "u32" => KeyOf::U32,
        "i64" => KeyOf::I64,
        "f64" => KeyOf::F64,
        "str16" => KeyOf::Str16,
        other => anyhow::bail!("its header names the key type {other:?}, which lidx has not"),
    };
    Ok(f(k)?)
}

fn btree<K: Key>(storage: &Storage, name: &str) -> lidx::Result<u64> {
    DiskBTree::<K>::open(storage, name, Resident::AllInner, false)?.verify()
}

fn learned<K: Key>(storage: &Storage, name: &str) -> lidx::Result<u64> {
    AnyStaticLearned::<K>::open(storage, name, None)?.verify()
}
