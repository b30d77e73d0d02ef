"""Each compute host's joules since t=0: what SimGrid's host_energy plugin gives per host, and
what Batsim 5's energy probes read (`sg_host_get_consumed_energy`).

The energy meter keeps the platform's total only (a sum over hosts costs nothing per event);
this ledger is kept beside it when something asks for hosts one by one. A host's power is its
static wattage (the meter's per-host list, which the meter keeps current) plus its share of the
dynamic power of the jobs running on it. The meter knows a job's dynamic power as one figure
(the mean over its hosts and its run, see job_lifecycle._dynamic_power), so the ledger spreads
it evenly over the job's hosts: exact for delay jobs (no dynamic part), homogeneous parallel
tasks and the node model's cores; for a task loading its hosts unevenly, each host gets the
mean, and the hosts' sum stays the platform's total.

Each host's energy is settled (power x time since its last change) whenever its power changes,
so a reading costs one multiply-add per host asked for.
"""

from __future__ import annotations

from typing import Callable, Iterable

from joulesim.protocol.interval_set import runs_size


class HostEnergy:
    def __init__(self, static_watts: list[float], now: float):
        # (the meter's own list: it updates it in place at each pstate change, after settle())
        self._static = static_watts
        count = len(static_watts)
        self._dynamic = [0.0] * count  # W: this host's share of its running jobs' dynamic power
        self._joules = [0.0] * count  # J consumed up to _since[host]
        self._since = [now] * count
        # Told each change of the shares, `(first, last, share)`, with the same additions (so the
        # same doubles) when a bulk reader keeps a copy (SimGrid's joules, simgrid_host_energy.py).
        self.on_dynamic_change: "Callable[[int, int, float], None] | None" = None

    @property
    def dynamic_watts(self) -> list[float]:
        """Each host's share of its running jobs' dynamic power now (a live list)."""
        return self._dynamic

    def settle(self, host: int, now: float) -> None:
        """Account the host's energy up to `now` (call before its power changes)."""
        self._joules[host] += (self._static[host] + self._dynamic[host]) * (now - self._since[host])
        self._since[host] = now

    def add_dynamic(self, now: float, runs: Iterable[tuple[int, int]], change: float) -> None:
        """A job on the hosts of `runs` (inclusive ranges) changes its dynamic watts by `change`:
        each host's share changes by change / number of hosts."""
        runs = list(runs)
        size = runs_size(runs)
        if not size or not change:
            return
        share = change / size
        dynamic = self._dynamic
        for a, b in runs:
            for host in range(a, b + 1):
                self.settle(host, now)
                dynamic[host] += share
            if self.on_dynamic_change is not None:
                self.on_dynamic_change(a, b, share)

    def joules(self, hosts: Iterable[int], now: float) -> list[float]:
        """Each of `hosts`' energy from t=0 to `now` (>= its last change), in joules."""
        static, dynamic, joules, since = self._static, self._dynamic, self._joules, self._since
        return [joules[h] + (static[h] + dynamic[h]) * (now - since[h]) for h in hosts]


__all__ = ["HostEnergy"]
