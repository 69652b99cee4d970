//! Fuzzes the `log` engine's checkpoint decoder: any bytes either decode to a checkpoint whose
//! entry count is the trailer's or give a typed error; never a panic.

use lidx::raw::kv::store::log::{decode_checkpoint, CHECKPOINT_MAGIC, CHECKPOINT_VERSION};

/// Bytes of a checkpoint's header and trailer.
const HEADER: usize = 72;
const TRAILER: usize = 16;

pub fn check(data: &[u8]) {
    let Some((&setup, rest)) = data.split_first() else {
        return;
    };
    let u64_keys = setup & 2 == 0;
    let mut data = rest.to_vec();
    // Inputs whose first byte is odd get the right magic, version and key kind and correct
    // checksums, so the fuzzer reaches the segments and entries.
    if setup & 1 == 1 && data.len() >= HEADER + TRAILER {
        data[0..8].copy_from_slice(CHECKPOINT_MAGIC);
        data[8..12].copy_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
        let kind: u32 = if u64_keys { 1 } else { 2 };
        data[12..16].copy_from_slice(&kind.to_le_bytes());
        let crc = crc32c::crc32c(&data[..64]);
        data[64..68].copy_from_slice(&crc.to_le_bytes());
        let end = data.len() - TRAILER;
        let crc = crc32c::crc32c(&data[HEADER..end + 8]);
        data[end + 8..end + 12].copy_from_slice(&crc.to_le_bytes());
    }
    match decode_checkpoint(&data, u64_keys) {
        Ok((_, segments, entries)) => {
            let end = data.len() - TRAILER;
            let count = u64::from_le_bytes(data[end..end + 8].try_into().unwrap());
            assert_eq!(entries as u64, count);
            assert!(HEADER + 32 * segments <= end);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
