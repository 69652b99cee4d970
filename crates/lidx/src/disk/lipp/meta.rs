//! The meta block: block 0 of an on-disk LIPP file.
//!
//! Paper 003 §4.1 sets "the first block of the index" as the *meta block*, which "records the
//! address of the root node" because structural changes can move the root; §4.2 gives LIPP the
//! same layout, and §6.1 keeps the meta block in memory while the index is in use. Ours also
//! records what the file is (magic, version, kind, key type, block and payload size, every
//! LIPP parameter: [`crate::mem::LippParams`]) and what reopening needs without a scan:
//! the end of the nodes (new nodes are appended there), the entry count, the live nodes and
//! their bytes, and the bytes of nodes that rebuilds and removes replaced (dead space, never
//! reused: paper 003 §6.3), and the fingerprint of the keys it was built from
//! ([`keys_fingerprint`](crate::disk::keys_fingerprint), unchanged by later writes), which binds the file to its
//! dataset ([`crate::disk::check_built_from`]). It is written at build and by `flush`; between
//! flushes the copy in memory is the current one. Version 1 had no fingerprint; its files are
//! refused ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion): rebuild them with
//! `lidx build`).
//!
//! Byte layout (little-endian, in the usable bytes of block 0):
//!
//! | offset | size | field                                                        |
//! |--------|------|--------------------------------------------------------------|
//! | 0      | 8    | magic `b"lidxLIP1"` as a little-endian `u64` ([`MAGIC`])     |
//! | 8      | 4    | format version, 2                                            |
//! | 12     | 4    | kind: 1 = on-disk LIPP ([`KIND`])                            |
//! | 16     | 16   | key type name (`Key::NAME`), UTF-8, zero-padded              |
//! | 32     | 4    | key size in bytes                                            |
//! | 36     | 4    | payload size in bytes                                        |
//! | 40     | 4    | block size in bytes (checksum trailer included)              |
//! | 44     | 1    | FMCD: 1 on, 0 off                                            |
//! | 45     | 3    | reserved, 0                                                  |
//! | 48     | 8    | growth                                                       |
//! | 56     | 8    | conflict percent                                             |
//! | 64     | 8    | min rebuild                                                  |
//! | 72     | 8    | fixed size                                                   |
//! | 80     | 8    | shrink                                                       |
//! | 88     | 8    | root node's address ([`super::node::encode_addr`])           |
//! | 96     | 8    | end of the nodes: first free position                        |
//! | 104    | 8    | entries                                                      |
//! | 112    | 8    | live nodes                                                   |
//! | 120    | 8    | bytes of live nodes                                          |
//! | 128    | 8    | bytes of dead nodes (replaced, not reused)                   |
//! | 136    | 8    | fingerprint of the keys built from                           |
//!
//! [`decode_meta`] checks the magic ([`Error::BadMagic`](crate::Error::BadMagic)), the version
//! ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion)), the kind, the parameters ([`LippParams::validate`]), and that
//! the fields agree (block size valid, root inside the nodes, live and dead bytes within the
//! nodes' span); anything else is [`Error::Corrupt`](crate::Error::Corrupt) for block 0. The key type is checked by
//! the caller.

use crate::disk::header_fields::{
    check_block_size, corrupt_block0, key_name_at, put_key_name, put_u32, put_u64s, u32_at, u64_at,
    HeaderStart,
};
use crate::error::Result;
use crate::mem::lipp::LippParams;

use super::node::{decode_addr, encode_addr, NODE_HEADER};

/// Magic number of an on-disk LIPP file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"lidxLIP1");
/// Format version this build writes and reads (2: the keys' fingerprint).
pub(crate) const VERSION: u32 = 2;
/// Kind of file: the meta block of an on-disk LIPP.
pub(crate) const KIND: u32 = 1;
/// Bytes of the meta block's fields.
pub(crate) const META_BYTES: usize = 144;
/// What block 0 starts with.
const START: HeaderStart =
    HeaderStart::new("an on-disk LIPP's meta block", MAGIC, VERSION, META_BYTES).kind(KIND);

/// The fields of the meta block.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// Key type name (`Key::NAME`).
    pub key_name: String,
    /// Key size in bytes.
    pub key_size: u32,
    /// Payload size in bytes.
    pub payload_size: u32,
    /// Block size in bytes.
    pub block_size: u32,
    /// LIPP's parameters.
    pub params: LippParams,
    /// Position of the root node.
    pub root: u64,
    /// First free position after the nodes.
    pub end: u64,
    /// Entries.
    pub entries: u64,
    /// Live nodes.
    pub nodes: u64,
    /// Bytes of live nodes.
    pub live_bytes: u64,
    /// Bytes of nodes replaced and not reused.
    pub dead_bytes: u64,
    /// Fingerprint of the keys the index was built from.
    pub keys_fingerprint: u64,
}

impl Meta {
    /// Usable bytes per block.
    pub fn usable(&self) -> usize {
        self.block_size as usize - crate::io::BLOCK_TRAILER
    }

    /// Writes the meta block into `out[..META_BYTES]` and zeroes the rest of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        START.encode(out);
        put_key_name(out, 16, &self.key_name);
        put_u32(out, 32, self.key_size);
        put_u32(out, 36, self.payload_size);
        put_u32(out, 40, self.block_size);
        out[44] = u8::from(self.params.fmcd);
        let p = &self.params;
        put_u64s(
            out,
            &[
                (48, p.growth as u64),
                (56, p.conflict_percent as u64),
                (64, p.min_rebuild as u64),
                (72, p.fixed_size as u64),
                (80, p.shrink as u64),
                (88, encode_addr(self.root, self.usable())),
                (96, self.end),
                (104, self.entries),
                (112, self.nodes),
                (120, self.live_bytes),
                (128, self.dead_bytes),
                (136, self.keys_fingerprint),
            ],
        );
    }

    /// [`Error::KeyTypeMismatch`](crate::Error::KeyTypeMismatch) unless the file holds keys of type `K`.
    pub fn check_key<K: crate::key::Key>(&self, file: &str) -> Result<()> {
        crate::key::check_key_type::<K>(file, &self.key_name, self.key_size)
    }
}

/// Decodes and validates the meta block from the usable bytes of block 0 of `file`.
pub fn decode_meta(bytes: &[u8], file: &str) -> Result<Meta> {
    let corrupt = |what: String| corrupt_block0(file, what);
    START.check(bytes, file)?;
    let key_name = key_name_at(bytes, 16)
        .map_err(|_| corrupt("key type name is not UTF-8".to_string()))?
        .to_string();
    let block_size = u32_at(bytes, 40);
    let usable = check_block_size(block_size, file)?;
    if bytes[44] > 1 || bytes[45..48] != [0, 0, 0] {
        return Err(corrupt(format!("FMCD flag {} is not 0 or 1", bytes[44])));
    }
    let field = |at: usize| usize::try_from(u64_at(bytes, at)).unwrap_or(usize::MAX);
    let params = LippParams {
        fmcd: bytes[44] == 1,
        growth: field(48),
        conflict_percent: field(56),
        min_rebuild: field(64),
        fixed_size: field(72),
        shrink: field(80),
    };
    params
        .validate()
        .map_err(|e| corrupt(format!("parameters: {e}")))?;
    let raw_root = u64_at(bytes, 88);
    let meta = Meta {
        key_name,
        key_size: u32_at(bytes, 32),
        payload_size: u32_at(bytes, 36),
        block_size,
        params,
        root: decode_addr(raw_root, usable).unwrap_or(0),
        end: u64_at(bytes, 96),
        entries: u64_at(bytes, 104),
        nodes: u64_at(bytes, 112),
        live_bytes: u64_at(bytes, 120),
        dead_bytes: u64_at(bytes, 128),
        keys_fingerprint: u64_at(bytes, 136),
    };
    let first = usable as u64;
    if meta.root < first || meta.root.saturating_add(NODE_HEADER as u64) > meta.end {
        return Err(corrupt(format!(
            "root address {raw_root:#x} is not a node before the end {}",
            meta.end
        )));
    }
    let span = meta.end - first;
    if meta.nodes == 0
        || meta
            .live_bytes
            .checked_add(meta.dead_bytes)
            .is_none_or(|b| b > span)
    {
        return Err(corrupt(format!(
            "{} nodes of {} live and {} dead bytes do not fit the {span} bytes of nodes",
            meta.nodes, meta.live_bytes, meta.dead_bytes
        )));
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::header_fields;

    pub(crate) fn sample() -> Meta {
        Meta {
            key_name: "u64".to_string(),
            key_size: 8,
            payload_size: 8,
            block_size: 4096,
            params: LippParams::default(),
            root: 4092,
            end: 4092 * 3,
            entries: 40,
            nodes: 2,
            live_bytes: 5000,
            dead_bytes: 100,
            keys_fingerprint: 77,
        }
    }

    #[test]
    fn round_trip_and_typed_errors() {
        let decode = |b: &[u8]| decode_meta(b, "f");
        let buf = header_fields::assert_round_trip(&sample(), Meta::encode, decode);
        sample().check_key::<u64>("f").unwrap();
        let offsets = [12, 44, 56, 88, 120];
        let damage = |b: &mut [u8], at: usize| b[at..at + 4].copy_from_slice(&[0xff; 4]);
        header_fields::assert_fields_checked(&buf, offsets, damage, decode);
        assert!(decode_meta(&buf[..100], "f").is_err());
    }
}
