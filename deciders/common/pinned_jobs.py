"""Jobs that must start on given machines as soon as they are submitted (option `pinned`).

A forecast of a live cluster (adapters/slurm/forecast.py) starts from its present: the jobs
running there hold their nodes now, whatever a policy would have chosen. They are submitted
at time 0 like the waiting jobs, and the queue policies (queue_policy.py) start each of them on
its machines on submission, before their own pass: FCFS, SJF, EASY, conservative and the
score orders then schedule the waiting jobs around them, with no copy of their loops.

The option's value is a JSON file: an object mapping a job id as the decider sees it
(`workload!id`, e.g. `w0!3`) to its machines as a Batsim interval set (e.g. `"0-1 3"`).
"""

from __future__ import annotations

import json

from joulesim.deciders.common.machine_masks import mask_runs, procset_to_mask
from joulesim.protocol.errors import DecisionError, JoulesimError
from joulesim.protocol.interval_set import format_runs, parse_interval_set

__all__ = ["PINNED_OPTION", "pinned_option", "check_pinned_machines"]

PINNED_OPTION: dict[str, str] = {
    "pinned": "a JSON file mapping job ids (w0!3) to machines (\"0-1 3\"): each such job starts on those "
              "machines as soon as it is submitted, before the policy's pass (a live cluster's running jobs; "
              "default: none)",
}

#: More machines than any platform has (platform_checks' limit): an interval beyond is a typo.
_MAX_MACHINE_ID = 1 << 24


def pinned_option(decider: str, options: dict[str, str]) -> dict[str, int]:
    """Job id -> machines bitmask read from option `pinned` (empty when absent)."""
    path = options.get("pinned")
    if path is None:
        return {}
    where = f"decider {decider}: option pinned={path}"
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise JoulesimError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise JoulesimError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JoulesimError(f"{where}: expected a JSON object of job id -> machines (e.g. {{\"w0!3\": \"0-1\"}})")
    pinned = {}
    for job_id, machines in data.items():
        try:
            machine_set = parse_interval_set(machines, _MAX_MACHINE_ID)
        except ValueError:
            machine_set = None
        if not machine_set or machine_set.max >= _MAX_MACHINE_ID:
            raise JoulesimError(f"{where}: job {job_id!r}: machines {machines!r} are not an interval set of "
                                "machine ids like \"0-1 3\"")
        pinned[job_id] = procset_to_mask(machine_set)
    return pinned


def check_pinned_machines(job_id: str, res: int, mask: int, all_mask: int, busy_mask: int) -> None:
    """A pinned job's machines: as many as it asks for, on the platform, none given to another
    job (a DecisionError otherwise: the forecast's state contradicts itself). Machines made
    unavailable are accepted: a job keeps running on a node being drained."""
    def shown(bits: int) -> str:
        return format_runs(mask_runs(bits))

    if mask & ~all_mask:
        raise DecisionError(f"pinned job {job_id}: machines {shown(mask & ~all_mask)} are not compute resources of "
                            "this platform")
    if mask.bit_count() != res:
        raise DecisionError(f"pinned job {job_id}: {mask.bit_count()} machines pinned ({shown(mask)}) but the job "
                            f"asks for {res}")
    if mask & busy_mask:
        raise DecisionError(f"pinned job {job_id}: machines {shown(mask & busy_mask)} are not free (another running "
                            "job holds them)")
