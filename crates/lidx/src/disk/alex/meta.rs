//! The meta block (block 0 of the inner-node file) and the data-node file's header block.
//!
//! Paper 003 §4.1: "since the root node in ALEX can be changed as a consequence of an insert
//! operation, the first block of the index is set as the meta block, which records the address
//! of the root node". Ours records the root and everything needed to reopen the index without
//! a scan (entries, the two files' ends, node counts, the bytes of nodes marked invalid) and
//! what the files are: magic, version, kind, block and payload size, ALEX's parameters, and a
//! file id that the data file's header repeats, so two files of different indexes cannot be
//! opened as one, and the fingerprint of the keys it was built from
//! ([`keys_fingerprint`](crate::disk::keys_fingerprint), unchanged by later writes), which binds the files to
//! their dataset ([`crate::disk::check_built_from`]). It is written at build, when the root
//! changes, and by `flush`. Version 1 had no fingerprint; its files are refused
//! ([`Error::UnsupportedVersion`]: rebuild them with `lidx build`).
//!
//! Meta block, little-endian, in the usable bytes of block 0 of `<name>.inner`:
//!
//! | offset | size | field                                                          |
//! |--------|------|----------------------------------------------------------------|
//! | 0      | 8    | magic `b"lidxALX1"` ([`MAGIC`])                                |
//! | 8      | 4    | format version, 2                                              |
//! | 12     | 4    | kind: 1 = meta block ([`KIND_META`])                           |
//! | 16     | 4    | block size in bytes (checksum trailer included)                |
//! | 20     | 4    | payload size in bytes                                          |
//! | 24     | 8    | largest node in bytes (`AlexParams::max_node_bytes`)           |
//! | 32     | 4    | min density, percent                                           |
//! | 36     | 4    | init density, percent                                          |
//! | 40     | 4    | max density, percent                                           |
//! | 44     | 4    | expected inserts, percent                                      |
//! | 48     | 8    | file id (the data file's header holds the same)                |
//! | 56     | 8    | entries                                                        |
//! | 64     | 8    | root address (`super::addr`; tagged when it is a data node)  |
//! | 72     | 8    | end of the inner-node file's nodes (byte position)             |
//! | 80     | 8    | end of the data-node file's nodes (byte position)              |
//! | 88     | 8    | live inner nodes                                               |
//! | 96     | 8    | live data nodes                                                |
//! | 104    | 8    | bytes of inner nodes marked invalid                            |
//! | 112    | 8    | bytes of data nodes marked invalid                             |
//! | 120    | 8    | address of the leftmost data node                              |
//! | 128    | 8    | fingerprint of the keys built from                             |
//!
//! Data file header, in the usable bytes of block 0 of `<name>.data`: magic (8), version (4),
//! kind 2 = data file ([`KIND_DATA`]) (4), block size (4), payload size (4), file id (8).
//!
//! Decoding checks the magic ([`Error::BadMagic`]), version ([`Error::UnsupportedVersion`]),
//! kind, and that the fields agree (parameters valid, the root and first leaf inside their
//! files, the ends past block 0); anything else is [`Error::Corrupt`] for block 0.

use crate::codec::Encoder;
use crate::disk::header_fields::{
    check_block_size, corrupt_block0, put_u32, put_u64, u32_at, u64_at, HeaderStart, KIND_AT,
};
use crate::error::{Error, Result};
use crate::mem::alex::AlexParams;

use super::addr::Addr;
use super::params::DiskAlexParams;

/// Magic number of both files of an on-disk ALEX.
pub const MAGIC: u64 = u64::from_le_bytes(*b"lidxALX1");
/// Format version this build writes and reads (2: the keys' fingerprint).
pub(crate) const VERSION: u32 = 2;
/// Kind of the meta block.
pub(crate) const KIND_META: u32 = 1;
/// Kind of the data file's header.
pub const KIND_DATA: u32 = 2;
/// Bytes of the meta block's fields.
pub(crate) const META_BYTES: usize = 136;
/// Bytes of the data file header's fields.
pub(crate) const DATA_HEADER_BYTES: usize = 32;
/// What the meta block starts with.
const META_START: HeaderStart =
    HeaderStart::new("an on-disk ALEX's meta block", MAGIC, VERSION, META_BYTES)
        .kind(KIND_META)
        .truncated();
/// What the data file's header starts with.
const DATA_START: HeaderStart = HeaderStart::new(
    "an on-disk ALEX's data file header",
    MAGIC,
    VERSION,
    DATA_HEADER_BYTES,
)
.kind(KIND_DATA)
.truncated();

/// The meta block's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// Block size in bytes.
    pub block_size: u32,
    /// Parameters the index was built with.
    pub params: DiskAlexParams,
    /// Id shared with the data file.
    pub file_id: u64,
    /// Entries.
    pub len: u64,
    /// Root address, raw (`Meta::root` decodes it).
    pub root_raw: u64,
    /// End of the inner nodes, byte position.
    pub inner_end: u64,
    /// End of the data nodes, byte position.
    pub data_end: u64,
    /// Live inner nodes.
    pub inner_nodes: u64,
    /// Live data nodes.
    pub data_nodes: u64,
    /// Bytes of inner nodes marked invalid.
    pub inner_invalid: u64,
    /// Bytes of data nodes marked invalid.
    pub data_invalid: u64,
    /// Leftmost data node, raw.
    pub first_leaf_raw: u64,
    /// Fingerprint of the keys the index was built from.
    pub keys_fingerprint: u64,
}

impl Meta {
    /// Writes the fields into `out` (at least [`META_BYTES`]).
    pub fn encode(&self, out: &mut [u8]) {
        let p = &self.params.alex;
        META_START.encode(out);
        let mut e = Encoder::new();
        e.u32(self.block_size);
        e.u32(self.params.payload_size as u32);
        e.u64(p.max_node_bytes as u64);
        for v in [
            p.min_density_percent,
            p.init_density_percent,
            p.max_density_percent,
            p.expected_insert_percent,
        ] {
            e.u32(v);
        }
        for v in [
            self.file_id,
            self.len,
            self.root_raw,
            self.inner_end,
            self.data_end,
            self.inner_nodes,
            self.data_nodes,
            self.inner_invalid,
            self.data_invalid,
            self.first_leaf_raw,
            self.keys_fingerprint,
        ] {
            e.u64(v);
        }
        out[KIND_AT + 4..META_BYTES].copy_from_slice(&e.into_bytes());
    }

    /// The root's address.
    pub(crate) fn root(&self) -> Addr {
        Addr::decode(self.root_raw, self.usable()).expect("checked by decode_meta")
    }

    /// The leftmost data node's address.
    pub(crate) fn first_leaf(&self) -> Addr {
        Addr::decode(self.first_leaf_raw, self.usable()).expect("checked by decode_meta")
    }

    fn usable(&self) -> usize {
        self.block_size as usize - crate::io::BLOCK_TRAILER
    }
}

/// Decodes a meta block's usable bytes read from `file`. See the module docs.
pub fn decode_meta(bytes: &[u8], file: &str) -> Result<Meta> {
    META_START.check(bytes, file)?;
    let block_size = u32_at(bytes, 16);
    check_block_size(block_size, file)?;
    let params = DiskAlexParams {
        payload_size: u32_at(bytes, 20) as usize,
        alex: AlexParams {
            max_node_bytes: usize::try_from(u64_at(bytes, 24)).unwrap_or(usize::MAX),
            min_density_percent: u32_at(bytes, 32),
            init_density_percent: u32_at(bytes, 36),
            max_density_percent: u32_at(bytes, 40),
            expected_insert_percent: u32_at(bytes, 44),
        },
    };
    params
        .check(block_size as usize)
        .map_err(|e| corrupt_block0(file, format!("parameters: {e}")))?;
    let meta = Meta {
        block_size,
        params,
        file_id: u64_at(bytes, 48),
        len: u64_at(bytes, 56),
        root_raw: u64_at(bytes, 64),
        inner_end: u64_at(bytes, 72),
        data_end: u64_at(bytes, 80),
        inner_nodes: u64_at(bytes, 88),
        data_nodes: u64_at(bytes, 96),
        inner_invalid: u64_at(bytes, 104),
        data_invalid: u64_at(bytes, 112),
        first_leaf_raw: u64_at(bytes, 120),
        keys_fingerprint: u64_at(bytes, 128),
    };
    let usable = meta.usable() as u64;
    let max_end = (super::addr::MAX_BLOCK + 1) * usable;
    for (what, end) in [("inner", meta.inner_end), ("data", meta.data_end)] {
        if end < usable || end > max_end {
            return Err(corrupt_block0(
                file,
                format!("end of the {what} nodes {end}"),
            ));
        }
    }
    if meta.inner_invalid > meta.inner_end || meta.data_invalid > meta.data_end {
        return Err(corrupt_block0(file, "invalid bytes past the files' ends"));
    }
    let inside = |raw: u64| {
        Addr::decode(raw, usable as usize).filter(|a| {
            a.pos
                < if a.data {
                    meta.data_end
                } else {
                    meta.inner_end
                }
        })
    };
    if inside(meta.root_raw).is_none() {
        return Err(corrupt_block0(
            file,
            format!("root address {:#x}", meta.root_raw),
        ));
    }
    if inside(meta.first_leaf_raw).is_none_or(|a| !a.data) {
        return Err(corrupt_block0(
            file,
            format!("first data node address {:#x}", meta.first_leaf_raw),
        ));
    }
    if meta.data_nodes == 0 {
        return Err(corrupt_block0(file, "no data node"));
    }
    Ok(meta)
}

/// The data file's header: writes it into `out` (at least [`DATA_HEADER_BYTES`]).
pub(crate) fn encode_data_header(out: &mut [u8], block_size: u32, payload: u32, file_id: u64) {
    DATA_START.encode(out);
    put_u32(out, 16, block_size);
    put_u32(out, 20, payload);
    put_u64(out, 24, file_id);
}

/// Checks the data file's header against the meta block.
pub(crate) fn check_data_header(bytes: &[u8], file: &str, meta: &Meta) -> Result<()> {
    DATA_START.check(bytes, file)?;
    let (block_size, payload, id) = (u32_at(bytes, 16), u32_at(bytes, 20), u64_at(bytes, 24));
    if block_size != meta.block_size
        || payload as usize != meta.params.payload_size
        || id != meta.file_id
    {
        return Err(Error::IndexMismatch {
            file: file.to_string(),
            holds: format!("block size {block_size}, payload {payload}, file id {id:#x}"),
            asked: format!(
                "block size {}, payload {}, file id {:#x} (the meta block's)",
                meta.block_size, meta.params.payload_size, meta.file_id
            ),
        });
    }
    Ok(())
}
