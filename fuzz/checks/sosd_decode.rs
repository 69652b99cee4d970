//! Fuzzes the SOSD decoder: any bytes either decode to exactly the keys the header announces
//! or give a typed error; never a panic, never a guess.

use lidx_bench::sosd::decode_sosd;

pub fn check(data: &[u8]) {
    match decode_sosd(data) {
        Ok(keys) => {
            let count = u64::from_le_bytes(data[..8].try_into().unwrap());
            assert_eq!(keys.len() as u64, count);
            assert_eq!(data.len(), 8 + 8 * keys.len());
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
