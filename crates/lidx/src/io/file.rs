//! [`FileDevice`]: a real file read and written with `O_DIRECT`.
//!
//! With `O_DIRECT` every read goes to the device, so measured times are cold-cache times and the
//! OS page cache cannot hide I/O (a disk run is on such a file or on a simulated device, and its
//! results say which). `O_DIRECT` needs the buffer
//! address, the file offset and the length aligned to the device's logical block; block sizes
//! are multiples of 4096 and a caller's buffer that is not 4096-aligned goes through an
//! [`AlignedBuf`] bounce buffer. Some file systems (tmpfs, some overlay mounts) refuse
//! `O_DIRECT`; the device then falls back to buffered I/O and drops the file's cached pages with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` after each read and at each `sync`, and
//! [`FileDevice::direct`] / [`BlockDevice::describe`] say so, so results name what was measured.
//!
//! Those two modes measure the device. [`Caching::Kept`] is the third, for reading files as an
//! application does (a query engine over table files, `lidx-datafusion`): buffered I/O whose
//! pages stay in the OS page cache, so a block read again is served from memory by the kernel.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::error::{Error, Result};
use crate::io::aligned::{AlignedBuf, IO_ALIGN};
use crate::io::checksum;
use crate::io::device::{check_block_size, check_in_bounds, request_blocks, BlockDevice};
use crate::io::stats::{IoClass, IoCounters, IoStats};

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the file, truncating one that exists.
    Create,
    /// Open an existing file for reading and writing.
    ReadWrite,
    /// Open an existing file for reading only; writes are [`Error::ReadOnly`].
    ReadOnly,
}

/// What a [`FileDevice`] lets the OS page cache keep of its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caching {
    /// `O_DIRECT`: no page of the file is cached; [`Caching::Dropped`] where the file system
    /// refuses `O_DIRECT`.
    Direct,
    /// Buffered I/O, the pages dropped after each read and at each `sync` (`DONTNEED`).
    Dropped,
    /// Buffered I/O, the pages kept as the OS chooses: warm reads.
    Kept,
}

impl Caching {
    /// The device as reports name it.
    pub fn describe(self) -> &'static str {
        match self {
            Caching::Direct => "file O_DIRECT",
            Caching::Dropped => "file buffered+DONTNEED",
            Caching::Kept => "file buffered, pages kept in the OS page cache",
        }
    }
}

/// A file of checksummed blocks, read and written with `O_DIRECT` where the file system allows
/// (or through the page cache, as [`Caching`] says).
pub struct FileDevice {
    name: String,
    file: File,
    block_size: usize,
    mode: OpenMode,
    /// The caching in effect, [`Caching::Dropped`] when `O_DIRECT` was asked and refused.
    caching: Caching,
    /// True when `O_DIRECT` was asked and the file system refused it.
    refused_direct: bool,
    len_blocks: AtomicU64,
    counters: IoCounters,
}

impl FileDevice {
    /// Opens `path` as a device of `block_size`-byte blocks (a power of two >= 4096), cached
    /// as `caching` says ([`Caching::Direct`] falls back to [`Caching::Dropped`] if refused).
    pub fn open(
        path: &Path,
        block_size: usize,
        mode: OpenMode,
        caching: Caching,
    ) -> Result<FileDevice> {
        check_block_size(block_size, true)?;
        let name = path.display().to_string();
        let open = |with_direct: bool| {
            let mut options = OpenOptions::new();
            options.read(true);
            match mode {
                OpenMode::Create => {
                    options.write(true).create(true).truncate(true);
                }
                OpenMode::ReadWrite => {
                    options.write(true);
                }
                OpenMode::ReadOnly => {}
            }
            if with_direct {
                options.custom_flags(libc::O_DIRECT);
            }
            options.open(path)
        };
        let direct = caching == Caching::Direct;
        let (file, caching) = match open(direct) {
            Ok(file) => (file, caching),
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => (
                open(false).map_err(|e| Error::io(&name, "open", &e))?,
                Caching::Dropped,
            ),
            Err(e) => return Err(Error::io(&name, "open", &e)),
        };
        let bytes = file
            .metadata()
            .map_err(|e| Error::io(&name, "stat", &e))?
            .len();
        if bytes % block_size as u64 != 0 {
            return Err(Error::Truncated {
                file: name,
                what: format!("{bytes} bytes is not a whole number of {block_size}-byte blocks"),
            });
        }
        Ok(FileDevice {
            name,
            file,
            block_size,
            mode,
            caching,
            refused_direct: direct && caching != Caching::Direct,
            len_blocks: AtomicU64::new(bytes / block_size as u64),
            counters: IoCounters::default(),
        })
    }

    /// True when reads bypass the OS page cache with `O_DIRECT`; false when it was not asked,
    /// or the file system refused it and the device uses buffered reads with `DONTNEED`.
    pub fn direct(&self) -> bool {
        self.caching == Caching::Direct
    }

    /// The caching in effect.
    pub fn caching(&self) -> Caching {
        self.caching
    }

    fn drop_cached(&self, offset: u64, len: u64) {
        self.advise(offset, len, libc::POSIX_FADV_DONTNEED);
    }

    fn advise(&self, offset: u64, len: u64, advice: libc::c_int) {
        // SAFETY: posix_fadvise only reads its integer arguments; the fd is open.
        unsafe {
            libc::posix_fadvise(
                self.file.as_raw_fd(),
                offset as libc::off_t,
                len as libc::off_t,
                advice,
            );
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if self.direct() && !(buf.as_ptr() as usize).is_multiple_of(IO_ALIGN) {
            let mut bounce = AlignedBuf::zeroed(buf.len());
            self.file.read_exact_at(&mut bounce, offset)?;
            buf.copy_from_slice(&bounce);
            Ok(())
        } else {
            self.file.read_exact_at(buf, offset)
        }
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> std::io::Result<()> {
        if self.direct() && !(buf.as_ptr() as usize).is_multiple_of(IO_ALIGN) {
            let mut bounce = AlignedBuf::zeroed(buf.len());
            bounce.copy_from_slice(buf);
            self.file.write_all_at(&bounce, offset)
        } else {
            self.file.write_all_at(buf, offset)
        }
    }
}

impl BlockDevice for FileDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn block_size(&self) -> usize {
        self.block_size
    }

    fn len_blocks(&self) -> u64 {
        self.len_blocks.load(Relaxed)
    }

    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        let count = request_blocks(&self.name, self.block_size, buf.len())?;
        let have = self.len_blocks();
        check_in_bounds(&self.name, first, count, have)?;
        let offset = first * self.block_size as u64;
        self.read_at(offset, buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Truncated {
                    file: self.name.clone(),
                    what: format!("blocks {first}..{} are missing", first + count),
                }
            } else {
                Error::io(
                    &self.name,
                    format!("read blocks {first}..{}", first + count),
                    &e,
                )
            }
        })?;
        if self.caching == Caching::Dropped {
            self.drop_cached(offset, buf.len() as u64);
        }
        self.counters
            .record_read(first, count, self.block_size, class);
        checksum::verify_run(buf, first, self.block_size, &self.name)
    }

    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()> {
        if self.mode == OpenMode::ReadOnly {
            return Err(Error::ReadOnly { op: "write blocks" });
        }
        let count = request_blocks(&self.name, self.block_size, buf.len())?;
        checksum::seal_run(buf, first, self.block_size);
        self.write_at(first * self.block_size as u64, buf)
            .map_err(|e| {
                Error::io(
                    &self.name,
                    format!("write blocks {first}..{}", first + count),
                    &e,
                )
            })?;
        self.len_blocks.fetch_max(first + count, Relaxed);
        self.counters
            .record_write(first, count, self.block_size, class);
        Ok(())
    }

    /// With [`Caching::Kept`], `posix_fadvise(POSIX_FADV_WILLNEED)`: the kernel queues reads
    /// of the blocks not yet cached and returns without waiting for them. Measured on a 2-core
    /// Intel Xeon VM's virtio disk (10,000 random 8 KiB reads in ascending order from an
    /// 803 MB file, the cache dropped, one thread): 597 ms reading one at a time, 128 ms with
    /// each read hinted 16 reads ahead, 92 ms 64 ahead; a hint on cached pages costs about
    /// 0.2 us. `O_DIRECT` reads do not go through the cache, and `Dropped` drops what a hint
    /// would bring in: both ignore it.
    fn will_need(&self, first: u64, count: u64) {
        let count = count.min(self.len_blocks().saturating_sub(first));
        if self.caching == Caching::Kept && count > 0 {
            let block = self.block_size as u64;
            self.advise(first * block, count * block, libc::POSIX_FADV_WILLNEED);
            self.counters.record_hint(count);
        }
    }

    fn sync(&self) -> Result<()> {
        if self.mode != OpenMode::ReadOnly {
            self.file
                .sync_data()
                .map_err(|e| Error::io(&self.name, "fdatasync", &e))?;
        }
        if self.caching == Caching::Dropped {
            self.drop_cached(0, 0);
        }
        self.counters.record_sync();
        Ok(())
    }

    fn stats(&self) -> IoStats {
        self.counters.snapshot()
    }

    fn describe(&self) -> String {
        if self.refused_direct {
            format!(
                "{} (O_DIRECT refused by the file system)",
                self.caching.describe()
            )
        } else {
            self.caching.describe().to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_reopen_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d");
        let dev = FileDevice::open(&path, 4096, OpenMode::Create, Caching::Direct).unwrap();
        let mut buf = AlignedBuf::zeroed(3 * 4096);
        buf.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        dev.sync().unwrap();
        drop(dev);

        let dev = FileDevice::open(&path, 4096, OpenMode::ReadOnly, Caching::Direct).unwrap();
        assert_eq!(dev.len_blocks(), 3);
        let mut unaligned = vec![0u8; 4096 + 1];
        dev.read_blocks(2, &mut unaligned[1..], IoClass::Leaf)
            .unwrap();
        assert_eq!(unaligned[1..4093], buf[2 * 4096..3 * 4096 - 4]);
        assert!(matches!(
            dev.write_blocks(0, &mut buf, IoClass::Data),
            Err(Error::ReadOnly { .. })
        ));
        assert!(matches!(
            dev.read_blocks(3, &mut unaligned[1..], IoClass::Leaf),
            Err(Error::Truncated { .. })
        ));
        drop(dev);

        let mut raw = std::fs::read(&path).unwrap();
        raw[4096 + 7] ^= 1;
        std::fs::write(&path, &raw).unwrap();
        let dev = FileDevice::open(&path, 4096, OpenMode::ReadOnly, Caching::Direct).unwrap();
        let mut one = AlignedBuf::zeroed(4096);
        assert!(matches!(
            dev.read_blocks(1, &mut one, IoClass::Leaf),
            Err(Error::ChecksumMismatch { block: 1, .. })
        ));

        std::fs::write(&path, &raw[..5000]).unwrap();
        assert!(matches!(
            FileDevice::open(&path, 4096, OpenMode::ReadOnly, Caching::Direct),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn buffered_mode_reads_back_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b");
        let dev = FileDevice::open(&path, 8192, OpenMode::Create, Caching::Dropped).unwrap();
        assert!(!dev.direct());
        assert!(dev.describe().contains("buffered"), "{}", dev.describe());
        let mut buf = vec![3u8; 2 * 8192];
        dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
        dev.sync().unwrap();
        let mut back = vec![0u8; 8192];
        dev.read_blocks(1, &mut back, IoClass::Data).unwrap();
        assert!(back[..8192 - 4].iter().all(|&b| b == 3));
        let s = dev.stats();
        assert_eq!((s.read_blocks, s.write_blocks, s.syncs), (1, 2, 1));
        assert!(matches!(
            FileDevice::open(&path, 1000, OpenMode::ReadOnly, Caching::Dropped),
            Err(Error::InvalidParameter { .. })
        ));
    }

    /// Whether the OS page cache holds the page of byte `offset` of `path`.
    fn resident(path: &Path, offset: usize) -> bool {
        // SAFETY: sysconf only reads its argument.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
        let file = File::open(path).unwrap();
        // SAFETY: the mapping is only passed to mincore, never read; the file is not resized
        // while it lives.
        let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
        let mut vec = vec![0u8; map.len().div_ceil(page)];
        // SAFETY: `map` is a live mapping of `map.len()` bytes and `vec` has one byte per
        // page of it.
        let rc = unsafe { libc::mincore(map.as_ptr() as *mut _, map.len(), vec.as_mut_ptr()) };
        assert_eq!(rc, 0);
        vec[offset / page] & 1 == 1
    }

    #[test]
    fn kept_pages_stay_in_the_page_cache_and_dropped_ones_leave_it() {
        let dir = tempfile::tempdir().unwrap();
        for caching in [Caching::Kept, Caching::Dropped] {
            let path = dir.path().join(format!("{caching:?}"));
            let dev = FileDevice::open(&path, 4096, OpenMode::Create, caching).unwrap();
            assert_eq!(dev.caching(), caching);
            assert!(!dev.direct());
            let mut buf = vec![5u8; 4 * 4096];
            dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
            dev.sync().unwrap();
            // Written pages may sit in one large folio that a ranged DONTNEED cannot split:
            // start the read from an empty cache, so it brings in pages of its own.
            dev.drop_cached(0, 0);
            let mut back = vec![0u8; 4096];
            dev.read_blocks(2, &mut back, IoClass::Data).unwrap();
            assert!(back[..4096 - 4].iter().all(|&b| b == 5));
            let cached = resident(&path, 2 * 4096);
            match caching {
                Caching::Kept => {
                    assert!(cached, "a kept page left the cache");
                    assert!(dev.describe().contains("pages kept"), "{}", dev.describe());
                }
                // tmpfs keeps every page whatever the advice; elsewhere DONTNEED drops it.
                _ if on_tmpfs(dir.path()) => {}
                _ => assert!(!cached, "a dropped page stayed in the cache"),
            }
        }
    }

    #[test]
    fn hinted_blocks_are_read_into_the_page_cache_when_kept() {
        let dir = tempfile::tempdir().unwrap();
        for caching in [Caching::Kept, Caching::Dropped] {
            let path = dir.path().join(format!("hint-{caching:?}"));
            let dev = FileDevice::open(&path, 4096, OpenMode::Create, caching).unwrap();
            let mut buf = vec![7u8; 64 * 4096];
            dev.write_blocks(0, &mut buf, IoClass::Data).unwrap();
            dev.sync().unwrap();
            dev.drop_cached(0, 0);
            // Where the file system is known to drop pages and read hinted ones (ext4, xfs,
            // btrfs), the pages are checked; elsewhere (tmpfs keeps every page, some network
            // and FUSE file systems ignore the hint) only the counts are.
            let checked = matches!(fs_type(dir.path()), 0xEF53 | 0x5846_5342 | 0x9123_683E);
            assert!(
                !checked || !resident(&path, 20 * 4096),
                "a dropped page stayed cached"
            );
            // Past the end is left out; nothing is read or counted as read.
            dev.will_need(20, 4);
            dev.will_need(63, 10);
            dev.will_need(64, 1);
            let s = dev.stats();
            assert_eq!(s.read_blocks, 0);
            match caching {
                Caching::Kept if !checked => assert_eq!(s.hinted_blocks, 5),
                Caching::Kept => {
                    assert_eq!(s.hinted_blocks, 5);
                    // The kernel reads hinted pages in the background: wait for them, boundedly.
                    let start = std::time::Instant::now();
                    while !(20..24).chain([63]).all(|b| resident(&path, b * 4096)) {
                        assert!(
                            start.elapsed() < std::time::Duration::from_secs(10),
                            "hinted pages not cached after 10 s"
                        );
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
                _ => assert_eq!(s.hinted_blocks, 0),
            }
        }
    }

    fn on_tmpfs(path: &Path) -> bool {
        fs_type(path) == libc::TMPFS_MAGIC
    }

    /// The file system type (`statfs`'s `f_type`) of `path`, 0 when unknown.
    fn fs_type(path: &Path) -> libc::__fsword_t {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statfs writes only into `st`, which is zeroed and of its type.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
        if rc == 0 {
            st.f_type
        } else {
            0
        }
    }
}
