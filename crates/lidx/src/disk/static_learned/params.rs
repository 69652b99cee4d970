//! What a static learned file is built with: the prediction granularity (paper 002 §5,
//! guideline G2) and the build parameters ([`StaticLearnedParams`]) that the header records.
//!
//! See the module docs of [`super`] for the design and the papers' sections.

use crate::error::{Error, Result};
use crate::key::Key;

use super::data_block::records_per_block;
use super::fetch::Fetch;

/// What one model point stands for (paper 002 §5, guideline G2).
///
/// With group size `G` (1, `g`, or the records per block), the model is built on the first
/// key of every group of `G` consecutive records, so it predicts group numbers; the window of
/// group numbers `[glo, ghi)` becomes the window of items `[(glo - 1) * G, ghi * G)` (see
/// [`StaticLearned::window`] for why one group more on the left).
///
/// Paper 002 eq. 3 fixes the last-mile range `R_i = 2 eps = 2 eps' G`: a model with error
/// `eps'` in groups searches as many items as an item-level model with `eps = eps' G`, and
/// needs more memory for it (a tighter fit of fewer points). Eq. 4 gives the expected blocks
/// read all-at-once, `1 + (R_i - G) / P` for `P` records per block: for the same `R_i` a
/// larger `G` reads fewer blocks, down to exactly `R_i / P` at page level, where windows start
/// and end on block boundaries. So to compare granularities at equal `R_i`, give the model
/// `eps / G`: e.g. item level with PGM `eps = 64` against mini-pages of 16 with `eps = 4`.
///
/// The model's own windows add a margin: an eps-bounded model's window is `2 eps + 2` points
/// wide ([`ApproxPos::from_prediction`]), and the extra group on the left makes a window of
/// `2 eps' + 3` groups, i.e. `(2 eps' + 3) G` items where the paper counts `2 eps' G`. Small
/// `eps'` at page level therefore reads several blocks all-at-once; a zone map (exact, window
/// of one group) reads one.
///
/// [`StaticLearned::window`]: super::StaticLearned::window
/// [`ApproxPos::from_prediction`]: crate::index::ApproxPos::from_prediction
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Granularity {
    /// Every record is a model point; the model predicts item ranks (paper 002's
    /// recommendation: the least memory for a given last-mile range).
    #[default]
    Item,
    /// Every `g`-th record is a model point (`g >= 1`): between item and page.
    MiniPage(usize),
    /// The first record of every data block is a model point; the model predicts blocks.
    Page,
}

impl Granularity {
    /// Records per model point, given the records per block.
    pub fn group(self, per_block: usize) -> usize {
        match self {
            Granularity::Item => 1,
            Granularity::MiniPage(g) => g,
            Granularity::Page => per_block,
        }
    }

    /// `item`, `mini-page:<g>` or `page`, as [`Granularity::parse`] reads it.
    pub fn name(self) -> String {
        match self {
            Granularity::Item => "item".to_string(),
            Granularity::MiniPage(g) => format!("mini-page:{g}"),
            Granularity::Page => "page".to_string(),
        }
    }

    /// Parses `item`, `page` or `mini-page:<g>`.
    pub fn parse(s: &str) -> Result<Granularity> {
        let bad = || Error::InvalidParameter {
            name: "granularity",
            value: s.to_string(),
            expected: "item, page, or mini-page:<g> with g >= 1",
        };
        match s {
            "item" => Ok(Granularity::Item),
            "page" => Ok(Granularity::Page),
            _ => {
                let g = s.strip_prefix("mini-page:").ok_or_else(bad)?;
                let g: usize = g.parse().map_err(|_| bad())?;
                if g == 0 {
                    return Err(bad());
                }
                Ok(Granularity::MiniPage(g))
            }
        }
    }
}

/// Build parameters of a [`StaticLearned`] (the model's own parameters go to its builder).
///
/// [`StaticLearned`]: super::StaticLearned
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticLearnedParams {
    /// Bytes of payload per record. Larger payloads mean fewer records per block, so more
    /// blocks per window.
    pub payload_size: usize,
    /// What a model point stands for: coarser means fewer blocks per lookup for the same
    /// last-mile range but a model that must be more accurate (more memory).
    pub granularity: Granularity,
    /// Fetching strategy recorded as the file's default (overridable at open and per call).
    pub fetch: Fetch,
    /// The model and its parameters as the caller names them, e.g. `pgm:eps=64:eps_rec=4`:
    /// the caller builds the model (a closure or [`StaticLearnedWriter::finish`]), so only it
    /// can name them. Recorded in the header (at most
    /// `MODEL_PARAMS_BYTES` bytes of UTF-8) and returned
    /// by [`StaticLearned::params`], so that whoever opens the file can check it is the index
    /// asked for. Empty (the default): not named.
    ///
    /// [`StaticLearnedWriter::finish`]: super::StaticLearnedWriter::finish
    /// [`StaticLearned::params`]: super::StaticLearned::params
    pub model_params: String,
}

impl Default for StaticLearnedParams {
    /// 8-byte payloads, item granularity, all-at-once: paper 002's recommendations.
    fn default() -> Self {
        StaticLearnedParams {
            payload_size: crate::disk::DEFAULT_PAYLOAD_SIZE,
            granularity: Granularity::Item,
            fetch: Fetch::AllAtOnce,
            model_params: String::new(),
        }
    }
}

impl StaticLearnedParams {
    /// [`Error::InvalidParameter`] for a model parameters text the header cannot hold.
    pub(crate) fn check_model_params(&self) -> Result<()> {
        if self.model_params.len() > super::header::MODEL_PARAMS_BYTES {
            return Err(Error::InvalidParameter {
                name: "model_params",
                value: self.model_params.clone(),
                expected: "at most 128 bytes",
            });
        }
        Ok(())
    }

    /// Records per data block with these parameters and `block_size`-byte blocks (0 when a
    /// record does not fit): what a zone map's group size should be, for instance.
    pub fn records_per_block<K: Key>(&self, block_size: usize) -> usize {
        let block_payload = block_size.saturating_sub(crate::io::BLOCK_TRAILER);
        records_per_block(block_payload, K::SIZE, self.payload_size)
    }
}
