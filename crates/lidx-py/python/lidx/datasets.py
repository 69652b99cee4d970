"""Datasets as numpy arrays: SOSD files and lidx's seeded generators.

The generators give the same keys as ``lidx bench --dataset gen:<name>:<n>`` with the same seed,
sorted ``uint64`` arrays; ``gre`` is GRE's hardness generator and also returns the segment counts
the keys actually have.
"""

from __future__ import annotations

import numpy as np

from ._lidx import generate, gre, read_sosd, write_sosd

__all__ = [
    "generate",
    "gre",
    "lognormal",
    "normal",
    "read_sosd",
    "uniform_dense",
    "uniform_sparse",
    "write_sosd",
    "zipf_gaps",
]


def uniform_dense(n: int, seed: int = 42) -> np.ndarray:
    """``n`` consecutive integers from a random start below 2**32 (no gaps)."""
    return generate("uniform-dense", n, seed)


def uniform_sparse(n: int, seed: int = 42) -> np.ndarray:
    """``n`` keys uniform over all of uint64, sorted."""
    return generate("uniform-sparse", n, seed)


def normal(n: int, seed: int = 42) -> np.ndarray:
    """``n`` keys ``2**63 + z * 2**59`` with ``z ~ N(0, 1)``, sorted."""
    return generate("normal", n, seed)


def lognormal(n: int, seed: int = 42) -> np.ndarray:
    """``n`` keys ``trunc(x * 1e9)`` with ``x ~ lognormal(0, 2)`` (SOSD's recipe), sorted."""
    return generate("lognormal", n, seed)


def zipf_gaps(n: int, seed: int = 42) -> np.ndarray:
    """``n`` keys whose gaps follow Zipf(2**20, 1.5), from a random start below 2**32."""
    return generate("zipf-gaps", n, seed)
