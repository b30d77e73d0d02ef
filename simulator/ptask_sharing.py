"""Max-min fair sharing of CPUs and network links among running parallel tasks (vectorised).

The flow-level model of SimGrid's parallel tasks ("ptask_L07"): a parallel task progresses as
one cursor from 0 to 1 at rate x (1/s); at that rate it uses `amount` x x of each resource it
touches (flop/s on a host CPU, bytes/s on a link). Rates are max-min fair over the
constraints sum_i amount_ij x_i <= capacity_j: the smallest rate is as large as possible,
then the next, and so on (progressive filling). Tasks on a shared bottleneck get the same
cursor rate, so two equal transfers on one link get half of its bandwidth each.

A resource used by a single task (its own hosts' CPUs, its hosts' private links) never
constrains anyone else: it only bounds that task's rate, by capacity / amount. Only
resources shared by several tasks (backbones, switches) enter the filling loop, which
therefore runs at most once per shared resource, each pass a few numpy operations over
the shared entries. Results are returned as *periods*, 1/rate: the seconds the whole task
would take at that rate, computed as amount / capacity for a task limited by its own
resources, so that a lone task lasts exactly what the plain compute model says.
"""

from __future__ import annotations

import numpy as np


def max_min_periods(task_index: np.ndarray, resource_index: np.ndarray, amount: np.ndarray,
                    capacity: np.ndarray, own_period: np.ndarray) -> np.ndarray:
    """Period (1 / rate, seconds) of each task under max-min fair sharing.

    `task_index`, `resource_index`, `amount` describe the usage entries (one per task and
    resource, amounts > 0; a task may have none). `capacity` is per resource. `own_period`
    (one per task) is a lower bound on each task's period from limits outside these
    resources (a FATPIPE link, a pure delay), 0 when there is none. A task with no entry
    and no own period gets period 0 (it completes at once).
    """
    nb_tasks = own_period.shape[0]
    period = own_period.astype(float).copy()
    if task_index.size == 0:
        return period
    # Resources with a single user only bound that user: period >= amount / capacity.
    users = np.bincount(resource_index, minlength=capacity.shape[0])
    exclusive = users[resource_index] == 1
    if exclusive.any():
        np.maximum.at(period, task_index[exclusive], amount[exclusive] / capacity[resource_index[exclusive]])
    shared = ~exclusive
    if not shared.any():
        return period
    s_task, s_res, s_amount = task_index[shared], resource_index[shared], amount[shared]
    # Rates from here on: a task's own bound is 1 / period (inf when the period is 0).
    with np.errstate(divide="ignore"):
        bound = np.where(period > 0, 1.0 / np.where(period > 0, period, 1.0), np.inf)
    rate = np.full(nb_tasks, np.nan)  # NaN: not fixed yet
    remaining = capacity.astype(float).copy()
    open_resource = np.ones(capacity.shape[0], dtype=bool)
    while True:
        active = np.isnan(rate[s_task]) & open_resource[s_res]
        if not active.any():
            break
        a_task, a_res, a_amount = s_task[active], s_res[active], s_amount[active]
        level = _saturation_levels(a_task, a_res, a_amount, bound, remaining)
        entry_level = level[a_res]
        # Each task's tightest resource: its rate can be no higher, now or later (fixing
        # other tasks only frees capacity, so levels never go down).
        task_min = np.full(nb_tasks, np.inf)
        np.minimum.at(task_min, a_task, entry_level)
        unfixed = np.isnan(rate)
        by_bound = unfixed & (bound <= task_min)
        # A resource is a bottleneck of all its tasks when its level is the lowest among
        # each of their resources: all of them stop at that level, in the same pass.
        excess = np.full(capacity.shape[0], -np.inf)
        with np.errstate(invalid="ignore"):  # inf - inf on never-saturating resources: ignored below
            np.maximum.at(excess, a_res, entry_level - task_min[a_task])
        saturated = np.isfinite(level) & (excess <= level * 1e-12)
        on_saturated = np.zeros(nb_tasks, dtype=bool)
        on_saturated[a_task[saturated[a_res]]] = True
        on_saturated &= ~by_bound & unfixed
        if not (by_bound.any() or on_saturated.any()):
            rate[unfixed] = bound[unfixed]  # nothing saturates: every task at its own bound
            break
        rate[by_bound] = bound[by_bound]
        rate[on_saturated] = task_min[on_saturated]
        newly = by_bound | on_saturated
        fixed_entries = newly[s_task] & open_resource[s_res]
        np.subtract.at(remaining, s_res[fixed_entries], s_amount[fixed_entries] * rate[s_task[fixed_entries]])
        open_resource &= ~saturated
    unfixed = np.isnan(rate)
    rate[unfixed] = bound[unfixed]
    with np.errstate(divide="ignore"):
        shared_period = np.where(np.isfinite(rate) & (rate > 0), 1.0 / np.where(rate > 0, rate, 1.0), 0.0)
    # A task whose rate was set by the filling takes 1 / rate; one fixed at its own bound
    # keeps its exact own period.
    limited_by_sharing = shared_period > period * (1 + 1e-12)
    return np.where(limited_by_sharing, shared_period, period)


def _saturation_levels(task: np.ndarray, resource: np.ndarray, amount: np.ndarray,
                       bound: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """Per resource, the common rate of its unfixed tasks at which it saturates (inf if never).

    For one resource with entries sorted by their task's bound b_1 <= ... <= b_K, filling to
    level L uses sum_k amount_k * min(b_k, L). If the first k entries are bound-limited, the
    level solving "usage = remaining" is g_k = (remaining - sum_{j<k} a_j b_j) / sum_{j>=k} a_j;
    the resource's level is g_k for the first k with g_k <= b_k (inf when even all bounds fit).
    """
    task_bound = bound[task]
    order = np.lexsort((task_bound, resource))
    res_sorted = resource[order]
    a = amount[order]
    b = task_bound[order]
    starts = np.flatnonzero(np.r_[True, res_sorted[1:] != res_sorted[:-1]])
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, res_sorted.size]))
    ab = np.where(np.isfinite(b), a * b, 0.0)
    # Within each group: sum of a*b before k, and sum of a from k on.
    cum_ab = np.cumsum(ab)
    cum_a = np.cumsum(a)
    ab_before = cum_ab - ab - (cum_ab[starts] - ab[starts])[group]
    total_a = np.add.reduceat(a, starts)
    a_from = total_a[group] - (cum_a - a - (cum_a[starts] - a[starts])[group])
    g = np.maximum((remaining[res_sorted] - ab_before) / a_from, 0.0)
    index = np.arange(res_sorted.size)
    first_valid = np.minimum.reduceat(np.where(g <= b, index, res_sorted.size), starts)
    found = first_valid < res_sorted.size
    levels = np.full(remaining.shape[0], np.inf)
    levels[res_sorted[starts[found]]] = g[first_valid[found]]
    return levels
