"""`PREFIX_schedule.trace`: the schedule as a Pajé trace, in Batsim 4.2.1's layout (its
PajeTracer, written unless --disable-schedule-tracing). Pajé viewers (pajeng, ViTE) show each
machine's state over time: waiting (idle, switching or asleep alike), or the job it computes.

What the file holds, as Batsim writes it:
- the header: the Pajé event definitions, the container types (machines, scheduler, killer),
  the kill event types and an (unused) utilization variable type;
- at t=0 a container per machine (compute machines, then storage ones; id `m<N>`, named after
  its host), and every machine in state `w` (waiting);
- a state value `j<job id>` per job, defined the first time one of its machines computes it,
  with a colour from 64 hues;
- `6 <time> machine_state m<N> j<job id>` when a machine starts computing a job, and
  `... m<N> w` when it is left idle (not when it is unavailable);
- for a job killed at its walltime, or by KILL_JOB while a parallel task runs (Batsim cancels
  it; a delay or other task is ended without an event), a kill event on the killer and on each
  of its machines, before the machines go idle;
- at the end, the destruction of every container.

Times are printed with `%f`. Batsim shuffles the 64 colours with a random device, so two Batsim
runs differ in their colours; joulesim shuffles them with a fixed seed, so that its runs are
byte-identical.

Lines are built by joining precomputed machine names (a job on many machines costs one join,
not one formatting per machine), kept, and written a block of about 1,000 events at a time; the
usual jobs' starts and ends come as MachineStates logs them (jobs_moved), in one loop. So a run
that stops on an error may leave the trace's last block unwritten (Batsim's own trace is
buffered too).
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any, Final, Sequence

if TYPE_CHECKING:
    from joulesim.simulator.output.disk_reserve import DiskReserve

# Pajé event numbers (Batsim's order) and definitions. Each field is written as Batsim's header
# writes it, trailing spaces included (Pajé readers ignore them; they keep the bytes identical).
_EVENT_DEFINITIONS = (
    ("PajeDefineContainerType", ("Type string", "Alias string", "Name string")),
    ("PajeCreateContainer", ("Time date ", "Type string  ", "Alias string ", "Name string   ", "Container string  ")),
    ("PajeDestroyContainer", ("Time date", "Name string ", "Type string")),
    ("PajeDefineStateType", ("Alias string ", "Type string ", "Name string ")),
    ("PajeDefineEntityValue", ("Alias string  ", "Type string  ", "Name string  ", "Color color ")),
    ("PajeSetState", ("Time date  ", "Type string  ", "Container string  ", "Value string  ")),
    ("PajeDefineEventType", ("Type string", "Alias string", "Name string")),
    ("PajeNewEvent", ("Time date", "Type string", "Container string", "Value string")),
    ("PajeDefineVariableType", ("Type string", "Alias string", "Name string", "Color string")),
    ("PajeSetVariable", ("Time date", "Type string", "Container string", "Value double")),
)
_END_WITH_SPACE = "PajeSetState"  # Batsim's header closes this one definition with "%EndEventDef "
(DEFINE_CONTAINER_TYPE, CREATE_CONTAINER, DESTROY_CONTAINER, DEFINE_STATE_TYPE, DEFINE_ENTITY_VALUE,
 SET_STATE, DEFINE_EVENT_TYPE, NEW_EVENT, DEFINE_VARIABLE_TYPE, SET_VARIABLE) = range(1, 11)

# A SetState line: _SET_STATE_HEAD, the time, _SET_STATE_MACHINE, the machine, " ", the value.
_SET_STATE_HEAD: Final = f"{SET_STATE} "
_SET_STATE_MACHINE: Final = " machine_state "
_WAITING: Final = " w\n"  # the end of a SetState line to "waiting"
_DEFINE_ENTITY_VALUE = str(DEFINE_ENTITY_VALUE)
_BLOCK_PARTS: Final = 5000  # pieces of text held before they are written (5 per event: about 1,000 events)

NB_COLORS = 64
COLOR_SHUFFLE_SEED = 0  # joulesim's fixed replacement for Batsim's random device

# Parallel-task profile types: a KILL_JOB cancels their task, and Batsim traces that kill.
_PARALLEL_TASK_TYPES: Final = frozenset({"parallel", "parallel_homogeneous", "parallel_homogeneous_total",
                                  "parallel_homogeneous_pfs", "data_staging"})


def _header() -> str:
    parts = []
    for number, (name, fields) in enumerate(_EVENT_DEFINITIONS, start=1):
        end = "%EndEventDef " if name == _END_WITH_SPACE else "%EndEventDef"
        parts.append("\n".join([f"%EventDef {name} {number}", *(f"% {field}" for field in fields), end]) + "\n\n")
    return "".join(parts)


def _rgb_of_hue(hue: float) -> tuple[float, float, float]:
    """A fully saturated, full-value colour of `hue` degrees, as Batsim converts HSV to RGB."""
    sixths = hue / 60
    sector = math.floor(sixths)
    fraction = sixths - sector
    rising, falling = fraction, 1 - fraction
    return ((1.0, rising, 0.0), (falling, 1.0, 0.0), (0.0, 1.0, rising),
            (0.0, falling, 1.0), (rising, 0.0, 1.0), (1.0, 0.0, falling))[min(sector, 5)]


def job_colors() -> list[str]:
    """The colours given to jobs in turn: 64 evenly spaced hues, shuffled (with a fixed seed)."""
    colors = ['"%f %f %f"' % _rgb_of_hue(i * 360.0 / NB_COLORS) for i in range(NB_COLORS)]
    random.Random(COLOR_SHUFFLE_SEED).shuffle(colors)
    return colors


def kill_is_traced(progress: dict[str, Any], profiles: dict[str, dict[str, Any]]) -> bool:
    """Whether Batsim traces a KILL_JOB of a job whose `job_progress` entry is `progress`: only
    when the task it was running is a parallel task (the innermost of a composed profile's)."""
    while "current_task" in progress:
        progress = progress["current_task"]
    profile = profiles.get(progress.get("profile_name", ""))
    return profile is not None and profile.get("type") in _PARALLEL_TASK_TYPES


class ScheduleTrace:
    def __init__(self, out: Any = None, machine_names: Sequence[str] = (), reserve: "DiskReserve | None" = None):
        """`out`: the file (its header and the machines' first states are written now);
        `machine_names`: the host names of the machines, by machine id (compute machines, then
        storage ones); `reserve`: told what is written (the trace can outgrow a disk). (Made
        without arguments, it writes nothing: a checkpoint remakes it so, then sets its
        attributes; the build compiles this class, which runs its __init__ then.)"""
        self._out = out
        self._reserve = reserve
        self._ids = [f"m{i}" for i in range(len(machine_names))]
        self._colors = job_colors()
        self._defined_jobs: set[str] = set()
        self._parts: list[str] = []  # text not written yet (written in blocks: see flush)
        if out is None:
            return
        start = "%f" % 0.0
        containers = "".join(f'{CREATE_CONTAINER} {start} machine_ct {machine} "{name}" root\n'
                             for machine, name in zip(self._ids, machine_names))
        out.write(
            _header()
            + "# Container types creation\n"
            + f'{DEFINE_CONTAINER_TYPE} 0 root_ct "Machines"\n'
            + f'{DEFINE_CONTAINER_TYPE} root_ct machine_ct "Machine"\n'
            + f'{DEFINE_CONTAINER_TYPE} 0 scheduler_ct "Scheduler"\n'
            + f'{DEFINE_CONTAINER_TYPE} scheduler_ct killer_ct "Killer"\n\n'
            + "# Event types creation\n"
            + f'{DEFINE_EVENT_TYPE} killer_ct kk "Job kill"\n'
            + f'{DEFINE_EVENT_TYPE} machine_ct km "Job kill"\n\n'
            + "# Variable types creation\n"
            + f'{DEFINE_VARIABLE_TYPE} scheduler_ct vu_vt "Utilization" "0.0 0.5 0.0"\n\n'
            + "# Containers creation\n"
            + f'{CREATE_CONTAINER} {start} root_ct root "Machines" 0\n'
            + containers
            + f'{CREATE_CONTAINER} {start} scheduler_ct sc "Scheduler" 0\n'
            + f'{CREATE_CONTAINER} {start} killer_ct k "Killer" sc\n\n'
            + "# States creation\n"
            + f'{DEFINE_STATE_TYPE} machine_state machine_ct "Machine state"\n\n'
            + "# Creation of the different values the machine state can be\n"
            + f'{DEFINE_ENTITY_VALUE} w machine_state "Waiting" "0.0 0.0 0.0"\n'
            + f'{DEFINE_ENTITY_VALUE} l machine_state "Launching" "0.3 0.3 0.3"\n\n'
            + "# Begin of events\n"
        )
        if self._ids:
            self._show(0.0, self._ids, _WAITING)
            self.flush()

    def computing(self, now: float, job_id: str, runs: list[tuple[int, int]]) -> None:
        """The machines of `runs` (ascending) now show job `job_id`."""
        if job_id not in self._defined_jobs:
            self._define(job_id)
        self._show(now, self._machines(runs), f" j{job_id}\n")

    def idle(self, now: float, runs: list[tuple[int, int]]) -> None:
        """The machines of `runs` (ascending) are left waiting."""
        self._show(now, self._machines(runs), _WAITING)

    def _define(self, job_id: str) -> None:
        """The state value of job `job_id`, with the next colour."""
        self._defined_jobs.add(job_id)
        color = self._colors[(len(self._defined_jobs) - 1) % NB_COLORS]
        self._parts.append(f'{_DEFINE_ENTITY_VALUE} j{job_id} machine_state "{job_id}" {color}\n')

    def _show(self, now: float, machines: list[str], tail: str) -> None:
        """A SetState line per machine, each ending with `tail` (" <value>\n")."""
        time = "%f" % now
        parts = self._parts
        parts += (_SET_STATE_HEAD, time, _SET_STATE_MACHINE,
                  f"{tail}{_SET_STATE_HEAD}{time}{_SET_STATE_MACHINE}".join(machines), tail)
        if len(parts) > _BLOCK_PARTS:
            self.flush()

    def jobs_moved(self, log: list[Any], start: int) -> None:
        """Jobs' starts and ends as MachineStates logs them, from item `start` on, four items
        each: now, runs, number of machines, then the job's record at a start (its machines show
        it) or False at an end (they are left waiting). The lines of computing and idle, made
        here in one loop: every job's start and end comes this way in the usual runs."""
        ids, parts, defined = self._ids, self._parts, self._defined_jobs
        for now, runs, record in zip(log[start::4], log[start + 1::4], log[start + 3::4]):
            if len(runs) == 1:
                a, b = runs[0]
                machines = ids[a:b + 1]
            elif runs:
                machines = self._machines(runs)
            elif record is False:
                continue  # (an end on no machine: no line)
            else:
                machines = []
            if record is False:
                tail = _WAITING
            else:
                job_id = record.job.id
                if job_id not in defined:
                    self._define(job_id)
                tail = f" j{job_id}\n"
            time = "%f" % now  # then as _show does
            parts += (_SET_STATE_HEAD, time, _SET_STATE_MACHINE,
                      f"{tail}{_SET_STATE_HEAD}{time}{_SET_STATE_MACHINE}".join(machines), tail)
            if len(parts) > _BLOCK_PARTS:
                self.flush()

    def _machines(self, runs: list[tuple[int, int]]) -> list[str]:
        ids = self._ids
        if len(runs) == 1:
            a, b = runs[0]
            return ids[a:b + 1]
        machines: list[str] = []
        for a, b in runs:
            machines += ids[a:b + 1]
        return machines

    def killed(self, now: float, job_id: str, runs: list[tuple[int, int]]) -> None:
        """Job `job_id` was killed on the machines of `runs` (ascending)."""
        machines = self._machines(runs)
        time = "%f" % now
        head = f"{NEW_EVENT} {time} km "
        tail = f' "{job_id}"\n'
        self._parts.append(f'{NEW_EVENT} {time} kk k "{job_id}"\n' + head + (tail + head).join(machines) + tail)

    def flush(self) -> None:
        """Write the text held so far (lines are kept and written a block at a time: one write
        per few thousand lines instead of one per event)."""
        if self._parts:
            text = "".join(self._parts)
            self._out.write(text)
            self._parts.clear()
            if self._reserve is not None:
                self._reserve.wrote(len(text))  # (ASCII: a character is a byte)

    def close(self, now: float) -> None:
        """The end of the simulation: every container is destroyed."""
        time = "%f" % now
        lines = [f"{DESTROY_CONTAINER} {time} {machine} machine_ct\n" for machine in self._ids]
        self._parts += ("\n# End of events, containers destruction\n", *lines,
                        f"{DESTROY_CONTAINER} {time} root root_ct\n")
        self.flush()
