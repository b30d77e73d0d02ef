"""The state of each compute machine as Batsim 4.2.1 keeps it: `out_machine_states.csv`, the
time_* columns of `out_schedule.csv`, and the machine lines of the Pajé trace.

Each machine is in one state: sleeping, switching on, switching off, idle, computing or
unavailable. As in Batsim, every machine starts idle, whatever its pstate (a machine that
starts in a sleep pstate counts as idle until a switch moves it). The engine says what happens,
when Batsim would see it (the clock of the actor that sees it):
- a job starts: its machines compute (also those already computing another, shared, job);
- a job ends: its machines left without a job become idle, unless they are unavailable;
- a switch starts or a machine reaches its pstate: `set_state`;
- a machine becomes unavailable (whatever it does), or available again (computing if a job is
  still running on it, else idle, even if it sleeps: Batsim's rule).

`out_machine_states.csv` gets a row exactly where Batsim writes one: after each job start,
after each job end, after each SET_RESOURCE_STATE (`write_row`), and when the last machine of
a switch request has arrived (`write_row`); never for the initial state. So one printed time
may have several rows. Times are printed with %g, as Batsim prints them.

Time spent per state, as Batsim counts it: each machine adds the time since its previous change
at each change of its state; the time after its last change is never added (a machine asleep
until the end adds nothing for that sleep, a machine never used adds nothing at all). The
totals are integrated by parts, so that only moves cost work: a machine in state s from t_in
to t_out adds t_out - t_in, the sum of -t over entries and +t over exits of s, plus t_in for
the machines still in s, added at the end. The sums are Neumaier-compensated (inlined: this is
on every job's path), so long runs do not drift.
"""

from __future__ import annotations

from math import fsum
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from joulesim.simulator.output.schedule_trace import ScheduleTrace

MACHINE_STATES_COLUMNS = ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]

# States, in the column order of the output (unavailable is not a Batsim column).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
CATEGORY_NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")

_ROW = "%g,%d,%d,%d,%d,%d\n"  # the time as output_format.fmt_time prints it, then the counts
_FILLED = [bytes([state]) for state in range(len(CATEGORY_NAMES))]  # x n: n machines in that state


class MachineStates:
    def __init__(self, out: TextIO, host_job: list[Any], sharing: bool = False,
                 trace: "ScheduleTrace | None" = None):
        """`host_job`: the simulation's list of each machine's running job (its oldest with
        compute sharing) or None, kept up to date before each call here; `sharing`: several
        jobs may run on one machine; `trace`: the Pajé trace to tell, if any."""
        nb_machines = len(host_job)
        self._out = out
        self._host_job = host_job
        self._sharing = sharing
        self._trace = trace
        self.counts = [0] * len(CATEGORY_NAMES)
        self.counts[IDLE] = nb_machines
        self._state = bytearray([IDLE]) * nb_machines
        self._since = [0.0] * nb_machines  # the clock of each machine's last change
        # sum(+t on exits, -t on entries) per state, as value + compensation.
        self._exits = [0.0] * len(CATEGORY_NAMES)
        self._compensations = [0.0] * len(CATEGORY_NAMES)
        # With sharing, the job the trace shows on each machine (the oldest one running).
        self._shown: list[Any] = [None] * nb_machines if sharing and trace is not None else []
        out.write(",".join(MACHINE_STATES_COLUMNS) + "\n")

    # ------------------------------------------------------------------ what happens
    def job_started(self, now: float, record: Any, runs: list[tuple[int, int]]) -> None:
        """Job `record` starts on the machines of `runs` (canonical intervals)."""
        state, since = self._state, self._since
        moved = 0
        for a, b in runs:
            n = b - a + 1
            if state.count(IDLE, a, b + 1) == n:  # the usual case: all idle
                state[a:b + 1] = _FILLED[COMPUTING] * n
                since[a:b + 1] = [now] * n
                moved += n
            else:
                for host in range(a, b + 1):
                    self._set(now, host, COMPUTING)
        if moved:
            self._moved(now, IDLE, COMPUTING, moved)
        trace = self._trace
        if trace is not None:
            if self._sharing:
                self._show_tops(now, runs)
            else:
                trace.computing(now, record.job.id, runs)
        self.write_row(now)

    def job_ended(self, now: float, record: Any, runs: list[tuple[int, int]], kill_traced: bool = False) -> None:
        """Job `record` has left the machines of `runs`; `kill_traced`: the trace shows a kill."""
        trace = self._trace
        if trace is not None and kill_traced:
            trace.killed(now, record.job.id, runs)
        state, since, host_job = self._state, self._since, self._host_job
        idle_runs: list[tuple[int, int]] = []
        moved = 0
        for a, b in runs:
            n = b - a + 1
            if state.count(COMPUTING, a, b + 1) == n and not any(host_job[a:b + 1]):  # all computing, all free
                state[a:b + 1] = _FILLED[IDLE] * n
                since[a:b + 1] = [now] * n
                moved += n
                idle_runs.append((a, b))
            else:
                for host in range(a, b + 1):
                    if host_job[host] is None and state[host] != UNAVAILABLE:
                        self._set(now, host, IDLE)
                        idle_runs.append((host, host))
        if moved:
            self._moved(now, COMPUTING, IDLE, moved)
        if trace is not None:
            if self._sharing:
                self._show_tops(now, runs)
            elif idle_runs:
                trace.idle(now, idle_runs)
        self.write_row(now)

    def set_state(self, now: float, hosts: list[int], category: int) -> None:
        """These machines enter state `category` now (Batsim's Machine::update_machine_state)."""
        for host in hosts:
            self._set(now, host, category)

    def set_availability(self, now: float, host: int, available: bool) -> None:
        """A machine becomes unavailable, or available again: then computing if a job still
        runs on it, else idle (as Batsim does, whatever its pstate)."""
        if not available:
            self._set(now, host, UNAVAILABLE)
        else:
            self._set(now, host, COMPUTING if self._host_job[host] is not None else IDLE)

    def write_row(self, now: float) -> None:
        """A row of the counts now (Batsim's MachineStateTracer::write_machine_states)."""
        counts = self.counts
        self._out.write(_ROW % (now, counts[SLEEPING], counts[SWITCHING_ON], counts[SWITCHING_OFF],
                                counts[IDLE], counts[COMPUTING]))

    def close(self, now: float) -> None:
        """The end of the run (Batsim writes no row then)."""
        if self._trace is not None:
            self._trace.close(now)

    # ------------------------------------------------------------------ totals
    def time_in(self, category: int) -> float:
        """Machine-seconds in `category`, as Batsim counts them (up to each machine's last change)."""
        still_there = [since for since, state in zip(self._since, self._state) if state == category]
        return fsum([self._exits[category], self._compensations[category], *still_there])

    # ------------------------------------------------------------------ bookkeeping
    def _set(self, now: float, host: int, target: int) -> None:
        """One machine enters `target` now (its state and clock; the counts and sums if it moves)."""
        source = self._state[host]
        if source != target:
            self._state[host] = target
            self._moved(now, source, target, 1)
        self._since[host] = now

    def _moved(self, now: float, source: int, target: int, n: int) -> None:
        """n machines went from `source` to `target` now: the counts, and +n x now on the exits
        of `source`, -n x now on those of `target` (Neumaier sums, inlined)."""
        counts, exits, compensations = self.counts, self._exits, self._compensations
        counts[source] -= n
        counts[target] += n
        term = n * now
        old = exits[source]
        total = old + term
        if abs(old) >= term:
            compensations[source] += (old - total) + term
        else:
            compensations[source] += (term - total) + old
        exits[source] = total
        old = exits[target]
        total = old - term
        if abs(old) >= term:
            compensations[target] += (old - total) - term
        else:
            compensations[target] += (-term - total) + old
        exits[target] = total

    def _show_tops(self, now: float, runs: list[tuple[int, int]]) -> None:
        """With sharing, the trace shows each machine's oldest running job (Batsim shows the
        first of its set of jobs), and an idle machine as waiting unless it is unavailable."""
        trace, shown, host_job, state = self._trace, self._shown, self._host_job, self._state
        assert trace is not None
        for a, b in runs:
            for host in range(a, b + 1):
                top = host_job[host]
                if top is shown[host] or (top is None and state[host] == UNAVAILABLE):
                    continue
                shown[host] = top
                if top is None:
                    trace.idle(now, [(host, host)])
                else:
                    trace.computing(now, top.job.id, [(host, host)])
