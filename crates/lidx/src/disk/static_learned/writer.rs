//! [`StaticLearnedWriter`]: builds a static learned file from a stream of records, and
//! [`StaticLearned::build`], which builds one from a slice of keys through it.
//!
//! [`StaticLearned::build`] takes a slice of keys; a merge (paper 002 §9.1) produces its records
//! one at a time from the old static files and the frozen dynamic stage. The writer takes them
//! in key order, packs them into data blocks and writes the blocks in large sequential
//! requests as they fill, so the payloads are never held in memory. The model is fitted at the
//! end ([`StaticLearnedWriter::finish`]) on the keys it indexes ([`model_keys`]): every key at
//! item granularity, the first key of every group otherwise. Those keys are the only part of
//! the stream kept in memory (`K::SIZE` bytes per record at item granularity, per group at
//! coarser ones), because the models are fitted on a slice.
//!
//! A writer that is dropped without `finish` leaves a file without a valid header (block 0 is
//! written last), which `open` refuses; the caller removes it.
//!
//! [`model_keys`]: StaticLearnedWriter::model_keys

use std::marker::PhantomData;
use std::sync::Arc;

use crate::codec::{Encoder, KeysFingerprint};
use crate::disk::block_batch::BlockBatch;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, BlockDevice, IoClass, Storage};
use crate::key::{check_next, check_strictly_sorted, Key};
use crate::mem::persist::Persist;

use super::data_block::{encode_data_block, FIRST_DATA_BLOCK};
use super::header::Header;
use super::index::StaticLearned;
use super::params::{Granularity, StaticLearnedParams};

impl<K: Key, M: Persist<K>> StaticLearned<K, M> {
    /// Builds the index file `name` in `storage` from strictly increasing `keys`, entry `i`
    /// getting the payload `payload_of(i, &keys[i], out)` writes (`out.len()` is the payload
    /// size). `build_model` builds the model from the keys it must index: all keys at item
    /// granularity, the first key of every group otherwise, e.g.
    /// `|keys| Pgm::build(keys, PgmParams::new(64, 8))`.
    ///
    /// Errors: `OutOfOrder`, `DuplicateKey`, `InvalidKey` for bad keys; `InvalidParameter` for
    /// a payload that leaves no room for a record in a block, a mini-page of 0, or a model
    /// not built on the keys it was given; I/O errors.
    pub fn build(
        storage: &Storage,
        name: &str,
        keys: &[K],
        payload_of: impl Fn(usize, &K, &mut [u8]),
        params: StaticLearnedParams,
        build_model: impl FnOnce(&[K]) -> Result<M>,
    ) -> Result<Self> {
        check_strictly_sorted(keys)?;
        let payload_size = params.payload_size;
        let mut writer = StaticLearnedWriter::create(storage, name, params)?;
        let written = (|| {
            let mut payload = vec![0u8; payload_size];
            for (i, key) in keys.iter().enumerate() {
                payload_of(i, key, &mut payload);
                writer.push(*key, &payload)?;
            }
            let model = build_model(writer.model_keys())?;
            writer.finish(model)
        })();
        if written.is_err() {
            // The file has no valid header yet; a failed build leaves nothing behind.
            let _ = storage.remove(name);
        }
        written
    }
}

/// Writes a static learned file from records pushed in strictly increasing key order.
pub struct StaticLearnedWriter<K> {
    device: Arc<dyn BlockDevice>,
    params: StaticLearnedParams,
    per_block: usize,
    group: usize,
    batch: BlockBatch,
    block_keys: Vec<K>,
    block_payloads: Vec<u8>,
    model_keys: Vec<K>,
    last: Option<K>,
    len: usize,
    fingerprint: KeysFingerprint,
    _key: PhantomData<fn() -> K>,
}

impl<K: Key> StaticLearnedWriter<K> {
    /// Creates the file `name` in `storage` (replacing any file of that name).
    ///
    /// Errors: `InvalidParameter` for a payload that leaves no room for a record in a block, a
    /// mini-page of 0, or a model parameters text over 128 bytes; I/O errors.
    pub fn create(storage: &Storage, name: &str, params: StaticLearnedParams) -> Result<Self> {
        params.check_model_params()?;
        let block_size = storage.block_size();
        let per_block = params.records_per_block::<K>(block_size);
        if per_block == 0 || params.payload_size > u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "payload_size",
                value: params.payload_size.to_string(),
                expected: "small enough for one key and payload to fit in a block",
            });
        }
        if let Granularity::MiniPage(g) = params.granularity {
            if g == 0 || g > u32::MAX as usize {
                return Err(Error::InvalidParameter {
                    name: "granularity",
                    value: g.to_string(),
                    expected: "a mini-page of 1 to 2^32 - 1 records",
                });
            }
        }
        let device = storage.create(name)?;
        Ok(StaticLearnedWriter {
            device,
            per_block,
            group: params.granularity.group(per_block),
            batch: BlockBatch::new(block_size, FIRST_DATA_BLOCK, IoClass::Leaf),
            block_keys: Vec::with_capacity(per_block),
            block_payloads: Vec::with_capacity(per_block * params.payload_size),
            params,
            model_keys: Vec::new(),
            last: None,
            len: 0,
            fingerprint: KeysFingerprint::default(),
            _key: PhantomData,
        })
    }

    /// Appends a record. Errors: `OutOfOrder`, `DuplicateKey` or `InvalidKey` when `key` does
    /// not follow the previous key; `InvalidParameter` for a payload of another length than
    /// the params' payload size; I/O errors.
    pub fn push(&mut self, key: K, payload: &[u8]) -> Result<()> {
        check_next(self.len, self.last.as_ref(), &key, true)?;
        if payload.len() != self.params.payload_size {
            return Err(Error::InvalidParameter {
                name: "payload",
                value: format!("{} bytes", payload.len()),
                expected: "exactly the payload size the file was created with",
            });
        }
        if self.len.is_multiple_of(self.group) {
            self.model_keys.push(key);
        }
        self.last = Some(key);
        self.fingerprint.push(&key);
        self.block_keys.push(key);
        self.block_payloads.extend_from_slice(payload);
        self.len += 1;
        if self.block_keys.len() == self.per_block {
            self.seal_block()?;
        }
        Ok(())
    }

    /// Reserves room for the model keys of `records` more records, when the caller knows
    /// about how many will come (saves the copies of a growing vector).
    pub fn reserve(&mut self, records: usize) {
        self.model_keys.reserve(records.div_ceil(self.group));
    }

    /// Records pushed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The keys the model must be built on: all keys at item granularity, the first key of
    /// every group otherwise.
    pub fn model_keys(&self) -> &[K] {
        &self.model_keys
    }

    /// Records per data block.
    pub fn per_block(&self) -> usize {
        self.per_block
    }

    /// Writes the last data blocks, the model and the header, and syncs the file.
    ///
    /// Errors: `InvalidParameter` for a model not built on exactly [`Self::model_keys`]; I/O
    /// errors.
    pub fn finish<M: Persist<K>>(mut self, model: M) -> Result<StaticLearned<K, M>> {
        if model.len() != self.model_keys.len() {
            return Err(Error::InvalidParameter {
                name: "build_model",
                value: format!("a model of {} keys", model.len()),
                expected: "a model built on exactly the keys it is given",
            });
        }
        if !self.block_keys.is_empty() {
            self.seal_block()?;
        }
        self.batch.flush(self.device.as_ref())?;
        let mut encoder = Encoder::new();
        model.encode(&mut encoder);
        let model_image = encoder.into_bytes();
        let block_size = self.device.block_size();
        let block_payload = self.device.payload_size();
        let header = Header {
            key_size: K::SIZE as u32,
            key_name: K::NAME.to_string(),
            payload_size: self.params.payload_size as u32,
            block_size: block_size as u32,
            len: self.len as u64,
            per_block: self.per_block as u32,
            granularity: self.params.granularity,
            fetch: self.params.fetch,
            model_kind: M::KIND,
            data_blocks: self.batch.blocks(),
            model_bytes: model_image.len() as u64,
            model_params: std::mem::take(&mut self.params.model_params),
            keys_fingerprint: std::mem::take(&mut self.fingerprint).finish(),
        };
        let model_blocks = header.model_blocks() as usize;
        if model_blocks > 0 {
            let mut buf = AlignedBuf::zeroed(model_blocks * block_size);
            for (j, chunk) in model_image.chunks(block_payload).enumerate() {
                buf[j * block_size..j * block_size + chunk.len()].copy_from_slice(chunk);
            }
            self.device
                .write_blocks(header.model_first_block(), &mut buf, IoClass::Model)?;
        }
        let mut buf = AlignedBuf::zeroed(block_size);
        header.encode(&mut buf);
        self.device.write_blocks(0, &mut buf, IoClass::Header)?;
        self.device.sync()?;
        let fetch = header.fetch;
        Ok(StaticLearned::assemble(self.device, model, header, fetch))
    }

    /// Encodes the pending records as the next data block of the batch.
    fn seal_block(&mut self) -> Result<()> {
        let payload = self.device.payload_size();
        let out = &mut self.batch.block(self.device.as_ref())?[..payload];
        let ps = self.params.payload_size;
        let payloads = &self.block_payloads;
        encode_data_block(out, &self.block_keys, ps, |i, _, p| {
            p.copy_from_slice(&payloads[i * ps..(i + 1) * ps]);
        });
        self.block_keys.clear();
        self.block_payloads.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::static_learned::Fetch;
    use crate::disk::DiskIndex;
    use crate::io::SimProfile;
    use crate::mem::zone_map::{ZoneMap, ZoneMapParams};

    fn storage() -> Storage {
        Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
    }

    fn params(granularity: Granularity) -> StaticLearnedParams {
        StaticLearnedParams {
            payload_size: 8,
            granularity,
            fetch: Fetch::AllAtOnce,
            model_params: String::new(),
        }
    }

    #[test]
    fn refuses_out_of_order_duplicate_and_misfit_payload() {
        let s = storage();
        let mut w = StaticLearnedWriter::<u64>::create(&s, "w", params(Granularity::Item)).unwrap();
        w.push(5, &[0; 8]).unwrap();
        assert!(matches!(
            w.push(4, &[0; 8]),
            Err(Error::OutOfOrder { index: 1, .. })
        ));
        assert!(matches!(
            w.push(5, &[0; 8]),
            Err(Error::DuplicateKey { index: 1, .. })
        ));
        assert!(matches!(
            w.push(6, &[0; 7]),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn streamed_file_answers_like_the_records_pushed() {
        let s = storage();
        let keys: Vec<u64> = (0..3000u64).map(|i| i * 7 + 3).collect();
        let g = 16;
        let mut w =
            StaticLearnedWriter::<u64>::create(&s, "w", params(Granularity::MiniPage(g))).unwrap();
        for k in &keys {
            w.push(*k, &(k * 2).to_le_bytes()).unwrap();
        }
        let firsts: Vec<u64> = keys.iter().step_by(g).copied().collect();
        assert_eq!(w.model_keys(), &firsts[..]);
        let model = ZoneMap::build(w.model_keys(), ZoneMapParams::new(1)).unwrap();
        let index = w.finish(model).unwrap();
        assert_eq!(DiskIndex::len(&index), keys.len() as u64);
        let mut payload = [0u8; 8];
        for k in &keys {
            assert!(index.get(k, &mut payload).unwrap());
            assert_eq!(u64::from_le_bytes(payload), k * 2);
            assert!(!index.get(&(k + 1), &mut payload).unwrap());
        }
        let reopened = StaticLearned::<u64, ZoneMap<u64>>::open(&s, "w", None).unwrap();
        assert_eq!(DiskIndex::len(&reopened), keys.len() as u64);
    }

    #[test]
    fn the_build_parameters_are_recorded_and_exposed_on_open() {
        let s = storage();
        let built = StaticLearnedParams {
            model_params: "zonemap:per_block=1".to_string(),
            fetch: Fetch::OneByOne,
            ..params(Granularity::MiniPage(4))
        };
        let mut w = StaticLearnedWriter::<u64>::create(&s, "w", built.clone()).unwrap();
        for k in 0..100u64 {
            w.push(k, &[0; 8]).unwrap();
        }
        let model = ZoneMap::build(w.model_keys(), ZoneMapParams::new(1)).unwrap();
        assert_eq!(w.finish(model).unwrap().params(), &built);
        let reopened =
            StaticLearned::<u64, ZoneMap<u64>>::open(&s, "w", Some(Fetch::AllAtOnce)).unwrap();
        assert_eq!(
            reopened.params(),
            &built,
            "the recorded default fetch, not the one opened with"
        );
        let too_long = StaticLearnedParams {
            model_params: "x".repeat(129),
            ..built
        };
        assert!(matches!(
            StaticLearnedWriter::<u64>::create(&s, "w2", too_long),
            Err(Error::InvalidParameter {
                name: "model_params",
                ..
            })
        ));
    }

    #[test]
    fn a_model_of_other_keys_is_refused() {
        let s = storage();
        let mut w = StaticLearnedWriter::<u64>::create(&s, "w", params(Granularity::Item)).unwrap();
        for k in 0..10u64 {
            w.push(k, &[0; 8]).unwrap();
        }
        let model = ZoneMap::build(&[1u64, 2, 3], ZoneMapParams::new(1)).unwrap();
        assert!(matches!(
            w.finish(model),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
