"""The fair-bottleneck solver compiled (numba), for `ptask_sharing.fair_bottleneck_periods`.

The same arithmetic as its numpy code, in the same order, so the results are equal to the last bit (a test checks it on random systems): per-round
sums over a resource's elements are taken in element order, as `np.bincount` takes them; the
stale increments of fixed tasks are summed apart, then added, as there. Elements of fixed tasks
are skipped rather than removed, which changes no sum's order. A re-solve of a few hundred
elements costs ~300 us in numpy calls and ~20 us here (the SMPI replay re-solves at every
event). `AVAILABLE` is False without numba (the numpy code is used then).
"""

from __future__ import annotations

import math

import numpy as np

try:
    from numba import njit

    AVAILABLE = True
except ImportError:  # the test, rl and learn extras bring numba; without it the numpy rounds serve
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        return lambda function: function

__all__ = ["AVAILABLE", "fair_bottleneck_periods", "fair_bottleneck_rounds"]


@njit(cache=True, nogil=True)
def fair_bottleneck_rounds(resource: np.ndarray, weight: np.ndarray, local: np.ndarray, nb_tasks: int,
                           capacity: np.ndarray, bound: np.ndarray, slack: np.ndarray, precision: float,
                           max_rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """(value, at_bound) of each task after the rounds; see ptask_sharing for the rule.
    Elements: `resource`, `weight` (> 0), `local` (their task, grouped by task)."""
    nb_elements = resource.shape[0]
    nb_resources = capacity.shape[0]
    value = np.zeros(nb_tasks)
    at_bound = np.zeros(nb_tasks, dtype=np.bool_)
    active = np.ones(nb_tasks, dtype=np.bool_)
    alive = np.ones(nb_elements, dtype=np.bool_)
    remaining = capacity.copy()
    listed = np.zeros(nb_resources, dtype=np.bool_)
    for e in range(nb_elements):
        listed[resource[e]] = True
    stale_use = np.zeros(nb_resources)
    users = np.zeros(nb_resources, dtype=np.int64)
    used = np.zeros(nb_resources)
    leaving_use = np.zeros(nb_resources)
    increment = np.empty(nb_tasks)
    use = np.empty(nb_elements)
    fixed = np.zeros(nb_tasks, dtype=np.bool_)
    saturated = np.zeros(nb_resources, dtype=np.bool_)
    left = nb_tasks
    for _ in range(max_rounds):
        if left == 0:
            break
        users[:] = 0
        for e in range(nb_elements):
            if alive[e]:
                users[resource[e]] += 1
        for r in range(nb_resources):
            if users[r] == 0:
                listed[r] = False
        for t in range(nb_tasks):
            increment[t] = math.inf
        for e in range(nb_elements):
            if alive[e]:
                r = resource[e]
                share = remaining[r] / max(users[r], 1)
                candidate = share / weight[e]
                t = local[e]
                if candidate < increment[t] or math.isnan(candidate):
                    increment[t] = candidate
        for t in range(nb_tasks):
            fixed[t] = False
            if active[t]:
                room = bound[t] - value[t]
                if room < increment[t] or math.isnan(room):
                    increment[t] = room
                new_value = value[t] + increment[t]
                value[t] = new_value
                if math.isfinite(bound[t]) and bound[t] - new_value <= slack[t]:
                    at_bound[t] = True
                    fixed[t] = True
        used[:] = 0.0
        for e in range(nb_elements):
            if alive[e]:
                use[e] = weight[e] * increment[local[e]]
                used[resource[e]] += use[e]
        for r in range(nb_resources):
            saturated[r] = False
            if listed[r]:
                remaining[r] = remaining[r] - used[r] - stale_use[r]
                if remaining[r] < precision:
                    remaining[r] = 0.0
                if remaining[r] <= 0.0:
                    saturated[r] = True
                    listed[r] = False
        any_fixed = False
        for e in range(nb_elements):
            if alive[e] and saturated[resource[e]]:
                fixed[local[e]] = True
        for t in range(nb_tasks):
            if active[t] and fixed[t]:
                any_fixed = True
        if not any_fixed:
            continue
        leaving_use[:] = 0.0
        for e in range(nb_elements):
            if alive[e] and fixed[local[e]]:
                leaving_use[resource[e]] += use[e]
                alive[e] = False
        for r in range(nb_resources):
            stale_use[r] += leaving_use[r]
        for t in range(nb_tasks):
            if active[t] and fixed[t]:
                active[t] = False
                left -= 1
    return value, at_bound


@njit(cache=True, nogil=True)
def fair_bottleneck_periods(task_index: np.ndarray, resource_index: np.ndarray, amount: np.ndarray,
                            capacity: np.ndarray, own_period: np.ndarray, precision: float, tolerance: float,
                            max_rounds: int) -> np.ndarray:
    """ptask_sharing.fair_bottleneck_periods compiled whole, elements grouped by task (the
    caller sorts them otherwise): the single-element resources' bounds, then the rounds."""
    period = own_period.astype(np.float64).copy()
    nb_resources = capacity.shape[0]
    count = 0
    for e in range(task_index.shape[0]):
        if amount[e] > 0:
            count += 1
    if count == 0:
        return period
    task = np.empty(count, dtype=np.int64)
    resource = np.empty(count, dtype=np.int64)
    weight = np.empty(count)
    k = 0
    for e in range(task_index.shape[0]):
        if amount[e] > 0:
            task[k] = task_index[e]
            resource[k] = resource_index[e]
            weight[k] = amount[e]
            k += 1
    elements_on = np.zeros(nb_resources, dtype=np.int64)
    for e in range(count):
        elements_on[resource[e]] += 1
    # A resource with a single element only bounds its task (see ptask_sharing).
    bound_slack = np.zeros(period.shape[0])
    e = 0
    while e < count:
        t = task[e]
        end = e
        tightest = 0.0
        has_exclusive = False
        while end < count and task[end] == t:
            if elements_on[resource[end]] == 1:
                has_exclusive = True
                candidate = weight[end] / capacity[resource[end]]
                if candidate > tightest or math.isnan(candidate):
                    tightest = candidate
            end += 1
        if has_exclusive:
            defining_weight = 0.0
            for f in range(e, end):
                if elements_on[resource[f]] == 1 and weight[f] / capacity[resource[f]] == tightest:
                    if weight[f] > defining_weight:
                        defining_weight = weight[f]
            if tightest > 0 and tightest >= period[t]:
                bound_slack[t] = precision / defining_weight
            if tightest > period[t] or math.isnan(tightest):
                period[t] = tightest
        e = end
    shared = 0
    for e in range(count):
        if elements_on[resource[e]] != 1:
            shared += 1
    if shared == 0:
        return period
    s_resource = np.empty(shared, dtype=np.int64)
    s_weight = np.empty(shared)
    s_local = np.empty(shared, dtype=np.int64)
    tasks = np.empty(shared, dtype=np.int64)
    nb_tasks = 0
    k = 0
    for e in range(count):
        if elements_on[resource[e]] != 1:
            if nb_tasks == 0 or tasks[nb_tasks - 1] != task[e]:
                tasks[nb_tasks] = task[e]
                nb_tasks += 1
            s_resource[k] = resource[e]
            s_weight[k] = weight[e]
            s_local[k] = nb_tasks - 1
            k += 1
    bound = np.empty(nb_tasks)
    slack = np.empty(nb_tasks)
    own = np.empty(nb_tasks)
    for i in range(nb_tasks):
        own[i] = period[tasks[i]]
        bound[i] = 1.0 / own[i] if own[i] > 0 else math.inf
        slack[i] = bound_slack[tasks[i]] if bound_slack[tasks[i]] > 0 else bound[i] * tolerance
    value, at_bound = fair_bottleneck_rounds(s_resource, s_weight, s_local, nb_tasks, capacity, bound, slack,
                                             precision, max_rounds)
    for i in range(nb_tasks):
        if at_bound[i]:
            period[tasks[i]] = own[i]
        else:
            period[tasks[i]] = 1.0 / value[i] if value[i] > 0 else math.inf
    return period
