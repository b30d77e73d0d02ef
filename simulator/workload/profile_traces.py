"""Reading the trace files of a workload's trace profiles (usage_trace, smpi) with the workload,
so that a missing or malformed trace is an error before the run, naming the file and line."""

from __future__ import annotations

from typing import Any

from joulesim.inputs.json_input import clip
from joulesim.simulator.workload.profiles import TRACE_TYPES
from joulesim.simulator.workload.smpi_traces import load_smpi_traces
from joulesim.simulator.workload.trace_listing import listing_path
from joulesim.simulator.workload.usage_traces import load_usage_traces


def load_profile_traces(workload_path: str, profiles: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The parsed traces of every trace profile, by profile name."""
    return {name: profile_traces(workload_path, name, profile)
            for name, profile in profiles.items() if profile["type"] in TRACE_TYPES}


def profile_traces(workload_path: str, name: str, profile: dict[str, Any]) -> Any:
    """One trace profile's traces (also for profiles registered during the run)."""
    listing = listing_path(workload_path, profile["trace"])
    load = load_smpi_traces if profile["type"] == "smpi" else load_usage_traces
    return load(listing, f"profile '{clip(name)}'")
