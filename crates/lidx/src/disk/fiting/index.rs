//! [`DiskFiting`]: build, open, reads (get, scan along the sibling links), writes (insert and
//! delete through the delta buffers, resegmentation) and flush.

use std::sync::Arc;

use crate::disk::block_batch::BlockBatch;
use crate::disk::btree::{DiskBTree, DiskBTreeParams, Resident};
use crate::disk::flagged_records::{decode_records, encode_records, per_block_for, Run};
use crate::disk::header_fields::{check_built_block_size, check_header_blocks};
use crate::disk::{DiskIndex, DiskMap, PhaseClock, StorageBytes, WriteBreakdown};
use crate::error::{Error, Result};
use crate::index::ApproxPos;
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::check_strictly_sorted;
use crate::model::linear::LinearModel;
use crate::model::opt_pla::optimal_pla;

use super::format::{
    decode_header, decode_meta, decode_segref, Header, Meta, SegRef, NONE, SEGREF_BYTES,
};
use super::params::DiskFitingParams;

/// Blocks a scan reads per request from a segment's data, at most.
const SCAN_CHUNK_BLOCKS: usize = 64;

/// The FITing-tree on disk. See the module docs.
pub struct DiskFiting {
    device: Arc<dyn BlockDevice>,
    inner: DiskBTree<u64>,
    /// With the inner part in memory: every inner entry, ascending by routing key (module
    /// docs); `None` when the inner part is read from disk.
    memory: Option<Vec<(u64, SegRef)>>,
    header: Header,
    writable: bool,
    dirty: bool,
    timing: WriteBreakdown,
}

/// The part of the index a key routes to.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// Below the first segment's routing key: the extra buffer.
    Extra,
    /// The segment with the largest routing key `lo <= key`.
    Segment { lo: u64, seg: SegRef },
}

/// Records of a segment's data read from whole blocks: `run` starts at data record `first`.
struct Chunk {
    first: u64,
    run: Run,
}

/// A new segment cut by a resegmentation or the build: routing key, model, records.
struct Piece {
    lo: u64,
    model: LinearModel,
    from: usize,
    to: usize,
}

/// The resident levels of the inner B+-tree itself: with the inner part in memory its
/// entries are held decoded ([`DiskFiting`]'s `memory`) and the tree is only written through,
/// so its inner levels stay in memory too (its writes read one leaf); on disk, none.
fn inner_resident(resident: Resident) -> Resident {
    match resident {
        Resident::None => Resident::None,
        _ => Resident::AllInner,
    }
}

/// The file name of the inner B+-tree of index `name`.
pub(super) fn inner_name(name: &str) -> String {
    format!("{name}.inner")
}

/// Cuts sorted `keys` into optimal PLA segments of error `eps` (paper 003 §4.2: the streaming
/// algorithm of PGM instead of the greedy one), each model re-based to predict ranks from 0
/// within its segment as the in-memory FITing-tree's segments do
/// ([`crate::mem::fiting_tree`]). The first piece's routing key is `first_lo`.
fn cut(keys: &[u64], eps: usize, first_lo: u64) -> Result<Vec<Piece>> {
    let segments = optimal_pla(keys, eps)?;
    let mut pieces = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let to = segments.get(i + 1).map_or(keys.len(), |n| n.first_rank);
        pieces.push(Piece {
            lo: if i == 0 { first_lo } else { keys[s.first_rank] },
            model: LinearModel {
                intercept: s.model.intercept - s.first_rank as f64,
                ..s.model
            },
            from: s.first_rank,
            to,
        });
    }
    Ok(pieces)
}

impl DiskFiting {
    /// Builds the index `name` in `storage` (its segment file `name`, its inner B+-tree
    /// `name.inner`) from strictly ascending `keys`; `payload_of(i, &keys[i], out)` fills entry
    /// `i`'s payload. Open for writing afterwards, with `params.resident` levels of the inner
    /// tree in memory.
    ///
    /// Errors: [`Error::OutOfOrder`], [`Error::DuplicateKey`], [`Error::InvalidParameter`], I/O.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[u64],
        mut payload_of: impl FnMut(usize, &u64, &mut [u8]),
        params: DiskFitingParams,
    ) -> Result<Self> {
        params.check()?;
        check_strictly_sorted(keys)?;
        let bs = storage.block_size();
        let ps = params.payload_size;
        let per = per_block_for(bs, ps)?;
        let pieces = match keys.first() {
            Some(&first) => cut(keys, params.eps, first)?,
            None => Vec::new(),
        };
        let mut header = Header {
            params,
            block_size: bs as u32,
            len: keys.len() as u64,
            segments: pieces.len() as u64,
            blocks: 1,
            extra: 1,
            live_blocks: 0,
            keys_fingerprint: crate::codec::keys_fingerprint(keys),
        };
        let bb = header.buffer_blocks();
        let mut starts = Vec::with_capacity(pieces.len());
        let mut next = 1 + 1 + bb;
        for p in &pieces {
            starts.push(next);
            next += 1 + bb + ((p.to - p.from) as u64).div_ceil(per as u64);
        }
        header.blocks = next;
        header.live_blocks = next;
        let count = |i: usize| pieces.get(i).map_or(0, |p: &Piece| (p.to - p.from) as u64);
        let device = storage.create(name)?;
        let mut batch = BlockBatch::new(bs, 1, IoClass::Leaf);
        let usable = bs - crate::io::BLOCK_TRAILER;
        Meta {
            block: 1,
            lo: 0,
            extra: true,
            buffered: 0,
            n: 0,
            left: NONE,
            right: starts.first().copied().unwrap_or(NONE),
            left_n: 0,
            right_n: count(0),
        }
        .encode(&mut batch.block(device.as_ref())?[..usable]);
        for _ in 0..bb {
            batch.block(device.as_ref())?;
        }
        let mut block_run = Run::default();
        for (i, p) in pieces.iter().enumerate() {
            let left = if i == 0 { 1 } else { starts[i - 1] };
            Meta {
                block: starts[i],
                lo: p.lo,
                extra: false,
                buffered: 0,
                n: count(i),
                left,
                right: starts.get(i + 1).copied().unwrap_or(NONE),
                left_n: if i == 0 { 0 } else { count(i - 1) },
                right_n: count(i + 1),
            }
            .encode(&mut batch.block(device.as_ref())?[..usable]);
            for _ in 0..bb {
                batch.block(device.as_ref())?;
            }
            for chunk_from in (p.from..p.to).step_by(per) {
                let chunk_to = (chunk_from + per).min(p.to);
                block_run.keys.clear();
                block_run.dead.clear();
                block_run.payloads.clear();
                block_run.payloads.resize((chunk_to - chunk_from) * ps, 0);
                for (j, r) in (chunk_from..chunk_to).enumerate() {
                    block_run.keys.push(keys[r]);
                    block_run.dead.push(false);
                    payload_of(r, &keys[r], &mut block_run.payloads[j * ps..(j + 1) * ps]);
                }
                encode_records(&block_run, ps, bs, batch.block(device.as_ref())?);
            }
        }
        batch.flush(device.as_ref())?;
        drop(batch);
        let refs: Vec<SegRef> = pieces
            .iter()
            .zip(&starts)
            .map(|(p, &block)| SegRef {
                block,
                n: (p.to - p.from) as u64,
                model: p.model,
            })
            .collect();
        let inverted: Vec<u64> = pieces.iter().rev().map(|p| !p.lo).collect();
        let last = refs.len().saturating_sub(1);
        let mut inner = DiskBTree::build(
            storage,
            &inner_name(name),
            &inverted,
            |i, _, out| refs[last - i].encode(out),
            DiskBTreeParams {
                payload_size: SEGREF_BYTES,
                fill_factor: 1.0,
                resident: inner_resident(params.resident),
            },
        )?;
        inner.set_leaf_class(IoClass::Inner);
        let memory = (params.resident != Resident::None).then(|| {
            pieces
                .iter()
                .zip(refs.iter())
                .map(|(p, r)| (p.lo, *r))
                .collect()
        });
        let mut index = DiskFiting {
            device,
            inner,
            memory,
            header,
            writable: true,
            dirty: true,
            timing: WriteBreakdown::default(),
        };
        index.flush()?;
        Ok(index)
    }

    /// Opens the index `name` of `storage`, for writes too when `writable`, with the `resident`
    /// levels of its inner B+-tree in memory ([`Resident::None`]: paper 003 §6.1, all on disk;
    /// [`Resident::AllInner`]: §6.2).
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::KeyTypeMismatch`],
    /// [`Error::Truncated`], [`Error::ChecksumMismatch`], [`Error::Corrupt`] (naming file and
    /// block), and the inner tree's own.
    pub fn open(storage: &Storage, name: &str, writable: bool, resident: Resident) -> Result<Self> {
        let device = storage.open(name, writable)?;
        let mut buf = AlignedBuf::zeroed(device.block_size());
        device.read_blocks(0, &mut buf, IoClass::Header)?;
        let mut header = decode_header(&buf[..device.payload_size()], device.name())?;
        header.params.resident = resident;
        check_built_block_size(device.name(), header.block_size, device.block_size(), false)?;
        check_header_blocks(device.name(), device.len_blocks(), header.blocks)?;
        let mut inner = DiskBTree::<u64>::open(
            storage,
            &inner_name(name),
            inner_resident(resident),
            writable,
        )?;
        inner.set_leaf_class(IoClass::Inner);
        if inner.len() != header.segments || inner.payload_size() != SEGREF_BYTES {
            return Err(Error::Corrupt {
                file: device.name().to_string(),
                block: Some(0),
                what: format!(
                    "{} segments, the inner tree holds {} entries of {} bytes",
                    header.segments,
                    inner.len(),
                    inner.payload_size()
                ),
            });
        }
        let mut index = DiskFiting {
            device,
            inner,
            memory: None,
            header,
            writable,
            dirty: false,
            timing: WriteBreakdown::default(),
        };
        if resident != Resident::None {
            index.memory = Some(index.inner_entries()?);
        }
        Ok(index)
    }

    /// Every inner entry, ascending by routing key: one scan of the inner tree's leaves.
    fn inner_entries(&self) -> Result<Vec<(u64, SegRef)>> {
        let (mut keys, mut payloads) = (Vec::new(), Vec::new());
        self.inner.scan(&0, usize::MAX, &mut keys, &mut payloads)?;
        let mut entries = Vec::with_capacity(keys.len());
        for (i, inverted) in keys.iter().enumerate().rev() {
            let bytes = &payloads[i * SEGREF_BYTES..(i + 1) * SEGREF_BYTES];
            entries.push((!inverted, decode_segref(bytes, &self.header, self.file())?));
        }
        Ok(entries)
    }

    /// Reads every block of the index (the inner tree's nodes, and every live segment's meta,
    /// buffer and data blocks, each segment in one request) and checks that the segments chain
    /// from the extra buffer in key order with consistent sibling links and counts, that the
    /// inner tree names exactly them, and that the entries are as many as the header says:
    /// what `lidx verify` would run. Returns the entries.
    pub fn verify(&self) -> Result<u64> {
        self.inner.verify()?;
        let entries = self.inner_entries()?;
        let corrupt = |block: u64, what: String| Error::Corrupt {
            file: self.file().to_string(),
            block: Some(block),
            what,
        };
        let bs = self.device.block_size();
        let bb = self.header.buffer_blocks();
        let (mut block, mut left, mut left_n) = (self.header.extra, NONE, 0u64);
        let mut previous: Option<u64> = None;
        let (mut live, mut segments) = (0u64, 0usize);
        while block != NONE {
            let meta = self.read_meta(block)?;
            let mut span = AlignedBuf::zeroed(meta.span(&self.header) as usize * bs);
            self.device.read_blocks(block, &mut span, IoClass::Leaf)?;
            if meta.left != left || meta.left_n != left_n || meta.extra != (segments == 0) {
                return Err(corrupt(block, "sibling links disagree".to_string()));
            }
            if !meta.extra {
                let entry = entries.get(segments - 1);
                if entry.is_none_or(|(lo, r)| *lo != meta.lo || r.block != block || r.n != meta.n) {
                    return Err(corrupt(
                        block,
                        "the inner tree does not name this segment".into(),
                    ));
                }
            }
            let buffer = self.read_buffer(&meta)?;
            let data_at = (1 + bb) as usize * bs;
            let data = decode_records(
                &span[data_at..],
                meta.n as usize,
                self.ps(),
                bs,
                block + 1 + bb,
                self.file(),
            )?;
            let buffered = buffer.len();
            let all = buffer.merge_over(&data, self.ps());
            if all.len() != buffered + data.len() {
                return Err(corrupt(
                    block,
                    "a key is in both the buffer and the data".into(),
                ));
            }
            if let (Some(p), Some(&first)) = (previous, all.keys.first()) {
                if first <= p || (!meta.extra && first < meta.lo) {
                    return Err(corrupt(
                        block,
                        "keys do not ascend along the segments".into(),
                    ));
                }
            }
            previous = all.keys.last().copied().or(previous);
            live += all.dead.iter().filter(|d| !**d).count() as u64;
            segments += 1;
            if segments as u64 > self.header.segments + 1 {
                return Err(corrupt(block, "the sibling chain has a cycle".into()));
            }
            (left, left_n, block) = (block, meta.n, meta.right);
            if block != NONE && meta.right_n != self.read_meta(block)?.n {
                return Err(corrupt(block, "a sibling's count disagrees".into()));
            }
        }
        if segments - 1 != entries.len() || live != self.header.len {
            return Err(corrupt(
                0,
                format!(
                    "{} segments and {live} entries found, the header says {} and {}",
                    segments - 1,
                    self.header.segments,
                    self.header.len
                ),
            ));
        }
        Ok(live)
    }

    /// The build parameters the file records, with the resident levels it is open with.
    pub fn params(&self) -> DiskFitingParams {
        self.header.params
    }

    /// Segments (the extra buffer not counted).
    pub fn segments(&self) -> u64 {
        self.header.segments
    }

    /// Height of the inner B+-tree (levels including its leaves).
    pub fn inner_height(&self) -> u32 {
        self.inner.height()
    }

    fn ps(&self) -> usize {
        self.header.params.payload_size
    }

    fn per(&self) -> usize {
        self.header.per_block()
    }

    fn file(&self) -> &str {
        self.device.name()
    }

    fn data_first(&self, meta_block: u64) -> u64 {
        meta_block + 1 + self.header.buffer_blocks()
    }

    /// The segment `key` routes to, through the inner tree.
    fn locate(&self, key: u64) -> Result<Target> {
        if let Some(entries) = &self.memory {
            let i = entries.partition_point(|(lo, _)| *lo <= key);
            return Ok(match i.checked_sub(1) {
                None => Target::Extra,
                Some(i) => Target::Segment {
                    lo: entries[i].0,
                    seg: entries[i].1,
                },
            });
        }
        let mut payload = [0u8; SEGREF_BYTES];
        Ok(match self.inner.lower_bound(&!key, &mut payload)? {
            None => Target::Extra,
            Some(inverted) => Target::Segment {
                lo: !inverted,
                seg: decode_segref(&payload, &self.header, self.file())?,
            },
        })
    }

    /// Reads `count` records from block `first` on (whole blocks, one request).
    fn read_records(&self, first: u64, count: usize) -> Result<Run> {
        if count == 0 {
            return Ok(Run::default());
        }
        let bs = self.device.block_size();
        let mut bytes = AlignedBuf::zeroed(count.div_ceil(self.per()) * bs);
        self.device.read_blocks(first, &mut bytes, IoClass::Leaf)?;
        decode_records(&bytes, count, self.ps(), bs, first, self.file())
    }

    /// The data blocks that hold the model's window for `key` (paper 003 Table 2: `2 eps / B`
    /// blocks), read in one request.
    fn window(&self, seg: &SegRef, key: u64) -> Result<Chunk> {
        if seg.n == 0 {
            return Ok(Chunk {
                first: 0,
                run: Run::default(),
            });
        }
        let n = seg.n as usize;
        let w = ApproxPos::from_prediction(seg.model.predict(key), self.header.params.eps, n);
        let per = self.per();
        let (b0, b1) = (w.lo.min(n - 1) / per, w.hi.max(w.lo).min(n - 1) / per);
        let first = b0 * per;
        let count = ((b1 + 1) * per).min(n) - first;
        Ok(Chunk {
            first: first as u64,
            run: self.read_records(self.data_first(seg.block) + b0 as u64, count)?,
        })
    }

    fn read_meta(&self, block: u64) -> Result<Meta> {
        let mut buf = AlignedBuf::zeroed(self.device.block_size());
        self.device.read_blocks(block, &mut buf, IoClass::Leaf)?;
        decode_meta(
            &buf[..self.device.payload_size()],
            block,
            &self.header,
            self.file(),
        )
    }

    fn read_buffer(&self, meta: &Meta) -> Result<Run> {
        self.read_records(meta.block + 1, meta.buffered as usize)
    }

    fn write_meta(&self, meta: &Meta) -> Result<()> {
        let mut buf = AlignedBuf::zeroed(self.device.block_size());
        meta.encode(&mut buf[..self.device.payload_size()]);
        self.device
            .write_blocks(meta.block, &mut buf, IoClass::Leaf)
    }

    /// Writes a meta block and the buffer blocks after it in one request.
    fn write_meta_buffer(&self, meta: &Meta, buffer: &Run) -> Result<()> {
        let bs = self.device.block_size();
        let used = buffer.len().div_ceil(self.per());
        let mut buf = AlignedBuf::zeroed((1 + used) * bs);
        meta.encode(&mut buf[..self.device.payload_size()]);
        encode_records(buffer, self.ps(), bs, &mut buf[bs..]);
        self.device
            .write_blocks(meta.block, &mut buf, IoClass::Leaf)
    }

    /// Rewrites the data block holding record `i` of `chunk` (segment `seg`).
    fn write_data_block(&self, seg: &SegRef, chunk: &Chunk, i: usize) -> Result<()> {
        let per = self.per();
        let j = (chunk.first as usize + i) / per;
        let a = j * per - chunk.first as usize;
        let b = (a + per).min(chunk.run.len());
        let bs = self.device.block_size();
        let mut buf = AlignedBuf::zeroed(bs);
        encode_records(&chunk.run.slice(a, b, self.ps()), self.ps(), bs, &mut buf);
        self.device.write_blocks(
            self.data_first(seg.block) + j as u64,
            &mut buf,
            IoClass::Leaf,
        )
    }

    fn check_payload_buf(&self, len: usize) -> Result<()> {
        if len < self.ps() {
            return Err(Error::InvalidParameter {
                name: "payload buffer",
                value: format!("{len} bytes for {}-byte payloads", self.ps()),
                expected: "a buffer of at least payload_size() bytes",
            });
        }
        Ok(())
    }

    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly { op })
        }
    }

    /// The meta block of `target`'s segment (or the extra buffer).
    fn meta_of(&self, target: &Target) -> Result<Meta> {
        let block = match target {
            Target::Extra => self.header.extra,
            Target::Segment { seg, .. } => seg.block,
        };
        let meta = self.read_meta(block)?;
        if let Target::Segment { lo, seg } = target {
            if meta.extra || meta.n != seg.n || meta.lo != *lo {
                return Err(Error::Corrupt {
                    file: self.file().to_string(),
                    block: Some(block),
                    what: format!(
                        "segment of {} records from key {}, the inner tree says {} from {lo}",
                        meta.n, meta.lo, seg.n
                    ),
                });
            }
        }
        Ok(meta)
    }

    /// Replaces the segment (or empties the extra buffer) whose buffer is full: its live data,
    /// its buffer and the new record are cut into new segments appended to the file, which the
    /// inner tree then names, then the neighbours' sibling links are turned to them (module
    /// docs: the order and what a crash leaves).
    fn resegment(
        &mut self,
        target: Target,
        meta: Meta,
        buffer: Run,
        key: u64,
        payload: &[u8],
        clock: &mut PhaseClock,
    ) -> Result<()> {
        let ps = self.ps();
        let per = self.per();
        let bs = self.device.block_size();
        let mut records = match &target {
            Target::Extra => buffer,
            Target::Segment { seg, .. } => {
                let data = self.read_records(self.data_first(seg.block), seg.n as usize)?;
                let mut live = Run::default();
                for i in 0..data.len() {
                    if !data.dead[i] {
                        live.push(data.keys[i], false, data.payload(i, ps), self.file())?;
                    }
                }
                buffer.merge_over(&live, ps)
            }
        };
        let at = records.find(key);
        records.put(at, key, false, payload, ps);
        let first_lo = match target {
            Target::Extra => records.keys[0],
            Target::Segment { lo, .. } => lo,
        };
        let pieces = cut(&records.keys, self.header.params.eps, first_lo)?;
        let bb = self.header.buffer_blocks();
        let mut starts = Vec::with_capacity(pieces.len());
        let mut next = self.header.blocks;
        for p in &pieces {
            starts.push(next);
            next += 1 + bb + ((p.to - p.from) as u64).div_ceil(per as u64);
        }
        let (left, left_n, right, right_n) = match target {
            Target::Extra => (meta.block, 0, meta.right, meta.right_n),
            Target::Segment { .. } => (meta.left, meta.left_n, meta.right, meta.right_n),
        };
        let count = |i: usize| (pieces[i].to - pieces[i].from) as u64;
        let k = pieces.len();
        let usable = bs - crate::io::BLOCK_TRAILER;
        let mut batch = BlockBatch::new(bs, self.header.blocks, IoClass::Leaf);
        for (i, p) in pieces.iter().enumerate() {
            Meta {
                block: starts[i],
                lo: p.lo,
                extra: false,
                buffered: 0,
                n: count(i),
                left: if i == 0 { left } else { starts[i - 1] },
                right: if i + 1 == k { right } else { starts[i + 1] },
                left_n: if i == 0 { left_n } else { count(i - 1) },
                right_n: if i + 1 == k { right_n } else { count(i + 1) },
            }
            .encode(&mut batch.block(self.device.as_ref())?[..usable]);
            for _ in 0..bb {
                batch.block(self.device.as_ref())?;
            }
            for a in (p.from..p.to).step_by(per) {
                let b = (a + per).min(p.to);
                encode_records(
                    &records.slice(a, b, ps),
                    ps,
                    bs,
                    batch.block(self.device.as_ref())?,
                );
            }
        }
        batch.flush(self.device.as_ref())?;
        drop(batch);
        let added = next - self.header.blocks;
        self.header.blocks = next;
        self.header.live_blocks += added;
        let mut bytes = [0u8; SEGREF_BYTES];
        for (i, p) in pieces.iter().enumerate() {
            SegRef {
                block: starts[i],
                n: count(i),
                model: p.model,
            }
            .encode(&mut bytes);
            self.inner.insert(!p.lo, &bytes)?;
            if let Some(entries) = &mut self.memory {
                let entry = (
                    p.lo,
                    SegRef {
                        block: starts[i],
                        n: count(i),
                        model: p.model,
                    },
                );
                match entries.binary_search_by_key(&p.lo, |e| e.0) {
                    Ok(at) => entries[at] = entry,
                    Err(at) => entries.insert(at, entry),
                }
            }
        }
        match target {
            Target::Extra => self.header.segments += k as u64,
            Target::Segment { .. } => {
                self.header.segments += k as u64 - 1;
                self.header.live_blocks -= meta.span(&self.header);
            }
        }
        self.dirty = true;
        self.timing.smo_ns += clock.lap();
        let mut left_meta = if left == meta.block {
            Meta {
                buffered: 0,
                ..meta
            }
        } else {
            self.read_meta(left)?
        };
        left_meta.right = starts[0];
        left_meta.right_n = count(0);
        self.write_meta(&left_meta)?;
        if right != NONE {
            let mut right_meta = self.read_meta(right)?;
            right_meta.left = starts[k - 1];
            right_meta.left_n = count(k - 1);
            self.write_meta(&right_meta)?;
        }
        self.timing.maintenance_ns += clock.lap();
        Ok(())
    }
}

impl DiskIndex<u64> for DiskFiting {
    fn len(&self) -> u64 {
        self.header.len
    }

    fn keys_fingerprint(&self) -> u64 {
        self.header.keys_fingerprint
    }

    fn payload_size(&self) -> usize {
        self.ps()
    }

    /// The inner tree's descent, the window's data blocks, and only when the data do not hold
    /// the key, the segment's meta block and its used buffer blocks.
    fn get(&self, key: &u64, payload: &mut [u8]) -> Result<bool> {
        self.check_payload_buf(payload.len())?;
        let ps = self.ps();
        let target = self.locate(*key)?;
        if let Target::Segment { seg, .. } = &target {
            let chunk = self.window(seg, *key)?;
            if let Ok(i) = chunk.run.find(*key) {
                if chunk.run.dead[i] {
                    return Ok(false);
                }
                payload[..ps].copy_from_slice(chunk.run.payload(i, ps));
                return Ok(true);
            }
        }
        let meta = self.meta_of(&target)?;
        let buffer = self.read_buffer(&meta)?;
        match buffer.find(*key) {
            Ok(i) => {
                payload[..ps].copy_from_slice(buffer.payload(i, ps));
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// From `start`'s segment along the right-sibling links: each segment's data (from the
    /// window's blocks, then in requests of up to 64 blocks) merged with its buffer, skipping
    /// tombstones; each next segment costs its meta block and buffer blocks.
    fn scan(
        &self,
        start: &u64,
        limit: usize,
        keys: &mut Vec<u64>,
        payloads: &mut Vec<u8>,
    ) -> Result<usize> {
        if limit == 0 {
            return Ok(0);
        }
        let ps = self.ps();
        let per = self.per();
        let target = self.locate(*start)?;
        let mut meta = self.meta_of(&target)?;
        let mut buffer = self.read_buffer(&meta)?;
        let mut bpos = buffer.find(*start).unwrap_or_else(|i| i);
        let (mut chunk, mut dpos) = match &target {
            Target::Segment { seg, .. } => {
                let chunk = self.window(seg, *start)?;
                let at = chunk.first + chunk.run.find(*start).unwrap_or_else(|i| i) as u64;
                (chunk, at)
            }
            Target::Extra => (
                Chunk {
                    first: 0,
                    run: Run::default(),
                },
                0,
            ),
        };
        let mut n = 0;
        let mut previous: Option<u64> = None;
        let mut hops = 0u64;
        loop {
            while n < limit {
                let in_chunk = dpos.checked_sub(chunk.first).map(|i| i as usize);
                if dpos < meta.n && in_chunk.is_none_or(|i| i >= chunk.run.len()) {
                    let b0 = dpos as usize / per;
                    let want = (limit - n).div_ceil(per) + 1;
                    let blocks = want.min(SCAN_CHUNK_BLOCKS);
                    let first = b0 * per;
                    let count = ((b0 + blocks) * per).min(meta.n as usize) - first;
                    chunk = Chunk {
                        first: first as u64,
                        run: self.read_records(self.data_first(meta.block) + b0 as u64, count)?,
                    };
                }
                let data = (dpos < meta.n).then(|| (dpos - chunk.first) as usize);
                let from_data = match (data, bpos < buffer.len()) {
                    (None, false) => break,
                    (Some(_), false) => true,
                    (None, true) => false,
                    (Some(i), true) => chunk.run.keys[i] < buffer.keys[bpos],
                };
                let (key, dead, p) = if from_data {
                    let i = data.expect("data left");
                    dpos += 1;
                    (
                        chunk.run.keys[i],
                        chunk.run.dead[i],
                        chunk.run.payload(i, ps),
                    )
                } else {
                    bpos += 1;
                    (buffer.keys[bpos - 1], false, buffer.payload(bpos - 1, ps))
                };
                if previous.is_some_and(|p| p >= key) {
                    return Err(Error::Corrupt {
                        file: self.file().to_string(),
                        block: Some(meta.block),
                        what: "keys do not ascend along the segments".to_string(),
                    });
                }
                previous = Some(key);
                if !dead {
                    keys.push(key);
                    payloads.extend_from_slice(p);
                    n += 1;
                }
            }
            if n == limit || meta.right == NONE {
                return Ok(n);
            }
            hops += 1;
            if hops > self.header.segments {
                return Err(Error::Corrupt {
                    file: self.file().to_string(),
                    block: Some(meta.right),
                    what: "the sibling chain is longer than the segments: it has a cycle"
                        .to_string(),
                });
            }
            let right_n = meta.right_n;
            meta = self.read_meta(meta.right)?;
            if meta.n != right_n || meta.extra {
                return Err(Error::Corrupt {
                    file: self.file().to_string(),
                    block: Some(meta.block),
                    what: format!(
                        "segment of {} records, its left sibling says {right_n}",
                        meta.n
                    ),
                });
            }
            buffer = self.read_buffer(&meta)?;
            bpos = 0;
            dpos = 0;
            chunk = Chunk {
                first: 0,
                run: Run::default(),
            };
        }
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.inner.memory_bytes()
            + self
                .memory
                .as_ref()
                .map_or(0, |m| m.capacity() * std::mem::size_of::<(u64, SegRef)>())
    }

    fn disk_bytes(&self) -> u64 {
        self.device.len_blocks() * self.device.block_size() as u64 + self.inner.disk_bytes()
    }

    /// Used: the header, the extra buffer and the live segments, and the inner tree's used
    /// blocks; segments replaced by resegmentations are neither used nor free (never reused).
    fn storage_bytes(&self) -> StorageBytes {
        let inner = self.inner.storage_bytes();
        StorageBytes {
            allocated: self.disk_bytes(),
            used: self.header.live_blocks * u64::from(self.header.block_size) + inner.used,
            free: inner.free,
        }
    }

    fn describe(&self) -> String {
        let p = &self.header.params;
        format!(
            "disk FITing-tree (eps {}, buffer {}, {} segments, inner height {}, resident {:?}, \
             {}-byte payloads, {})",
            p.eps,
            p.buffer,
            self.header.segments,
            self.inner.height(),
            p.resident,
            p.payload_size,
            self.device.describe()
        )
    }
}

impl DiskMap<u64> for DiskFiting {
    /// Paper 003 Table 2: the descent (`log_B P`), the data window, and for a new key the
    /// segment's meta block and buffer, rewritten with the key (the "extra block to update the
    /// current item count", §6.1.3); a key already in the data is updated in its block.
    fn insert(&mut self, key: u64, payload: &[u8]) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("insert")?;
        if payload.len() != self.ps() {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly payload_size() bytes",
            });
        }
        let ps = self.ps();
        let target = self.locate(key)?;
        if let Target::Segment { seg, .. } = &target {
            let mut chunk = self.window(seg, key)?;
            if let Ok(i) = chunk.run.find(key) {
                let replaced = !chunk.run.dead[i];
                self.timing.search_ns += clock.lap();
                chunk.run.put(Ok(i), key, false, payload, ps);
                self.write_data_block(seg, &chunk, i)?;
                if !replaced {
                    self.header.len += 1;
                    self.dirty = true;
                }
                self.timing.insert_ns += clock.lap();
                return Ok(replaced);
            }
        }
        let mut meta = self.meta_of(&target)?;
        let mut buffer = self.read_buffer(&meta)?;
        self.timing.search_ns += clock.lap();
        let at = buffer.find(key);
        if at.is_ok() || (meta.buffered as usize) < self.header.params.buffer {
            let replaced = at.is_ok();
            buffer.put(at, key, false, payload, ps);
            meta.buffered = buffer.len() as u32;
            self.write_meta_buffer(&meta, &buffer)?;
            if !replaced {
                self.header.len += 1;
                self.dirty = true;
            }
            self.timing.insert_ns += clock.lap();
            return Ok(replaced);
        }
        self.header.len += 1;
        self.dirty = true;
        self.resegment(target, meta, buffer, key, payload, &mut clock)?;
        Ok(false)
    }

    /// A key in the data gets a tombstone in its block; one in the buffer is removed from it.
    fn delete(&mut self, key: &u64) -> Result<bool> {
        let mut clock = PhaseClock::start();
        self.check_writable("delete")?;
        let ps = self.ps();
        let target = self.locate(*key)?;
        if let Target::Segment { seg, .. } = &target {
            let mut chunk = self.window(seg, *key)?;
            if let Ok(i) = chunk.run.find(*key) {
                self.timing.search_ns += clock.lap();
                if chunk.run.dead[i] {
                    return Ok(false);
                }
                chunk.run.put(Ok(i), *key, true, &vec![0u8; ps], ps);
                self.write_data_block(seg, &chunk, i)?;
                self.header.len -= 1;
                self.dirty = true;
                self.timing.insert_ns += clock.lap();
                return Ok(true);
            }
        }
        let mut meta = self.meta_of(&target)?;
        let mut buffer = self.read_buffer(&meta)?;
        self.timing.search_ns += clock.lap();
        let Ok(i) = buffer.find(*key) else {
            return Ok(false);
        };
        buffer.remove(i, ps);
        meta.buffered = buffer.len() as u32;
        self.write_meta_buffer(&meta, &buffer)?;
        self.header.len -= 1;
        self.dirty = true;
        self.timing.insert_ns += clock.lap();
        Ok(true)
    }

    /// Syncs the segments, flushes the inner tree, then writes the header and syncs: after it
    /// returns, reopening gives the index as it is now. A no-op on a read-only index.
    fn flush(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        self.device.sync()?;
        self.inner.flush()?;
        let mut buf = AlignedBuf::zeroed(self.device.block_size());
        self.header.encode(&mut buf[..self.device.payload_size()]);
        self.device.write_blocks(0, &mut buf, IoClass::Header)?;
        self.device.sync()?;
        self.dirty = false;
        Ok(())
    }

    fn write_breakdown(&self) -> WriteBreakdown {
        self.timing
    }
}

impl std::fmt::Debug for DiskFiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskFiting")
            .field("file", &self.file())
            .field("header", &self.header)
            .field("writable", &self.writable)
            .finish()
    }
}

impl Drop for DiskFiting {
    /// Flushes what changed since the last flush; errors are lost here, so call
    /// [`DiskMap::flush`] to see them.
    fn drop(&mut self) {
        if self.dirty && self.writable {
            let _ = DiskMap::flush(self);
        }
    }
}
