"""IRMaSim's workload JSON, read as it is (`-w workload.json` with IRMaSim's own file).

IRMaSim jobs give their size as `res` (that many tasks on one node), or as `ntasks`, `nodes`
and `ntasks_per_node` (IRMaSim's rules complete the missing ones; `ntasks` alone means one
task per node). Their execution parameters are in a named profile (`req_ops`, `req_time`,
`ipc`, `mem`, `mem_vol`, `req_energy`) or inline in the job. The document becomes a Batsim-shaped
workload:

- each job gets `res` = ntasks (one core per task) and a `cpu_ops` profile holding what drives
  the simulation and stays hidden from the job's JSON: req_ops, ipc, mem_vol;
- what IRMaSim's schedulers see goes on the job's JSON, which deciders receive with
  JOB_SUBMITTED: req_time, req_energy, mem, nodes, ntasks_per_node, and max_energy when given;
- times are counted from the earliest submission (IRMaSim starts the clock at its first job);
- jobs submitted at the same time keep the file's order (IRMaSim's queue order).

Defaults are IRMaSim's: a named profile without ipc/mem/mem_vol/req_energy gets 1/0/1/0, an
inline job 1/0/0/0.
"""

from __future__ import annotations

import math
from typing import Any

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import clip, is_int, is_number, shown
from joulesim.simulator.workload.profiles import check_cpu_ops_size

_JOB_MARKERS = frozenset({"req_ops", "req_time", "ntasks", "nodes"})
_SIZE_KEYS = ("res", "ntasks", "nodes", "ntasks_per_node")
_PROFILE_DEFAULTS = {"ipc": 1.0, "mem": 0, "mem_vol": 1.0, "req_energy": 0}
_INLINE_DEFAULTS = {"ipc": 1.0, "mem": 0, "mem_vol": 0.0, "req_energy": 0}


def is_irmasim_workload(document: Any) -> bool:
    """IRMaSim workloads have no nb_res and carry IRMaSim fields: req_ops in untyped profiles, or
    req_ops, req_time, ntasks or nodes in jobs."""
    if not isinstance(document, dict) or "nb_res" in document or not isinstance(document.get("jobs"), list):
        return False
    profiles = document.get("profiles")
    if isinstance(profiles, dict) and any(isinstance(p, dict) and "req_ops" in p and "type" not in p
                                          for p in profiles.values()):
        return True
    return any(isinstance(job, dict) and not _JOB_MARKERS.isdisjoint(job) for job in document["jobs"][:100])


def batsim_document(path: str, document: dict) -> dict:
    """The Batsim-shaped workload document (with `cpu_ops` profiles) of an IRMaSim workload."""
    named = document.get("profiles", {})
    if not isinstance(named, dict):
        raise InputError(path, "top level: field 'profiles'", f"is {shown(named)}", "profiles must be an object")
    jobs_in = document["jobs"]
    if not jobs_in:
        raise InputError(path, "top level: field 'jobs'", "is empty", "give at least one job")
    profiles: dict[str, dict] = {}
    jobs: list[dict] = []
    for index, job in enumerate(jobs_in):
        if not isinstance(job, dict):
            raise InputError(path, f"jobs[{index}]", f"is {shown(job)}, not an object",
                             'an IRMaSim job is like {"id": "j1", "subtime": 0, "res": 4, "profile": "p"}')
        job_id = job.get("id", f"job{index}")  # IRMaSim names anonymous jobs by their position
        where = f"jobs[{index}] (id '{clip(str(job_id))}')"
        nodes, ntasks, per_node = _size(path, where, job)
        if "profile" in job:
            name = job["profile"]
            if not isinstance(name, str) or name not in named:
                raise InputError(path, f"{where}: field 'profile'", f"names profile {shown(name)}, which does not exist",
                                 "name a profile of this workload's 'profiles', or give req_ops and req_time in the job")
            source, source_where, defaults = named[name], f"profile '{clip(name)}'", _PROFILE_DEFAULTS
            if not isinstance(source, dict):
                raise InputError(path, source_where, f"is {shown(source)}, not an object",
                                 "an IRMaSim profile is an object with req_ops and req_time")
        else:
            source, source_where, defaults = job, where, _INLINE_DEFAULTS
        values = {key: source.get(key, default) for key, default in defaults.items()}
        for key in ("req_ops", "req_time"):
            if key not in source:
                raise InputError(path, f"{source_where}: field '{key}'", "is missing",
                                 "IRMaSim jobs need req_ops (operations per task) and req_time (estimated seconds)")
            values[key] = source[key]
        for key, value in values.items():
            if not is_number(value) or value < 0 or (key == "ipc" and value == 0):
                raise InputError(path, f"{source_where}: field '{key}'", f"invalid value {shown(value)}",
                                 f"{key} must be a number {'> 0' if key == 'ipc' else '>= 0'}")
        check_cpu_ops_size(path, source_where, values["req_ops"], values["ipc"], values["mem_vol"])
        hidden = {"type": "cpu_ops", "req_ops": values["req_ops"], "ipc": values["ipc"], "mem_vol": values["mem_vol"]}
        if "profile" in job:
            profile_name = job["profile"]
        else:  # inline parameters: one profile per distinct triple
            profile_name = f"ops={float(values['req_ops'])!r},ipc={float(values['ipc'])!r},mem_vol={float(values['mem_vol'])!r}"
        profiles.setdefault(profile_name, hidden)
        subtime = job.get("subtime")
        if not is_number(subtime) or subtime < 0:
            raise InputError(path, f"{where}: field 'subtime'", f"invalid value {shown(subtime)}",
                             "subtime must be a number >= 0 (seconds)")
        visible = {"id": job_id, "subtime": subtime, "res": ntasks, "profile": profile_name,
                   "req_time": values["req_time"], "req_energy": values["req_energy"], "mem": values["mem"],
                   "nodes": nodes, "ntasks_per_node": per_node}
        max_energy = job.get("max_energy", source.get("max_energy"))
        if max_energy is not None:  # the energy scheduler's per-job limit (seed 002), when given
            if not is_number(max_energy) or max_energy < 0:
                raise InputError(path, f"{where}: field 'max_energy'", f"invalid value {shown(max_energy)}",
                                 "max_energy must be a number >= 0 (joules), or left out for no limit")
            visible["max_energy"] = max_energy
        jobs.append(visible)
    origin = min(job["subtime"] for job in jobs)
    for job in jobs:
        job["subtime"] = job["subtime"] - origin
    return {"jobs": jobs, "profiles": profiles}


def _size(path: str, where: str, job: dict) -> tuple[int, int, int]:
    """(nodes, ntasks, ntasks_per_node) by IRMaSim's rules."""
    for key in _SIZE_KEYS:
        if key in job and not (is_int(job[key]) and job[key] >= 1):
            raise InputError(path, f"{where}: field '{key}'", f"invalid value {shown(job[key])}", f"{key} must be an integer >= 1")
    if "res" in job:
        others = [key for key in _SIZE_KEYS[1:] if key in job]
        if others:
            raise InputError(path, f"{where}: field 'res'", f"is given with {', '.join(others)}",
                             "give either res (tasks on one node) or ntasks/nodes/ntasks_per_node")
        return 1, int(job["res"]), int(job["res"])
    if "ntasks" not in job and "nodes" not in job:
        raise InputError(path, f"{where}: field 'ntasks'", "is missing", "give res, or ntasks and/or nodes")
    per_node = job.get("ntasks_per_node")
    if "nodes" not in job:
        per_node = per_node or 1
        return math.ceil(job["ntasks"] / per_node), int(job["ntasks"]), int(per_node)
    nodes = int(job["nodes"])
    if "ntasks" not in job:
        per_node = per_node or 1
        return nodes, nodes * per_node, int(per_node)
    ntasks = int(job["ntasks"])
    if per_node is not None and nodes != math.ceil(ntasks / per_node):
        raise InputError(path, f"{where}: field 'nodes'", f"is {nodes}, but ntasks {ntasks} / ntasks_per_node {per_node} "
                         f"needs {math.ceil(ntasks / per_node)}", "make nodes = ceil(ntasks / ntasks_per_node)")
    return nodes, ntasks, math.ceil(ntasks / nodes)
