"""The fast path of seed 003's simulations: strict list scheduling of rigid jobs, jitted.

Seed 003 (Carastan-Santos and de Camargo) scores each job t of a queue Q by simulating many
random orders of Q after a fixed set S of jobs that starts the cluster, and averaging the bounded
slowdown of Q's jobs (eq. 1, tau = 10 s) over the orders whose first job is t (eqs. 2-3, in
`joulesim.learn.permutation_scores`). The paper ran its simulations in SimGrid; what one
simulation is, exactly, is ours and is this:

- all the jobs (S then Q) are queued at t = 0; their submission times matter only as the
  feature s, so each job's waiting time w_i is its start time;
- the cluster has `n_procs` identical processors; a job holds n_i of them for r_i seconds;
- jobs start strictly in list order (S in its order, then Q in the permutation's order) and
  without backfilling: job k starts at the earliest time >= the start of job k-1 at which n_k
  processors are free.

That is what joulesim's full simulator does with decider `fcfs` and one message per simulated
time (event grouping "per-time") for a workload of these jobs all at subtime 0 (delay profiles of r_i seconds) on `n_procs` hosts, when the jobs' ids sort in list
order (`joulesim.learn.job_pairs.list_workload`); tests/test_learn_fast_path.py checks that the
start times are equal. S is the same for every permutation, so `permutations_avebsld` simulates
it once and starts each permutation from a copy of that state.

The kernels are compiled by numba (`learn` extra). Without numba the same code runs as plain
Python (correct, about 100 times slower) and a warning says so once, at import. The number of
threads of `permutations_avebsld` is numba's (`using_threads`, or `numba.set_num_threads`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np

from joulesim.console.install_hint import install_hint

try:
    import numba

    njit = numba.njit
    prange = numba.prange
    HAVE_NUMBA = True
except ImportError:  # the same kernels, interpreted
    numba = None
    HAVE_NUMBA = False
    prange = range

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        return lambda function: function

    warnings.warn("numba is not installed: joulesim.learn's list scheduling runs as plain Python, about "
                  f"100 times slower ({install_hint('learn')})", RuntimeWarning, stacklevel=2)

__all__ = ["start_times", "permutations_avebsld", "pair_jobs", "orders_avebsld", "using_threads", "HAVE_NUMBA"]

# Permutations per parallel block: each block allocates its scratch arrays once.
_BLOCK = 256


@njit(cache=True, nogil=True)
def _start_in_order(ends, held, running, free, now, sizes, runtimes, order, starts):
    """Start jobs order[0], order[1], ... in turn; starts[k] = start of job order[k].

    (ends, held)[:running] are the running jobs (end time, processors held), `free` the free
    processors, `now` the start of the previous job. Returns the new (running, free, now).
    Finished jobs are retired only when processors are needed: the answer is the same, and a
    job never waits for less than the earliest end among those holding processors.
    """
    for k in range(order.shape[0]):
        job = order[k]
        need = sizes[job]
        while free < need:
            if running == 0:
                raise ValueError("a job needs more processors than the cluster has")
            earliest = ends[0]
            for i in range(1, running):
                if ends[i] < earliest:
                    earliest = ends[i]
            if earliest > now:  # always true or equal: running jobs end at or after `now`
                now = earliest
            i = 0
            while i < running:  # retire every job finished by `now` (swap with the last)
                if ends[i] <= now:
                    free += held[i]
                    running -= 1
                    ends[i] = ends[running]
                    held[i] = held[running]
                else:
                    i += 1
        starts[k] = now
        ends[running] = now + runtimes[job]
        held[running] = need
        running += 1
        free -= need
    return running, free, now


@njit(cache=True, nogil=True)
def _start_times_kernel(sizes, runtimes, n_procs):
    n = sizes.shape[0]
    ends = np.empty(n, dtype=np.float64)
    held = np.empty(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.float64)
    _start_in_order(ends, held, 0, n_procs, 0.0, sizes, runtimes, np.arange(n), starts)
    return starts


@njit(cache=True, nogil=True, parallel=True)
def _permutations_kernel(state_sizes, state_runtimes, queue_sizes, queue_runtimes, permutations,
                         n_procs, tau):
    s = state_sizes.shape[0]
    count, q = permutations.shape
    capacity = s + q
    ends0 = np.empty(capacity, dtype=np.float64)
    held0 = np.empty(capacity, dtype=np.int64)
    state_starts = np.empty(s, dtype=np.float64)
    running0, free0, now0 = _start_in_order(ends0, held0, 0, n_procs, 0.0, state_sizes,
                                            state_runtimes, np.arange(s), state_starts)
    out = np.empty(count, dtype=np.float64)
    blocks = (count + _BLOCK - 1) // _BLOCK
    for block in prange(blocks):
        ends = np.empty(capacity, dtype=np.float64)
        held = np.empty(capacity, dtype=np.int64)
        starts = np.empty(q, dtype=np.float64)
        for p in range(block * _BLOCK, min(count, (block + 1) * _BLOCK)):
            ends[:running0] = ends0[:running0]
            held[:running0] = held0[:running0]
            order = permutations[p]
            _start_in_order(ends, held, running0, free0, now0, queue_sizes, queue_runtimes, order,
                            starts)
            total = 0.0
            for k in range(q):
                r = queue_runtimes[order[k]]
                # eq. 1: w_i = start (all jobs are queued at 0)
                total += max((starts[k] + r) / max(r, tau), 1.0)
            out[p] = total / q
    return out


def _jobs(sizes, runtimes, n_procs: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    runtimes = np.ascontiguousarray(runtimes, dtype=np.float64)
    if sizes.ndim != 1 or sizes.shape != runtimes.shape:
        raise ValueError(f"{what}: sizes and runtimes must be 1-D arrays of the same length")
    if sizes.size and (sizes.min() < 1 or sizes.max() > n_procs):
        raise ValueError(f"{what}: every size must be in 1..{n_procs} (the cluster's processors)")
    if runtimes.size and not (np.isfinite(runtimes).all() and runtimes.min() >= 0):
        raise ValueError(f"{what}: every runtime must be a finite number >= 0")
    return sizes, runtimes


def start_times(sizes: np.ndarray, runtimes: np.ndarray, n_procs: int) -> np.ndarray:
    """Start times (float64) of the jobs of one ordered list, all queued at 0, on `n_procs`
    processors, started strictly in list order without backfilling (see the module docstring)."""
    sizes, runtimes = _jobs(sizes, runtimes, n_procs, "start_times")
    return _start_times_kernel(sizes, runtimes, np.int64(n_procs))


def permutations_avebsld(state_sizes: np.ndarray, state_runtimes: np.ndarray, queue_sizes: np.ndarray,
                         queue_runtimes: np.ndarray, permutations: np.ndarray, n_procs: int,
                         tau: float = 10.0) -> np.ndarray:
    """AVEbsld of Q (eq. 1) for each row of `permutations` (float64[P]).

    permutations: integer array [P, q], each row an order of Q's indices 0..q-1 (int8, int16 or
    int64: each dtype compiles once). The list simulated for row p is S, then Q in order p; the
    mean is over Q's jobs only. Runs on numba's threads (`using_threads`).
    """
    jobs = pair_jobs(state_sizes, state_runtimes, queue_sizes, queue_runtimes, n_procs)
    permutations = np.ascontiguousarray(permutations)
    q = jobs[2].shape[0]
    if permutations.ndim != 2 or permutations.shape[1] != q or permutations.dtype.kind not in "iu":
        raise ValueError(f"permutations must be an integer array of shape [P, {q}]")
    if not (np.sort(permutations, axis=1) == np.arange(q)).all():
        raise ValueError(f"each row of permutations must be an order of the queue's indices 0..{q - 1}")
    return orders_avebsld(jobs, permutations, n_procs, tau)


PairJobs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def pair_jobs(state_sizes: np.ndarray, state_runtimes: np.ndarray, queue_sizes: np.ndarray,
              queue_runtimes: np.ndarray, n_procs: int) -> PairJobs:
    """S's and Q's sizes and runtimes, checked and in the kernel's dtypes (once per pair)."""
    return (*_jobs(state_sizes, state_runtimes, n_procs, "state"), *_jobs(queue_sizes, queue_runtimes, n_procs, "queue"))


def orders_avebsld(jobs: PairJobs, orders: np.ndarray, n_procs: int, tau: float = 10.0) -> np.ndarray:
    """`permutations_avebsld` of jobs from `pair_jobs` and orders known to be permutations of
    Q's indices (as `draw_permutations` makes them): the per-chunk path of score generation,
    which need not check again what it built."""
    if not tau > 0:
        raise ValueError(f"tau must be > 0, not {tau}")
    orders = np.ascontiguousarray(orders)
    if jobs[2].shape[0] == 0:
        return np.full(orders.shape[0], np.nan)
    return _permutations_kernel(*jobs, orders, np.int64(n_procs), np.float64(tau))


@contextlib.contextmanager
def using_threads(threads: int | None) -> Iterator[None]:
    """Run the block with `threads` numba threads (at most numba's pool size); None: unchanged."""
    if threads is None or numba is None:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)
