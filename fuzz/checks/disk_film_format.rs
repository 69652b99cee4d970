//! Fuzzes FILM's decoders (`lidx::raw::disk::film`): any bytes either decode to a header whose
//! fields agree and re-encode to the same header, or give a typed error; the bytes after the
//! header, as a snapshot under that header (its length and crc made to match, so the fuzzer
//! reaches the entry checks), decode to ascending keys whose locators are cached items or
//! slots of the header's pages, the cached items exactly those in memory, and re-encode to the
//! same bytes, or give a typed error; the same bytes as its data file's header are accepted
//! only when they are that header (one written for it is); the block where the next flush
//! puts its snapshot overlaps neither the header slots nor the snapshot the header names.
//! Never a panic.

use lidx::raw::disk::film::{
    check_data_header, decode_header, decode_snapshot, encode_data_header, next_snapshot_first,
    Header, DATA_KIND, DATA_MAGIC, HEADER_BYTES as HEADER, IN_MEMORY, KIND, MAGIC, SNAPSHOT_FIRST,
    VERSION,
};

pub fn check(data: &[u8]) {
    // Inputs starting with an odd byte get the right magic, version and kind, so the fuzzer
    // reaches the field checks.
    let mut bytes = data.to_vec();
    if bytes.first().is_some_and(|b| b & 1 == 1) && bytes.len() >= 16 {
        bytes[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        bytes[8..12].copy_from_slice(&VERSION.to_le_bytes());
        bytes[12..16].copy_from_slice(&KIND.to_le_bytes());
    }
    let Ok(header) = decode_header(&bytes, "fuzz") else {
        return;
    };
    let mut again = vec![0u8; HEADER];
    header.encode(&mut again);
    assert_eq!(decode_header(&again, "fuzz").unwrap(), header);
    let snapshot = &bytes[HEADER.min(bytes.len())..];
    let mut data = vec![0u8; 32];
    encode_data_header(
        header.params.payload_size,
        header.block_size,
        header.pair,
        &mut data,
    );
    check_data_header(&data, &header, "fuzz").unwrap();
    // A next snapshot of as many blocks as the input's second byte says.
    let usable = header.block_size as usize - lidx::io::BLOCK_TRAILER;
    let committed = header.snapshot_blocks(usable);
    let blocks = u64::from(bytes.get(1).copied().unwrap_or(0)) + 1;
    let first = next_snapshot_first(header.snapshot_first, committed, blocks);
    assert!(first >= SNAPSHOT_FIRST);
    assert!(first + blocks <= header.snapshot_first || first >= header.snapshot_first + committed);
    // The rest as a data header: the magic, version and kind made right for odd inputs.
    let mut other = snapshot.to_vec();
    if bytes.get(1).is_some_and(|b| b & 1 == 1) && other.len() >= 16 {
        other[0..8].copy_from_slice(&DATA_MAGIC.to_le_bytes());
        other[8..12].copy_from_slice(&VERSION.to_le_bytes());
        other[12..16].copy_from_slice(&DATA_KIND.to_le_bytes());
    }
    if check_data_header(&other, &header, "fuzz").is_ok() {
        assert_eq!(&other[16..32], &data[16..32]);
    }
    let header = Header {
        len: header.len.min(snapshot.len() as u64 / 16),
        snapshot_bytes: snapshot.len() as u64,
        snapshot_crc: u64::from(crc32c::crc32c(snapshot)),
        ..header
    };
    if let Ok(snap) = decode_snapshot(snapshot, &header, "fuzz") {
        assert!(snap.keys.windows(2).all(|w| w[0] < w[1]));
        let slots = header.slots() as u64;
        for &loc in &snap.locs {
            assert!(loc == IN_MEMORY || (loc >> 16 < header.pages && loc & 0xffff < slots));
        }
        let in_memory = snap.locs.iter().filter(|&&l| l == IN_MEMORY).count();
        assert_eq!(snap.cached.len(), in_memory);
        assert_eq!(snap.encode(header.params.payload_size), snapshot);
    }
}
