"""The configuration keys a platform's ``<config>`` may set: those SimGrid 3.32 knows.

SimGrid applies each ``<prop id="KEY" value="..."/>`` of a ``<config>`` when it loads the file,
and refuses the file on a key it does not know ("Bad config key: network/coordinates", from
Batsim's own energy_platform_homogeneous_no_net.xml; "network/TCP_gamma", the old spelling of
network/TCP-gamma, from its graphene.xml). The keys below are the ones Debian's libsimgrid 3.32
lists when it refuses one. joulesim replicates SimGrid as Batsim configures it and applies no
value: the keys are only checked.
"""

from __future__ import annotations

import difflib
import xml.etree.ElementTree as ET

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import shown

# network/TCP-gamma's default (SimGrid 3.32, and Batsim sets no other): the TCP window, in bytes,
# that bounds a transfer's throughput to TCP_GAMMA / (2 x latency) (ptask_L07's network bound).
TCP_GAMMA = 4194304.0

SIMGRID_CONFIG_KEYS = frozenset("""
bmf/max-iterations bmf/precision cmonkey/host cmonkey/link cmonkey/tell cmonkey/time
contexts/factory contexts/guard-size contexts/nthreads contexts/stack-size contexts/synchro
cpu/maxmin-selective-update cpu/model cpu/optim cpu/solver debug/breakpoint debug/clean-atexit
debug/verbose-exit disk/model disk/solver exception/cutpath help-nostop host/model host/solver
maxmin/concurrency-limit maxmin/precision model-check/replay model-check/timeout network/TCP-gamma
network/bandwidth-factor network/crosstraffic network/latency-factor network/loopback-bw
network/loopback-lat network/maxmin-selective-update network/model network/optim network/solver
network/weight-S ns3/TcpModel ns3/seed path plugin plugin/dvfs/governor plugin/dvfs/max-pstate
plugin/dvfs/min-pstate plugin/dvfs/sampling-rate smpi/IB-penalty-factors smpi/async-small-thresh
smpi/auto-shared-malloc-thresh smpi/bw-factor smpi/comp-adjustment-file smpi/cpu-threshold
smpi/display-allocs smpi/errors-are-fatal smpi/grow-injected-times smpi/host-speed smpi/hostfile
smpi/init smpi/iprobe smpi/iprobe-cpu-usage smpi/lat-factor smpi/list-leaks smpi/map smpi/np
smpi/pedantic smpi/replay smpi/send-is-detached-thresh smpi/shared-malloc smpi/simulate-computation
smpi/test smpi/trace-call-location smpi/trace-call-use-absolute-path smpi/wtime surf/precision
tracing tracing/actor tracing/basic tracing/categorized tracing/comment tracing/comment-file
tracing/disable-destroy tracing/disable_link tracing/disable_power tracing/filename
tracing/platform tracing/platform/topology tracing/precision tracing/smpi tracing/smpi/computing
tracing/smpi/display-sizes tracing/smpi/format tracing/smpi/format/ti-one-file tracing/smpi/group
tracing/smpi/internals tracing/smpi/sleeping tracing/uncategorized tracing/vm
""".split())


def check_config_keys(path: str, root: ET.Element) -> None:
    """InputError at the first <config> property whose key SimGrid 3.32 does not know."""
    for config in root.iter("config"):
        for prop in config.iter("prop"):
            key = prop.get("id")
            if key is None or key in SIMGRID_CONFIG_KEYS:
                continue  # (a <prop> without id is reported with the structure)
            kebab = key.replace("_", "-")  # SimGrid's own hint: snake_case for kebab-case
            close = [kebab] if kebab in SIMGRID_CONFIG_KEYS else difflib.get_close_matches(key, SIMGRID_CONFIG_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(path, f"<config>, <prop id={shown(key)}>", "SimGrid 3.32 knows no such configuration key and "
                             f"refuses the file (\"Bad config key: {key}\")", f"{hint}remove the <prop> (joulesim applies "
                             "no <config> value: it runs SimGrid's configuration as Batsim sets it)")
