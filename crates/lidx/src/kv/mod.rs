//! The persistent store's durability layer: the write-ahead log and the manifest.
//!
//! Paper 002 §9 (G6) builds a hybrid index: a dynamic stage in memory takes every insert,
//! update and delete, and a merge periodically folds it into immutable static files. The paper
//! leaves the dynamic stage volatile; lidx makes it durable with two generic pieces, usable by
//! any structure of that shape:
//!
//! - [`wal`]: an append-only, checksummed log of [`Record`]s (put / delete of key bytes) with
//!   group commit from many threads and a configurable [`FsyncPolicy`]; [`replay`] recovers it,
//!   cutting a torn tail and refusing corruption in the middle.
//! - [`manifest`]: the atomically switched record ([`Manifest`]) of which static files are live
//!   and up to which sequence number they hold the data.
//!
//! Recovery of a hybrid index: open the [`ManifestStore`], open its static files, then
//! [`Wal::open`] and apply every replayed record whose sequence number is above
//! [`Manifest::static_seq`]. A merge: [`Wal::rotate`] (freezing the dynamic stage at that
//! sequence number), write the new static files, [`ManifestStore::commit`] a manifest naming
//! them with the new `static_seq`, then [`Wal::remove_up_to`] that sequence number.

pub mod hybrid;
pub mod manifest;
mod stamp;
pub mod store;
pub mod wal;

pub use hybrid::HybridIndex;
pub use manifest::{Manifest, ManifestStore};
pub use store::{Store, StoreOptions};
pub use wal::{
    replay, DamageKind, Dropped, FsyncPolicy, Record, ReplayReport, Seq, Wal, WalOptions,
    WalRecovery, WalStats,
};
