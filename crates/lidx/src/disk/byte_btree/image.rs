//! The page file's header and the checkpoint image: what a checkpoint writes so that the tree
//! can be opened again without reading its leaves.
//!
//! The page file (`pages.lbp`) starts with two header blocks, slots 0 and 1, each: magic
//! `lidxBTP1` (8 bytes at 0), format version (u32 at 8), block size (u32 at 12), owner (24
//! bytes at 16: the store's id and the generation of the checkpoint that stamped the slot, see
//! [`crate::disk::owner`]). Every other block is a leaf or part of an overflow run. A store
//! stamps the slot that does not hold the live checkpoint's stamp with each checkpoint's
//! generation before it commits the checkpoint, and once it has committed writes the same
//! stamp into the other slot ([`crate::disk::ByteBTree::settle_pages`]; a
//! writer's open does it too, with the last generation it burned), before any block of the
//! older checkpoint can be reused. So the page file is the live one for the manifest's
//! checkpoint exactly while a slot holds that checkpoint's stamp: another store's, an older
//! copy and a later one (whose checkpoints reused the blocks) are told apart from it. A stamp
//! torn by a power loss leaves the other slot, which holds the committed stamp; `check`
//! reports a slot that fails its checksum as damage, unless the other slot holds the committed
//! stamp: that is what an interrupted stamp leaves, reported as such and not as damage (the
//! next stamp rewrites it).
//!
//! A checkpoint image (`inner-<generation>.lbi`) is a block file: block 0 holds the header
//! below, the blocks after it the body, a byte stream of the leaves in key order (block and
//! separator below it, as varints and bytes) and then the free extents of the page file
//! (first block and length, varints). The body's crc32c is in the header, on top of every
//! block's own checksum, so an image is used whole or not at all.
//!
//! | offset | size | field                                 |
//! |--------|------|---------------------------------------|
//! | 0      | 8    | magic `lidxBTI1`                      |
//! | 8      | 4    | format version (2)                    |
//! | 12     | 4    | block size                            |
//! | 16     | 8    | records                               |
//! | 24     | 8    | key bytes                             |
//! | 32     | 8    | value bytes                           |
//! | 40     | 8    | blocks of the page file               |
//! | 48     | 8    | leaves                                |
//! | 56     | 8    | free extents                          |
//! | 64     | 8    | body bytes                            |
//! | 72     | 4    | crc32c of the body                    |
//! | 76     | 24   | owner: store id and generation        |
//!
//! Version 2 added the owner stamps (issue 30); a version-1 file is refused with
//! [`Error::UnsupportedVersion`] (rebuild it, or restore the store from a backup).

use crate::codec::{get_varint, put_varint};
use crate::disk::header_fields::{put_u32, put_u64s, u32_at, u64_at, HeaderStart};
use crate::disk::owner::{FileOwner, OWNER_BYTES};
use crate::error::{Error, Result};
use crate::io::checksum::BLOCK_TRAILER;
use crate::io::{BlockDevice, IoClass, Storage};

/// Magic number of a page file: `lidxBTP1`.
pub const PAGES_MAGIC: u64 = u64::from_le_bytes(*b"lidxBTP1");
/// Magic number of a checkpoint image: `lidxBTI1`.
pub const IMAGE_MAGIC: u64 = u64::from_le_bytes(*b"lidxBTI1");
/// Format version of both files.
pub(super) const BTREE_VERSION: u32 = 2;
/// Offset of the owner in a checkpoint image's header.
const IMAGE_OWNER_AT: usize = 76;
const IMAGE_HEADER: usize = IMAGE_OWNER_AT + OWNER_BYTES;
/// Offset of the block size in both files' header.
const BLOCK_SIZE_AT: usize = 12;
/// Offset of the owner in the page file's header.
const PAGES_OWNER_AT: usize = 16;
/// Blocks at the start of the page file that hold its header: two slots (see the module docs).
pub(crate) const PAGES_HEADER_BLOCKS: u64 = 2;
/// What the page file's header block starts with.
const PAGES_START: HeaderStart = HeaderStart::new(
    "the page file's header",
    PAGES_MAGIC,
    BTREE_VERSION,
    PAGES_OWNER_AT + OWNER_BYTES,
)
.truncated();
/// What a checkpoint image's block 0 starts with.
const IMAGE_START: HeaderStart = HeaderStart::new(
    "a checkpoint image's header",
    IMAGE_MAGIC,
    BTREE_VERSION,
    IMAGE_HEADER,
)
.truncated();

/// What a checkpoint image holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// Records in the tree.
    pub records: u64,
    /// Sum of the key lengths.
    pub key_bytes: u64,
    /// Sum of the value lengths.
    pub value_bytes: u64,
    /// Blocks of the page file at the checkpoint.
    pub page_blocks: u64,
    /// The leaves in key order: separator below each (empty for the first), block.
    pub leaves: Vec<(Vec<u8>, u64)>,
    /// Free extents of the page file: first block, blocks.
    pub free: Vec<(u64, u64)>,
    /// The store and checkpoint generation the image belongs to ([`FileOwner::NONE`]
    /// outside a store).
    pub owner: FileOwner,
}

/// Writes header slot `slot` (0 or 1) of a page file, owned by `owner`.
pub(crate) fn write_pages_slot(
    device: &dyn BlockDevice,
    slot: u64,
    owner: FileOwner,
) -> Result<()> {
    let mut block = vec![0u8; device.block_size()];
    PAGES_START.encode(&mut block);
    put_u32(&mut block, BLOCK_SIZE_AT, device.block_size() as u32);
    owner.encode_at(&mut block, PAGES_OWNER_AT);
    device.write_blocks(slot, &mut block, IoClass::Header)
}

/// Reads both header slots of a page file: each slot's owner, or why it is not valid.
pub(crate) fn read_pages_slots(device: &dyn BlockDevice) -> Result<[Result<FileOwner>; 2]> {
    let file = device.name().to_string();
    if device.len_blocks() < PAGES_HEADER_BLOCKS {
        return Err(Error::Truncated {
            file,
            what: format!(
                "{} block(s), shorter than the page file's two header blocks",
                device.len_blocks()
            ),
        });
    }
    let slot = |at: u64| {
        let mut block = vec![0u8; device.block_size()];
        device.read_blocks(at, &mut block, IoClass::Header)?;
        check_start(&file, &block, &PAGES_START, device.block_size())?;
        Ok(FileOwner::decode_at(&block, PAGES_OWNER_AT).unwrap_or_default())
    };
    Ok([slot(0), slot(1)])
}

/// Checks the header of a page file: its valid slot of the highest generation (both slots
/// damaged: the first one's error; valid slots of two stores: [`Error::Corrupt`]). Returns
/// its owner.
pub(crate) fn check_pages_header(device: &dyn BlockDevice) -> Result<FileOwner> {
    let [a, b] = read_pages_slots(device)?;
    match (a, b) {
        (Ok(a), Ok(b)) if a.store != b.store => Err(Error::Corrupt {
            file: device.name().to_string(),
            block: Some(1),
            what: format!("the header slots name two owners: {a} and {b}"),
        }),
        (Ok(a), Ok(b)) => Ok(if a.generation >= b.generation { a } else { b }),
        (Ok(one), Err(_)) | (Err(_), Ok(one)) => Ok(one),
        (Err(e), Err(_)) => Err(e),
    }
}

/// Checks the magic and version ([`HeaderStart::check`]) and that the file was written with
/// blocks of `block_size`.
fn check_start(file: &str, block: &[u8], start: &HeaderStart, block_size: usize) -> Result<()> {
    start.check(block, file)?;
    let bs = u32_at(block, BLOCK_SIZE_AT) as usize;
    if bs != block_size {
        return Err(Error::Corrupt {
            file: file.to_string(),
            block: Some(0),
            what: format!("written with {bs}-byte blocks, opened with {block_size}"),
        });
    }
    Ok(())
}

impl Image {
    /// Writes the image to a new file `name` in `storage` and makes it durable; returns its
    /// bytes. With the page file synced first ([`super::ByteBTree::sync`]), the two files are
    /// a tree that [`super::ByteBTree::open`] reopens: the store's checkpoint, or a tree built
    /// once and saved (`lidx build`).
    pub fn write(&self, storage: &Storage, name: &str) -> Result<u64> {
        let mut body = Vec::new();
        for (sep, block) in &self.leaves {
            put_varint(&mut body, *block);
            put_varint(&mut body, sep.len() as u64);
            body.extend_from_slice(sep);
        }
        for &(first, len) in &self.free {
            put_varint(&mut body, first);
            put_varint(&mut body, len);
        }
        let device = storage.create(name)?;
        let bs = device.block_size();
        let payload = bs - BLOCK_TRAILER;
        let blocks = 1 + body.len().div_ceil(payload);
        let mut buf = vec![0u8; blocks * bs];
        IMAGE_START.encode(&mut buf);
        put_u32(&mut buf, BLOCK_SIZE_AT, bs as u32);
        put_u64s(
            &mut buf,
            &[
                (16, self.records),
                (24, self.key_bytes),
                (32, self.value_bytes),
                (40, self.page_blocks),
                (48, self.leaves.len() as u64),
                (56, self.free.len() as u64),
                (64, body.len() as u64),
            ],
        );
        put_u32(&mut buf, 72, crc32c::crc32c(&body));
        self.owner.encode_at(&mut buf, IMAGE_OWNER_AT);
        for (i, chunk) in body.chunks(payload).enumerate() {
            let at = (i + 1) * bs;
            buf[at..at + chunk.len()].copy_from_slice(chunk);
        }
        device.write_blocks(0, &mut buf, IoClass::Data)?;
        device.sync()?;
        Ok((blocks * bs) as u64)
    }

    /// Reads and checks the image `name` in `storage`, written for a page file of blocks
    /// of `block_size`.
    pub fn read(storage: &Storage, name: &str) -> Result<Image> {
        let device = storage.open(name, false)?;
        let file = device.name().to_string();
        let bs = device.block_size();
        let blocks = device.len_blocks();
        if blocks == 0 {
            return Err(Error::Truncated {
                file,
                what: "an empty checkpoint image".into(),
            });
        }
        let mut buf = vec![0u8; blocks as usize * bs];
        device.read_blocks(0, &mut buf, IoClass::Data)?;
        decode_image(&file, &buf, bs)
    }
}

/// Decodes an image from its blocks (`buf`, checksums already verified).
pub(super) fn decode_image(file: &str, buf: &[u8], bs: usize) -> Result<Image> {
    let bad = |what: String| Error::Corrupt {
        file: file.to_string(),
        block: None,
        what,
    };
    if buf.len() < bs || bs <= BLOCK_TRAILER + IMAGE_HEADER {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: "shorter than its header".into(),
        });
    }
    check_start(file, buf, &IMAGE_START, bs)?;
    let payload = bs - BLOCK_TRAILER;
    let body_len = u64_at(buf, 64);
    let capacity = (buf.len() / bs - 1) as u64 * payload as u64;
    if body_len > capacity {
        return Err(Error::Truncated {
            file: file.to_string(),
            what: format!("a {body_len}-byte body in {capacity} bytes of blocks"),
        });
    }
    let mut body = Vec::with_capacity(body_len as usize);
    for block in buf[bs..].chunks(bs) {
        let want = (body_len as usize - body.len()).min(payload);
        body.extend_from_slice(&block[..want]);
    }
    let crc = crc32c::crc32c(&body);
    if crc != u32_at(buf, 72) {
        return Err(bad(format!(
            "body checksum {crc:#x}, header says {:#x}",
            u32_at(buf, 72)
        )));
    }
    let mut at = 0usize;
    let next = |at: &mut usize, what: &str| -> Result<u64> {
        let (v, n) = get_varint(&body[*at..]).ok_or_else(|| bad(format!("{what} cut short")))?;
        *at += n;
        Ok(v)
    };
    let (n_leaves, n_free) = (u64_at(buf, 48), u64_at(buf, 56));
    if n_leaves.saturating_add(n_free) > body_len {
        return Err(bad(format!(
            "{n_leaves} leaves and {n_free} extents in a {body_len}-byte body"
        )));
    }
    let page_blocks = u64_at(buf, 40);
    let mut leaves = Vec::with_capacity(n_leaves as usize);
    for i in 0..n_leaves {
        let block = next(&mut at, "a leaf")?;
        let len = next(&mut at, "a separator length")? as usize;
        let sep = body
            .get(at..at + len)
            .ok_or_else(|| bad(format!("separator {i} past the end")))?
            .to_vec();
        at += len;
        if block < PAGES_HEADER_BLOCKS || block >= page_blocks {
            return Err(bad(format!("leaf {i} at block {block} of {page_blocks}")));
        }
        if i > 0
            && leaves
                .last()
                .is_some_and(|(p, _): &(Vec<u8>, u64)| *p >= sep)
        {
            return Err(bad(format!("separator {i} out of order")));
        }
        leaves.push((sep, block));
    }
    let mut free = Vec::with_capacity(n_free as usize);
    for i in 0..n_free {
        let first = next(&mut at, "an extent")?;
        let len = next(&mut at, "an extent length")?;
        if first < PAGES_HEADER_BLOCKS
            || len == 0
            || first.checked_add(len).is_none_or(|e| e > page_blocks)
        {
            return Err(bad(format!(
                "free extent {i} at {first} of {len} blocks in {page_blocks}"
            )));
        }
        free.push((first, len));
    }
    Ok(Image {
        records: u64_at(buf, 16),
        key_bytes: u64_at(buf, 24),
        value_bytes: u64_at(buf, 32),
        page_blocks,
        leaves,
        free,
        owner: FileOwner::decode_at(buf, IMAGE_OWNER_AT).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimProfile;

    #[test]
    fn an_image_reads_back_and_damage_is_typed() {
        let storage = Storage::in_memory(SimProfile::named("ram").unwrap(), 4096).unwrap();
        let image = Image {
            records: 3,
            key_bytes: 9,
            value_bytes: 4,
            page_blocks: 100,
            leaves: (0..2000u64)
                .map(|i| {
                    let sep = if i == 0 {
                        Vec::new()
                    } else {
                        i.to_be_bytes().to_vec()
                    };
                    (sep, i + PAGES_HEADER_BLOCKS)
                })
                .collect(),
            free: vec![(2002, 3)],
            owner: FileOwner {
                store: 0xfeed,
                generation: 4,
            },
        };
        let mut image = image;
        image.page_blocks = 3000;
        image.write(&storage, "i").unwrap();
        assert_eq!(Image::read(&storage, "i").unwrap(), image);
        let dev = storage.open("i", false).unwrap();
        let mut buf = vec![0u8; dev.len_blocks() as usize * 4096];
        dev.read_blocks(0, &mut buf, IoClass::Data).unwrap();
        let mut flipped = buf.clone();
        flipped[4096 + 10] ^= 1;
        assert!(matches!(
            decode_image("i", &flipped, 4096),
            Err(Error::Corrupt { .. })
        ));
        let mut magic = buf.clone();
        magic[0] ^= 1;
        assert!(matches!(
            decode_image("i", &magic, 4096),
            Err(Error::BadMagic { .. })
        ));
        assert!(decode_image("i", &buf[..4096], 4096).is_err());
    }
}
