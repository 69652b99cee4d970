//! `lidx verify --dir DIR`: read every index file and table in a directory and say what is
//! damaged (issue 13).
//!
//! Each file is recognized by the magic number in its first bytes (its name only decides whether
//! a file no magic recognizes is damage or not lidx's, below), and read whole through the
//! structure's own check:
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
//!   damage, since `lidx join` would refuse it);
//! - paper 003's updatable indexes `lidx build` writes: an ALEX (`<name>.inner`, whose block 0
//!   is the meta block, and `<name>.data`, reported together as `<name>`), a LIPP, a disk PGM
//!   (its manifest; its level files are static learned files, read on their own too), a
//!   FITing-tree (its segment file; its `.inner` is a disk B+-tree, read on its own too) and a
//!   learned-inner B+-tree, and FILM (`<name>`, its header and snapshot, and `<name>.data`,
//!   its data pages, which carry no header and are read through it): each opened read-only
//!   through its structure (which checks its headers), every entry read in key order by its
//!   scans, every key looked up, the count against the header.
//!
//! Every numeric index's line shows the fingerprint of the keys it was built from, as its
//! header records it (issue 30, class 6: what `lidx bench --on-disk` checks a dataset against);
//! a static learned file, never written after its build, must still hold exactly those keys.
//!
//! A file named as `lidx build` names an index (`btree.fill=70.lidx`,
//! `pgm.eps=64.eps_rec=4.gran=item.lidx`, `byte-table.eps=16.lidx`) must hold that index: its
//! header records its build parameters, and a file holding others (renamed over another's
//! name) is damage ([`lidx::Error::IndexMismatch`]), since `lidx bench --on-disk` would refuse
//! it. A file of another name is read as whatever it holds.
//!
//! **A file that looks like lidx's but is no lidx file it can read is damage** (issue 30,
//! class 5; before, it was "skipped" and the directory "0 damaged"): one named as lidx names
//! its files (`*.lidx`, `*.lidx.*`, `*.idx`, a store's `*.lbt`, `*.lbp`, `*.lbi`), one whose
//! first 8 bytes (or a table's bytes 16..24) are within [`NEAR_MAGIC_BITS`] bits of a lidx
//! magic, one that starts with lidx's magic prefix (`lidx`, any case) followed by binary
//! bytes (a text that starts with the word is not a header), and one whose blocks
//! after the first carry lidx's block checksums (a join table of any name whose header block
//! was zeroed, what a killed write leaves). The line says which, and what its first block
//! holds. Files that match none of these are plainly not lidx's: each is listed as skipped.
//!
//! What it cannot see: a record of a B+-tree changed under a valid checksum that keeps the
//! keys in order (a tree takes writes, so its keys may differ from those it was built from).
//!
//! A directory that holds a store (a `STORE` file) is checked as `lidx kv check` does
//! ([`Store::check`]), which reads the files of the store; a store's own file (write-ahead
//! log, manifest, `CURRENT`) in a directory without a `STORE` file is damage (a store that lost
//! it, or a file copied out of its store). Every block's checksum is verified on the way by the
//! device. Exit code 1 when anything is damaged.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use lidx::disk::AnyStaticLearned;
use lidx::disk::BTreeLearned;
use lidx::disk::ByteBTree;
use lidx::disk::ByteTable;
use lidx::disk::DiskAlex;
use lidx::disk::DiskFiting;
use lidx::disk::DiskIndex;
use lidx::disk::DiskLipp;
use lidx::disk::DiskPgm;
use lidx::disk::Film;
use lidx::disk::{DiskBTree, Resident};
use lidx::io::{DeviceKind, Storage};
use lidx::join::{read_header, Table};
use lidx::kv::Store;
use lidx::raw::disk::byte_btree::Image;
use lidx::raw::join::table_index::read_saved;
use lidx::{Key, Str16};
use lidx_bench::byte_disk_registry::{ByteIndexFiles, ByteIndexSpec};
use lidx_bench::disk_registry::{self, DiskIndexSpec};
use lidx_bench::updatable_registry::UpdatableSpec;
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
    /// An ALEX's inner-node file `<name>.inner`, whose block 0 is the meta block.
    AlexInner,
    /// An ALEX's data-node file `<name>.data`, read through its inner-node file.
    AlexData,
    Lipp,
    /// A disk PGM's manifest (its level files are static learned files).
    DiskPgm,
    /// A FITing-tree's segment file (its `.inner` is a disk B+-tree).
    Fiting,
    BTreeLearned,
    /// FILM's header and snapshot file (its data pages, `<name>.data`, are read through it).
    Film,
    /// A file of a store (write-ahead log, manifest, `CURRENT`, `STORE`) outside a store.
    StoreFile,
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
            Kind::AlexInner | Kind::AlexData => "on-disk ALEX",
            Kind::Lipp => "on-disk LIPP",
            Kind::DiskPgm => "disk PGM",
            Kind::Fiting => "disk FITing-tree",
            Kind::BTreeLearned => "learned-inner B+-tree",
            Kind::Film => "FILM",
            Kind::StoreFile => "store file",
        }
    }
}

/// Every magic number lidx writes at byte 0 of a file, with the kind it names.
fn magics() -> [(u64, Kind); 16] {
    use lidx::raw::disk::byte_btree::{IMAGE_MAGIC, PAGES_MAGIC};
    use lidx::raw::disk::byte_table::BYTE_TABLE_MAGIC;
    use lidx::raw::join::table_index::INDEX_MAGIC;
    let store = |tag: &[u8; 8]| (u64::from_le_bytes(*tag), Kind::StoreFile);
    [
        (lidx::raw::disk::btree::header::MAGIC, Kind::DiskBTree),
        (
            lidx::raw::disk::static_learned::header::MAGIC,
            Kind::StaticLearned,
        ),
        (BYTE_TABLE_MAGIC, Kind::ByteTable),
        (IMAGE_MAGIC, Kind::ByteBTreeImage),
        (PAGES_MAGIC, Kind::ByteBTreePages),
        (INDEX_MAGIC, Kind::JoinIndex),
        (lidx::raw::disk::alex::meta::MAGIC, Kind::AlexInner),
        (lidx::raw::disk::lipp::meta::MAGIC, Kind::Lipp),
        (lidx::raw::disk::dpgm::manifest::MAGIC, Kind::DiskPgm),
        (lidx::raw::disk::fiting::format::MAGIC, Kind::Fiting),
        (
            lidx::raw::disk::btree_learned::header::MAGIC,
            Kind::BTreeLearned,
        ),
        (lidx::raw::disk::film::MAGIC, Kind::Film),
        store(b"lidxWAL1"),
        store(b"lidxSTOR"),
        store(b"lidxMAN1"),
        store(b"lidxCUR1"),
    ]
}

/// Most bits a magic may differ from a lidx magic by for the file to count as a damaged lidx
/// file rather than someone else's (two text bytes differ from any magic in far more).
pub const NEAR_MAGIC_BITS: u32 = 4;

/// Block sizes tried when looking for lidx block checksums in a file no magic recognizes.
const PROBE_BLOCK_SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The kind of the file whose first bytes are `head`, and the block size its header gives.
fn classify(head: &[u8]) -> Option<(Kind, usize)> {
    use lidx::raw::join::table::TABLE_MAGIC;
    let block = |at: usize| le_u32(head, at).map_or(4096, |b| b as usize);
    let magic = le_u64(head, 0)?;
    let kind = match magics().into_iter().find(|(m, _)| *m == magic) {
        Some((_, kind)) => kind,
        _ if le_u64(head, 16) == Some(TABLE_MAGIC) => return Some((Kind::JoinTable, 4096)),
        _ => return None,
    };
    // ALEX's two files share a magic; the kind at byte 12 tells them apart.
    let kind = match (kind, le_u32(head, 12)) {
        (Kind::AlexInner, Some(k)) if k == lidx::raw::disk::alex::meta::KIND_DATA => Kind::AlexData,
        (kind, _) => kind,
    };
    let block_at = match kind {
        Kind::DiskBTree
        | Kind::StaticLearned
        | Kind::DiskPgm
        | Kind::Fiting
        | Kind::BTreeLearned => 36,
        Kind::ByteTable | Kind::ByteBTreeImage | Kind::ByteBTreePages => 12,
        Kind::AlexInner | Kind::AlexData => 16,
        Kind::Lipp | Kind::Film => 40,
        Kind::JoinTable | Kind::JoinIndex | Kind::StoreFile => return Some((kind, 4096)),
    };
    Some((kind, block(block_at)))
}

/// Why the file `name`, whose first bytes are `head` and which no magic recognizes, looks like
/// lidx's (module docs), or `None` when it is plainly not lidx's.
fn looks_like_lidx(dir: &Path, name: &str, head: &[u8]) -> Option<String> {
    let lidx_name = [".lidx", ".idx", ".lbt", ".lbp", ".lbi"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || name.contains(".lidx.");
    let near = [(0usize, magics().map(|(m, _)| m).to_vec())]
        .into_iter()
        .chain([(16, vec![lidx::raw::join::table::TABLE_MAGIC])])
        .flat_map(|(at, ms)| ms.into_iter().map(move |m| (at, m)))
        .filter_map(|(at, m)| {
            let got = le_u64(head, at)?;
            let bits = (got ^ m).count_ones();
            (bits <= NEAR_MAGIC_BITS).then_some((bits, m, got))
        })
        .min();
    // A header holds binary fields after its magic; a text that starts with the word is not one.
    let prefix = head
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"lidx"))
        && !is_text(head);
    let sealed = sealed_block(&dir.join(name));
    let why = if let Some((bits, expected, got)) = near {
        format!(
            "its magic {got:#018x} is {bits} bit(s) from lidx's {:?}: a damaged header",
            String::from_utf8_lossy(&expected.to_le_bytes())
        )
    } else if prefix {
        format!(
            "it starts with lidx's magic prefix but {:?} is no lidx magic",
            String::from_utf8_lossy(&head[..head.len().min(8)])
        )
    } else if let Some((block, block_size)) = sealed {
        format!(
            "block {block} carries a lidx checksum ({block_size}-byte blocks) but block 0 is no \
             lidx header"
        )
    } else if lidx_name {
        "named as lidx names its files, but no lidx header starts it".to_string()
    } else {
        return None;
    };
    Some(format!("{why}; its first bytes: {}", describe_head(head)))
}

/// A block after the first of the file at `path` that carries a valid lidx block checksum for
/// its position (module docs), with the block size tried; `None` when none of the few tried do.
fn sealed_block(path: &Path) -> Option<(u64, usize)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    for block_size in PROBE_BLOCK_SIZES {
        let bs = block_size as u64;
        if len < 2 * bs || len % bs != 0 {
            continue;
        }
        for block in 1..(len / bs).min(4) {
            let mut buf = vec![0u8; block_size];
            file.seek(SeekFrom::Start(block * bs)).ok()?;
            file.read_exact(&mut buf).ok()?;
            let zero = buf.iter().all(|&b| b == 0);
            if !zero && lidx::raw::io::checksum::verify(&buf, block, "").is_ok() {
                return Some((block, block_size));
            }
        }
    }
    None
}

/// What the first bytes of a file hold, said briefly: zeros, text, or their hex.
fn describe_head(head: &[u8]) -> String {
    let shown = &head[..head.len().min(16)];
    if head.is_empty() {
        "none (an empty file)".to_string()
    } else if head.iter().all(|&b| b == 0) {
        format!(
            "{} zero bytes (a header never written, or zeroed)",
            head.len()
        )
    } else if is_text(head) {
        format!("text {:?}", String::from_utf8_lossy(shown))
    } else {
        shown.iter().map(|b| format!("{b:02x}")).collect::<String>()
    }
}

/// True when every byte of `head` is printable ASCII or white space.
fn is_text(head: &[u8]) -> bool {
    head.iter()
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
}

/// The key type name a typed header holds at bytes 16..32.
fn key_name(head: &[u8]) -> String {
    let raw = head.get(16..32).unwrap_or_default();
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// What one file's check found.
struct Verdict {
    /// The file, or the index its files make up (an ALEX).
    file: String,
    kind: Option<Kind>,
    /// Records read, or what is wrong.
    result: Result<String, String>,
}

/// The saved name of the updatable index (`dfiting.eps=64.lidx`, `dpgm.eps=64.lidx`) that
/// `name` is a file of (its `.inner` B+-tree, a level `.L<l>.<g>`), when that index's own
/// file is not among `names`.
fn orphan_of<'a>(name: &'a str, names: &[String]) -> Option<&'a str> {
    let index = Storage::index_of(name)?;
    let updatable = index.ends_with(".lidx")
        && UpdatableSpec::is_updatable_name(index.split('.').next().unwrap_or_default());
    (updatable && !names.iter().any(|n| n == index)).then_some(index)
}

/// Runs `lidx verify`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = &args.dir;
    if !dir.is_dir() {
        return Err(lidx_bench::BenchError::BadSpec {
            what: "dir",
            got: dir.display().to_string(),
            expected: if dir.exists() {
                "a directory of index files or tables (this is a file, not a directory: give \
                 the directory that holds it)"
                    .to_string()
            } else {
                "an existing directory of index files or tables (there is no such path)".to_string()
            },
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
    let store = dir.join("STORE").is_file();
    let mut verdicts = Vec::new();
    if store {
        verdicts.push(check_store(dir));
    }
    let heads: Vec<Vec<u8>> = names
        .iter()
        .map(|n| head(&dir.join(n)).unwrap_or_default())
        .collect();
    let kinds: Vec<Option<(Kind, usize)>> = heads.iter().map(|h| classify(h)).collect();
    let tables: Vec<&str> = names
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| k.is_some_and(|(k, _)| k == Kind::JoinTable))
        .map(|(n, _)| n.as_str())
        .collect();
    // FILM's data pages carry no header: read through FILM's own file.
    let films: Vec<&str> = names
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| k.is_some_and(|(k, _)| k == Kind::Film))
        .map(|(n, _)| n.as_str())
        .collect();
    // Files not read, and why.
    let mut skipped: Vec<(&str, &str)> = Vec::new();
    for ((name, kind), head) in names.iter().zip(&kinds).zip(&heads) {
        // ALEX's files are paired below, by their own kinds.
        let orphan = kind
            .filter(|(k, _)| !matches!(k, Kind::AlexInner | Kind::AlexData))
            .and_then(|_| orphan_of(name, &names));
        let (kind, result) = match kind {
            // A store's files were read by its check.
            Some(_) if store => continue,
            // A FITing-tree's inner B+-tree or a disk PGM's level without the index's own
            // file reads as a sound file of its kind, but nothing can open the index.
            Some((kind, _)) if orphan.is_some() => (
                Some(*kind),
                Err(format!(
                    "a file of the updatable index {}, whose own file is missing: nothing can \
                     open it (rebuild the index with lidx build)",
                    orphan.unwrap_or_default()
                )),
            ),
            Some((Kind::StoreFile, _)) => (
                Some(Kind::StoreFile),
                Err(
                    "a store's file, but this directory has no STORE file: a store that lost \
                     it, or a file copied out of its store (check that store's directory)"
                        .to_string(),
                ),
            ),
            Some((Kind::AlexData, _)) => match name.strip_suffix(".data") {
                // Read with its inner-node file, under the index's name.
                Some(index) if names.contains(&format!("{index}.inner")) => continue,
                _ => (
                    Some(Kind::AlexData),
                    Err(format!(
                        "an ALEX's data-node file without its inner-node file beside it \
                         (<name>.inner, <name>.data): nothing can read it; its first bytes: {}",
                        describe_head(head)
                    )),
                ),
            },
            Some((kind, block_size)) => (
                Some(*kind),
                verify_file(dir, name, head, *kind, *block_size, &tables)
                    .map_err(|e| format!("{e:#}")),
            ),
            // In a store's directory its check owns every file of the store.
            None if store => {
                skipped.push((
                    name,
                    "not read on its own: the store's check names its files",
                ));
                continue;
            }
            None if name
                .strip_suffix(".data")
                .is_some_and(|index| films.contains(&index)) =>
            {
                continue
            }
            None => match looks_like_lidx(dir, name, head) {
                Some(why) => (None, Err(format!("not readable as any lidx file: {why}"))),
                None => {
                    skipped.push((name, "not a lidx file"));
                    continue;
                }
            },
        };
        let file = match kind {
            Some(Kind::AlexInner) => name.strip_suffix(".inner").map_or_else(
                || name.clone(),
                |index| format!("{index} ({index}.inner + {index}.data)"),
            ),
            Some(Kind::Film) => format!("{name} (+ {name}.data)"),
            _ => name.clone(),
        };
        verdicts.push(Verdict { file, kind, result });
    }
    let damaged = verdicts.iter().filter(|v| v.result.is_err()).count();
    for v in &verdicts {
        let kind = v.kind.map_or(
            if v.file.starts_with("STORE") {
                "store"
            } else {
                "unknown"
            },
            Kind::name,
        );
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
    for (file, why) in &skipped {
        if args.json {
            println!(
                "{}",
                json!({"file": file, "kind": null, "skipped": true, "what": why})
            );
        } else {
            println!("skipped  {file}  ({why})");
        }
    }
    if !args.json {
        println!(
            "{} files verified, {damaged} damaged, {} other files skipped",
            verdicts.len(),
            skipped.len()
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
            let header = lidx::raw::disk::btree::decode_header(head, name)?;
            check_name(name, &disk_registry::btree_label(&header.params()))?;
            format!(
                "{n} entries, built from keys fingerprint {:#018x}",
                header.keys_fingerprint
            )
        }
        Kind::StaticLearned => {
            let n = typed(&key_name(head), |k| match k {
                KeyOf::U64 => learned::<u64>(&storage, name),
                KeyOf::U32 => learned::<u32>(&storage, name),
                KeyOf::I64 => learned::<i64>(&storage, name),
                KeyOf::F64 => learned::<f64>(&storage, name),
                KeyOf::Str16 => learned::<Str16>(&storage, name),
            })?;
            let header = lidx::raw::disk::static_learned::read_header(&storage, name)?;
            check_name(name, &disk_registry::learned_label(&header.params()))?;
            format!(
                "{n} records, each in its model's window, keys fingerprint {:#018x} as built",
                header.keys_fingerprint
            )
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
        Kind::AlexInner => {
            let Some(index) = name.strip_suffix(".inner") else {
                anyhow::bail!(
                    "an ALEX's inner-node file not named `<name>.inner`, so its data-node file \
                     is unknown"
                );
            };
            updatable(name, &DiskAlex::open(&storage, index, false, false)?)?
        }
        Kind::AlexData => unreachable!("an ALEX's data file is read through its inner file"),
        Kind::Lipp => updatable(name, &DiskLipp::open(&storage, name, false, false)?)?,
        Kind::DiskPgm => updatable(name, &DiskPgm::open(&storage, name, false)?)?,
        Kind::Fiting => {
            let index = DiskFiting::open(&storage, name, false, Resident::None)?;
            index.verify()?;
            updatable(name, &index)?
        }
        Kind::BTreeLearned => typed(&key_name(head), |k| match k {
            KeyOf::U64 => learned_btree::<u64>(&storage, name),
            KeyOf::U32 => learned_btree::<u32>(&storage, name),
            KeyOf::I64 => learned_btree::<i64>(&storage, name),
            KeyOf::F64 => learned_btree::<f64>(&storage, name),
            KeyOf::Str16 => learned_btree::<Str16>(&storage, name),
        })?,
        Kind::Film => updatable(name, &Film::open(&storage, name, false)?)?,
        Kind::StoreFile => unreachable!("a store's file outside a store is not read"),
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

fn typed<T>(name: &str, f: impl FnOnce(KeyOf) -> lidx::Result<T>) -> anyhow::Result<T> {
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

fn learned_btree<K: Key>(storage: &Storage, name: &str) -> lidx::Result<String> {
    updatable(name, &BTreeLearned::<K>::open(storage, name, false)?)
}

/// Entries [`updatable`] reads per scan.
const SCAN_BATCH: usize = 4096;

/// Reads every entry of an updatable index (opened from `file`) in key order through its scans (every block that
/// holds one, through the device's checksums), checks that the keys ascend strictly, that each
/// is found by a lookup with the payload the scan gave, and that they are as many as the
/// header says; describes what it read and the keys' fingerprint the files record.
fn updatable<K: Key>(file: &str, index: &dyn DiskIndex<K>) -> lidx::Result<String> {
    let corrupt = |what: String| lidx::Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    };
    let ps = index.payload_size();
    let (mut keys, mut payloads, mut found) = (Vec::new(), Vec::new(), vec![0u8; ps]);
    let (mut read, mut last) = (0u64, None::<K>);
    loop {
        keys.clear();
        payloads.clear();
        // Each scan after the first starts at the last key read, which it returns again.
        let n = index.scan(
            &last.unwrap_or(K::MIN),
            SCAN_BATCH,
            &mut keys,
            &mut payloads,
        )?;
        let again = usize::from(matches!(
            (keys.first(), &last),
            (Some(first), Some(last)) if first.key_cmp(last).is_eq()
        ));
        for (i, key) in keys.iter().enumerate().skip(again) {
            if last.is_some_and(|l| !l.key_lt(key)) {
                return Err(corrupt(format!(
                    "entry {read}: key {key:?} does not follow {last:?}"
                )));
            }
            if !index.get(key, &mut found)? || found != payloads[i * ps..(i + 1) * ps] {
                return Err(corrupt(format!(
                    "entry {read}: key {key:?} is scanned but a lookup does not find it with \
                     the same payload"
                )));
            }
            last = Some(*key);
            read += 1;
        }
        if n < SCAN_BATCH {
            break;
        }
    }
    if read != index.len() {
        return Err(corrupt(format!(
            "{read} entries read, the header says {}",
            index.len()
        )));
    }
    Ok(format!(
        "{read} entries in key order, each found by a lookup; built from keys fingerprint \
         {:#018x}",
        index.keys_fingerprint()
    ))
}
