"""The job stream of the cluster-group broker paper (seed 004, "Energy-efficient computations
for a group of clusters", §3 and table 3).

What the paper states (table 3 and the text before it):

* job width (processors) from 1 to 10;
* job duration from 10 minutes to 2 hours;
* a fraction 0.8 of single-processor jobs;
* a density in jobs per day (the experiments sweep 500 ... 10,000+ jobs/day);
* "on average the probability of a job arriving at night is half that of the daytime"
  (for one cluster; the paper says a broker over many time zones sees a uniform stream, but the
  stream it simulates follows table 3 and we keep the day/night modulation, which
  `night_weight = 1.0` switches off).

What we choose where the paper is silent:

* day hours: the paper does not define them; we use 08:00-20:00 (`day_start`, `day_end`), the
  simulation starting at midnight (t = 0 is 00:00 of day 0);
* arrivals: a Poisson process whose rate is piecewise constant, twice as high in the day
  hours as at night (`night_weight = 0.5`), scaled so that a whole day holds `jobs_per_day`
  jobs on average.  It is sampled exactly by time change: unit-rate exponential gaps mapped
  through the inverse of the cumulative rate.  Subtimes are whole seconds (rounded down);
* widths: 1 with probability `single_fraction` (0.8), otherwise uniform on 2..10;
* durations: uniform on [600, 7200] whole seconds (the paper gives only the range);
* the number of jobs: either `days` (every arrival in [0, days * 86400) is kept, so the count
  is random with mean days * jobs_per_day) or `jobs` (exactly that many jobs);
* nb_res defaults to 10, the widest job (the paper's clusters are larger; pass their size);
* walltime: not stated; walltime = ceil(duration * walltime_factor) (default 2,
  synthetic.DEFAULT_WALLTIME_FACTOR), none when walltime_factor is None;
* profiles: delays by default (hosts stay at idle power); `compute_speed` (the hosts' flop/s)
  makes each job a computation of the same duration that loads its hosts fully, as an energy
  study needs (`synthetic.delays_as_computations`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from joulesim.workload_tools.synthetic import DEFAULT_WALLTIME_FACTOR, build_workload, check, delays_as_computations

MIN_WIDTH, MAX_WIDTH = 1, 10
SINGLE_FRACTION = 0.8
MIN_DURATION, MAX_DURATION = 600, 7200
DAY = 86400


class DailyRate:
    """Piecewise-constant arrival rate over a day: `night_weight` outside [day_start, day_end) h."""

    def __init__(self, jobs_per_day: float, day_start: float, day_end: float, night_weight: float):
        day_len = (day_end - day_start) * 3600.0
        night_len = DAY - day_len
        self.day_start = day_start * 3600.0
        self.day_end = day_end * 3600.0
        # rates (jobs per second) such that one whole day holds jobs_per_day jobs
        unit = jobs_per_day / (day_len + night_weight * night_len)
        self.day_rate = unit
        self.night_rate = unit * night_weight
        # pieces of one day: (start second, end second, rate)
        self.pieces = [(0.0, self.day_start, self.night_rate),
                       (self.day_start, self.day_end, self.day_rate),
                       (self.day_end, float(DAY), self.night_rate)]
        self.per_day = jobs_per_day

    def inverse_cumulative(self, mass: np.ndarray) -> np.ndarray:
        """Times t with cumulative rate Lambda(t) = mass (mass sorted, >= 0)."""
        days = np.floor(mass / self.per_day)
        rest = mass - days * self.per_day
        out = np.empty_like(mass)
        done = np.zeros(mass.shape, dtype=bool)
        below = 0.0
        for start, end, rate in self.pieces:
            width = (end - start) * rate
            inside = ~done & (rest < below + width) if rate > 0 else np.zeros(mass.shape, dtype=bool)
            out[inside] = start + (rest[inside] - below) / rate
            done |= inside
            below += width
        out[~done] = DAY  # rounding at the very end of a day
        return days * DAY + out


def generate(jobs_per_day: float = 1000.0, days: float | None = None, jobs: int | None = None,
             nb_res: int = MAX_WIDTH, seed: int = 0, day_start: float = 8.0, day_end: float = 20.0,
             night_weight: float = 0.5, single_fraction: float = SINGLE_FRACTION,
             walltime_factor: float | None = DEFAULT_WALLTIME_FACTOR, compute_speed: float | None = None) -> dict[str, Any]:
    """A broker job stream (seed 004, table 3) over `days` days or of `jobs` jobs.

    jobs_per_day: mean density.  days / jobs: give exactly one.  nb_res: machine size (>= 10).
    seed: seed of `numpy.random.default_rng`.  day_start, day_end: day hours (default 8-20).
    night_weight: night rate / day rate (0.5: day twice as likely).  single_fraction: share of
    width-1 jobs.  walltime_factor: walltime = ceil(duration * factor), None for no walltime.
    """
    check((days is None) != (jobs is None), "give exactly one of the number of days and of jobs")
    check(jobs_per_day > 0, f"the density (jobs per day) must be > 0, not {jobs_per_day}")
    check(days is None or days > 0, f"the number of days must be > 0, not {days}")
    check(jobs is None or jobs >= 1, f"the number of jobs must be >= 1, not {jobs}")
    check(nb_res >= MAX_WIDTH, f"the machine size (nb_res) must be >= 10 (the widest job), not {nb_res}")
    check(0 <= day_start < day_end <= 24, f"need 0 <= day start < day end <= 24, not {day_start}-{day_end}")
    check(night_weight > 0, f"the night weight must be > 0, not {night_weight}")
    check(0 <= single_fraction <= 1, f"the single-processor fraction must be in [0, 1], not {single_fraction}")
    check(compute_speed is None or compute_speed > 0, f"the compute speed (flop/s) must be > 0, not {compute_speed}")
    rng = np.random.default_rng(seed)
    rate = DailyRate(jobs_per_day, day_start, day_end, night_weight)
    if jobs is not None:
        mass = np.cumsum(rng.exponential(1.0, size=jobs))
    else:
        horizon = days * jobs_per_day
        chunks = []
        total = 0.0
        while True:
            batch = total + np.cumsum(rng.exponential(1.0, size=max(16, int(horizon * 1.1) + 16)))
            keep = batch[batch < horizon]
            chunks.append(keep)
            if len(keep) < len(batch):
                break
            total = batch[-1]
        mass = np.concatenate(chunks)
        check(len(mass) > 0, "no job arrives in so short a time; give more days or a higher density")
    times = rate.inverse_cumulative(mass)
    if days is not None:
        times = times[times < days * DAY]
    count = len(times)
    subtimes = np.floor(times)
    single = rng.random(count) < single_fraction
    widths = np.where(single, 1, rng.integers(2, MAX_WIDTH + 1, size=count))
    durations = rng.integers(MIN_DURATION, MAX_DURATION + 1, size=count)
    description = {"generator": "grid-stream", "seed": seed, "jobs_per_day": jobs_per_day, "days": days,
                   "jobs": jobs if jobs is not None else count, "nb_res": nb_res,
                   "day_hours": [day_start, day_end], "night_weight": night_weight,
                   "single_fraction": single_fraction, "walltime_factor": walltime_factor}
    if compute_speed is not None:  # only then: the default stream's bytes stay as they were
        description["compute_speed"] = compute_speed
    workload = build_workload(nb_res, subtimes, widths.tolist(), durations.tolist(), walltime_factor, description)
    return workload if compute_speed is None else delays_as_computations(workload, compute_speed)
