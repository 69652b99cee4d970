//! Static indexes over sorted numpy arrays: the base class `lidx.StaticIndex` and one subclass
//! per model (`PGM`, `RadixSpline`, `RMI`, `BTree`).
//!
//! Every index reads its keys in place (see `keys.rs` for when they are copied) and answers
//! with lidx's window contract: `search(k)` gives `(pos, lo, hi)` with `lo <= lower_bound(k) <=
//! hi`, and `lower_bound(k)` the position of the first key `>= k` (`len(keys)` when none), as
//! `numpy.searchsorted(keys, k, side="left")` does. Given an array, `lower_bound` answers every
//! query with the GIL released and returns an `int64` array of the queries' shape.
//!
//! Inside, a model family ([`Family`]) says how to build its lidx model for any key type; the
//! four key types are dispatched once, when an index is built or unpickled, into an
//! [`Indexed`] behind the object-safe [`DynIndex`], so the methods are written once on the
//! base class. Pickling goes through `saved.rs`: lidx's saved-model format bound to the keys.

use lidx::mem::BTreeParams;
use lidx::mem::Persist;
use lidx::mem::{BTreeModel, BTreeModelParams};
use lidx::mem::{Pgm, PgmParams};
use lidx::mem::{RadixSpline, RadixSplineParams};
use lidx::mem::{Rmi, RmiParams};
use lidx::{ApproxPos, Shape};
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::PyClass;

use crate::error::OrRaise;
use crate::keys::{self, with_slice, NumKey, SortedKeys};
use crate::saved::{self, Saved};

/// A kind of model, as a Python subclass of `StaticIndex`: how it is built for every key type.
pub(crate) trait Family: PyClass<BaseType = StaticIndex> + Default {
    /// The lidx model over keys of type `K`.
    type Model<K: NumKey>: Persist<K> + 'static;
    /// What the constructor takes besides the keys.
    type Params: Copy + Send + Sync;

    /// Builds the model on sorted `keys`.
    fn build<K: NumKey>(keys: &[K], params: Self::Params) -> lidx::Result<Self::Model<K>>;
}

/// The model kind ([`Persist::KIND`]) of a family, the same for every key type.
fn kind<F: Family>() -> u32 {
    <F::Model<u64> as Persist<u64>>::KIND
}

/// What [`bind`] does with the keys to get a model: build it, or decode a pickled one.
trait Make<F: Family>: Sync {
    fn make<K: NumKey>(&self, keys: &[K]) -> lidx::Result<F::Model<K>>;
}

/// Builds with the given parameters.
struct Build<P>(P);

impl<F: Family> Make<F> for Build<F::Params> {
    fn make<K: NumKey>(&self, keys: &[K]) -> lidx::Result<F::Model<K>> {
        F::build(keys, self.0)
    }
}

/// Decodes a pickled model.
struct Restore<'a>(&'a Saved<'a>);

impl<F: Family> Make<F> for Restore<'_> {
    fn make<K: NumKey>(&self, _keys: &[K]) -> lidx::Result<F::Model<K>> {
        self.0.model::<K, F::Model<K>>()
    }
}

/// The index over `keys` that `make` gives, dispatched on the key type.
fn bind<F: Family>(
    py: Python<'_>,
    keys: SortedKeys,
    make: &impl Make<F>,
) -> PyResult<Box<dyn DynIndex>> {
    match keys {
        SortedKeys::U64(keys) => bind_typed::<F, u64>(py, keys, make),
        SortedKeys::I64(keys) => bind_typed::<F, i64>(py, keys, make),
        SortedKeys::F64(keys) => bind_typed::<F, f64>(py, keys, make),
        SortedKeys::U32(keys) => bind_typed::<F, u32>(py, keys, make),
    }
}

fn bind_typed<F: Family, K: NumKey>(
    py: Python<'_>,
    keys: Py<PyArray1<K>>,
    make: &impl Make<F>,
) -> PyResult<Box<dyn DynIndex>> {
    let model = with_slice(keys.bind(py), |slice| {
        py.allow_threads(|| make.make(slice)).or_raise()
    })?;
    Ok(Box::new(Indexed { keys, model }))
}

/// An index as the base class sees it, whatever its model and key type.
pub(crate) trait DynIndex: Send + Sync {
    /// The window of one key.
    fn search(&self, key: &Bound<'_, PyAny>) -> PyResult<ApproxPos>;
    /// `lower_bound` of one key.
    fn lower_bound(&self, key: &Bound<'_, PyAny>) -> PyResult<usize>;
    /// `lower_bound` of every query, with the GIL released, as an `int64` array.
    fn lower_bound_batch<'py>(&self, queries: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>>;
    /// The keys, a read-only array.
    fn keys<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny>;
    /// Number of keys.
    fn len(&self) -> usize;
    /// Bytes of the model, the keys excluded.
    fn size_in_bytes(&self) -> usize;
    /// Segments and height, where the model has them.
    fn shape(&self) -> Shape;
    /// The pickled state (`saved.rs`).
    fn state(&self, py: Python<'_>) -> PyResult<Vec<u8>>;
}

/// A model of type `M` over the keys it was built on.
struct Indexed<K: NumKey, M> {
    keys: Py<PyArray1<K>>,
    model: M,
}

impl<K: NumKey, M: Persist<K>> DynIndex for Indexed<K, M> {
    fn search(&self, key: &Bound<'_, PyAny>) -> PyResult<ApproxPos> {
        Ok(self.model.search(key.extract()?))
    }

    fn lower_bound(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = key.py();
        let key: K = key.extract()?;
        with_slice(self.keys.bind(py), |keys| {
            Ok(self.model.lower_bound(keys, key))
        })
    }

    fn lower_bound_batch<'py>(&self, queries: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = queries.py();
        let queries = keys::queries::<K>(queries)?;
        let out = PyArrayDyn::<i64>::zeros(py, queries.shape(), false);
        with_slice(self.keys.bind(py), |keys| {
            with_slice(&queries, |queries| {
                let mut out = out.try_readwrite().map_err(|e| {
                    pyo3::exceptions::PyValueError::new_err(format!("the array is in use: {e}"))
                })?;
                let out = out.as_slice_mut()?;
                py.allow_threads(|| {
                    for (pos, &key) in out.iter_mut().zip(queries) {
                        *pos = self.model.lower_bound(keys, key) as i64;
                    }
                });
                Ok(())
            })
        })?;
        Ok(out.into_any())
    }

    fn keys<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.keys.bind(py).clone().into_any()
    }

    fn len(&self) -> usize {
        self.model.len()
    }

    fn size_in_bytes(&self) -> usize {
        self.model.size_in_bytes()
    }

    fn shape(&self) -> Shape {
        self.model.shape()
    }

    fn state(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        with_slice(self.keys.bind(py), |keys| {
            Ok(saved::encode(keys, &self.model))
        })
    }
}

/// The base class of every static index: the methods, written once.
#[pyclass(subclass, frozen, module = "lidx")]
pub(crate) struct StaticIndex {
    inner: Box<dyn DynIndex>,
}

#[pymethods]
impl StaticIndex {
    /// search(key) -> (pos, lo, hi)
    ///
    /// The model's predicted position of `key` and the half-open window `[lo, hi)` the index
    /// guarantees: `lo <= lower_bound(key) <= hi`.
    fn search(&self, key: &Bound<'_, PyAny>) -> PyResult<(usize, usize, usize)> {
        let w = self.inner.search(key)?;
        Ok((w.pos, w.lo, w.hi))
    }

    /// lower_bound(key) -> int, or lower_bound(queries) -> numpy.ndarray
    ///
    /// The position of the first key `>= key` (`len(index)` when none), as
    /// `numpy.searchsorted(keys, key, side="left")`. Given an array, list or tuple, answers every
    /// query with the GIL released and returns an `int64` array of the same shape.
    fn lower_bound<'py>(&self, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if keys::is_batch(key) {
            self.inner.lower_bound_batch(key)
        } else {
            Ok(self
                .inner
                .lower_bound(key)?
                .into_pyobject(key.py())?
                .into_any())
        }
    }

    /// Bytes the model keeps in memory, the keys excluded.
    fn size_in_bytes(&self) -> usize {
        self.inner.size_in_bytes()
    }

    /// Number of models in the bottom level (segments, spline knots, leaves, samples), or None
    /// where the index has no such number.
    fn segments(&self) -> Option<usize> {
        self.inner.shape().segments
    }

    /// Number of levels searched above the keys, or None where the index has no such number.
    fn height(&self) -> Option<usize> {
        self.inner.shape().height
    }

    /// The keys the index was built on: a read-only view of the array it reads.
    #[getter]
    fn keys<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.inner.keys(py)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        Ok(format!(
            "{}(len={}, dtype={}, size_in_bytes={})",
            slf.get_type().qualname()?,
            this.inner.len(),
            this.inner.keys(slf.py()).getattr("dtype")?,
            this.inner.size_in_bytes()
        ))
    }

    /// Pickles the index as lidx's saved model with its keys (see `saved.rs`).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let restore = py.import("lidx._lidx")?.getattr("_restore_index")?;
        let state = self.inner.state(py)?;
        Ok((restore, (PyBytes::new(py, &state),)))
    }
}

/// Rebuilds a pickled index (what `StaticIndex.__reduce__` names).
#[pyfunction]
pub(crate) fn _restore_index(py: Python<'_>, state: &[u8]) -> PyResult<Py<PyAny>> {
    let saved = saved::parse(state).or_raise()?;
    let k = saved.kind;
    if k == kind::<PyPgm>() {
        restore::<PyPgm>(py, &saved)
    } else if k == kind::<PyRadixSpline>() {
        restore::<PyRadixSpline>(py, &saved)
    } else if k == kind::<PyRmi>() {
        restore::<PyRmi>(py, &saved)
    } else if k == kind::<PyBTree>() {
        restore::<PyBTree>(py, &saved)
    } else {
        Err(lidx::Error::Corrupt {
            file: "<pickled lidx index>".into(),
            block: None,
            what: format!("model kind {k} is not one the Python bindings build"),
        })
        .or_raise()
    }
}

fn restore<F: Family>(py: Python<'_>, saved: &Saved<'_>) -> PyResult<Py<PyAny>> {
    let keys = saved.sorted_keys(py)?;
    let inner = bind::<F>(py, keys, &Restore(saved))?;
    instance::<F>(py, inner)
}

/// A new Python object of family `F` over `inner`.
fn instance<F: Family>(py: Python<'_>, inner: Box<dyn DynIndex>) -> PyResult<Py<PyAny>> {
    let init = PyClassInitializer::from(StaticIndex { inner }).add_subclass(F::default());
    Ok(Py::new(py, init)?.into_any())
}

/// The base part of a new index of family `F` built on `keys`.
fn build<F: Family>(keys: &Bound<'_, PyAny>, params: F::Params) -> PyResult<StaticIndex> {
    let sorted = SortedKeys::from_py(keys)?;
    let inner = bind::<F>(keys.py(), sorted, &Build(params))?;
    Ok(StaticIndex { inner })
}

/// PGM(keys, eps=64, eps_recursive=8)
///
/// The PGM-index (Ferragina and Vinciguerra): optimal piecewise-linear models with at most
/// `eps` positions of error, recursively indexed with `eps_recursive`. A larger `eps` means
/// fewer segments (less memory) but a wider window to search. `keys`: a sorted one-dimensional
/// array of uint64, int64, float64 or uint32, read in place when contiguous.
#[pyclass(extends = StaticIndex, frozen, module = "lidx", name = "PGM")]
#[derive(Default)]
pub(crate) struct PyPgm;

impl Family for PyPgm {
    type Model<K: NumKey> = Pgm<K>;
    type Params = PgmParams;
    fn build<K: NumKey>(keys: &[K], params: PgmParams) -> lidx::Result<Pgm<K>> {
        Pgm::build(keys, params)
    }
}

#[pymethods]
impl PyPgm {
    #[new]
    #[pyo3(signature = (keys, eps = PgmParams::default().eps, eps_recursive = PgmParams::default().eps_recursive))]
    fn new(
        keys: &Bound<'_, PyAny>,
        eps: usize,
        eps_recursive: usize,
    ) -> PyResult<(Self, StaticIndex)> {
        Ok((
            Self,
            build::<Self>(keys, PgmParams::new(eps, eps_recursive))?,
        ))
    }
}

/// RadixSpline(keys, radix_bits=18, max_error=32)
///
/// RadixSpline (Kipf et al.): a linear spline through the keys' CDF with at most `max_error`
/// positions of error, its knots found through a radix table of `2**radix_bits` entries. More
/// bits cost memory and narrow the search among knots; a larger error means fewer knots but a
/// wider window.
#[pyclass(extends = StaticIndex, frozen, module = "lidx", name = "RadixSpline")]
#[derive(Default)]
pub(crate) struct PyRadixSpline;

impl Family for PyRadixSpline {
    type Model<K: NumKey> = RadixSpline<K>;
    type Params = RadixSplineParams;
    fn build<K: NumKey>(keys: &[K], params: RadixSplineParams) -> lidx::Result<RadixSpline<K>> {
        RadixSpline::build(keys, params)
    }
}

#[pymethods]
impl PyRadixSpline {
    #[new]
    #[pyo3(signature = (keys, radix_bits = RadixSplineParams::default().radix_bits, max_error = RadixSplineParams::default().max_error))]
    fn new(
        keys: &Bound<'_, PyAny>,
        radix_bits: usize,
        max_error: usize,
    ) -> PyResult<(Self, StaticIndex)> {
        Ok((
            Self,
            build::<Self>(keys, RadixSplineParams::new(radix_bits, max_error))?,
        ))
    }
}

/// RMI(keys, leaves=2**20)
///
/// A two-stage recursive model index (Kraska et al.): a root model picks one of `leaves`
/// linear models, each of which records its own maximum error. More leaves (48 bytes each)
/// give narrower windows until the leaves stop fitting in cache; never more leaves than keys.
#[pyclass(extends = StaticIndex, frozen, module = "lidx", name = "RMI")]
#[derive(Default)]
pub(crate) struct PyRmi;

impl Family for PyRmi {
    type Model<K: NumKey> = Rmi;
    type Params = RmiParams;
    fn build<K: NumKey>(keys: &[K], params: RmiParams) -> lidx::Result<Rmi> {
        Rmi::build(keys, params)
    }
}

#[pymethods]
impl PyRmi {
    #[new]
    #[pyo3(signature = (keys, leaves = RmiParams::default().leaves))]
    fn new(keys: &Bound<'_, PyAny>, leaves: usize) -> PyResult<(Self, StaticIndex)> {
        Ok((Self, build::<Self>(keys, RmiParams::new(leaves))?))
    }
}

/// BTree(keys, every=256, node_bytes=256)
///
/// A B+-tree over every `every`-th key, used as a model (the baseline of the learned-index
/// papers): its window is at most `every` positions. Larger strides shrink the tree but widen
/// the window; `node_bytes` is the byte budget of a tree node.
#[pyclass(extends = StaticIndex, frozen, module = "lidx", name = "BTree")]
#[derive(Default)]
pub(crate) struct PyBTree;

impl Family for PyBTree {
    type Model<K: NumKey> = BTreeModel<K>;
    type Params = BTreeModelParams;
    fn build<K: NumKey>(keys: &[K], params: BTreeModelParams) -> lidx::Result<BTreeModel<K>> {
        BTreeModel::build(keys, params)
    }
}

#[pymethods]
impl PyBTree {
    #[new]
    #[pyo3(signature = (keys, every = BTreeModelParams::default().every, node_bytes = BTreeParams::default().node_bytes))]
    fn new(
        keys: &Bound<'_, PyAny>,
        every: usize,
        node_bytes: usize,
    ) -> PyResult<(Self, StaticIndex)> {
        let params = BTreeModelParams {
            every,
            tree: BTreeParams::with_node_bytes(node_bytes),
        };
        Ok((Self, build::<Self>(keys, params)?))
    }
}
