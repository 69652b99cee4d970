//! FILM's files: two header slots and the snapshots of its in-memory part in `<name>`, the
//! evicted records in `<name>.data` after a header of its own that binds it to `<name>`.
//!
//! `<name>`, blocks 0 and 1 are the two header slots (little-endian, in the block's usable
//! bytes); the header of generation `g` is in block `g % 2`:
//!
//! | offset | size | field                                                              |
//! |--------|------|--------------------------------------------------------------------|
//! | 0      | 8    | magic `b"LIDXFILM"` ([`MAGIC`])                                    |
//! | 8      | 4    | format version, 3 ([`VERSION`]; 1 and 2 refused, see below)       |
//! | 12     | 4    | kind, 1 ([`KIND`]: a FILM index)                                   |
//! | 16     | 16   | key type name (`u64`), zero-padded                                 |
//! | 32     | 4    | key size in bytes (8)                                              |
//! | 36     | 4    | payload size `ps` in bytes                                         |
//! | 40     | 4    | block size in bytes (checksum trailer included)                    |
//! | 44     | 4    | reserved, 0                                                        |
//! | 48     | 8    | eps of the leaves' models                                          |
//! | 56     | 8    | memory limit of the cached data items, bytes                       |
//! | 64     | 8    | entries                                                            |
//! | 72     | 8    | fingerprint of the keys built from ([`crate::disk::keys_fingerprint`]) |
//! | 80     | 8    | data pages in use in `<name>.data`                                 |
//! | 88     | 8    | snapshot bytes                                                     |
//! | 96     | 8    | crc32c of the snapshot bytes                                       |
//! | 104    | 8    | pair id, random at build: `<name>.data`'s header records it too     |
//! | 112    | 8    | generation: 1 at build, one more at every flush                    |
//! | 120    | 8    | first block of the snapshot (at least [`SNAPSHOT_FIRST`])          |
//!
//! A snapshot's bytes are laid end to end over the usable bytes of the blocks from its first:
//! the entry count `n` (u64), `n` pairs (key u64, locator u64) in strictly ascending key
//! order, then the cached item count `c` (u64) and `c` pairs (key u64, `ps` payload bytes)
//! from the least to the most recently used. A locator is [`IN_MEMORY`] for a cached item, or
//! `page << 16 | slot` for a record in `<name>.data`.
//!
//! A flush never writes over the snapshot the newest header names, nor over that header: it
//! writes its snapshot at [`SNAPSHOT_FIRST`] if it fits before the committed one, else just
//! past it ([`next_snapshot_first`]), syncs, then writes the header of the next generation
//! into the other slot and syncs. Open takes the slot of the newest generation among those
//! that decode, so a crash anywhere in a flush leaves the state before it (or, once the
//! header is written, the one after it). Version 2 had one header and rewrote the snapshot in
//! place, version 1 had no data header either: both are refused with
//! [`crate::Error::UnsupportedVersion`] (rebuild).
//!
//! `<name>.data`, block 0 is its header: magic `b"LIDXFDAT"` ([`DATA_MAGIC`]), version (as
//! `<name>`'s), kind 2 ([`DATA_KIND`]), payload size (u32 at 16), block size (u32 at 20), pair
//! id (u64 at 24); open refuses a data file whose header is not the one `<name>` was built
//! with. Block `1 + p` is data page `p`: `floor(usable / (8 + ps))` record slots of (key u64,
//! payload), written in eviction order; a slot's key is checked against the key looked up.
//!
//! [`decode_header`] checks the magic, version, kind, key type and that the fields agree;
//! [`decode_snapshot`] that the snapshot is what the header says (length, crc) and that its
//! entries agree (keys ascending, each locator a cached item or a slot of a page in use, the
//! cached items exactly the entries marked in memory). Anything else is
//! [`crate::Error::Corrupt`].

use crate::codec::{Decoder, Encoder};
use crate::disk::header_fields::{
    check_block_size, check_key_at, corrupt_block0, put_key_at, put_u32, put_u64s, u32_at, u64_at,
    HeaderStart,
};
use crate::error::Result;

use super::FilmParams;

/// Magic number of a FILM file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"LIDXFILM");
/// Format version this build writes and reads.
pub const VERSION: u32 = 3;
/// Kind of the file: a FILM index.
pub const KIND: u32 = 1;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 128;
/// The header slots: blocks 0 and 1 of `<name>`.
pub(crate) const HEADER_SLOTS: u64 = 2;
/// The first block a snapshot may start at (after the header slots).
pub const SNAPSHOT_FIRST: u64 = HEADER_SLOTS;
/// Magic number of a FILM data file.
pub const DATA_MAGIC: u64 = u64::from_le_bytes(*b"LIDXFDAT");
/// Kind of a FILM data file.
pub const DATA_KIND: u32 = 2;
/// Bytes of a data file's header.
pub(crate) const DATA_HEADER_BYTES: usize = 32;
/// The block of a data file where data page 0 starts (after the header).
pub(crate) const DATA_FIRST: u64 = 1;
/// The locator of an item whose payload is cached in memory.
pub const IN_MEMORY: u64 = u64::MAX;
/// Record slots a data page may have at most (the slot number's 16 bits).
pub(crate) const MAX_SLOTS: usize = 1 << 16;

const START: HeaderStart =
    HeaderStart::new("the FILM header", MAGIC, VERSION, HEADER_BYTES).kind(KIND);

const DATA_START: HeaderStart = HeaderStart::new(
    "the FILM data header",
    DATA_MAGIC,
    VERSION,
    DATA_HEADER_BYTES,
)
.kind(DATA_KIND);

/// Writes the header of a FILM's data file (its payload size, block size and pair id) into
/// `out` (zeroing the rest).
pub fn encode_data_header(payload_size: usize, block_size: u32, pair: u64, out: &mut [u8]) {
    out.fill(0);
    DATA_START.encode(out);
    put_u32(out, 16, payload_size as u32);
    put_u32(out, 20, block_size);
    put_u64s(out, &[(24, pair)]);
}

/// Checks that `bytes` (the usable bytes of block 0 of the data file `file`) are the header of
/// the data file of the FILM whose header is `head`: [`crate::Error::Corrupt`] otherwise.
pub fn check_data_header(bytes: &[u8], head: &Header, file: &str) -> Result<()> {
    DATA_START.check(bytes, file)?;
    let (ps, block_size, pair) = (u32_at(bytes, 16), u32_at(bytes, 20), u64_at(bytes, 24));
    if ps as usize != head.params.payload_size || block_size != head.block_size || pair != head.pair
    {
        return Err(corrupt_block0(
            file,
            format!(
                "payload {ps} bytes, {block_size}-byte blocks, pair id {pair:#x}: not the data                  file of its FILM ({} bytes, {}-byte blocks, pair id {:#x}); rebuild the index",
                head.params.payload_size, head.block_size, head.pair
            ),
        ));
    }
    Ok(())
}

/// The decoded header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Build parameters.
    pub params: FilmParams,
    /// Block size in bytes.
    pub block_size: u32,
    /// Entries.
    pub len: u64,
    /// Fingerprint of the keys built from.
    pub keys_fingerprint: u64,
    /// Data pages in use.
    pub pages: u64,
    /// Bytes of the snapshot.
    pub snapshot_bytes: u64,
    /// crc32c of the snapshot.
    pub snapshot_crc: u64,
    /// The id its data file's header records too.
    pub pair: u64,
    /// 1 at build, one more at every flush; the header is in block `generation % 2`.
    pub generation: u64,
    /// The block the snapshot starts at.
    pub snapshot_first: u64,
}

impl Header {
    /// Writes the header into `out` (zeroing the rest).
    pub fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        START.encode(out);
        put_key_at::<u64>(out, 16, 32);
        put_u32(out, 36, self.params.payload_size as u32);
        put_u32(out, 40, self.block_size);
        put_u64s(
            out,
            &[
                (48, self.params.eps as u64),
                (56, self.params.memory_limit),
                (64, self.len),
                (72, self.keys_fingerprint),
                (80, self.pages),
                (88, self.snapshot_bytes),
                (96, self.snapshot_crc),
                (104, self.pair),
                (112, self.generation),
                (120, self.snapshot_first),
            ],
        );
    }

    /// The header slot (block of `<name>`) this header belongs in.
    pub fn slot(&self) -> u64 {
        self.generation % HEADER_SLOTS
    }

    /// Blocks of `usable` bytes the snapshot takes.
    pub fn snapshot_blocks(&self, usable: usize) -> u64 {
        self.snapshot_bytes.div_ceil(usable as u64)
    }

    /// Usable bytes of a block, and record slots per data page.
    pub fn slots(&self) -> usize {
        slots_per_page(
            self.block_size as usize - crate::io::BLOCK_TRAILER,
            self.params.payload_size,
        )
    }
}

/// Where a snapshot of `blocks` blocks goes when the committed one starts at block `first`
/// and takes `committed` blocks: at [`SNAPSHOT_FIRST`] if it fits before the committed one,
/// else just past it. Either way it overlaps neither the committed snapshot nor the header
/// slots, and `<name>` stays under about three times its largest snapshot (a snapshot goes
/// past the committed one only when it is larger than every block before that one).
pub fn next_snapshot_first(first: u64, committed: u64, blocks: u64) -> u64 {
    if SNAPSHOT_FIRST + blocks <= first {
        SNAPSHOT_FIRST
    } else {
        first + committed
    }
}

/// Record slots in a data page of `usable` bytes for `ps`-byte payloads.
pub(crate) fn slots_per_page(usable: usize, ps: usize) -> usize {
    (usable / (8 + ps)).min(MAX_SLOTS)
}

/// Decodes and checks a header from the usable bytes of block 0 of `file`.
pub fn decode_header(bytes: &[u8], file: &str) -> Result<Header> {
    let corrupt = |what: String| corrupt_block0(file, what);
    START.check(bytes, file)?;
    check_key_at::<u64>(bytes, 16, 32, file)?;
    let eps = u64_at(bytes, 48);
    let params = FilmParams {
        payload_size: u32_at(bytes, 36) as usize,
        eps: usize::try_from(eps)
            .ok()
            .filter(|&e| e <= u32::MAX as usize)
            .ok_or_else(|| corrupt(format!("eps {eps} is out of range")))?,
        memory_limit: u64_at(bytes, 56),
    };
    params
        .check()
        .map_err(|e| corrupt(format!("parameters: {e}")))?;
    let block_size = u32_at(bytes, 40);
    let usable = check_block_size(block_size, file)?;
    if slots_per_page(usable, params.payload_size) == 0 {
        return Err(corrupt(format!(
            "a {}-byte payload leaves no room for a record in a {block_size}-byte block",
            params.payload_size
        )));
    }
    let header = Header {
        params,
        block_size,
        len: u64_at(bytes, 64),
        keys_fingerprint: u64_at(bytes, 72),
        pages: u64_at(bytes, 80),
        snapshot_bytes: u64_at(bytes, 88),
        snapshot_crc: u64_at(bytes, 96),
        pair: u64_at(bytes, 104),
        generation: u64_at(bytes, 112),
        snapshot_first: u64_at(bytes, 120),
    };
    if header.pages >= 1 << 48 || header.snapshot_crc > u64::from(u32::MAX) {
        return Err(corrupt(format!(
            "{} data pages, snapshot crc {:#x}: out of range",
            header.pages, header.snapshot_crc
        )));
    }
    if header.generation == 0
        || !(SNAPSHOT_FIRST..1 << 48).contains(&header.snapshot_first)
        || header.snapshot_bytes >= 1 << 56
    {
        return Err(corrupt(format!(
            "generation {}, a {}-byte snapshot from block {}: out of range",
            header.generation, header.snapshot_bytes, header.snapshot_first
        )));
    }
    // The smallest snapshot: two counts, 16 bytes per entry.
    if header.len > header.snapshot_bytes / 16 {
        return Err(corrupt(format!(
            "a {}-byte snapshot cannot hold {} entries",
            header.snapshot_bytes, header.len
        )));
    }
    Ok(header)
}

/// The in-memory part as a snapshot holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Every key, strictly ascending.
    pub keys: Vec<u64>,
    /// Each key's locator: [`IN_MEMORY`] or `page << 16 | slot`.
    pub locs: Vec<u64>,
    /// The cached items' keys, least recently used first.
    pub cached: Vec<u64>,
    /// Their payloads, concatenated.
    pub payloads: Vec<u8>,
}

impl Snapshot {
    /// The snapshot's bytes.
    pub fn encode(&self, ps: usize) -> Vec<u8> {
        let mut e = Encoder::new();
        e.u64(self.keys.len() as u64);
        for (&k, &l) in self.keys.iter().zip(&self.locs) {
            e.u64(k);
            e.u64(l);
        }
        e.u64(self.cached.len() as u64);
        for (i, k) in self.cached.iter().enumerate() {
            e.u64(*k);
            e.bytes(&self.payloads[i * ps..(i + 1) * ps]);
        }
        e.into_bytes()
    }
}

/// Decodes the snapshot `bytes` of `file` under `header`, checking it (module docs).
pub fn decode_snapshot(bytes: &[u8], header: &Header, file: &str) -> Result<Snapshot> {
    let corrupt = |what: String| corrupt_block0(file, what);
    if bytes.len() as u64 != header.snapshot_bytes
        || u64::from(crc32c::crc32c(bytes)) != header.snapshot_crc
    {
        return Err(corrupt(format!(
            "the snapshot ({} bytes) is not the one the header records ({} bytes, crc {:#x}): \
             a flush was cut short; rebuild the index",
            bytes.len(),
            header.snapshot_bytes,
            header.snapshot_crc
        )));
    }
    let ps = header.params.payload_size;
    let slots = header.slots() as u64;
    let mut d = Decoder::new(file, bytes);
    let n = d.count(16, "entries")?;
    if n as u64 != header.len {
        return Err(corrupt(format!(
            "{n} entries, the header says {}",
            header.len
        )));
    }
    let mut snap = Snapshot {
        keys: Vec::with_capacity(n),
        locs: Vec::with_capacity(n),
        ..Snapshot::default()
    };
    let mut in_memory = 0usize;
    for i in 0..n {
        let key = d.u64()?;
        let loc = d.u64()?;
        if i > 0 && snap.keys[i - 1] >= key {
            return Err(corrupt(format!("entry {i}: keys do not ascend")));
        }
        if loc == IN_MEMORY {
            in_memory += 1;
        } else if loc >> 16 >= header.pages || loc & 0xffff >= slots {
            return Err(corrupt(format!(
                "entry {i}: page {} slot {} is outside the {} pages of {slots} slots",
                loc >> 16,
                loc & 0xffff,
                header.pages
            )));
        }
        snap.keys.push(key);
        snap.locs.push(loc);
    }
    let c = d.count(8 + ps, "cached items")?;
    if c != in_memory {
        return Err(corrupt(format!(
            "{c} cached items for {in_memory} entries in memory"
        )));
    }
    let mut seen = vec![false; n];
    for _ in 0..c {
        let key = d.u64()?;
        let at = snap.keys.binary_search(&key).ok();
        match at {
            Some(at) if snap.locs[at] == IN_MEMORY && !seen[at] => seen[at] = true,
            _ => {
                return Err(corrupt(format!(
                    "cached item {key} is no entry in memory, or cached twice"
                )))
            }
        }
        snap.cached.push(key);
        snap.payloads.extend_from_slice(d.take(ps)?);
    }
    if d.remaining() != 0 {
        return Err(corrupt(format!(
            "{} bytes after the snapshot's cached items",
            d.remaining()
        )));
    }
    Ok(snap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::header_fields;

    fn sample() -> Header {
        Header {
            params: FilmParams::default(),
            block_size: 4096,
            len: 3,
            keys_fingerprint: 7,
            pages: 2,
            snapshot_bytes: 100,
            snapshot_crc: 5,
            pair: 0x1234,
            generation: 3,
            snapshot_first: 9,
        }
    }

    #[test]
    fn a_data_header_is_its_film_s_only() {
        let head = sample();
        let mut block = vec![0u8; 4092];
        encode_data_header(8, 4096, head.pair, &mut block);
        check_data_header(&block, &head, "f.data").unwrap();
        // Another FILM's (pair id, payload, block size) or no header at all: refused.
        for other in [
            Header {
                pair: 0x4321,
                ..sample()
            },
            Header {
                params: FilmParams {
                    payload_size: 16,
                    ..FilmParams::default()
                },
                ..sample()
            },
            Header {
                block_size: 8192,
                ..sample()
            },
        ] {
            assert!(matches!(
                check_data_header(&block, &other, "f.data"),
                Err(crate::Error::Corrupt { .. })
            ));
        }
        assert!(check_data_header(&[0u8; 4092], &head, "f.data").is_err());
        assert!(check_data_header(&block[..8], &head, "f.data").is_err());
    }

    #[test]
    fn header_round_trip_and_typed_errors() {
        let decode = |b: &[u8]| decode_header(b, "f");
        let buf = header_fields::assert_round_trip(&sample(), Header::encode, decode);
        // payload size, block size, eps past 2^32, pages, crc, snapshot bytes, first block.
        let offsets = [38, 41, 53, 87, 101, 95, 127];
        header_fields::assert_fields_checked(&buf, offsets, |b, at| b[at] = 0xff, decode);
    }

    #[test]
    fn snapshot_round_trip_and_typed_errors() {
        let snap = Snapshot {
            keys: vec![1, 5, 9],
            locs: vec![IN_MEMORY, 1 << 16 | 3, IN_MEMORY],
            cached: vec![9, 1],
            payloads: (0..16).collect(),
        };
        let bytes = snap.encode(8);
        let header = Header {
            snapshot_bytes: bytes.len() as u64,
            snapshot_crc: u64::from(crc32c::crc32c(&bytes)),
            ..sample()
        };
        assert_eq!(decode_snapshot(&bytes, &header, "f").unwrap(), snap);
        let mut bad = snap.clone();
        bad.cached = vec![9, 9];
        let bytes = bad.encode(8);
        let header = Header {
            snapshot_crc: u64::from(crc32c::crc32c(&bytes)),
            ..header
        };
        assert!(matches!(
            decode_snapshot(&bytes, &header, "f"),
            Err(crate::Error::Corrupt { .. })
        ));
        let mut flipped = bytes.clone();
        flipped[3] ^= 1;
        assert!(decode_snapshot(&flipped, &header, "f").is_err());
    }
}
