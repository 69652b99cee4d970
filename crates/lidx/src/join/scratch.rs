//! The helper files of a join (thread parts, Grace partitions, the unsorted routes' trees and
//! buckets, a saved index being staged) in its scratch storage: names of their own, never
//! derived from a user's file names (issue 30), and their removal.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::io::Storage;

/// A helper file name of a join's scratch storage, distinct for every call in every process
/// (so joins sharing one scratch storage do not collide): `<role>.<pid>-<n>`.
pub(super) fn scratch_name(role: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{role}.{}-{n}", std::process::id())
}

/// Removes the helper file `name` of the scratch storage `scratch` (a file left behind only
/// wastes space, so a failure is not an error).
pub(super) fn remove_scratch(scratch: &Storage, name: &str) {
    let _ = scratch.remove(name);
}
