//! What a static learned file is built with: the prediction granularity (paper 002 §5,
//! guideline G2) and the build parameters ([`StaticLearnedParams`]) that the header records.
//!
//! See the module docs of [`super`] for the design and the papers' sections.

pub use crate::catalog::Granularity;
use crate::error::{Error, Result};
use crate::key::Key;

use super::data_block::records_per_block;
use super::fetch::Fetch;

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
