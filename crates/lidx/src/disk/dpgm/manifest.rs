//! The manifest of a disk PGM: file `<name>`, the one place that says which level files make
//! up the index, and the durable copy of level 0.
//!
//! Block 0 is the header; level 0 (the in-memory sorted array) is written at every flush into
//! one of two regions of the same file, alternating, so the region the header on disk names is
//! never overwritten by the flush that replaces it (the header is written last, in one block).
//! Region `r` starts at block `1 + r * R`, `R = ceil(base / per_block)` blocks, `per_block =
//! floor(P / (9 + ps))` records per block for `P` usable bytes a block.
//!
//! Header, little-endian, in the usable bytes of block 0:
//!
//! | offset | size   | field                                                          |
//! |--------|--------|----------------------------------------------------------------|
//! | 0      | 8      | magic `b"LIDXDPGM"` ([`MAGIC`])                                |
//! | 8      | 4      | format version, 2                                              |
//! | 12     | 4      | key size in bytes (8)                                          |
//! | 16     | 16     | key type name (`u64`), zero-padded                             |
//! | 32     | 4      | payload size `ps` in bytes                                     |
//! | 36     | 4      | block size in bytes (checksum trailer included)                |
//! | 40     | 8      | eps of every level's PGM                                       |
//! | 48     | 8      | eps_recursive                                                  |
//! | 56     | 8      | base: level 0's capacity in records                            |
//! | 64     | 8      | live entries (keys present, tombstones excluded)               |
//! | 72     | 8      | flushes so far (sequence number)                               |
//! | 80     | 8      | next level-file generation                                     |
//! | 88     | 4      | level-0 region in use, 0 or 1                                  |
//! | 92     | 4      | level-0 records                                                |
//! | 96     | 4      | disk levels `m`, at most [`MAX_LEVELS`]                        |
//! | 100    | 4      | reserved, 0                                                    |
//! | 104    | 8      | fingerprint of the keys built from ([`keys_fingerprint`](crate::disk::keys_fingerprint)) |
//! | 112    | `24 m` | per disk level, ascending: level `i` (u32), 0 (u32), generation (u64), records (u64) |
//!
//! The keys' fingerprint binds the index to the dataset it was built from
//! ([`crate::disk::check_built_from`]); writes after the build do not change it. Version 1 had
//! none (its level table started at 104); its manifests are refused
//! ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion): rebuild with `lidx build`).
//!
//! Level `i`'s file is `<name>.L<i>.<generation>`: a static learned file
//! ([`crate::disk::static_learned`]) of records whose payload is one flag byte (0 = live, 1 =
//! tombstone) then `ps` payload bytes, with a PGM of the manifest's errors.
//!
//! A level-0 record is the key (8 bytes), the flag byte, then the payload; records ascend
//! strictly across the region's blocks, unused bytes are zero.
//!
//! [`decode_manifest`] checks the magic ([`Error::BadMagic`](crate::Error::BadMagic)), the version
//! ([`Error::UnsupportedVersion`](crate::Error::UnsupportedVersion)) and that the fields agree (errors valid, level numbers
//! ascending in `1..=MAX_LEVELS`, each level within its capacity `base * 2^i`, generations
//! below the next one, level 0 within `base`); anything else is [`Error::Corrupt`](crate::Error::Corrupt) for block 0.
//! [`crate::disk::flagged_records::decode_records`] checks a region's records.

use crate::disk::header_fields::{
    check_block_size, check_key_at, corrupt_block0, put_key_at, put_u32, put_u64s, u32_at, u64_at,
    HeaderStart,
};
use crate::error::Result;
use crate::mem::pgm::PgmParams;

pub(crate) use crate::disk::flagged_records::records_per_block;

use super::params::{DiskPgmParams, MAX_BASE};

/// Magic number of a disk PGM manifest.
pub const MAGIC: u64 = u64::from_le_bytes(*b"LIDXDPGM");
/// Format version this build writes and reads (2: the keys' fingerprint).
pub const VERSION: u32 = 2;
/// Most disk levels: level `i` holds `base * 2^i` records, so 40 levels hold more than 2^40.
pub(crate) const MAX_LEVELS: usize = 40;
/// Bytes of the header before the level table.
const FIXED_BYTES: usize = 112;
/// Bytes per level in the table.
const LEVEL_BYTES: usize = 24;
/// What block 0 starts with.
const START: HeaderStart = HeaderStart::new("the manifest", MAGIC, VERSION, FIXED_BYTES);

/// One disk level as the manifest records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelEntry {
    /// Level number `i >= 1`; capacity `base * 2^i`.
    pub level: u32,
    /// Generation in the file name.
    pub generation: u64,
    /// Records in the file, tombstones included.
    pub records: u64,
}

/// The decoded header of a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Build parameters.
    pub params: DiskPgmParams,
    /// Block size in bytes.
    pub block_size: u32,
    /// Live entries.
    pub len: u64,
    /// Flushes so far.
    pub sequence: u64,
    /// Next generation a new level file gets.
    pub next_generation: u64,
    /// Level-0 region in use.
    pub region: u32,
    /// Level-0 records.
    pub level0: u32,
    /// Disk levels, ascending.
    pub levels: Vec<LevelEntry>,
    /// Fingerprint of the keys the index was built from.
    pub keys_fingerprint: u64,
}

/// Blocks of one level-0 region (0 when a record does not fit a block).
pub(crate) fn region_blocks(usable: usize, ps: usize, base: usize) -> u64 {
    match records_per_block(usable, ps) {
        0 => 0,
        per => base.div_ceil(per) as u64,
    }
}

/// Capacity of disk level `level` (`base * 2^level`, saturating).
pub fn capacity(base: usize, level: u32) -> u64 {
    (base as u64).saturating_mul(1u64.checked_shl(level).unwrap_or(u64::MAX))
}

impl Manifest {
    /// Bytes the header takes.
    pub fn bytes(&self) -> usize {
        FIXED_BYTES + LEVEL_BYTES * self.levels.len()
    }

    /// Writes the header into `out` (zeroing the rest).
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        START.encode(out);
        put_key_at::<u64>(out, 16, 12);
        put_u32(out, 32, self.params.payload_size as u32);
        put_u32(out, 36, self.block_size);
        put_u64s(
            out,
            &[
                (40, self.params.pgm.eps as u64),
                (48, self.params.pgm.eps_recursive as u64),
                (56, self.params.base as u64),
                (64, self.len),
                (72, self.sequence),
                (80, self.next_generation),
                (104, self.keys_fingerprint),
            ],
        );
        put_u32(out, 88, self.region);
        put_u32(out, 92, self.level0);
        put_u32(out, 96, self.levels.len() as u32);
        for (j, l) in self.levels.iter().enumerate() {
            let at = FIXED_BYTES + j * LEVEL_BYTES;
            put_u32(out, at, l.level);
            put_u64s(out, &[(at + 8, l.generation), (at + 16, l.records)]);
        }
    }
}

/// Decodes and validates a manifest header from the usable bytes of block 0 of `file`.
pub fn decode_manifest(bytes: &[u8], file: &str) -> Result<Manifest> {
    let corrupt = |what: String| corrupt_block0(file, what);
    START.check(bytes, file)?;
    check_key_at::<u64>(bytes, 16, 12, file)?;
    let as_usize = |at: usize, what: &str| -> Result<usize> {
        usize::try_from(u64_at(bytes, at))
            .ok()
            .filter(|&v| v <= u32::MAX as usize)
            .ok_or_else(|| corrupt(format!("{what} {} is out of range", u64_at(bytes, at))))
    };
    let params = DiskPgmParams {
        payload_size: u32_at(bytes, 32) as usize,
        pgm: PgmParams::new(as_usize(40, "eps")?, as_usize(48, "eps_recursive")?),
        base: as_usize(56, "base")?,
    };
    params
        .check()
        .map_err(|e| corrupt(format!("parameters: {e}")))?;
    let block_size = u32_at(bytes, 36);
    let usable = check_block_size(block_size, file)?;
    if records_per_block(usable, params.payload_size) == 0 {
        return Err(corrupt(format!(
            "a {}-byte payload leaves no room for a record in a {block_size}-byte block",
            params.payload_size
        )));
    }
    let m = u32_at(bytes, 96) as usize;
    if m > MAX_LEVELS || FIXED_BYTES + m * LEVEL_BYTES > bytes.len() {
        return Err(corrupt(format!(
            "{m} disk levels: at most {MAX_LEVELS} fit the header"
        )));
    }
    let manifest = Manifest {
        params,
        block_size,
        len: u64_at(bytes, 64),
        sequence: u64_at(bytes, 72),
        next_generation: u64_at(bytes, 80),
        region: u32_at(bytes, 88),
        level0: u32_at(bytes, 92),
        levels: (0..m)
            .map(|j| {
                let at = FIXED_BYTES + j * LEVEL_BYTES;
                LevelEntry {
                    level: u32_at(bytes, at),
                    generation: u64_at(bytes, at + 8),
                    records: u64_at(bytes, at + 16),
                }
            })
            .collect(),
        keys_fingerprint: u64_at(bytes, 104),
    };
    if manifest.region > 1 || manifest.level0 as usize > MAX_BASE.min(params.base) {
        return Err(corrupt(format!(
            "level 0: region {} and {} records (capacity {})",
            manifest.region, manifest.level0, params.base
        )));
    }
    let mut previous = 0u32;
    let mut records = u64::from(manifest.level0);
    for l in &manifest.levels {
        if l.level <= previous || l.level as usize > MAX_LEVELS {
            return Err(corrupt(format!(
                "disk level {} after level {previous}: levels must ascend in 1..={MAX_LEVELS}",
                l.level
            )));
        }
        if l.records == 0 || l.records > capacity(params.base, l.level) {
            return Err(corrupt(format!(
                "level {} holds {} records, capacity {}",
                l.level,
                l.records,
                capacity(params.base, l.level)
            )));
        }
        if l.generation >= manifest.next_generation {
            return Err(corrupt(format!(
                "level {} has generation {}, not below the next one {}",
                l.level, l.generation, manifest.next_generation
            )));
        }
        previous = l.level;
        records = records.saturating_add(l.records);
    }
    if manifest.len > records {
        return Err(corrupt(format!(
            "{} live entries in {records} records",
            manifest.len
        )));
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::header_fields;

    fn sample() -> Manifest {
        Manifest {
            params: DiskPgmParams::default(),
            block_size: 4096,
            len: 900,
            sequence: 3,
            next_generation: 5,
            region: 1,
            level0: 10,
            keys_fingerprint: 99,
            levels: vec![
                LevelEntry {
                    level: 1,
                    generation: 4,
                    records: 400,
                },
                LevelEntry {
                    level: 3,
                    generation: 2,
                    records: 600,
                },
            ],
        }
    }

    #[test]
    fn round_trip_and_typed_errors() {
        let decode = |b: &[u8]| decode_manifest(b, "f");
        let buf = header_fields::assert_round_trip(&sample(), Manifest::encode, decode);
        // eps past 2^32, base, region, a level number, a level's records, a generation.
        let offsets = [45, 59, 91, 115, 131, 127];
        header_fields::assert_fields_checked(&buf, offsets, |b, at| b[at] = 0xff, decode);
        assert!(decode_manifest(&buf[..50], "f").is_err());
    }
}
