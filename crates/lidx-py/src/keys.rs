//! Keys as numpy arrays: the four key types, and the arrays an index reads in place.
//!
//! An index reads its keys where numpy keeps them. [`SortedKeys::from_py`] holds the caller's
//! array itself (a reference, no copy) when it is one-dimensional, C-contiguous, aligned and of
//! a key dtype (`uint64`, `int64`, `float64`, `uint32`, native byte order); otherwise it copies
//! once: a list or tuple becomes an array of the dtype numpy infers, and a strided view (such
//! as `keys[::2]`) a contiguous copy. Other dtypes are refused with a `TypeError` rather than
//! converted, so the key type is always the one the caller chose.
//!
//! The index holds a read-only *view* of the array: `index.keys` cannot be written through. The
//! caller's own array stays writable, and writing to it after building makes answers wrong
//! (never a crash: every read stays within the array, which cannot be resized while viewed).
//!
//! Queries ([`queries`]) are read in place when they have the index's dtype and are contiguous;
//! otherwise they are converted when numpy can do so without losing values (`can_cast` with
//! `casting="safe"`, such as `uint32` queries on a `uint64` index), and refused otherwise (an
//! `int64` array on a `uint64` index: negative values have no place there). Lists and tuples
//! are converted to the index's dtype, raising numpy's `OverflowError` for a value out of range.
//!
//! `float64` keys are in lidx's order, IEEE 754's total order: `-0.0` comes before `0.0` (numpy
//! holds them equal), NaN is refused in keys, and a NaN query goes after every key (before them
//! with its sign bit set). Only there can an answer differ from `numpy.searchsorted`'s.

use lidx::Key;
use numpy::ndarray::Dimension;
use numpy::{
    dtype, Element, PyArray, PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// A key type an index can be built on: a lidx [`Key`] that is also a numpy element.
pub(crate) trait NumKey: Key + Element + for<'py> FromPyObject<'py> {
    /// The key type's code in saved indexes (see `saved.rs`).
    const CODE: u32;
}

impl NumKey for u64 {
    const CODE: u32 = 1;
}
impl NumKey for i64 {
    const CODE: u32 = 2;
}
impl NumKey for f64 {
    const CODE: u32 = 3;
}
impl NumKey for u32 {
    const CODE: u32 = 4;
}

/// The names of the accepted dtypes, for messages.
const KEY_DTYPES: &str = "uint64, int64, float64 or uint32";

/// Sorted keys of one of the four types, as a read-only numpy array.
pub(crate) enum SortedKeys {
    /// `uint64` keys.
    U64(Py<PyArray1<u64>>),
    /// `int64` keys.
    I64(Py<PyArray1<i64>>),
    /// `float64` keys.
    F64(Py<PyArray1<f64>>),
    /// `uint32` keys.
    U32(Py<PyArray1<u32>>),
}

impl SortedKeys {
    /// The keys `obj` holds (see the module docs for when this copies). Their order is checked
    /// by the index built on them.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<SortedKeys> {
        let py = obj.py();
        let np = py.import("numpy")?;
        let array = match obj.downcast::<PyUntypedArray>() {
            Ok(array) => array.clone(),
            Err(_) => np
                .call_method1("asarray", (obj,))?
                .downcast_into::<PyUntypedArray>()?,
        };
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "keys must be a one-dimensional array, got {} dimensions",
                array.ndim()
            )));
        }
        let array = if array.is_c_contiguous() && is_aligned(&array)? {
            array
        } else {
            np.call_method1("ascontiguousarray", (&array,))?
                .downcast_into::<PyUntypedArray>()?
        };
        // A view of our own, made read-only: what `index.keys` returns.
        let view = array.call_method0("view")?;
        view.getattr("flags")?.setattr("writeable", false)?;
        let descr = array.dtype();
        if descr.is_equiv_to(&dtype::<u64>(py)) {
            Ok(SortedKeys::U64(
                view.downcast_into::<PyArray1<u64>>()?.unbind(),
            ))
        } else if descr.is_equiv_to(&dtype::<i64>(py)) {
            Ok(SortedKeys::I64(
                view.downcast_into::<PyArray1<i64>>()?.unbind(),
            ))
        } else if descr.is_equiv_to(&dtype::<f64>(py)) {
            Ok(SortedKeys::F64(
                view.downcast_into::<PyArray1<f64>>()?.unbind(),
            ))
        } else if descr.is_equiv_to(&dtype::<u32>(py)) {
            Ok(SortedKeys::U32(
                view.downcast_into::<PyArray1<u32>>()?.unbind(),
            ))
        } else {
            Err(PyTypeError::new_err(format!(
                "keys of dtype {descr} cannot be indexed; use {KEY_DTYPES} \
                 (for example keys.astype(numpy.uint64))"
            )))
        }
    }
}

/// True when the array's data starts at an address its element type may be read from.
fn is_aligned(array: &Bound<'_, PyUntypedArray>) -> PyResult<bool> {
    array.getattr("flags")?.getattr("aligned")?.extract()
}

/// A read-only array of owned keys (a copy, decoded or generated).
pub(crate) fn owned_array<K: NumKey>(py: Python<'_>, keys: Vec<K>) -> PyResult<Py<PyArray1<K>>> {
    let array = PyArray1::from_vec(py, keys);
    array.getattr("flags")?.setattr("writeable", false)?;
    Ok(array.unbind())
}

/// Calls `f` with the elements of `array`, which must be contiguous (every array this crate
/// reads is, by construction). Errors when Rust code holds the array mutably borrowed.
pub(crate) fn with_slice<K: NumKey, D: Dimension, T>(
    array: &Bound<'_, PyArray<K, D>>,
    f: impl FnOnce(&[K]) -> PyResult<T>,
) -> PyResult<T> {
    let readonly = array
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("the array is in use: {e}")))?;
    f(readonly.as_slice()?)
}

/// True when `obj` is a batch of queries (an array, list or tuple) rather than one key.
pub(crate) fn is_batch(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyUntypedArray>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
}

/// The queries in `obj` as a contiguous array of `K`, read in place or converted as the module
/// docs say.
pub(crate) fn queries<'py, K: NumKey>(
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArrayDyn<K>>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let want = dtype::<K>(py);
    let converted = match obj.downcast::<PyUntypedArray>() {
        Ok(array) => {
            let have = array.dtype();
            if have.is_equiv_to(&want) && array.is_c_contiguous() && is_aligned(array)? {
                return Ok(obj.downcast::<PyArrayDyn<K>>()?.clone());
            }
            let kwargs = PyDict::new(py);
            kwargs.set_item("casting", "safe")?;
            if !np
                .call_method("can_cast", (&have, &want), Some(&kwargs))?
                .is_truthy()?
            {
                return Err(PyTypeError::new_err(format!(
                    "queries of dtype {have} cannot be searched among {want} keys without \
                     losing values; convert them first (queries.astype(numpy.{want}))"
                )));
            }
            np.call_method1("ascontiguousarray", (array, &want))?
        }
        Err(_) => np.call_method1("ascontiguousarray", (obj, &want))?,
    };
    Ok(converted.downcast_into::<PyArrayDyn<K>>()?)
}
