"""Loading Batsim 4 workload JSON files (`-w`) into `Workload` objects."""

import importlib.resources
import os
from typing import Any, Final

from joulesim.inputs.collector_pause import collector_paused
from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.json_input import (
    MAX_EXTRA_FIELD_DEPTH,
    MAX_INT32,
    clip,
    decode_json,
    is_int,
    nests_deeper,
    shown,
    time_error,
)
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, check_time
from joulesim.simulator.workload.profile_traces import load_profile_traces
from joulesim.protocol.batprotocol.profile_forms import ProfileFormError, batsim4_form
from joulesim.simulator.workload.profiles import check_matrix_size, leaf_executor_count, summarize_profiles, validate_profile
from joulesim.simulator.workload.workload_irmasim import batsim_document, is_irmasim_workload
from joulesim.simulator.workload.workload_model import Job, Workload

_PACKAGE = "joulesim.workloads"
_EXAMPLE = '{"nb_res": 4, "jobs": [...], "profiles": {...}}'
_JOB_FIELDS: Final = frozenset({"id", "subtime", "res", "profile", "walltime"})


def list_shipped_workloads() -> list[str]:
    """Names of the workloads shipped with joulesim (e.g. "default"), sorted."""
    root = importlib.resources.files(_PACKAGE)
    return sorted(
        entry.name[: -len(".json")]
        for entry in root.iterdir()
        if entry.name.endswith(".json") and entry.is_file()
    )


def shipped_workload_path(name: str) -> str:
    """Path of a shipped workload, by name ("default" or "default.json")."""
    stem = name[: -len(".json")] if name.endswith(".json") else name
    entry = importlib.resources.files(_PACKAGE) / f"{stem}.json"
    if stem not in list_shipped_workloads():
        raise InputError(name, "workload", "no shipped workload has this name",
                         "shipped workloads: " + ", ".join(list_shipped_workloads()))
    return str(entry)


def _resolve(path: str) -> str:
    path = str(path)
    if os.path.exists(path):
        return path
    stem = path[: -len(".json")] if path.endswith(".json") else path
    if os.sep not in path and "/" not in path and stem in list_shipped_workloads():
        return shipped_workload_path(stem)
    raise InputError(path, "file", "does not exist",
                     "give the path of a workload JSON file or a shipped workload name ("
                     + ", ".join(list_shipped_workloads()) + ")")


def load_workload(path: str, name: str) -> Workload:
    """Load and validate one workload file; `name` is its workload name ("w0", "w1", ...).

    `path` may also be the bare name of a shipped workload ("default") when no such file exists.
    Raises InputError on any problem, naming the file, the job or profile, the field and the fix.
    """
    path = _resolve(path)
    return workload_from_bytes(path, read_input_file(path, "a workload JSON file"), name)


def workload_from_bytes(path: str, raw: bytes, name: str) -> Workload:
    """Validate a workload JSON document given as bytes; `path` names it in messages (a file,
    or e.g. "<workload dict w0>" for one built in Python and encoded)."""
    with collector_paused():  # (its jobs are made by the hundred thousand, and all stay)
        return _workload_of(path, raw, name)


def _workload_of(path: str, raw: bytes, name: str) -> Workload:
    doc = decode_json(path, raw, _EXAMPLE)
    irmasim = is_irmasim_workload(doc)
    if irmasim:
        doc = batsim_document(path, doc)

    if not isinstance(doc, dict):
        raise InputError(path, "top level", f"is {shown(doc)}, not an object",
                         f"a workload is an object like {_EXAMPLE}")
    for key, kind, cls in (("jobs", "an array", list), ("profiles", "an object", dict)):
        if key not in doc:
            raise InputError(path, f"top level: field '{key}'", "is missing",
                             f"a workload needs '{key}' ({kind})")
        if not isinstance(doc[key], cls):
            raise InputError(path, f"top level: field '{key}'",
                             f"is {shown(doc[key])}", f"'{key}' must be {kind}")
    nb_res = doc.get("nb_res")
    if nb_res is not None and (not is_int(nb_res) or not 1 <= nb_res <= MAX_INT32):
        raise InputError(path, "top level: field 'nb_res'", f"invalid value {shown(nb_res)}",
                         f"nb_res must be an integer >= 1 (at most {MAX_INT32:,}), or left out")

    profiles: dict[str, dict] = {}
    for pname, profile in doc["profiles"].items():
        where = f"profile '{clip(pname)}'"
        if isinstance(profile, dict) and profile.get("type") == "ParallelTaskProfile" and "com" not in profile \
                and isinstance(profile.get("cpu"), list):
            check_matrix_size(len(profile["cpu"]), where, path)  # (before batsim4_form fills the matrix)
        try:
            profile = batsim4_form(profile)  # (a Batsim 5 profile: its Batsim 4 equal)
        except ProfileFormError as exc:
            raise InputError(path, f"{where}: field '{exc.args[0]}'", exc.args[1], exc.args[2]) from None
        profiles[pname] = validate_profile(pname, profile, where, path)
    summaries = summarize_profiles(profiles, path)
    traces = load_profile_traces(path, profiles)

    jobs: list[Job] = []
    first_index: dict[str, int] = {}
    # Computed once per profile, not once per job: traces have 100,000s of jobs.
    executor_counts = {pname: summary.executors for pname, summary in summaries.items()}
    least = {pname: summary.least_duration for pname, summary in summaries.items()}
    for index, raw_job in enumerate(doc["jobs"]):
        job = parse_job(raw_job, index, name, profiles, path, executor_counts, least, owned=True)
        if job.local_id in first_index:
            raise InputError(path, f"jobs[{index}] (id '{clip(job.local_id)}'): field 'id'",
                             f"duplicate id '{clip(job.local_id)}', also used by jobs[{first_index[job.local_id]}]",
                             "give every job of a workload a distinct id")
        first_index[job.local_id] = index
        jobs.append(job)

    # Batsim submits simultaneous jobs by id; IRMaSim in the file's order (its queue order).
    jobs.sort(key=(lambda j: j.subtime) if irmasim else (lambda j: (j.subtime, j.id)))
    return Workload(name=name, path=path, jobs=jobs, profiles=profiles, nb_res=nb_res, traces=traces)


def parse_job(raw: Any, index: int, workload: str, profiles: dict[str, dict], path: str,
              executor_counts: dict[str, int | None] | None = None,
              least: dict[str, float] | None = None, owned: bool = False) -> Job:
    """Validate one job's JSON; `executor_counts` caches leaf_executor_count per profile and
    `least` the least duration of each (see summarize_profiles; without it, only delay profiles
    count for the end-time check). `owned`: `raw` was decoded for this job alone (a workload
    file's), so it becomes the job's JSON itself rather than a copy (a trace of 300,000 jobs
    kept both: 70 MB)."""
    if not isinstance(raw, dict):
        raise InputError(path, f"jobs[{index}]", f"is {shown(raw)}, not an object",
                         'a job is an object like {"id": 1, "subtime": 0, "res": 4, "profile": "p"}')

    if "id" not in raw:
        raise InputError(path, f"jobs[{index}]: field 'id'", "is missing",
                         "id must be a string or an integer, unique in the workload")
    raw_id = raw["id"]
    if type(raw_id) is int:
        local_id = str(raw_id)
    elif isinstance(raw_id, str) and raw_id and "!" not in raw_id:
        local_id = raw_id
    else:
        raise InputError(path, f"jobs[{index}]: field 'id'", f"invalid value {shown(raw_id)}",
                         "id must be an integer or a non-empty string without '!'")

    def where(key: str) -> str:  # messages only: this runs for every job of 100,000-job traces
        return f"jobs[{index}] (id '{clip(local_id)}'): field '{key}'"

    for key in ("subtime", "res", "profile"):
        if key not in raw:
            raise InputError(path, where(key), "is missing", "a job needs id, subtime, res and profile")

    # Exact type tests, inline: a bool is no number, and a NaN fails every comparison.
    subtime = raw["subtime"]
    kind = type(subtime)
    if not ((kind is float or kind is int) and 0 <= subtime < MAX_SIMULATED_TIME):
        raise time_error(path, where("subtime"), subtime, "subtime", "subtime must be a number >= 0 (seconds)")

    res = raw["res"]
    if not (type(res) is int and 0 <= res <= MAX_INT32):
        raise InputError(path, where("res"), f"invalid value {shown(res)}",
                         f"res must be an integer >= 0 (at most {MAX_INT32:,})")

    profile = raw["profile"]
    if not isinstance(profile, str) or profile not in profiles:
        target = f"'{clip(profile)}'" if isinstance(profile, str) else shown(profile)
        raise InputError(path, where("profile"), f"names profile {target}, which does not exist",
                         "profile must be the name of a profile in this workload's 'profiles'")

    walltime = raw.get("walltime", -1)
    if walltime != -1 or type(walltime) is bool:
        kind = type(walltime)
        if not ((kind is float or kind is int) and 0 < walltime < MAX_SIMULATED_TIME):
            raise time_error(path, where("walltime"), walltime, "walltime",
                             "walltime must be a number > 0 (seconds after start), or -1 / left out for none")
        if subtime + walltime >= MAX_SIMULATED_TIME:  # the job's walltime would end out of range
            raise InputError(path, where("walltime"), check_time(subtime + walltime, "subtime + walltime"))

    if least is not None:
        floor = least[profile]
    else:
        floor = profiles[profile]["delay"] if profiles[profile]["type"] == "delay" else 0.0
    if subtime + floor >= MAX_SIMULATED_TIME:  # the job could only end out of range
        raise InputError(path, where("subtime"), check_time(
            subtime + floor, f"subtime + the {floor:g} s that profile '{clip(profile)}' lasts at least"))

    executors = (executor_counts[profile] if executor_counts is not None
                 else leaf_executor_count(profiles, profile))
    if executors is not None and executors != res:
        raise InputError(path, where("res"), f"is {res} but profile '{clip(profile)}' needs exactly {executors} "
                         f"executors", f"set res to {executors} or use a profile with {res} cpu values")

    if len(raw) > 4 + ("walltime" in raw):  # extra fields: rare, checked only when present
        for key in raw.keys() - _JOB_FIELDS:
            if nests_deeper(raw[key], MAX_EXTRA_FIELD_DEPTH):
                raise InputError(path, where(clip(key)),
                                 f"nests lists or objects more than {MAX_EXTRA_FIELD_DEPTH} levels deep",
                                 "extra job fields go to the decider in JSON messages: flatten it")

    protocol_id = f"{workload}!{local_id}"
    job_json = raw if owned else dict(raw)
    job_json["id"] = protocol_id
    return Job(
        id=protocol_id,
        workload=workload,
        local_id=local_id,
        subtime=float(subtime),
        res=res,
        walltime=float(walltime),
        profile=profile,
        json=job_json,
    )
