//! Fuzzes the model decoders of every persistable static index, and the LeCo array's: the
//! first byte picks the index type and the key type (u64 or 16-byte strings), the rest is
//! decoded. Decoding either fails with a typed error or gives an index whose windows keep
//! `lo <= pos <= hi <= len` for every query; never a panic, never a huge allocation.

use lidx::mem::BTreeModel;
use lidx::mem::CprPgm;
use lidx::mem::FitingTree;
use lidx::mem::Persist;
use lidx::mem::Pgm;
use lidx::mem::PgmZero;
use lidx::mem::RadixSpline;
use lidx::mem::RadixSplineZero;
use lidx::mem::Rmi;
use lidx::mem::SampledPgm;
use lidx::mem::ZoneMap;
use lidx::mem::{LecoZoneMap, RoughLecoZoneMap};
use lidx::model::LecoArray;
use lidx::raw::codec::Decoder;
use lidx::{Key, Str16};

/// Query keys: the extremes and keys read from the input itself, so that they land near the
/// decoded model's own keys.
fn probes<K: Key>(bytes: &[u8]) -> Vec<K> {
    let mut out = vec![K::MIN, K::MAX];
    out.extend(
        bytes
            .chunks_exact(K::SIZE)
            .take(64)
            .map(K::read_from)
            .filter(|k| k.invalid_reason().is_none()),
    );
    out
}

fn check_index<K: Key, I: Persist<K>>(bytes: &[u8]) {
    let mut input = Decoder::new("fuzz", bytes);
    let Ok(index) = I::decode(&mut input) else {
        return;
    };
    let len = index.len();
    for key in probes::<K>(bytes) {
        let w = index.search(key);
        assert!(
            w.lo <= w.pos && w.pos <= w.hi && w.hi <= len,
            "window {w:?} for {key:?}, len {len}"
        );
    }
}

/// A decoded LeCo array answers every index and both bound searches without panicking.
fn check_leco(bytes: &[u8]) {
    let Ok(a) = LecoArray::decode(&mut Decoder::new("fuzz", bytes)) else {
        return;
    };
    let sum = a.iter().take(4096).fold(0u64, u64::wrapping_add);
    assert!(a.lower_bound(sum) <= a.len() && a.upper_bound(u64::MAX) <= a.len());
}

fn by_index<K: Key>(which: u8, bytes: &[u8]) {
    match which {
        0 => check_index::<K, Pgm<K>>(bytes),
        1 => check_index::<K, SampledPgm<K>>(bytes),
        2 => check_index::<K, RadixSpline<K>>(bytes),
        3 => check_index::<K, Rmi>(bytes),
        4 => check_index::<K, BTreeModel<K>>(bytes),
        5 => check_index::<K, FitingTree<K>>(bytes),
        6 => check_index::<K, ZoneMap<K>>(bytes),
        7 => check_index::<K, CprPgm<K>>(bytes),
        8 => check_index::<K, LecoZoneMap<K>>(bytes),
        9 => check_index::<K, RoughLecoZoneMap<K>>(bytes),
        10 => check_index::<K, PgmZero<K>>(bytes),
        11 => check_index::<K, RadixSplineZero<K>>(bytes),
        _ => check_leco(bytes),
    }
}

pub fn check(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    if pick & 0x80 == 0 {
        by_index::<u64>(pick % 13, bytes);
    } else {
        by_index::<Str16>(pick % 13, bytes);
    }
}
