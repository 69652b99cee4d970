//! Fuzzes the write-ahead log's decoders: any bytes, read as one record or as a whole segment,
//! either decode (and a decoded record re-encodes to the same bytes) or give a typed error;
//! never a panic.

use lidx::kv::WalRecovery;
use lidx::raw::kv::wal::{
    decode_record, encode_record, encode_segment_header, scan_segment, FRAME_BYTES,
    SEALED_UNSYNCED, SEGMENT_HEADER_BYTES,
};

pub fn check(data: &[u8]) {
    if let Ok((seq, record, n)) = decode_record("fuzz", 0, data) {
        assert!((FRAME_BYTES..=data.len()).contains(&n));
        let mut again = Vec::new();
        encode_record(seq, &record, &mut again);
        assert_eq!(again, &data[..n]);
    }
    // Inputs starting with an odd byte get a valid segment header, so the fuzzer reaches the
    // record walk and the torn-tail / corrupt-middle decision; the byte's second bit marks the
    // segment sealed unsynced (its end is read as a last segment's).
    let mut segment = data.to_vec();
    let mut unsynced = false;
    if data.first().is_some_and(|b| b & 1 == 1) {
        let first = 1 + u64::from(data.get(1).copied().unwrap_or(0));
        unsynced = data[0] & 2 != 0;
        let flags = if unsynced { SEALED_UNSYNCED } else { 0 };
        let mut s = encode_segment_header(first, 0, flags).to_vec();
        s.extend_from_slice(&data[1..]);
        segment = s;
    }
    for (last, mode) in [false, true]
        .into_iter()
        .flat_map(|l| WalRecovery::ALL.map(|m| (l, m)))
    {
        let mut next = None;
        match scan_segment("fuzz", &segment, last, mode, |seq, _| {
            if let Some(n) = next {
                assert_eq!(seq, n);
            }
            next = seq.checked_add(1);
            Ok(())
        }) {
            Ok(scan) => {
                assert!(scan.valid_len >= SEGMENT_HEADER_BYTES && scan.valid_len <= segment.len());
                assert!(scan.next_seq >= scan.first_seq);
                let cut = scan.valid_len < segment.len();
                assert_eq!(cut, scan.damage.is_some());
                assert!(!cut || last || unsynced || mode == WalRecovery::PointInTime);
                assert!(!cut || mode != WalRecovery::AbsoluteConsistency);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}
