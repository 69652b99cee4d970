//! The [`BlockDevice`] trait: the only way lidx reads or writes a file.
//!
//! A device is one file seen as an array of fixed-size blocks (4096 bytes by default; any
//! multiple of 4096 for real files, so `O_DIRECT` alignment holds). A request reads or writes a
//! run of consecutive blocks: one call is one I/O request, which is what paper 002 G1 compares
//! (all-at-once = one request for the whole window, one-by-one = a request per block) and what
//! the simulated devices charge for. Every block carries a crc32c trailer (see
//! [`crate::io::checksum`]): `write_blocks` seals each block in the caller's buffer and
//! `read_blocks` verifies each block, so a structure sees [`BlockDevice::payload_size`] usable
//! bytes per block and never reads a corrupt block without an error naming the file and block.
//!
//! Devices take `&self` for every operation (they synchronize inside), so several reader
//! threads can share one through an `Arc<dyn BlockDevice>`.

use crate::error::{Error, Result};
use crate::io::aligned::AlignedBuf;
use crate::io::checksum::BLOCK_TRAILER;
use crate::io::stats::{IoClass, IoStats};

/// Default block size: 4 KiB, the page size of paper 003 and paper 002.
pub const DEFAULT_BLOCK_SIZE: usize = 4096;

/// A file of fixed-size, checksummed blocks.
pub trait BlockDevice: Send + Sync {
    /// The file name (or a name for an in-memory device), used in error messages.
    fn name(&self) -> &str;

    /// Block size in bytes, including the checksum trailer.
    fn block_size(&self) -> usize;

    /// Usable bytes per block: the block size minus the checksum trailer.
    fn payload_size(&self) -> usize {
        self.block_size() - BLOCK_TRAILER
    }

    /// Number of blocks in the device.
    fn len_blocks(&self) -> u64;

    /// Reads blocks `first .. first + buf.len() / block_size` in ONE request and verifies each
    /// block's checksum. `buf.len()` must be a non-zero multiple of the block size. Reading past
    /// the end is [`Error::Truncated`]; a bad block is [`Error::ChecksumMismatch`].
    fn read_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()>;

    /// Hands blocks `first .. first + count` to `each`, in order, each whole (payload and
    /// trailer) and verified as [`BlockDevice::read_blocks`] verifies it. The default reads
    /// them into `buf` (grown to fit) in one request (`visit_read`); a
    /// [`crate::io::PageCache`] that holds all of them hands over its own copies instead of
    /// copying them out. `each` may run under the device's lock: it must not use the device.
    fn visit_blocks(
        &self,
        first: u64,
        count: u64,
        class: IoClass,
        buf: &mut AlignedBuf,
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        visit_read(self, first, count, class, buf, each)
    }

    /// Seals (writes the checksum trailer of) each block of `buf` in place, then writes them at
    /// `first ..` in ONE request. Writing at or past the end grows the device; a gap left
    /// before `first` reads back as a checksum error.
    fn write_blocks(&self, first: u64, buf: &mut [u8], class: IoClass) -> Result<()>;

    /// A hint that blocks `first .. first + count` will be read soon. A file device whose
    /// pages the OS page cache keeps starts reading them in the background, so that many reads
    /// are in flight at once where its caller reads one block at a time; `O_DIRECT` devices,
    /// buffered ones that drop their pages, simulated and cached devices do nothing, and a
    /// wrapper that injects faults passes it on. Never an error: blocks past the end are left
    /// out, and a hint the kernel refuses changes nothing but the time of the reads after it.
    /// Whether a hint pays depends on the machine and on what the cache holds: a warm page
    /// costs the call and saves nothing.
    fn will_need(&self, first: u64, count: u64) {
        let _ = (first, count);
    }

    /// Makes every completed write durable.
    fn sync(&self) -> Result<()>;

    /// The device's counters now (see [`IoStats`]).
    fn stats(&self) -> IoStats;

    /// How the device does I/O, for reports: `"file O_DIRECT"`, `"sim:nvme"`, ...
    fn describe(&self) -> String;
}

/// [`BlockDevice::visit_blocks`] by reading: the blocks into `buf` (grown to fit) with one
/// [`BlockDevice::read_blocks`], then each handed to `each`.
pub(crate) fn visit_read<D: BlockDevice + ?Sized>(
    device: &D,
    first: u64,
    count: u64,
    class: IoClass,
    buf: &mut AlignedBuf,
    each: &mut dyn FnMut(&[u8]),
) -> Result<()> {
    let size = device.block_size();
    let len = usize::try_from(count).map_or(usize::MAX, |c| c.saturating_mul(size));
    if buf.len() < len {
        *buf = AlignedBuf::zeroed(len);
    }
    let buf = &mut buf[..len];
    device.read_blocks(first, buf, class)?;
    buf.chunks(size).for_each(each);
    Ok(())
}

/// Checks a request's buffer: a non-zero whole number of blocks. Returns the block count.
pub(crate) fn request_blocks(name: &str, block_size: usize, len: usize) -> Result<u64> {
    if len == 0 || !len.is_multiple_of(block_size) {
        return Err(Error::InvalidParameter {
            name: "buffer length",
            value: format!("{len} (device {name}, block size {block_size})"),
            expected: "a non-zero multiple of the device's block size",
        });
    }
    Ok((len / block_size) as u64)
}

/// Checks that blocks `first .. first + count` exist in a device of `have` blocks:
/// [`Error::Truncated`] otherwise.
pub(crate) fn check_in_bounds(name: &str, first: u64, count: u64, have: u64) -> Result<()> {
    if first.checked_add(count).is_none_or(|end| end > have) {
        return Err(Error::Truncated {
            file: name.to_string(),
            what: format!(
                "read of blocks {first}..{} past the end ({have} blocks)",
                first.saturating_add(count)
            ),
        });
    }
    Ok(())
}

/// Checks a block size: a power of two, at least 512 bytes; real files need a multiple of 4096.
pub fn check_block_size(block_size: usize, for_file: bool) -> Result<()> {
    let min = if for_file { 4096 } else { 512 };
    if block_size < min || !block_size.is_power_of_two() || block_size > (1 << 24) {
        return Err(Error::InvalidParameter {
            name: "block_size",
            value: block_size.to_string(),
            expected: if for_file {
                "a power of two from 4096 to 16 MiB (O_DIRECT needs 4 KiB alignment)"
            } else {
                "a power of two from 512 to 16 MiB"
            },
        });
    }
    Ok(())
}
