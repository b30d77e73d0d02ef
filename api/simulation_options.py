"""Typed groups of `joulesim.simulate`'s keywords, for studies that set many of them.

`simulate` takes every flag of `joulesim simulate` as a keyword (41 of them); in a notebook, the
Batsim flags a study fixes once, the workflow inputs and a Batsim 5 decider read better as objects
that an editor completes and checks, built once and passed to every run:

    flags = joulesim.BatsimFlags(mmax=32, enable_compute_sharing=True)
    joulesim.simulate("homogeneous240", "default_compute", "easy", energy=True, batsim=flags)

Each field is the `simulate` keyword of the same name (Workflows and Batsim5Decider add their
prefix back: `Workflows(jobs_limit=5)` is `workflow_jobs_limit=5`). Giving one setting both ways
with two values is an error naming both.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from joulesim.protocol.errors import JoulesimError


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatsimFlags:
    """Batsim 4's command-line flags that shape a run (docs/guide/running.md has each one)."""

    master_host: str | None = None
    add_role_to_hosts: Mapping[str, str] | Sequence[str] | None = None
    mmax: int = 0
    mmax_workload: bool = False
    events: str | os.PathLike | Sequence[dict] | Sequence[str | os.PathLike] | None = None
    forward_unknown_events: bool = False
    enable_dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    enable_profile_reuse: bool = False
    forward_profiles_on_submission: bool = False
    enable_compute_sharing: bool = False
    disable_storage_sharing: bool = False
    no_sched: bool = False
    sched_config: str | None = None
    sched_config_file: str | os.PathLike | None = None
    disable_machine_state_tracing: bool = False
    disable_schedule_tracing: bool = False
    verbosity: Literal["quiet", "network-only", "information", "debug"] = "information"
    event_grouping: Literal["batsim", "per-time"] = "batsim"

    def keywords(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Workflows:
    """DAX workflows whose tasks become jobs as their parents complete (Batsim's -W and --WS)."""

    files: Sequence[str | os.PathLike] = ()  # each from t=0 (-W)
    starts: Sequence[tuple[str | os.PathLike, float]] = ()  # (file, start time) pairs (--WS)
    jobs_limit: int = 0  # --workflow-jobs-limit (0: none)
    ignore_beyond_last: bool = False  # --ignore-beyond-last-workflow

    def keywords(self) -> dict[str, Any]:
        return {"workflows": self.files, "workflow_starts": self.starts, "workflow_jobs_limit": self.jobs_limit,
                "ignore_beyond_last_workflow": self.ignore_beyond_last}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Batsim5Decider:
    """A Batsim 5 External Decision Component instead of a decider: a shared library (in this
    process, or in a child process with `isolated=True`) or a process serving `socket`."""

    library: str | os.PathLike | None = None
    socket: str | None = None
    init: str | bytes = b""  # its init data (a string is sent as UTF-8)
    isolated: bool = False

    def __post_init__(self) -> None:
        if (self.library is None) == (self.socket is None):
            raise JoulesimError("Batsim5Decider: give library= (a shared library) or socket= (a process EDC's "
                                "endpoint), one of them")

    def keywords(self) -> dict[str, Any]:
        return {"edc_library": self.library, "edc_socket": self.socket, "edc_init": self.init,
                "edc_isolated": self.isolated}


def merged_keywords(flat: dict[str, Any], defaults: dict[str, Any],
                    groups: dict[str, BatsimFlags | Workflows | Batsim5Decider | None]) -> dict[str, Any]:
    """`flat` (simulate's keywords) with each group's settings in; a setting given both ways with
    two values is refused, naming both."""
    merged = dict(flat)
    for group_name, group in groups.items():
        if group is None:
            continue
        expected = {"batsim": BatsimFlags, "workflow": Workflows, "edc": Batsim5Decider}[group_name]
        if not isinstance(group, expected):
            raise JoulesimError(f"{group_name}= takes a joulesim.{expected.__name__}, not {type(group).__name__}")
        for name, value in group.keywords().items():
            if merged[name] == value or value == defaults[name]:
                continue
            if merged[name] != defaults[name]:
                raise JoulesimError(f"{name} is given twice, {merged[name]!r} as a keyword and {value!r} in "
                                    f"{group_name}=: keep one")
            merged[name] = value
    return merged
