"""The network runner's instants for a compiled SMPI replay, in compiled code (numba).

When the runner holds a single job, an `smpi` job whose ranks run in smpi_replay_kernel
(CompiledSmpiReplay), and neither activities of its own objects nor energy to report, each of
its instants (ParallelTaskRunner.process) is done here, with the same operations in the same
order as its Python: the launched latencies that end join the sharing; the completions go to
the replay's kernel, whose commands are carried out (launches, cancellations); one re-solve.
The runner's Python then runs once per call rather than once per event (an SMPI replay has an
event every few microseconds of simulated time).

The loop stops where Python is needed, in the middle of an instant's completions: a command it
does not carry out (the job's end, a transfer whose route is not planned yet, or one that would
not fit in the runner's arrays) or a status of the replay's kernel other than OK (its arrays
must grow, or an error). The runner finishes that instant in Python and goes on.
"""

from __future__ import annotations

import math

import numpy as np

from joulesim.simulator.models import activity_table_kernel as table_kernel
from joulesim.simulator.models import latency_heap_kernel as heap_kernel
from joulesim.simulator.models import smpi_replay_kernel as replay_kernel
from joulesim.simulator.models.fair_bottleneck_kernel import AVAILABLE, njit

__all__ = ["BOUNDS", "RESUME", "instants"]

# Why `instants` returned: no instant left within the bounds it was given, or the runner must go
# on in Python from ints[I_COMMAND] of the replay's commands, after its kernel returned ints[I_STATUS].
BOUNDS, RESUME = 0, 1
# ints: the table's and the runner's counters, and what a RESUME leaves.
I_TOP, I_FREE_TOP, I_SIZE, I_LAUNCHES, I_HEAP, I_RESOLVES, I_COMMAND, I_STATUS, I_TOKENS, I_LONGEST = range(10)
# floats: the runner's
F_ADVANCED_TO, F_NEXT_COMPLETION = range(2)


@njit(cache=True, nogil=True)
def _leave(order: np.ndarray, size: int, sharing: np.ndarray, slot: int) -> int:
    """ActivityTable.leave: the new size."""
    position = 0
    while order[position] != slot:
        position += 1
    for i in range(position, size - 1):
        order[i] = order[i + 1]
    sharing[slot] = False
    return size - 1


def _compiled_with_signature(function):
    """Compiled when imported (smpi_replay_compiled loads this module under its notice), not at
    the first call, with the types the runner passes."""
    if not AVAILABLE:
        return function
    from numba import types

    t = dict(replay_kernel._SIGNATURE_TYPES, B1=types.Array(types.boolean, 1, "C"))
    signature = types.Tuple((t["I"], t["F"]))(*(t[name] for name in (
        "F F F F A1 F1 "  # now, start, horizon, limit, ints, floats
        "F1 F1 F1 F1 A1 A1 A1 B1 B1 A1 A1 B1 A1 F1 A1 A1 "  # the table's arrays
        "DICT A2 F1 A1 F1 F1 B I F1 "  # plans, host speeds, multicore, nb_hosts, capacity
        "F1 A2 I STATE DICT A2 A1 A1 A2 F1 "  # heap, job, replay state, channels, by_token, scratch
        "F F I F").split()))  # solver constants, done_s
    return njit(signature, cache=True, nogil=True)(function)


@_compiled_with_signature
def instants(now, start, horizon, limit, ints, floats, remaining, period, end, own, key, elem_start, elem_count,
             held, sharing, batch_job, token, changed, resource, amount, free, order, plan_ids, plan_int,
             plan_latency, plan_resource, plan_fat, host_speed, multicore, nb_hosts, capacity, heap_when,
             heap_entries, job, S, chan_of, by_token, tokens, done, latent, latent_when, precision,
             tolerance, max_rounds, done_s):
    """ParallelTaskRunner.process's instants from `now` (its clock, the first one due), while the
    next instant is within the bounds (`t - start <= horizon`, or any for a negative horizon;
    before `limit`). (BOUNDS or RESUME, the clock)."""
    top, free_top, size = ints[I_TOP], ints[I_FREE_TOP], ints[I_SIZE]
    launches, heap_size, resolves = ints[I_LAUNCHES], ints[I_HEAP], ints[I_RESOLVES]
    longest = ints[I_LONGEST]
    advanced_to, next_completion = floats[F_ADVANCED_TO], floats[F_NEXT_COMPLETION]
    G, commands, amounts = S[5], S[13], S[14]
    status = BOUNDS
    while True:
        # -------------------------------------------------- one step of the instant (ParallelTaskRunner._instant)
        heap_size, size, joined, advanced_to = heap_kernel.join_due(
            heap_when, heap_entries, heap_size, order, size, key, held, sharing, remaining, period, now, advanced_to)
        dirty = joined > 0
        if next_completion <= now:  # _completions
            advanced_to = table_kernel._advance_to(order, size, remaining, period, now, advanced_to)
            count, size = table_kernel.finished(order, size, end, remaining, now + done_s, done, 0.0)
            nb_tokens = 0
            for i in range(count):
                slot = done[i]
                sharing[slot] = False
                if batch_job[slot] == job:  # (others are of finished jobs: no one to call back)
                    tokens[nb_tokens] = token[slot]
                    nb_tokens += 1
                held[slot] = False  # release_many
                free[free_top] = slot
                free_top += 1
            if nb_tokens > 0:  # CompiledSmpiReplay.completed(tokens): its kernel, then its commands
                delivered = tokens[:nb_tokens].copy()
                G[replay_kernel.G_TOKEN_POS] = 0
                while True:
                    kernel_status = replay_kernel.run(S, chan_of, delivered, now)
                    count = G[replay_kernel.G_NCMD]
                    index = 0
                    while index < count:  # _carry_out, with the runner's launch (_launch_commands)
                        if free_top < count - index or top + (count - index) * longest > resource.shape[0] or \
                                heap_when.shape[0] < heap_size + (count - index) or latent.shape[0] < count - index:
                            break  # the runner makes room (ActivityTable.reserve)
                        (index_after, nb_latent, launched_joined, advanced_to, top, free_top, size,
                         launches) = table_kernel.launch(
                            commands, amounts, index, count, remaining, period, end, own, key, elem_start, elem_count,
                            held, sharing, batch_job, token, resource, amount, free, order, top, free_top, size,
                            launches, plan_ids, plan_int, plan_latency, plan_resource, plan_fat, host_speed,
                            multicore, nb_hosts, now, advanced_to, job, by_token, latent, latent_when)
                        if launched_joined:
                            dirty = True
                        heap_size = heap_kernel.push(heap_when, heap_entries, heap_size, latent, latent_when,
                                                     nb_latent)
                        index = index_after
                        if index == count or commands[index, 0] != replay_kernel.CMD_CANCEL:
                            break
                        slot = by_token[commands[index, 3], 0]  # cancel_launched
                        if held[slot] and key[slot] == by_token[commands[index, 3], 1]:
                            advanced_to = table_kernel._advance_to(order, size, remaining, period, now, advanced_to)
                            was_sharing = sharing[slot]
                            if was_sharing:
                                size = _leave(order, size, sharing, slot)
                            held[slot] = False
                            free[free_top] = slot
                            free_top += 1
                            if was_sharing:  # ParallelTaskRunner._resolve
                                dirty = False
                                next_completion = math.inf
                                if size > 0:
                                    resolves += 1
                                    next_end = table_kernel.resolve(
                                        order, size, elem_start, elem_count, resource, amount, own, capacity,
                                        remaining, period, end, changed, now, precision, tolerance, max_rounds)
                                    if next_end < math.inf:
                                        next_completion = max(next_end, now)
                        index += 1
                    if index < count or kernel_status != replay_kernel.OK:
                        status = RESUME
                        ints[I_COMMAND] = index
                        ints[I_STATUS] = kernel_status
                        ints[I_TOKENS] = nb_tokens
                        break
                    G[replay_kernel.G_NCMD] = 0
                    break
                if status == RESUME:
                    break
            dirty = True  # _completions ends with a re-solve
        if dirty:  # ParallelTaskRunner._resolve
            next_completion = math.inf
            if size > 0:
                resolves += 1
                next_end = table_kernel.resolve(order, size, elem_start, elem_count, resource, amount, own, capacity,
                                                remaining, period, end, changed, now, precision, tolerance,
                                                max_rounds)
                if next_end < math.inf:
                    next_completion = max(next_end, now)
        # -------------------------------------------------- the next step: this instant again, or the next one
        following = next_completion
        if heap_size > 0 and heap_when[0] < following:
            following = heap_when[0]
        if following > now:
            if following == math.inf or (horizon >= 0 and following - start > horizon) or following >= limit:
                break
            now = following
    ints[I_TOP], ints[I_FREE_TOP], ints[I_SIZE] = top, free_top, size
    ints[I_LAUNCHES], ints[I_HEAP], ints[I_RESOLVES] = launches, heap_size, resolves
    floats[F_ADVANCED_TO], floats[F_NEXT_COMPLETION] = advanced_to, next_completion
    return status, now
