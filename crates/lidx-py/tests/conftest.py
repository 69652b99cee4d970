"""Shared fixtures: small sorted key arrays of every key type, from fixed seeds."""

import numpy as np
import pytest

import lidx

INDEXES = [lidx.PGM, lidx.RadixSpline, lidx.RMI, lidx.BTree]
DTYPES = [np.uint64, np.int64, np.float64, np.uint32]


def sorted_keys(dtype, n=20_000, seed=7):
    """``n`` sorted keys of ``dtype`` with duplicates, spread over much of the type's range."""
    rng = np.random.default_rng(seed)
    if dtype == np.float64:
        keys = rng.lognormal(0.0, 2.0, n) * rng.choice([-1.0, 1.0], n)
    elif dtype == np.int64:
        keys = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    elif dtype == np.uint32:
        keys = rng.integers(0, 2**32 - 1, n, dtype=np.uint32)
    else:
        keys = lidx.datasets.lognormal(n, seed=seed)
    keys = np.sort(keys.astype(dtype))
    keys[n // 2 : n // 2 + 50] = keys[n // 2]  # a run of duplicates
    return keys


def queries_for(keys, n=5_000, seed=11):
    """Present keys, absent keys between them, and the type's extremes."""
    rng = np.random.default_rng(seed)
    dtype = keys.dtype.type
    present = rng.choice(keys, n // 2)
    if dtype == np.float64:
        lo, hi = float(keys[0]) - 1.0, float(keys[-1]) + 1.0
        absent = rng.uniform(lo, hi, n - n // 2)
        extremes = np.array([-np.inf, np.inf, 0.0, lo, hi])
    else:
        info = np.iinfo(dtype)
        absent = rng.integers(info.min, info.max, n - n // 2, dtype=dtype, endpoint=True)
        extremes = np.array([info.min, info.max, 0, 1], dtype=dtype)
    return np.concatenate([present, absent, extremes]).astype(dtype)


@pytest.fixture(params=INDEXES, ids=lambda c: c.__name__)
def index_class(request):
    return request.param


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    return request.param
