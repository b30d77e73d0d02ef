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
from typing import TYPE_CHECKING, Callable, TextIO

import numpy as np

from joulesim.simulator.energy.compensated_sum import CompensatedSum
from joulesim.simulator.energy.host_energy import HostEnergy
from joulesim.simulator.energy.long_double import difference, fixed, quotient, scaled, to_float
from joulesim.simulator.energy.simgrid_host_energy import SimgridHostEnergy

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
        # A pstate change only marks it: thousands of machines reaching their pstate one by one
        # at one time need one exact sum, when the power is next used.
        self._static_stale = False
        self._dynamic = CompensatedSum()  # sum of the running jobs' dynamic power
        self._energy = CompensatedSum()
        self._power = self._static
        self._t = 0.0
        self._row_t = 0.0
        self._row_energy = 0.0
        self.hosts: HostEnergy | None = None  # each host's joules, once asked for (track_hosts)
        # With Batsim's actors: the joules as SimGrid counts them, from which Batsim's figures
        # are printed (the trace's rows, jobs' energy, consumed_joules, QUERY's answer).
        self.simgrid: SimgridHostEnergy | None = None
        self._row_date = 0  # long doubles (long_double.py): the last row's date and joules
        self._row_joules = 0
        self._window: list[int | None] = [None, None]  # joules at the first submission, at the last job end
        self._wattmin_text: tuple[int, str] = (-1, "")  # the last wattmin and its text
        # Where a row goes once the reads before it are done (Batsim's actors), else None: now.
        self.row_sink: "Callable[[Callable[[], None]], None] | None" = None
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
            if self._static_stale:
                self._refresh_power()
            self._energy.add(self._power * (now - self._t))
            self._t = now

    def _exact_static(self) -> float:
        if self._counts is None:
            return fsum(self.static_watts)
        return exact_total(self._counts)

    def _refresh_power(self) -> None:
        if self._static_stale:
            self._static = self._exact_static()
            self._static_stale = False
        self._power = self._static + self._dynamic.value

    def follow_simgrid(self, simgrid: SimgridHostEnergy) -> None:
        """Print Batsim's figures from SimGrid's per-machine joules (see simgrid_host_energy.py);
        the dynamic power of compute jobs that no runner models reaches it through the per-host
        ledger (the runner's tasks, through their CPU usage)."""
        self.simgrid = simgrid
        ledger = self.track_hosts()
        simgrid.dynamic = ledger.dynamic_watts
        simgrid.dynamic_array = np.zeros(len(simgrid.joules))  # (storage machines: 0)
        ledger.on_dynamic_change = simgrid.add_dynamic
        simgrid.dynamic_active = self._dynamic_active

    def _dynamic_active(self) -> bool:
        return self._dynamic.value != 0

    def energy_at(self, now: float) -> float:
        """Joules consumed by the compute hosts from t=0 to `now` (>= the last change)."""
        if self.simgrid is not None:
            return to_float(self.simgrid.read_all(now))
        if self._static_stale:
            self._refresh_power()
        return self._energy.value + self._power * (now - self._t)

    def window_start(self, now: float) -> float:
        """The joules consumed up to `now`, the start of consumed_joules' window (the first
        job submission)."""
        if self.simgrid is not None and self._window[0] is None:
            self._window[0] = self.simgrid.read_all(now)
        return self.energy_at(now)

    def read_window_start(self, now: float) -> None:
        """Batsim's energy_first_job_submission, read by the job submitter as it submits its
        first job (with SimGrid's joules only; window_start is then too late)."""
        if self.simgrid is not None and self._window[0] is None:
            self._window[0] = self.simgrid.read_all(now)

    def window_joules(self, first: float, last: float) -> float:
        """consumed_joules from the window's two readings (first submission, last job end): in
        Batsim, the long double difference, then a double."""
        start, end = self._window
        if self.simgrid is not None and start is not None and end is not None:
            return to_float(difference(end, start))
        return last - first

    @property
    def power(self) -> float:
        if self._static_stale:
            self._refresh_power()
        return self._power

    def write_row(self, now: float, kind: str) -> None:
        if self.simgrid is not None:
            if self.row_sink is not None:
                self.row_sink(lambda: self._write_simgrid_row(now, kind))
            else:
                self._write_simgrid_row(now, kind)
            return
        if self._out is None:
            return
        if self._static_stale:
            self._refresh_power()
        energy = self.energy_at(now)
        elapsed = now - self._row_t
        epower = f"{(energy - self._row_energy) / elapsed:.6f}" if elapsed > 0 else "NA"
        self._out.write(f"{now:.6f},{energy:.6f},{kind},{self._static:.6f},{epower}\n")
        self._row_t = now
        self._row_energy = energy

    def _write_simgrid_row(self, now: float, kind: str) -> None:
        """EnergyConsumptionTracer::add_entry: every machine's joules read and summed, the mean
        power since the last row in long double (the dates' difference is sub-nanosecond when
        rows share a time), printed as Batsim prints them. A job end's joules close the window
        of consumed_joules (Batsim's energy_last_job_completion)."""
        simgrid = self.simgrid
        joules = simgrid.read_all(now)
        if self._out is not None:
            date = scaled(now)
            elapsed = difference(date, self._row_date)
            epower = "%f" % quotient(difference(joules, self._row_joules), elapsed) if elapsed > 0 else "NA"
            wattmin = simgrid.wattmin()
            if wattmin != self._wattmin_text[0]:
                self._wattmin_text = (wattmin, fixed(wattmin))
            self._out.write(f"{now:f},{fixed(joules)},{kind},{self._wattmin_text[1]},{epower}\n")
            self._row_date = date
        self._row_joules = joules
        if kind == "e":
            self._window[1] = joules

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
        self._static_stale = True
        if row:
            self.write_row(now, "p")

    def job_started(self, now: float, record: "JobRecord", runs: list[tuple[int, int]],
                    dynamic_power: float, row: bool = True) -> None:
        """`row=False`: the caller writes the job's `s` row (write_row) when Batsim would."""
        self._advance(now)
        static = self.static_watts
        record.power = sum(sum(static[a:b + 1]) for a, b in runs) + dynamic_power
        record.dynamic_power = dynamic_power
        record.energy = 0.0
        record.energy_t = now
        if self.simgrid is not None:  # consumed_energy_on_machines at its start
            record.exact_energy = self.simgrid.read(runs, now)
        if dynamic_power:
            self._dynamic.add(dynamic_power)
            self._refresh_power()
            if self.hosts is not None:
                self.hosts.add_dynamic(now, runs, dynamic_power)
        if row:
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
        simgrid = self.simgrid
        if simgrid is not None:  # its machines' joules now minus at its start, in long double
            record.exact_energy = difference(simgrid.read(record.alloc, now), record.exact_energy)
            record.energy = to_float(record.exact_energy)
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
