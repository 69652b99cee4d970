//! The manifest: which static files are live, which log segments hold the rest, and up to which
//! sequence number the static files hold the data.
//!
//! Paper 002 §9.1 merges the frozen dynamic stage into new static files and then "updates the
//! globally visible version number" with a compare-and-swap; that makes the switch atomic in
//! memory only. On disk the switch must be atomic too: after a crash, the index reopens either
//! the old set of static files (and replays the log from the old sequence number) or the new set
//! (and replays from the new one), never a mix. The manifest is that switch, done the way
//! LevelDB does it:
//!
//! 1. write the new manifest to a fresh file `MANIFEST-<n>` (magic, version, crc32c) and fsync
//!    it; until step 3 nothing names it, so a crash here leaves the old state;
//! 2. write `CURRENT.tmp` (naming `n`, with its own crc32c) and fsync it;
//! 3. rename `CURRENT.tmp` over `CURRENT` (atomic in POSIX) and fsync the directory, which
//!    makes the rename durable: this is the commit point;
//! 4. remove the older manifests (and leftovers of interrupted commits).
//!
//! [`ManifestStore::open`] reads `CURRENT`, then the manifest it names. Anything wrong is a typed
//! error, never a guess: [`Error::BadMagic`], [`Error::UnsupportedVersion`],
//! [`Error::Truncated`], [`Error::Corrupt`] (bad checksum, bad fields, a manifest that `CURRENT`
//! names but that does not exist); a directory without `CURRENT` is an [`Error::Io`] of kind
//! `NotFound` (no store was ever committed there).
//!
//! `MANIFEST-<n>` layout (`b` = body length):
//!
//! | offset   | size | field                                                   |
//! |----------|------|---------------------------------------------------------|
//! | 0        | 8    | magic `lidxMAN1`                                        |
//! | 8        | 4    | format version (1)                                      |
//! | 12       | 4    | reserved, 0                                             |
//! | 16       | 8    | manifest number `n` (as in the file name)               |
//! | 24       | 8    | `static_seq`                                            |
//! | 32       | 4    | body length `b`                                         |
//! | 36       | 4    | reserved, 0                                             |
//! | 40       | b    | body: three lists, see below                            |
//! | 40 + b   | 4    | crc32c of bytes 0..40+b                                 |
//!
//! Body: `u32` count of static file names, each as `u32` length + UTF-8 bytes; the same for
//! WAL segment names; then `u32` length + the owner's opaque `meta` bytes.
//!
//! `CURRENT` layout (32 bytes): magic `lidxCUR1` (8), version (4), reserved 0 (4), manifest
//! number (8), crc32c of bytes 0..24 (4), reserved 0 (4).

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::fault::FaultSource;
use crate::io::{FaultPlan, WriteFault};
use crate::kv::stamp::{
    check_magic_version, corrupt, decode_stamp, encode_stamp, le_u32, le_u64, STAMP_BYTES,
};
use crate::kv::wal::Seq;

/// Magic number of a manifest file: `lidxMAN1`.
pub const MANIFEST_MAGIC: u64 = u64::from_le_bytes(*b"lidxMAN1");
/// Magic number of the `CURRENT` file: `lidxCUR1`.
pub(crate) const CURRENT_MAGIC: u64 = u64::from_le_bytes(*b"lidxCUR1");
/// Format version of both files.
pub const VERSION: u32 = 1;
/// Bytes of a manifest before its body.
pub(crate) const MANIFEST_HEADER_BYTES: usize = 40;
/// Size of the `CURRENT` file.
pub(crate) const CURRENT_BYTES: usize = STAMP_BYTES;
/// Longest file name a manifest accepts.
pub(crate) const MAX_NAME_BYTES: usize = 255;
/// Largest manifest body accepted (64 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 64 << 20;

/// What a manifest records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Names (inside the store's directory) of the live static files.
    pub static_files: Vec<String>,
    /// Names of the WAL segments (or WAL directories) that hold the records after
    /// `static_seq`.
    pub wal_segments: Vec<String>,
    /// Every record with a sequence number `<= static_seq` is in the static files; replay
    /// skips them.
    pub static_seq: Seq,
    /// The owner's own bytes (key type, parameters), stored as given.
    pub meta: Vec<u8>,
}

/// The path of manifest number `n` in `dir`.
pub(crate) fn manifest_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("MANIFEST-{n:06}"))
}

fn manifest_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("MANIFEST-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn check_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err("a file name must have 1 to 255 bytes");
    }
    if name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err("a file name must not be . or .. nor contain / or NUL");
    }
    Ok(())
}

/// Encodes manifest number `n`.
pub fn encode_manifest(n: u64, m: &Manifest) -> Result<Vec<u8>> {
    for name in m.static_files.iter().chain(&m.wal_segments) {
        check_name(name).map_err(|expected| Error::InvalidParameter {
            name: "manifest file name",
            value: format!("{name:?}"),
            expected,
        })?;
    }
    let mut out = vec![0u8; MANIFEST_HEADER_BYTES];
    for list in [&m.static_files, &m.wal_segments] {
        out.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for name in list {
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
    }
    out.extend_from_slice(&(m.meta.len() as u32).to_le_bytes());
    out.extend_from_slice(&m.meta);
    let body = out.len() - MANIFEST_HEADER_BYTES;
    if body > MAX_BODY_BYTES {
        return Err(Error::InvalidParameter {
            name: "manifest",
            value: format!("{body} bytes"),
            expected: "at most 64 MiB of names and meta",
        });
    }
    out[0..8].copy_from_slice(&MANIFEST_MAGIC.to_le_bytes());
    out[8..12].copy_from_slice(&VERSION.to_le_bytes());
    out[16..24].copy_from_slice(&n.to_le_bytes());
    out[24..32].copy_from_slice(&m.static_seq.to_le_bytes());
    out[32..36].copy_from_slice(&(body as u32).to_le_bytes());
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Decodes a manifest file: its number and content. Never panics.
pub fn decode_manifest(file: &str, bytes: &[u8]) -> Result<(u64, Manifest)> {
    check_magic_version(file, bytes, MANIFEST_MAGIC, VERSION)?;
    let truncated = |what: String| Error::Truncated {
        file: file.to_string(),
        what,
    };
    if bytes.len() < MANIFEST_HEADER_BYTES {
        return Err(truncated(format!(
            "{} bytes, shorter than the {MANIFEST_HEADER_BYTES}-byte manifest header",
            bytes.len()
        )));
    }
    let body = le_u32(bytes, 32) as usize;
    if body > MAX_BODY_BYTES {
        return Err(corrupt(file, format!("body length {body} is over 64 MiB")));
    }
    let total = MANIFEST_HEADER_BYTES + body + 4;
    if bytes.len() < total {
        return Err(truncated(format!(
            "{} bytes, the header says {total}",
            bytes.len()
        )));
    }
    if bytes.len() > total {
        return Err(corrupt(
            file,
            format!("{} bytes after the manifest's end", bytes.len() - total),
        ));
    }
    let stored = le_u32(bytes, total - 4);
    let got = crc32c::crc32c(&bytes[..total - 4]);
    if stored != got {
        return Err(corrupt(
            file,
            format!("checksum {got:#010x}, written as {stored:#010x}"),
        ));
    }
    if le_u32(bytes, 12) != 0 || le_u32(bytes, 36) != 0 {
        return Err(corrupt(file, "reserved header bytes are not 0".into()));
    }
    let n = le_u64(bytes, 16);
    let static_seq = le_u64(bytes, 24);
    let mut body = Body {
        file,
        bytes: &bytes[MANIFEST_HEADER_BYTES..total - 4],
        pos: 0,
    };
    let static_files = body.names("static file")?;
    let wal_segments = body.names("WAL segment")?;
    let meta = body.chunk("meta")?.to_vec();
    if body.pos != body.bytes.len() {
        return Err(corrupt(
            file,
            format!("{} unused body bytes", body.bytes.len() - body.pos),
        ));
    }
    Ok((
        n,
        Manifest {
            static_files,
            wal_segments,
            static_seq,
            meta,
        },
    ))
}

/// A bounds-checked reader over a manifest body.
struct Body<'a> {
    file: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Body<'a> {
    fn u32(&mut self, what: &str) -> Result<usize> {
        if self.bytes.len() - self.pos < 4 {
            return Err(corrupt(
                self.file,
                format!("body ends inside the length of a {what}"),
            ));
        }
        let v = le_u32(self.bytes, self.pos) as usize;
        self.pos += 4;
        Ok(v)
    }

    fn chunk(&mut self, what: &str) -> Result<&'a [u8]> {
        let len = self.u32(what)?;
        if len > self.bytes.len() - self.pos {
            return Err(corrupt(
                self.file,
                format!("a {what} of {len} bytes runs past the body"),
            ));
        }
        let out = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    fn names(&mut self, what: &str) -> Result<Vec<String>> {
        let count = self.u32(what)?;
        // Every name takes at least 5 bytes: refuse counts the body cannot hold before
        // allocating.
        if count > (self.bytes.len() - self.pos) / 5 {
            return Err(corrupt(
                self.file,
                format!("{count} {what} names cannot fit in the body"),
            ));
        }
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let raw = self.chunk(what)?;
            let name = std::str::from_utf8(raw)
                .map_err(|_| corrupt(self.file, format!("a {what} name is not UTF-8")))?;
            check_name(name)
                .map_err(|why| corrupt(self.file, format!("{what} name {name:?}: {why}")))?;
            out.push(name.to_string());
        }
        Ok(out)
    }
}

/// Encodes the `CURRENT` file naming manifest `n`.
pub fn encode_current(n: u64) -> [u8; CURRENT_BYTES] {
    encode_stamp(CURRENT_MAGIC, VERSION, n)
}

/// Decodes the `CURRENT` file: the number of the live manifest. Never panics.
pub fn decode_current(file: &str, bytes: &[u8]) -> Result<u64> {
    let n = decode_stamp(file, bytes, CURRENT_MAGIC, VERSION, "CURRENT file")?;
    if bytes.len() > CURRENT_BYTES {
        return Err(corrupt(
            file,
            format!("{} bytes, expected {CURRENT_BYTES}", bytes.len()),
        ));
    }
    if n == 0 {
        return Err(corrupt(file, "names manifest 0, which never exists".into()));
    }
    Ok(n)
}

fn io_err(path: &Path, op: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    let file = path.display().to_string();
    move |e| Error::io(file, op, &e)
}

/// The error of a fault `plan` injected into `op` on `path`.
fn injected(path: &Path, op: &'static str, what: &str) -> Error {
    io_err(path, op)(std::io::Error::other(format!("injected fault: {what}")))
}

fn write_synced(path: &Path, bytes: &[u8], faults: Option<&FaultPlan>) -> Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io_err(path, "create"))?;
    match faults.and_then(|p| p.on_write(FaultSource::Manifest)) {
        Some(WriteFault::Torn) => {
            f.write_all(&bytes[..bytes.len() / 2])
                .map_err(io_err(path, "write"))?;
            return Err(injected(path, "write and fsync", "torn write"));
        }
        Some(WriteFault::Error | WriteFault::NoSpace) => {
            return Err(injected(path, "write and fsync", "write failed"));
        }
        Some(WriteFault::FailSync) | None => {}
    }
    f.write_all(bytes)
        .map_err(io_err(path, "write and fsync"))?;
    if faults.is_some_and(|p| p.on_sync(FaultSource::Manifest)) {
        return Err(injected(path, "write and fsync", "fsync failed"));
    }
    f.sync_all().map_err(io_err(path, "write and fsync"))
}

fn sync_dir(dir: &Path, faults: Option<&FaultPlan>) -> Result<()> {
    if faults.is_some_and(|p| p.on_sync(FaultSource::Manifest)) {
        return Err(injected(dir, "fsync directory", "fsync failed"));
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir, "fsync directory"))
}

/// The manifests of one directory: the live one is named by `CURRENT`.
#[derive(Debug)]
pub struct ManifestStore {
    dir: PathBuf,
    number: u64,
    /// Faults injected into commits (tests: [`ManifestStore::set_faults`]).
    faults: Option<Arc<FaultPlan>>,
}

impl ManifestStore {
    /// Starts a store in `dir` (created if missing) with `manifest` as manifest 1. Fails with
    /// an [`Error::Io`] of kind `AlreadyExists` when `dir` already has a `CURRENT`.
    pub fn create(dir: &Path, manifest: &Manifest) -> Result<ManifestStore> {
        fs::create_dir_all(dir).map_err(io_err(dir, "create directory"))?;
        let current = dir.join("CURRENT");
        if current.exists() {
            return Err(Error::io(
                current.display().to_string(),
                "create manifest store",
                &std::io::Error::new(ErrorKind::AlreadyExists, "a store already exists here"),
            ));
        }
        let mut store = ManifestStore {
            dir: dir.to_path_buf(),
            number: 0,
            faults: None,
        };
        store.commit(manifest)?;
        Ok(store)
    }

    /// Opens the store in `dir`: reads `CURRENT` and the manifest it names.
    pub fn open(dir: &Path) -> Result<(ManifestStore, Manifest)> {
        let current = dir.join("CURRENT");
        let current_name = current.display().to_string();
        let bytes = fs::read(&current).map_err(io_err(&current, "read"))?;
        let n = decode_current(&current_name, &bytes)?;
        let path = manifest_path(dir, n);
        let name = path.display().to_string();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(corrupt(
                    &current_name,
                    format!("names manifest {n}, but {name} does not exist"),
                ))
            }
            Err(e) => return Err(Error::io(name, "read", &e)),
        };
        let (got, manifest) = decode_manifest(&name, &bytes)?;
        if got != n {
            return Err(corrupt(&name, format!("holds manifest number {got}")));
        }
        Ok((
            ManifestStore {
                dir: dir.to_path_buf(),
                number: n,
                faults: None,
            },
            manifest,
        ))
    }

    /// Makes `manifest` the live one, atomically and durably (see the module docs); returns
    /// its number. When this returns an error, the old or the new manifest is live (reopen to
    /// know which); a reopen never sees a mix.
    pub fn commit(&mut self, manifest: &Manifest) -> Result<u64> {
        let n = self.number + 1;
        let bytes = encode_manifest(n, manifest)?;
        let faults = self.faults.as_deref();
        write_synced(&manifest_path(&self.dir, n), &bytes, faults)?;
        let tmp = self.dir.join("CURRENT.tmp");
        write_synced(&tmp, &encode_current(n), faults)?;
        let current = self.dir.join("CURRENT");
        fs::rename(&tmp, &current).map_err(io_err(&current, "rename CURRENT.tmp over"))?;
        // From the rename on, manifest `n` may be live: the next commit must not rewrite it in
        // place, even when the directory's fsync below fails.
        self.number = n;
        sync_dir(&self.dir, faults)?;
        for entry in fs::read_dir(&self.dir).map_err(io_err(&self.dir, "list directory"))? {
            let entry = entry.map_err(io_err(&self.dir, "list directory"))?;
            let old = entry
                .file_name()
                .to_str()
                .and_then(manifest_number)
                .is_some_and(|m| m != n);
            if old {
                fs::remove_file(entry.path()).map_err(io_err(&entry.path(), "remove"))?;
            }
        }
        Ok(n)
    }

    /// Injects `faults`' write and sync faults into later commits (tests of what a manifest's
    /// owner does when its disk fails).
    #[doc(hidden)]
    pub fn set_faults(&mut self, faults: Option<Arc<FaultPlan>>) {
        self.faults = faults;
    }

    /// Number of the live manifest.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(k: u64) -> Manifest {
        Manifest {
            static_files: (0..k % 4).map(|i| format!("static-{k}-{i}.lidx")).collect(),
            wal_segments: vec![format!("wal-{k:020}.log")],
            static_seq: k * 100,
            meta: vec![k as u8; (k % 7) as usize],
        }
    }

    #[test]
    fn commit_reopen_and_cleanup() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ManifestStore::create(dir.path(), &sample(1)).unwrap();
        assert!(matches!(
            ManifestStore::create(dir.path(), &sample(1)),
            Err(Error::Io {
                kind: ErrorKind::AlreadyExists,
                ..
            })
        ));
        for k in 2..6 {
            assert_eq!(store.commit(&sample(k)).unwrap(), k);
            let (again, m) = ManifestStore::open(dir.path()).unwrap();
            assert_eq!((again.number(), m), (k, sample(k)));
        }
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, vec!["CURRENT", "MANIFEST-000005"]);
        let bad = Manifest {
            static_files: vec!["../x".into()],
            ..Manifest::default()
        };
        assert!(matches!(
            store.commit(&bad),
            Err(Error::InvalidParameter { .. })
        ));
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            ManifestStore::open(empty.path()),
            Err(Error::Io {
                kind: ErrorKind::NotFound,
                ..
            })
        ));
    }

    #[test]
    fn damaged_files_give_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        ManifestStore::create(dir.path(), &sample(3)).unwrap();
        let mpath = manifest_path(dir.path(), 1);
        let cpath = dir.path().join("CURRENT");
        let manifest = fs::read(&mpath).unwrap();
        let current = fs::read(&cpath).unwrap();
        let open = || ManifestStore::open(dir.path()).map(|(_, m)| m);

        for at in 0..manifest.len() {
            let mut bad = manifest.clone();
            bad[at] ^= 0x10;
            fs::write(&mpath, &bad).unwrap();
            let err = open().unwrap_err();
            match at {
                0..=7 => assert!(matches!(err, Error::BadMagic { .. }), "{at}: {err}"),
                8..=11 => assert!(matches!(err, Error::UnsupportedVersion { .. }), "{at}"),
                // A flipped length bit makes the file look short (Truncated) or long (Corrupt).
                32..=35 => assert!(
                    matches!(err, Error::Truncated { .. } | Error::Corrupt { .. }),
                    "{at}: {err}"
                ),
                _ => assert!(matches!(err, Error::Corrupt { .. }), "{at}: {err}"),
            }
        }
        for cut in 0..manifest.len() {
            fs::write(&mpath, &manifest[..cut]).unwrap();
            let err = open().unwrap_err();
            assert!(matches!(err, Error::Truncated { .. }), "cut {cut}: {err}");
        }
        fs::write(&mpath, &manifest).unwrap();
        assert_eq!(open().unwrap(), sample(3));

        for at in 0..current.len() {
            let mut bad = current.clone();
            bad[at] ^= 0x01;
            fs::write(&cpath, &bad).unwrap();
            let err = open().unwrap_err();
            match at {
                0..=7 => assert!(matches!(err, Error::BadMagic { .. }), "{at}"),
                8..=11 => assert!(matches!(err, Error::UnsupportedVersion { .. }), "{at}"),
                _ => assert!(matches!(err, Error::Corrupt { .. }), "{at}: {err}"),
            }
        }
        fs::write(&cpath, &current[..10]).unwrap();
        assert!(matches!(open(), Err(Error::Truncated { .. })));
        fs::write(&cpath, encode_current(9)).unwrap();
        assert!(
            matches!(open(), Err(Error::Corrupt { .. })),
            "missing manifest"
        );
        fs::copy(&mpath, manifest_path(dir.path(), 9)).unwrap();
        assert!(matches!(open(), Err(Error::Corrupt { .. })), "wrong number");
    }

    /// A commit whose directory fsync failed after the rename had made its manifest live
    /// left the store's number behind, so the next commit rewrote the live manifest in place
    /// (a crash during that write would leave no readable manifest). The next commit now takes
    /// the next number.
    #[test]
    fn a_commit_after_a_failed_directory_sync_does_not_rewrite_the_live_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let m = sample;
        let mut store = ManifestStore::create(dir.path(), &m(1)).unwrap();
        let plan = FaultPlan::new();
        store.set_faults(Some(Arc::clone(&plan)));
        // The manifest's and CURRENT.tmp's fsyncs pass, the directory's fails.
        plan.fail_sync_after(2);
        assert!(store.commit(&m(2)).is_err());
        assert_eq!(
            ManifestStore::open(dir.path()).unwrap().1,
            m(2),
            "live after the rename"
        );
        assert_eq!(store.commit(&m(3)).unwrap(), 3);
        let (again, live) = ManifestStore::open(dir.path()).unwrap();
        assert_eq!((again.number(), live), (3, m(3)));
    }
}
