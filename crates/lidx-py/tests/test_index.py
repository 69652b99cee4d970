"""Static indexes against numpy.searchsorted: every class, key type, and the edge cases."""

import pickle
import threading

import numpy as np
import pytest

import lidx
from conftest import INDEXES, queries_for, sorted_keys


def expect(keys, queries):
    return np.searchsorted(keys, queries, side="left")


def test_vectorized_lower_bound_matches_searchsorted(index_class, dtype):
    keys = sorted_keys(dtype)
    index = index_class(keys)
    queries = queries_for(keys)
    got = index.lower_bound(queries)
    assert got.dtype == np.int64
    assert got.shape == queries.shape
    np.testing.assert_array_equal(got, expect(keys, queries))


def test_scalar_lower_bound_and_search_window(index_class, dtype):
    keys = sorted_keys(dtype, n=3_000)
    index = index_class(keys)
    for q in queries_for(keys, n=300):
        q = q.item()
        want = int(expect(keys, q))
        assert index.lower_bound(q) == want
        pos, lo, hi = index.search(q)
        assert lo <= want <= hi <= len(keys)
        assert lo <= pos <= hi


@pytest.mark.parametrize("keys", [[], [5], [5, 5, 5, 5], [0, 2**64 - 1], [0, 0, 1, 2**64 - 1, 2**64 - 1]])
def test_small_and_extreme_key_sets(index_class, keys):
    keys = np.array(keys, dtype=np.uint64)
    index = index_class(keys)
    queries = np.array([0, 1, 4, 5, 6, 2**63, 2**64 - 2, 2**64 - 1], dtype=np.uint64)
    np.testing.assert_array_equal(index.lower_bound(queries), expect(keys, queries))
    assert len(index) == len(keys)


def test_queries_of_any_shape_list_and_safe_dtype(index_class):
    keys = sorted_keys(np.uint64)
    index = index_class(keys)
    grid = queries_for(keys, n=600)[:600].reshape(20, 30)
    np.testing.assert_array_equal(index.lower_bound(grid), expect(keys, grid))
    as_list = [int(q) for q in grid[0]]
    np.testing.assert_array_equal(index.lower_bound(as_list), expect(keys, grid[0]))
    small = np.array([0, 7, 2**31], dtype=np.uint32)  # uint32 -> uint64 loses nothing
    np.testing.assert_array_equal(index.lower_bound(small), expect(keys, small.astype(np.uint64)))
    strided = grid[:, ::3]
    np.testing.assert_array_equal(index.lower_bound(strided), expect(keys, strided))
    assert index.lower_bound(np.array([], dtype=np.uint64)).shape == (0,)


def test_unsafe_query_dtype_is_refused():
    index = lidx.PGM(np.arange(10, dtype=np.uint64))
    with pytest.raises(TypeError, match="without losing values"):
        index.lower_bound(np.array([-1, 3], dtype=np.int64))
    with pytest.raises(OverflowError):
        index.lower_bound([-1])
    with pytest.raises(OverflowError):
        index.lower_bound(-1)


def test_contiguous_keys_are_read_in_place_and_views_copied(index_class):
    keys = np.arange(0, 3000, 3, dtype=np.uint64)
    index = index_class(keys)
    assert np.shares_memory(index.keys, keys)
    assert not index.keys.flags.writeable
    assert keys.flags.writeable  # the caller's array is left as it was
    strided = keys[::2]
    copied = index_class(strided)
    assert not np.shares_memory(copied.keys, keys)
    q = np.arange(0, 3100, 7, dtype=np.uint64)
    np.testing.assert_array_equal(copied.lower_bound(q), expect(strided, q))
    from_list = index_class([1, 2, 3])
    assert from_list.keys.dtype == np.int64
    assert from_list.lower_bound(2) == 1


def test_bad_keys_raise_value_or_type_errors(index_class):
    with pytest.raises(ValueError, match="not sorted"):
        index_class(np.array([3, 2, 1], dtype=np.uint64))
    with pytest.raises(ValueError, match="cannot be indexed"):
        index_class(np.array([1.0, np.nan], dtype=np.float64))
    with pytest.raises(ValueError, match="one-dimensional"):
        index_class(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(TypeError, match="dtype"):
        index_class(np.arange(5, dtype=np.int16))


def test_bad_parameters_raise_value_error():
    keys = np.arange(100, dtype=np.uint64)
    with pytest.raises(ValueError, match="radix_bits"):
        lidx.RadixSpline(keys, radix_bits=40)
    with pytest.raises(ValueError, match="leaves"):
        lidx.RMI(keys, leaves=0)
    with pytest.raises(ValueError, match="every"):
        lidx.BTree(keys, every=0)
    with pytest.raises(ValueError, match="eps"):
        lidx.PGM(keys, eps=2**40)


def test_parameters_change_the_model():
    keys = sorted_keys(np.uint64, n=50_000)
    fine, coarse = lidx.PGM(keys, eps=8), lidx.PGM(keys, eps=256)
    assert fine.segments() > coarse.segments()
    assert fine.size_in_bytes() > coarse.size_in_bytes() > 0
    _, lo, hi = coarse.search(int(keys[100]))
    assert hi - lo <= 2 * 256 + 2
    assert lidx.RMI(keys, leaves=64).segments() == 64
    assert lidx.BTree(keys, every=64).size_in_bytes() > lidx.BTree(keys, every=1024).size_in_bytes()
    assert isinstance(lidx.PGM(keys), lidx.StaticIndex)


def test_pickle_round_trip(index_class, dtype):
    keys = sorted_keys(dtype, n=5_000)
    index = index_class(keys)
    back = pickle.loads(pickle.dumps(index))
    assert type(back) is index_class
    assert len(back) == len(index) and back.size_in_bytes() == index.size_in_bytes()
    assert back.keys.dtype == keys.dtype
    queries = queries_for(keys, n=1_000)
    np.testing.assert_array_equal(back.lower_bound(queries), expect(keys, queries))


def test_damaged_pickles_raise_corrupt_error():
    index = lidx.PGM(sorted_keys(np.uint64, n=2_000))
    restore, (state,) = index.__reduce__()
    flipped = bytearray(state)
    flipped[len(flipped) // 2] ^= 0x40
    for bad in (bytes(flipped), state[:-10], state[:3], b"x" * 64):
        with pytest.raises(lidx.CorruptError):
            restore(bad)
    assert issubclass(lidx.CorruptError, OSError)


def test_lower_bound_from_threads(index_class):
    keys = sorted_keys(np.uint64, n=100_000)
    index = index_class(keys)
    queries = queries_for(keys, n=200_000)
    want = expect(keys, queries)
    results = [None] * 4

    def work(i):
        results[i] = index.lower_bound(queries)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in results:
        np.testing.assert_array_equal(got, want)


def test_repr_names_the_class():
    assert repr(lidx.RMI(np.arange(10, dtype=np.uint32))).startswith("RMI(len=10, dtype=uint32")
    assert all(c.__doc__ for c in INDEXES + [lidx.StaticIndex])
