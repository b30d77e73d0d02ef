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
the machines still in s, added at the end. The sums are Neumaier-compensated, so long runs do
not drift.

Every job's start and end comes here, so the usual case costs little: without compute sharing,
while every machine is idle or computing (no switch, no unavailability), a job's machines all
go from idle to computing and back, so only the counts change at once (and the row is written);
each machine's state and clock and the sums are kept in a log of those moves and brought up to
date when something needs them (`_settle`: a switch, an availability change, the totals), with
the same arithmetic in the same order, so the figures are the same to the bit. The machines
that a job starts on hold no job, are available and are on (the simulation refuses others), so
they are idle; those of an ending job were computing it.
"""

from __future__ import annotations

from math import fsum
from typing import TYPE_CHECKING, Any, Final

from joulesim.protocol.interval_set import runs_size

if TYPE_CHECKING:
    from joulesim.simulator.output.schedule_trace import ScheduleTrace

MACHINE_STATES_COLUMNS = ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]

# States, in the column order of the output (unavailable is not a Batsim column).
SLEEPING: Final = 0  # (Final, each: a compiled module reads a constant, not its module's dict, at every job)
SWITCHING_ON: Final = 1
SWITCHING_OFF: Final = 2
IDLE: Final = 3
COMPUTING: Final = 4
UNAVAILABLE: Final = 5
CATEGORY_NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")

_ROW: Final = "%g,%d,%d,%d,%d,%d\n"  # the time as output_format.fmt_time prints it, then the counts
_PLAIN_COUNTS: Final = ",0,0,0,%d,%d\n"  # a row's counts when machines are only idle or computing
_LOG_LIMIT: Final = 4 << 14  # items of logged moves settled at once at most (4 per move; ~40 bytes a move)
_ENDED: Final = False  # the last item of a logged job end (that of a start is the job's record)
_FILLED: Final = [bytes([state]) for state in range(len(CATEGORY_NAMES))]  # x n: n machines in that state



def _neumaier(total: float, compensation: float, value: float) -> tuple[float, float]:
    """One step of a Neumaier sum (compensated_sum.py, without its object, for the hot paths
    below): (total + value, the compensation with this step's rounding error)."""
    new = total + value
    if abs(total) >= abs(value):
        return new, compensation + ((total - new) + value)
    return new, compensation + ((value - new) + total)

class MachineStates:
    def __init__(self, out: Any = None, host_job: list[Any] | None = None, sharing: bool = False,
                 trace: "ScheduleTrace | None" = None):
        """`out`: the file (its header is written now); `host_job`: the simulation's list of each
        machine's running job (its oldest with compute sharing) or None, kept up to date before
        each call here; `sharing`: several jobs may run on one machine; `trace`: the Pajé trace
        to tell, if any. (Made without arguments, it writes nothing: a checkpoint remakes it so,
        then sets its attributes; the build compiles this class, which runs its __init__ then.)"""
        if host_job is None:
            host_job = []
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
        self._nb_machines = nb_machines
        # Job moves not applied to _state, _since, the sums and the trace yet, four items each:
        # now, runs, number of machines, the job's record at a start or _ENDED at an end; only
        # while _plain (see the module docstring). The trace has been told the first _traced.
        self._plain = not sharing
        self._log: list[Any] = []
        self._traced = 0
        # While every machine is idle or computing, a row's counts depend on the number computing:
        # their text, by that number, made once.
        self._plain_rows: list[str | None] = [None] * (nb_machines + 1)
        if out is not None:
            self._write = out.write
            out.write(",".join(MACHINE_STATES_COLUMNS) + "\n")

    # ------------------------------------------------------------------ what happens
    def job_started(self, now: float, record: Any, runs: list[tuple[int, int]]) -> None:
        """Job `record` starts on the machines of `runs` (canonical intervals)."""
        if self._plain:  # its machines are idle (module docstring): the counts now, the rest logged
            n = runs_size(runs)
            counts = self.counts
            computing = counts[COMPUTING] + n
            counts[COMPUTING] = computing
            counts[IDLE] -= n
            self._log += (now, runs, n, record)  # (its length is checked at ends: each start has one)
            text = self._plain_rows[computing]  # self.write_row(now), the counts' text kept
            if text is None:
                text = self._plain_rows[computing] = _PLAIN_COUNTS % (counts[IDLE], computing)
            self._write("%g" % now + text)
            return
        state, since = self._state, self._since
        moved = 0
        for a, b in runs:
            n = b - a + 1
            if state.count(IDLE, a, b + 1) == n:  # all idle
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
        self._plain = self._is_plain()

    def job_ended(self, now: float, record: Any, runs: list[tuple[int, int]], kill_traced: bool = False) -> None:
        """Job `record` has left the machines of `runs`; `kill_traced`: the trace shows a kill."""
        trace = self._trace
        if trace is not None and kill_traced:
            self._trace_log()  # (the trace's lines of the logged moves come first)
            trace.killed(now, record.job.id, runs)
        if self._plain:  # its machines were computing it, and are idle now (as in job_started)
            n = runs_size(runs)
            counts = self.counts
            computing = counts[COMPUTING] - n
            counts[COMPUTING] = computing
            counts[IDLE] += n
            log = self._log
            log += (now, runs, n, _ENDED)
            if len(log) >= _LOG_LIMIT:
                self._settle()
            text = self._plain_rows[computing]
            if text is None:
                text = self._plain_rows[computing] = _PLAIN_COUNTS % (counts[IDLE], computing)
            self._write("%g" % now + text)
            return
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
        self._plain = self._is_plain()

    def set_state(self, now: float, hosts: list[int], category: int) -> None:
        """These machines enter state `category` now (Batsim's Machine::update_machine_state)."""
        self._settle()
        for host in hosts:
            self._set(now, host, category)
        self._plain = self._is_plain()

    def set_availability(self, now: float, host: int, available: bool) -> None:
        """A machine becomes unavailable, or available again: then computing if a job still
        runs on it, else idle (as Batsim does, whatever its pstate)."""
        self._settle()
        if not available:
            self._set(now, host, UNAVAILABLE)
        else:
            self._set(now, host, COMPUTING if self._host_job[host] is not None else IDLE)
        self._plain = self._is_plain()

    def write_row(self, now: float) -> None:
        """A row of the counts now (Batsim's MachineStateTracer::write_machine_states)."""
        counts = self.counts
        self._out.write(_ROW % (now, counts[SLEEPING], counts[SWITCHING_ON], counts[SWITCHING_OFF],
                                counts[IDLE], counts[COMPUTING]))

    def close(self, now: float) -> None:
        """The end of the run (Batsim writes no row then)."""
        if self._trace is not None:
            self._trace_log()
            self._trace.close(now)

    # ------------------------------------------------------------------ totals
    def time_in(self, category: int) -> float:
        """Machine-seconds in `category`, as Batsim counts them (up to each machine's last change)."""
        self._settle()
        since, state = self._since, self._state  # (by index: mypyc cannot zip over a bytearray)
        still_there = [since[i] for i in range(len(since)) if state[i] == category]
        return fsum([self._exits[category], self._compensations[category], *still_there])

    # ------------------------------------------------------------------ bookkeeping
    def _trace_log(self) -> None:
        """The Pajé trace's lines of the moves logged since it was last told."""
        if self._trace is not None and self._traced < len(self._log):
            self._trace.jobs_moved(self._log, self._traced)
            self._traced = len(self._log)

    def _is_plain(self) -> bool:
        """Whether job moves may be logged: no sharing, every machine idle or computing."""
        counts = self.counts
        return not self._sharing and counts[IDLE] + counts[COMPUTING] == self._nb_machines

    def _settle(self) -> None:
        """Apply the logged moves (each a job's machines, from idle to computing or back): the
        sums, in the order of the moves, as _moved adds them; then each machine's state and
        clock, those of its last move (found from the end of the log: usually a few moves
        settle every machine)."""
        log = self._log
        if not log:
            return
        self._trace_log()
        self._log = []
        self._traced = 0
        times, all_runs, sizes, jobs = log[0::4], log[1::4], log[2::4], log[3::4]
        exits, compensations = self._exits, self._compensations
        idle_exits, idle_compensation = exits[IDLE], compensations[IDLE]
        computing_exits, computing_compensation = exits[COMPUTING], compensations[COMPUTING]
        # A start adds +t to idle's exits and -t to computing's (t = n x now), an end the
        # reverse. While idle and computing machines only trade places, computing's sums stay
        # idle's negated: IEEE rounding is symmetric (fl(-x - y) = -fl(x + y)), so the same steps
        # give the same numbers negated (zeros aside, whose sign changes no later sum nor fsum).
        # Then only idle's are computed.
        if computing_exits == -idle_exits and computing_compensation == -idle_compensation:
            for now, n, job in zip(times, sizes, jobs):
                if not n:
                    continue  # (a job on no machine moves nothing)
                term = n * now
                idle_exits, idle_compensation = _neumaier(idle_exits, idle_compensation,
                                                          term if job is not _ENDED else -term)
            computing_exits, computing_compensation = -idle_exits, -idle_compensation
        else:
            for now, n, job in zip(times, sizes, jobs):
                if not n:
                    continue
                term = n * now if job is not _ENDED else -(n * now)  # idle -> computing, or back
                idle_exits, idle_compensation = _neumaier(idle_exits, idle_compensation, term)
                computing_exits, computing_compensation = _neumaier(computing_exits, computing_compensation, -term)
        exits[IDLE], compensations[IDLE] = idle_exits, idle_compensation
        exits[COMPUTING], compensations[COMPUTING] = computing_exits, computing_compensation
        state, since = self._state, self._since
        settled = bytearray(len(state))  # 1: the machine's last move is found
        left = len(state)
        for k in range(len(times) - 1, -1, -1):  # (by index: mypyc cannot zip reversed lists)
            now, runs, job = times[k], all_runs[k], jobs[k]
            target = COMPUTING if job is not _ENDED else IDLE
            for a, b in runs:
                end = b + 1
                unsettled = settled.count(0, a, end)
                if not unsettled:
                    continue
                if unsettled == end - a:
                    settled[a:end] = _FILLED[1] * unsettled
                    state[a:end] = _FILLED[target] * unsettled
                    since[a:end] = [now] * unsettled
                else:
                    for host in range(a, end):
                        if not settled[host]:
                            settled[host] = 1
                            state[host] = target
                            since[host] = now
                left -= unsettled
            if not left:
                break

    def _set(self, now: float, host: int, target: int) -> None:
        """One machine enters `target` now (its state and clock; the counts and sums if it moves)."""
        source = self._state[host]
        if source != target:
            self._state[host] = target
            self._moved(now, source, target, 1)
        self._since[host] = now

    def _moved(self, now: float, source: int, target: int, n: int) -> None:
        """n machines went from `source` to `target` now: the counts, and +n x now on the exits
        of `source`, -n x now on those of `target` (Neumaier sums)."""
        counts, exits, compensations = self.counts, self._exits, self._compensations
        counts[source] -= n
        counts[target] += n
        term = n * now
        exits[source], compensations[source] = _neumaier(exits[source], compensations[source], term)
        exits[target], compensations[target] = _neumaier(exits[target], compensations[target], -term)

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
