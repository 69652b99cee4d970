//! The disk-resident static learned index against a sorted `Vec`: every model x granularity x
//! fetching strategy on small seeded datasets (u64 and 16-byte string keys), scans across block
//! boundaries, reopening, blocks read per lookup, and corrupt or truncated files.

mod common;

use common::TestKey;
use lidx::disk::DiskIndex;
use lidx::disk::{Fetch, Granularity, StaticLearned, StaticLearnedParams};
use lidx::io::{DeviceKind, SimProfile, Storage};
use lidx::mem::Persist;
use lidx::mem::{Decoder, Encoder};
use lidx::raw::disk::static_learned::read_kind;
use lidx::raw::io::checksum;
use lidx::{ApproxPos, Error, Key, StaticIndex, Str16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A test model: every `stride`-th key, binary-searched. Stride 1 is exact (a zone map over
/// the keys it is given); larger strides give windows of `stride` items, whose right end may
/// be the lower bound itself (a present key at `hi`), which exercises the boundary reads.
#[derive(Debug, Clone)]
struct Stride<K> {
    stride: usize,
    n: usize,
    samples: Vec<K>,
}

impl<K: Key> Stride<K> {
    fn build(keys: &[K], stride: usize) -> lidx::Result<Self> {
        lidx::raw::key::check_sorted(keys)?;
        Ok(Stride {
            stride,
            n: keys.len(),
            samples: keys.iter().step_by(stride).copied().collect(),
        })
    }
}

impl<K: Key> StaticIndex<K> for Stride<K> {
    fn search(&self, key: K) -> ApproxPos {
        let j = self.samples.partition_point(|s| s.key_lt(&key));
        let lo = if j == 0 { 0 } else { (j - 1) * self.stride + 1 };
        let hi = (j * self.stride).min(self.n);
        let lo = lo.min(hi);
        ApproxPos {
            pos: (lo + hi) / 2,
            lo,
            hi,
        }
    }
    fn len(&self) -> usize {
        self.n
    }
    fn size_in_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.samples.capacity() * std::mem::size_of::<K>()
    }
}

impl<K: Key> Persist<K> for Stride<K> {
    const KIND: u32 = 0xFFFF_0001;
    fn encode(&self, out: &mut Encoder) {
        out.usize(self.stride);
        out.usize(self.n);
        out.usize(self.samples.len());
        self.samples.iter().for_each(|k| out.key(k));
    }
    fn decode(input: &mut Decoder<'_>) -> lidx::Result<Self> {
        let stride = input.usize_at_most(1 << 40, "stride")?;
        let n = input.usize_at_most(1 << 48, "n")?;
        let count = input.count(K::SIZE, "samples")?;
        if stride == 0 || count != n.div_ceil(stride) {
            return Err(input.corrupt("sample count does not match n / stride"));
        }
        let samples = (0..count)
            .map(|_| input.key())
            .collect::<lidx::Result<Vec<K>>>()?;
        Ok(Stride { stride, n, samples })
    }
}

/// The same model under another kind, to open a file with the wrong model type.
struct Other<K>(Stride<K>);

impl<K: Key> StaticIndex<K> for Other<K> {
    fn search(&self, key: K) -> ApproxPos {
        self.0.search(key)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn size_in_bytes(&self) -> usize {
        self.0.size_in_bytes()
    }
}

impl<K: Key> Persist<K> for Other<K> {
    const KIND: u32 = 0xFFFF_0002;
    fn encode(&self, out: &mut Encoder) {
        self.0.encode(out)
    }
    fn decode(input: &mut Decoder<'_>) -> lidx::Result<Self> {
        Stride::decode(input).map(Other)
    }
}

fn payload_of<K>(i: usize, _key: &K, out: &mut [u8]) {
    let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (j, b) in out.iter_mut().enumerate() {
        *b = x.rotate_left(8 * j as u32) as u8 ^ j as u8;
    }
}

fn expected_payload(i: usize, size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    payload_of(i, &(), &mut out);
    out
}

fn unique_sorted<K: TestKey>(seeds: impl IntoIterator<Item = u64>) -> Vec<K> {
    let mut keys: Vec<K> = seeds.into_iter().map(K::from_seed).collect();
    keys.sort_by(|a, b| a.key_cmp(b));
    keys.dedup_by(|a, b| a.key_cmp(b).is_eq());
    keys
}

fn datasets<K: TestKey>() -> Vec<(&'static str, Vec<K>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5717);
    vec![
        ("empty", vec![]),
        ("one-zero", unique_sorted([0])),
        ("one-max", unique_sorted([u64::MAX])),
        ("zero-and-max", unique_sorted([0, u64::MAX])),
        // 620 = 20 blocks of 31 u64 records = 31 blocks of 20 string records (512-byte blocks).
        ("dense-block-multiple", unique_sorted(0..620)),
        (
            "dense-high",
            unique_sorted((0..700).map(|i| u64::MAX - 3 * i)),
        ),
        (
            "sparse-with-extremes",
            unique_sorted(
                (0..900)
                    .map(|_| rng.gen::<u64>())
                    .chain([0, 1, u64::MAX - 1, u64::MAX]),
            ),
        ),
    ]
}

fn probes<K: TestKey>(keys: &[K]) -> Vec<K> {
    let mut rng = ChaCha8Rng::seed_from_u64(keys.len() as u64);
    let mut out = keys.to_vec();
    out.extend([K::MIN, K::MAX]);
    out.extend([0, 1, 2, u64::MAX - 1, u64::MAX].map(K::from_seed));
    out.extend((0..100).map(|_| K::from_seed(rng.gen())));
    for k in keys.iter().step_by(2) {
        let m = k.to_model();
        out.push(K::from_seed(m.wrapping_add(1)));
        out.push(K::from_seed(m.wrapping_sub(1)));
    }
    out
}

fn small_blocks() -> Storage {
    Storage::in_memory(SimProfile::named("ram").unwrap(), 512).unwrap()
}

const FETCHES: [Fetch; 2] = [Fetch::AllAtOnce, Fetch::OneByOne];

/// Every lookup, get and scan of `index` against `keys`, with both strategies.
fn check_index<K: TestKey, M: Persist<K>>(what: &str, index: &StaticLearned<K, M>, keys: &[K]) {
    let ps = index.payload_size();
    assert_eq!(index.len(), keys.len() as u64, "{what}: len");
    for fetch in FETCHES {
        for (n, probe) in probes(keys).into_iter().enumerate() {
            let truth = keys.partition_point(|k| k.key_lt(&probe));
            let w = index.window(&probe);
            assert!(
                w.lo <= truth && truth <= w.hi && w.hi <= keys.len(),
                "{what}: window {w:?} misses {truth} for {probe:?}"
            );
            let got = index.lower_bound_with(&probe, fetch).unwrap();
            assert_eq!(
                got, truth as u64,
                "{what} {fetch:?}: lower_bound({probe:?})"
            );
            let mut payload = vec![0xAAu8; ps + 2];
            let present = keys.get(truth).is_some_and(|k| k.key_cmp(&probe).is_eq());
            let found = index.get_with(&probe, &mut payload, fetch).unwrap();
            assert_eq!(found, present, "{what} {fetch:?}: get({probe:?})");
            if present {
                assert_eq!(payload[..ps], expected_payload(truth, ps)[..], "{what}");
                assert_eq!(payload[ps..], [0xAA, 0xAA], "{what}: wrote past payload");
            }
            if n % 9 == 0 {
                for limit in [0, 1, 40, 100] {
                    let (mut ks, mut ps_out) = (Vec::new(), Vec::new());
                    let count = index
                        .scan_with(&probe, limit, &mut ks, &mut ps_out, fetch)
                        .unwrap();
                    let end = (truth + limit).min(keys.len());
                    assert_eq!(count, end - truth, "{what} {fetch:?}: scan count");
                    assert!(
                        ks.iter()
                            .zip(&keys[truth..end])
                            .all(|(a, b)| a.key_cmp(b).is_eq()),
                        "{what} {fetch:?}: scan keys from {probe:?}"
                    );
                    let want: Vec<u8> =
                        (truth..end).flat_map(|i| expected_payload(i, ps)).collect();
                    assert_eq!(ps_out, want, "{what} {fetch:?}: scan payloads");
                }
            }
        }
    }
}

fn granularities() -> [Granularity; 4] {
    [
        Granularity::Item,
        Granularity::MiniPage(1),
        Granularity::MiniPage(7),
        Granularity::Page,
    ]
}

fn run_matrix<K: TestKey, M: Persist<K>>(
    model: &str,
    build_model: impl Fn(&[K]) -> lidx::Result<M> + Copy,
) {
    for (set, keys) in datasets::<K>() {
        for granularity in granularities() {
            let what = format!("{model}/{}/{set}/{}", K::NAME, granularity.name());
            let storage = small_blocks();
            let params = StaticLearnedParams {
                granularity,
                ..StaticLearnedParams::default()
            };
            let index =
                StaticLearned::build(&storage, "sl", &keys, payload_of, params, build_model)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(index.disk_bytes(), storage.file_bytes("sl"), "{what}");
            assert_eq!(
                index.memory_bytes(),
                std::mem::size_of::<StaticLearned<K, M>>() - std::mem::size_of::<M>()
                    + index.model().size_in_bytes(),
                "{what}"
            );
            check_index(&what, &index, &keys);
        }
    }
}

#[test]
fn exact_model_u64() {
    run_matrix::<u64, _>("stride-1", |k| Stride::build(k, 1));
}

#[test]
fn wide_model_u64() {
    run_matrix::<u64, _>("stride-45", |k| Stride::build(k, 45));
}

#[test]
fn exact_model_str16() {
    run_matrix::<Str16, _>("stride-1", |k| Stride::build(k, 1));
}

#[test]
fn wide_model_str16() {
    run_matrix::<Str16, _>("stride-45", |k| Stride::build(k, 45));
}

/// Every saved model of `lidx::mem`, with parameters that give multi-block windows on small
/// data. The zone map groups `per_block` keys, so at item granularity its window is one block.
macro_rules! every_model {
    ($name:ident, $k:ty, $per_block:expr) => {
        mod $name {
            use super::*;
            use lidx::mem::{BTreeModel, BTreeModelParams};
            use lidx::mem::{FitingParams, FitingTree};
            use lidx::mem::{Pgm, PgmParams};
            use lidx::mem::{RadixSpline, RadixSplineParams};
            use lidx::mem::{Rmi, RmiParams};
            use lidx::mem::{SampledPgm, SampledPgmParams};
            use lidx::mem::{ZoneMap, ZoneMapParams};

            #[test]
            fn pgm() {
                run_matrix::<$k, _>("pgm-4", |k| Pgm::build(k, PgmParams::new(4, 2)));
                run_matrix::<$k, _>("pgm-64", |k| Pgm::build(k, PgmParams::default()));
            }
            #[test]
            fn sampled_pgm() {
                run_matrix::<$k, _>("sampled-pgm", |k| {
                    SampledPgm::build(k, SampledPgmParams::new(4, 8))
                });
            }
            #[test]
            fn radix_spline() {
                run_matrix::<$k, _>("radix-spline", |k| {
                    RadixSpline::build(k, RadixSplineParams::new(6, 8))
                });
            }
            #[test]
            fn rmi() {
                run_matrix::<$k, _>("rmi", |k| Rmi::build(k, RmiParams::new(16)));
            }
            #[test]
            fn btree_model() {
                run_matrix::<$k, _>("btree-model", |k| {
                    BTreeModel::build(k, BTreeModelParams::with_every(16))
                });
            }
            #[test]
            fn fiting_tree() {
                run_matrix::<$k, _>("fiting", |k| {
                    FitingTree::build(k, FitingParams::with_eps(8))
                });
            }
            #[test]
            fn zone_map() {
                run_matrix::<$k, _>("zone-map", |k| {
                    ZoneMap::build(k, ZoneMapParams::new($per_block))
                });
            }
        }
    };
}

every_model!(models_u64, u64, 31);
every_model!(models_str16, Str16, 20);

#[test]
fn records_per_block_is_known_before_building() {
    let params = StaticLearnedParams::default();
    assert_eq!(params.records_per_block::<u64>(512), 31);
    assert_eq!(params.records_per_block::<Str16>(512), 20);
    assert_eq!(params.records_per_block::<u64>(4096), 255);
}

#[test]
fn odd_and_empty_payloads() {
    let keys: Vec<u64> = (0..300).map(|i| i * 7 + 3).collect();
    for payload_size in [0, 3, 100] {
        let storage = small_blocks();
        let params = StaticLearnedParams {
            payload_size,
            ..StaticLearnedParams::default()
        };
        let index = StaticLearned::build(&storage, "sl", &keys, payload_of, params, |k| {
            Stride::build(k, 9)
        })
        .unwrap();
        assert_eq!(index.per_block(), (508 - 8) / (8 + payload_size));
        check_index(&format!("payload {payload_size}"), &index, &keys);
    }
}

#[test]
fn reopen_in_memory_and_from_a_file() {
    let keys: Vec<u64> = unique_sorted((0..700u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D)));
    let params = StaticLearnedParams {
        granularity: Granularity::MiniPage(16),
        fetch: Fetch::OneByOne,
        ..StaticLearnedParams::default()
    };
    let storage = small_blocks();
    drop(
        StaticLearned::build(&storage, "sl", &keys, payload_of, params.clone(), |k| {
            Stride::build(k, 3)
        })
        .unwrap(),
    );
    let index = StaticLearned::<u64, Stride<u64>>::open(&storage, "sl", None).unwrap();
    assert_eq!(index.fetch(), Fetch::OneByOne);
    assert_eq!(index.granularity(), Granularity::MiniPage(16));
    check_index("reopened in memory", &index, &keys);
    let index =
        StaticLearned::<u64, Stride<u64>>::open(&storage, "sl", Some(Fetch::AllAtOnce)).unwrap();
    assert_eq!(index.fetch(), Fetch::AllAtOnce);

    let dir = tempfile::tempdir().unwrap();
    let files = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    let built = StaticLearned::build(&files, "sl", &keys, payload_of, params, |k| {
        Stride::build(k, 3)
    })
    .unwrap();
    let disk = built.disk_bytes();
    assert_eq!(disk, files.file_bytes("sl"));
    drop(built);
    drop(files);
    let files = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    assert_eq!(read_kind(&files, "sl").unwrap(), Stride::<u64>::KIND);
    let index = StaticLearned::<u64, Stride<u64>>::open(&files, "sl", None).unwrap();
    assert_eq!(index.disk_bytes(), disk);
    check_index("reopened from a file", &index, &keys);
}

#[test]
fn blocks_read_per_lookup() {
    let keys: Vec<u64> = (0..2000).map(|i| i * 10).collect();
    let storage = small_blocks();
    let per_block = 31;
    let build = |name: &str, granularity, stride| {
        let params = StaticLearnedParams {
            granularity,
            ..StaticLearnedParams::default()
        };
        StaticLearned::build(&storage, name, &keys, payload_of, params, |k| {
            Stride::build(k, stride)
        })
        .unwrap()
    };
    // A zone map: exact over the first key of every block, so the window is one block.
    let zone = build("zone", Granularity::Page, 1);
    let wide = build("wide", Granularity::Item, 100);
    let mut payload = [0u8; 8];
    for (i, k) in keys.iter().enumerate() {
        for probe in [*k, k + 1] {
            for fetch in FETCHES {
                let before = storage.stats();
                zone.lower_bound_with(&probe, fetch).unwrap();
                let d = storage.stats() - before;
                assert_eq!(
                    (d.read_requests, d.read_blocks),
                    (1, 1),
                    "zone {fetch:?} {probe}"
                );
                assert_eq!(d.blocks_read(lidx::io::IoClass::Leaf), 1);
            }
            let before = storage.stats();
            wide.lower_bound_with(&probe, Fetch::AllAtOnce).unwrap();
            let d = storage.stats() - before;
            let w = wide.window(&probe);
            let span = (w.hi.max(w.lo + 1) - 1) / per_block - w.lo / per_block + 1;
            assert_eq!(d.read_requests, 1, "all-at-once is one request");
            assert_eq!(d.read_blocks, span as u64);
            let before = storage.stats();
            wide.lower_bound_with(&probe, Fetch::OneByOne).unwrap();
            let d = storage.stats() - before;
            assert_eq!(
                d.read_requests, d.read_blocks,
                "one-by-one reads a block per request"
            );
            assert!(d.read_blocks as usize <= span);
        }
        // A present key is in its block unless it starts the next one (the window's end).
        let before = storage.stats();
        assert!(zone.get_with(k, &mut payload, Fetch::AllAtOnce).unwrap());
        let d = storage.stats() - before;
        let expected = if i % per_block == 0 && i > 0 { 2 } else { 1 };
        assert_eq!(d.read_blocks, expected, "zone get {k}");
    }
    // Past the last key the window is empty at `len`: nothing to read.
    let before = storage.stats();
    assert_eq!(zone.lower_bound(&u64::MAX).unwrap(), keys.len() as u64);
    assert!((storage.stats() - before).read_blocks <= 1);
    // A scan reads the blocks after the first lookup's in one more request.
    let before = storage.stats();
    let (mut ks, mut ps) = (Vec::new(), Vec::new());
    assert_eq!(zone.scan(&15, 100, &mut ks, &mut ps).unwrap(), 100);
    let d = storage.stats() - before;
    assert_eq!(d.read_requests, 2);
    assert_eq!(d.read_blocks, 4, "entries 2..102 span blocks 0..=3");
}

#[test]
fn bad_input_is_refused() {
    let storage = small_blocks();
    let build = |keys: &[u64], params| {
        StaticLearned::build(&storage, "sl", keys, payload_of, params, |k| {
            Stride::build(k, 4)
        })
        .map(|_| ())
    };
    let p = StaticLearnedParams::default();
    assert!(matches!(
        build(&[3, 1], p.clone()),
        Err(Error::OutOfOrder { index: 1, .. })
    ));
    assert!(matches!(
        build(&[1, 1], p.clone()),
        Err(Error::DuplicateKey { index: 1, .. })
    ));
    let huge = StaticLearnedParams {
        payload_size: 600,
        ..p.clone()
    };
    assert!(matches!(
        build(&[1], huge),
        Err(Error::InvalidParameter {
            name: "payload_size",
            ..
        })
    ));
    let zero = StaticLearnedParams {
        granularity: Granularity::MiniPage(0),
        ..p.clone()
    };
    assert!(matches!(
        build(&[1], zero),
        Err(Error::InvalidParameter {
            name: "granularity",
            ..
        })
    ));
    let wrong = StaticLearned::build(&storage, "sl", &[1u64, 2, 3], payload_of, p.clone(), |k| {
        Stride::build(&k[..1], 1)
    });
    assert!(matches!(
        wrong,
        Err(Error::InvalidParameter {
            name: "build_model",
            ..
        })
    ));
    assert!(Granularity::parse("mini-page:0").is_err());
    assert_eq!(
        Granularity::parse("mini-page:16").unwrap(),
        Granularity::MiniPage(16)
    );
    assert_eq!(Fetch::parse("one-by-one").unwrap(), Fetch::OneByOne);

    let keys: Vec<u64> = (0..100).collect();
    let index = StaticLearned::build(&storage, "sl", &keys, payload_of, p.clone(), |k| {
        Stride::build(k, 4)
    })
    .unwrap();
    let mut short = [0u8; 4];
    assert!(matches!(
        index.get(&3, &mut short),
        Err(Error::InvalidParameter {
            name: "payload",
            ..
        })
    ));
    assert!(matches!(
        StaticLearned::<Str16, Stride<Str16>>::open(&storage, "sl", None),
        Err(Error::KeyTypeMismatch {
            expected: "str16",
            ..
        })
    ));
    assert!(matches!(
        StaticLearned::<u64, Other<u64>>::open(&storage, "sl", None),
        Err(Error::ModelKindMismatch {
            expected: 0xFFFF_0002,
            got: 0xFFFF_0001,
            ..
        })
    ));
}

/// Builds a 4 KiB-block file index of 3000 keys in a temporary directory.
fn file_index() -> (tempfile::TempDir, std::path::PathBuf, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<u64> = (0..3000).map(|i| i * 3).collect();
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096).unwrap();
    StaticLearned::build(
        &storage,
        "sl",
        &keys,
        payload_of,
        StaticLearnedParams::default(),
        |k| Stride::build(k, 8),
    )
    .unwrap();
    let path = dir.path().join("sl");
    (dir, path, keys)
}

fn reopen(dir: &tempfile::TempDir) -> lidx::Result<StaticLearned<u64, Stride<u64>>> {
    let storage = Storage::new(dir.path(), DeviceKind::File { direct: true }, 4096)?;
    StaticLearned::open(&storage, "sl", None)
}

/// Rewrites block `block` of the file at `path` with `edit` applied, resealed when `reseal`.
fn edit_block(path: &std::path::Path, block: usize, reseal: bool, edit: impl FnOnce(&mut [u8])) {
    let mut bytes = std::fs::read(path).unwrap();
    let b = &mut bytes[block * 4096..(block + 1) * 4096];
    edit(b);
    if reseal {
        checksum::seal(b, block as u64);
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn corrupt_header_is_reported() {
    let (dir, path, _) = file_index();
    edit_block(&path, 0, false, |b| b[44] ^= 1);
    assert!(matches!(
        reopen(&dir),
        Err(Error::ChecksumMismatch { block: 0, .. })
    ));

    let (dir, path, _) = file_index();
    edit_block(&path, 0, true, |b| b[0] ^= 1);
    assert!(matches!(reopen(&dir), Err(Error::BadMagic { .. })));
    edit_block(&path, 0, true, |b| {
        b[0] ^= 1;
        b[8] = 9;
    });
    assert!(matches!(
        reopen(&dir),
        Err(Error::UnsupportedVersion { got: 9, .. })
    ));
    edit_block(&path, 0, true, |b| {
        b[8] = lidx::raw::disk::static_learned::header::VERSION as u8;
        b[40] ^= 0x40; // len no longer matches the data block count
    });
    assert!(matches!(
        reopen(&dir),
        Err(Error::Corrupt { block: Some(0), .. })
    ));
}

#[test]
fn corrupt_data_blocks_are_reported() {
    let (dir, path, keys) = file_index();
    let mut payload = [0u8; 8];
    edit_block(&path, 2, false, |b| b[100] ^= 0x20);
    let index = reopen(&dir).unwrap();
    let in_block_2 = keys[255 + 10];
    assert!(matches!(
        index.get(&in_block_2, &mut payload),
        Err(Error::ChecksumMismatch { block: 2, .. })
    ));
    assert!(
        index.get(&keys[10], &mut payload).unwrap(),
        "other blocks still read"
    );

    // Keys swapped, checksum re-sealed: the block decoder catches it.
    edit_block(&path, 2, true, |b| {
        b[100] ^= 0x20;
        let (first, second) = (b[8..16].to_vec(), b[16..24].to_vec());
        b[8..16].copy_from_slice(&second);
        b[16..24].copy_from_slice(&first);
    });
    for fetch in FETCHES {
        assert!(matches!(
            reopen(&dir)
                .unwrap()
                .get_with(&in_block_2, &mut payload, fetch),
            Err(Error::Corrupt { block: Some(2), .. })
        ));
    }
    // A wrong record count, re-sealed.
    edit_block(&path, 3, true, |b| b[0] = 7);
    assert!(matches!(
        reopen(&dir).unwrap().get(&keys[3 * 255 + 1], &mut payload),
        Err(Error::Corrupt { block: Some(3), .. })
    ));
}

#[test]
fn corrupt_model_and_truncated_file_are_reported() {
    let (dir, path, _) = file_index();
    let model_block = 1 + 3000usize.div_ceil(255);
    edit_block(&path, model_block, false, |b| b[3] ^= 1);
    assert!(matches!(reopen(&dir), Err(Error::ChecksumMismatch { .. })));
    edit_block(&path, model_block, true, |b| b[3] ^= 1); // restored
    reopen(&dir).unwrap();
    edit_block(&path, model_block, true, |b| b[0] = 0); // stride 0
    assert!(matches!(reopen(&dir), Err(Error::Corrupt { .. })));

    let (dir, path, _) = file_index();
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 4096).unwrap();
    assert!(matches!(reopen(&dir), Err(Error::Truncated { .. })));
    file.set_len(0).unwrap();
    assert!(matches!(reopen(&dir), Err(Error::Truncated { .. })));
}
