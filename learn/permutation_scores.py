"""Seed 003's job scores: eqs. 2-3 over random permutations of a queue Q.

For a pair (S, Q), seed 003 simulates a collection P of random permutations of Q (250,000 for
|Q| = 32 in the paper), each after S, and scores each job t of Q by

    score(t) = sum over p in P with t_0(p) = t of AVEbsld(p)  /  sum over p in P of AVEbsld(p)

(eqs. 2-3; t_0(p) is the first job of p, AVEbsld(p) is eq. 1 over Q's jobs). The lower the
score, the better t is as the first job. Ours: a job that is first in no permutation has no
score (NaN, not 0, which would read as "the best first job"); the permutations are uniform, made
by Fisher-Yates shuffles driven by the generator's doubles read row after row, so a seed gives
the same permutations in chunks of any size; the simulation of one permutation is
`joulesim.learn.list_schedule`'s.
"""

from __future__ import annotations

import numpy as np

from joulesim.learn.job_pairs import Pair
from joulesim.learn.list_schedule import njit, orders_avebsld, pair_jobs, using_threads

__all__ = ["draw_permutations", "job_scores", "score_pair", "DEFAULT_CHUNK"]

# Permutations simulated at a time: 20,000 x 32 int64 is 5 MB (250,000 at once would be 64 MB).
DEFAULT_CHUNK = 20_000


@njit(cache=True, nogil=True)
def _shuffles(uniforms, out):
    """Row p of `out` = 0..q-1 shuffled by Fisher-Yates with the doubles uniforms[p, :q-1]."""
    count, q = out.shape
    for p in range(count):
        for i in range(q):
            out[p, i] = i
        for i in range(q - 1, 0, -1):
            # floor(u * (i+1)) is uniform on 0..i up to the 2**-53 granularity of u
            j = int(uniforms[p, i - 1] * (i + 1))
            out[p, i], out[p, j] = out[p, j], out[p, i]
    return out


def draw_permutations(rng: np.random.Generator, count: int, q: int) -> np.ndarray:
    """`count` uniform random permutations of 0..q-1 (int64[count, q]).

    Fisher-Yates shuffles fed by count x (q-1) uniform doubles of `rng`, read row after row, so
    drawing 2 x 10,000 gives the same rows as drawing 20,000. (An argsort of random keys is
    equally uniform but sorting made it the slowest step of `score_pair`.)
    """
    if count < 0 or q < 0:
        raise ValueError(f"count {count} and q {q} must be >= 0")
    out = np.empty((count, q), dtype=np.int64)
    return _shuffles(rng.random((count, max(q - 1, 0))), out)


def job_scores(first_jobs: np.ndarray, avebsld: np.ndarray, q: int) -> np.ndarray:
    """score(t) for t = 0..q-1 (eqs. 2-3): the AVEbsld of the permutations that start with t,
    summed, over the sum of all the permutations' AVEbsld. NaN for a job first in none."""
    first_jobs = np.asarray(first_jobs, dtype=np.int64)
    avebsld = np.asarray(avebsld, dtype=np.float64)
    if first_jobs.shape != avebsld.shape or first_jobs.ndim != 1:
        raise ValueError("first_jobs and avebsld must be 1-D arrays of the same length")
    if first_jobs.size and (first_jobs.min() < 0 or first_jobs.max() >= q):
        raise ValueError(f"first jobs must be in 0..{q - 1}")
    sums = np.bincount(first_jobs, weights=avebsld, minlength=q)
    counts = np.bincount(first_jobs, minlength=q)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = sums / avebsld.sum()
    scores[counts == 0] = np.nan
    return scores


def score_pair(pair: Pair, permutations: int, seed: int, n_procs: int = 256, tau: float = 10.0,
               chunk: int = DEFAULT_CHUNK, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the pair's queue jobs from `permutations` random orders of Q drawn from `seed`.

    Returns (scores float64[q], first_counts int64[q]): eqs. 2-3, and how many permutations
    started with each job. Simulates `chunk` permutations at a time (memory bounded; the result
    does not depend on `chunk`), on `threads` numba threads (None: numba's current setting).
    """
    if permutations < 1 or chunk < 1:
        raise ValueError(f"permutations {permutations} and chunk {chunk} must be >= 1")
    q = len(pair.queue_sizes)
    jobs = pair_jobs(pair.state_sizes, pair.state_runtimes, pair.queue_sizes, pair.queue_runtimes, n_procs)
    rng = np.random.default_rng(seed)
    first_jobs = np.empty(permutations, dtype=np.int64)
    avebsld = np.empty(permutations, dtype=np.float64)
    with using_threads(threads):
        for begin in range(0, permutations, chunk):
            orders = draw_permutations(rng, min(chunk, permutations - begin), q)
            end = begin + len(orders)
            first_jobs[begin:end] = orders[:, 0]
            avebsld[begin:end] = orders_avebsld(jobs, orders, n_procs, tau)
    return job_scores(first_jobs, avebsld, q), np.bincount(first_jobs, minlength=q)
