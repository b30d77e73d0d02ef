"""Batsim's `--sg-cfg NAME:VALUE` and `--sg-log OPTION`, which Batsim hands to SimGrid. joulesim
has no SimGrid inside: it replicates the part of SimGrid 3.32 that Batsim's results depend on,
with SimGrid's defaults under Batsim. The options are accepted so that Batsim's command lines run,
and each is answered: a value equal to what joulesim replicates is fine; anything else changes
nothing here, and a warning says so."""

from __future__ import annotations

import click

#: The SimGrid settings joulesim's results follow (simulator/engine/simgrid_kernel.py,
#: ipc_routes.py, simulator/models/ptask_sharing.py), with the values joulesim uses.
REPLICATED = {
    "host/model": "ptask_L07",  # Batsim always sets it
    "surf/precision": 1e-9,
    "maxmin/precision": 1e-5,
    "network/TCP-gamma": 4194304.0,
}


def _same(name: str, value: str) -> bool:
    expected = REPLICATED[name]
    if isinstance(expected, str):
        return value == expected
    try:
        return float(value) == expected
    except ValueError:
        return False


def simgrid_warnings(sg_cfg: tuple[str, ...], sg_log: tuple[str, ...]) -> list[str]:
    """One warning per option that changes nothing here; BadParameter for a malformed --sg-cfg."""
    warnings = []
    for option in sg_cfg:
        name, sep, value = option.partition(":")
        if not sep or not name or ":" in value:
            raise click.BadParameter(f"{option!r} is not NAME:VALUE with one ':' (e.g. --sg-cfg surf/precision:1e-9)",
                                     param_hint="--sg-cfg")
        if name in REPLICATED and _same(name, value):
            continue
        replicated = ", ".join(f"{k}:{v:g}" if isinstance(v, float) else f"{k}:{v}" for k, v in REPLICATED.items())
        warnings.append(f"joulesim: warning: --sg-cfg {option} changes nothing: joulesim replicates SimGrid 3.32 "
                        f"as Batsim runs it, with {replicated}")
    for option in sg_log:
        warnings.append(f"joulesim: warning: --sg-log {option} changes nothing: joulesim has no SimGrid logs "
                        "(-v network-only shows the messages exchanged with the decider)")
    return warnings
