//! The header block of a static learned index file, and the file's block layout.
//!
//! A static learned index is ONE file of `block_size`-byte blocks:
//!
//! ```text
//! block 0                         header (this module)
//! blocks 1 .. 1 + data_blocks     data blocks: sorted (key, payload) records (data_block.rs)
//! blocks model_first ..           the model's bytes (Persist::encode), payload areas concatenated
//! ```
//!
//! Every block ends with the device's 4-byte crc32c trailer ([`crate::io::checksum`]); the
//! header uses the first [`HEADER_BYTES`] of block 0's payload, the rest is zero. All integers
//! are little-endian.
//!
//! | offset | size | field                                                            |
//! |--------|------|------------------------------------------------------------------|
//! | 0      | 8    | magic `"LIDX-SLI"` ([`MAGIC`])                                   |
//! | 8      | 4    | format version ([`VERSION`] = 3)                                 |
//! | 12     | 4    | key size in bytes (`Key::SIZE`)                                  |
//! | 16     | 16   | key type name (`Key::NAME`), ASCII, zero-padded                  |
//! | 32     | 4    | payload size in bytes                                            |
//! | 36     | 4    | block size in bytes (trailer included)                           |
//! | 40     | 8    | entries (`len`)                                                  |
//! | 48     | 4    | records per data block (`per_block`)                             |
//! | 52     | 4    | granularity: 0 item, 1 mini-page, 2 page                         |
//! | 56     | 8    | group: items per model point (1, g, or `per_block`)              |
//! | 64     | 4    | default fetch strategy: 0 all-at-once, 1 one-by-one              |
//! | 68     | 4    | model kind (`Persist::KIND`)                                     |
//! | 72     | 8    | first data block (always 1)                                      |
//! | 80     | 8    | data blocks (`ceil(len / per_block)`)                            |
//! | 88     | 8    | first model block (`1 + data_blocks`)                            |
//! | 96     | 8    | model blocks (`ceil(model_bytes / block payload)`)               |
//! | 104    | 8    | model bytes                                                      |
//! | 112    | 8    | model points: keys the model was built on (`ceil(len / group)`)  |
//! | 120    | 4    | length of the model's parameters text, at most 128               |
//! | 124    | 128  | the model's parameters as its builder names them (`pgm:eps=64:eps_rec=4`), UTF-8, zero-padded |
//! | 252    | 8    | fingerprint of the keys written ([`keys_fingerprint`](crate::disk::keys_fingerprint)) |
//!
//! With the magic (the file's kind), the key type, the payload size, the granularity, the
//! default fetch strategy and the model kind, the parameters text makes the header record every
//! build parameter: a caller opening a file checks it is the index it asked for
//! ([`super::StaticLearned::params`]). The keys' fingerprint binds the file to the data it was
//! built from (a derived file; `docs/format.md`, "Keys fingerprint"): a caller opening it for a
//! dataset compares it
//! with the dataset's ([`crate::disk::check_built_from`]). Version 1 had no parameters text,
//! version 2 no fingerprint; their files are refused with [`Error::UnsupportedVersion`]
//! (rebuild them with `lidx build`).
//!
//! Every derived field is stored and checked against the others by [`decode_header`], so a
//! header that passes its checksum but was written wrong (or forged) is refused with
//! [`Error::Corrupt`] before any size from it is used.

use crate::disk::header_fields::{
    check_block_size, key_name_at, put_key_name, put_u32, put_u64, put_u64s, u32_at, u64_at,
    HeaderStart, KEY_NAME_BYTES,
};
use crate::error::{Error, Result};
use crate::io::checksum::BLOCK_TRAILER;

use super::data_block::{records_per_block, FIRST_DATA_BLOCK};
use super::fetch::Fetch;
use super::params::{Granularity, StaticLearnedParams};

/// Magic number at offset 0 of block 0: the bytes `"LIDX-SLI"` read as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"LIDX-SLI");

/// The format version this build writes and reads (2: the model's parameters are recorded;
/// 3: the fingerprint of the keys).
pub const VERSION: u32 = 3;

/// Bytes of block 0's payload the header uses.
pub const HEADER_BYTES: usize = 260;

/// Longest model parameters text the header holds, in bytes.
pub(crate) const MODEL_PARAMS_BYTES: usize = 128;

/// What block 0 starts with.
const START: HeaderStart = HeaderStart::new("header", MAGIC, VERSION, HEADER_BYTES).truncated();

/// Largest key size accepted from a header (every key type is at most 16 bytes).
const MAX_KEY_SIZE: u32 = 1024;

/// The decoded header of a static learned index file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `Key::SIZE` of the keys.
    pub key_size: u32,
    /// `Key::NAME` of the keys.
    pub key_name: String,
    /// Payload bytes per entry.
    pub payload_size: u32,
    /// Block size, trailer included.
    pub block_size: u32,
    /// Number of entries.
    pub len: u64,
    /// Records per data block.
    pub per_block: u32,
    /// Prediction granularity (its group size is [`Header::group`]).
    pub granularity: Granularity,
    /// Default leaf-block fetching strategy.
    pub fetch: Fetch,
    /// `Persist::KIND` of the model.
    pub model_kind: u32,
    /// Number of data blocks (they start at block 1).
    pub data_blocks: u64,
    /// Length of the encoded model in bytes.
    pub model_bytes: u64,
    /// The model's parameters as its builder named them (empty: not named).
    pub model_params: String,
    /// Fingerprint of the keys written ([`keys_fingerprint`](crate::disk::keys_fingerprint)).
    pub keys_fingerprint: u64,
}

impl Header {
    /// Items per model point: 1 for item granularity, `g` for mini-pages, `per_block` for pages.
    pub fn group(&self) -> u64 {
        match self.granularity {
            Granularity::Item => 1,
            Granularity::MiniPage(g) => g as u64,
            Granularity::Page => u64::from(self.per_block),
        }
    }

    /// Number of keys the model was built on: `ceil(len / group)`.
    pub fn model_points(&self) -> u64 {
        self.len.div_ceil(self.group())
    }

    /// Block number of the first model block.
    pub fn model_first_block(&self) -> u64 {
        FIRST_DATA_BLOCK + self.data_blocks
    }

    /// Usable bytes per block.
    pub fn block_payload(&self) -> u64 {
        u64::from(self.block_size) - BLOCK_TRAILER as u64
    }

    /// Number of blocks holding the model.
    pub fn model_blocks(&self) -> u64 {
        self.model_bytes.div_ceil(self.block_payload())
    }

    /// Total blocks of the file.
    pub fn total_blocks(&self) -> u64 {
        self.model_first_block() + self.model_blocks()
    }

    /// Writes the header into `out` (block 0's payload, at least [`HEADER_BYTES`] long, zeroed).
    pub fn encode(&self, out: &mut [u8]) {
        let (granularity, group) = match self.granularity {
            Granularity::Item => (0u32, 1u64),
            Granularity::MiniPage(g) => (1, g as u64),
            Granularity::Page => (2, u64::from(self.per_block)),
        };
        START.encode(out);
        put_u32(out, 12, self.key_size);
        put_key_name(out, 16, &self.key_name);
        put_u32(out, 32, self.payload_size);
        put_u32(out, 36, self.block_size);
        put_u64(out, 40, self.len);
        put_u32(out, 48, self.per_block);
        put_u32(out, 52, granularity);
        put_u64(out, 56, group);
        put_u32(out, 64, self.fetch.code());
        put_u32(out, 68, self.model_kind);
        put_u64s(
            out,
            &[
                (72, FIRST_DATA_BLOCK),
                (80, self.data_blocks),
                (88, self.model_first_block()),
                (96, self.model_blocks()),
                (104, self.model_bytes),
                (112, self.model_points()),
            ],
        );
        let text = &self.model_params.as_bytes()[..self.model_params.len().min(MODEL_PARAMS_BYTES)];
        put_u32(out, 120, text.len() as u32);
        out[124..124 + text.len()].copy_from_slice(text);
        put_u64(out, 252, self.keys_fingerprint);
    }

    /// The build parameters the header records.
    pub fn params(&self) -> StaticLearnedParams {
        StaticLearnedParams {
            payload_size: self.payload_size as usize,
            granularity: self.granularity,
            fetch: self.fetch,
            model_params: self.model_params.clone(),
        }
    }
}

/// Decodes and validates the header from block 0's payload `block` of `file`. Checks the magic
/// and version, then that every stored field agrees with the ones it derives from (records per
/// block, data and model block ranges, group and model points), so the sizes it returns are
/// safe to allocate and read with. Never panics on any input.
pub fn decode_header(file: &str, block: &[u8]) -> Result<Header> {
    let corrupt = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: Some(0),
        what: format!("header: {what}"),
    };
    START.check(block, file)?;
    let key_size = u32_at(block, 12);
    let key_name = match key_name_at(block, 16) {
        Ok(s)
            if !s.is_empty()
                && block[16 + s.len()..16 + KEY_NAME_BYTES]
                    .iter()
                    .all(|&b| b == 0) =>
        {
            s.to_string()
        }
        _ => {
            let raw_name = &block[16..16 + KEY_NAME_BYTES];
            return Err(corrupt(format!("key type name {raw_name:?} is not valid")));
        }
    };
    if key_size == 0 || key_size > MAX_KEY_SIZE {
        return Err(corrupt(format!(
            "key size {key_size} is not between 1 and {MAX_KEY_SIZE}"
        )));
    }
    let payload_size = u32_at(block, 32);
    let block_size = u32_at(block, 36);
    let block_payload = check_block_size(block_size, file)?;
    let per_block = records_per_block(block_payload, key_size as usize, payload_size as usize);
    let stored_per_block = u32_at(block, 48);
    if per_block == 0 || stored_per_block as usize != per_block {
        return Err(corrupt(format!(
            "{stored_per_block} records per block, but {key_size}-byte keys with \
             {payload_size}-byte payloads fit {per_block} in a {block_size}-byte block"
        )));
    }
    let len = u64_at(block, 40);
    let group = u64_at(block, 56);
    let granularity = match (u32_at(block, 52), group) {
        (0, 1) => Granularity::Item,
        (1, g) if g >= 1 && g <= u32::MAX as u64 => Granularity::MiniPage(g as usize),
        (2, g) if g == u64::from(stored_per_block) => Granularity::Page,
        (code, g) => {
            return Err(corrupt(format!(
                "granularity code {code} with group {g} is not valid"
            )))
        }
    };
    let fetch = Fetch::from_code(u32_at(block, 64))
        .ok_or_else(|| corrupt(format!("fetch code {} is not valid", u32_at(block, 64))))?;
    let text_len = u32_at(block, 120) as usize;
    let raw_text = &block[124..124 + MODEL_PARAMS_BYTES];
    let model_params = match raw_text.get(..text_len).map(std::str::from_utf8) {
        Some(Ok(text)) if raw_text[text_len..].iter().all(|&b| b == 0) => text.to_string(),
        _ => {
            return Err(corrupt(format!(
                "model parameters text of {text_len} bytes is not valid"
            )))
        }
    };
    let header = Header {
        key_size,
        key_name,
        payload_size,
        block_size,
        len,
        per_block: stored_per_block,
        granularity,
        fetch,
        model_kind: u32_at(block, 68),
        data_blocks: u64_at(block, 80),
        model_bytes: u64_at(block, 104),
        model_params,
        keys_fingerprint: u64_at(block, 252),
    };
    let expect = |offset: usize, field: &str, want: u64| {
        let got = u64_at(block, offset);
        if got == want {
            Ok(())
        } else {
            Err(corrupt(format!("{field} is {got}, expected {want}")))
        }
    };
    expect(72, "first data block", FIRST_DATA_BLOCK)?;
    expect(80, "data blocks", len.div_ceil(u64::from(stored_per_block)))?;
    // Every count below is bounded: data blocks <= len <= u64::MAX / 1 and the file must fit
    // u64 block numbers, so refuse sizes whose block count would overflow.
    if header.data_blocks > u64::MAX / 4 || header.model_bytes > u64::MAX / 4 {
        return Err(corrupt("sizes overflow the block numbering".to_string()));
    }
    expect(88, "first model block", header.model_first_block())?;
    expect(96, "model blocks", header.model_blocks())?;
    expect(112, "model points", header.model_points())?;
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            key_size: 8,
            key_name: "u64".to_string(),
            payload_size: 8,
            block_size: 4096,
            len: 1000,
            per_block: 255,
            granularity: Granularity::MiniPage(16),
            fetch: Fetch::OneByOne,
            model_kind: 7,
            data_blocks: 4,
            model_bytes: 5000,
            model_params: "pgm:eps=64:eps_rec=4".to_string(),
            keys_fingerprint: 0xfeed_beef,
        }
    }

    #[test]
    fn round_trip_and_every_field_checked() {
        let h = sample();
        let mut block = vec![0u8; 4092];
        h.encode(&mut block);
        assert_eq!(decode_header("f", &block).unwrap(), h);
        assert_eq!(h.model_blocks(), 2);
        assert_eq!(h.total_blocks(), 7);
        for at in 0..HEADER_BYTES {
            let mut bad = block.clone();
            bad[at] ^= 0x10;
            // A flip in the model kind is only caught at open (against `M::KIND`); a flip in
            // the key name may still spell a name (checked against `K::NAME` at open); a flip
            // of payload/granularity/fetch bits may yield another consistent header.
            if let Ok(other) = decode_header("f", &bad) {
                assert_ne!(other, h, "flip at byte {at} went unnoticed");
            }
        }
        assert!(matches!(
            decode_header("f", &block[..100]),
            Err(Error::Truncated { .. })
        ));
        for version in [1, 2] {
            let mut old = block.clone();
            old[8] = version as u8;
            crate::error::assert_refused_as_old(
                decode_header("f", &old).unwrap_err(),
                version,
                VERSION,
            );
        }
        let mut long = block.clone();
        long[120] = 200;
        assert!(matches!(
            decode_header("f", &long),
            Err(Error::Corrupt { .. })
        ));
    }
}
