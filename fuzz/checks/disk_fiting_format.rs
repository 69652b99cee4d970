//! Fuzzes the disk FITing-tree's decoders (`lidx::raw::disk::fiting::format`): the segment file's
//! header, a segment's meta block and an inner entry. Any bytes either decode to values whose
//! fields agree (and re-encode to the same values) or give a typed error; never a panic.

use lidx::disk::DiskFitingParams;
use lidx::raw::disk::fiting::format::{
    decode_header, decode_meta, decode_segref, Header, MAGIC, SEGMENT_TAG, VERSION,
};

pub fn check(data: &[u8]) {
    let mut bytes = data.to_vec();
    // An odd first byte gets the header's magic and version, an even one (of 2 mod 4) the
    // meta block's tag, so the fuzzer reaches the field checks.
    match bytes.first().copied() {
        Some(b) if b & 1 == 1 && bytes.len() >= 12 => {
            bytes[0..8].copy_from_slice(&MAGIC.to_le_bytes());
            bytes[8..12].copy_from_slice(&VERSION.to_le_bytes());
        }
        Some(b) if b & 3 == 2 && bytes.len() >= 8 => {
            bytes[0..8].copy_from_slice(&SEGMENT_TAG.to_le_bytes());
        }
        _ => {}
    }
    if let Ok(h) = decode_header(&bytes, "fuzz") {
        assert!(h.per_block() >= 1);
        assert!(h.extra >= 1 && h.extra + 1 + h.buffer_blocks() <= h.blocks);
        let mut again = vec![0u8; bytes.len()];
        h.encode(&mut again);
        assert_eq!(decode_header(&again, "fuzz").unwrap(), h);
    }
    let header = Header {
        params: DiskFitingParams::default(),
        block_size: 4096,
        len: 1000,
        segments: 10,
        blocks: 200,
        extra: 1,
        live_blocks: 100,
        keys_fingerprint: 0,
    };
    let block = u64::from(data.get(1).copied().unwrap_or(0));
    if let Ok(m) = decode_meta(&bytes, block, &header, "fuzz") {
        assert_eq!(m.block, block);
        assert!(m.buffered as usize <= header.params.buffer);
        assert!(block + m.span(&header) <= header.blocks);
        let mut again = vec![0u8; bytes.len()];
        m.encode(&mut again);
        assert_eq!(decode_meta(&again, block, &header, "fuzz").unwrap(), m);
    }
    if let Ok(r) = decode_segref(&bytes, &header, "fuzz") {
        assert!(r.model.slope.is_finite() && r.model.slope >= 0.0);
        assert!(r.block >= 1 && r.block < header.blocks);
        let mut again = vec![0u8; 40];
        r.encode(&mut again);
        assert_eq!(decode_segref(&again, &header, "fuzz").unwrap(), r);
    }
}
