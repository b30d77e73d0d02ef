"""Batsim 5's profiles (in its workloads and in batprotocol), as the Batsim 4 profiles they are.

Batsim 5 (v5.0.0-rc2, src/profiles.cpp) names profile types after batprotocol's tables and keeps
Batsim 4's fields, with three differences: a homogeneous parallel task says how its amounts
are used in `generation_strategy` (Batsim 4 has two type names instead; a storage profile
keeps the field, which Batsim 4's has no other way to say), a trace replay names
its kind in `trace_type` and its file in `filename` (Batsim 4: the type, and `trace`), and a
parallel task may give only `cpu` or only `com` (the other is all zeros). A Batsim 5 profile
becomes the equal Batsim 4 one here, before the profile checks, so everything downstream sees
one form.
"""

from __future__ import annotations

import math
from typing import Any

from joulesim.protocol.batprotocol.message_layout import ENUMS


class ProfileFormError(ValueError):
    """A Batsim 5 profile with no Batsim 4 equal: (field, what it is, how to fix it)."""

_SAME_FIELDS = {"DelayProfile": "delay", "SequentialCompositionProfile": "composed",
                "ParallelTaskDataStagingBetweenStoragesProfile": "data_staging"}
BATSIM5_TYPES = (*_SAME_FIELDS, "ParallelTaskProfile", "ParallelTaskHomogeneousProfile",
                 "ParallelTaskOnStorageHomogeneousProfile", "TraceReplayProfile")


STRATEGIES = ENUMS["HomogeneousParallelTaskGenerationStrategy"]
# A `parallel` task of n executors has an n x n communication matrix (`com`), which Batsim 5
# fills with zeros when only `cpu` is given: 200,000 executors made 4e10 values (MemoryError).
# At most 10,000,000 values (3,162 executors), checked before any matrix is built (here for a
# profile of a workload file or of a batprotocol message, and by the workload checks).
MAX_COM_VALUES = 10_000_000


def _strategy(value: Any) -> str:
    """A homogeneous task's generation_strategy, refused as rc2 refuses it if it is neither."""
    if value not in STRATEGIES:
        raise ProfileFormError("generation_strategy", f"is {value!r}", "give " + " or ".join(STRATEGIES))
    return value


def batsim4_form(profile: Any) -> Any:
    """The Batsim 4 form of a Batsim 5 profile; any other value unchanged (checked later)."""
    if not isinstance(profile, dict) or profile.get("type") not in BATSIM5_TYPES:
        return profile
    kind = profile["type"]
    out = dict(profile)
    if kind in _SAME_FIELDS:
        out["type"] = _SAME_FIELDS[kind]
    elif kind == "ParallelTaskProfile":
        out["type"] = "parallel"
        cpu, com = profile.get("cpu"), profile.get("com")
        if isinstance(com, list) and "cpu" not in profile:
            side = math.isqrt(len(com))
            out["cpu"] = [0] * (side if side * side == len(com) else 0)  # (a bad size is told by the checks)
        elif isinstance(cpu, list) and "com" not in profile:
            if len(cpu) ** 2 > MAX_COM_VALUES:
                raise ProfileFormError("cpu", f"lists {len(cpu):,} executors, so its all-zero communication matrix "
                                       f"would hold {len(cpu) ** 2:.3g} values, more than joulesim's limit of "
                                       f"{MAX_COM_VALUES:,} ({math.isqrt(MAX_COM_VALUES):,} executors)",
                                       "split the task, or describe an even load with ParallelTaskHomogeneousProfile")
            out["com"] = [0] * (len(cpu) ** 2)
    elif kind == "ParallelTaskHomogeneousProfile":
        strategy = _strategy(out.pop("generation_strategy", "DefinedAmountsUsedForEachValue"))
        out["type"] = "parallel_homogeneous_total" if strategy == "DefinedAmountsSpreadUniformly" else "parallel_homogeneous"
    elif kind == "ParallelTaskOnStorageHomogeneousProfile":
        # (Batsim 4's storage profile has no total form: the strategy stays, and a profile that
        # spreads its bytes shares them between its hosts when it runs, as rc2's
        # task_execution.cpp does: models/leaf_sequence.py)
        if _strategy(out.get("generation_strategy", "DefinedAmountsUsedForEachValue")) == "DefinedAmountsUsedForEachValue":
            out.pop("generation_strategy", None)
        out["type"] = "parallel_homogeneous_pfs"
    else:  # TraceReplayProfile
        out["type"] = "smpi" if profile.get("trace_type") == "SMPI" else "usage_trace"
        out.pop("trace_type", None)
        if "filename" in out:
            out["trace"] = out.pop("filename")
    return out
