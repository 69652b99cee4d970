//! The store from Python: `lidx.Store`, its `Snapshot`, `WriteBatch` and range iterator.
//!
//! A thin layer over `lidx::kv::Store`: keys are `bytes` or `str` (encoded as UTF-8), values
//! `bytes` or `str`; what comes back is always `bytes`. Every call that may wait for the disk
//! (`get`, `put`, `delete`, writing a batch, each step of a range, `sync`, `compact`, `close`)
//! releases the GIL, so Python threads share one store as Rust threads do.
//!
//! `Store.open` opens the store in a directory, or creates it there when the directory is
//! missing or empty (unless `create=False`). `close()` (or leaving a `with` block) finishes
//! merges and syncs the log; a closed store raises `ValueError` on use, as a closed file does.
//! The handle is behind a lock taken only with the GIL released, so that a thread closing the
//! store never waits for a thread that waits for the GIL.
//!
//! `range(start, end)` is half-open, `None` for no bound, and reads one snapshot; a
//! `write_batch()` is applied when its `with` block ends without an exception, all of it or
//! (after a crash too) none of it.

use std::ops::Bound as Edge;
use std::path::PathBuf;

use lidx::kv::FsyncPolicy;
use lidx::kv::Range;
use lidx::kv::{CreateOptions, Engine, Snapshot, Store, StoreOptions, WriteBatch};
use lidx::raw::kv::store::STORE_FILE;
use parking_lot::{Mutex, RwLock};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::error::{NotAStoreError, OrRaise};

/// The bytes of a key or value given as `bytes` or `str`.
fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a [u8]> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        Ok(b.as_bytes())
    } else if let Ok(s) = obj.downcast::<PyString>() {
        Ok(s.to_str()?.as_bytes())
    } else {
        Err(PyTypeError::new_err(format!(
            "a {what} must be bytes or str, not {}",
            obj.get_type().name()?
        )))
    }
}

/// The value `lookup` finds for `key` as `bytes`, or `default` when there is none.
fn value_or<'py>(
    key: &Bound<'py, PyAny>,
    default: Option<Bound<'py, PyAny>>,
    lookup: impl FnOnce(Python<'py>, &[u8]) -> PyResult<Option<Vec<u8>>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = key.py();
    Ok(match lookup(py, bytes_of(key, "key")?)? {
        Some(value) => Some(PyBytes::new(py, &value).into_any()),
        None => default,
    })
}

/// The optional bound of a range.
fn edge<'a>(obj: &'a Option<Bound<'_, PyAny>>, included: bool) -> PyResult<Edge<&'a [u8]>> {
    Ok(match obj {
        None => Edge::Unbounded,
        Some(key) if included => Edge::Included(bytes_of(key, "key")?),
        Some(key) => Edge::Excluded(bytes_of(key, "key")?),
    })
}

/// The fsync policy a Python value names: `True` (after every write), `False` (never), or a
/// number of milliseconds between background syncs.
fn fsync_policy(obj: &Bound<'_, PyAny>) -> PyResult<FsyncPolicy> {
    if let Ok(flag) = obj.extract::<bool>() {
        return Ok(if flag {
            FsyncPolicy::Always
        } else {
            FsyncPolicy::Never
        });
    }
    match obj.extract::<u64>() {
        Ok(ms) if ms >= 1 => Ok(FsyncPolicy::EveryMs(ms)),
        _ => Err(PyValueError::new_err(
            "fsync must be True (after every write), False (never) or a number of milliseconds >= 1",
        )),
    }
}

/// The error of a store used after `close()`.
fn closed() -> PyErr {
    PyValueError::new_err("the store is closed")
}

/// Store.open(path, *, create=True, engine="hybrid", read_only=False, fsync=True, memory_budget=None, cache_bytes=None, row_cache_bytes=None)
///
/// A durable, ordered map from byte keys (1 to 4096 bytes) to byte values (up to 16 MiB) in a
/// directory. Use it as a context manager, or call close().
#[pyclass(module = "lidx", name = "Store", frozen)]
pub(crate) struct PyStore {
    store: RwLock<Option<Store>>,
    path: PathBuf,
}

impl PyStore {
    /// Runs `f` on the open store with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Store) -> lidx::Result<T> + Send,
    ) -> PyResult<T> {
        py.allow_threads(|| self.store.read().as_ref().map(f))
            .ok_or_else(closed)?
            .or_raise()
    }
}

#[pymethods]
impl PyStore {
    /// Opens the store in `path`; creates one there when `path` is missing or empty and
    /// `create` is true. `engine` ("hybrid", "btree" or "log:<map>", e.g. "log:btree",
    /// whose keys are 8 bytes) applies to a new store only; an
    /// existing one opens with the engine it was created with. `fsync`: True acknowledges a
    /// write after it is on disk, False never syncs (until close), a number of milliseconds
    /// syncs in the background that often. `memory_budget` and `cache_bytes` (the block
    /// cache) in bytes; `row_cache_bytes`, a cache of records (key to value) in front of the
    /// engine, off by default.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)] // one per keyword argument of `Store.open`
    #[pyo3(signature = (path, *, create = true, engine = "hybrid", read_only = false, fsync = None, memory_budget = None, cache_bytes = None, row_cache_bytes = None))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        create: bool,
        engine: &str,
        read_only: bool,
        fsync: Option<&Bound<'_, PyAny>>,
        memory_budget: Option<usize>,
        cache_bytes: Option<usize>,
        row_cache_bytes: Option<usize>,
    ) -> PyResult<PyStore> {
        let engine = Engine::parse(engine).ok_or_else(|| {
            PyValueError::new_err(format!(
                "engine {engine:?} is unknown; use {}",
                Engine::forms()
            ))
        })?;
        let defaults = StoreOptions::default();
        let options = StoreOptions {
            fsync: fsync
                .map(fsync_policy)
                .transpose()?
                .unwrap_or(defaults.fsync),
            memory_budget: memory_budget.unwrap_or(defaults.memory_budget),
            cache_bytes: cache_bytes.unwrap_or(defaults.cache_bytes),
            row_cache_bytes: row_cache_bytes.unwrap_or(defaults.row_cache_bytes),
            read_only,
            ..defaults
        };
        let exists = path.join(STORE_FILE).exists();
        if !exists && !create {
            return Err(NotAStoreError::new_err(format!(
                "{} holds no store and create=False",
                path.display()
            )));
        }
        let store = py
            .allow_threads(|| {
                if exists {
                    Store::open(&path, &options)
                } else {
                    let create = CreateOptions {
                        engine,
                        ..CreateOptions::default()
                    };
                    Store::create(&path, &create, &options)
                }
            })
            .or_raise()?;
        Ok(PyStore {
            store: RwLock::new(Some(store)),
            path,
        })
    }

    /// get(key, default=None) -> bytes | None: the value of `key`, or `default` when absent.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        value_or(key, default, |py, key| self.with(py, |s| s.get(key)))
    }

    /// put(key, value): sets `key` to `value`; returns once the write is acknowledged.
    fn put(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
        self.with(key.py(), |s| s.put(k, v))
    }

    /// delete(key): removes `key` (an absent key too).
    fn delete(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        self.with(key.py(), |s| s.delete(k))
    }

    fn __getitem__<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.get(key, None)?
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value)
    }

    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(key)
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get(key, None)?.is_some())
    }

    /// range(start=None, end=None, reverse=False) -> iterator of (key, value)
    ///
    /// The entries with `start <= key < end` (None: unbounded), in key order (descending with
    /// `reverse`), read from one snapshot taken now.
    #[pyo3(signature = (start = None, end = None, reverse = false))]
    fn range(
        &self,
        py: Python<'_>,
        start: Option<Bound<'_, PyAny>>,
        end: Option<Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyRange> {
        let snapshot = self.with(py, |s| Ok(s.snapshot()))?;
        range_of(&snapshot, &start, &end, reverse)
    }

    /// snapshot() -> Snapshot: a read view that stays as the store is now.
    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        Ok(PySnapshot {
            snapshot: self.with(py, |s| Ok(s.snapshot()))?,
        })
    }

    /// write_batch() -> WriteBatch: a batch applied to this store, all of it or none, when its
    /// `with` block ends without an exception.
    fn write_batch(slf: &Bound<'_, Self>) -> PyBatch {
        PyBatch {
            batch: Mutex::new(WriteBatch::new()),
            store: Some(slf.clone().unbind()),
        }
    }

    /// write(batch): applies `batch`, all of it or (after a crash too) none of it.
    fn write(&self, py: Python<'_>, batch: &PyBatch) -> PyResult<()> {
        // The batch's lock is taken with the GIL released, as the store's is (module docs).
        self.with(py, |s| s.write(&batch.batch.lock()))
    }

    /// stats() -> dict: memory, disk bytes, merges and stalls now.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.with(py, |s| Ok(s.stats()))?;
        let d = PyDict::new(py);
        d.set_item("engine", s.engine)?;
        d.set_item("dynamic_keys", s.dynamic_keys)?;
        d.set_item("dynamic_bytes", s.dynamic_bytes)?;
        d.set_item("table_records", s.table_records)?;
        d.set_item("table_key_bytes", s.table_key_bytes)?;
        d.set_item("table_value_bytes", s.table_value_bytes)?;
        d.set_item("model_bytes", s.model_bytes)?;
        d.set_item("cache_bytes", s.cache_bytes)?;
        d.set_item("row_cache_bytes", s.row_cache_bytes)?;
        d.set_item("row_cache_records", s.row_cache_records)?;
        d.set_item("memory_bytes", s.memory_bytes)?;
        d.set_item("table_disk_bytes", s.table_disk_bytes)?;
        d.set_item("free_disk_bytes", s.free_disk_bytes)?;
        d.set_item("log_disk_bytes", s.log_disk_bytes)?;
        d.set_item("log_live_bytes", s.log_live_bytes)?;
        d.set_item("log_relocated_bytes", s.log_relocated_bytes)?;
        d.set_item("lsm_runs", s.lsm_runs)?;
        d.set_item("lsm_levels", s.lsm_levels)?;
        d.set_item("filter_bytes", s.filter_bytes)?;
        d.set_item("shed_filter_runs", s.shed_filter_runs)?;
        d.set_item("lsm_written_bytes", s.lsm_written_bytes)?;
        d.set_item("compaction_bytes", s.compaction_bytes)?;
        d.set_item("moved_bytes", s.moved_bytes)?;
        d.set_item("value_log_segments", s.value_log_segments)?;
        d.set_item("value_log_bytes", s.value_log_bytes)?;
        d.set_item("value_log_live_bytes", s.value_log_live_bytes)?;
        d.set_item("merges", s.merges)?;
        d.set_item("merge_seconds", s.merge_seconds)?;
        d.set_item("write_stalls", s.write_stalls)?;
        d.set_item("stall_seconds", s.stall_seconds)?;
        d.set_item("recovered_records", s.recovered_records)?;
        d.set_item("recovery_seconds", s.recovery_seconds)?;
        Ok(d)
    }

    /// sync(): makes every acknowledged write durable, whatever the fsync policy.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, Store::sync)
    }

    /// compact(): folds everything written so far into the store's files and waits for it.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, Store::compact)
    }

    /// close(): finishes merges, syncs the log and closes the store. Closing twice is a no-op.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.store.write().take().map_or(Ok(()), Store::close))
            .or_raise()
    }

    /// True once closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.allow_threads(|| self.store.read().is_none())
    }

    /// The store's directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("Store({:?})", self.path.display().to_string())
    }
}

/// A range iterator over `snapshot`.
fn range_of(
    snapshot: &Snapshot,
    start: &Option<Bound<'_, PyAny>>,
    end: &Option<Bound<'_, PyAny>>,
    reverse: bool,
) -> PyResult<PyRange> {
    let bounds = (edge(start, true)?, edge(end, false)?);
    let range = if reverse {
        snapshot.range_rev(bounds)
    } else {
        snapshot.range(bounds)
    };
    Ok(PyRange {
        range: Mutex::new(range),
    })
}

/// A consistent read view of a store: every read sees the store as it was when taken.
#[pyclass(module = "lidx", name = "Snapshot", frozen)]
pub(crate) struct PySnapshot {
    snapshot: Snapshot,
}

#[pymethods]
impl PySnapshot {
    /// get(key, default=None) -> bytes | None: the value of `key` when the snapshot was taken.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        value_or(key, default, |py, key| {
            py.allow_threads(|| self.snapshot.get(key)).or_raise()
        })
    }

    /// range(start=None, end=None, reverse=False) -> iterator of (key, value), as of the snapshot.
    #[pyo3(signature = (start = None, end = None, reverse = false))]
    fn range(
        &self,
        start: Option<Bound<'_, PyAny>>,
        end: Option<Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyRange> {
        range_of(&self.snapshot, &start, &end, reverse)
    }
}

/// An iterator of `(key, value)` pairs of `bytes`, in key order (or reverse), from one snapshot.
#[pyclass(module = "lidx", name = "RangeIterator", frozen)]
pub(crate) struct PyRange {
    range: Mutex<Range>,
}

#[pymethods]
impl PyRange {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let entry = py
            .allow_threads(|| self.range.lock().next_entry())
            .or_raise()?;
        Ok(entry.map(|(k, v)| (PyBytes::new(py, &k), PyBytes::new(py, &v))))
    }
}

/// WriteBatch(): puts and deletes applied together, all or none. From `Store.write_batch()`
/// it is applied when its `with` block ends without an exception; a batch made with
/// `WriteBatch()` is applied with `Store.write(batch)`.
#[pyclass(module = "lidx", name = "WriteBatch", frozen)]
pub(crate) struct PyBatch {
    batch: Mutex<WriteBatch>,
    store: Option<Py<PyStore>>,
}

#[pymethods]
impl PyBatch {
    #[new]
    fn new() -> Self {
        PyBatch {
            batch: Mutex::new(WriteBatch::new()),
            store: None,
        }
    }

    /// put(key, value): sets `key` to `value` when the batch is applied.
    fn put(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
        self.batch.lock().put(k, v).or_raise().map(drop)
    }

    /// delete(key): removes `key` when the batch is applied.
    fn delete(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        self.batch.lock().delete(k).or_raise().map(drop)
    }

    fn __len__(&self) -> usize {
        self.batch.lock().len()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if exc_type.is_none() {
            let store = self.store.as_ref().ok_or_else(|| {
                PyValueError::new_err(
                    "this batch belongs to no store; apply it with Store.write(batch)",
                )
            })?;
            store.get().write(py, self)?;
        }
        Ok(false)
    }
}
