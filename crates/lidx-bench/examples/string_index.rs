//! String-key lookups on word-like keys: binary search, a PGM over the first 8 bytes (the
//! model a fixed-width string key gets, its windows widened by the largest group of keys
//! sharing those 8 bytes), and the byte-string index of `lidx::mem::string_index` at several
//! parameters. Every answer is checked against the key's true position.
//!
//! `cargo run --release -p lidx-bench --example string_index -- [keys] [lookups] [runs]`
//! (default 5M keys, 1M lookups, 5 runs; the mean per lookup is the median run's).

use std::hint::black_box;
use std::time::Instant;

use lidx::mem::pgm::{Pgm, PgmParams};
use lidx::mem::string_index::{StringIndex, StringIndexParams};
use lidx::{ApproxPos, StaticIndex};
use lidx_bench::words;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The first 8 bytes of a key, big-endian, zero-padded: what a `Str16` model sees.
fn head(key: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = key.len().min(8);
    raw[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(raw)
}

/// One way to get a window for a key.
trait Windowed {
    fn window(&self, key: &[u8]) -> ApproxPos;
}

/// Binary search: the whole array is the window.
struct Whole(usize);

impl Windowed for Whole {
    fn window(&self, _: &[u8]) -> ApproxPos {
        ApproxPos {
            pos: self.0 / 2,
            lo: 0,
            hi: self.0,
        }
    }
}

/// A PGM on the first 8 bytes, its window widened by the largest same-head group.
struct Head8 {
    pgm: Pgm<u64>,
    widen: usize,
    n: usize,
}

impl Windowed for Head8 {
    fn window(&self, key: &[u8]) -> ApproxPos {
        let w = self.pgm.search(head(key));
        ApproxPos {
            hi: (w.hi + self.widen).min(self.n),
            ..w
        }
    }
}

impl Windowed for StringIndex {
    fn window(&self, key: &[u8]) -> ApproxPos {
        self.search(key)
    }
}

/// Times `runs` passes over `queries`; returns the median mean ns and the windows' mean and
/// max width. Panics on a wrong answer.
fn measure(
    index: &dyn Windowed,
    keys: &[Vec<u8>],
    queries: &[usize],
    runs: usize,
) -> (f64, f64, usize) {
    let (mut sum, mut max) = (0usize, 0usize);
    for &q in queries {
        let w = index.window(&keys[q]);
        sum += w.hi - w.lo;
        max = max.max(w.hi - w.lo);
    }
    let mut means = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        for &q in queries {
            let key = &keys[q][..];
            let w = black_box(index).window(key);
            let got = w.lo + keys[w.lo..w.hi].partition_point(|k| &k[..] < key);
            assert_eq!(got, q, "wrong answer for key {q}");
        }
        means.push(start.elapsed().as_nanos() as f64 / queries.len() as f64);
    }
    means.sort_by(f64::total_cmp);
    (
        means[means.len() / 2],
        sum as f64 / queries.len() as f64,
        max,
    )
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: keys lookups runs"))
        .collect();
    let n = args.first().copied().unwrap_or(5_000_000);
    let lookups = args.get(1).copied().unwrap_or(1_000_000);
    let runs = args.get(2).copied().unwrap_or(5);

    let start = Instant::now();
    let keys = words::generate(n, 42);
    let bytes: usize = keys.iter().map(Vec::len).sum();
    println!(
        "{n} word-like keys ({:.1} bytes on average, {:.1}% share their first 8 bytes with a \
         neighbour), generated in {:.1} s; {lookups} uniform lookups of present keys, {runs} runs",
        bytes as f64 / n as f64,
        100.0 * words::shared_prefix_fraction(&keys),
        start.elapsed().as_secs_f64()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let queries: Vec<usize> = (0..lookups).map(|_| rng.gen_range(0..n)).collect();

    let mut rows: Vec<(String, f64, usize, Box<dyn Windowed>)> = Vec::new();
    rows.push(("binary search".into(), 0.0, 0, Box::new(Whole(n))));

    let start = Instant::now();
    let heads: Vec<u64> = keys.iter().map(|k| head(k)).collect();
    let pgm = Pgm::build(&heads, PgmParams::new(32, 8)).expect("sorted heads");
    let mut widen = 0;
    let mut i = 0;
    while i < heads.len() {
        let j = heads[i..].partition_point(|&h| h == heads[i]) + i;
        widen = widen.max(j - i);
        i = j;
    }
    let size = pgm.size_in_bytes();
    rows.push((
        "first 8 bytes: PGM eps=32, widened".into(),
        start.elapsed().as_secs_f64(),
        size,
        Box::new(Head8 { pgm, widen, n }),
    ));

    for (eps, threshold) in [(16, 16), (32, 32), (64, 64)] {
        let start = Instant::now();
        let index =
            StringIndex::build(&keys, StringIndexParams { eps, threshold }).expect("sorted keys");
        let (nodes, depth) = index.nodes_and_depth();
        rows.push((
            format!("string_index eps={eps} threshold={threshold} ({nodes} nodes, depth {depth})"),
            start.elapsed().as_secs_f64(),
            index.size_in_bytes(),
            Box::new(index),
        ));
    }

    println!("| index | build s | bytes | mean window | max window | mean ns | vs binary search |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut base = None;
    for (name, build_s, size, index) in &rows {
        let (ns, mean_w, max_w) = measure(index.as_ref(), &keys, &queries, runs);
        let base_ns = *base.get_or_insert(ns);
        println!(
            "| {name} | {build_s:.2} | {size} | {mean_w:.1} | {max_w} | {ns:.0} | {:.2}x |",
            base_ns / ns
        );
    }
}
