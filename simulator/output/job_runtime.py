"""A finished job's run time as Batsim counts it in its outputs: never zero.

Batsim replaces a run time of exactly 0 (a job that ends at the clock it started) by 1e-5 s,
and derives the job's finish time, turnaround, stretch and slowdown from that run time, so
`out_jobs.csv` and `out_schedule.csv` show the job ending 10 us after its start.
"""

ZERO_RUNTIME_REPLACEMENT = 1e-5  # seconds


def batsim_runtime_and_finish(start: float, finish: float) -> tuple[float, float]:
    """The run time and finish time Batsim's outputs give a job that ran from start to finish."""
    runtime = finish - start
    if runtime == 0:
        return ZERO_RUNTIME_REPLACEMENT, start + ZERO_RUNTIME_REPLACEMENT
    return runtime, finish
