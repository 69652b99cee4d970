//! The columns a [`crate::LidxTable`] shows and the Arrow batches its scans fill: `key` then
//! `value`, both never null. A table's `u64` keys are `UInt64`, its 16-byte string keys and
//! every store key `Binary` (all 16 bytes of a string key, trailing zeros included, so that
//! the column orders as the table does); values are `Binary`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BinaryBuilder, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::ScalarValue;
use datafusion::error::Result;

/// Name of the key column.
pub const KEY: &str = "key";
/// Name of the value column.
pub const VALUE: &str = "value";

/// A key type as Arrow shows it.
pub(crate) trait ArrowKey: Sized {
    /// The key column's type.
    const TYPE: DataType;
    /// The key column of `keys` (a `u64` column takes the vector's memory as it is).
    fn column(keys: Vec<Self>) -> ArrayRef;
    /// A key as a statistic.
    fn scalar(&self) -> ScalarValue;
}

impl ArrowKey for u64 {
    const TYPE: DataType = DataType::UInt64;
    fn column(keys: Vec<Self>) -> ArrayRef {
        Arc::new(UInt64Array::from(keys))
    }
    fn scalar(&self) -> ScalarValue {
        ScalarValue::UInt64(Some(*self))
    }
}

impl ArrowKey for [u8; 16] {
    const TYPE: DataType = DataType::Binary;
    fn column(keys: Vec<Self>) -> ArrayRef {
        let mut b = BinaryBuilder::with_capacity(keys.len(), keys.len() * 16);
        for k in &keys {
            b.append_value(k);
        }
        Arc::new(b.finish())
    }
    fn scalar(&self) -> ScalarValue {
        ScalarValue::Binary(Some(self.to_vec()))
    }
}

impl ArrowKey for Vec<u8> {
    const TYPE: DataType = DataType::Binary;
    fn column(keys: Vec<Self>) -> ArrayRef {
        let bytes = keys.iter().map(Vec::len).sum();
        let mut b = BinaryBuilder::with_capacity(keys.len(), bytes);
        for k in &keys {
            b.append_value(k);
        }
        Arc::new(b.finish())
    }
    fn scalar(&self) -> ScalarValue {
        ScalarValue::Binary(Some(self.clone()))
    }
}

/// The full schema of a source whose keys are `K`.
pub(crate) fn schema_of<K: ArrowKey>() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(KEY, K::TYPE, false),
        Field::new(VALUE, DataType::Binary, false),
    ]))
}

/// One batch being filled: the keys and values of the columns a scan was asked for.
pub(crate) struct BatchBuilder<K> {
    /// The projected schema.
    schema: SchemaRef,
    /// Which of `key` (0) and `value` (1) the projected schema holds, in its order.
    columns: Vec<usize>,
    want_key: bool,
    want_value: bool,
    keys: Vec<K>,
    values: BinaryBuilder,
    rows: usize,
    /// Rows and value bytes a batch is expected to hold: each batch's columns are allocated
    /// at that size once, not grown row by row.
    capacity: usize,
    value_bytes: usize,
}

impl<K: ArrowKey> BatchBuilder<K> {
    /// A builder of batches of `schema`, the full schema projected on `columns`, each of
    /// about `capacity` rows whose values take about `value_bytes` each (both hints: a batch
    /// may hold more).
    pub(crate) fn new(
        schema: SchemaRef,
        columns: Vec<usize>,
        capacity: usize,
        value_bytes: usize,
    ) -> Self {
        let want_key = columns.contains(&0);
        let want_value = columns.contains(&1);
        BatchBuilder {
            keys: Vec::new(),
            values: BinaryBuilder::new(),
            want_key,
            want_value,
            schema,
            columns,
            rows: 0,
            capacity,
            value_bytes,
        }
    }

    /// Allocates the columns of a batch, when its first record comes: nothing is allocated
    /// after the last batch.
    #[cold]
    fn reserve(&mut self) {
        if self.want_key {
            self.keys.reserve(self.capacity);
        }
        if self.want_value {
            self.values =
                BinaryBuilder::with_capacity(self.capacity, self.capacity * self.value_bytes);
        }
    }

    /// Adds a record; `value` is only called when the value column is wanted.
    #[inline]
    pub(crate) fn push<'v>(&mut self, key: impl FnOnce() -> K, value: impl FnOnce() -> &'v [u8]) {
        if self.rows == 0 {
            self.reserve();
        }
        if self.want_key {
            self.keys.push(key());
        }
        if self.want_value {
            self.values.append_value(value());
        }
        self.rows += 1;
    }

    /// Records added since the last batch.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The batch of the records added since the last one.
    pub(crate) fn finish(&mut self) -> Result<RecordBatch> {
        let key = self
            .want_key
            .then(|| K::column(std::mem::take(&mut self.keys)));
        let value: Option<ArrayRef> = self.want_value.then(|| Arc::new(self.values.finish()) as _);
        let columns = self
            .columns
            .iter()
            .map(|&c| {
                if c == 0 {
                    key.clone().expect("key column wanted")
                } else {
                    value.clone().expect("value column wanted")
                }
            })
            .collect();
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        let batch = RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options)?;
        self.rows = 0;
        Ok(batch)
    }
}
