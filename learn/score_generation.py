"""`joulesim learn generate`: seed 003's training data, one (S, Q) pair at a time, resumable.

Pair k (k = 0 .. pairs-1) is the k-th window of 48 consecutive jobs of one Lublin trace
(`joulesim.learn.job_pairs`); its `permutations` random orders of Q are drawn from a seed
derived from (seed, k) alone, so a pair's scores do not depend on how many pairs are asked for,
on the workers or on the order they finish in. Each pair is scored by the fast path
(`joulesim.learn.permutation_scores`) in a worker of the campaign executors (a local process
pool, or a Dask cluster), and written as it finishes to `OUT.parts/pair_NNNNNN.csv`; a rerun
skips the pairs already there. When every pair is done, the parts are gathered into OUT
(parquet, or CSV when OUT ends in .csv): one row per (pair, job of Q) with r, n, s and score.

The counts and the seed are bounded (`joulesim.learn.generation_limits`); tasks go to the
executor BATCH_PAIRS at a time, so that memory does not grow with the pair count. The output
paths are checked (and the parts folder made) before any pair is scored
(`joulesim.learn.output_paths`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from joulesim.console.install_hint import install_hint
from joulesim.console.progress_bar import progress_bar
from joulesim.learn.generation_limits import MAX_PAIRS, MAX_PERMUTATIONS, MAX_SEED, MAX_WORKERS
from joulesim.learn.output_paths import check_output_file, make_output_folder, write_via_temporary
from joulesim.protocol.errors import JoulesimError

__all__ = ["generate_scores", "score_one_pair", "GenerationSummary", "COLUMNS", "GenerationCountError"]

COLUMNS = ["pair", "job", "r", "n", "s", "score", "first_count", "permutations", "seed"]
#: Seconds a worker may spend on one pair before the local pool gives up on it.
PAIR_TIMEOUT_S = 3600.0
#: Pairs handed to the executor at a time (a task and its future each hold about a kilobyte).
BATCH_PAIRS = 10_000
# The scoring kernels are numba's: the first run on a machine compiles them (about 46 s here),
# later runs load them from numba's cache. A warm-up longer than this says so on stderr.
NOTICE_AFTER_S = 2.0


@dataclass
class GenerationSummary:
    out: str
    pairs: int
    computed: int  # pairs scored by this run (the others were already in the parts folder)
    permutations: int
    wall_s: float
    failures: list[str]


def _pair_seed(seed: int, pair: int) -> int:
    return int(np.random.SeedSequence([seed, pair]).generate_state(1, np.uint64)[0] >> 1)


def score_one_pair(task: dict[str, Any]) -> dict[str, Any]:
    """Worker: score pair task["pair"]; returns {"id", "status", "rows" | "error", "wall_time"}."""
    from joulesim.learn.job_pairs import lublin_pair
    from joulesim.learn.permutation_scores import score_pair

    started = time.perf_counter()
    try:
        pair = lublin_pair(task["pair"], task["seed"], task["n_procs"])
        seed = _pair_seed(task["seed"], task["pair"])
        scores, first_counts = score_pair(pair, task["permutations"], seed, n_procs=task["n_procs"], tau=task["tau"],
                                          threads=task.get("threads"))
        rows = [{"pair": task["pair"], "job": j, "r": float(pair.queue_runtimes[j]), "n": int(pair.queue_sizes[j]),
                 "s": float(pair.queue_submits[j]), "score": float(scores[j]), "first_count": int(first_counts[j]),
                 "permutations": task["permutations"], "seed": task["seed"]} for j in range(len(scores))]
        return {"id": task["id"], "status": "ok", "rows": rows, "wall_time": time.perf_counter() - started}
    except Exception as exc:  # recorded against the pair; the other pairs go on
        return {"id": task["id"], "status": "failed", "error": f"{type(exc).__name__}: {exc}",
                "wall_time": time.perf_counter() - started}


def _warm_up(seed: int, n_procs: int, tau: float) -> None:
    """Compile (or load) the kernels here once, before the workers start: they then load them
    from numba's cache instead of each compiling them, and a long first compilation is announced
    rather than silent."""
    def notice() -> None:
        print("joulesim: compiling the scoring kernels (numba): the first run on this machine takes up to a "
              "minute, later runs load them", file=sys.stderr, flush=True)

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    timer.start()
    try:
        score_one_pair({"id": "warm-up", "pair": 0, "seed": seed, "permutations": 2, "n_procs": n_procs, "tau": tau,
                        "threads": 1})
    finally:
        timer.cancel()


def _part_path(parts: str, pair: int) -> str:
    return os.path.join(parts, f"pair_{pair:06d}.csv")


class GenerationCountError(JoulesimError):
    """A count or seed out of `generate_scores`' bounds (bad input: exit status 2)."""

    exit_code = 2


def _shown(value: object) -> str:
    """A value for a message: integers of more than 12 digits as 1.20893e+24 (or their size)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 12:
        return f"{float(value):.6g}" if value.bit_length() <= 1000 else f"(an integer of {value.bit_length():,} bits)"
    return repr(value)


def _check_counts(pairs: int, permutations: int, seed: int, workers: int | None) -> None:
    """Refuse counts beyond the bounds of the module's docstring, naming the option and its limit."""
    bounds = [("--pairs", pairs, 1, MAX_PAIRS), ("--permutations", permutations, 1, MAX_PERMUTATIONS),
              ("--seed", seed, 0, MAX_SEED)]
    if workers is not None:
        bounds.append(("--workers", workers, 1, MAX_WORKERS))
    for option, value, low, high in bounds:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise GenerationCountError(f"{option} {_shown(value)} is out of range: give an integer from {low:,} to "
                                       f"{high:,} (joulesim learn generate's limit, see --help)")


def _parquet_engine(out: str) -> None:
    """Refuse a parquet output without pyarrow now, not after every pair is scored."""
    if out.endswith(".csv"):
        return
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise JoulesimError(f"{out}: writing parquet needs pyarrow ({install_hint('learn')}), or give "
                            "an output ending in .csv") from None


def generate_scores(out: str, pairs: int, permutations: int, seed: int = 0, workers: int | None = None,
                    dask_address: str | None = None, connect_timeout: float = 10.0, n_procs: int = 256,
                    tau: float = 10.0, progress: bool = False) -> GenerationSummary:
    from joulesim.campaign.executors import DaskCluster, LocalPool, default_workers

    out = os.fspath(out)
    _check_counts(pairs, permutations, seed, workers)
    _parquet_engine(out)
    started = time.perf_counter()
    parts = out + ".parts"
    check_output_file(out, "output (-o)")
    make_output_folder(parts, "parts folder (from -o)")
    todo = [k for k in range(pairs) if not os.path.isfile(_part_path(parts, k))]
    workers = workers or default_workers()
    # One numba thread per worker when pairs run side by side (a Dask worker is one of many);
    # a lone local worker uses every core for its pair.
    threads = 1 if dask_address or min(len(todo), workers) > 1 else default_workers()
    failures: list[str] = []
    if todo and not dask_address:  # (a Dask cluster's workers compile on their own machines)
        _warm_up(seed, n_procs, tau)
    if todo:
        # Not forked: a parent that has run a numba parallel kernel holds an OpenMP thread pool,
        # which a forked child inherits broken (the workers then die of a segfault).
        executor = (DaskCluster(dask_address, connect_timeout) if dask_address
                    else LocalPool(min(workers, len(todo)), start_method="forkserver"))
        bar = progress_bar(len(todo), "scoring pairs", "pair") if progress else None
        try:
            for first in range(0, len(todo), BATCH_PAIRS):
                tasks = [{"id": f"pair{k}", "pair": k, "seed": seed, "permutations": permutations, "n_procs": n_procs,
                          "tau": tau, "timeout": PAIR_TIMEOUT_S, "threads": threads}
                         for k in todo[first:first + BATCH_PAIRS]]
                for task, record in executor.run(tasks, score_one_pair):
                    if record["status"] == "ok":
                        part = pd.DataFrame(record["rows"], columns=COLUMNS)
                        # A part is there whole or not at all.
                        write_via_temporary(_part_path(parts, task["pair"]), "parts folder (from -o)",
                                            lambda path, part=part: part.to_csv(path, index=False))
                    else:
                        failures.append(f"pair {task['pair']}: {record.get('error', record['status'])}")
                    if bar is not None:
                        bar.update(1)
        except KeyboardInterrupt:
            executor.close(cancel=True)
            raise JoulesimError(f"interrupted: the pairs scored so far are kept in {parts}; run the same command "
                                "again to go on") from None
        finally:
            if bar is not None:
                bar.close()
        executor.close()
    if failures:
        raise JoulesimError(f"{len(failures)} pair(s) failed (the others are kept in {parts}; rerun to retry): "
                            + "; ".join(failures[:3]))
    table = pd.concat([pd.read_csv(_part_path(parts, k)) for k in range(pairs)], ignore_index=True)
    if out.endswith(".csv"):
        write_via_temporary(out, "output (-o)", lambda path: table.to_csv(path, index=False))
    else:
        write_via_temporary(out, "output (-o)", lambda path: table.to_parquet(path, index=False))
    return GenerationSummary(out, pairs, len(todo), permutations, time.perf_counter() - started, failures)
