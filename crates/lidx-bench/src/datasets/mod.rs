//! Datasets: specs and loading ([`dataset`]), a user's files ([`keyfile`], [`sosd`]), the
//! seeded generators ([`generate`], [`gre`], [`words`],
//! [`user_keys`]), counts with suffixes ([`count`]), and
//! the statistics `lidx stats` prints ([`stats`]).

pub mod count;
pub mod dataset;
pub mod generate;
pub mod gre;
pub mod keyfile;
pub mod sosd;
pub mod stats;
pub mod user_keys;
pub mod words;
