//! Fuzzes the disk PGM's manifest decoders: any bytes either decode to a header whose fields
//! agree (levels ascending within their capacities, level 0 within its capacity) and re-encode
//! to the same header, or give a typed error; the tail of the input, read as a run of flagged
//! records (`lidx::raw::disk::flagged_records`), decodes to strictly ascending keys or gives a typed
//! error. Never a panic.

use lidx::raw::disk::dpgm::manifest::{capacity, decode_manifest, MAGIC, VERSION};
use lidx::raw::disk::flagged_records::{decode_records, encode_records};

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get the right magic and version, so the fuzzer reaches
    // the field checks.
    let mut bytes = data.to_vec();
    if bytes.first().is_some_and(|b| b & 1 == 1) && bytes.len() >= 12 {
        bytes[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        bytes[8..12].copy_from_slice(&VERSION.to_le_bytes());
    }
    if let Ok(m) = decode_manifest(&bytes, "fuzz") {
        assert!(m.level0 as usize <= m.params.base && m.region <= 1);
        for pair in m.levels.windows(2) {
            assert!(pair[0].level < pair[1].level);
        }
        for l in &m.levels {
            assert!(l.records >= 1 && l.records <= capacity(m.params.base, l.level));
            assert!(l.generation < m.next_generation);
        }
        let mut again = vec![0u8; bytes.len().max(m.bytes())];
        m.encode(&mut again);
        assert_eq!(decode_manifest(&again, "fuzz").unwrap(), m);
    }
    // The records check: 512-byte blocks of 8-byte payloads, the count from the first byte.
    let count = usize::from(data.first().copied().unwrap_or(0));
    let blocks = data.len() / 512;
    if let Ok(run) = decode_records(&data[..blocks * 512], count, 8, 512, 1, "fuzz") {
        assert_eq!(run.len(), count);
        assert!(run.keys.windows(2).all(|w| w[0] < w[1]));
        let mut again = vec![0u8; blocks * 512];
        encode_records(&run, 8, 512, &mut again);
        assert_eq!(
            decode_records(&again, count, 8, 512, 1, "fuzz").unwrap(),
            run
        );
    }
}
