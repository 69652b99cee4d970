//! Fuzzes the decoder of a store's `STORE` file: any bytes either decode (and re-encode to the
//! same bytes through a new store's identity) or give a typed error; never a panic.

use lidx::raw::kv::store::{decode_identity, STORE_MAGIC, STORE_VERSION};

pub fn check(data: &[u8]) {
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() >= 56 {
        data[0..8].copy_from_slice(&STORE_MAGIC.to_le_bytes());
        data[8..12].copy_from_slice(&STORE_VERSION.to_le_bytes());
        let spec = (data.len() - 56) as u32;
        data[32..36].copy_from_slice(&spec.to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&data[..36]), &data[40..]);
        data[36..40].copy_from_slice(&crc.to_le_bytes());
    }
    match decode_identity("fuzz", &data) {
        Ok(options) => assert!(options.block_size >= 4096),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
