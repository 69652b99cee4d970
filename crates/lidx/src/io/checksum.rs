//! Block checksums: every block lidx writes ends with a crc32c trailer, verified on every read.
//!
//! Layout of a block of `B` bytes:
//!
//! | offset    | size    | field                                                  |
//! |-----------|---------|--------------------------------------------------------|
//! | 0         | `B - 4` | payload, owned by the structure stored in the file     |
//! | `B - 4`   | 4       | crc32c of (block number as u64 LE, then the payload), LE |
//!
//! Mixing the block number into the checksum catches a block written to, or read from, the
//! wrong place, not only flipped bits. A block that was never written (zeros) fails the check,
//! so a file with a hole is reported, never read as an empty node. Devices seal blocks in
//! [`crate::io::BlockDevice::write_blocks`] and verify them in `read_blocks`, so every structure
//! gets the check without doing anything; structures see `B - 4` usable bytes per block.

use crate::error::{Error, Result};

/// Bytes at the end of every block taken by the checksum.
pub const BLOCK_TRAILER: usize = 4;

fn block_crc(block_no: u64, payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block_no.to_le_bytes()), payload)
}

/// Writes the checksum of `block` (a whole block: payload then trailer) for block `block_no`.
pub fn seal(block: &mut [u8], block_no: u64) {
    let split = block.len() - BLOCK_TRAILER;
    let crc = block_crc(block_no, &block[..split]);
    block[split..].copy_from_slice(&crc.to_le_bytes());
}

/// Checks the checksum of `block`, read from block `block_no` of `file`.
pub fn verify(block: &[u8], block_no: u64, file: &str) -> Result<()> {
    let split = block.len() - BLOCK_TRAILER;
    let mut stored = [0u8; BLOCK_TRAILER];
    stored.copy_from_slice(&block[split..]);
    let expected = u32::from_le_bytes(stored);
    let got = block_crc(block_no, &block[..split]);
    if got == expected {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch {
            file: file.to_string(),
            block: block_no,
            expected,
            got,
        })
    }
}

/// Seals each of the consecutive blocks in `buf`, the first being block `first`.
pub(crate) fn seal_run(buf: &mut [u8], first: u64, block_size: usize) {
    for (i, block) in buf.chunks_exact_mut(block_size).enumerate() {
        seal(block, first + i as u64);
    }
}

/// Verifies each of the consecutive blocks in `buf`, the first being block `first` of `file`.
pub(crate) fn verify_run(buf: &[u8], first: u64, block_size: usize, file: &str) -> Result<()> {
    for (i, block) in buf.chunks_exact(block_size).enumerate() {
        verify(block, first + i as u64, file)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_blocks_verify_and_any_flip_or_move_fails() {
        let mut block: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        seal(&mut block, 9);
        verify(&block, 9, "f").unwrap();
        assert!(matches!(
            verify(&block, 10, "f"),
            Err(Error::ChecksumMismatch { block: 10, .. })
        ));
        for bit in [0usize, 100 * 8 + 3, 4095 * 8 + 7] {
            let mut bad = block.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(
                verify(&bad, 9, "f").is_err(),
                "flip of bit {bit} not caught"
            );
        }
        assert!(
            verify(&[0u8; 4096], 0, "f").is_err(),
            "a zero block must not verify"
        );
    }
}
