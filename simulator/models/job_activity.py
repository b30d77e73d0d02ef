"""The contract between the network runner and the job models that drive it.

Under SimGrid's ptask_L07 model every thing a job does is a *parallel task* (an activity):
flops on CPUs and bytes over routes, progressing at the rate the fair-bottleneck sharing gives
it. A job model (a profile type: a sequence of leaf tasks, I/O to a storage, a usage trace, an
SMPI trace replay...) decides which activities its job runs and when; the runner
(`ptask_runner.ParallelTaskRunner`) owns time, sharing, energy and kills.

A model gets an `ActivityContext` when its job starts, starts activities on it, and is called
back when each completes. Several activities of one job may run at once (the ranks of an MPI
job); callbacks that start new activities at the same instant are batched into one re-solve.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence


class ActivityHandle(Protocol):
    """A running (or finished) activity."""

    def progress(self) -> float:
        """Fraction of the activity done, in [0, 1] (its cursor; 0 during its latency)."""
        ...

    def cancel(self) -> None:
        """Stop it now, unfinished: it frees its resources and its `then` is never called."""
        ...


class ActivityContext(Protocol):
    """What a job model may ask of the runner, for one running job."""

    # The job's executors: simulator host ids in allocation order (executor i -> hosts[i]).
    hosts: Sequence[int]

    def now(self) -> float:
        ...

    def execute(self, cpu: Sequence[tuple[int, float]], flows: Sequence[tuple[int, int, float]],
                then: Callable[[], None]) -> ActivityHandle:
        """Start one parallel task now: `cpu` lists (host, flops) executors (each its own CPU
        element, bounded by one core's speed), `flows` (source host, destination host, bytes)
        over the platform's routes. It first waits the largest route latency of its flows,
        then shares. `then()` is called when it completes (not when the job is killed)."""
        ...

    def sleep(self, seconds: float, then: Callable[[], None]) -> ActivityHandle:
        """Wait `seconds` without using any resource, then call `then()`."""
        ...

    def finish(self) -> None:
        """The job is over (its last activity completed): the runner reports it done."""
        ...

    # Optional (the network runner has them; a model checks with getattr): activities started in
    # batches, from rows of commands (kind, a, b, token) and their amounts, in compiled code, with
    # no handle object. Kinds (activity_table_kernel): 0 compute (host a, flops), 1 sleep
    # (seconds), 2 and 3 transfer (host a to host b, bytes). Each completion is reported by
    # token through the model's completed(tokens), as for BatchedCompletion; a launch records
    # a transfer's (slot, key) at by_token[token] for a non-negative token, to cancel it by.
    #
    # def launch(self, commands, amounts, first, stop, by_token) -> int:
    #     """Start commands[first:stop] up to the first of another kind; its index (or stop)."""
    # def cancel_launched(self, slot, key) -> None:
    #     """cancel() of a launched activity."""


class JobModel(Protocol):
    """One running job's behaviour, built from its profile when it starts."""

    def start(self, context: ActivityContext) -> None:
        """Start the job's first activities (or call context.finish() at once)."""
        ...

    def progress(self) -> dict[str, Any]:
        """Batsim's `job_progress` entry for this job, when it is killed now."""
        ...


class BatchedCompletion:
    """A `then` that a model takes in batches: the runner calls `model.completed(tokens)` once
    for consecutive completions of one model at one instant (in their order) rather than each
    `then()` (a compiled model crosses into its kernel once)."""

    __slots__ = ("model", "token")

    def __init__(self, model: Any, token: int):
        self.model = model
        self.token = token

    def __call__(self) -> None:
        self.model.completed((self.token,))
