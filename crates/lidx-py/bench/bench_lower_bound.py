"""Vectorized lower_bound of lidx's indexes against numpy.searchsorted (and PyGM if installed).

A benchmark, not a test: it reports; every answer is still checked against numpy.searchsorted.
All contenders run on the same keys and queries in the same process; each figure is the median
of ``--runs`` timed calls after one untimed warm-up call.

    python crates/lidx-py/bench/bench_lower_bound.py --keys 10000000 --queries 1000000 --runs 5

Build the module in release mode first (``maturin develop --release -m crates/lidx-py/Cargo.toml``):
a debug build is an order of magnitude slower.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from typing import Callable

import numpy as np
import numpy.typing as npt

import lidx


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def median_seconds(run: Callable[[], np.ndarray], runs: int) -> tuple[float, np.ndarray]:
    answer = run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        answer = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), answer


def batch_of(index: lidx.StaticIndex, queries: npt.NDArray[np.uint64]) -> Callable[[], np.ndarray]:
    """The vectorized lower_bound of every query, as a call without arguments."""
    return lambda: index.lower_bound(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    keys = lidx.datasets.lognormal(args.keys, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    # Uniform over the positions: half existing keys, half between two keys.
    picks = rng.integers(0, len(keys), args.queries)
    queries: npt.NDArray[np.uint64] = keys[picks] + (rng.random(args.queries) < 0.5).astype(np.uint64)
    expect = np.searchsorted(keys, queries, side="left")

    contenders: dict[str, Callable[[], np.ndarray]] = {
        "numpy.searchsorted": lambda: np.searchsorted(keys, queries, side="left")
    }
    builds = {}
    makers: list[tuple[str, Callable[[], lidx.StaticIndex]]] = [
        ("lidx.PGM(eps=64)", lambda: lidx.PGM(keys, eps=64)),
        ("lidx.RadixSpline", lambda: lidx.RadixSpline(keys)),
        ("lidx.RMI", lambda: lidx.RMI(keys)),
        ("lidx.BTree", lambda: lidx.BTree(keys)),
    ]
    for name, make in makers:
        start = time.perf_counter()
        index = make()
        builds[name] = (time.perf_counter() - start, index.size_in_bytes())
        contenders[name] = batch_of(index, queries)
    try:
        import pygm  # type: ignore[import-not-found]

        start = time.perf_counter()
        pgm = pygm.SortedList(keys, epsilon=64)
        builds["pygm.SortedList(epsilon=64)"] = (time.perf_counter() - start, pgm.stats()["index size"])
        # PyGM answers one query per call: the loop is what a Python caller runs.
        contenders["pygm.SortedList(epsilon=64)"] = lambda: np.fromiter(
            map(pgm.bisect_left, queries.tolist()), dtype=np.int64, count=len(queries)
        )
    except ImportError as e:
        print(f"PyGM: not installed ({e})")

    print(
        f"{args.keys:,} lognormal keys (seed {args.seed}), {args.queries:,} queries, median of "
        f"{args.runs} runs; {cpu_name()} x{os.cpu_count()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    print(f"{'contender':28} {'ns/query (ms/1M)':>17} {'vs searchsorted':>16} {'build s':>8} {'bytes':>10}")
    base = None
    for name, run in contenders.items():
        seconds, got = median_seconds(run, args.runs)
        if not np.array_equal(np.asarray(got), expect):
            raise SystemExit(f"{name} gave wrong answers")
        per_query = seconds / args.queries
        base = base or per_query
        build = f"{builds[name][0]:8.2f} {builds[name][1]:10,}" if name in builds else f"{'-':>8} {'-':>10}"
        print(f"{name:28} {per_query * 1e9:17.1f} {base / per_query:15.2f}x {build}")


if __name__ == "__main__":
    main()
