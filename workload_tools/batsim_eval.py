"""The workload generator of the Batsim evaluation experiment (Batsim thesis, section 4.7.2).

Source: M. Poquet, "Simulation approach for resource management", PhD thesis, Université
Grenoble Alpes, 2017, §4.7.2 "Workload Generation" (itself inspired by Feitelson's book,
"Workload Modeling for Computer Systems Performance Evaluation", 2015, §9.6):

* N jobs (the thesis used N = 800, our default), generated iteratively;
* inter-arrival times ~ Weibull(shape k = 2, scale lambda = 15) seconds, so their mean is
  lambda * Gamma(1 + 1/k) = 15 * Gamma(1.5) ~= 13.29 s; the first job arrives after one
  inter-arrival time; subtimes are rounded down to whole seconds of the running sum;
* size = 2 ** floor(u) with u ~ lognormal(mu = 0.25, sigma = 0.5); only variates with
  floor(u) in [0, 5] are kept (the others are drawn again), so sizes are 1, 2, 4, 8, 16, 32.

Runtimes are NOT specified by §4.7.2: in the thesis each job runs one of 47 NAS Parallel
Benchmark MPI programs (IS, FT, LU; classes B to D) of its size, whose measured times became
delay profiles (§4.7.1), and those times are not published.  Our stand-in: each job's runtime
is log-uniform in [runtime_min, runtime_max] seconds (defaults 10 s and 600 s), rounded to a
whole second, drawn with the same generator; jobs with equal runtimes share a delay profile.
The profiles are `delay` profiles (the thesis also used parallel-task profiles, not made here).

nb_res defaults to 32, the largest size (the thesis ran on the nodes under one switch of the
Graphene cluster); it must be >= 32 so that every job fits.

Walltime: not specified by the thesis; walltime = ceil(runtime * walltime_factor)
(default 2, synthetic.DEFAULT_WALLTIME_FACTOR), none when walltime_factor is None.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from joulesim.workload_tools.synthetic import DEFAULT_WALLTIME_FACTOR, build_workload, check

WEIBULL_SHAPE = 2.0
WEIBULL_SCALE = 15.0
LOGNORMAL_MU = 0.25
LOGNORMAL_SIGMA = 0.5
MAX_EXPONENT = 5  # log2(32)


def size_probabilities(mu: float = LOGNORMAL_MU, sigma: float = LOGNORMAL_SIGMA) -> dict[int, float]:
    """P(size = 2**k) for k = 0..5 implied by the truncated lognormal (used by the tests)."""
    def cdf(x: float) -> float:
        if x <= 0:
            return 0.0
        return 0.5 * (1.0 + math.erf((math.log(x) - mu) / (sigma * math.sqrt(2.0))))

    mass = {2 ** k: cdf(k + 1) - cdf(k) for k in range(MAX_EXPONENT + 1)}
    total = sum(mass.values())
    return {size: m / total for size, m in mass.items()}


def generate(jobs: int = 800, nb_res: int = 32, seed: int = 0, runtime_min: float = 10.0,
             runtime_max: float = 600.0, walltime_factor: float | None = DEFAULT_WALLTIME_FACTOR) -> dict[str, Any]:
    """A §4.7.2 workload of `jobs` jobs.

    jobs: N (>= 1).  nb_res: machine size (>= 32).  seed: seed of `numpy.random.default_rng`.
    runtime_min, runtime_max: bounds (s) of the log-uniform stand-in runtime.
    walltime_factor: walltime = ceil(runtime * factor), None for no walltime.
    """
    check(jobs >= 1, f"the number of jobs must be >= 1, not {jobs}")
    check(nb_res >= 2 ** MAX_EXPONENT,
          f"the machine size (nb_res) must be >= 32 (the largest job size), not {nb_res}")
    check(1 <= runtime_min <= runtime_max,
          f"need 1 <= runtime-min <= runtime-max, not {runtime_min} and {runtime_max}")
    rng = np.random.default_rng(seed)
    gaps = WEIBULL_SCALE * rng.weibull(WEIBULL_SHAPE, size=jobs)
    subtimes = np.floor(np.cumsum(gaps))
    exponents = np.empty(jobs, dtype=np.int64)
    filled = 0
    while filled < jobs:
        u = rng.lognormal(LOGNORMAL_MU, LOGNORMAL_SIGMA, size=jobs - filled)
        k = np.floor(u).astype(np.int64)
        k = k[(k >= 0) & (k <= MAX_EXPONENT)]
        exponents[filled:filled + len(k)] = k
        filled += len(k)
    sizes = (2 ** exponents).tolist()
    log_rt = rng.uniform(math.log(runtime_min), math.log(runtime_max), size=jobs)
    runtimes = np.clip(np.rint(np.exp(log_rt)), max(1, math.ceil(runtime_min)),
                       max(1, math.floor(runtime_max))).astype(np.int64).tolist()
    return build_workload(nb_res, subtimes, sizes, runtimes, walltime_factor,
                          {"generator": "batsim-eval", "seed": seed, "jobs": jobs,
                           "nb_res": nb_res, "runtime_min": runtime_min,
                           "runtime_max": runtime_max, "walltime_factor": walltime_factor})
