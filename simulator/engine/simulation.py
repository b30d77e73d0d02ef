"""The orchestrator: simulated time, calls to the decider, outputs (the job life cycle:
job_lifecycle.py; submissions and external events: event_sources.py).

Time is a simpy environment used as an event calendar (callbacks on timeouts: cheaper
than one generator process per job). The main loop processes every event of the current
time, then — if anything happened and the decider is not still "thinking" — sends all
those events in ONE message. Decisions stamped with the call's time apply at once;
later ones are put on the calendar at their timestamps. While the decider thinks (its
reply's `now` is later than the call's), new events queue and go in the next call.
This core knows no scheduling policy: it only applies decisions and checks them.
"""

from __future__ import annotations

import io
import math
import os
import sys
import time
from dataclasses import dataclass, field
from heapq import heappush
from typing import TYPE_CHECKING, Any, Callable

import simpy
from simpy.events import NORMAL

from joulesim.inputs.collector_pause import collector_paused
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import RUN_INPUT_EXIT, DecisionError, JoulesimError
from joulesim.protocol.simulation_begins import batsim_config
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, TIME_RANGE_TEXT
from joulesim.simulator.engine.batsim_actors import BatsimActors
from joulesim.simulator.engine.calendar_entry import CalendarEntry
from joulesim.simulator.engine.collection_pace import fewer_collections
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.decisions import DecisionApplier, DecisionContext
from joulesim.simulator.engine.event_sources import EventSources
from joulesim.simulator.engine.job_lifecycle import JobLifecycle
from joulesim.simulator.engine.machine_switching import MachineSwitching
from joulesim.simulator.engine.shared_hosts import SharedHosts
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.engine.workflow_runs import WorkflowRun
from joulesim.simulator.models.core_task_runner import CoreTaskRunner, initial_static_watts
from joulesim.simulator.platform.platform_checks import check_energy_properties
from joulesim.simulator.workload.profile_traces import profile_traces
from joulesim.simulator.workload.storage_labels import resolve_storages
from joulesim.simulator.output.disk_reserve import DiskReserve
from joulesim.simulator.output.job_statistics import JobStatistics
from joulesim.simulator.output.jobs_output import JobsOutput
from joulesim.simulator.output.machine_states import MachineStates
from joulesim.simulator.output.output_files import DiscardedOutput, output_error, output_paths, start_output_files
from joulesim.simulator.output.pstate_changes_output import PstateChangesOutput
from joulesim.simulator.output.schedule_output import write_schedule
from joulesim.simulator.output.schedule_trace import ScheduleTrace
from joulesim.simulator.workload.job_record import SUBMITTED, JobRecord
from joulesim.simulator.workload.workload_platform_checks import check_workload_fits_platform

if TYPE_CHECKING:  # (imported when a job needs it: it loads numba's kernels)
    from joulesim.simulator.models.ptask_runner import ParallelTaskRunner
    # (imported by runs with energy only: they load numpy, 15 MB of a 20,000-job run's 75)
    from joulesim.simulator.energy.energy_cost import CostPlan
    from joulesim.simulator.energy.energy_meter import EnergyMeter


def _clock_stays(now: float) -> None:
    """(The simpy calendar has set the clock to the runner's instant already.)"""


def _nothing_to_report() -> bool:
    return True


@dataclass
class SimulationResult:
    schedule: dict[str, str]
    stats: JobStatistics
    outputs: list[str]
    decider_calls: int
    wall_time: float
    energy_enabled: bool = False
    #: Output name ("jobs", "schedule", ...) -> CSV text, when the run kept its outputs in
    #: memory (no export prefix); empty when they were written to files.
    texts: dict[str, str] = field(default_factory=dict)
    #: Node-model runs: the model and the idle-power rule the energy used ("" otherwise).
    node_model: str = ""
    #: Platforms with electricity prices (energy on): the total energy cost, US cents.
    energy_cost_cents: float | None = None
    #: Jobs that ran with a profile other than a delay (energy runs: a delay leaves its hosts at
    #: idle power, so a run of delays alone draws no computing power).
    jobs_not_delays: int = 0
    #: The compute hosts the run used (the platform's, or the first --mmax of them).
    nb_hosts: int = 0


#: (platform id, hosts, sleeping hosts) -> (the platform, its SIMULATION_BEGINS host entries).
_RESOURCE_ENTRIES: dict[tuple, tuple[Any, list[dict[str, Any]]]] = {}


class Simulation(EventSources, JobLifecycle):
    def __init__(self, config: SimulationConfig, link: DeciderLink, resumable: bool = False):
        self.config = config
        self.link = link
        self.env = simpy.Environment(initial_time=0.0)  # (a float: Batsim writes the first timestamps 0.000000)
        self._queue = self.env._queue
        self._event_ids = self.env._eid
        hosts = config.platform.compute_hosts
        self.hierarchy = config.platform.nodes  # IRMaSim's node model, or None
        if self.hierarchy is not None and config.mmax and config.mmax != len(hosts):
            raise JoulesimError(f"--mmax cannot cut {config.platform.source}: its resources are the cores of "
                                "a node hierarchy (drop --mmax, or describe fewer nodes)")
        if config.mmax:
            if config.mmax > len(hosts):
                raise JoulesimError(
                    f"--mmax {config.mmax} is larger than the {len(hosts)} compute hosts of "
                    f"{config.platform.source} (use at most {len(hosts)}, or 0 for all)")
            hosts = hosts[: config.mmax]
        self.hosts = hosts
        self.nb_hosts = len(hosts)
        self.host_speed = [h.speed for h in hosts]
        self.host_pstate = [h.pstate for h in hosts]
        self.host_job: list[JobRecord | None] = [None] * self.nb_hosts
        # 1 where host_job holds a job, without compute sharing: an EXECUTE_JOB's hosts are
        # checked free with one C search (bytearray.find) where a look at host_job's slice read
        # every host (a job of thousands of hosts: microseconds each time)
        self.host_busy = bytearray(self.nb_hosts)
        # The storage hosts' resource ids: after the compute hosts kept, as SIMULATION_BEGINS lists them.
        self.storage_ids = range(self.nb_hosts, self.nb_hosts + len(config.platform.storage_hosts))
        if (config.compute_sharing or config.no_sched) and self.hierarchy is not None:
            flag = "--no-sched" if config.no_sched else "--enable-compute-sharing"
            raise JoulesimError(f"{flag}: {config.platform.source} is a node platform, whose cores "
                                "run one task each (drop the flag, or use a Batsim platform)")
        self.host_running = SharedHosts(self.host_job) if config.compute_sharing or config.no_sched else None
        # --disable-storage-sharing: the running job that holds each storage host (by resource id).
        self.storage_job: dict[int, JobRecord] = {}
        self.host_unavailable = [False] * self.nb_hosts
        self.nb_unavailable = 0  # (EXECUTE_JOB looks at host_unavailable only when some are)
        self.switching = MachineSwitching(self)
        if config.energy and self.hierarchy is None:  # node models carry their own power model
            self._check_power_model()
        self.energy: EnergyMeter | None = None
        # Energy cost, when the compute hosts carry prices (node models: not supported).
        self.cost_plan: CostPlan | None = None
        self._tariff_events = 0  # day/night boundaries on the calendar
        if config.energy and self.hierarchy is None:
            from joulesim.simulator.energy.energy_cost import cost_plan

            self.cost_plan = cost_plan(hosts, config.platform.source)
        self.pstate_out: PstateChangesOutput | None = None
        # Parallel tasks share CPUs and links when the platform describes a network.
        self.runner: ParallelTaskRunner | None = None
        self.runner_wanted = False  # a job that shares the platform would need it (start_runner)
        self._runner_wake_at = math.inf  # the network runner's calendar entry (without Batsim's actors)
        self._runner_wakes = 0

        self.profiles: dict[str, dict[str, dict[str, Any]]] = {}
        self._workloads_by_name = {w.name: w for w in config.workloads}
        self._registered_traces: dict[tuple[str, str], Any] = {}
        # Batsim's profile garbage collection (only observable by dynamic jobs): profiles of jobs
        # ended since the last message, removed once it is sent; then the removed ones by workload.
        self._collect_profiles = config.dynamic_jobs and not config.profile_reuse
        self._profiles_to_collect: list[tuple[str, str]] = []
        # Jobs whose end the server has handled since the last message to the decider: that
        # message tells it, and Batsim deletes them once it is sent (server.cpp jobs_to_be_deleted).
        self.ends_handled: list[JobRecord] = []
        self.collected_profiles: dict[str, set[str]] = {}
        self.records: dict[str, JobRecord] = {}
        with collector_paused():  # (a record per job, all kept)
            for workload in config.workloads:
                check_workload_fits_platform(workload, self.hierarchy, config.platform.source, config.platform.network is not None)
                self.profiles[workload.name] = workload.profiles
                for job in workload.jobs:
                    self.records[job.id] = JobRecord(job, workload.profiles)

        self.pending: list[dict[str, Any]] = []  # events for the next decider call
        self.decider_free = True
        self.scheduled_decisions = 0
        self.pending_calls = 0  # CALL_ME_LATER not yet answered
        self._late_decisions = 0  # decisions stamped more than 1 us before the clock
        self._largest_lag = 0.0  # seconds, the largest of those
        self._energy_first_submission: float | None = None  # joules consumed when the first job came
        self._energy_last_end: float | None = None  # joules consumed when the last job ended
        self.nb_unfinished = 0  # submitted, not yet finished or rejected
        self.submitters_left = len(config.workloads) + len(config.workflows)
        self.workflow_runs = {w.name: WorkflowRun(w, config.workflow_jobs_limit) for w in config.workflows}
        for name in self.workflow_runs:
            self.profiles[name] = {}  # its tasks' profiles, made as they are submitted
        self.event_submitter_done = not config.external_events
        self.registration_open = config.dynamic_jobs
        self.stats = JobStatistics()
        self.applier = DecisionApplier(self)
        # Batsim's actors decide when things happen and which message carries each event
        # (event_grouping "batsim"); None: every event of one time in one message ("per-time").
        # IRMaSim's node platforms follow IRMaSim, which has no such actors: one message per time.
        batsim = config.event_grouping == "batsim" and self.hierarchy is None and not config.no_sched
        # `resumable`: a run that writes checkpoints takes Batsim's actors as Python generators,
        # whose frames a checkpoint reads (resumable_batsim_actors.py; compiled ones have none).
        actors_class = BatsimActors
        if resumable:
            from joulesim.simulator.engine.resumable_batsim_actors import BatsimActors as actors_class  # noqa: N813
        self.actors: BatsimActors | None = actors_class(self) if batsim else None
        self._progress = None
        self._files: list[Any] = []
        #: Paths of the output files opened so far (kept when the run stops early).
        self.opened_outputs: list[str] = []
        self._outputs_open = False  # (from then on an InputError is found during the run: see run)
        self.use_link(link)
        self.paths = output_paths(config.export_prefix, config.energy, self.cost_plan is not None,
                                  config.machine_state_tracing, config.schedule_tracing)
        self._buffers: dict[str, io.StringIO] = {}  # outputs kept in memory (no export prefix)
        # A stepwise run (joulesim.Simulation: run_until, fork): before the clock first moves past
        # `pause_at`, `pause(now, next_time)` is called with the last instant handled and the next
        # one; it returns once pause_at is at least next_time. A plain run never pauses.
        self.pause_at = math.inf  # (a property: Batsim's actors keep it too, see below)
        self.pause: Callable[[float, float], None] | None = None

    @property
    def pause_at(self) -> float:
        return self._pause_at

    @pause_at.setter
    def pause_at(self, when: float) -> None:
        # Batsim's actors look at it at every step of their clock: they keep it, as a compiled
        # class's attribute, where a look at the simulation's was a dict lookup each time.
        self._pause_at = when
        actors = self.__dict__.get("actors")
        if actors is not None:
            actors.pause_at = when

    def use_link(self, link: DeciderLink) -> None:
        """Talk to the decider through `link`: from the start, or from a checkpoint with a decider
        started again. Its replies' resource ids are checked against the platform's, and -v
        network-only or debug traces its messages."""
        self.link = link
        link.nb_resources = self.nb_hosts + len(self.config.platform.storage_hosts)
        if self.config.verbosity in ("network-only", "debug"):
            link.trace_messages(sys.stderr)

    def _warn(self, text: str) -> None:
        """A warning on stderr, unless the verbosity keeps only errors or messages."""
        if self.config.verbosity in ("information", "debug"):
            print(text, file=sys.stderr)

    def _check_power_model(self) -> None:
        check_energy_properties(self.config.platform)  # (a property refused names itself first)
        for host in self.hosts:
            if host.wattage_per_state is None:
                raise InputError(self.config.platform.source, f"host {host.name}",
                                 "has no wattage_per_state property, which energy accounting (-E) needs",
                                 "give one idle:max pair per pstate, e.g. "
                                 "<prop id=\"wattage_per_state\" value=\"95:190.74\"/>, or run without -E")

    # ------------------------------------------------------------------ calendar
    def at(self, when: float, callback: Callable[[Any], None], value: Any = None, floor: float = 0.0,
           daemon: bool = False) -> None:
        """Call `callback(value)` at simulated time `when` (>= now).

        The entry goes straight into simpy's calendar (`env._queue`, ordered by time, then
        priority, then insertion), as `env.schedule` would put it; `env._now` is what the
        `now` property returns. Both save Python calls on every event of every job.
        With Batsim's actors, an actor sleeps `when - now` (at least `floor` seconds, if it
        sleeps at all), then calls it and reports to the server.
        """
        if self.actors is not None:
            self.actors.after(when - self.env._now, callback, value, floor=floor, daemon=daemon)
            return
        heappush(self._queue, (when, NORMAL, next(self._event_ids), CalendarEntry(callback, value)))

    def start_runner(self) -> "ParallelTaskRunner":
        """The runner of jobs that share the platform (a network's links, CPUs shared, usage
        traces), made when a job first needs it: a run of delay jobs loads none of it."""
        from joulesim.simulator.models.ptask_runner import ParallelTaskRunner
        from joulesim.simulator.platform.free_network import FreeNetwork

        network = self.config.platform.network
        if network is None:  # sharing CPUs, or replaying traces, without links: transfers are free
            network = FreeNetwork()
        energy = self.energy
        # With Batsim's actors a job's end goes to the server from its own actor, on its first host.
        tasks_done = self._tasks_done if self.actors is None else self.actors.model_job_ends(self._tasks_done)
        runner = self.runner = ParallelTaskRunner(
            network, self.nb_hosts, self.host_speed, [h.cores for h in self.hosts], self.clock, tasks_done,
            self._set_dynamic_power if energy else None, self._power_range if energy else None,
            self._profile_traces)
        if self.actors is None:  # (Batsim's kernel asks the runner for its next event itself)
            runner.calendar_changed = self._wake_runner_then
        else:
            self.actors.runner_started(runner)
            if energy is not None and energy.simgrid is not None:  # SimGrid's joules follow the tasks' load
                energy.simgrid.runner = runner
                runner.on_cpu_end = self.actors.cpu_actions_end
                runner.on_instant = self.actors.kernel.on_solve = energy.simgrid.solved
        return runner

    # (methods rather than closures, given to the models: a checkpoint holds what they hold)
    def clock(self) -> float:
        """The simulated time now."""
        return self.env._now

    def _set_dynamic_power(self, record: JobRecord, watts: Any) -> None:
        self.energy.set_dynamic_power(self.env._now, record, watts)  # type: ignore[union-attr]

    def _power_range(self, host: int) -> Any:
        return self.hosts[host].power_range(self.host_pstate[host])

    def _wake_runner_then(self) -> None:
        """One calendar entry for the network runner's next event (a later entry replaces it)."""
        when = self.runner.next_event()
        if when == self._runner_wake_at:
            return
        self._runner_wake_at = when
        self._runner_wakes += 1
        if when < math.inf:
            heappush(self._queue, (when, NORMAL, next(self._event_ids), CalendarEntry(self._wake_runner, self._runner_wakes)))

    def _wake_runner(self, wake: int) -> None:
        if wake == self._runner_wakes:  # (not replaced since)
            self._runner_wake_at = math.inf
            # the instant's events only: the calendar may hold others for the same time
            self.runner.process(self.env._now, 0.0, math.inf, _clock_stays, _nothing_to_report)

    def _schedule_tariff_change(self, cluster: int, now: float) -> None:
        assert self.cost_plan is not None
        when = self.cost_plan.tariffs[cluster].next_change(now)
        if when < MAX_SIMULATED_TIME:  # math.inf for a flat tariff
            self._tariff_events += 1
            self.at(when, self._tariff_change, cluster, daemon=True)

    def _tariff_change(self, cluster: int) -> None:
        """A day/night boundary of a cluster's tariff: settle the costs at the old price. The
        next boundary goes on the calendar only while something else is to happen (a run that
        is over or stuck must not be kept going by its tariffs)."""
        now = self.env._now
        self._tariff_events -= 1
        self.energy.tariff_changes(now, cluster)  # type: ignore[union-attr]
        if self.actors is not None:
            more_to_come = self.actors.busy()
        else:
            more_to_come = len(self._queue) > self._tariff_events or bool(self.pending) or not self.decider_free
        if more_to_come:
            self._schedule_tariff_change(cluster, now)

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.pending.append({"timestamp": self.env._now, "type": kind, "data": data})

    # ------------------------------------------------------------------ run
    def run(self) -> SimulationResult:
        """Simulate and write the outputs. The errors that end a run keep their exit status,
        but two get theirs here, at the run's boundary: an InputError found once the outputs are
        open (an SMPI trace that deadlocks, no route between two zones, met when a job first
        sends a message there) ends with RUN_INPUT_EXIT (9: the input is wrong, the outputs
        written so far are kept), not 2 (refused before any output); and the decider leaving
        jobs waiting with nothing else to happen is a DecisionError (4), in both event groupings."""
        try:
            with fewer_collections():
                return self._run()
        except InputError as exc:
            if self._outputs_open:
                exc.exit_code = RUN_INPUT_EXIT  # (the same error, its class kept for the API's callers)
            raise

    def resume(self, wall_so_far: float) -> SimulationResult:
        """Go on from a pause point of a run restored in another process (a checkpoint: every
        event up to the clock handled, none after it; the outputs reopened where they were), to
        its end, as `run` goes on from a pause. `wall_so_far`: the wall-clock seconds the run took
        before (its schedule output counts them)."""
        try:
            with fewer_collections():
                return self._run_to_end(time.perf_counter() - wall_so_far, resumed=True)
        except InputError as exc:
            exc.exit_code = RUN_INPUT_EXIT
            raise

    def _run(self) -> SimulationResult:
        started = time.perf_counter()
        for warning in self.config.platform.warnings:
            self._warn(warning)
        if self.config.export_prefix is not None:
            start_output_files(self.config.export_prefix)  # never a mix with an older run's files
        jobs_file = self._open_output("jobs")
        states_file = self._open_output("machine_states") if self.config.machine_state_tracing else DiscardedOutput()
        self.jobs_out = JobsOutput(jobs_file, self.config.energy)
        trace = None
        if "schedule_trace" in self.paths:  # (a file only: runs kept in memory write no trace)
            storage_names = [h.name for h in self.config.platform.storage_hosts]
            reserve = DiskReserve(self.paths["schedule_trace"], "the Pajé trace has a line per machine at each job start "
                                  "and end: turn it off with --disable-schedule-tracing, or write the outputs to a "
                                  "larger disk (-e)")
            trace = ScheduleTrace(self._open_output("schedule_trace"), [h.name for h in self.hosts] + storage_names,
                                  reserve)
        self.machines = MachineStates(states_file, self.host_job, self.host_running is not None, trace)
        if self.config.energy:
            from joulesim.simulator.energy.energy_cost import PricedEnergyMeter
            from joulesim.simulator.energy.energy_meter import EnergyMeter
            from joulesim.simulator.energy.simgrid_host_energy import SimgridHostEnergy

            energy_file = self._open_output("consumed_energy")
            pstates_file = self._open_output("pstate_changes")
            pstates = self.host_pstate
            if self.hierarchy is not None:
                static = initial_static_watts(self.hierarchy, self.config.idle_power)
            else:
                static = [h.wattage_per_state[p][0] for h, p in zip(self.hosts, pstates)]
            if self.cost_plan is not None:
                self.energy = PricedEnergyMeter(energy_file, static, self.cost_plan)
                for index in range(len(self.cost_plan.tariffs)):
                    self._schedule_tariff_change(index, 0.0)
            else:
                self.energy = EnergyMeter(energy_file, static)
            # (Batsim's first rows give every machine's pstate, the storage machines' too.)
            storage_pstates = [h.pstate for h in self.config.platform.storage_hosts]
            self.pstate_out = PstateChangesOutput(pstates_file, pstates + storage_pstates)
            if self.actors is not None:  # Batsim's figures: SimGrid's joules, machine by machine
                storages = self.config.platform.storage_hosts
                self.energy.follow_simgrid(SimgridHostEnergy(
                    [_power_ranges(h) for h in list(self.hosts) + list(storages)],
                    self.host_pstate + [h.pstate for h in storages], [h.cores for h in self.hosts] + [h.cores for h in storages],
                    [h.speeds for h in list(self.hosts) + list(storages)]))
                self.actors.kernel.energy_plugin = self.energy.simgrid
                self.energy.row_sink = self.actors.after_reads
            offer = getattr(self.link.transport, "offer_host_energy", None)
            if offer is not None:  # (a requester that reads hosts one by one: Batsim 5's energy probes)
                ledger = self.energy.track_hosts()
                offer(lambda hosts: ledger.joules(hosts, self.env._now), self.nb_hosts)
        for handle in self._files:  # headers on disk at once: a run killed now leaves headed CSVs
            handle.flush()
        self._outputs_open = True
        network = self.config.platform.network
        if self.hierarchy is not None:
            self.runner = CoreTaskRunner(self.hierarchy, self.at, self.clock, self._tasks_done,
                                         self.energy, self.host_job)
        else:  # the runner of parallel tasks is made for the first job it runs (see start_runner)
            self.runner_wanted = (network is not None or self.host_running is not None
                                  or any(w.traces for w in self.config.workloads))
        if self.config.progress:
            from joulesim.console.progress_bar import progress_bar
            total = sum(len(w.jobs) for w in self.config.workloads)
            self._progress = progress_bar(total, "simulating", "job")
        return self._run_to_end(started)

    def _run_to_end(self, started: float, resumed: bool = False) -> SimulationResult:
        try:
            if resumed and self.actors is not None:
                self.actors.go_on()
            elif resumed:
                self._loop()
            elif self.actors is not None:
                self.actors.run()
            else:
                self._start()
                self._loop()
            self.machines.close(self.env.now)
        finally:
            for handle in self._files:
                if not isinstance(handle, io.StringIO):  # a buffer's text is read below
                    handle.close()
            if self._progress is not None:
                self._progress.close()
        wall = time.perf_counter() - started
        # Batsim's consumed_joules: the energy between the first job submission and the last
        # job end (not the energy of switches after it, nor of idling before the first job).
        first, last = self._energy_first_submission, self._energy_last_end
        consumed = self.energy.window_joules(first, last) if first is not None and last is not None else 0.0
        with self._open_output("schedule") as schedule_file:
            schedule = write_schedule(schedule_file, self.stats, self.machines,
                                      self.nb_hosts + len(self.config.platform.storage_hosts),
                                      self.link.scheduling_time, wall, consumed,
                                      self.switching.nb_machine_switches, self.switching.nb_grouped_switches)
            cost_total = None
            if self.energy is not None and self.cost_plan is not None:  # (a PricedEnergyMeter)
                cost_file = self._open_output("energy_cost")
                cost_total = self.energy.write(cost_file)
                if not isinstance(cost_file, io.StringIO):  # a buffer's text is read below
                    cost_file.close()
                trace_file = self._open_output("energy_cost_trace")
                self.energy.write_trace(trace_file, self.env.now)
                if not isinstance(trace_file, io.StringIO):
                    trace_file.close()
            texts = {name: buffer.getvalue() for name, buffer in self._buffers.items()}
        node_model = f"{self.hierarchy.model}, idle power {self.config.idle_power}" if self.hierarchy else ""
        not_delays = 0
        if self.energy is not None:  # (counted once, at the end: nothing per job on the way)
            not_delays = sum(1 for r in self.records.values()
                             if r.start >= 0 and r.profiles.get(r.job.profile, {}).get("type") != "delay")
        return SimulationResult(schedule, self.stats, list(self.paths.values()), self.link.calls, wall,
                                self.energy is not None, texts, node_model, cost_total, not_delays, self.nb_hosts)

    def _open_output(self, name: str) -> Any:
        """The file of output `name`, or a memory buffer when the run exports no files."""
        if self.config.export_prefix is None:
            handle = self._buffers[name] = io.StringIO(newline="")
        else:
            try:
                handle = open(self.paths[name], "w", newline="")
            except OSError as exc:  # checked before the run; something changed since
                raise output_error(self.config.export_prefix, exc) from None
            self.opened_outputs.append(self.paths[name])
        self._files.append(handle)
        return handle

    def _start(self) -> None:
        if self.config.no_sched:
            self._start_every_job()
            return
        # SIMULATION_BEGINS goes alone, as Batsim sends it: pybatsim reads this first message
        # before its scheduler is initialised. Events of t=0 then come together in the next.
        self.emit("SIMULATION_BEGINS", self._simulation_begins_data())
        self._call_decider()
        self.start_event_sources(with_workloads=True)

    def _loop(self) -> None:
        env = self.env
        queue = env._queue  # simpy's calendar; peeking it avoids an exception per step
        while True:
            now = env._now
            while queue and queue[0][0] <= now:
                env.step()
            if self.pending and self.decider_free:
                self._call_decider()
                continue
            if self._finished():
                self._end()
                return
            if not queue:
                raise DecisionError(self._stuck_reason())
            if queue[0][0] >= MAX_SIMULATED_TIME:
                raise JoulesimError(self._beyond_time_range(queue[0]))
            if queue[0][0] > self._pause_at:  # (a stepwise run's pause: the clock would pass it)
                self.pause(now, queue[0][0])
                continue
            env.step()

    def _finished(self) -> bool:
        return (self.submitters_left == 0 and self.event_submitter_done and not self.registration_open
                and self.nb_unfinished == 0 and self.pending_calls == 0 and self.decider_free
                and self.scheduled_decisions == 0 and self.switching.in_progress == 0)

    def _stuck_reason(self) -> str:
        """Why the run cannot go on: the decider left jobs waiting (or registration open) and
        nothing else can happen (raised as a DecisionError)."""
        now = self.env._now
        if self.registration_open:
            return (f"at t={now:g} nothing is left to simulate, but dynamic job registration is still "
                    "open: the decider must send NOTIFY registration_finished once it registers no more "
                    "jobs (or run without --enable-dynamic-jobs)")
        waiting = [r.job.id for r in self.records.values() if r.state == SUBMITTED]
        shown = ", ".join(waiting[:5]) + (", ..." if len(waiting) > 5 else "")
        return (f"at t={now:g} the decider left {len(waiting)} submitted job(s) waiting ({shown}) and "
                "nothing else can happen: it must EXECUTE_JOB or REJECT_JOB each of them, or ask to be "
                "called again with CALL_ME_LATER")

    def _beyond_time_range(self, entry: tuple) -> str:
        when, _, _, call = entry
        what = getattr(getattr(call, "callback", None), "__name__", "an event").strip("_").replace("_", " ")
        return (f"at t={self.env._now:g} the next event ({what}) is due at t={when:g}: {TIME_RANGE_TEXT}; "
                "shorten the workload's times (submission times, walltimes, delays) or the decider's "
                "requested calls")

    def ends_sent(self) -> None:
        """A message goes to the decider: the ends the server handled so far are told."""
        for record in self.ends_handled:
            record.end_sent = True
        self.ends_handled.clear()

    def _call_decider(self) -> None:
        if self.config.no_sched:  # no decider: the events go nowhere
            self.pending.clear()
            return
        now = self.env._now
        message = {"now": now, "events": self.pending}
        self.pending = []
        self.ends_sent()
        reply = self.link.call(message)
        if self._profiles_to_collect:
            self.profiles_collected()
        # As Batsim 4 does, a decision stamped before the simulator's clock (the call's time, or
        # an earlier decision's) applies at that clock: deciders that print times with fewer
        # digits answer 2904.153 to a call at 2904.1530000000002.
        clock = now
        for index, decision in enumerate(reply["events"]):
            context = DecisionContext((now, index, decision))
            when = decision["timestamp"]
            if when < clock:
                self._late_decision(clock - when, context)
                when = clock
            if when <= now:
                self.applier.apply(decision, context)
            else:
                self.scheduled_decisions += 1
                self.at(when, self._apply_later, (decision, context))
            clock = when
        reply_now = float(reply["now"])
        if reply_now > now:
            self.decider_free = False
            self.at(reply_now, self._decider_ready)

    def _late_decision(self, lag: float, context: DecisionContext) -> None:
        """Warn when a decision is stamped earlier than it can apply by more than a rounding of
        the time it was given (Batsim applies it silently): the first one in full, the count
        and the largest lag at the end (see _end)."""
        if lag > 1e-6:
            self._late_decisions += 1
            self._largest_lag = max(self._largest_lag, lag)
            if self._late_decisions == 1:
                self._warn(f"joulesim: warning: {context}: stamped {lag:.6g} s before the simulator's clock; it applies "
                      "at the clock, as in Batsim (further such decisions are counted at the end)")

    def _apply_later(self, item: tuple[dict[str, Any], DecisionContext]) -> None:
        self.scheduled_decisions -= 1
        self.applier.apply(*item)

    def _decider_ready(self, _: Any) -> None:
        self.decider_free = True

    def force_stop(self, context: Any) -> None:
        """Batsim 5's ForceSimulationStopEvent: the run ends now; the decider is told
        SIMULATION_ENDS; jobs not ended by then get no row (Batsim 5 kills them unreported)."""
        if self.actors is None:
            raise DecisionError(f"{context}: a forced stop needs Batsim's event grouping (--event-grouping batsim, "
                                "the default)")
        self.actors.force_stop()

    def profiles_collected(self) -> None:
        """A message went to the decider: the profiles of the jobs it reported ended are gone
        (Batsim: server.cpp deletes those jobs and, without --enable-profile-reuse, their profiles)."""
        for workload, profile in self._profiles_to_collect:
            self.collected_profiles.setdefault(workload, set()).add(profile)
        self._profiles_to_collect.clear()

    def _start_every_job(self) -> None:
        """--no-sched (Batsim's batexec_job_launcher_process): each job starts now on hosts
        0..res-1, in each workload's order; nothing is submitted, no decider is called."""
        self.submitters_left = 0
        for workload in self.config.workloads:
            for job in workload.jobs:
                record = self.records[job.id]
                if job.res > self.nb_hosts:
                    raise JoulesimError(f"--no-sched starts job {job.id} on hosts 0-{job.res - 1}, but the platform has "
                                        f"{self.nb_hosts} compute hosts (Batsim would stop too): drop the job or use a larger platform")
                storages, problem = resolve_storages(job.profile, record.profiles, None, self.storage_ids)
                if problem:  # no decider to give a mapping: only the platform can help
                    raise JoulesimError(f"--no-sched: job {job.id}: {problem.problem} (with --no-sched no decider "
                                        "maps storages: give the platform a single storage host, or run with a decider)")
                self.job_entered()
                self.start_job(record, [(0, job.res - 1)], job.res, f"0-{job.res - 1}" if job.res > 1 else "0", None, storages)
        self.pending.clear()

    def _end(self) -> None:
        if self.config.no_sched:
            return
        now = self.env._now
        reply = self.link.call({"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}]})
        self.warn_decisions_after_end(reply)

    def warn_decisions_after_end(self, reply: dict[str, Any]) -> None:
        if reply["events"]:
            self._warn(f"joulesim: warning: the decider answered SIMULATION_ENDS with {len(reply['events'])} "
                  "decision(s); they are ignored (the simulation is over)")
        if self._late_decisions > 1:
            self._warn(f"joulesim: warning: {self._late_decisions} decisions in all were stamped before the simulator's "
                  f"clock (by up to {self._largest_lag:.6g} s) and applied at the clock; a decider should stamp "
                  "decisions with the time of the call (the message's now) or later")

    def _profile_traces(self, record: JobRecord) -> Any:
        """The parsed traces of a trace-profile job: read with its workload, or now for a
        profile registered during the run (relative to the workload file, as Batsim does)."""
        name = record.job.profile
        workload = self._workloads_by_name.get(record.job.workload)
        if workload is not None and name in workload.traces:
            return workload.traces[name]
        key = (record.job.workload, name)
        if key not in self._registered_traces:  # a workload created during the run: the current directory
            path = workload.path if workload is not None else "<registered during the run>"
            self._registered_traces[key] = profile_traces(path, name, record.profiles[name])
        return self._registered_traces[key]

    # ------------------------------------------------------------------ messages
    def _simulation_begins_data(self) -> dict[str, Any]:
        config = self.config
        storage = config.platform.storage_hosts
        return {
            "nb_resources": self.nb_hosts + len(storage),
            "nb_compute_resources": self.nb_hosts,
            "nb_storage_resources": len(storage),
            "allow_compute_sharing": config.compute_sharing,
            "allow_storage_sharing": config.storage_sharing,
            "config": batsim_config(config.forward_profiles, config.dynamic_jobs, config.acknowledge_dynamic_jobs,
                                    config.sched_config, config.forward_unknown_events, config.profile_reuse),
            "compute_resources": self._compute_resources(),
            "storage_resources": [
                {"id": self.nb_hosts + i, "name": h.name, "state": "idle", "properties": _with_role(h.properties),
                 "zone_properties": h.zone_properties} for i, h in enumerate(storage)],
            "workloads": {**{w.name: _absolute(w.path) for w in config.workloads},
                          **{w.name: _absolute(w.path) for w in config.workflows}},
            "profiles": {**{w.name: w.profiles for w in config.workloads}, **{w.name: {} for w in config.workflows}},
            **({"hierarchy": self.hierarchy.to_protocol()} if self.hierarchy is not None else {}),
        }

    def _compute_resources(self) -> list[dict[str, Any]]:
        """SIMULATION_BEGINS' compute_resources. The entries of a platform's hosts are built once
        per process (thousands of runs of one platform, as in RL training, rebuilt them at ~2 us
        a host) and each run gets fresh copies, so that no decider sees another run's."""
        off = self.switching.host_off
        key = (id(self.config.platform), self.nb_hosts, tuple(off) if any(off) else ())
        entries = _RESOURCE_ENTRIES.get(key)
        if entries is None or entries[0] is not self.config.platform:
            built = [{"id": h.id, "name": h.name, "state": "sleeping" if off[i] else "idle",
                      "properties": _with_role(h.properties), "zone_properties": h.zone_properties}
                     for i, h in enumerate(self.hosts)]
            if len(_RESOURCE_ENTRIES) >= 64:
                _RESOURCE_ENTRIES.clear()
            entries = _RESOURCE_ENTRIES[key] = (self.config.platform, built)
        return [entry.copy() for entry in entries[1]]


def _power_ranges(host: Any) -> list[tuple[float, float, float]]:
    """(idle, epsilon, max) watts per pstate, as SimGrid reads wattage_per_state ("idle:max" has
    epsilon = idle); none given: 0 W."""
    if host.wattage_per_state is None:
        return [(0.0, 0.0, 0.0)] * len(host.speeds)
    if host.wattage_epsilon is None:
        return [(idle, idle, peak) for idle, peak in host.wattage_per_state]
    return [host.power_range(pstate) for pstate in range(len(host.wattage_per_state))]


def _with_role(properties: dict[str, str]) -> dict[str, str]:
    """A host's properties as Batsim 4.2.1 tells them: it reads every host's `role` (an empty one
    when the platform gives none), and that read adds it first."""
    return properties if "role" in properties else {"role": "", **properties}


def _absolute(path: str) -> str:
    """A workload's file as Batsim names it: a relative path joined to the working directory
    (as written, not normalised); a workload given as data keeps what it has."""
    if path and not path.startswith("/") and os.path.isfile(path):
        return os.getcwd() + "/" + path
    return path
