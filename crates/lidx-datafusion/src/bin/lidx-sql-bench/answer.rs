//! A query's answer boiled down to what two sides must agree on: its row count and an
//! order-independent checksum of its rows (the wrapping sum of a hash of each row's values), so
//! that a lidx scan's rows and Parquet's may come in any order, and a `UInt64` key or a
//! binary value compares by value whichever Arrow type a side hands it in (Parquet's reader
//! hands binary columns over as `BinaryView`).

use anyhow::{bail, Context};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;

use crate::workload::Expect;

/// Rows and checksum of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) rows: u64,
    pub(crate) checksum: u64,
}

/// splitmix64's finalizer: a well-mixed hash of one word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of a byte string.
fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = mix(bytes.len() as u64);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(word));
    }
    h
}

/// The hash of the value at `row` of `column` (null: a fixed word).
fn hash_value(column: &dyn Array, row: usize) -> anyhow::Result<u64> {
    if column.is_null(row) {
        return Ok(0x6E75_6C6C);
    }
    Ok(match column.data_type() {
        DataType::UInt64 => mix(column.as_primitive::<UInt64Type>().value(row)),
        DataType::Int64 => mix(column.as_primitive::<Int64Type>().value(row) as u64),
        DataType::Binary => hash_bytes(column.as_binary::<i32>().value(row)),
        DataType::LargeBinary => hash_bytes(column.as_binary::<i64>().value(row)),
        DataType::BinaryView => hash_bytes(column.as_binary_view().value(row)),
        other => bail!("a {other} column in an answer; the bench checks u64, i64 and binary"),
    })
}

/// The answer `batches` hold.
pub(crate) fn answer_of(batches: &[RecordBatch]) -> anyhow::Result<Answer> {
    let mut answer = Answer {
        rows: 0,
        checksum: 0,
    };
    for batch in batches {
        for row in 0..batch.num_rows() {
            let mut h = 0u64;
            for column in batch.columns() {
                h = mix(h ^ hash_value(column.as_ref(), row)?);
            }
            answer.checksum = answer.checksum.wrapping_add(h);
        }
        answer.rows += batch.num_rows() as u64;
    }
    Ok(answer)
}

/// Checks that `batches` (whose answer is `answer`) have the size `expect` says.
pub(crate) fn check(batches: &[RecordBatch], answer: Answer, expect: Expect) -> anyhow::Result<()> {
    match expect {
        Expect::Rows(rows) if answer.rows != rows => {
            bail!("{} rows, {rows} expected", answer.rows)
        }
        Expect::Rows(_) => Ok(()),
        Expect::Count(count) => {
            let column = batches
                .iter()
                .find(|b| b.num_rows() > 0)
                .map(|b| b.column(0))
                .context("no rows where one row with a count was expected")?;
            let got = match column.data_type() {
                DataType::Int64 => column.as_primitive::<Int64Type>().value(0) as u64,
                DataType::UInt64 => column.as_primitive::<UInt64Type>().value(0),
                other => bail!("a {other} count"),
            };
            if answer.rows != 1 || got != count {
                bail!(
                    "{} rows counting {got}; one row counting {count} expected",
                    answer.rows
                );
            }
            Ok(())
        }
    }
}
