"""Type stubs of the native module ``lidx._lidx`` (re-exported by ``lidx``).

Checked against the built module with ``python -m mypy.stubtest lidx._lidx``. Parameter defaults
are ``...`` as the module reports them; their values are in each class's docstring.
"""

from __future__ import annotations

import os
import pathlib
from types import TracebackType
from typing import Iterator, Optional, Sequence, Tuple, Type, Union, final, overload

import numpy as np
import numpy.typing as npt

_Key = Union[int, float]
"""One query: an int for integer keys, a float (or int) for float64 keys."""
_Queries = Union[npt.NDArray[np.generic], Sequence[_Key]]
"""A batch of queries: an array of any shape (of a dtype that converts safely), a list or a tuple."""
_KeyArray = Union[
    npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.uint32]
]
_Bytes = Union[bytes, str]
"""A store key or value: bytes, or str (encoded as UTF-8)."""
_PathLike = Union[str, os.PathLike[str]]

__all__ = [
    "BTree",
    "CorruptError",
    "LockedError",
    "NotAStoreError",
    "PGM",
    "RMI",
    "RadixSpline",
    "RangeIterator",
    "ReadOnlyError",
    "Snapshot",
    "StaticIndex",
    "Store",
    "WriteBatch",
    "_restore_index",
    "generate",
    "gre",
    "read_sosd",
    "write_sosd",
]

class CorruptError(OSError):
    """A file or pickled index is damaged, truncated, or of another kind or version."""

class LockedError(OSError):
    """The store is open for writing by another handle."""

class NotAStoreError(OSError):
    """The directory is not a store (or ``create=False`` and it holds none)."""

class ReadOnlyError(OSError):
    """A write to a store opened with ``read_only=True``."""

class StaticIndex:
    """Base class of the static indexes: a model over sorted keys it reads in place."""

    def search(self, key: _Key) -> Tuple[int, int, int]:
        """``(pos, lo, hi)``: the predicted position and the window ``[lo, hi)`` that holds ``lower_bound(key)``."""
    @overload
    def lower_bound(self, key: _Key) -> int:
        """Position of the first key ``>= key``, as ``numpy.searchsorted(keys, key, side="left")``."""
    @overload
    def lower_bound(self, key: _Queries) -> npt.NDArray[np.int64]:
        """``lower_bound`` of every query, answered with the GIL released, as an int64 array of the
        queries' shape."""
    def size_in_bytes(self) -> int:
        """_Bytes the model keeps in memory, the keys excluded."""
    def segments(self) -> Optional[int]:
        """Models in the bottom level (segments, knots, leaves, samples), or None."""
    def height(self) -> Optional[int]:
        """Levels searched above the keys, or None."""
    @property
    def keys(self) -> _KeyArray:
        """A read-only view of the keys the index reads."""
    def __len__(self) -> int: ...

@final
class PGM(StaticIndex):
    """The PGM-index: piecewise-linear models with at most ``eps`` positions of error."""

    def __new__(cls, keys: Union[_KeyArray, Sequence[_Key]], eps: int = ..., eps_recursive: int = ...) -> PGM: ...

@final
class RadixSpline(StaticIndex):
    """RadixSpline: a spline with at most ``max_error`` positions of error over a radix table."""

    def __new__(
        cls, keys: Union[_KeyArray, Sequence[_Key]], radix_bits: int = ..., max_error: int = ...
    ) -> RadixSpline: ...

@final
class RMI(StaticIndex):
    """A two-stage recursive model index with ``leaves`` linear leaf models."""

    def __new__(cls, keys: Union[_KeyArray, Sequence[_Key]], leaves: int = ...) -> RMI: ...

@final
class BTree(StaticIndex):
    """A B+-tree over every ``every``-th key, used as a model."""

    def __new__(
        cls, keys: Union[_KeyArray, Sequence[_Key]], every: int = ..., node_bytes: int = ...
    ) -> BTree: ...

def _restore_index(state: bytes) -> StaticIndex:
    """Rebuilds a pickled index."""

def read_sosd(path: _PathLike, dtype: Optional[npt.DTypeLike] = None) -> _KeyArray:
    """The sorted keys of an SOSD file of ``dtype`` items (uint64 by default, uint32, int64, float64)."""

def write_sosd(path: _PathLike, keys: _KeyArray) -> None:
    """Writes sorted keys to ``path`` in SOSD's layout."""

def generate(name: str, n: int, seed: int = 42) -> npt.NDArray[np.uint64]:
    """``n`` sorted keys from the generator ``name`` (uniform-dense, uniform-sparse, normal, lognormal, zipf-gaps)."""

def gre(
    n: int, local_segments: int, global_segments: int, seed: int = 42
) -> Tuple[npt.NDArray[np.uint64], int, int]:
    """GRE's hardness generator: the keys and the segment counts at eps 8 and 512 they actually have."""

@final
class RangeIterator(Iterator[Tuple[bytes, bytes]]):
    """``(key, value)`` pairs in key order (or reverse), read from one snapshot."""

    def __iter__(self) -> RangeIterator: ...
    def __next__(self) -> Tuple[bytes, bytes]: ...

@final
class Snapshot:
    """A read view of a store as it was when taken."""

    def get(self, key: _Bytes, default: Optional[bytes] = None) -> Optional[bytes]:
        """The value of ``key`` when the snapshot was taken, or ``default``."""
    def range(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None, reverse: bool = False
    ) -> RangeIterator:
        """Entries with ``start <= key < end`` (None: unbounded)."""

@final
class WriteBatch:
    """Puts and deletes applied together, all or none."""

    def __new__(cls) -> WriteBatch: ...
    def put(self, key: _Bytes, value: _Bytes) -> None:
        """Sets ``key`` to ``value`` when the batch is applied."""
    def delete(self, key: _Bytes) -> None:
        """Removes ``key`` when the batch is applied."""
    def __len__(self) -> int: ...
    def __enter__(self) -> WriteBatch: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool:
        """Applies the batch to its store unless the block raised."""

@final
class Store:
    """A durable, ordered map from byte keys to byte values in a directory."""

    @staticmethod
    def open(
        path: _PathLike,
        *,
        create: bool = True,
        engine: str = "hybrid",
        read_only: bool = False,
        fsync: Union[bool, int, None] = None,
        memory_budget: Optional[int] = None,
        cache_bytes: Optional[int] = None,
        row_cache_bytes: Optional[int] = None,
    ) -> Store:
        """Opens the store in ``path``, creating it when missing or empty and ``create`` is true."""
    def get(self, key: _Bytes, default: Optional[bytes] = None) -> Optional[bytes]:
        """The value of ``key``, or ``default`` when absent."""
    def put(self, key: _Bytes, value: _Bytes) -> None:
        """Sets ``key`` to ``value``."""
    def delete(self, key: _Bytes) -> None:
        """Removes ``key``."""
    def __getitem__(self, key: _Bytes, /) -> bytes: ...
    def __setitem__(self, key: _Bytes, value: _Bytes, /) -> None: ...
    def __delitem__(self, key: _Bytes, /) -> None: ...
    def __contains__(self, key: _Bytes, /) -> bool: ...
    def range(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None, reverse: bool = False
    ) -> RangeIterator:
        """Entries with ``start <= key < end`` (None: unbounded), from a snapshot taken now."""
    def snapshot(self) -> Snapshot:
        """A read view that stays as the store is now."""
    def write_batch(self) -> WriteBatch:
        """A batch applied to this store when its ``with`` block ends without an exception."""
    def write(self, batch: WriteBatch) -> None:
        """Applies ``batch``, all of it or none of it."""
    def stats(self) -> dict[str, Union[str, int, float]]:
        """Memory, disk bytes, merges and stalls now."""
    def sync(self) -> None:
        """Makes every acknowledged write durable."""
    def compact(self) -> None:
        """Folds everything written so far into the store's files."""
    def close(self) -> None:
        """Finishes merges, syncs the log and closes the store."""
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> pathlib.Path: ...
    def __enter__(self) -> Store: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...
