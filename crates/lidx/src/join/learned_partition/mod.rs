//! The learned route for joins on UNSORTED tables: partition both tables into key-range buckets
//! by the rank a PGM fitted on a 1% sample predicts, then join bucket pairs in key order,
//! sorting each bucket in memory, so the output comes out sorted by key.
//!
//! Paper 000 §5.4 and §6.3: sample keys from each unsorted table, sort the sample, fit a PGM on
//! it, scale the rank it predicts to the full table, and send every key to bucket
//! `rank * P / N`, with `P` chosen so a bucket is about one 4 KiB page; buckets are flushed to
//! disk 8 keys at a time and are sorted only when loaded for the join. Two passes over each
//! table: one to sample, one to partition. The join then walks the smaller table's buckets in
//! order and, for each key, looks up the bucket of the other table through that table's own
//! PGM and bucket map. The paper measures partitioning 4-8x faster than building a B+-tree by
//! random inserts.
//!
//! What we do differently, and why:
//!
//! * **One model for both tables.** We sample both tables (Bernoulli, rate
//!   [`LearnedPartitionParams::sample_rate`], seeded, so reruns are identical), fit ONE PGM on the
//!   union of the samples and partition both tables with it. Bucket `i` of the left table then
//!   holds exactly the key range of bucket `i` of the right one: the join needs no lookups into
//!   the other table's model, bucket pairs are independent (threads take contiguous ranges of
//!   them), and the overflow fallback below works on one pair at a time. `P` is sized on the
//!   larger table ([`LearnedPartitionParams::bucket_blocks`] blocks per bucket), so when the
//!   tables differ in size the smaller one's buckets are smaller, not more numerous.
//! * **A monotone bucket function.** The PGM's bottom segments each predict a rank; we clamp a
//!   segment's prediction to the ranks between its first point and the next segment's first
//!   point. Each clamped line is non-decreasing, and consecutive segments cover consecutive rank
//!   ranges, so the bucket of a key never decreases as the key grows: buckets ARE key ranges
//!   (the paper's precondition "as long as the rank is monotonic"). Segments are found by a
//!   binary search over their first keys (the sample's PGM is small).
//! * **Flushing.** The paper flushes 8 keys per bucket into page-sized regions through the OS
//!   page cache, and reports that under memory pressure the kernel's write-back dominates. Here
//!   the `--memory` budget is explicit: records are buffered in one arena shared by all buckets
//!   and, when it is full, written as one *run* in bucket order, in large sequential requests
//!   (a counting sort by bucket id puts them in place). The in-memory directory of a run is one
//!   offset per bucket. A bucket is the concatenation of its pieces in every run; the join
//!   reads the runs forward through one read-ahead window each, so with buckets visited in
//!   order every run is read sequentially, and a bucket nobody needs is not read at all.
//! * **Oversized buckets.** A skewed key range (or many 16-byte strings sharing their first 8
//!   bytes, which the model cannot tell apart) can put more records in one bucket pair than the
//!   memory budget holds. Then the pair is joined in key sub-ranges: read both buckets, keep the
//!   records of `[lo, hi)`, and whenever the kept records exceed the budget lower `hi` to the
//!   median kept key and drop the records at or above it; after both buckets are read the kept
//!   records are exactly those of `[lo, hi)`: sort, join, continue from `lo = hi`. Each round
//!   re-reads the pair, so a pair of `k` budgets costs about `2k` reads of it; only if records
//!   with ONE key exceed the budget is the join refused ([`crate::Error::InvalidParameter`] on
//!   `memory`).
//! * **String keys** ([`crate::Str16`]) reach the model through [`crate::Key::to_model`], their first 8
//!   bytes big-endian: order-preserving but not injective. That only costs balance, never
//!   exactness: the bucket function is non-decreasing in the key whatever the model's
//!   precision, so equal keys always share a bucket and buckets are key ranges, and inside a
//!   bucket pair keys are compared in full. (The paper's base-256 `f64` mapping loses order
//!   information past ~7 bytes in the same way; ours loses it past 8.)
//! * **Duplicate keys** are allowed in either table: a key with `a` records on the left and `b`
//!   on the right gives `a * b` output records. Records with equal keys are ordered by their
//!   bytes, so the output does not depend on the order the records arrived in.
//!
//! Module contents: [`BucketMap`] (the fitted partition function), [`Partitioned`] (one table's
//! bucket file and directory), [`BucketReader`], [`join_bucket`] (one bucket pair, with the
//! fallback), and the sampling and partitioning passes.

mod bucket_join;
mod driver;
mod partition;
mod reader;
mod sample;
#[cfg(test)]
mod tests;

pub(crate) use driver::run;
