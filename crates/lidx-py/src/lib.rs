//! lidx-py: lidx from Python, as the extension module `lidx._lidx` that the package `lidx`
//! (`python/lidx/__init__.py`) re-exports. Built by maturin (`pip install ./crates/lidx-py`),
//! which enables the `extension-module` feature; plain cargo builds link libpython instead.
//!
//! One file per concept, each a thin layer over lidx's public API:
//!
//! * `keys`: numpy arrays as keys, read in place when their layout allows (when they are
//!   copied, and how queries are converted);
//! * `index`: the static indexes `PGM`, `RadixSpline`, `RMI`, `BTree` over a sorted array, all
//!   subclasses of `StaticIndex`: `search`, `lower_bound` (one key, or an array with the GIL
//!   released), `size_in_bytes`, `segments`, pickling;
//! * `saved`: the pickled state, lidx's saved-model format bound to the keys;
//! * `dataset`: SOSD files and the seeded generators as numpy arrays;
//! * `store`: `Store`, `Snapshot`, `WriteBatch` and the range iterator;
//! * `error`: lidx's errors as Python exceptions with lidx's messages.
//!
//! Nothing here panics on user input; should a bug panic anyway, pyo3 raises it as
//! `pyo3_runtime.PanicException` instead of aborting the interpreter.
//!
//! # Updatable maps
//!
//! The updatable ordered maps (ALEX, LIPP, as they land in `lidx::mem`) own their keys and
//! values, so they will not be `StaticIndex` subclasses: they belong in a `map` file of their
//! own, a base class over `Box<dyn lidx::OrderedMap<K, V>>` dispatched on the key type as
//! `index` does (`SortedKeys` for a bulk load from a sorted array, then `get`, `insert`,
//! `remove`, `range`, `__len__`, `size_in_bytes`), with one subclass per map, as here.

mod dataset;
mod error;
mod index;
mod keys;
mod saved;
mod store;

use pyo3::prelude::*;

/// The native module; `import lidx` is the way in.
#[pymodule]
fn _lidx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<index::StaticIndex>()?;
    m.add_class::<index::PyPgm>()?;
    m.add_class::<index::PyRadixSpline>()?;
    m.add_class::<index::PyRmi>()?;
    m.add_class::<index::PyBTree>()?;
    m.add_function(wrap_pyfunction!(index::_restore_index, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::read_sosd, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::write_sosd, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::generate, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::gre, m)?)?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<store::PySnapshot>()?;
    m.add_class::<store::PyBatch>()?;
    m.add_class::<store::PyRange>()?;
    m.add("CorruptError", py.get_type::<error::CorruptError>())?;
    m.add("LockedError", py.get_type::<error::LockedError>())?;
    m.add("NotAStoreError", py.get_type::<error::NotAStoreError>())?;
    m.add("ReadOnlyError", py.get_type::<error::ReadOnlyError>())?;
    Ok(())
}
