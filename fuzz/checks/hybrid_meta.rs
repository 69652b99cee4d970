//! Fuzzes the hybrid index's manifest-meta decoder: any bytes either decode (and re-encode to
//! the same bytes) or give a typed error; never a panic.

use lidx::raw::kv::hybrid::decode_meta;

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get the right version, so the fuzzer reaches the fields.
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() >= 4 {
        data[0..4].copy_from_slice(&1u32.to_le_bytes());
    }
    match decode_meta("fuzz", &data) {
        Ok(m) => assert_eq!(m.encode(), data),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
