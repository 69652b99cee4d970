"""The store against a Python dict, for both engines."""

import random

import pytest

import lidx


@pytest.fixture(params=["hybrid", "btree", "lsm"])
def engine(request):
    return request.param


def open_store(path, engine, **kwargs):
    # Small budget so that merges and checkpoints happen within the tests.
    return lidx.Store.open(path, engine=engine, fsync=False, memory_budget=64 << 10, **kwargs)


def test_random_operations_match_a_dict(tmp_path, engine):
    rng = random.Random(5)
    model = {}
    with open_store(tmp_path / "db", engine) as db:
        for i in range(3_000):
            key = b"k%05d" % rng.randrange(1_000)
            op = rng.random()
            if op < 0.6:
                value = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
                db.put(key, value)
                model[key] = value
            elif op < 0.8:
                db.delete(key)
                model.pop(key, None)
            else:
                assert db.get(key) == model.get(key)
        assert list(db.range()) == sorted(model.items())
        lo, hi = b"k00200", b"k00700"
        want = [(k, v) for k, v in sorted(model.items()) if lo <= k < hi]
        assert list(db.range(lo, hi)) == want
        assert list(db.range(lo, hi, reverse=True)) == want[::-1]
        assert list(db.range(start=b"k00990")) == [(k, v) for k, v in sorted(model.items()) if k >= b"k00990"]
    with open_store(tmp_path / "db", engine) as db:  # reopened: everything is still there
        assert dict(db.range()) == model


def test_a_record_cache_serves_reads_and_forgets_writes(tmp_path, engine):
    rng = random.Random(7)
    model = {}
    with open_store(tmp_path / "db", engine, row_cache_bytes=4096) as db:
        for i in range(3_000):
            key = b"k%03d" % rng.randrange(200)
            op = rng.random()
            if op < 0.3:
                value = b"v%d" % i
                db.put(key, value)
                model[key] = value
            elif op < 0.4:
                db.delete(key)
                model.pop(key, None)
            else:
                assert db.get(key) == model.get(key)
        stats = db.stats()
        assert 0 < stats["row_cache_bytes"] <= 4096 and stats["row_cache_records"] > 0
        assert stats["memory_bytes"] >= stats["row_cache_bytes"]
    with open_store(tmp_path / "db", engine) as db:
        assert db.stats()["row_cache_bytes"] == 0
        assert dict(db.range()) == model


def test_str_keys_mapping_protocol_and_defaults(tmp_path, engine):
    with open_store(tmp_path / "db", engine) as db:
        db["apple"] = "3"
        db.put(b"pear", b"\x00\xff")
        assert db["apple"] == b"3" and db.get("apple") == b"3"
        assert db.get(b"pear") == b"\x00\xff"
        assert "apple" in db and "plum" not in db
        assert db.get("plum") is None and db.get("plum", b"none") == b"none"
        with pytest.raises(KeyError):
            db["plum"]
        del db["apple"]
        assert db.get("apple") is None
        assert list(db.range("a", "q")) == [(b"pear", b"\x00\xff")]
        with pytest.raises(TypeError, match="bytes or str"):
            db.put(5, b"x")


def test_write_batch_is_all_or_nothing(tmp_path, engine):
    with open_store(tmp_path / "db", engine) as db:
        db.put(b"a", b"1")
        with db.write_batch() as batch:
            batch.put(b"b", b"2")
            batch.put("c", "3")
            batch.delete(b"a")
            assert len(batch) == 3
            assert db.get(b"b") is None  # not applied before the block ends
        assert dict(db.range()) == {b"b": b"2", b"c": b"3"}
        with pytest.raises(RuntimeError):
            with db.write_batch() as batch:
                batch.put(b"d", b"4")
                raise RuntimeError("abandon the batch")
        assert db.get(b"d") is None
        standalone = lidx.WriteBatch()
        standalone.put(b"e", b"5")
        db.write(standalone)
        assert db.get(b"e") == b"5"
        with pytest.raises(ValueError):
            with lidx.WriteBatch() as orphan:
                orphan.put(b"f", b"6")


def test_snapshot_keeps_its_view(tmp_path, engine):
    with open_store(tmp_path / "db", engine) as db:
        for i in range(500):
            db.put(b"%04d" % i, b"old")
        snap = db.snapshot()
        iterator = db.range()
        for i in range(500):
            db.put(b"%04d" % i, b"new")
        db.delete(b"0000")
        db.compact()
        assert snap.get(b"0000") == b"old" and db.get(b"0000") is None
        assert {v for _, v in snap.range()} == {b"old"}
        assert len(list(snap.range(b"0100", b"0200"))) == 100
        assert {v for _, v in iterator} == {b"old"}  # a range reads the snapshot it was made on


def test_stats_close_and_errors(tmp_path, engine):
    path = tmp_path / "db"
    db = open_store(path, engine)
    for i in range(2_000):
        db.put(b"key%06d" % i, b"v" * 20)
    db.compact()
    stats = db.stats()
    assert stats["engine"] == engine
    assert stats["table_records"] + stats["dynamic_keys"] >= 2_000
    assert stats["memory_bytes"] > 0 and stats["merges"] >= 1
    with pytest.raises(ValueError, match="outside what a store accepts"):
        db.put(b"", b"x")
    with pytest.raises(lidx.LockedError):
        lidx.Store.open(path)
    assert not db.closed
    db.close()
    db.close()
    assert db.closed
    with pytest.raises(ValueError, match="closed"):
        db.get(b"key000001")
    with lidx.Store.open(path, read_only=True) as ro:
        assert ro.get(b"key000001") == b"v" * 20
        with pytest.raises(lidx.ReadOnlyError):
            ro.put(b"x", b"y")
    with pytest.raises(lidx.NotAStoreError):
        lidx.Store.open(tmp_path / "missing", create=False)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file").write_bytes(b"not a store")
    with pytest.raises(OSError):
        lidx.Store.open(tmp_path / "junk")
    with pytest.raises(ValueError, match="engine"):
        lidx.Store.open(tmp_path / "other", engine="leveldb")


def test_log_engine_takes_8_byte_keys(tmp_path):
    rng = random.Random(9)
    model = {}
    with lidx.Store.open(tmp_path / "db", engine="log:btree", fsync=False) as db:
        for _ in range(2_000):
            key = rng.randrange(500).to_bytes(8, "big")
            if rng.random() < 0.7:
                value = bytes(rng.randrange(256) for _ in range(rng.randrange(30)))
                db.put(key, value)
                model[key] = value
            else:
                db.delete(key)
                model.pop(key, None)
        with pytest.raises(Exception):
            db.put(b"short", b"v")
        assert list(db.range()) == sorted(model.items())
    with lidx.Store.open(tmp_path / "db") as db:
        stats = db.stats()
        assert stats["engine"] == "log"
        assert stats["table_records"] == len(model)
        assert stats["recovery_seconds"] >= 0
        # The log's live records, as the collector counts them, are within the log.
        assert 0 < stats["log_live_bytes"] <= stats["log_disk_bytes"]
        for key, value in model.items():
            assert db.get(key) == value
