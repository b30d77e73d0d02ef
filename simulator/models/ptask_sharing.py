"""Fair-bottleneck sharing of CPUs and network links among running parallel tasks (vectorised).

Batsim always runs SimGrid's `ptask_L07` host model, whose linear system is solved by the lmm
*FairBottleneck* solver (SimGrid 3.32: src/surf/ptask_L07.cpp, src/kernel/lmm/fair_bottleneck.cpp,
src/kernel/lmm/System.cpp; the same code lives in src/kernel/resource/models/ptask_L07.cpp in
later versions). This module reproduces that rule.

What the solver works on (ptask_L07.cpp, L07Action's constructor):
- A *variable* is one parallel task past its latency; its value is the task's cursor rate
  (the whole task is 1 unit of work, so 1 / value is the seconds the whole task takes).
- A *constraint* is a resource with a capacity: a host CPU (flop/s) or a link (bytes/s).
- An *element* joins a variable to a constraint with a *weight*, the amount the task puts on
  it per unit of cursor: on the CPU of each executor its flops (one element per executor, even
  when two executors share a host), on each link of each route the bytes of that route's flow
  (several flows of one task on a link add up into one element; on a FATPIPE link the largest
  flow counts). Elements of weight 0 play no part.
- A variable may have a *bound* on its value; ptask_L07 sets min over executors of
  speed / flops, which the CPU constraints imply anyway (and a TCP-window bound, see below).

How the rates are found (fair_bottleneck.cpp, FairBottleneck::do_solve): every variable starts
at 0 and every constraint with its whole capacity *remaining*. Then rounds, until every
variable is fixed:
1. each constraint's *share* is remaining / n, n being its elements whose variable is not fixed
   yet (a constraint with none leaves the rounds);
2. each unfixed variable rises by its *increment* mu, the smallest share / weight over its
   elements (and no more than what is left below its bound; reaching the bound fixes it);
3. each constraint's remaining goes down by weight x mu of *every* element on it, including
   variables fixed in earlier rounds, which count again with the last increment they had
   (SimGrid keeps that stale mu: a fact of 3.32 and of SimGrid since, checked against
   SimGrid 3.32 itself); a remaining below 1e-5 (SimGrid's maxmin/precision) is 0, and a
   constraint at 0 is *saturated*: it leaves the rounds and fixes all its variables.
So on a saturated link every task gets an equal share in bytes/s, whatever its size or its
number of flows; a task limited elsewhere leaves the rest to the others. The stale increments
make a constraint saturate early when three or more levels meet on it: a backbone of 100
shared by tasks capped at 10 and 40 by their own links and a free one gives 10, 40 and 45
(real SimGrid 3.32 gives the same), not 10, 40 and 50.

What differs from SimGrid here, on purpose:
- A resource with a single element can only bound its task: it enters as the bound
  capacity / weight (same rounds, same results), which keeps the rounds to shared resources.
- A FATPIPE link is a bound of each task on it (largest flow / capacity, computed by the
  caller in `own_period`): exact for one task on it. SimGrid's accounting of several tasks on
  one FATPIPE link (it subtracts only the smallest use of the round) is not reproduced: it
  can let a task through faster than the link (SimGrid 3.32: 3e9 B in 3.33 s through a
  100 MB/s FATPIPE backbone beside a task held at 20 MB/s by its own links).
- ptask_L07's TCP-window bound (network/TCP-gamma / (2 x max over flows of latency x bytes))
  is not computed here: the runner gives it as the task's own period (ptask_runner.py). It binds
  when a route's latency exceeds about 2 ms per GB/s, and on a Vivaldi zone, whose hosts have no
  links, it is a transfer's only limit. (The compiled launches of usage traces and SMPI
  replays, activity_table_kernel.launch, apply the same bound.)
- A bound given by the caller counts as reached within 1e-12 of it (SimGrid tests equality
  of floats); one from a single-element resource when its remaining is below 1e-5, as SimGrid
  sees that resource.

Results are returned as *periods*, 1/rate: the seconds the whole task would take at that rate,
computed as amount / capacity for a task at its own bound, so that a lone task lasts exactly
what the plain compute model says.
"""

from __future__ import annotations

import numpy as np

from joulesim.simulator.models import fair_bottleneck_kernel as kernel

# SimGrid's maxmin/precision (default 1e-5): a constraint's remaining below it is 0.
REMAINING_PRECISION = 1e-5
# A variable within this (relative) of a bound given by the caller has reached it.
BOUND_TOLERANCE = 1e-12
# The compiled solver when numba is there (same results to the last bit); tests switch it off to compare.
USE_KERNEL = True
# Rounds stop here even if some variable is still unfixed (each round fixes a variable or
# shrinks the remaining of a constraint by a fraction, so real cases need far fewer). Rates
# stay feasible at any round: the accounted remaining never exceeds the real one.
MAX_ROUNDS = 100_000


def fair_bottleneck_periods(task_index: np.ndarray, resource_index: np.ndarray, amount: np.ndarray,
                            capacity: np.ndarray, own_period: np.ndarray) -> np.ndarray:
    """Period (1 / rate, seconds) of each task under SimGrid's fair-bottleneck sharing.

    `task_index`, `resource_index`, `amount` describe the elements (one per task and
    resource, except that a task may have several on one CPU, one per executor; amounts >= 0,
    0 ones ignored; a task may have none). `capacity` is per resource. `own_period` (one per
    task) is a lower bound on each task's period from limits outside these resources (a
    FATPIPE link, a pure delay), 0 when there is none. A task with no element and no own
    period gets period 0 (it completes at once).
    """
    task_index = np.asarray(task_index, dtype=np.int64)
    resource_index = np.asarray(resource_index, dtype=np.int64)
    amount = np.asarray(amount, dtype=float)
    if (task_index[1:] < task_index[:-1]).any():  # elements grouped by task: per-task minima are one reduceat
        order = np.argsort(task_index, kind="stable")
        task_index, resource_index, amount = task_index[order], resource_index[order], amount[order]
    if kernel.AVAILABLE and USE_KERNEL:  # the same, compiled (fair_bottleneck_kernel.py)
        return kernel.fair_bottleneck_periods(task_index, resource_index, amount, np.asarray(capacity, dtype=float),
                                              np.asarray(own_period, dtype=float), REMAINING_PRECISION,
                                              BOUND_TOLERANCE, MAX_ROUNDS)
    period = own_period.astype(float).copy()
    if task_index.size == 0:
        return period
    positive = amount > 0
    task, resource, weight = task_index[positive], resource_index[positive], amount[positive]
    if task.size == 0:
        return period
    capacity = np.asarray(capacity, dtype=float)
    # A resource with a single element only bounds that task: period >= amount / capacity.
    # SimGrid fixes the task when that resource's remaining, capacity - weight x rate, falls
    # below its precision: when the rate is within precision / weight of the bound.
    bound_slack = np.zeros(period.shape[0])
    elements_on = np.bincount(resource, minlength=capacity.shape[0])
    exclusive = elements_on[resource] == 1
    if exclusive.any():
        with np.errstate(divide="ignore"):
            exclusive_period = np.where(exclusive, weight / capacity[resource], 0.0)
        starts = _group_starts(task)
        ids = task[starts]
        tightest = np.maximum.reduceat(exclusive_period, starts)
        defining = exclusive & (exclusive_period == np.repeat(tightest, _run_lengths(starts, task.size)))
        defining_weight = np.maximum.reduceat(np.where(defining, weight, 0.0), starts)
        by_resource = (tightest > 0) & (tightest >= period[ids])
        bound_slack[ids[by_resource]] = REMAINING_PRECISION / defining_weight[by_resource]
        period[ids] = np.maximum(period[ids], tightest)
    shared = ~exclusive
    if not shared.any():
        return period
    task, resource, weight = task[shared], resource[shared], weight[shared]
    starts = _group_starts(task)
    tasks = task[starts]  # the tasks that take part in the rounds, in order
    local = np.cumsum(_changes(task, False))  # element -> index in `tasks`
    own = period[tasks]
    with np.errstate(divide="ignore"):
        bound = np.where(own > 0, 1.0 / np.where(own > 0, own, 1.0), np.inf)
    # Own periods from the caller: reached within BOUND_TOLERANCE (SimGrid tests equality).
    slack = np.where(bound_slack[tasks] > 0, bound_slack[tasks], bound * BOUND_TOLERANCE)
    value, at_bound = _rounds(resource, weight, starts, local, tasks.size, capacity, bound, slack)
    # A task at its own bound keeps its exact own period; the others take 1 / rate.
    with np.errstate(divide="ignore"):
        shared_period = np.where(value > 0, 1.0 / np.where(value > 0, value, 1.0), np.inf)
    period[tasks] = np.where(at_bound, own, shared_period)
    return period


def _rounds(resource: np.ndarray, weight: np.ndarray, starts: np.ndarray, local: np.ndarray,
            nb_tasks: int, capacity: np.ndarray, bound: np.ndarray, slack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rounds in numpy (fair_bottleneck_kernel.py compiles the same loop with numba)."""
    value = np.zeros(nb_tasks)
    at_bound = np.zeros(nb_tasks, dtype=bool)
    remaining = capacity.copy()
    listed = np.zeros(capacity.shape[0], dtype=bool)
    listed[resource] = True
    # Per resource, what the tasks fixed in earlier rounds take from its remaining again at
    # each round (weight x their last increment, SimGrid's stale mu).
    stale_use = np.zeros(capacity.shape[0])
    # Only the elements of unfixed tasks are kept from round to round; `active` maps the
    # current local task numbers to `tasks`.
    active = np.arange(nb_tasks)
    for _ in range(MAX_ROUNDS):
        if active.size == 0:
            break
        users = np.bincount(resource, minlength=capacity.shape[0])
        listed &= users > 0  # no unfixed task on it: it leaves the rounds
        share = remaining / np.maximum(users, 1)
        increment = np.minimum.reduceat(share[resource] / weight, starts)
        increment = np.minimum(increment, bound[active] - value[active])
        new_value = value[active] + increment
        value[active] = new_value
        reached = np.isfinite(bound[active]) & (bound[active] - new_value <= slack[active])
        at_bound[active[reached]] = True
        use = weight * increment[local]
        used = np.bincount(resource, weights=use, minlength=capacity.shape[0])
        remaining = np.where(listed, remaining - used - stale_use, remaining)
        remaining[listed & (remaining < REMAINING_PRECISION)] = 0.0
        saturated = listed & (remaining <= 0.0)
        listed &= ~saturated
        fixed = reached.copy()
        fixed[local[saturated[resource]]] = True
        if not fixed.any():
            continue
        leaving = fixed[local]
        stale_use += np.bincount(resource[leaving], weights=use[leaving], minlength=capacity.shape[0])
        staying = ~leaving
        renumber = np.cumsum(~fixed) - 1
        resource, weight, local = resource[staying], weight[staying], renumber[local[staying]]
        active = active[~fixed]
        starts = _group_starts(local)
    return value, at_bound


def _group_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Where each run of equal keys begins."""
    return np.flatnonzero(_changes(sorted_keys, True))


def _changes(keys: np.ndarray, first: bool) -> np.ndarray:
    """Where each key differs from the one before it (`first` for the first). np.r_ would do it
    at about ten times the cost: this runs several times per re-solve."""
    flags = np.empty(keys.size, dtype=bool)
    if keys.size:
        flags[0] = first
        np.not_equal(keys[1:], keys[:-1], out=flags[1:])
    return flags


def _run_lengths(starts: np.ndarray, total: int) -> np.ndarray:
    """Lengths of the runs that begin at `starts` in an array of `total` elements."""
    ends = np.empty(starts.size, dtype=starts.dtype)
    ends[:-1] = starts[1:]
    if starts.size:
        ends[-1] = total
    return ends - starts
