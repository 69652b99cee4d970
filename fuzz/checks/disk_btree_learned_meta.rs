//! Fuzzes the learned-inner B+-tree's meta chain decoders: the first 4 bytes choose the slots
//! (byte 0), the split leaves (byte 1) and the file's blocks (bytes 2..4); the rest is read
//! both as one meta block of 508 usable bytes (when long enough) and as a meta stream for
//! `u64` keys. Any input either decodes to something consistent (a block's bytes and link
//! inside the file; a model whose slot for any key is a slot and never decreases as the key
//! grows, split leaves ascending, a stream that re-encodes to the same bytes) or gives a typed
//! error naming block 7; never a panic.

use lidx::raw::disk::btree_learned::meta::encode_meta;
use lidx::raw::disk::btree_learned::{decode_meta, decode_meta_block};
use lidx::Error;

pub fn check(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let slots = u64::from(data[0].max(1));
    let leaves = slots + u64::from(data[1]);
    let blocks = u64::from(u16::from_le_bytes([data[2], data[3]]));
    let rest = &data[4..];
    if rest.len() >= 508 {
        if let Ok((bytes, next)) = decode_meta_block(rest, 508, 7, blocks, "fuzz") {
            assert!(bytes.len() <= 508 - 16);
            assert!(next.is_none_or(|n| n >= 1 && n < blocks && n != 7));
        }
    }
    match decode_meta::<u64>(rest, "fuzz", 7, slots, leaves, blocks) {
        Ok(meta) => {
            assert_eq!(meta.model.slots, slots);
            assert_eq!(meta.splits.len() as u64 + slots, leaves);
            let mut last = 0;
            for i in 0..64u64 {
                let s = meta
                    .model
                    .slot_of(&i.wrapping_mul(0x0400_0000_0000_0000 / 16));
                assert!(s < slots && s >= last);
                last = s;
            }
            assert!(meta.splits.windows(2).all(|w| w[0].key < w[1].key));
            assert_eq!(encode_meta(&meta), rest);
        }
        Err(Error::Corrupt { block, .. }) => assert_eq!(block, Some(7)),
        Err(other) => panic!("untyped meta error {other:?}"),
    }
}
