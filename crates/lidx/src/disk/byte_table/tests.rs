//! The byte table against a `BTreeMap`, with each locator: keys of any length (the string
//! index over separators) and keys all of 8 bytes (separators as compressed `u64`s), values
//! from empty to several blocks; lookups of present and absent keys and of probes of other
//! lengths, cursors both ways between bounds of any length, and the full check.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::io::Storage;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn build(model: &Model) -> Arc<ByteTable> {
    Arc::new(write(&Storage::ram(), model))
}

/// `model` written as table `t` of `storage`.
fn write(storage: &Storage, model: &Model) -> ByteTable {
    let mut w = ByteTableWriter::create(storage, "t", ByteTableParams::default()).unwrap();
    for (k, v) in model {
        w.add(k, v).unwrap();
    }
    w.finish().unwrap()
}

fn agree(table: &Arc<ByteTable>, model: &Model, probes: &[Vec<u8>]) {
    assert_eq!(table.check().unwrap(), model.len() as u64);
    for p in probes.iter().chain(model.keys()) {
        assert_eq!(table.get(p).unwrap().as_ref(), model.get(p), "get {p:?}");
    }
    let bounds = |p: &Vec<u8>| [Bound::Included(p.clone()), Bound::Excluded(p.clone())];
    let mut pairs = vec![(Bound::Unbounded, Bound::Unbounded)];
    for a in probes {
        for b in probes {
            for s in bounds(a) {
                for e in bounds(b) {
                    pairs.push((s.clone(), e));
                }
            }
        }
        for s in bounds(a) {
            pairs.push((s.clone(), Bound::Unbounded));
            pairs.push((Bound::Unbounded, s));
        }
    }
    for (start, end) in pairs {
        let empty = match (&start, &end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
            _ => false,
        };
        if empty {
            continue;
        }
        for forward in [true, false] {
            let mut c = table.cursor(start.clone(), end.clone(), forward);
            let mut got = Vec::new();
            while let Some((k, v)) = c.next_record().unwrap() {
                got.push((k, v));
            }
            let mut want: Vec<_> = model
                .range::<Vec<u8>, _>((start.as_ref(), end.as_ref()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !forward {
                want.reverse();
            }
            assert_eq!(got, want, "{start:?}..{end:?} forward {forward}");
        }
    }
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        10 => prop::collection::vec(any::<u8>(), 0..24),
        1 => (any::<u8>(), 4000usize..12000).prop_map(|(b, n)| vec![b; n]),
    ]
}

fn probe() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xff]), 1..12),
        any::<u64>().prop_map(|k| (k >> 40).to_be_bytes().to_vec()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    #[test]
    fn fixed_8_byte_keys_agree_with_a_map(
        keys in prop::collection::btree_map(any::<u64>().prop_map(|k| k >> 40), value(), 0..3000),
        probes in prop::collection::vec(probe(), 1..5),
    ) {
        let model: Model = keys.into_iter().map(|(k, v)| (k.to_be_bytes().to_vec(), v)).collect();
        let table = build(&model);
        let fixed = model.is_empty() || table.header().key_lens == (8, 8);
        prop_assert!(fixed);
        agree(&table, &model, &probes);
    }

    #[test]
    fn keys_of_any_length_agree_with_a_map(
        model in prop::collection::btree_map(
            prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xff]), 1..12),
            value(),
            0..1500,
        ),
        probes in prop::collection::vec(probe(), 1..5),
    ) {
        let table = build(&model);
        agree(&table, &model, &probes);
    }
}

#[test]
fn eight_byte_keys_take_a_few_bytes_of_memory_per_block() {
    let model: Model = (0..200_000u64)
        .map(|i| ((i * 7919) << 8).to_be_bytes().to_vec())
        .map(|k| (k, vec![1u8; 8]))
        .collect();
    let table = build(&model);
    let blocks = table.header().data_blocks as usize;
    assert!(
        table.memory_bytes() < 4 * blocks,
        "{} bytes for {blocks} blocks",
        table.memory_bytes()
    );
    agree(
        &table,
        &model,
        &[vec![0, 0, 1], 7919u64.to_be_bytes().to_vec()],
    );
}

#[test]
fn a_record_that_fits_a_block_is_read_in_one_block() {
    // 1000-byte values: four records to a 4 KiB block, so without padding one in four would
    // straddle a boundary and take two blocks to read.
    let model: Model = (0..2_000u64)
        .map(|i| ((i * 7919) << 8).to_be_bytes().to_vec())
        .map(|k| (k.clone(), k.repeat(125)))
        .collect();
    let storage = Storage::ram();
    let mut w = ByteTableWriter::create(&storage, "t", ByteTableParams::default()).unwrap();
    for (k, v) in &model {
        w.add(k, v).unwrap();
    }
    let table = Arc::new(w.finish().unwrap());
    assert_eq!(table.header().version, BYTE_TABLE_VERSION);
    let before = storage.stats().read_blocks;
    for (k, v) in &model {
        assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
    }
    assert_eq!(storage.stats().read_blocks - before, model.len() as u64);
    agree(&table, &model, &[vec![0, 0, 1], vec![0xff; 9]]);
}

#[test]
fn a_get_through_a_cache_visits_one_block_whether_read_in_place_or_streamed() {
    // 100-byte values are read in place in the cached block; 300-byte ones (two-byte lengths)
    // go through the stream, which must take the block the first look loaded, not visit it
    // again. Absent keys between and past the records too.
    for value_len in [100usize, 300] {
        let model: Model = (0..3_000u64)
            .map(|i| ((i * 7919) << 8).to_be_bytes().to_vec())
            .map(|k| (k.clone(), k.repeat(value_len / 8)))
            .collect();
        let storage = Storage::ram().with_shared_cache(1 << 12);
        let mut w = ByteTableWriter::create(&storage, "t", ByteTableParams::default()).unwrap();
        for (k, v) in &model {
            w.add(k, v).unwrap();
        }
        let table = Arc::new(w.finish().unwrap());
        let visits = |s: crate::io::IoStats| s.cache_hits + s.cache_misses;
        let before = visits(storage.stats());
        for _ in 0..2 {
            for (k, v) in &model {
                assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
                let mut absent = k.clone();
                absent.push(0);
                assert_eq!(table.get(&absent).unwrap(), None);
            }
        }
        assert_eq!(
            visits(storage.stats()) - before,
            4 * model.len() as u64,
            "{value_len}-byte values"
        );
    }
}

#[test]
fn a_merge_stream_that_ends_before_the_header_says_is_corrupt() {
    //! A zero at a record's start reads as padding from version 2 on; written with a valid
    //! checksum it would hide the rest of the block, and a merge streaming the table would
    //! drop those records without a word. The merge stream counts against the header.
    let model: Model = (0..3_000u64)
        .map(|i| (i.to_be_bytes().to_vec(), vec![7u8; 8]))
        .collect();
    let storage = Storage::ram();
    let mut w = ByteTableWriter::create(&storage, "t", ByteTableParams::default()).unwrap();
    for (k, v) in &model {
        w.add(k, v).unwrap();
    }
    drop(w.finish().unwrap());
    let device = storage.open("t", true).unwrap();
    let mut block = vec![0u8; device.block_size()];
    device
        .read_blocks(2, &mut block, crate::io::IoClass::Data)
        .unwrap();
    let first = usize::from(u16::from_le_bytes([block[0], block[1]]));
    block[2 + first] = 0;
    device
        .write_blocks(2, &mut block, crate::io::IoClass::Data)
        .unwrap();
    let table = Arc::new(ByteTable::open(&storage, "t").unwrap());
    let mut stream = table.merge_records();
    let mut read = 0;
    let err = loop {
        match stream.next_record() {
            Ok(Some(_)) => read += 1,
            Ok(None) => panic!("the stream ended quietly after {read} records"),
            Err(e) => break e,
        }
    };
    assert!(read < model.len());
    assert!(matches!(err, crate::Error::Corrupt { .. }), "{err}");
}

#[test]
fn a_run_with_a_key_filter_reads_back_as_written() {
    // 20,000 keys at 10 bits: a filter of 25 KB across blocks whose payloads are not a whole
    // number of words, read back from the file rather than kept from the writer.
    let storage = Storage::ram();
    let w = ByteTableWriter::create(&storage, "run", ByteTableParams::default()).unwrap();
    let mut w = w
        .of_kind(ByteTableKind::Run)
        .with_filter(20_000, 10)
        .unwrap();
    let keys: Vec<[u8; 8]> = (0..20_000u64).map(|i| (i * 3).to_be_bytes()).collect();
    for k in &keys {
        w.add(k, &[0, 7]).unwrap();
    }
    let written = w.finish().unwrap();
    let table = ByteTable::open(&storage, "run").unwrap();
    assert_eq!(table.header(), written.header());
    assert_eq!(table.header().kind, ByteTableKind::Run);
    assert!(table.header().filter_blocks() > 1);
    assert_eq!(table.check().unwrap(), 20_000);
    assert!(keys.iter().all(|k| table.may_contain(k)));
    let absent = (0..20_000u64)
        .map(|i| (i * 3 + 1).to_be_bytes())
        .filter(|k| table.may_contain(k))
        .count();
    assert!(absent < 400, "{absent} false positives of 20,000");
    assert!(table.filter_bytes() >= 25_000);
    // More than 64 bits a key is refused.
    assert!(
        ByteTableWriter::create(&storage, "x", ByteTableParams::default())
            .unwrap()
            .with_filter(10, 65)
            .is_err()
    );
}

#[test]
fn a_filter_sized_for_far_more_records_than_written_is_dropped() {
    // A merge that read 100,000 records and kept 10: a filter of 15,625 words for 10 keys
    // would pass 512 bits a record, so the table is written without one, and reads the same.
    let storage = Storage::ram();
    let w = ByteTableWriter::create(&storage, "run", ByteTableParams::default()).unwrap();
    let mut w = w
        .of_kind(ByteTableKind::Run)
        .with_filter(100_000, 10)
        .unwrap();
    for i in 0..10u64 {
        w.add(&i.to_be_bytes(), &[0]).unwrap();
    }
    w.finish().unwrap();
    let table = ByteTable::open(&storage, "run").unwrap();
    assert_eq!(table.header().filter, None);
    assert_eq!(table.check().unwrap(), 10);
    assert!(table.may_contain(&99u64.to_be_bytes()));
    assert_eq!(table.get(&3u64.to_be_bytes()).unwrap(), Some(vec![0]));
}

/// How many of the table's data blocks carry a point index, of how many.
fn indexed_blocks(storage: &Storage, table: &ByteTable) -> (u64, u64) {
    let device = storage.open("t", false).unwrap();
    let mut block = vec![0u8; device.block_size()];
    let cap = format::stream_cap(storage.block_size(), table.header().version);
    let mut indexed = 0;
    for b in 1..=table.header().data_blocks {
        device
            .read_blocks(b, &mut block, crate::io::IoClass::Data)
            .unwrap();
        indexed += u64::from(slots::buckets(&block[format::BLOCK_PREFIX..], cap) > 0);
    }
    (indexed, table.header().data_blocks)
}

#[test]
fn blocks_of_records_of_about_40_bytes_or_more_carry_a_point_index() {
    // 100-byte values: every block has one. 8-byte values (18-byte records): an index would
    // take over a tenth of a full block, so only the last block, partly filled, may have one.
    // Values of 500 to 5,000 bytes: blocks whose last record runs on have none, the others do.
    // (0 stands for the values of 500 to 5,000 bytes.)
    for shape in [100usize, 8, 0] {
        let len = |i: u64| match shape {
            0 => 500 + (i as usize * 7919) % 4_500,
            fixed => fixed,
        };
        let model: Model = (0..3_000u64)
            .map(|i| {
                (
                    ((i * 7919) << 8).to_be_bytes().to_vec(),
                    vec![i as u8; len(i)],
                )
            })
            .collect();
        let storage = Storage::ram();
        let table = Arc::new(write(&storage, &model));
        let (indexed, blocks) = indexed_blocks(&storage, &table);
        match shape {
            100 => assert_eq!(indexed, blocks),
            8 => assert!(indexed <= 1, "{indexed} of {blocks}"),
            _ => assert!(
                indexed > blocks / 4 && indexed < blocks,
                "{indexed} of {blocks}"
            ),
        }
        agree(&table, &model, &[vec![0, 0, 1], vec![0xff; 9]]);
    }
}

#[test]
fn a_point_index_that_disagrees_with_its_block_is_corrupt() {
    // A fingerprint changed under a valid checksum: a lookup through it would miss its key, so
    // the check must say so, naming the block.
    let model: Model = (0..500u64)
        .map(|i| (i.to_be_bytes().to_vec(), vec![1u8; 100]))
        .collect();
    let storage = Storage::ram();
    let table = write(&storage, &model);
    let cap = format::stream_cap(storage.block_size(), table.header().version);
    assert_eq!(table.check().unwrap(), 500);
    let device = storage.open("t", true).unwrap();
    let mut block = vec![0u8; device.block_size()];
    device
        .read_blocks(3, &mut block, crate::io::IoClass::Data)
        .unwrap();
    let payload = &mut block[format::BLOCK_PREFIX..];
    let n = slots::buckets(payload, cap);
    let base = cap - 3 * n;
    let used = (0..n)
        .find(|i| payload[base + 3 * i..base + 3 * i + 2] != [0xFF, 0xFF])
        .unwrap();
    payload[base + 3 * used + 2] ^= 0x5A;
    device
        .write_blocks(3, &mut block, crate::io::IoClass::Data)
        .unwrap();
    let table = ByteTable::open(&storage, "t").unwrap();
    let err = table.check().unwrap_err();
    assert!(
        matches!(err, crate::Error::Corrupt { block: Some(3), .. }),
        "{err}"
    );
}

#[test]
fn random_8_byte_keys_keep_plain_separators_and_smooth_ones_compress() {
    // Random keys: the compressed separators would save under a quarter, so they stay a
    // plain array, 8 bytes each. Evenly spread keys compress to a few bytes a block.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Model = (0..50_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x.to_be_bytes().to_vec(), vec![3u8; 100])
        })
        .collect();
    let smooth: Model = (0..50_000u64)
        .map(|i| ((i * 7919) << 20).to_be_bytes().to_vec())
        .map(|k| (k, vec![3u8; 100]))
        .collect();
    for (model, plain) in [(random, true), (smooth, false)] {
        let table = build(&model);
        assert_eq!(table.header().key_lens, (8, 8));
        assert_eq!(table.plain_separators(), plain);
        let blocks = table.header().data_blocks as usize;
        assert!(
            table.memory_bytes() < 12 * blocks,
            "{}",
            table.memory_bytes()
        );
        let probes: Vec<Vec<u8>> = model
            .keys()
            .step_by(97)
            .flat_map(|k| {
                let v = u64::from_be_bytes(k[..8].try_into().unwrap());
                [v.wrapping_sub(1), v.wrapping_add(1)].map(|p| p.to_be_bytes().to_vec())
            })
            .take(40)
            .collect();
        agree(&table, &model, &probes);
    }
}
