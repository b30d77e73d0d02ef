"""The `config` object of SIMULATION_BEGINS, as Batsim 4 sends it (every key a decider may read)."""

from __future__ import annotations

from typing import Any


def batsim_config(forward_profiles: bool = False, dynamic_jobs: bool = False,
                  acknowledge_dynamic_jobs: bool = False, sched_config: str = "",
                  forward_unknown_events: bool = False, profile_reuse: bool = False) -> dict[str, Any]:
    """`sched_config`: Batsim's `--sched-cfg` string (or the text of `--sched-cfg-file`), forwarded
    as it is."""
    return {
        "redis-enabled": False,
        "redis-hostname": "127.0.0.1",
        "redis-port": 6379,
        "redis-prefix": "default",
        "profiles-forwarded-on-submission": forward_profiles,
        "dynamic-jobs-enabled": dynamic_jobs,
        "dynamic-jobs-acknowledged": acknowledge_dynamic_jobs,
        "profile-reuse-enabled": profile_reuse,
        "sched-config": sched_config,
        "forward-unknown-events": forward_unknown_events,
    }
