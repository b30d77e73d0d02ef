"""Exact energy accounting: the platform's power over time, per-job energy, `out_consumed_energy.csv`.

Power is piecewise constant between events, so energy is integrated exactly at each
change (never sampled): E += P x (t - t_last). P is the sum over compute hosts of a
static part — the idle wattage of the host's computation pstate, or the wattage of the
sleep or virtual switching pstate it is in — plus, for running jobs, the dynamic part
(max - idle) x load. A `delay` job has load 0 and leaves its hosts at idle power.

A job's energy is the power of its hosts while it runs, settled whenever their power
changes (a computation pstate change mid-run), so it stays right for jobs killed at their
walltime or by the decider, on any number of hosts, and after sleep/boot cycles.

`out_consumed_energy.csv` has Batsim's columns `time,energy,event_type,wattmin,epower`:
one row per job start (s), job end (e) and pstate change (p), with the energy consumed
since t=0, the platform's static power (`wattmin`), and the mean power since the previous
row (`epower`; NA when no time elapsed, as Batsim writes it).
"""

from __future__ import annotations

from collections import Counter
from math import fsum
from typing import TYPE_CHECKING, TextIO

from joulesim.simulator.energy.compensated_sum import CompensatedSum
from joulesim.simulator.energy.host_energy import HostEnergy

if TYPE_CHECKING:
    from joulesim.simulator.workload.job_record import JobRecord

ENERGY_COLUMNS = ["time", "energy", "event_type", "wattmin", "epower"]

# Above this many distinct static wattages, the exact sum is taken over the hosts' list.
_MAX_DISTINCT_WATTAGES = 32


_TOTALS: dict[frozenset, float] = {}  # exact totals of multisets seen (platforms revisit the same ones)


def exact_total(counts: "Counter[float]") -> float:
    """The correctly rounded sum of a multiset of floats (value -> count): the float
    math.fsum gives over the whole list, at the cost of its few distinct values."""
    key = frozenset(counts.items())
    total = _TOTALS.get(key)
    if total is None:
        # Every float is n / 2**k exactly: sum the numerators over the largest denominator in
        # integers, then one int / int division, which Python rounds correctly (and which is
        # many times faster than summing Fractions).
        ratios = [(_ratio(value), count) for value, count in counts.items()]
        denominator = max((d for (_, d), _ in ratios), default=1)
        numerator = sum(n * (denominator // d) * count for (n, d), count in ratios)
        total = numerator / denominator
        if len(_TOTALS) >= 65_536:
            _TOTALS.clear()
        _TOTALS[key] = total
    return total


_RATIOS: dict[float, tuple[int, int]] = {}


def _ratio(value: float) -> tuple[int, int]:
    ratio = _RATIOS.get(value)
    if ratio is None:
        if len(_RATIOS) >= 65_536:
            _RATIOS.clear()
        ratio = _RATIOS[value] = value.as_integer_ratio()
    return ratio


class EnergyMeter:
    def __init__(self, out: TextIO | None, static_watts: list[float]):
        self._out = out
        self.static_watts = list(static_watts)  # per compute host, now
        # The total is recomputed exactly at each change (no drift): from the count of hosts
        # at each wattage (a pstate change on a platform of 80,000 hosts must not cost a sum
        # over all of them), or from the list when hosts have many different wattages.
        self._counts: Counter[float] | None = Counter(self.static_watts)
        if len(self._counts) > _MAX_DISTINCT_WATTAGES:
            self._counts = None
        self._static = self._exact_static()
        self._dynamic = CompensatedSum()  # sum of the running jobs' dynamic power
        self._energy = CompensatedSum()
        self._power = self._static
        self._t = 0.0
        self._row_t = 0.0
        self._row_energy = 0.0
        self.hosts: HostEnergy | None = None  # each host's joules, once asked for (track_hosts)
        if out is not None:
            out.write(",".join(ENERGY_COLUMNS) + "\n")

    def track_hosts(self) -> HostEnergy:
        """Keep each compute host's energy too, from now on (call it at t=0, before any change:
        what Batsim 5's energy probes read)."""
        if self.hosts is None:
            self.hosts = HostEnergy(self.static_watts, self._t)
        return self.hosts

    # ------------------------------------------------------------------ integration
    def _advance(self, now: float) -> None:
        if now != self._t:
            self._energy.add(self._power * (now - self._t))
            self._t = now

    def _exact_static(self) -> float:
        if self._counts is None:
            return fsum(self.static_watts)
        return exact_total(self._counts)

    def _refresh_power(self) -> None:
        self._power = self._static + self._dynamic.value

    def energy_at(self, now: float) -> float:
        """Joules consumed by the compute hosts from t=0 to `now` (>= the last change)."""
        return self._energy.value + self._power * (now - self._t)

    def window_start(self, now: float) -> float:
        """The joules consumed up to `now`, the start of consumed_joules' window (the first
        job submission)."""
        return self.energy_at(now)

    @property
    def power(self) -> float:
        return self._power

    def write_row(self, now: float, kind: str) -> None:
        if self._out is None:
            return
        energy = self.energy_at(now)
        elapsed = now - self._row_t
        epower = f"{(energy - self._row_energy) / elapsed:.6f}" if elapsed > 0 else "NA"
        self._out.write(f"{now:.6f},{energy:.6f},{kind},{self._static:.6f},{epower}\n")
        self._row_t = now
        self._row_energy = energy

    # ------------------------------------------------------------------ changes
    def set_static_watts(self, now: float, hosts: list[int], watts: list[float],
                         running: "list[JobRecord | None]", row: bool = True) -> None:
        """Hosts change their static power (a pstate change); settles running jobs on them.
        `row=False`: no `p` row in the output (a change that is no pstate change)."""
        self._advance(now)
        static = self.static_watts
        counts = self._counts
        for host, new in zip(hosts, watts):
            old = static[host]
            if new == old:
                continue
            if self.hosts is not None:
                self.hosts.settle(host, now)
            static[host] = new
            if counts is not None:
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
                counts[new] += 1
            record = running[host]
            if record is not None:
                self._settle(record, now)
                record.power += new - old
        if counts is not None and len(counts) > _MAX_DISTINCT_WATTAGES:
            self._counts = None
        self._static = self._exact_static()
        self._refresh_power()
        if row:
            self.write_row(now, "p")

    def job_started(self, now: float, record: "JobRecord", runs: list[tuple[int, int]],
                    dynamic_power: float) -> None:
        self._advance(now)
        static = self.static_watts
        record.power = sum(sum(static[a:b + 1]) for a, b in runs) + dynamic_power
        record.dynamic_power = dynamic_power
        record.energy = 0.0
        record.energy_t = now
        if dynamic_power:
            self._dynamic.add(dynamic_power)
            self._refresh_power()
            if self.hosts is not None:
                self.hosts.add_dynamic(now, runs, dynamic_power)
        self.write_row(now, "s")

    def set_dynamic_power(self, now: float, record: "JobRecord", dynamic_power: float) -> None:
        """A running job's dynamic power changes (its tasks' rates were re-solved)."""
        if dynamic_power == record.dynamic_power:
            return
        self._advance(now)
        self._settle(record, now)
        change = dynamic_power - record.dynamic_power
        record.power += change
        record.dynamic_power = dynamic_power
        self._dynamic.add(change)
        self._refresh_power()
        if self.hosts is not None:
            self.hosts.add_dynamic(now, record.alloc, change)

    def set_static_power(self, now: float, record: "JobRecord", static_power: float) -> None:
        """A running job's share of its hosts' static power changes (compute sharing: another
        job started or ended on one of its hosts). The platform's power does not change."""
        power = static_power + record.dynamic_power
        if power == record.power:
            return
        self._advance(now)
        self._settle(record, now)
        record.power = power

    def job_ended(self, now: float, record: "JobRecord") -> float:
        """Settle and return the job's energy; its dynamic power leaves the platform."""
        self._advance(now)
        self._settle(record, now)
        if record.dynamic_power:
            self._dynamic.add(-record.dynamic_power)
            self._refresh_power()
            if self.hosts is not None:
                self.hosts.add_dynamic(now, record.alloc, -record.dynamic_power)
        self.write_row(now, "e")
        return record.energy

    @staticmethod
    def _settle(record: "JobRecord", now: float) -> None:
        record.energy += record.power * (now - record.energy_t)
        record.energy_t = now
