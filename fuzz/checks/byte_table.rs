//! Fuzzes the byte table reader: any blocks (checksums made valid, so the parsing is reached)
//! either open, check, answer lookups and iterate both ways, or give a typed error; never a
//! panic, a hang or an allocation the file does not justify.

use std::ops::Bound;
use std::sync::Arc;

use lidx::disk::ByteTable;
use lidx::io::Storage;
use lidx::raw::disk::byte_table::{BYTE_TABLE_MAGIC, BYTE_TABLE_VERSION};

pub fn check(data: &[u8]) {
    let storage = Storage::ram();
    let payload = storage.block_size() - lidx::io::BLOCK_TRAILER;
    let mut blocks: Vec<u8> = Vec::new();
    for chunk in data.chunks(payload) {
        let mut b = chunk.to_vec();
        b.resize(storage.block_size(), 0);
        blocks.extend_from_slice(&b);
    }
    if blocks.is_empty() {
        return;
    }
    // Inputs starting with an odd byte get a right magic, version and block size: version 3
    // (no point indexes, 2 more stream bytes a block) when their second bit is set too, so
    // both layouts are reached.
    if data[0] & 1 == 1 {
        let version = if data[0] & 2 == 2 {
            3
        } else {
            BYTE_TABLE_VERSION
        };
        blocks[0..8].copy_from_slice(&BYTE_TABLE_MAGIC.to_le_bytes());
        blocks[8..12].copy_from_slice(&u32::to_le_bytes(version));
        blocks[12..16].copy_from_slice(&(storage.block_size() as u32).to_le_bytes());
    }
    let device = storage.create("t").unwrap();
    device
        .write_blocks(0, &mut blocks, lidx::io::IoClass::Data)
        .unwrap();
    let Ok(table) = ByteTable::open(&storage, "t") else {
        return;
    };
    let _ = table.check();
    for key in [&b"a"[..], b"\x00", b"\xff\xff", b"m"] {
        let _ = table.get(key);
    }
    let table = Arc::new(table);
    for forward in [true, false] {
        for r in table
            .cursor(Bound::Unbounded, Bound::Unbounded, forward)
            .take(10_000)
        {
            if r.is_err() {
                break;
            }
        }
    }
}
