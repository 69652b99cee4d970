//! Fuzzes the static learned index's data-block decoder: any bytes, any expected count and
//! payload size either decode to a block whose keys are strictly increasing and whose every
//! record can be read, or give a typed error; never a panic.

use lidx::raw::disk::static_learned::data_block::decode_data_block;
use lidx::Key;

pub fn check(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let expected = usize::from(data[0] >> 1);
    let payload_size = usize::from(data[1] % 32);
    let mut bytes = data[2..].to_vec();
    // Half the inputs get the right tag and count, so the fuzzer reaches the key checks.
    if data[0] & 1 == 1 && bytes.len() >= 8 {
        bytes[0..4].copy_from_slice(&(expected as u32).to_le_bytes());
        bytes[4..8].copy_from_slice(b"SLdb");
    }
    let bytes = &bytes[..];
    check_block::<u64>(bytes, expected, payload_size);
    check_block::<[u8; 16]>(bytes, expected, payload_size);
    check_block::<f64>(bytes, expected, payload_size);
}

fn check_block<K: Key>(bytes: &[u8], expected: usize, payload_size: usize) {
    match decode_data_block::<K>("fuzz", 1, bytes, expected, payload_size) {
        Ok(block) => {
            assert_eq!(block.len(), expected);
            for j in 0..block.len() {
                assert_eq!(block.payload(j).len(), payload_size);
                if j > 0 {
                    assert!(block.key(j - 1).key_lt(&block.key(j)));
                }
                assert_eq!(block.lower_bound(&block.key(j)), j);
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}
