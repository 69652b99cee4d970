//! A seeded generator of word-like byte-string keys: what a word list, a vocabulary or a
//! dictionary of names looks like to an index.
//!
//! Real word lists share long prefixes: a stem takes many endings (`nation`, `national`,
//! `nationally`, `nationalism`), prefixes stack (`inter-`, `counter-`), and phrases repeat
//! their first word. In a 7.2M-word frequency list 61% of words share their first 8 bytes with
//! another word, which is what defeats a model that sees only those 8 bytes. The generator
//! builds keys the same way:
//!
//! * stems of 2 to 4 syllables (onset, vowel, optional coda) drawn uniformly, and the stems
//!   themselves drawn with a Zipf-like skew, so that popular stems take many endings;
//! * a word is an optional prefix, a stem and an optional suffix chain (up to three
//!   suffixes); one in eight keys is a phrase of two or three words joined by a space;
//! * one key in 2,000 is long (200 bytes to 1 KiB: a path-like concatenation), so tests and
//!   benchmarks meet keys longer than any fixed width.
//!
//! Keys are 1 to 1,024 bytes, lowercase ASCII with spaces; the result is sorted and without
//! duplicates, and depends only on the count and the seed. [`shared_prefix_fraction`] measures
//! the share of keys sharing their first 8 bytes with another key (0.65 at 1M keys, 0.73 at
//! 5M, seed 42: the real 7.2M-word list that motivated it has 0.61).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ONSETS: [&str; 18] = [
    "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "st", "tr", "ch",
];
const VOWELS: [&str; 6] = ["a", "e", "i", "o", "u", "ou"];
const CODAS: [&str; 7] = ["", "", "n", "r", "s", "l", "nt"];

const PREFIXES: [&str; 10] = [
    "un", "re", "pre", "over", "inter", "counter", "under", "non", "anti", "super",
];

const SUFFIXES: [&str; 20] = [
    "s", "ed", "ing", "er", "ers", "ly", "ness", "ation", "ations", "ment", "ments", "able", "ize",
    "ized", "izing", "ist", "ists", "ism", "al", "ally",
];

/// Picks an index below `n` with a Zipf-like skew toward small ones.
fn skewed(rng: &mut ChaCha8Rng, n: usize) -> usize {
    let u: f64 = rng.gen();
    ((n as f64).powf(u) - 1.0) as usize % n
}

/// A stem: uniformly drawn half of the time, skewed toward popular stems otherwise.
fn stem(rng: &mut ChaCha8Rng, stems: &[String]) -> String {
    if rng.gen_bool(0.5) {
        stems[rng.gen_range(0..stems.len())].clone()
    } else {
        stems[skewed(rng, stems.len())].clone()
    }
}

fn word(rng: &mut ChaCha8Rng, stems: &[String]) -> String {
    let mut w = String::new();
    if rng.gen_bool(0.2) {
        w.push_str(PREFIXES[skewed(rng, PREFIXES.len())]);
    }
    w.push_str(&stem(rng, stems));
    let suffixes = [0, 0, 1, 1, 1, 2, 3][rng.gen_range(0..7)];
    for _ in 0..suffixes {
        w.push_str(SUFFIXES[skewed(rng, SUFFIXES.len())]);
    }
    w
}

/// `n` distinct sorted word-like keys from `seed` (see the module docs).
pub fn generate(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // About one stem per 2 keys: popular stems still take many endings (the skew), most few.
    let stem_count = (n / 2).max(16);
    let stems: Vec<String> = (0..stem_count)
        .map(|_| {
            let syllables = rng.gen_range(2..=4);
            let mut stem = String::new();
            for _ in 0..syllables {
                stem.push_str(ONSETS[rng.gen_range(0..ONSETS.len())]);
                stem.push_str(VOWELS[rng.gen_range(0..VOWELS.len())]);
                stem.push_str(CODAS[rng.gen_range(0..CODAS.len())]);
            }
            stem
        })
        .collect();
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(n + n / 8);
    let mut attempts = 0usize;
    while keys.len() < n {
        // Draw in rounds, then dedup; a round adds what is still missing, with some slack.
        let missing = n - keys.len();
        for _ in 0..missing + missing / 8 + 16 {
            let key = if rng.gen_range(0..2000) == 0 {
                let target = rng.gen_range(200..=1024);
                let mut k = String::new();
                while k.len() < target {
                    k.push_str(&word(&mut rng, &stems));
                    k.push('/');
                }
                k.truncate(target);
                k
            } else if rng.gen_range(0..8) == 0 {
                let words = rng.gen_range(2..=3);
                (0..words)
                    .map(|_| word(&mut rng, &stems))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                word(&mut rng, &stems)
            };
            let mut bytes = key.into_bytes();
            bytes.truncate(1024);
            keys.push(bytes);
        }
        keys.sort_unstable();
        keys.dedup();
        attempts += 1;
        if attempts > 64 {
            break;
        }
    }
    // Drop a seeded selection of the surplus, so the count is exact and the order unbiased.
    while keys.len() > n {
        let at = rng.gen_range(0..keys.len());
        keys.swap_remove(at);
    }
    keys.sort_unstable();
    keys
}

/// The share of `keys` (sorted) whose first 8 bytes (zero-padded) equal those of a neighbour:
/// the keys a model that sees only 8 bytes cannot tell apart.
pub fn shared_prefix_fraction(keys: &[Vec<u8>]) -> f64 {
    let heads: Vec<u64> = keys.iter().map(|k| lidx::raw::key::head8(k)).collect();
    shared_head_fraction(&heads)
}

/// The share of sorted `heads` equal to a neighbour.
pub fn shared_head_fraction(heads: &[u64]) -> f64 {
    let shared = (0..heads.len())
        .filter(|&i| {
            (i > 0 && heads[i - 1] == heads[i]) || (i + 1 < heads.len() && heads[i + 1] == heads[i])
        })
        .count();
    shared as f64 / heads.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_distinct_reproducible_and_word_like() {
        let a = generate(20_000, 1);
        assert_eq!(a.len(), 20_000);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, generate(20_000, 1));
        assert_ne!(a, generate(20_000, 2));
        assert!(a.iter().all(|k| !k.is_empty() && k.len() <= 1024));
        let f = shared_prefix_fraction(&a);
        assert!((0.4..0.9).contains(&f), "{f}");
    }
}
