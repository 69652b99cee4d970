//! Fuzzes the manifest and `CURRENT` decoders: any bytes either decode (and re-encode to the
//! same bytes) or give a typed error; never a panic.

use lidx::raw::kv::manifest::{
    decode_current, decode_manifest, encode_current, encode_manifest, MANIFEST_MAGIC, VERSION,
};

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get the right magic and version and a correct checksum,
    // so the fuzzer reaches the body checks.
    let mut data = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() >= 44 {
        data[0..8].copy_from_slice(&MANIFEST_MAGIC.to_le_bytes());
        data[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let n = data.len();
        let crc = crc32c::crc32c(&data[..n - 4]);
        data[n - 4..].copy_from_slice(&crc.to_le_bytes());
    }
    match decode_manifest("fuzz", &data) {
        Ok((n, m)) => assert_eq!(encode_manifest(n, &m).unwrap(), data),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    match decode_current("fuzz", &data) {
        Ok(n) => assert_eq!(encode_current(n).as_slice(), &data[..]),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
