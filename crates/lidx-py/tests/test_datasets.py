"""Generators and SOSD files."""

import numpy as np
import pytest

import lidx
from lidx import datasets


@pytest.mark.parametrize(
    "make", [datasets.uniform_dense, datasets.uniform_sparse, datasets.normal, datasets.lognormal, datasets.zipf_gaps]
)
def test_generators_are_sorted_seeded_uint64(make):
    a, b, c = make(5_000, seed=3), make(5_000, seed=3), make(5_000, seed=4)
    assert a.dtype == np.uint64 and a.shape == (5_000,)
    assert np.all(a[1:] >= a[:-1])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_generate_by_name_and_unknown_names():
    np.testing.assert_array_equal(datasets.generate("lognormal", 100, 9), datasets.lognormal(100, seed=9))
    with pytest.raises(ValueError, match="generator"):
        datasets.generate("pareto", 10)


def test_gre_reports_its_segments():
    keys, local, global_ = datasets.gre(100_000, 200, 10, seed=5)
    assert keys.dtype == np.uint64 and len(keys) == 100_000
    assert np.all(keys[1:] > keys[:-1])
    assert local >= global_ >= 1
    again, _, _ = datasets.gre(100_000, 200, 10, seed=5)
    np.testing.assert_array_equal(keys, again)
    with pytest.raises(ValueError):
        datasets.gre(10, 100, 10)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.float64, np.uint32])
def test_sosd_round_trip(tmp_path, dtype):
    keys = np.sort(np.random.default_rng(1).integers(0, 2**31, 1_000)).astype(dtype)
    path = tmp_path / "keys.sosd"
    datasets.write_sosd(path, keys)
    assert path.stat().st_size == 8 + keys.nbytes
    back = datasets.read_sosd(path, dtype=dtype)
    assert back.dtype == keys.dtype
    np.testing.assert_array_equal(back, keys)
    index = lidx.PGM(back)
    np.testing.assert_array_equal(index.lower_bound(keys), np.searchsorted(keys, keys))


def test_sosd_errors(tmp_path):
    path = tmp_path / "keys.sosd"
    datasets.write_sosd(str(path), np.arange(10, dtype=np.uint64))
    assert datasets.read_sosd(str(path)).dtype == np.uint64  # uint64 by default
    with pytest.raises(lidx.CorruptError):
        datasets.read_sosd(path, dtype="uint32")  # the size does not match the header
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(lidx.CorruptError):
        datasets.read_sosd(path)
    with pytest.raises(FileNotFoundError):
        datasets.read_sosd(tmp_path / "missing.sosd")
    with pytest.raises(ValueError, match="not sorted"):
        datasets.write_sosd(path, np.array([2, 1], dtype=np.uint64))
    with pytest.raises(TypeError):
        datasets.read_sosd(path, dtype="int8")
    unsorted = tmp_path / "unsorted.sosd"
    unsorted.write_bytes(np.array([2, 5, 1], dtype="<u8").tobytes())
    with pytest.raises(ValueError, match="not sorted"):
        datasets.read_sosd(unsorted)
