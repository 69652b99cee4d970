//! The FITing-tree's files on disk: the segment file's header, each segment's meta block, and
//! the segment reference its inner B+-tree stores.
//!
//! **Segment file `<name>`**, blocks of `B` bytes (`P` usable), `R = floor(P / (9 + ps))`
//! records a block ([`crate::disk::flagged_records`]), `BB = ceil(buffer / R)` buffer blocks:
//!
//! ```text
//! block 0                    header (below)
//! blocks X .. X + 1 + BB     the extra buffer (paper 003 §4.2): a meta block and a buffer,
//!                            for keys below the first segment's; no data
//! a segment at block S:      S meta block, S+1 .. S+1+BB its delta buffer,
//!                            S+1+BB .. S+1+BB+ceil(n/R) its n data records
//! ```
//!
//! Segments are appended; a resegmentation writes new ones at the end and leaves the old one's
//! blocks dead (paper 003 §6.3 does not reuse them either).
//!
//! Header, little-endian, in the usable bytes of block 0:
//!
//! | offset | size | field                                                     |
//! |--------|------|-----------------------------------------------------------|
//! | 0      | 8    | magic `b"LIDXFIT1"` ([`MAGIC`])                           |
//! | 8      | 4    | format version, 2                                         |
//! | 12     | 4    | key size in bytes (8)                                     |
//! | 16     | 16   | key type name (`u64`), zero-padded                        |
//! | 32     | 4    | payload size `ps`                                         |
//! | 36     | 4    | block size in bytes (checksum trailer included)           |
//! | 40     | 8    | eps                                                       |
//! | 48     | 8    | buffer capacity per segment, records                      |
//! | 56     | 8    | live entries                                              |
//! | 64     | 8    | segments (the extra buffer not counted)                   |
//! | 72     | 8    | blocks of the file (the next segment goes there)          |
//! | 80     | 8    | the extra buffer's meta block `X`                         |
//! | 88     | 8    | live blocks: header, extra buffer and live segments       |
//! | 96     | 8    | fingerprint of the keys built from                        |
//!
//! The keys' fingerprint ([`keys_fingerprint`](crate::disk::keys_fingerprint)) binds the index to the dataset it
//! was built from ([`crate::disk::check_built_from`]); writes after the build do not change
//! it. Version 1 had none; its files are refused ([`Error::UnsupportedVersion`]: rebuild them
//! with `lidx build`).
//!
//! Meta block of a segment (or of the extra buffer), the first block of it:
//!
//! | offset | size | field                                                         |
//! |--------|------|---------------------------------------------------------------|
//! | 0      | 8    | tag `b"LIDXFSEG"` ([`SEGMENT_TAG`])                           |
//! | 8      | 8    | its own block `S` (a meta block read from elsewhere is refused) |
//! | 16     | 8    | routing key: the smallest key the segment takes (0 for the extra buffer) |
//! | 24     | 4    | kind: 0 segment, 1 the extra buffer                           |
//! | 28     | 4    | records in the delta buffer                                   |
//! | 32     | 8    | data records `n`                                              |
//! | 40     | 8    | left sibling's meta block, `u64::MAX` = none                  |
//! | 48     | 8    | right sibling's meta block, `u64::MAX` = none                 |
//! | 56     | 8    | left sibling's data records                                   |
//! | 64     | 8    | right sibling's data records                                  |
//!
//! The siblings and their counts are paper 003 §4.2's metadata "at the beginning of each
//! segment": a scan reads the next segment's meta block and knows its blocks.
//!
//! **Inner file `<name>.inner`**: a disk B+-tree ([`crate::disk::btree`]) whose keys are the
//! segments' routing keys bit-inverted (`!lo`), so that its `lower_bound(!k)` finds the segment
//! with the largest routing key `<= k`, and whose 40-byte payloads are [`SegRef`]s: the model is
//! stored in the parent as paper 003 S1 says, so a lookup reads no segment header.
//!
//! | offset | size | field                                  |
//! |--------|------|----------------------------------------|
//! | 0      | 8    | the segment's meta block `S`           |
//! | 8      | 8    | data records `n`                       |
//! | 16     | 8    | model origin `x0`                      |
//! | 24     | 8    | model slope, `f64`, finite, `>= 0`     |
//! | 32     | 8    | model intercept, `f64`, finite         |
//!
//! The decoders check magic, version, key type, parameters and that fields agree (blocks
//! inside the file, counts within capacities), giving [`Error::Corrupt`] naming the block.

use crate::disk::header_fields::{
    check_block_size, check_key_at, corrupt_block0, f64_at, put_key_at, put_u32, put_u64, put_u64s,
    u32_at, u64_at, HeaderStart,
};
use crate::error::{Error, Result};
use crate::model::linear::LinearModel;

use super::params::{DiskFitingParams, MAX_BUFFER};

/// Magic number of a FITing-tree segment file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"LIDXFIT1");
/// Format version this build writes and reads (2: the keys' fingerprint).
pub const VERSION: u32 = 2;
/// Tag at the start of every segment's meta block.
pub const SEGMENT_TAG: u64 = u64::from_le_bytes(*b"LIDXFSEG");
/// Bytes of the header.
pub(crate) const HEADER_BYTES: usize = 104;
/// Bytes of a meta block's fields.
pub(crate) const META_BYTES: usize = 72;
/// Bytes of a [`SegRef`].
pub(crate) const SEGREF_BYTES: usize = 40;
/// "No sibling".
pub(crate) const NONE: u64 = u64::MAX;
/// What block 0 starts with.
const START: HeaderStart = HeaderStart::new("the header", MAGIC, VERSION, HEADER_BYTES);

/// The segment file's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Payload size, eps and buffer (the resident levels are chosen at open).
    pub params: DiskFitingParams,
    /// Block size in bytes.
    pub block_size: u32,
    /// Live entries.
    pub len: u64,
    /// Segments.
    pub segments: u64,
    /// Blocks of the file.
    pub blocks: u64,
    /// The extra buffer's meta block.
    pub extra: u64,
    /// Live blocks.
    pub live_blocks: u64,
    /// Fingerprint of the keys the index was built from.
    pub keys_fingerprint: u64,
}

impl Header {
    /// Writes the header into `out`, zeroing the rest.
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        START.encode(out);
        put_key_at::<u64>(out, 16, 12);
        put_u32(out, 32, self.params.payload_size as u32);
        put_u32(out, 36, self.block_size);
        put_u64s(
            out,
            &[
                (40, self.params.eps as u64),
                (48, self.params.buffer as u64),
                (56, self.len),
                (64, self.segments),
                (72, self.blocks),
                (80, self.extra),
                (88, self.live_blocks),
                (96, self.keys_fingerprint),
            ],
        );
    }

    /// Records per block.
    pub fn per_block(&self) -> usize {
        crate::disk::flagged_records::records_per_block(
            self.block_size as usize - crate::io::BLOCK_TRAILER,
            self.params.payload_size,
        )
    }

    /// Blocks of a delta buffer.
    pub fn buffer_blocks(&self) -> u64 {
        self.params.buffer.div_ceil(self.per_block()) as u64
    }
}

/// Decodes and validates the header from the usable bytes of block 0 of `file`.
pub fn decode_header(bytes: &[u8], file: &str) -> Result<Header> {
    let corrupt = |what: String| corrupt_block0(file, what);
    START.check(bytes, file)?;
    check_key_at::<u64>(bytes, 16, 12, file)?;
    let small = |at: usize, max: u64, what: &str| -> Result<usize> {
        let v = u64_at(bytes, at);
        if v > max {
            return Err(corrupt(format!("{what} {v} is out of range")));
        }
        Ok(v as usize)
    };
    let header = Header {
        params: DiskFitingParams {
            payload_size: u32_at(bytes, 32) as usize,
            eps: small(40, u64::from(u32::MAX), "eps")?,
            buffer: small(48, MAX_BUFFER as u64, "buffer")?,
            ..DiskFitingParams::default()
        },
        block_size: u32_at(bytes, 36),
        len: u64_at(bytes, 56),
        segments: u64_at(bytes, 64),
        blocks: u64_at(bytes, 72),
        extra: u64_at(bytes, 80),
        live_blocks: u64_at(bytes, 88),
        keys_fingerprint: u64_at(bytes, 96),
    };
    header
        .params
        .check()
        .map_err(|e| corrupt(format!("parameters: {e}")))?;
    let bs = header.block_size;
    check_block_size(bs, file)?;
    if header.per_block() == 0 {
        return Err(corrupt(format!(
            "a {}-byte payload leaves no room for a record in a {bs}-byte block",
            header.params.payload_size
        )));
    }
    let extra_end = header.extra.saturating_add(1 + header.buffer_blocks());
    if header.extra == 0 || extra_end > header.blocks {
        return Err(corrupt(format!(
            "the extra buffer at block {} does not fit {} blocks",
            header.extra, header.blocks
        )));
    }
    if header.live_blocks > header.blocks
        || header.segments > header.blocks
        || header.len > header.blocks.saturating_mul(header.per_block() as u64)
    {
        return Err(corrupt(format!(
            "{} live blocks, {} segments and {} entries do not fit {} blocks",
            header.live_blocks, header.segments, header.len, header.blocks
        )));
    }
    Ok(header)
}

/// A segment's meta block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The meta block's own block.
    pub block: u64,
    /// Routing key (0 for the extra buffer).
    pub lo: u64,
    /// True for the extra buffer.
    pub extra: bool,
    /// Records in the delta buffer.
    pub buffered: u32,
    /// Data records.
    pub n: u64,
    /// Left sibling's meta block ([`NONE`] = none).
    pub left: u64,
    /// Right sibling's meta block ([`NONE`] = none).
    pub right: u64,
    /// Left sibling's data records.
    pub left_n: u64,
    /// Right sibling's data records.
    pub right_n: u64,
}

impl Meta {
    /// Writes the meta block's fields into `out`, zeroing the rest.
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        put_u64(out, 0, SEGMENT_TAG);
        put_u64(out, 8, self.block);
        put_u64(out, 16, self.lo);
        put_u32(out, 24, u32::from(self.extra));
        put_u32(out, 28, self.buffered);
        put_u64(out, 32, self.n);
        put_u64(out, 40, self.left);
        put_u64(out, 48, self.right);
        put_u64(out, 56, self.left_n);
        put_u64(out, 64, self.right_n);
    }

    /// Blocks of the segment's data.
    pub fn data_blocks(&self, header: &Header) -> u64 {
        self.n.div_ceil(header.per_block() as u64)
    }

    /// Blocks of the whole segment.
    pub fn span(&self, header: &Header) -> u64 {
        1 + header.buffer_blocks() + self.data_blocks(header)
    }
}

/// Decodes the meta block read from block `block` of `file`, for a file `header` describes.
pub fn decode_meta(bytes: &[u8], block: u64, header: &Header, file: &str) -> Result<Meta> {
    let corrupt = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(block),
        what,
    };
    if bytes.len() < META_BYTES {
        return Err(corrupt("a meta block is too short".to_string()));
    }
    if u64_at(bytes, 0) != SEGMENT_TAG {
        return Err(corrupt("not a segment's meta block (tag)".to_string()));
    }
    let kind = u32_at(bytes, 24);
    let meta = Meta {
        block: u64_at(bytes, 8),
        lo: u64_at(bytes, 16),
        extra: kind == 1,
        buffered: u32_at(bytes, 28),
        n: u64_at(bytes, 32),
        left: u64_at(bytes, 40),
        right: u64_at(bytes, 48),
        left_n: u64_at(bytes, 56),
        right_n: u64_at(bytes, 64),
    };
    if meta.block != block || kind > 1 || meta.extra != (block == header.extra) {
        return Err(corrupt(format!(
            "the meta block says it is block {} of kind {kind}",
            meta.block
        )));
    }
    if meta.buffered as usize > header.params.buffer || (meta.extra && meta.n != 0) {
        return Err(corrupt(format!(
            "{} buffered records (capacity {}), {} data records",
            meta.buffered, header.params.buffer, meta.n
        )));
    }
    let in_file = |b: u64| b == NONE || (b >= 1 && b < header.blocks && b != block);
    if !in_file(meta.left)
        || !in_file(meta.right)
        || block.saturating_add(meta.span(header)) > header.blocks
    {
        return Err(corrupt(format!(
            "siblings {} and {} or {} data records do not fit {} blocks",
            meta.left, meta.right, meta.n, header.blocks
        )));
    }
    Ok(meta)
}

/// What the inner B+-tree stores for a segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegRef {
    /// The segment's meta block.
    pub block: u64,
    /// Data records.
    pub n: u64,
    /// The model: rank in the segment's data from the key.
    pub model: LinearModel,
}

impl SegRef {
    /// Writes the reference into `out[..SEGREF_BYTES]`.
    pub fn encode(&self, out: &mut [u8]) {
        put_u64(out, 0, self.block);
        put_u64(out, 8, self.n);
        put_u64(out, 16, self.model.x0);
        put_u64(out, 24, self.model.slope.to_bits());
        put_u64(out, 32, self.model.intercept.to_bits());
    }
}

/// Decodes a segment reference read from the inner tree of `file` (the segment file, whose
/// `header` bounds it).
pub fn decode_segref(bytes: &[u8], header: &Header, file: &str) -> Result<SegRef> {
    let corrupt = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what: format!("inner entry: {what}"),
    };
    if bytes.len() < SEGREF_BYTES {
        return Err(corrupt("too short".to_string()));
    }
    let r = SegRef {
        block: u64_at(bytes, 0),
        n: u64_at(bytes, 8),
        model: LinearModel {
            x0: u64_at(bytes, 16),
            slope: f64_at(bytes, 24),
            intercept: f64_at(bytes, 32),
        },
    };
    let fits = r.block >= 1
        && r.block != header.extra
        && r.n
            .div_ceil(header.per_block() as u64)
            .checked_add(r.block + 1 + header.buffer_blocks())
            .is_some_and(|end| end <= header.blocks);
    let model_ok =
        r.model.slope.is_finite() && r.model.slope >= 0.0 && r.model.intercept.is_finite();
    if !(fits && model_ok) {
        return Err(corrupt(format!(
            "segment at block {} of {} records, slope {}, intercept {} does not fit {} blocks",
            r.block, r.n, r.model.slope, r.model.intercept, header.blocks
        )));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::header_fields;

    fn header() -> Header {
        Header {
            params: DiskFitingParams::default(),
            block_size: 4096,
            len: 1000,
            segments: 3,
            blocks: 40,
            extra: 1,
            live_blocks: 30,
            keys_fingerprint: 5,
        }
    }

    #[test]
    fn round_trips_and_typed_errors() {
        let decode = |b: &[u8]| decode_header(b, "f");
        let mut buf = header_fields::assert_round_trip(&header(), Header::encode, decode);
        // eps past 2^32, buffer, the extra buffer, live blocks; the file's blocks (too few).
        header_fields::assert_fields_checked(&buf, [46, 50, 82, 90], |b, at| b[at] = 0x7f, decode);
        header_fields::assert_fields_checked(&buf, [72], |b, at| b[at] = 2, decode);
        let meta = Meta {
            block: 5,
            lo: 77,
            extra: false,
            buffered: 3,
            n: 300,
            left: 1,
            right: 12,
            left_n: 0,
            right_n: 40,
        };
        meta.encode(&mut buf);
        assert_eq!(decode_meta(&buf, 5, &header(), "f").unwrap(), meta);
        assert!(decode_meta(&buf, 6, &header(), "f").is_err());
        let mut bad = buf.clone();
        bad[29] = 0xff;
        assert!(decode_meta(&bad, 5, &header(), "f").is_err());
        let r = SegRef {
            block: 5,
            n: 300,
            model: LinearModel {
                x0: 77,
                slope: 0.5,
                intercept: -0.25,
            },
        };
        r.encode(&mut buf);
        assert_eq!(decode_segref(&buf, &header(), "f").unwrap(), r);
        buf[31] = 0xff;
        assert!(decode_segref(&buf, &header(), "f").is_err());
    }
}
