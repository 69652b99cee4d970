//! Fuzzes the saved-index decoder of the joins: any bytes either decode (header checks, model
//! length and checksum) to model bytes that then decode as a PGM or fail with a typed error,
//! or give a typed error; never a panic.

use lidx::mem::Persist;
use lidx::mem::Pgm;
use lidx::raw::codec::Decoder;
use lidx::raw::join::table_index::{decode_saved, INDEX_HEADER_BYTES, INDEX_MAGIC, INDEX_VERSION};

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get a valid magic, version and checksums, so the
    // fuzzer reaches the length checks and the model decoder.
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() >= INDEX_HEADER_BYTES {
        data[0..8].copy_from_slice(&INDEX_MAGIC.to_le_bytes());
        data[8..12].copy_from_slice(&INDEX_VERSION.to_le_bytes());
        let len = (data.len() - INDEX_HEADER_BYTES) as u64;
        let len = len.min(u64::from_le_bytes(data[48..56].try_into().unwrap()));
        data[48..56].copy_from_slice(&len.to_le_bytes());
        let model_crc =
            crc32c::crc32c(&data[INDEX_HEADER_BYTES..INDEX_HEADER_BYTES + len as usize]);
        data[56..60].copy_from_slice(&model_crc.to_le_bytes());
        let header_crc = crc32c::crc32c(&data[..60]);
        data[60..64].copy_from_slice(&header_crc.to_le_bytes());
        data[INDEX_HEADER_BYTES + len as usize..].fill(0);
    }
    match decode_saved("fuzz", &data) {
        Ok((_, model)) => {
            let mut d = Decoder::new("fuzz", model);
            if let Ok(pgm) = <Pgm<u64> as Persist<u64>>::decode(&mut d) {
                let _ = lidx::StaticIndex::search(&pgm, 12345u64);
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
