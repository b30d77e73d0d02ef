"""Each machine's joules as SimGrid 3.32's host_energy plugin counts them, for Batsim's outputs.

The energy meter integrates the platform's power exactly. SimGrid does something else, and
Batsim prints what SimGrid gives to the last digit: a host's joules are brought up to date
only at some moments (an action on it ends or is cancelled, an execution starts on it, its
pstate changes, or someone reads it), and then

    joules += watts x (now - last update)

in doubles, where `watts` is the power of the pstate the host was in at its last update and
of its CPU load *now*: idle watts at load 0, else epsilon + load x (max - epsilon). Batsim's
figures are sums of these doubles in long double (long_double.py): the energy trace's rows,
each job's energy (its machines' joules at its end minus at its start) and consumed_joules.

The kernel updates a machine at the moments that change what it will be charged (an action
on it ends, an execution starts, its pstate is set). Reads come in bulk: wherever Batsim reads
a machine (a job's start or end, a switch request or its end, QUERY, the first submission) it
reads every machine at that time, and a machine's first update at a time gives the same joules
whenever it comes within that time (its saved pstate and its load only change through updates).
So the first read at a new time brings every machine up to date at once, in numpy (the same
double operations, machine by machine), which keeps platforms of 80,000 machines cheap. Each
machine's watts are kept between these bulk updates: only the machines whose saved pstate,
executions or dynamic share moved since are computed again, so a bulk update costs a few array
operations whatever the platform's power model.

The load comes from what runs on the host: a switching machine's one-flop execution in the
kernel loads it fully (1 / cores of the host); a delay job's sleep does not load it; the
runner's parallel tasks load it by their CPU usage (flops per second at their rates) as of the
last solve, as SimGrid's Host::get_load reads its variables' values. A compute job that no
runner models adds the meter's per-host share of its dynamic power (it loads its hosts fully).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from joulesim.simulator.energy.long_double import long_double_sum_array


# Machines whose watts moved are computed again one by one (about 2 us each in Python) up to a
# 32nd of the platform; beyond, all of them in numpy (about 45 ns a machine: 3.5 ms at 80,640).
_ONE_BY_ONE = 32


class SimgridHostEnergy:
    def __init__(self, wattages: list[list[tuple[float, float, float]]], pstates: list[int], cores: list[int],
                 speeds: list[list[float]] | None = None):
        """`wattages[machine][pstate]`: (idle, epsilon, max) watts; `pstates`: each machine's
        pstate at the start; `speeds[machine][pstate]`: flop/s (the load of a runner's task is
        its usage / (speed x cores))."""
        count = len(wattages)
        width = max((len(w) for w in wattages), default=1)
        self._cores = np.array(cores, dtype=float)
        self._speed = np.ones((count, width))
        for machine, per_pstate in enumerate(speeds or []):
            self._speed[machine, :len(per_pstate)] = [speed if speed > 0 else 1.0 for speed in per_pstate]
        # (idle, epsilon, slope) as the plugin's PowerRange keeps them: slope = max - epsilon
        self._idle = np.zeros((count, width))
        self._epsilon = np.zeros((count, width))
        self._slope = np.zeros((count, width))
        for machine, per_pstate in enumerate(wattages):
            for pstate, (idle, epsilon, peak) in enumerate(per_pstate):
                self._idle[machine, pstate] = idle
                self._epsilon[machine, pstate] = epsilon
                self._slope[machine, pstate] = peak - epsilon
        # (and as lists, for one machine at a time: numpy's scalar access is slow)
        self._ranges = [[(idle, epsilon, peak - epsilon) for idle, epsilon, peak in per_pstate]
                        for per_pstate in wattages]
        # SimGrid's Host::get_pstate: the simulation's pstate of a machine may change a few
        # simcalls earlier or later at the same time (a switching machine's actor sets it).
        self.pstate = np.array(pstates, dtype=np.int64)
        self._saved = self.pstate.copy()  # HostEnergy::pstate_: at the last update
        self._full_load = np.minimum(1.0, 1.0 / np.array(cores, dtype=float)) if count else np.zeros(0)
        self.joules = np.zeros(count)  # HostEnergy::total_energy_
        self._last = np.zeros(count)  # HostEnergy::last_updated_
        # Single-host executions under way on each machine: changed only through
        # execution_started / execution_ended (they tell the kept watts); read-only to others.
        self._executing = np.zeros(count, dtype=np.int64)
        self.executing = self._executing.view()
        self.executing.flags.writeable = False
        self._all = np.arange(count)
        self.caught_up = 0.0  # the time of the last bulk update
        # Sums already made: (joules or pstates changed since?) -> long double
        self._joules_version = 0
        self._total: tuple[int, int] = (-1, 0)
        self._pstate_version = 0
        self._wattmin: tuple[int, int] = (-1, 0)
        # The dynamic watts per machine of the compute jobs no runner models (kept by the meter's
        # ledger), and whether any runs now.
        self.dynamic: list[float] | None = None  # (compute machines, for one machine at a time)
        # (every machine, for the bulk updates: changed only through add_dynamic)
        self.dynamic_array: np.ndarray | None = None
        self.dynamic_active: Callable[[], bool] = _never
        # The runner of parallel tasks (ParallelTaskRunner: host_jobs, cpu_usage), None without:
        # a machine that one of its jobs holds draws SimGrid's power at its CPU usage now.
        self.runner = None
        # SimGrid's loads are the variables' values of the last solve (at the start of each
        # step): a task started since counts 0 until the next one, an ended one until its
        # variable is freed (right after the updates its end makes). None: ask the runner.
        self.usage_solved: np.ndarray | None = None
        # The bulk updates' watts of every machine (_watts), kept between them: the machines whose
        # saved pstate, executions or dynamic share moved since are computed again (`_moved`),
        # all of them when `_watts_valid` is None or the dynamic power was switched on or off.
        self._watts_kept = np.zeros(count)
        self._watts_valid: bool | None = None  # (the dynamic power's state they were computed in)
        self._moved: set[int] = set()
        self._pstate_set: set[int] = set()  # machines whose pstate was set since it was last saved

    def _watts(self, machines: np.ndarray) -> np.ndarray:
        """HostEnergy::get_current_watts_value for these machines: their saved pstate, their
        load now."""
        saved = self._saved[machines]
        watts = self._idle[machines, saved]
        loaded = self.executing[machines] > 0
        if loaded.any():
            some, pstates = machines[loaded], saved[loaded]
            watts[loaded] = self._epsilon[some, pstates] + self._full_load[some] * self._slope[some, pstates]
        if self.dynamic is not None and self.dynamic_active():
            dynamic = self.dynamic_array[machines]
            running = ~loaded & (dynamic > 0)
            watts[running] += dynamic[running]
        runner = self.runner
        if runner is not None and runner.jobs:
            tasks = np.zeros(len(self.joules), dtype=bool)
            tasks[:len(runner.host_jobs)] = runner.host_jobs > 0
            tasks = tasks[machines] & ~loaded
            if tasks.any():  # (their dynamic share above is replaced: SimGrid's load is the tasks' usage)
                some, pstates = machines[tasks], saved[tasks]
                usage = self._usage()
                load = np.minimum(1.0, usage[some] / self._speed[some, pstates] / self._cores[some])
                watts[tasks] = np.where(load > 0, self._epsilon[some, pstates] + load * self._slope[some, pstates],
                                        self._idle[some, pstates])
        return watts

    def _usage(self) -> np.ndarray:
        """Each compute machine's CPU usage by the runner's tasks now, in flop/s."""
        return self.usage_solved if self.usage_solved is not None else self.runner.cpu_usage()

    def solved(self) -> None:
        """A solve: the loads are the runner's rates from now on."""
        if self.runner is not None:
            self.usage_solved = self.runner.cpu_usage()

    def _task_watts(self, machine: int, pstate: int) -> float | None:
        """SimGrid's power of a machine that a runner's job holds (None: no job holds it)."""
        runner = self.runner
        if runner is None or machine >= len(runner.host_jobs) or not runner.host_jobs[machine]:
            return None
        idle, epsilon, slope = self._ranges[machine][pstate]
        load = float(self._usage()[machine]) / float(self._speed[machine, pstate]) / float(self._cores[machine])
        if load > 1:
            load = 1.0
        return epsilon + load * slope if load > 0 else idle

    def update(self, machine: int, now: float) -> None:
        """HostEnergy::update: the joules since the last update at the saved pstate and the load
        of now; then the pstate is saved for the next interval."""
        last = float(self._last[machine])
        if last < now:
            pstate = int(self._saved[machine])
            idle, epsilon, slope = self._ranges[machine][pstate]
            if self._executing[machine]:
                watts = epsilon + float(self._full_load[machine]) * slope
            else:
                watts = self._task_watts(machine, pstate) if self.runner is not None else None
                if watts is None:
                    watts = idle
                    if self.dynamic is not None and machine < len(self.dynamic) and self.dynamic[machine] > 0:
                        watts += self.dynamic[machine]
            self.joules[machine] = float(self.joules[machine]) + watts * (now - last)
            self._last[machine] = now
            self._joules_version += 1
        self._saved[machine] = self.pstate[machine]
        self._moved.add(machine)
        self._pstate_set.discard(machine)

    def execution_started(self, machine: int) -> None:
        """An execution of one host starts on the machine: it loads it until it ends."""
        self._executing[machine] += 1
        self._moved.add(machine)

    def execution_ended(self, machine: int) -> None:
        self._executing[machine] -= 1
        self._moved.add(machine)

    def add_dynamic(self, first: int, last: int, share: float) -> None:
        """Machines first..last (inclusive) draw `share` more dynamic watts (HostEnergy's ledger
        spreading a job's dynamic power, with the same additions)."""
        self.dynamic_array[first:last + 1] += share
        if (last + 1 - first) * _ONE_BY_ONE > len(self._watts_kept):
            self._watts_valid = None  # (so many: all of them again, in numpy)
        else:
            self._moved.update(range(first, last + 1))

    def set_current(self, machine: int, pstate: int) -> None:
        """The machine's pstate is `pstate` from now on (its joules are updated separately)."""
        self.pstate[machine] = pstate
        self._pstate_version += 1
        self._pstate_set.add(machine)

    def set_pstate(self, machine: int, now: float, pstate: int) -> None:
        """Host::set_pstate(pstate): the plugin's on_speed_change, after the change."""
        self.set_current(machine, pstate)
        self.update(machine, now)

    def catch_up(self, now: float) -> None:
        """Every machine read at `now` (an update of each one not up to date)."""
        if self.caught_up == now:
            return
        self.caught_up = now
        last = self._last
        elapsed = now - last
        stale = elapsed > 0  # (one at least, unless every machine was updated at this time)
        # joules + watts x (now - last) over every machine: the same operations as machine by
        # machine; a machine already up to date adds watts x 0 = +0.0, which leaves its joules'
        # bits as they are (they are never -0.0), so no gathering of the stale ones is needed.
        elapsed *= self._watts_now()
        self.joules += elapsed
        last.fill(now)
        np.copyto(self._saved, self.pstate, where=stale)  # (the machines up to date keep theirs)
        self._joules_version += 1
        if self._pstate_set:  # their saved pstate moves now: their watts with it
            saved = [machine for machine in self._pstate_set if stale[machine]]
            self._moved.update(saved)
            self._pstate_set.difference_update(saved)

    def _watts_now(self) -> np.ndarray:
        """`_watts` of every machine, from the kept values (a bulk update at each job start and end
        on 80,000 machines then costs a few array operations)."""
        runner = self.runner
        if runner is not None and runner.jobs:  # (loads follow the runner's solves: every machine again)
            self._watts_valid = None
            return self._watts(self._all)
        dynamic_on = self.dynamic is not None and self.dynamic_active()
        watts, moved = self._watts_kept, self._moved
        if self._watts_valid is not dynamic_on or len(moved) * _ONE_BY_ONE > len(watts):
            watts[:] = self._watts(self._all)
            self._watts_valid = dynamic_on
        elif moved:
            for machine in moved:
                watts[machine] = self._machine_watts(machine, dynamic_on)
        moved.clear()
        return watts

    def _machine_watts(self, machine: int, dynamic_on: bool) -> float:
        """`_watts` of one machine (no runner's task on it), in Python floats: the same operations."""
        idle, epsilon, slope = self._ranges[machine][int(self._saved[machine])]
        if self._executing[machine] > 0:
            return epsilon + float(self._full_load[machine]) * slope
        if dynamic_on:
            dynamic = float(self.dynamic_array[machine])
            if dynamic > 0:
                return idle + dynamic
        return idle

    def read(self, runs: list[tuple[int, int]], now: float) -> int:
        """The long double sum of the joules of the machines of these runs (first, last), read
        now in ascending order as Batsim adds a job's machines (consumed_energy_on_machines): a
        multiple of 2**-1074, see long_double.py. Summed in C over slices of the array: a job of
        thousands of machines, at its start and its end, was most of an energy run on Curie."""
        self.catch_up(now)
        joules = self.joules
        if len(runs) == 1:
            first, last = runs[0]
            return long_double_sum_array(joules[first:last + 1])
        return long_double_sum_array(np.concatenate([joules[first:last + 1] for first, last in runs]))

    def read_all(self, now: float) -> int:
        self.catch_up(now)
        version, total = self._total
        if version != self._joules_version:
            total = long_double_sum_array(self.joules)
            self._total = (self._joules_version, total)
        return total

    def wattmin(self) -> int:
        """Machines::total_wattmin: the long double sum of each machine's epsilon watts at its
        current pstate."""
        version, total = self._wattmin
        if version != self._pstate_version:
            total = long_double_sum_array(self._epsilon[self._all, self.pstate])
            self._wattmin = (self._pstate_version, total)
        return total


__all__ = ["SimgridHostEnergy"]


def _never() -> bool:
    """No dynamic power (until an energy meter follows the plugin)."""
    return False
