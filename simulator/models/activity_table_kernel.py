"""ActivityTable's event steps compiled (numba); see activity_table.py for what each does.

The same float operations, in the same order, as the table's numpy code, so either gives the
same bits. `AVAILABLE` is False without numba (the table's numpy code runs then).
"""

from __future__ import annotations

import math

import numpy as np

from joulesim.simulator.models import fair_bottleneck_kernel, int_index_kernel
from joulesim.simulator.models.fair_bottleneck_kernel import AVAILABLE, njit
from joulesim.simulator.platform.simgrid_config_keys import TCP_GAMMA

__all__ = ["AVAILABLE", "advance", "finished", "insert", "launch", "next_step", "resolve", "step"]

# Kinds of launch commands (job_activity.BATCH_COMMANDS); any other kind stops a launch.
COMPUTE, SLEEP, TRANSFER, TRANSFER_TOO = 0, 1, 2, 3
# Columns of a route plan's integers (route_plans.RoutePlans).
P_START, P_COUNT, P_FAT_START, P_FAT_COUNT, P_DISTINCT = range(5)


@njit(cache=True, nogil=True)
def insert(order: np.ndarray, size: int, key: np.ndarray, slot: int) -> int:
    """`slot` into `order[:size]`, after every slot of a key <= its own; the new size."""
    position = size
    while position > 0 and key[order[position - 1]] > key[slot]:
        order[position] = order[position - 1]
        position -= 1
    order[position] = slot
    return size + 1


@njit(cache=True, nogil=True)
def next_step(order: np.ndarray, size: int, remaining: np.ndarray, period: np.ndarray, external: np.ndarray) -> float:
    best = -1.0
    for i in range(size):
        slot = order[i]
        if external[slot]:
            continue
        if period[slot] > 0 and period[slot] < math.inf:
            value = remaining[slot] / (1.0 / period[slot]) if remaining[slot] > 0 else 0.0
        elif period[slot] == 0:
            value = 0.0
        else:
            continue
        if best < 0 or value < best:
            best = value
    return best


@njit(cache=True, nogil=True)
def step(order: np.ndarray, size: int, remaining: np.ndarray, period: np.ndarray, external: np.ndarray,
         delta: float, precision: float) -> tuple[int, float]:
    """(how many reached 0, next_step's value for the cursors as they are now)."""
    ended = 0
    best = -1.0
    for i in range(size):
        slot = order[i]
        if external[slot]:
            continue
        if period[slot] > 0 and period[slot] < math.inf:
            rate = 1.0 / period[slot]
            left = remaining[slot] - rate * delta
        elif period[slot] == 0:
            rate = math.inf
            left = 0.0
        else:
            continue
        if left < precision:
            left = 0.0
            ended += 1
        remaining[slot] = left
        value = left / rate if left > 0 else 0.0
        if best < 0 or value < best:
            best = value
    return ended, best


@njit(cache=True, nogil=True)
def advance(order: np.ndarray, size: int, remaining: np.ndarray, period: np.ndarray, elapsed: float) -> None:
    for i in range(size):
        slot = order[i]
        if period[slot] > 0:
            remaining[slot] -= elapsed / period[slot]


@njit(cache=True, nogil=True)
def finished(order: np.ndarray, size: int, end: np.ndarray, remaining: np.ndarray, limit: float,
             done: np.ndarray, precision: float) -> tuple[int, int]:
    """(how many ended, the new size); the ended ones in `done`, in order."""
    count = 0
    kept = 0
    for i in range(size):
        slot = order[i]
        if end[slot] <= limit or remaining[slot] < precision:
            done[count] = slot
            count += 1
            remaining[slot] = 0.0
        else:
            order[kept] = slot
            kept += 1
    return count, kept


@njit(cache=True, nogil=True)
def resolve(order: np.ndarray, size: int, elem_start: np.ndarray, elem_count: np.ndarray, resource_pool: np.ndarray,
            amount_pool: np.ndarray, own_pool: np.ndarray, capacity: np.ndarray, remaining: np.ndarray,
            period: np.ndarray, end: np.ndarray, changed: np.ndarray, now: float, precision: float,
            tolerance: float, max_rounds: int) -> float:
    total = 0
    for i in range(size):
        total += elem_count[order[i]]
    task_index = np.empty(total, dtype=np.int64)
    resource = np.empty(total, dtype=np.int64)
    amount = np.empty(total)
    own = np.empty(size)
    k = 0
    for i in range(size):
        slot = order[i]
        own[i] = own_pool[slot]
        start = elem_start[slot]
        for e in range(start, start + elem_count[slot]):
            task_index[k] = i
            resource[k] = resource_pool[e]
            amount[k] = amount_pool[e]
            k += 1
    periods = fair_bottleneck_kernel.fair_bottleneck_periods(task_index, resource, amount, capacity, own, precision,
                                                             tolerance, max_rounds)
    next_end = math.inf
    for i in range(size):
        slot = order[i]
        changed[slot] = periods[i] != period[slot]
        period[slot] = periods[i]
        ends = now + remaining[slot] * periods[i]
        end[slot] = ends
        if ends < next_end:
            next_end = ends
    return next_end


@njit(cache=True, nogil=True)
def _advance_to(order: np.ndarray, size: int, remaining: np.ndarray, period: np.ndarray, now: float,
                advanced_to: float) -> float:
    """The runner's _advance: every sharing cursor to `now`, once per instant."""
    if now != advanced_to:
        advance(order, size, remaining, period, now - advanced_to)
    return now


@njit(cache=True, nogil=True)
def launch(commands: np.ndarray, amounts: np.ndarray, first: int, stop: int, remaining: np.ndarray,
           period: np.ndarray, end: np.ndarray, own: np.ndarray, key: np.ndarray, elem_start: np.ndarray,
           elem_count: np.ndarray, held: np.ndarray, sharing: np.ndarray, batch_job: np.ndarray,
           token: np.ndarray, resource: np.ndarray, amount: np.ndarray, free: np.ndarray, order: np.ndarray,
           top: int, free_top: int, size: int, launches: int, plan_ids: np.ndarray, plan_int: np.ndarray,
           plan_latency: np.ndarray, plan_resource: np.ndarray, plan_fat: np.ndarray, host_speed: np.ndarray,
           multicore: bool, nb_hosts: int, now: float, advanced_to: float, job: int, by_token: np.ndarray,
           latent: np.ndarray, latent_when: np.ndarray):
    """The runner's _build_activity and _launch of commands[first:stop] (kind, a, b, token;
    amounts): compute (host a, flops), sleep (seconds), transfer (host a to host b, bytes).
    Stops at another kind, or at a transfer whose route plan is not in `plan_ids` yet
    (int_index_kernel: src x nb_hosts + dst -> row of the plan arrays).
    `top`, `free_top`, `size`: the table's; `launches`: the runner's. Those past their latency's
    start go to `latent` (slot, key) and `latent_when` (when it ends), in order. (index of the
    first command not launched, how many latent, whether any joined, advanced_to, top,
    free_top, size, launches)."""
    nb_latent = 0
    joined = False
    i = first
    while i < stop:
        kind = commands[i, 0]
        if kind > TRANSFER_TOO:
            break
        plan = -1
        if kind >= TRANSFER and amounts[i] > 0:
            plan = int_index_kernel.get(plan_ids, commands[i, 1] * nb_hosts + commands[i, 2])
            if plan < 0:
                break
        free_top -= 1
        slot = free[free_top]
        start = top
        own_period = 0.0
        latency = 0.0
        if kind == COMPUTE:
            flops = amounts[i]
            if flops > 0:
                host = commands[i, 1]
                resource[top] = host
                amount[top] = flops
                top += 1
                if multicore:  # ptask_L07's bound: one core's speed at most
                    own_period = max(own_period, flops / host_speed[host])
        elif kind == SLEEP:
            own_period = amounts[i]
        else:
            nbytes = amounts[i]
            if nbytes > 0:
                first_resource = plan_int[plan, P_START]
                for k in range(plan_int[plan, P_FAT_START], plan_int[plan, P_FAT_START] + plan_int[plan, P_FAT_COUNT]):
                    own_period = max(own_period, nbytes / plan_fat[k])
                if plan_int[plan, P_DISTINCT]:
                    for k in range(first_resource, first_resource + plan_int[plan, P_COUNT]):
                        resource[top] = plan_resource[k]
                        amount[top] = nbytes
                        top += 1
                    latency = plan_latency[plan]
                else:  # a resource crossed twice carries the bytes twice (the runner's usage sums)
                    for k in range(first_resource, first_resource + plan_int[plan, P_COUNT]):
                        found = -1
                        for e in range(start, top):
                            if resource[e] == plan_resource[k]:
                                found = e
                                break
                        if found >= 0:
                            amount[found] += nbytes
                        else:
                            resource[top] = plan_resource[k]
                            amount[top] = 0.0 + nbytes
                            top += 1
                    if plan_latency[plan] > latency:
                        latency = plan_latency[plan]
                # ptask_L07's TCP-window bound, as the runner's _build_activity applies it
                window = plan_latency[plan] * nbytes
                if window > 0 and plan_int[plan, P_COUNT] + plan_int[plan, P_FAT_COUNT] > 0:
                    own_period = max(own_period, 1.0 / (TCP_GAMMA / (2.0 * window)))
        elem_start[slot] = start
        elem_count[slot] = top - start
        own[slot] = own_period
        remaining[slot] = 1.0
        period[slot] = 0.0
        end[slot] = math.inf
        held[slot] = True
        batch_job[slot] = job
        token[slot] = commands[i, 3]
        launches += 1
        key[slot] = (job << 32) | launches
        if commands[i, 3] >= 0:
            by_token[commands[i, 3], 0] = slot
            by_token[commands[i, 3], 1] = key[slot]
        if latency > 0:
            latent[nb_latent, 0] = slot
            latent[nb_latent, 1] = key[slot]
            latent_when[nb_latent] = now + latency
            nb_latent += 1
        else:
            advanced_to = _advance_to(order, size, remaining, period, now, advanced_to)
            sharing[slot] = True
            size = insert(order, size, key, slot)
            joined = True
        i += 1
    return i, nb_latent, joined, advanced_to, top, free_top, size, launches
