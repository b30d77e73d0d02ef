"""Running jobs' activities over a network: progress, rate re-solves, completions.

Used when the platform describes a network. Each running job is driven by a *job model*
(job_activity.JobModel, chosen from its profile type by job_models.job_model_for) which starts
*activities* on the job's `ActivityContext`: SimGrid parallel tasks. An activity on hosts
E = (E[0], E[1], ...):

- uses flops on the CPU of each executor (one CPU element per executor, even for two on one
  host: SimGrid creates them apart, each counts as one user of the CPU), and bytes on every
  resource of the route of each flow (several flows of one activity on a link add up);
- first pays its latency once (the longest route latency among its flows), during which it
  uses nothing;
- then progresses as one cursor from 0 to 1 at the rate `ptask_sharing` gives it: SimGrid's
  fair-bottleneck rule, under which the activities on a saturated resource get equal shares of
  it in flop/s or bytes/s.

Rates are re-solved whenever an activity joins or leaves the sharing; activities started by
the callbacks of one instant join in one re-solve. The runner keeps its own calendar, as a
SimGrid model does: the next completion (from the last re-solve) and the instants latencies end
at. The simulation's event loop asks it for its next event (`next_event`) and has it handle
every event due at a time (`process`): with Batsim's actors the SimGrid-like kernel counts it
among its actions when it chooses its next step, instead of an actor per timer; there the runner
is *stepped* as ptask_L07's full update steps its actions (every cursor moves by its rate x each
of the kernel's steps, an activity ends when less than 1e-14 of it is left), and Batsim's
messages whose links its activities use join its sharing (`join_transfer`). A host's load, for
energy, is its flops x rate / its speed (the cursor's CPU share); a job's dynamic power is the
sum over its running activities. The cursors, rates and elements live in an ActivityTable
(arrays, stepped by compiled code when numba is there); the objects here keep what the job
models hold: handles, callbacks, and the CPU shares for energy. A compiled model (the SMPI
replay's kernel) launches its activities in batches instead (`_RunningJob.launch`): built from
route plans in arrays by compiled code, with no object, known by their slot, job and token;
their completions go back to the model as tokens.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from joulesim.simulator.models import activity_table_kernel as kernel
from joulesim.simulator.models import latency_heap_kernel, ptask_sharing
from joulesim.simulator.models.activity_table import ActivityTable
from joulesim.simulator.models.job_activity import BatchedCompletion
from joulesim.simulator.models.job_models import job_model_for
from joulesim.simulator.models.route_plans import RoutePlans
from joulesim.simulator.platform.simgrid_config_keys import TCP_GAMMA

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import JobModel
    from joulesim.simulator.platform.network_topology import NetworkTopology
    from joulesim.simulator.workload.job_record import JobRecord

# Launch commands that are transfers (activity_table_kernel's kinds).
_TRANSFERS = (kernel.TRANSFER, kernel.TRANSFER_TOO)
# Activities predicted to end within this of a completion event end with it (absorbs float
# noise in the progress of activities whose rate changed many times).
_DONE_S = 1e-9
# SimGrid's precisions: a cursor left below maxmin/precision x surf/precision is 0 (Action::
# update_remains); a latency left below surf/precision is over (L07Action::update_latency).
_REMAINS_PRECISION = 1e-5 * 1e-9
_LATENCY_PRECISION = 1e-9
# Sharing keys of joined transfers: above every job's tasks' ((job sequence << 32) | launch).
_TRANSFER_KEYS = 1 << 62


def _window_period(window: float) -> float:
    """The seconds a task takes at ptask_L07's TCP-window bound, TCP-gamma / (2 x the largest
    latency x bytes of its flows) (L07Action::calculate_network_bound), as SimGrid divides its
    remains (1) by that rate; 0 (no bound) without latency."""
    return 1.0 / (TCP_GAMMA / (2.0 * window)) if window > 0 else 0.0


def _flow_own_period(shared: tuple[int, ...], fat: tuple[float, ...], latency: float, amount: float) -> float:
    """A lone flow's bound from outside the shared resources: each FATPIPE link it crosses (no
    sharing there: the whole link), and ptask_L07's TCP window once it crosses any link (on no
    link at all SimGrid has nothing to move: the latency only)."""
    own_period = 0.0
    for capacity in fat:
        own_period = max(own_period, amount / capacity)
    if shared or fat:
        own_period = max(own_period, _window_period(latency * amount))
    return own_period


class _Activity:
    """One parallel task of a job (ActivityHandle); its cursor and rate live in the runner's
    ActivityTable, at `slot` while it runs."""

    __slots__ = ("table", "slot", "latency", "cpu_hosts", "cpu_flops", "sharing", "then", "over", "job", "left")

    def __init__(self, table: ActivityTable, slot: int, then: Callable[[], None]):
        self.table = table
        self.slot = slot  # -1 once over (the slot may serve another activity then)
        self.latency = 0.0
        self.cpu_hosts: list[int] = []
        self.cpu_flops: list[float] = []
        self.sharing = False  # past its latency, progressing
        self.then = then
        self.over = False  # completed, cancelled, or its job was killed
        self.job: "_RunningJob | None" = None
        self.left = 1.0  # the cursor left when it ended

    def progress(self) -> float:
        left = self.left if self.slot < 0 else float(self.table.remaining[self.slot])
        return min(1.0, max(0.0, 1.0 - left))

    def cancel(self) -> None:
        """Stop it now (an MPI request cancelled): it stops using its resources; `then` is not called."""
        self.job.cancel(self)


class _RunningJob:
    """A running job's ActivityContext: its model, its hosts and its running activities."""

    __slots__ = ("runner", "record", "hosts", "model", "activities", "sequence")

    def __init__(self, runner: "ParallelTaskRunner", record: "JobRecord", hosts: list[int], sequence: int):
        self.runner = runner
        self.record = record
        self.sequence = sequence  # start order among the jobs (the sharing order's first key)
        self.hosts = hosts
        self.model: "JobModel | None" = None
        self.activities: list[_Activity] = []  # started, not over (in start order)

    def now(self) -> float:
        return self.runner._now()

    def execute(self, cpu: Sequence[tuple[int, float]], flows: Sequence[tuple[int, int, float]],
                then: Callable[[], None]) -> _Activity:
        activity = self.runner._build_activity(cpu, flows, then)
        self._launch(activity)
        return activity

    def sleep(self, seconds: float, then: Callable[[], None]) -> _Activity:
        activity = self.runner._new_activity((), (), float(seconds), then)
        self._launch(activity)
        return activity

    def finish(self) -> None:
        runner = self.runner
        if runner.jobs.get(self.record) is self:
            del runner.jobs[self.record]
            runner._leave_hosts(self)
            runner._forget_if_idle(self)
            runner._job_done(self.record)

    def cancel(self, activity: _Activity) -> None:
        if activity.over:
            return
        runner = self.runner
        runner._advance()
        self.activities.remove(activity)
        was_sharing = activity.sharing
        runner._end(activity)
        if was_sharing:
            if runner._dynamic_power_changed is not None:
                runner._report_power(self)
            runner._resolve()

    def launch(self, commands: np.ndarray, amounts: np.ndarray, first: int, stop: int, by_token: np.ndarray) -> int:
        """Start the activities of commands[first:stop] (ActivityContext.launch, job_activity.py);
        the index of the first command that is not one (or stop)."""
        runner = self.runner
        return runner._launch_commands(self, commands, amounts, first, stop, by_token)

    def cancel_launched(self, slot: int, key: int) -> None:
        """cancel() of a launched activity, by the (slot, key) its launch recorded."""
        runner = self.runner
        table = runner.table
        if not table.held[slot] or table.key[slot] != key:
            return  # over already
        runner._advance()
        was_sharing = bool(table.sharing[slot])
        if was_sharing:
            table.leave(slot)
        table.release(slot)
        if was_sharing:
            if runner._dynamic_power_changed is not None:
                runner._report_power(self)
            runner._resolve()

    def _launch(self, activity: _Activity) -> None:
        runner = self.runner
        activity.job = self
        now = runner._now()
        self.activities.append(activity)
        runner._launches += 1
        runner.table.key[activity.slot] = (self.sequence << 32) | runner._launches
        if activity.latency > 0:
            runner._latency_timer(now + activity.latency, activity, activity.latency)
        else:
            runner._advance()  # the others' cursors to now, before the rates change
            runner._join(activity)
            runner._dirty = True


class ParallelTaskRunner:
    def __init__(self, network: "NetworkTopology", nb_hosts: int, host_speed: list[float], host_cores: list[int],
                 now: Callable[[], float],
                 job_done: Callable[["JobRecord"], None],
                 dynamic_power_changed: Callable[["JobRecord", float], None] | None,
                 wattages: Callable[[int], tuple[float, float, float]] | None,
                 traces_of: Callable[["JobRecord"], Any] | None = None):
        self.network = network
        self.nb_hosts = nb_hosts
        self.host_speed = host_speed  # the simulation's list: current speeds (of one core)
        self.host_cores = host_cores
        self._multicore = any(cores > 1 for cores in host_cores)
        self._now = now
        self._job_done = job_done  # called when a job's model finishes it
        self._dynamic_power_changed = dynamic_power_changed  # None without energy
        self._wattages = wattages  # host -> (idle, epsilon, max) W at its current pstate
        self.jobs: dict["JobRecord", _RunningJob] = {}  # by record (its identity: a checkpoint keeps the key)
        self._traces_of = traces_of  # the parsed traces of a trace profile's job
        self.table = ActivityTable()
        self._speeds_seen: list[float] | None = None  # the host speeds `_capacity` was built from
        self._capacity = np.empty(0)  # per resource: CPUs (cores x speed), then links
        self._owner: dict[int, _Activity] = {}  # slot -> its activity (not for launched ones)
        self.plans = RoutePlans(network, nb_hosts)
        # For SimGrid's host energy plugin (with Batsim's actors and -E): how many running jobs
        # hold each host, the CPUs' usage now (cached per change of the sharing), and a hook
        # told the CPU hosts of the tasks that end, in order, with the usage that still counts
        # them (the plugin updates a host's joules when an action on it ends).
        self.host_jobs = np.zeros(nb_hosts, dtype=np.int64)
        self._usage: tuple[int, np.ndarray] = (-1, np.zeros(nb_hosts))
        self.on_cpu_end: Callable[[list[int], np.ndarray], None] | None = None
        self.on_instant: Callable[[], None] | None = None  # told when the clock is at a new instant
        self._by_sequence: dict[int, _RunningJob] = {}  # jobs that launched activities in batches
        # launch scratch: (slot, key) past their latency's start, and their ends
        self._latent = np.zeros((0, 2), dtype=np.int64)
        self._latent_when = np.zeros(0)
        # launched activities paying their latency: (slot, key) by the time it ends
        self._heap_when = np.zeros(0)
        self._heap_entries = np.zeros((0, 2), dtype=np.int64)
        self._heap_size = 0
        # the compiled instants' counters, scratch, and where they stopped (smpi_instants_kernel.py)
        self._ints = np.zeros(10, dtype=np.int64)
        self._floats = np.zeros(2)
        self._done = np.zeros(0, dtype=np.int64)
        self._tokens = np.zeros(0, dtype=np.int64)
        self._speed_array = np.zeros(0)  # host_speed as an array, for launches on multicore hosts
        self.resolves = 0  # re-solves so far (benchmarks count them)
        # Set by a kernel that steps the runner as SimGrid's full update steps ptask_L07's
        # actions (Batsim's actors): every cursor moves at each of the kernel's steps, by its
        # rate x the step, and ends when it falls below maxmin x surf precision. Then `_stepping`
        # says whether it does now: a compiled SMPI replay running alone keeps its own instants
        # (closed-form ends, many per call: its speed), see `stepping`.
        self.stepped = False
        self._stepping = False
        self._compiled_steps = self.table.compiled()
        self._joined_transfers = 0  # Batsim's messages in the sharing now (join_transfer)
        self._transfers = 0  # Batsim's messages that joined the sharing (join_transfer)
        self._abandoned: dict[_RunningJob, _RunningJob] = {}  # jobs past their walltime whose tasks run on (abandon)
        self._ended = 0  # activities that `move` brought to their end
        self._next_step = (-1, -1.0)  # (table version, the next step's length) as the last move left them
        self._in_use = (-1, np.zeros(0, dtype=bool))  # (table version, resources the sharing uses)
        self._transfer_plans: dict[tuple[tuple[int, ...], float], tuple[dict[int, float], float]] = {}
        self._jobs_started = 0
        self._launches = 0
        self._dirty = False  # an activity joined the sharing since the last re-solve
        self._advanced_to = -1.0  # the time every sharing cursor was last moved to
        # The runner's calendar: the earliest predicted end (set by each re-solve), and the
        # instants the latencies of the runner's objects end at (a heap), each with its objects
        # (launched activities wait in the latency heap of arrays: latency_heap_kernel.py).
        self._next_completion = math.inf
        self._latency_ends: list[float] = []
        self._latency_groups: dict[float, list[_Activity]] = {}
        # Stepped, each group's latency left, decremented at every step as L07Action's (a
        # latency left below surf/precision is over), rather than its end's time.
        self._latency_left: dict[float, float] = {}
        # Told after the calendar may have changed (start, kill, process): an event loop that
        # needs a wake-up entry (the simpy calendar) sets it; Batsim's kernel asks instead.
        self.calendar_changed: Callable[[], None] | None = None

    # ------------------------------------------------------------------ jobs
    def start(self, record: "JobRecord", executors: list[int], storages: dict[str, int] | None = None) -> None:
        """Start a job on its executors' hosts; `storages` maps its profile's storage labels
        to host ids (storage hosts come after the compute hosts)."""
        self._jobs_started += 1
        job = _RunningJob(self, record, executors, self._jobs_started)
        self.jobs[record] = job
        self.host_jobs[np.unique(np.asarray(executors, dtype=np.int64))] += 1
        job.model = job_model_for(record, storages or {}, self._traces_of, self.host_cores)
        job.model.start(job)
        self._resolve_if_dirty()
        self._tell_calendar()

    def kill(self, record: "JobRecord") -> dict[str, Any]:
        """Stop the job now; its Batsim `job_progress` entry."""
        self._advance()
        job = self.jobs.pop(record)
        self._leave_hosts(job)
        progress = job.model.progress()
        was_sharing = self._drop_launched(job)
        for activity in job.activities:
            was_sharing |= activity.sharing
            self._end(activity)
        job.activities = []
        if was_sharing:
            self._resolve()
        self._tell_calendar()
        return progress

    def abandon(self, record: "JobRecord") -> None:
        """Batsim 4.2.1 at a parallel task's walltime: the job's actor stops waiting for it,
        reads the joules, reports to the server and ends, and only then does SimGrid cancel the
        task (ActorImpl::cleanup_from_self cancels the actor's activities): until `end_abandoned`
        it runs on, loading its CPUs and links (the report crosses them) and its hosts. The job's
        model stops (its callbacks call no one); a pure sleep ends now."""
        self._advance()
        job = self.jobs.pop(record)
        was_sharing = False
        table = self.table
        for activity in list(job.activities):
            if activity.slot >= 0 and table.elem_count[activity.slot] == 0:
                was_sharing |= activity.sharing
                job.activities.remove(activity)
                self._end(activity)
        self._abandoned[job] = job  # (its launched activities run on too; its hosts are left at its end)
        if was_sharing:
            self._resolve()
        self._tell_calendar()

    def end_abandoned(self, record: "JobRecord") -> None:
        """The abandoned job's actor has ended: its activities still running are cancelled
        (their hosts' joules brought up to date, as the energy plugin does on a state change)."""
        job = next((j for j in self._abandoned.values() if j.record is record), None)
        if job is None:
            return
        del self._abandoned[job]
        table = self.table
        sharing = [activity.slot for activity in job.activities if activity.sharing]
        if job.sequence in self._by_sequence:  # launched ones, in launch order
            held = np.flatnonzero(table.held & (table.batch_job == job.sequence))
            sharing += [slot for slot in held.tolist() if table.sharing[slot]]
        for slot in sharing:
            table.leave(slot)
        if sharing and self.on_cpu_end is not None:
            self._cpu_ends(np.asarray(sharing, dtype=np.int64))
        for activity in job.activities:
            self._end(activity, completed=True)  # (out of the sharing already)
        job.activities = []
        self._drop_launched(job)
        self._leave_hosts(job)
        if sharing:
            self._dirty = True
            self._resolve_if_dirty()
        self._tell_calendar()

    # ------------------------------------------------------------------ messages (Batsim's actors)
    def join_transfer(self, links: tuple[int, ...], latency: float) -> int:
        """A transfer of one byte over `links` (indices in the network description), past its
        latency, joins the sharing now: Batsim's messages between its actors are variables of
        ptask_L07's one linear system, beside the jobs' parallel tasks. Under the fair-bottleneck
        rule a message on a saturated link takes an equal share of it, so while it is there a
        task held back by that link slows down (on a cluster's backbone, a job's end message
        cuts a 16-host task to the backbone's half for 1.6 ns, which moves its end by 0.6 ns, as
        SimGrid does). Its progress is the kernel's (the slot is `external`); its rate is
        `transfer_rate`. The slot, or -1 when it crosses no shared link (its own bounds only)."""
        if self.table.size == 0:
            return -1
        plan = self._transfer_plans.get((links, latency))
        if plan is None:
            plan = self._transfer_plans[(links, latency)] = self._transfer_plan(links, latency)
        usage, own_period = plan
        if not usage or not self._shares_a_resource(usage):  # (alone on its links: its own rate, no re-solve)
            return -1
        if not self._stepping:  # (a compiled replay's instants do not know of messages)
            self._joined_transfers += 1
            self.stepping()
            self._joined_transfers -= 1
        table = self.table
        slot = table.add(list(usage), list(usage.values()), own_period)
        table.external[slot] = True
        self._transfers += 1
        table.key[slot] = _TRANSFER_KEYS | self._transfers  # (after every task: the newest variable)
        table.join(slot)
        self._joined_transfers += 1
        self._dirty = True
        return slot

    def _transfer_plan(self, links: tuple[int, ...], latency: float) -> tuple[dict[int, float], float]:
        """A 1-byte transfer's elements (resource -> bytes: a route crossing a link twice puts 2
        bytes on it) and its own period, as a lone flow's (`_flow_own_period`)."""
        shared, fat, latency, _ = self.plans.of_route(links, latency)
        usage: dict[int, float] = {}
        for key in shared:
            usage[key] = usage.get(key, 0.0) + 1.0
        return usage, _flow_own_period(shared, fat, latency, 1.0)

    def _shares_a_resource(self, resources: dict[int, float]) -> bool:
        """Whether a sharing activity has an element on one of `resources` (the resources in use
        are found once per change of the sharing)."""
        table = self.table
        version, in_use = self._in_use
        if version != table.version:
            _, _, offsets = table._elements_of(table.sharing_slots())
            in_use = np.zeros(self.nb_hosts + len(self.network.capacity), dtype=bool)
            in_use[table.resource[offsets]] = True
            self._in_use = (table.version, in_use)
        return any(in_use[resource] for resource in resources)

    def leave_transfer(self, slot: int) -> None:
        """The transfer at `slot` is over: it leaves the sharing (re-solved at the next step)."""
        self.table.leave(slot)
        self.table.release(slot)
        self._joined_transfers -= 1
        self._dirty = True

    def transfer_rate(self, slot: int) -> float:
        """The bytes per second the last re-solve gave the transfer at `slot`."""
        period = float(self.table.period[slot])
        return 1.0 / period if period > 0 else math.inf

    def refresh(self) -> None:
        """Re-solve now if the sharing changed since the last re-solve (a step's solve)."""
        self._resolve_if_dirty()

    def _leave_hosts(self, job: _RunningJob) -> None:
        self.host_jobs[np.unique(np.asarray(job.hosts, dtype=np.int64))] -= 1

    def cpu_usage(self) -> np.ndarray:
        """Each host's CPU usage now, in flops per second (ActivityTable.cpu_usage)."""
        version = self.table.version
        if self._usage[0] != version:
            self._usage = (version, self.table.cpu_usage(self.nb_hosts))
        return self._usage[1]

    # ------------------------------------------------------------------ the runner's calendar
    def next_event(self) -> float:
        """When the runner's next event is due (inf: none): a completion or a latency's end."""
        when = self._next_completion
        if self._latency_ends and self._latency_ends[0] < when:
            when = self._latency_ends[0]
        if self._heap_size and self._heap_when[0] < when:
            when = float(self._heap_when[0])
        return when

    # ------------------------------------------------------------------ stepped by a kernel
    def stepping(self) -> bool:
        """With `stepped`: whether the kernel steps the runner now (asked at each step). Not
        while a compiled SMPI replay runs alone, with no other activity and no message in the
        sharing: its instants run in compiled code, each end where its rate predicts it (the
        replay's own model of MPI is further from SimGrid's than a stepped cursor's last bits)."""
        if not self.stepped:
            return False
        wanted = len(self.jobs) != 1 or self._joined_transfers > 0 or self._compiled_job(stepped_too=True) is None
        if wanted != self._stepping:
            if wanted:  # the cursors to now at their periods, then moved at each step
                self._advance()
                now = self._now()
                for when in self._latency_left:
                    self._latency_left[when] = max(0.0, when - now)
                self._stepping = True
            else:  # the cursors are at now; ends predicted from them again
                self._stepping = False
                self._advanced_to = self._now()
                self._resolve()
        return wanted

    def next_step(self) -> float:
        """With `stepped`: the seconds until the runner's next event (the first activity to end
        at its rate, or a latency's end), -1 for none; the kernel takes the smallest of all its
        actions' as the length of its next step (Model::next_occurring_event_full)."""
        now = self._now()
        table = self.table
        if not table.size:
            best = -1.0
        elif self._next_step[0] == table.version:  # (the last move's, the sharing unchanged since)
            best = self._next_step[1]
        else:
            best = table.next_step()
        for left in self._latency_left.values():  # (L07's latencies: the smallest left)
            if best < 0 or left < best:
                best = left
        if self._heap_size:
            left = max(0.0, float(self._heap_when[0]) - now)
            if best < 0 or left < best:
                best = left
        return best

    def move(self, delta: float) -> bool:
        """With `stepped`: the clock has moved by `delta` (to now): every sharing cursor
        progresses by its rate x delta (HostL07Model::update_actions_state). Whether something
        is due now (then `step`): an activity whose cursor reached 0, a latency that ends
        (within SimGrid's surf/precision), a re-solve."""
        now = self._now()
        table = self.table
        if table.size:
            if self._compiled_steps:  # (the table's step, without its wrapper: called at every step)
                self._ended, best = kernel.step(table.order, table.size, table.remaining, table.period, table.external,
                                                delta, _REMAINS_PRECISION)
            else:
                self._ended, best = table.step(delta, _REMAINS_PRECISION)
            self._next_step = (table.version, best)
        else:
            self._ended = 0
        self._advanced_to = now  # (every cursor is at now)
        latency_over = False
        if self._latency_left:  # HostL07Model::update_actions_state on latencies
            lefts = self._latency_left
            for when, left in lefts.items():
                if left > delta:
                    left -= delta
                    if left < _LATENCY_PRECISION:
                        left = 0.0
                else:
                    left = 0.0
                lefts[when] = left
                latency_over = latency_over or left == 0.0
        if self._ended or self._dirty or latency_over:
            return True
        return bool(self._heap_size and self._heap_when[0] <= now + _LATENCY_PRECISION)

    def step(self) -> None:
        """With `stepped`, after `move` said something is due: the latencies that end, then the
        activities whose cursor reached 0, then one re-solve."""
        now = self._now()
        ended = self._ended
        due = now + _LATENCY_PRECISION  # (launched activities' latencies that end by then are over now)
        over = sorted(when for when, left in self._latency_left.items() if left == 0.0)
        if over:
            for when in over:
                del self._latency_left[when]
                self._latency_over_all(self._latency_groups.pop(when))
            self._latency_ends = list(self._latency_left)
            heapq.heapify(self._latency_ends)
        if self._heap_size and self._heap_when[0] <= due:
            table = self.table
            # (`due` as the cursors' time too: they are at now already, none moves)
            self._heap_size, table.size, joined, _ = latency_heap_kernel.join_due(
                self._heap_when, self._heap_entries, self._heap_size, table.order, table.size, table.key, table.held,
                table.sharing, table.remaining, table.period, due, due)
            if joined:
                self._dirty = True
        if ended:
            self._completions()  # (re-solves)
        else:
            self._resolve_if_dirty()
        self._tell_calendar()

    def process(self, start: float, horizon: float, limit: float, clock: Callable[[float], None],
                more: Callable[[], bool]) -> float:
        """Handle the runner's instants from `start` (its next event is due then); the time of
        the last one. At each, `clock(t)` moves the simulation's clock there; the latencies that
        end then (their activities join the sharing), then the completions, then one re-solve
        for all are handled, again while events are due at that time (a re-solve may predict an
        end at once). The next instant follows while it is within `horizon` of `start` (any for
        a negative horizon: the simulation has nothing else to do until then), before `limit`,
        and `more()` says nothing must be handled first (a job's end to report)."""
        now = start
        handled = False
        while True:
            when = self.next_event()
            if not handled or when > now:
                if handled and not more():
                    break
                if when == math.inf or (horizon >= 0 and when - start > horizon) or when >= limit:
                    break
                now = max(when, now)
                clock(now)
                if self.on_instant is not None:
                    self.on_instant()
            handled = True
            job = self._compiled_job()
            if job is None:
                self._instant(now)
                continue
            # the same steps in compiled code, instant after instant, until Python is needed
            at_bounds, now = self._compiled_instants(job, now, start, horizon, limit)
            clock(now)
            if at_bounds:
                break
            self._resume(job)
        self._tell_calendar()
        return now

    def _instant(self, now: float) -> None:
        """One step of the instant `now`: latencies that end, then completions or a re-solve."""
        ends = self._latency_ends
        while ends and ends[0] <= now:
            when = heapq.heappop(ends)
            del self._latency_left[when]
            self._latency_over_all(self._latency_groups.pop(when))
        if self._heap_size and self._heap_when[0] <= now:
            table = self.table
            self._heap_size, table.size, joined, self._advanced_to = latency_heap_kernel.join_due(
                self._heap_when, self._heap_entries, self._heap_size, table.order, table.size, table.key, table.held,
                table.sharing, table.remaining, table.period, now, self._advanced_to)
            if joined:
                self._dirty = True
        if self._next_completion <= now:
            self._completions()  # (re-solves)
        else:
            self._resolve_if_dirty()

    # ------------------------------------------------------------------ compiled instants
    def _compiled_job(self, stepped_too: bool = False) -> "_RunningJob | None":
        """The job whose instants run in smpi_instants_kernel, when that applies: the runner
        holds one job, run by the compiled SMPI replay, no activity of its own objects, and no
        energy to report (and the runner is not being stepped, unless `stepped_too`)."""
        if len(self.jobs) != 1 or self._owner or self._latency_ends or self._dynamic_power_changed is not None \
                or (self._stepping and not stepped_too):
            return None
        job = next(iter(self.jobs.values()))
        if not getattr(job.model, "compiled_instants", False) or not self.table.compiled():
            return None
        return job

    def _compiled_instants(self, job: _RunningJob, now: float, start: float, horizon: float,
                           limit: float) -> tuple[bool, float]:
        """smpi_instants_kernel.instants: (whether it stopped at the bounds, the clock)."""
        # (imported here: the replay's kernel is loaded only for runs with such a job)
        from joulesim.simulator.models import smpi_instants_kernel as instants_kernel

        table, plans = self.table, self.plans
        state, channels, by_token = job.model.replay_arrays()
        self._refresh_capacity()
        self._refresh_speeds()
        room = state[13].shape[0]  # commands of one call at most
        if self._latent.shape[0] < room:
            self._latent = np.zeros((room, 2), dtype=np.int64)
            self._latent_when = np.zeros(room)
        if self._done.shape[0] < table.remaining.shape[0]:
            self._done = np.zeros(table.remaining.shape[0], dtype=np.int64)
            self._tokens = np.zeros(table.remaining.shape[0], dtype=np.int64)
        k = instants_kernel
        ints, floats = self._ints, self._floats
        ints[[k.I_TOP, k.I_FREE_TOP, k.I_SIZE, k.I_LAUNCHES, k.I_HEAP, k.I_RESOLVES, k.I_LONGEST]] = (
            table.top, table.free_top, table.size, self._launches, self._heap_size, self.resolves, plans.longest)
        floats[[k.F_ADVANCED_TO, k.F_NEXT_COMPLETION]] = (self._advanced_to, self._next_completion)
        stopped, now = instants_kernel.instants(
            now, start, horizon, limit, ints, floats, table.remaining, table.period, table.end, table.own, table.key,
            table.elem_start, table.elem_count, table.held, table.sharing, table.batch_job, table.token,
            table.changed, table.resource, table.amount, table.free, table.order, plans.ids, plans.integers,
            plans.latency, plans.resources, plans.fat, self._speed_array, self._multicore, self.nb_hosts,
            self._capacity, self._heap_when, self._heap_entries, job.sequence, state, channels, by_token,
            self._tokens, self._done, self._latent, self._latent_when, ptask_sharing.REMAINING_PRECISION,
            ptask_sharing.BOUND_TOLERANCE, ptask_sharing.MAX_ROUNDS, _DONE_S)
        table.top, table.free_top, table.size = int(ints[k.I_TOP]), int(ints[k.I_FREE_TOP]), int(ints[k.I_SIZE])
        self._launches, self._heap_size = int(ints[k.I_LAUNCHES]), int(ints[k.I_HEAP])
        self.resolves = int(ints[k.I_RESOLVES])
        self._advanced_to, self._next_completion = float(floats[k.F_ADVANCED_TO]), float(floats[k.F_NEXT_COMPLETION])
        return stopped == instants_kernel.BOUNDS, float(now)

    def _resume(self, job: _RunningJob) -> None:
        """The rest of the instant's completions where the compiled instants stopped: the
        replay goes on from the command they did not carry out, then the re-solve."""
        from joulesim.simulator.models.smpi_instants_kernel import I_COMMAND, I_STATUS, I_TOKENS

        ints = self._ints
        tokens = self._tokens[:ints[I_TOKENS]].copy()
        job.model.go_on(tokens, int(ints[I_STATUS]), int(ints[I_COMMAND]))
        self._resolve()

    def _tell_calendar(self) -> None:
        if self.calendar_changed is not None:
            self.calendar_changed()

    def _latency_timer(self, when: float, activity: _Activity, latency: float) -> None:
        """_latency_over(activity) at `when` (`latency` from now), with every other activity
        whose latency ends then."""
        group = self._latency_groups.get(when)
        if group is None:
            group = self._latency_groups[when] = []
            heapq.heappush(self._latency_ends, when)
            self._latency_left[when] = latency
        group.append(activity)

    def _latency_over_all(self, group: list[_Activity]) -> None:
        # (joins go by key: the order of the activities within the group changes nothing)
        for activity in group:
            self._latency_over(activity)

    def _latency_over(self, activity: _Activity) -> None:
        if activity.over:
            return  # its job was killed meanwhile
        self._advance()
        self._join(activity)
        self._dirty = True

    # ------------------------------------------------------------------ sharing
    def _join(self, activity: _Activity) -> None:
        activity.sharing = True
        self.table.join(activity.slot)

    def _end(self, activity: _Activity, completed: bool = False) -> None:
        """The activity is over: it leaves the sharing (a `completed` one has left it in
        ActivityTable.finished already), its slot is freed and its `then` dropped."""
        if activity.sharing and not completed:
            self.table.leave(activity.slot)
        activity.over = True
        activity.sharing = False
        # A model keeps its handles (an MPI request's) and `then` refers to the model's objects:
        # dropping it breaks that cycle, so the activity is freed when the model lets it go
        # rather than at the next full garbage collection (which, with tens of thousands of them
        # alive, cost a third of an SMPI replay's time).
        activity.then = None
        activity.left = float(self.table.remaining[activity.slot])
        self.table.release(activity.slot)
        del self._owner[activity.slot]
        activity.slot = -1

    def _advance(self) -> None:
        """Move every progressing activity's cursor to now (once per instant: a cursor moved
        in two steps would not land on the same float). Every sharing cursor was last moved
        at `_advanced_to` (an activity joins the sharing just after a move)."""
        now = self._now()
        if now == self._advanced_to or self._stepping:  # (stepping: every step moved them)
            return
        elapsed = now - self._advanced_to
        self._advanced_to = now
        self.table.advance(elapsed)

    def _resolve_if_dirty(self) -> None:
        if self._dirty:
            self._resolve()

    def _resolve(self) -> None:
        """New rates for every progressing activity, and the next completion."""
        self._dirty = False
        table = self.table
        self._next_completion = math.inf
        if table.size == 0:
            return
        self.resolves += 1
        now = self._now()
        self._refresh_capacity()
        next_end = table.resolve(now, self._capacity)
        if self._dynamic_power_changed is not None:
            changed = table.changed
            for job in self.jobs.values():
                if any(changed[a.slot] for a in job.activities if a.sharing) or \
                        (job.sequence in self._by_sequence and changed[self._launched_sharing(job)].any()):
                    self._report_power(job)
        if next_end < math.inf:
            self._next_completion = max(next_end, now)

    def _refresh_capacity(self) -> None:
        if self.host_speed != self._speeds_seen:  # a pstate changed (or the first re-solve)
            self._speeds_seen = list(self.host_speed)
            speeds = np.asarray(self.host_speed, dtype=float)
            if self._multicore:
                speeds = speeds * np.asarray(self.host_cores, dtype=float)
            self._capacity = np.concatenate([speeds, self.network.capacity])

    def _refresh_speeds(self) -> None:
        """The host speeds as an array, for launches on multicore hosts."""
        if self._multicore and self.host_speed != self._speed_array.tolist():
            self._speed_array = np.asarray(self.host_speed, dtype=float)

    def _completions(self) -> None:
        self._advance()
        # Stepped, the activities whose cursor the step brought below SimGrid's precision are
        # done. Otherwise the clock is at the earliest predicted end: that activity (at least) is
        # done, even if its float progress says 1e-16 is left (periods reach 1e7 s: 1e-9 s of "work").
        now = self._now()
        table = self.table
        slots = table.finished(-math.inf, _REMAINS_PRECISION) if self._stepping else table.finished(now + _DONE_S)
        if self.on_cpu_end is not None and slots.size:
            self._cpu_ends(slots)
        launched = table.batch_job[slots]  # a launched activity's job, -1 for the runner's objects
        launched_by = launched.tolist()
        tokens = table.token[slots].tolist()
        # (job, then) of each; then None for a launched activity (its model takes its token)
        ended: list[tuple[_RunningJob, Callable[[], None] | None]] = []
        for slot, sequence in zip(slots.tolist(), launched_by):
            if sequence >= 0:
                ended.append((self._by_sequence[sequence], None))
                continue
            activity = self._owner[slot]
            ended.append((activity.job, activity.then))
            activity.job.activities.remove(activity)
            self._end(activity, completed=True)
        table.release_many(slots[launched >= 0])
        if self._dynamic_power_changed is not None:
            for job in {id(job): job for job, _ in ended}.values():
                self._report_power(job)
        # Callbacks in order; consecutive completions of one batched model make one call.
        batch: list[int] = []
        batch_job: _RunningJob | None = None
        for (job, then), token in zip(ended, tokens):
            if then is None or type(then) is BatchedCompletion:
                if job is not batch_job:
                    self._call_batch(batch_job, batch)
                    batch_job, batch = job, []
                batch.append(token if then is None else then.token)
                continue
            self._call_batch(batch_job, batch)
            batch_job, batch = None, []
            if self.jobs.get(job.record) is job:  # not finished by an earlier callback
                then()
        self._call_batch(batch_job, batch)
        self._resolve()  # once for every activity that ended or joined now

    def _cpu_ends(self, slots: np.ndarray) -> None:
        """on_cpu_end for the tasks at `slots`, ending now (out of the sharing, not re-solved
        yet): their CPU hosts in order, and the usage without them at the rates of now."""
        table, nb_hosts = self.table, self.nb_hosts
        hosts: list[int] = []
        for slot in slots.tolist():
            start = int(table.elem_start[slot])
            hosts += [r for r in table.resource[start:start + int(table.elem_count[slot])].tolist() if r < nb_hosts]
        self.on_cpu_end(hosts, table.cpu_usage(nb_hosts))

    def _call_batch(self, job: "_RunningJob | None", tokens: list[int]) -> None:
        if tokens and self.jobs.get(job.record) is job:  # (the model ignores those after its end)
            job.model.completed(tokens)

    def _report_power(self, job: _RunningJob) -> None:
        # The meter ignores a power equal to the job's last one. (A job's activities are either the
        # runner's objects or launched ones; either way summed in launch order.)
        watts = sum(self._dynamic_power(a) for a in job.activities if a.sharing)
        if job.sequence in self._by_sequence:
            for slot in self._launched_sharing(job).tolist():
                watts += self._slot_power(slot)
        self._dynamic_power_changed(job.record, watts)

    def _dynamic_power(self, activity: _Activity) -> float:
        return self._cpu_power(activity.slot, zip(activity.cpu_hosts, activity.cpu_flops))

    def _slot_power(self, slot: int) -> float:
        """_dynamic_power of a launched activity: its CPU elements are those on a host's CPU."""
        table = self.table
        start = int(table.elem_start[slot])
        elements = zip(table.resource[start:start + table.elem_count[slot]].tolist(),
                       table.amount[start:start + table.elem_count[slot]].tolist())
        return self._cpu_power(slot, ((host, flops) for host, flops in elements if host < self.nb_hosts))

    def _cpu_power(self, slot: int, cpu: Iterable[tuple[int, float]]) -> float:
        period = float(self.table.period[slot])
        if period <= 0 or self._wattages is None:
            return 0.0
        watts = 0.0
        for host, flops in cpu:
            idle, epsilon, peak = self._wattages(host)
            load = flops / (self.host_speed[host] * self.host_cores[host] * period)
            if load > 0:  # SimGrid's plugin: epsilon + load x (max - epsilon) on a loaded host, idle otherwise
                watts += (epsilon - idle) + (peak - epsilon) * min(load, 1.0)
        return watts

    def _launched_sharing(self, job: _RunningJob) -> np.ndarray:
        """The job's launched activities in the sharing, in launch order (the sharing is in key order)."""
        table = self.table
        sharing = table.order[:table.size]
        return sharing[table.batch_job[sharing] == job.sequence]

    def _forget_if_idle(self, job: _RunningJob) -> None:
        """A finished job's launched activities run on to their end, as the runner's objects do
        (their completions then call no one); the job is forgotten once none is left."""
        table = self.table
        if job.sequence in self._by_sequence and not (table.held & (table.batch_job == job.sequence)).any():
            del self._by_sequence[job.sequence]

    def _drop_launched(self, job: _RunningJob) -> bool:
        """The job is over: its launched activities still there end (their slots freed); whether
        any was in the sharing."""
        if self._by_sequence.pop(job.sequence, None) is None:
            return False
        table = self.table
        slots = np.flatnonzero(table.held & (table.batch_job == job.sequence))
        was_sharing = bool(table.sharing[slots].any())
        table.drop(slots)
        return was_sharing

    # ------------------------------------------------------------------ batched launches
    def _launch_commands(self, job: _RunningJob, commands: np.ndarray, amounts: np.ndarray, first: int, stop: int,
                         by_token: np.ndarray) -> int:
        """_RunningJob.launch: the compiled _build_activity and _launch of each command."""
        self._by_sequence[job.sequence] = job
        table, plans = self.table, self.plans
        now = self._now()
        self._refresh_speeds()
        while True:
            count = stop - first
            table.reserve(count, count * plans.longest)
            if self._latent.shape[0] < count:
                self._latent = np.zeros((2 * count, 2), dtype=np.int64)
                self._latent_when = np.zeros(2 * count)
            (index, latent, joined, self._advanced_to, table.top, table.free_top, table.size,
             self._launches) = kernel.launch(
                commands, amounts, first, stop, table.remaining, table.period, table.end, table.own, table.key,
                table.elem_start, table.elem_count, table.held, table.sharing, table.batch_job, table.token,
                table.resource, table.amount, table.free, table.order, table.top, table.free_top, table.size,
                self._launches, plans.ids, plans.integers, plans.latency, plans.resources, plans.fat,
                self._speed_array, self._multicore, self.nb_hosts, now, self._advanced_to, job.sequence, by_token,
                self._latent, self._latent_when)
            if joined:
                self._dirty = True
            if latent:
                self._latency_timers(latent)
            if index < stop and commands[index, 0] in _TRANSFERS:  # its route is not planned yet
                plans.add_compiled(int(commands[index, 1]), int(commands[index, 2]))
                first = index
                continue
            return index

    def _latency_timers(self, count: int) -> None:
        """The last launch's `count` latent activities wait in the latency heap."""
        self._heap_when, self._heap_entries = latency_heap_kernel.room(self._heap_when, self._heap_entries,
                                                                      self._heap_size, count)
        self._heap_size = latency_heap_kernel.push(self._heap_when, self._heap_entries, self._heap_size, self._latent,
                                                   self._latent_when, count)

    # ------------------------------------------------------------------ activity building
    def _build_activity(self, cpu: Sequence[tuple[int, float]], flows: Sequence[tuple[int, int, float]],
                        then: Callable[[], None]) -> _Activity:
        resources: list[int] = []
        amounts: list[float] = []
        own_period = 0.0  # bound from outside the shared resources (FATPIPE, one core)
        for host, flops in cpu:
            if flops > 0:
                resources.append(host)
                amounts.append(flops)
                if self._multicore:  # ptask_L07's bound: an executor gets one core's speed at most
                    own_period = max(own_period, flops / self.host_speed[host])
        plan = self.plans.plan
        if not resources and len(flows) == 1 and flows[0][2] > 0:  # one message: no sums to make
            src, dst, amount = flows[0]
            shared, fat, latency, distinct = plan(src, dst)
            if distinct:
                own_period = _flow_own_period(shared, fat, latency, amount)
                activity = self._new_activity(shared, [amount] * len(shared), own_period, then)
                activity.latency = latency
                return activity
        usage: dict[int, float] = {}
        latency = 0.0
        window = 0.0  # the largest latency x bytes of a flow (ptask_L07's network bound)
        on_links = False
        for src, dst, amount in flows:
            if amount <= 0:
                continue
            shared, fat, route_latency, _ = plan(src, dst)
            if route_latency > latency:
                latency = route_latency
            window = max(window, route_latency * amount)
            on_links = on_links or bool(shared) or bool(fat)
            for key in shared:
                usage[key] = usage.get(key, 0.0) + amount
            # No sharing on a FATPIPE link: each flow has the whole link (SimGrid counts the
            # largest; its largest amount / capacity is the largest of the quotients, as a
            # rounded division never reverses an order).
            for capacity in fat:
                own_period = max(own_period, amount / capacity)
        if resources or on_links:  # (a task of no CPU and no link has nothing to do but its latency)
            own_period = max(own_period, _window_period(window))
        activity = self._new_activity(resources + list(usage), amounts + list(usage.values()), own_period, then)
        activity.latency = latency
        activity.cpu_hosts, activity.cpu_flops = resources, amounts  # (the CPU elements only)
        return activity

    def _new_activity(self, resources: Sequence[int], amounts: Sequence[float], own_period: float,
                      then: Callable[[], None]) -> _Activity:
        slot = self.table.add(resources, amounts, own_period)
        activity = self._owner[slot] = _Activity(self.table, slot, then)
        return activity
