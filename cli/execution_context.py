"""`joulesim simulate --dump-execution-context`: Batsim 4.2.1's execution context, printed as one
line of JSON (batsim.cpp, main) instead of running the simulation, so that tools that start
Batsim can ask it where the decider must listen and where the outputs go."""

from __future__ import annotations

import json


def execution_context(socket_endpoint: str, export_prefix: str) -> str:
    """The JSON line, with Batsim's keys in Batsim's order (redis: its defaults, never enabled here)."""
    return json.dumps({
        "socket_endpoint": socket_endpoint,
        "redis_enabled": False,
        "redis_hostname": "127.0.0.1",
        "redis_port": 6379,
        "redis_prefix": "default",
        "export_prefix": export_prefix,
        "external_scheduler": True,  # a decider process makes the decisions (Batsim without --no-sched)
    }, separators=(",", ":"), ensure_ascii=False)
