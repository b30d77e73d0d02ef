"""The storage labels a job's profile names, and how EXECUTE_JOB's storage_mapping resolves them.

Batsim 4.2.1 (task_execution.cpp): a `parallel_homogeneous_pfs` profile names one label
(field `storage`, or `host`; "pfs" when absent), a `data_staging` profile two (`from`, `to`).
At the job's start each label is looked up in EXECUTE_JOB's `storage_mapping` (label -> machine
id, which must be a storage host). With no mapping at all, a pfs profile uses the platform's
only storage host (an error when it has none or several); a data_staging profile always needs
the mapping.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from joulesim.simulator.workload.profiles import reachable_leaves

PFS_DEFAULT_LABEL = "pfs"
# Profile types that name storages, or may reach one that does.
_NAMING_STORAGES: Final = frozenset({"parallel_homogeneous_pfs", "data_staging", "composed"})


def _names_no_storage(name: str, profiles: dict[str, dict[str, Any]]) -> bool:
    """Profile `name` is a leaf that names no storage (most jobs': asked at each job's start)."""
    profile = profiles.get(name)
    return profile is not None and profile.get("type") not in _NAMING_STORAGES


def storage_labels(name: str, profiles: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(labels of pfs leaves, labels of data_staging leaves) reachable from profile `name`,
    each in first-seen order, without repeats."""
    if _names_no_storage(name, profiles):
        return [], []
    pfs: dict[str, None] = {}
    staging: dict[str, None] = {}
    for _, profile in reachable_leaves(profiles, name):
        if profile["type"] == "parallel_homogeneous_pfs":
            pfs[profile.get("storage", profile.get("host", PFS_DEFAULT_LABEL))] = None
        elif profile["type"] == "data_staging":
            staging[profile["from"]] = None
            staging[profile["to"]] = None
    return list(pfs), list(staging)


class Unresolved(NamedTuple):
    """Why a job's storage labels cannot be resolved, and what to change."""

    problem: str
    fix: str


def resolve_storages(name: str, profiles: dict[str, dict[str, Any]], mapping: dict[str, Any] | None,
                     storage_ids: range) -> tuple[dict[str, int], Unresolved | None]:
    """(label -> storage host id, None) for a job of profile `name`, or ({}, why not) when the
    mapping does not cover its labels. `storage_ids`: the storage hosts' ids."""
    if _names_no_storage(name, profiles):
        return {}, None  # (without storage_labels' two empty lists)
    pfs, staging = storage_labels(name, profiles)
    if not pfs and not staging:
        return {}, None
    if not mapping:
        if staging:
            return {}, Unresolved(f"its profile moves data between storages {staging[0]!r} and {staging[-1]!r} "
                                  "(data_staging) and no storage_mapping maps them: Batsim needs one for data_staging",
                                  "add \"storage_mapping\": {label: storage resource id, ...} to EXECUTE_JOB")
        if len(storage_ids) != 1:
            have = "no storage host" if not storage_ids else f"{len(storage_ids)} storage hosts"
            return {}, Unresolved(f"its profile does I/O to storage {pfs[0]!r} and the platform has {have}, so no "
                                  "storage can be guessed",
                                  "add \"storage_mapping\": {" + repr(pfs[0]) + ": id} to EXECUTE_JOB"
                                  + ("" if storage_ids else " and a host with role=storage to the platform"))
        return {label: storage_ids[0] for label in pfs}, None
    resolved: dict[str, int] = {}
    for label in pfs + staging:
        if label not in mapping:
            return {}, Unresolved(f"its profile uses storage label {label!r}, which storage_mapping does not map",
                                  f"add {label!r} to storage_mapping")
        resolved[label] = int(mapping[label])
    return resolved, None
