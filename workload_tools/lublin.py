"""The Lublin & Feitelson (2003) model of rigid parallel batch jobs.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", Journal of Parallel and Distributed Computing 63(11),
1105-1122, 2003.  The algorithm and every default below follow the authors' public C
implementation `m_lublin99.c` (Parallel Workloads Archive, models page), read for this port in
a public copy of the file; the batch values are also those of GridSim's Java port
(`gridsim.parallel.util.WorkloadLublin`, constants `*_BATCH`).  Only the **batch** job class
is generated (the C program can interleave interactive jobs; that is left out).

Parameters (`m_lublin99.c` constant in brackets), all of the batch class:

Job size (number of nodes)
    serial_prob = 0.2927   [SERIAL_PROB_BATCH]  P(size = 1)
    pow2_prob   = 0.6686   [POW2_PROB_BATCH]    P(parallel and a power of two)
    ulow        = 1.2      [ULOW_BATCH]         log2 of the smallest parallel size (+0.2)
    umed        = uhi - 2  [UMED_BATCH = 5 with UHI_BATCH = 7; the C comment says to keep
                            umed in [uhi-3.5, uhi-1.5]; we keep the batch default's gap of 2]
    uhi         = log2(nb_res)  [UHI_BATCH = 7 for the 128-node default machine]
    uprob       = 0.875    [UPROB_BATCH]        weight of the first uniform stage
  u <- U(0,1); if u <= serial_prob: size 1.  Otherwise par ~ two-stage-uniform
  (U(ulow, umed) with prob. uprob, else U(umed, uhi)); if u <= serial_prob + pow2_prob then
  par = round(par) (power of two); size = round(2**par).  [calc_number_of_nodes]
  Sizes above nb_res (possible when nb_res is not a power of two) are drawn again.

Runtime (seconds) -- hyper-gamma on log(runtime), size-dependent mixing weight
    a1 = 6.57,  b1 = 0.823   [A1_BATCH, B1_BATCH]  first gamma (shape, scale)
    a2 = 639.1, b2 = 0.0156  [A2_BATCH, B2_BATCH]  second gamma
    pa = -0.003, pb = 0.6986 [PA_BATCH, PB_BATCH]  p = clip(pa * size + pb, 0, 1)
  log_rt ~ gamma(a1, b1) with probability p else gamma(a2, b2), drawn again while
  log_rt > 12 [TOO_MUCH_TIME]; runtime = int(exp(log_rt)) as in the C code, but at least 1 s.
  [time_from_nodes, hyper_gamma]

Arrivals -- gamma inter-arrivals modulated by a daily cycle
    aarr = 6.0415 * 1.0519  [AARR_BATCH * ARAR_BATCH]  shape of log(inter-arrival) at rush hour
    barr = 0.8531           [BARR_BATCH]               its scale
    anum = 6.1271, bnum = 5.2740 [ANUM_BATCH, BNUM_BATCH] daily cycle: gamma(anum, bnum) cdf
    48 half-hour buckets [BUCKETS], day indices shifted by 11 [CYCLIC_DAY_START], start at
    midnight [START = 0]; log inter-arrival values above 13 are drawn again
    [TOO_MUCH_ARRIVE_TIME].
  Bucket i's weight is cdf(i+0.5) - cdf(i-0.5) of gamma(anum, bnum) for i in 11..58, placed in
  bucket (i-1) mod 48, normalised to mean 1.  Each job draws g ~ gamma(aarr, barr) and gains
  exp(g) / 1800 "points"; time advances bucket by bucket, each bucket costing its weight in
  points, with fractional remainders carried over (exactly `calc_next_arrive`).  Busy buckets
  have large weights, so time passes slowly there and more jobs arrive in them.  The first job
  arrives after one inter-arrival time, as in the C code.  Subtimes are whole seconds.

Differences from `m_lublin99.c`: numpy's gamma sampler instead of Jain's method (same
distribution, different stream); the gamma cdf by its power series instead of Numerical
Recipes' series / continued fraction (same values); runtimes clamped to >= 1 s; batch class
only.

Walltime: the model has no user estimate.  Each job's walltime is
ceil(runtime * walltime_factor) (default 2, synthetic.DEFAULT_WALLTIME_FACTOR: with 1, the
exact estimate, every job would be killed at its walltime, as Batsim kills it), or none when
walltime_factor is None.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from joulesim.workload_tools.synthetic import DEFAULT_WALLTIME_FACTOR, build_workload, check

SERIAL_PROB = 0.2927
POW2_PROB = 0.6686
ULOW = 1.2
UMED_GAP = 2.0  # UHI_BATCH - UMED_BATCH = 7 - 5
UPROB = 0.875

A1, B1 = 6.57, 0.823
A2, B2 = 639.1, 0.0156
PA, PB = -0.003, 0.6986
TOO_MUCH_TIME = 12.0

AARR = 6.0415 * 1.0519
BARR = 0.8531
ANUM, BNUM = 6.1271, 5.2740
TOO_MUCH_ARRIVE_TIME = 13.0

BUCKETS = 48
SECONDS_IN_BUCKET = 86400 // BUCKETS
CYCLIC_DAY_START = 11


def gamma_cdf(x: float, shape: float, scale: float) -> float:
    """The gamma(shape, scale) cdf at x (regularised lower incomplete gamma, power series)."""
    x = x / scale
    if x <= 0:
        return 0.0
    term = total = 1.0 / shape
    a = shape
    for _ in range(10000):
        a += 1.0
        term *= x / a
        total += term
        if term < total * 1e-15:
            break
    return total * math.exp(-x + shape * math.log(x) - math.lgamma(shape))


def daily_weights(anum: float = ANUM, bnum: float = BNUM) -> np.ndarray:
    """Weights of the 48 half-hour buckets of a day (bucket 0 starts at midnight), mean 1."""
    weights = np.zeros(BUCKETS)
    for i in range(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START):
        weights[(i - 1) % BUCKETS] = gamma_cdf(i + 0.5, anum, bnum) - gamma_cdf(i - 0.5, anum, bnum)
    return weights / weights.mean()


def arrival_times(rng: np.random.Generator, count: int, aarr: float = AARR, barr: float = BARR,
                  anum: float = ANUM, bnum: float = BNUM) -> np.ndarray:
    """`count` arrival times (seconds from midnight of day 0), as `calc_next_arrive` makes them."""
    weights = daily_weights(anum, bnum)
    times = np.empty(count)
    now = 0.0
    bucket = 0
    points = 0.0
    remainder = 0.0
    for index in range(count):
        gam = rng.gamma(aarr, barr)
        while gam > TOO_MUCH_ARRIVE_TIME:
            gam = rng.gamma(aarr, barr)
        points += math.exp(gam) / SECONDS_IN_BUCKET
        step = 0.0
        while points > weights[bucket]:
            points -= weights[bucket]
            bucket = (bucket + 1) % BUCKETS
            step += SECONDS_IN_BUCKET
        new_remainder = points / weights[bucket]
        step += SECONDS_IN_BUCKET * (new_remainder - remainder)
        remainder = new_remainder
        now += step
        times[index] = now
    return times


def job_size(rng: np.random.Generator, nb_res: int, serial_prob: float = SERIAL_PROB,
             pow2_prob: float = POW2_PROB, uprob: float = UPROB) -> int:
    """One job size in 1..nb_res (`calc_number_of_nodes` with uhi = log2(nb_res))."""
    uhi = math.log2(nb_res)
    ulow = min(ULOW, uhi)
    umed = min(max(uhi - UMED_GAP, ulow), uhi)
    while True:
        u = rng.random()
        if u <= serial_prob or nb_res == 1:
            return 1
        if rng.random() <= uprob:
            par = ulow + rng.random() * (umed - ulow)
        else:
            par = umed + rng.random() * (uhi - umed)
        if u <= serial_prob + pow2_prob:
            par = math.floor(par + 0.5)
        size = int(2.0 ** par + 0.5)
        if size <= nb_res:
            return size


def job_runtime(rng: np.random.Generator, size: int) -> int:
    """One runtime in whole seconds (`time_from_nodes`), at least 1."""
    p = min(max(PA * size + PB, 0.0), 1.0)
    while True:
        if rng.random() <= p:
            log_rt = rng.gamma(A1, B1)
        else:
            log_rt = rng.gamma(A2, B2)
        if log_rt <= TOO_MUCH_TIME:
            return max(1, int(math.exp(log_rt)))


def generate(jobs: int = 1000, nb_res: int = 128, seed: int = 0,
             walltime_factor: float | None = DEFAULT_WALLTIME_FACTOR) -> dict[str, Any]:
    """A Lublin-Feitelson batch workload of `jobs` jobs on a machine of `nb_res` nodes.

    jobs: number of jobs (>= 1).  nb_res: machine size; it sets uhi = log2(nb_res), the largest
    job.  seed: seed of `numpy.random.default_rng`.  walltime_factor: walltime =
    ceil(runtime * factor), None for no walltime.  See the module docstring for the model.
    """
    check(jobs >= 1, f"the number of jobs must be >= 1, not {jobs}")
    check(nb_res >= 1, f"the machine size (nb_res) must be >= 1, not {nb_res}")
    rng = np.random.default_rng(seed)
    subtimes = np.floor(arrival_times(rng, jobs))
    sizes = [job_size(rng, nb_res) for _ in range(jobs)]
    runtimes = [job_runtime(rng, size) for size in sizes]
    return build_workload(nb_res, subtimes, sizes, runtimes, walltime_factor,
                          {"generator": "lublin", "seed": seed, "jobs": jobs, "nb_res": nb_res,
                           "walltime_factor": walltime_factor})
