"""Loading Batsim 4 workload JSON files (`-w`) into `Workload` objects."""

import importlib.resources
import math
import os
from typing import Any

import orjson

from joulesim.simulator.input_error import InputError
from joulesim.simulator.profiles import (
    check_profile_references,
    leaf_executor_count,
    validate_profile,
)
from joulesim.simulator.workload_model import Job, Workload

_PACKAGE = "joulesim.workloads"


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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise InputError(path, "file", f"cannot be read: {exc.strerror or exc}",
                         "check the path and its permissions") from exc
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(path, "JSON", f"malformed JSON: {exc}", "fix the JSON syntax") from exc

    if not isinstance(doc, dict):
        raise InputError(path, "top level", f"is a {type(doc).__name__}, not an object",
                         'a workload is an object like {"nb_res": 4, "jobs": [...], "profiles": {...}}')
    for key, kind, cls in (("jobs", "an array", list), ("profiles", "an object", dict)):
        if key not in doc:
            raise InputError(path, f"top level: field '{key}'", "is missing",
                             f"a workload needs '{key}' ({kind})")
        if not isinstance(doc[key], cls):
            raise InputError(path, f"top level: field '{key}'",
                             f"is a {type(doc[key]).__name__}", f"'{key}' must be {kind}")
    nb_res = doc.get("nb_res")
    if nb_res is not None and (not _is_int(nb_res) or nb_res < 1):
        raise InputError(path, "top level: field 'nb_res'", f"invalid value {nb_res!r}",
                         "nb_res must be an integer >= 1, or left out")

    profiles: dict[str, dict] = {}
    for pname, profile in doc["profiles"].items():
        profiles[pname] = validate_profile(pname, profile, f"profile '{pname}'", path)
    check_profile_references(profiles, path)

    jobs: list[Job] = []
    first_index: dict[str, int] = {}
    # Computed once per profile, not once per job: traces have 100,000s of jobs.
    executor_counts = {pname: leaf_executor_count(profiles, pname) for pname in profiles}
    for index, raw_job in enumerate(doc["jobs"]):
        job = parse_job(raw_job, index, name, profiles, path, executor_counts)
        if job.local_id in first_index:
            raise InputError(path, f"jobs[{index}] (id '{job.local_id}'): field 'id'",
                             f"duplicate id '{job.local_id}', also used by jobs[{first_index[job.local_id]}]",
                             "give every job of a workload a distinct id")
        first_index[job.local_id] = index
        jobs.append(job)

    jobs.sort(key=lambda j: (j.subtime, j.id))
    return Workload(name=name, path=path, jobs=jobs, profiles=profiles, nb_res=nb_res)


def parse_job(raw: Any, index: int, workload: str, profiles: dict[str, dict], path: str,
              executor_counts: dict[str, int | None] | None = None) -> Job:
    """Validate one job's JSON; `executor_counts` caches leaf_executor_count per profile."""
    where = f"jobs[{index}]"
    if not isinstance(raw, dict):
        raise InputError(path, where, f"is a {type(raw).__name__}, not an object",
                         'a job is an object like {"id": 1, "subtime": 0, "res": 4, "profile": "p"}')

    if "id" not in raw:
        raise InputError(path, f"{where}: field 'id'", "is missing",
                         "id must be a string or an integer, unique in the workload")
    raw_id = raw["id"]
    if _is_int(raw_id):
        local_id = str(raw_id)
    elif isinstance(raw_id, str) and raw_id and "!" not in raw_id:
        local_id = raw_id
    else:
        raise InputError(path, f"{where}: field 'id'", f"invalid value {raw_id!r}",
                         "id must be an integer or a non-empty string without '!'")
    where = f"{where} (id '{local_id}')"

    def field(key: str, problem: str, fix: str) -> InputError:
        return InputError(path, f"{where}: field '{key}'", problem, fix)

    for key in ("subtime", "res", "profile"):
        if key not in raw:
            raise field(key, "is missing", "a job needs id, subtime, res and profile")

    subtime = raw["subtime"]
    if not _is_number(subtime) or subtime < 0:
        raise field("subtime", f"invalid value {subtime!r}", "subtime must be a number >= 0 (seconds)")

    res = raw["res"]
    if not _is_int(res) or res < 0:
        raise field("res", f"invalid value {res!r}", "res must be an integer >= 0")

    profile = raw["profile"]
    if not isinstance(profile, str) or profile not in profiles:
        shown = f"'{profile}'" if isinstance(profile, str) else repr(profile)
        raise field("profile", f"names profile {shown}, which does not exist",
                    "profile must be the name of a profile in this workload's 'profiles'")

    walltime = raw.get("walltime", -1)
    if not _is_number(walltime) or (walltime != -1 and walltime <= 0):
        raise field("walltime", f"invalid value {walltime!r}",
                    "walltime must be a number > 0 (seconds after start), or -1 / left out for none")

    executors = (executor_counts[profile] if executor_counts is not None
                 else leaf_executor_count(profiles, profile))
    if executors is not None and executors != res:
        raise field("res", f"is {res} but profile '{profile}' needs exactly {executors} executors",
                    f"set res to {executors} or use a profile with {res} cpu values")

    protocol_id = f"{workload}!{local_id}"
    job_json = dict(raw)
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
