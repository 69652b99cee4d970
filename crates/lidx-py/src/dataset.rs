//! Datasets as numpy arrays: SOSD files (read and written) and lidx's seeded generators.
//!
//! `read_sosd(path, dtype)` reads SOSD's binary layout (a little-endian `u64` count, then the
//! keys) for `uint64`, `uint32`, `int64` and `float64` keys through `lidx_bench::keyfile`,
//! which checks the size against the header (`lidx.CorruptError` otherwise) and the order
//! (`ValueError`); the array owns the keys read, no second copy. `write_sosd(path, keys)`
//! writes the same layout from an array of one of those dtypes, refusing unsorted keys so that
//! what it writes reads back.
//!
//! The generators are `lidx_bench::generate`'s (`uniform-dense`, `uniform-sparse`, `normal`,
//! `lognormal`, `zipf-gaps`, `cells`) and GRE's hardness generator (`lidx_bench::gre`), the
//! same keys as `lidx bench --dataset gen:<name>:<n>` for the same seed.

use std::io::Write;
use std::path::PathBuf;

use lidx::raw::key::check_sorted;
use lidx_bench::generate::Generator;
use lidx_bench::gre::{generate as generate_gre, GreParams};
use lidx_bench::keyfile::{self, Format};
use numpy::{PyArray1, PyArrayDescr};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::error::OrRaise;
use crate::keys::{owned_array, with_slice, NumKey, SortedKeys};

/// read_sosd(path, dtype="uint64") -> numpy.ndarray
///
/// The sorted keys of the SOSD file at `path`, whose items are of `dtype` (uint64, uint32,
/// int64 or float64; the file does not say, so name it).
#[pyfunction]
#[pyo3(signature = (path, dtype = None))]
pub(crate) fn read_sosd(
    py: Python<'_>,
    path: PathBuf,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let name = match dtype {
        None => "uint64".to_string(),
        Some(d) => PyArrayDescr::new(py, d)?.str()?.to_string(),
    };
    let format = match name.as_str() {
        "uint64" => Format::SosdU64,
        "uint32" => Format::SosdU32,
        "int64" => Format::SosdI64,
        "float64" => Format::SosdF64,
        other => {
            return Err(PyTypeError::new_err(format!(
                "SOSD files of {other} cannot be read; use uint64, uint32, int64 or float64"
            )))
        }
    };
    let (keys, _notes) = py
        .allow_threads(|| keyfile::read(format, &path))
        .or_raise()?;
    Ok(match keys {
        keyfile::Keys::U64(k) => owned_array(py, k)?.into_any(),
        keyfile::Keys::U32(k) => owned_array(py, k)?.into_any(),
        keyfile::Keys::I64(k) => owned_array(py, k)?.into_any(),
        keyfile::Keys::F64(k) => owned_array(py, k)?.into_any(),
        other => {
            return Err(PyTypeError::new_err(format!(
                "read {} keys, not numbers",
                other.type_name()
            )))
        }
    })
}

/// write_sosd(path, keys)
///
/// Writes sorted `keys` (a one-dimensional array of uint64, uint32, int64 or float64) to `path`
/// in SOSD's layout, replacing the file.
#[pyfunction]
pub(crate) fn write_sosd(path: PathBuf, keys: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = keys.py();
    match SortedKeys::from_py(keys)? {
        SortedKeys::U64(k) => write_typed(py, &path, k),
        SortedKeys::I64(k) => write_typed(py, &path, k),
        SortedKeys::F64(k) => write_typed(py, &path, k),
        SortedKeys::U32(k) => write_typed(py, &path, k),
    }
}

fn write_typed<K: NumKey>(py: Python<'_>, path: &PathBuf, keys: Py<PyArray1<K>>) -> PyResult<()> {
    with_slice(keys.bind(py), |keys| {
        py.allow_threads(|| -> lidx::Result<()> {
            check_sorted(keys)?;
            let io = |e: std::io::Error| lidx::Error::io(path.display().to_string(), "write", &e);
            let file = std::fs::File::create(path).map_err(io)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            out.write_all(&(keys.len() as u64).to_le_bytes())
                .map_err(io)?;
            let mut item = [0u8; 8];
            for key in keys {
                key.write_to(&mut item[..K::SIZE]);
                out.write_all(&item[..K::SIZE]).map_err(io)?;
            }
            out.into_inner()
                .map_err(|e| io(e.into_error()))?
                .sync_all()
                .map_err(io)
        })
        .or_raise()
    })
}

/// generate(name, n, seed=42) -> numpy.ndarray
///
/// `n` sorted uint64 keys from the generator `name` (uniform-dense, uniform-sparse, normal,
/// lognormal, zipf-gaps, cells), the same for the same seed on every platform.
#[pyfunction]
#[pyo3(signature = (name, n, seed = 42))]
pub(crate) fn generate(py: Python<'_>, name: &str, n: usize, seed: u64) -> PyResult<Py<PyAny>> {
    let generator = Generator::parse(name).or_raise()?;
    let keys = py.allow_threads(|| generator.generate(n, seed));
    Ok(owned_array(py, keys)?.into_any())
}

/// gre(n, local_segments, global_segments, seed=42) -> (numpy.ndarray, int, int)
///
/// GRE's hardness generator: `n` sorted, distinct uint64 keys with about `local_segments`
/// optimal-PLA segments at eps 8 and `global_segments` at eps 512, and the counts they
/// actually have (measured with lidx's optimal PLA).
#[pyfunction]
#[pyo3(signature = (n, local_segments, global_segments, seed = 42))]
pub(crate) fn gre(
    py: Python<'_>,
    n: usize,
    local_segments: usize,
    global_segments: usize,
    seed: u64,
) -> PyResult<(Py<PyAny>, usize, usize)> {
    let params = GreParams {
        local: local_segments,
        global: global_segments,
    };
    let out = py
        .allow_threads(|| generate_gre(params, n, seed))
        .or_raise()?;
    Ok((
        owned_array(py, out.keys)?.into_any(),
        out.local_segments,
        out.global_segments,
    ))
}
