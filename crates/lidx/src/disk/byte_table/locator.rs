//! The table's index in memory: which run (entry) may hold a key, and where each run starts.
//!
//! Two forms, chosen at open from the header's key lengths:
//!
//! * **Any keys**: the separators in one arena with their offsets, and a
//!   [`StringIndex`](crate::mem::StringIndex) over them whose window is searched
//!   in the arena. About 5 + 4 bytes per separator plus the model.
//! * **Every key 8 bytes** (a store of `u64`s, or any fixed 8-byte keys): every separator is at
//!   most 8 bytes, so as a big-endian `u64` padded with zeros it sorts as its bytes do, and a
//!   probe of any length compares the same as its first 8 bytes padded (an 8-byte key at or
//!   above a shorter probe is at or above the probe padded; one below it is below). The
//!   separators then live in a [`LecoArray`] (paper 002 §7's learned compression, as the
//!   typed hybrid index's zone map keeps its block minimums, §8), searched exactly: one to
//!   three bytes per separator on smooth keys instead of nine plus a model. Where the
//!   compression saves less than a quarter (random keys: a partition's line predicts a
//!   separator only to within about the square root of its size in gaps, so each keeps some
//!   50 bits of error), the separators stay a plain sorted array instead: profiled on cached
//!   gets of 750K random 8-byte keys, the compressed search took 1,200 of a get's 2,100
//!   instructions (a dozen decodes), for 7 bytes a separator against 8.
//!
//! The runs' stream positions are a [`LecoArray`] in both forms (they grow by about a block
//! each, which a line fits within a few bits).

use crate::error::Result;
use crate::mem::string_index::StringIndex;
use crate::model::leco::{LecoArray, LecoParams};

use super::format::ByteTableHeader;

/// Where each run starts in the record stream.
pub(crate) struct Positions(LecoArray);

impl Positions {
    pub(crate) fn new(positions: &[u64]) -> Result<Positions> {
        Ok(Positions(LecoArray::build(
            positions,
            LecoParams::default(),
        )?))
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Where run `i` starts.
    pub(crate) fn get(&self, i: usize) -> u64 {
        self.0.get(i)
    }

    /// The run holding stream position `pos`: the last one starting at or before it.
    pub(crate) fn run_of(&self, pos: u64) -> Option<usize> {
        self.0.upper_bound(pos).checked_sub(1)
    }

    pub(crate) fn to_vec(&self) -> Vec<u64> {
        self.0.iter().collect()
    }

    fn memory_bytes(&self) -> usize {
        self.0.size_in_bytes()
    }
}

/// The separators' index; see the module docs.
pub(crate) enum Locator {
    Strings {
        separators: Vec<u8>,
        offsets: Vec<u32>,
        model: StringIndex,
    },
    Fixed8(LecoArray),
    Plain8(Vec<u64>),
}

/// A probe's first 8 bytes as a big-endian `u64`, padded with zeros.
fn chunk8(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl Locator {
    /// The index over `separators` (`offsets` delimit them, starting with 0) of a table
    /// whose header is `header`.
    pub(crate) fn build(
        header: &ByteTableHeader,
        separators: Vec<u8>,
        offsets: Vec<u32>,
    ) -> Result<Locator> {
        let seps = offsets
            .windows(2)
            .map(|w| &separators[w[0] as usize..w[1] as usize]);
        if header.key_lens == (8, 8) && seps.clone().all(|s| s.len() <= 8) {
            let values: Vec<u64> = seps.map(chunk8).collect();
            let compressed = LecoArray::build(&values, LecoParams::default())?;
            if compressed.size_in_bytes() * 4 > std::mem::size_of_val(&values[..]) * 3 {
                return Ok(Locator::Plain8(values));
            }
            return Ok(Locator::Fixed8(compressed));
        }
        let model = StringIndex::build(&seps.collect::<Vec<_>>(), header.params.model)?;
        Ok(Locator::Strings {
            separators,
            offsets,
            model,
        })
    }

    /// The last run whose separator is at or below `key`; `None` when `key` is below the
    /// table. `runs` is the number of runs.
    pub(crate) fn locate(&self, key: &[u8], runs: usize) -> Option<usize> {
        match self {
            Locator::Fixed8(seps) => seps.upper_bound(chunk8(key)).checked_sub(1),
            Locator::Plain8(seps) => {
                let key = chunk8(key);
                seps.partition_point(|&s| s <= key).checked_sub(1)
            }
            Locator::Strings {
                separators,
                offsets,
                model,
            } => {
                let sep = |i: usize| &separators[offsets[i] as usize..offsets[i + 1] as usize];
                let w = model.search(key);
                let (mut lo, mut hi) = (w.lo.min(runs), w.hi.min(runs));
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if sep(mid) < key {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if lo < runs && sep(lo) == key {
                    Some(lo)
                } else {
                    lo.checked_sub(1)
                }
            }
        }
    }

    /// Bytes of memory with the positions.
    pub(crate) fn memory_bytes(&self, positions: &Positions) -> usize {
        positions.memory_bytes()
            + match self {
                Locator::Fixed8(seps) => seps.size_in_bytes(),
                Locator::Plain8(seps) => std::mem::size_of_val(&seps[..]),
                Locator::Strings {
                    separators,
                    offsets,
                    model,
                } => separators.capacity() + 4 * offsets.capacity() + model.size_in_bytes(),
            }
    }
}
