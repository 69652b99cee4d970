"""lidx from Python: learned indexes over sorted numpy arrays, datasets, and the Store.

Static indexes (``PGM``, ``RadixSpline``, ``RMI``, ``BTree``) are built on a sorted
one-dimensional array of ``uint64``, ``int64``, ``float64`` or ``uint32`` keys, which they read in
place when it is C-contiguous (a list or a strided view is copied once). ``search(key)`` gives
``(pos, lo, hi)`` with ``lo <= lower_bound(key) <= hi``; ``lower_bound`` answers one key or a
whole array of queries (with the GIL released) exactly as
``numpy.searchsorted(keys, queries, side="left")``. Indexes pickle through lidx's saved-model
format, with their keys.

``Store`` is lidx's durable ordered key-value store; ``lidx.datasets`` reads and writes SOSD
files and generates lidx's seeded datasets.

Errors carry lidx's messages: ``ValueError`` for bad input (unsorted keys, NaN, parameters out of
range), ``CorruptError`` (an ``OSError``) for damaged files and pickles, ``LockedError`` for a store
another handle writes, ``NotAStoreError``, ``ReadOnlyError``; OS errors as Python's own.
"""

from . import datasets
from ._lidx import (
    BTree,
    CorruptError,
    LockedError,
    NotAStoreError,
    PGM,
    RadixSpline,
    RangeIterator,
    ReadOnlyError,
    RMI,
    Snapshot,
    StaticIndex,
    Store,
    WriteBatch,
)

__all__ = [
    "BTree",
    "CorruptError",
    "LockedError",
    "NotAStoreError",
    "PGM",
    "RadixSpline",
    "RangeIterator",
    "ReadOnlyError",
    "RMI",
    "Snapshot",
    "StaticIndex",
    "Store",
    "WriteBatch",
    "datasets",
]
