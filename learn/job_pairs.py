"""Seed 003's (S, Q) pairs of Lublin-model jobs, and their rendering as a Batsim workload.

Seed 003 simulates pairs (S, Q) of jobs of the Lublin and Feitelson model on a 256-processor
cluster: S, 16 jobs that start the cluster, and Q, the 32 jobs scheduled after them, whose
scores (eqs. 2-3) are the training data. The authors' script takes 16 then 32 consecutive jobs
from a random start in a Lublin trace. Ours, so that pairs are reproducible and do not depend on
how many are asked for: pair k is the k-th window of 48 consecutive jobs (disjoint, in order) of
one trace, `joulesim.workload_tools.lublin.generate(jobs=48 * TRACE_PAIRS, nb_res=n_procs,
seed=seed)`; pairs beyond TRACE_PAIRS come from further traces of the same length, trace b > 0
with the seed SeedSequence([seed, b]). A job is its size n (processors), its runtime r (the
delay of its profile, seconds) and its submission time s, relative to the first job of its pair
(s is only a feature: the simulation queues every job at 0, see `list_schedule`).

`pair_workload` writes a pair, Q in a given order, as the Batsim workload that joulesim's full
simulator runs (decider `fcfs`, platform `pair_platform`, event grouping "per-time": Batsim's
adds nanosecond messages) to the same start times as the fast path: the 48 jobs at subtime 0, named by their zero-padded position so that joulesim's order of
equal subtimes (by job id as a string) is the list order.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Pair", "lublin_pair", "lublin_pairs", "pair_workload", "list_workload", "pair_platform",
           "STATE_JOBS", "QUEUE_JOBS", "TRACE_PAIRS"]

STATE_JOBS = 16  # |S|
QUEUE_JOBS = 32  # |Q|
PAIR_JOBS = STATE_JOBS + QUEUE_JOBS
TRACE_PAIRS = 1024  # pairs per generated trace (49,152 jobs, about half a second to generate)


@dataclass(frozen=True, eq=False)
class Pair:
    """One (S, Q) pair: sizes (int64), runtimes (float64, s), submit times (float64, s, relative
    to the first job of S) of S's 16 jobs and Q's 32 jobs, in trace order."""

    index: int
    seed: int
    n_procs: int
    state_sizes: np.ndarray
    state_runtimes: np.ndarray
    state_submits: np.ndarray
    queue_sizes: np.ndarray
    queue_runtimes: np.ndarray
    queue_submits: np.ndarray


@functools.lru_cache(maxsize=4)
def _trace(seed: int, block: int, n_procs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sizes, runtimes, subtimes) of trace `block` (read-only arrays; cached: pairs come in runs)."""
    from joulesim.workload_tools.lublin import generate

    trace_seed = seed if block == 0 else int(np.random.SeedSequence([seed, block]).generate_state(1, np.uint64)[0])
    workload = generate(jobs=PAIR_JOBS * TRACE_PAIRS, nb_res=n_procs, seed=trace_seed)
    profiles = workload["profiles"]
    jobs = workload["jobs"]
    sizes = np.array([job["res"] for job in jobs], dtype=np.int64)
    runtimes = np.array([profiles[job["profile"]]["delay"] for job in jobs], dtype=np.float64)
    subtimes = np.array([job["subtime"] for job in jobs], dtype=np.float64)
    for array in (sizes, runtimes, subtimes):
        array.flags.writeable = False
    return sizes, runtimes, subtimes


def lublin_pair(index: int, seed: int, n_procs: int = 256) -> Pair:
    """Pair `index` (0, 1, ...) of the Lublin traces of `seed` on `n_procs` processors."""
    if index < 0:
        raise ValueError(f"pair index {index}: must be >= 0")
    block, window = divmod(index, TRACE_PAIRS)
    sizes, runtimes, subtimes = _trace(int(seed), block, int(n_procs))
    first = window * PAIR_JOBS
    cut = slice(first, first + STATE_JOBS), slice(first + STATE_JOBS, first + PAIR_JOBS)
    submits = subtimes - subtimes[first]
    return Pair(index, int(seed), int(n_procs),
                sizes[cut[0]].copy(), runtimes[cut[0]].copy(), submits[cut[0]].copy(),
                sizes[cut[1]].copy(), runtimes[cut[1]].copy(), submits[cut[1]].copy())


def lublin_pairs(count: int, seed: int, n_procs: int = 256) -> list[Pair]:
    """Pairs 0 .. count-1 (pair k is the same whatever `count`)."""
    if count < 0:
        raise ValueError(f"count {count}: must be >= 0")
    return [lublin_pair(k, seed, n_procs) for k in range(count)]


def list_workload(sizes: np.ndarray, runtimes: np.ndarray, n_procs: int) -> dict[str, Any]:
    """Batsim workload dict of these jobs, all at subtime 0, submitted (and so run by `fcfs`) in
    list order: ids are zero-padded positions, one delay profile per job."""
    width = max(3, len(str(len(sizes) - 1)))
    jobs, profiles = [], {}
    for position, (size, runtime) in enumerate(zip(sizes, runtimes)):
        name = f"{position:0{width}d}"
        runtime = float(runtime)
        profiles[f"p{name}"] = {"type": "delay", "delay": int(runtime) if runtime.is_integer() else runtime}
        jobs.append({"id": name, "subtime": 0, "res": int(size), "profile": f"p{name}"})
    return {"nb_res": int(n_procs), "jobs": jobs, "profiles": profiles}


def pair_workload(pair: Pair, order: np.ndarray | list[int]) -> dict[str, Any]:
    """The pair's 48 jobs as a Batsim workload: S in its order, then Q in `order` (Q's indices)."""
    order = np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(len(pair.queue_sizes))):
        raise ValueError(f"order must be a permutation of 0..{len(pair.queue_sizes) - 1}")
    sizes = np.concatenate([pair.state_sizes, pair.queue_sizes[order]])
    runtimes = np.concatenate([pair.state_runtimes, pair.queue_runtimes[order]])
    return list_workload(sizes, runtimes, pair.n_procs)


def pair_platform(n_procs: int = 256) -> dict[str, Any]:
    """A joulesim JSON platform of `n_procs` hosts (one processor each) and a master, no network."""
    return {"master": {"name": "master_host"},
            "clusters": [{"id": "c", "prefix": "h", "count": int(n_procs), "speed": "1Gf"}]}
