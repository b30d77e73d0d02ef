"""Batsim 4.2.1's actors on the replicated SimGrid kernel: the default event grouping.

Batsim sends the decider a message as soon as its server has handled a message from another
actor, the decider is free and the server's mailbox is empty (src/server.cpp). Jobs that end
at the same simulated time report through separate actors, each with a 1-byte transfer to the
master host, so same-time events can reach the decider in one message or in several. Every
decision comes back to the server the same way, one transfer each, so a job starts a few
nanoseconds after the call that started it, and those nanoseconds decide later groupings.

The actors here do what Batsim's do, in the same order of simcalls:
- the server (src/server.cpp server_process) on the master host;
- one job submitter per workload (src/job_submitter.cpp static_job_submitter_process);
- one REQ-REP actor per call to the decider (src/network.cpp, src/protocol.cpp: each decision
  is sent to the server at its timestamp, then SCHED_READY at the reply's `now`);
- one actor per running job (src/jobs_execution.cpp, on the job's first host): it sleeps the
  job's duration, then reports JOB_COMPLETED;
- one actor per other timed happening of the simulation (CALL_ME_LATER's waiter, machine
  switches, external events, ...): it sleeps until its time, then reports what happened.

Jobs that share the platform (parallel tasks, I/O, SMPI replays...) run on the network runner,
which the kernel treats as a model (RunnerModel): its events are handled by maestro at the
step they are due, and what they emit (a job's end) goes to the server from an actor, as a
job's actor reports.

The Simulation keeps the job life cycle, the checks and the outputs; this module only decides
when each of its happenings takes place and which message carries each event.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Final, Sequence

from joulesim.protocol.batsim_number_format import as_batsim_writes
from joulesim.protocol.errors import DecisionError, JoulesimError
from joulesim.protocol.interval_set import expand_runs
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, TIME_RANGE_TEXT
from joulesim.simulator.engine.decisions import DecisionContext
from joulesim.simulator.engine.ipc_routes import MASTER, IpcRoutes
from joulesim.simulator.engine.runner_model import RunnerLinks, RunnerModel
from joulesim.simulator.engine.simgrid_kernel import ENDED, Actor, Kernel
from joulesim.simulator.workload.job_record import RUNNING

if TYPE_CHECKING:
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.workflow_runs import WorkflowRun
    from joulesim.simulator.workload.job_record import JobRecord

SERVER: Final = "server"  # (Final: a constant of the compiled actors, not a lookup at each message)


class BatsimActors:
    """Runs one Simulation with Batsim's actors deciding when things happen."""

    def __init__(self, sim: "Simulation"):
        self.sim = sim
        self._env = sim.env  # (simpy's environment, whose clock the kernel's moves: one per simulation)
        self.routes = IpcRoutes(sim.config.platform)
        self.kernel = Kernel(self.routes.route, self._clock_moved)
        self.pause_at = math.inf  # the simulation's (a stepwise run's pause: Simulation.pause_at sets both)
        self.writer: list[dict[str, Any]] = []  # Batsim's proto_writer: the next message's events
        self.sched_ready = False
        self.end_sent = False
        self.end_ack = False
        self.stop_asked = False  # a forced stop (Batsim 5's server_on_force_simulation_stop)
        self._req_rep: Actor | None = None  # the REQ-REP actor of the call under way
        # Submitters still submitting, and reports on their way to the server (a job's end...):
        # Batsim's server counts what they tell it (submitters, running jobs, waiters...).
        self.live = 0
        self._spawned: list[Any] = []  # Actors to create, and other simcalls of simulation code
        self._on_arrival: list[Callable[[], None]] = []  # what the server does on taking the next report
        self._on_exit: list[Callable[[], None]] = []  # what happens when the running actor ends (after its report)
        self._server: Actor | None = None
        self._in_model = False  # simulation code runs for the runner's model (reports go by an actor)
        self._job_actor: dict["JobRecord", Actor] = {}  # record -> the actor sleeping its duration
        # With energy, Batsim reads machines' joules (a job's at its start and end, all of them for
        # each row of its energy trace); each read of a machine not yet up to date is a simcall.
        self.machines: range | None = None
        if sim.config.energy:
            self.machines = range(sim.nb_hosts + len(sim.storage_ids))
            self.kernel.energy_stamp = [0.0] * len(self.machines)
        self._first_job_read = False  # Batsim reads every machine's joules at the first submission

    def _clock_moved(self, now: float) -> None:
        if now > self.pause_at:  # (a stepwise run's pause, before anything of `now` happens)
            sim = self.sim
            sim.pause(sim.env._now, now)
        self._env._now = now

    # ------------------------------------------------------------------ entry points
    def run(self) -> None:
        sim = self.sim
        for index in range(len(sim.config.workloads)):
            self.live += 1  # until its goodbye
            self._new_actor(self._job_submitter(index), MASTER, f"workload_submitter_w{index}", spawn=False)
        for run in sim.workflow_runs.values():
            self.live += 1
            self._new_actor(self._workflow_submitter(run), MASTER, f"workflow_submitter_{run.name}", spawn=False)
        # External events (their own actors) and the NOTIFYs due at the start, after the first call.
        self._initial_events = self._capture(lambda _: sim.start_event_sources(with_workloads=False), None)
        self._server = self.kernel.start(self._serve(), MASTER, SERVER)
        if sim.runner is not None:
            self.runner_started(sim.runner)
        self.go_on()

    def go_on(self) -> None:
        """Run the kernel to the end (from the start, or from a checkpoint's step boundary)."""
        self.kernel.run(MAX_SIMULATED_TIME, self._beyond_time_range)
        if not self.end_ack:
            raise DecisionError(self.sim._stuck_reason())

    def runner_started(self, runner: Any) -> None:
        """The network runner is the kernel's model from now on (its events are due from now)."""
        self.kernel.model = RunnerModel(self, runner)
        if getattr(runner, "network", None) is not None:
            self.kernel.link_sharing = RunnerLinks(runner)

    def after(self, delay: float, callback: Callable[[Any], None], value: Any, host: Any = MASTER,
              floor: float = 0.0, job: "JobRecord | None" = None, daemon: bool = False,
              job_hosts: list[int] | None = None, start_row: Callable[[], None] | None = None) -> None:
        """`callback(value)` once `delay` seconds have passed, in an actor of its own on `host`
        whose events then go to the server (created by the actor running now). A daemon (joulesim's
        own bookkeeping, e.g. tariff boundaries) neither delays the end nor reports. A job's actor
        (`job_hosts`: its machines, ascending) reads their joules, then every machine's, before
        and after its sleep, as Batsim's execute_job_process does with energy, and writes
        `start_row` (its row of the energy trace) after the first reads."""
        reads = job_hosts if self.machines is not None else None
        job_key = job  # (the record itself, which a checkpoint keeps: not its id)
        actor = self._new_actor(self._timed(delay, callback, value, host, floor, daemon, reads, start_row, job_key),
                                host, "timer")
        if job_key is not None:
            self._job_actor[job_key] = actor

    def after_reads(self, code: Callable[[], None]) -> None:
        """Run `code` in the running actor once the reads it asked for so far are done: a row of
        Batsim's energy trace is written after its reads (its wattmin reads pstates then)."""
        if self._in_model or self.kernel.current is None:  # (maestro's code: no reads to wait for)
            code()
        else:
            self._spawned.append(("call", code))

    def read_energy(self, hosts: Any = None) -> None:
        """The running actor reads these machines' joules next (None: every machine), e.g. the
        server writing a row of Batsim's energy trace; nothing without energy."""
        if self.machines is not None:
            self._spawned.append(("read", self.machines if hosts is None else hosts))

    def set_pstate_now(self, host: int) -> None:
        """The running actor calls Host::set_pstate next: a simcall that updates the host's joules."""
        if self.machines is not None:
            self._spawned.append(("set_pstate", host, self.sim.host_pstate[host]))
        else:
            self._spawned.append(("answered",))

    def _energy_reads(self, hosts: Any):
        """sg_host_get_consumed_energy on each machine: a simcall unless it is up to date (the
        kernel's "reads")."""
        yield ("reads", hosts, hosts is self.machines)

    def _job_energy_reads(self, hosts: list[int]):
        """What Batsim reads when a job starts or ends with energy: its machines' joules
        (consumed_energy_on_machines), then every machine's (its energy trace's row)."""
        yield from self._energy_reads(hosts)
        yield from self._energy_reads(self.machines)

    def switch_machine(self, host: int, virtual: int, target: int, arrive: Callable[[int], None],
                       taken: Callable[[int], None]) -> None:
        """Batsim's switch_on/off_machine_process (src/pstate.cpp), an actor on the machine's host
        created by the server: it computes 1 flop at the `virtual` pstate's speed, then
        `arrive(host)` (the machine's `target` pstate and state), and reports to the server,
        where `taken(host)` counts it towards its request."""
        self._new_actor(self._switching(host, virtual, target, arrive, taken), host, f"switch {host}")

    def _switching(self, host: int, virtual: int, target: int, arrive: Callable[[int], None],
                   taken: Callable[[int], None]):
        energy = self.machines is not None  # (with energy, Host::set_pstate updates the host's joules)
        yield ("set_pstate", host, virtual) if energy else ("answered",)  # Host::set_pstate: into the virtual pstate
        yield ("answered",)  # this_actor::execute: Exec::set_priority
        yield ("execute", self.sim.hosts[host].speeds[virtual])  # (resumable: switched) ... and wait until the flop is computed
        yield from self._switched(host, target, arrive, taken)

    def _switched(self, host: int, target: int, arrive: Callable[[int], None], taken: Callable[[int], None]):
        energy = self.machines is not None
        yield ("set_pstate", host, target) if energy else ("answered",)  # Host::set_pstate: the target pstate
        events = self._capture(arrive, host)
        self.live += 1  # until the server takes it
        yield from self._put(("events", events, [partial(taken, host)]))  # (resumable: done)

    def kill_jobs(self, records: list["JobRecord"], kill: Callable[["JobRecord"], Any],
                  done: Callable[[list["JobRecord"], dict[str, Any]], None]) -> None:
        """server_on_kill_jobs: a killer actor on the master (killer_process) kills each job still
        running (`kill` returns its progress), then tells the server, where `done` reports the
        kills."""
        self._new_actor(self._killer(records, kill, done), MASTER, "killer_process")

    def _killer(self, records: list["JobRecord"], kill: Callable[["JobRecord"], Any],
                done: Callable[[list["JobRecord"], dict[str, Any]], None]):
        progress: dict[str, Any] = {}
        on_arrival: list[Callable[[], None]] = []
        for record in records:
            if record.state != RUNNING:
                continue  # its end is on its way: nothing to kill
            sleeping = record in self._job_actor  # (else its work is on the runner: a ptask cancelled)
            self._capture(lambda r: progress.__setitem__(r.job.id, kill(r)), record)  # (emits nothing)
            on_arrival += self._on_arrival
            self._on_arrival = []
            if sleeping:
                yield ("answered",)  # Actor::kill
                if self.machines is not None:
                    yield from self._job_energy_reads(expand_runs(record.alloc))
            yield from self._creations()  # (its row of the energy trace, after the reads)
        self.live += 1  # until the server takes it
        yield from self._put(("events", [], on_arrival + [partial(done, records, progress)]))  # (resumable: done)

    def away_from_server(self) -> bool:
        """Whether simulation code runs in an actor that reports to the server (not the server)."""
        current = self.kernel.current
        return self._in_model or (current is not None and current is not self._server)

    def when_server_takes(self, action: Callable[[], None]) -> None:
        """Do `action` when the server takes the running actor's report (e.g. write a job's row)."""
        self._on_arrival.append(action)

    def when_actor_ends(self, action: Callable[[], None]) -> None:
        """Do `action` when the running timed actor ends, once its report has reached the server
        (SimGrid cancels an actor's activities still running when it ends)."""
        self._on_exit.append(action)

    def kill_job_actor(self, record: "JobRecord") -> None:
        """A killed job's actor dies with its sleep (the action leaves the solver at once)."""
        actor = self._job_actor.pop(record, None)
        if actor is not None:
            self.kernel.kill(actor)

    # ------------------------------------------------------------------ actor plumbing
    def busy(self) -> bool:
        """Whether anything but daemons is still to happen or to be told."""
        return bool(self.writer) or bool(self.sim.pending) or not self._finished()

    def _new_actor(self, code, host: Any, name: str, spawn: bool = True) -> Actor:
        if not spawn or self.kernel.current is None:  # not created by a running actor
            return self.kernel.start(code, host, name)
        actor = Actor(code, host, name)
        self._spawned.append(actor)
        return actor

    def _creations(self):
        """The simcalls the last piece of simulation code made, in order: Actor::create for each
        actor it asked for, and with energy its reads of machines' joules and pstate changes."""
        while self._spawned:
            spawned, self._spawned = self._spawned, []
            for item in spawned:
                if type(item) is Actor:
                    yield ("create", item)
                elif item[0] == "read":
                    yield from self._energy_reads(item[1])
                elif item[0] == "set_pstate":
                    yield item
                elif item[0] == "call":  # code that runs once the reads before it are done
                    item[1]()
                else:
                    yield item

    def _put(self, payload: Any):
        """send_message (src/ipp.cpp): Mailbox::by_name (a simcall), then put: isend and wait (the
        kernel's "put" makes the three). The hot paths yield it themselves."""
        yield ("put", SERVER, payload)  # (resumable: done)

    def _sleep(self, duration: float):
        if duration > 0:  # sleep_for() of 0 or less is a no-op, not a simcall
            yield ("sleep", duration)

    def _capture(self, callback: Callable[[Any], None], value: Any) -> list[dict[str, Any]]:
        """Run simulation code; return the events it emitted (Simulation.pending)."""
        sim = self.sim
        sim.pending = []
        callback(value)
        events, sim.pending = sim.pending, []
        return events

    # ------------------------------------------------------------------ the actors
    def _serve(self):
        sim = self.sim
        self.writer = self._capture(lambda _: sim.emit("SIMULATION_BEGINS", sim._simulation_begins_data()), None)
        yield from self._call_decider()
        self.writer += self._initial_events
        yield from self._serve_from(None)

    def _serve_from(self, message: tuple | None):
        """The server's loop, from `message` (None: from its next get)."""
        sim = self.sim
        box = self.kernel.mailbox(SERVER)
        workflows = bool(sim.workflow_runs)  # (made with the simulation: read once)
        while True:
            if message is None:
                if self.end_ack:
                    break
                message = yield ("get", SERVER)  # (resumable: served) receive_message: by_name, then get (irecv and wait)
            taken: Any = message  # (a message; the loop's test above makes sure of it)
            message = None
            if workflows and taken[0] == "events":  # server_on_job_completed calls the workflow back first
                yield from self._workflow_callbacks(taken[1])
            ends_before = len(sim.ends_handled) if workflows else 0
            self.writer += self._handled(taken)
            if self.stop_asked and not self.end_sent:  # (Batsim 5 clears what it was to send)
                self.writer = []
            if workflows and len(sim.ends_handled) > ends_before:  # a kill or a rejection ends a job too
                yield from self._workflow_callbacks(None, sim.ends_handled[ends_before:])
            if self._spawned:  # (most messages make no simcall of their own)
                yield from self._creations()
            if not (self.sched_ready and not self.end_ack):
                continue
            yield ("answered",)  # mailbox_empty: Mailbox::by_name too, then the queue is looked at
            if box.empty():
                if self.writer:
                    yield from self._call_decider()
                elif not self.end_sent and self._finished():
                    now = self.kernel.now
                    self.writer.append({"timestamp": now, "type": "SIMULATION_ENDS", "data": {}})
                    self.end_sent = True
                    yield from self._call_decider()
        # Batsim's run ends with its server; what joulesim's own timers still await (a walltime
        # of a job that ended, a tariff boundary) is not part of it.
        self.kernel.stop()

    def force_stop(self) -> None:
        """Batsim 5's server_on_force_simulation_stop: the decisions still to come from the call
        under way are dropped with its REQ-REP actor, whatever waits for the server is cleared,
        and SIMULATION_ENDS goes at once; the run then ends whatever still sleeps (running jobs,
        submitters, timers: Batsim 5 kills them)."""
        self.stop_asked = True
        if self._req_rep is not None:
            self.kernel.kill(self._req_rep)
        self.kernel.mailbox(SERVER).clear()
        self.sched_ready = True

    def _finished(self) -> bool:
        if self.stop_asked:
            return True
        sim = self.sim
        sim.decider_free = self.sched_ready
        return self.live == 0 and sim._finished()

    def _handled(self, message: tuple) -> list[dict[str, Any]]:
        """The server handles a message (_capture of _handle, without a bound method made each time)."""
        sim = self.sim
        sim.pending = []
        self._handle(message)
        events, sim.pending = sim.pending, []
        return events

    def _handle(self, message: tuple) -> None:
        kind: str = message[0]
        sim = self.sim
        if kind == "decision":
            _, decision, context = message
            sim.applier.apply(decision, context)
        elif kind == "ready":
            self.sched_ready = True
            if self.end_sent:
                self.end_ack = True
        elif kind == "events":  # stamped when the server takes them, as Batsim's handlers do
            _, events, on_arrival = message
            for action in on_arrival:
                action()
            now = self.kernel.now
            for event in events:
                event["timestamp"] = now
            sim.pending.extend(events)
            self.live -= 1
        elif kind == "jobs":
            for record in message[1]:
                sim.submit(record)
        elif kind == "bye":
            self.live -= 1
            sim._submitter_done()
        # "hello": the server only registers the submitter

    def _call_decider(self):
        """generate_and_send_message: the events so far go to a new REQ-REP actor."""
        message = {"now": self.kernel.now, "events": self.writer}
        self.sim.ends_sent()
        self.writer = []
        self.sched_ready = False
        self._req_rep = Actor(self._request_reply(message), MASTER, "Scheduler REQ-REP")
        yield ("create", self._req_rep)

    def _request_reply(self, message: dict[str, Any]):
        sim = self.sim
        if sim.link.batsim4_numbers:  # what a Batsim 4 decider reads (see protocol/batsim_number_format.py)
            message = as_batsim_writes(message)
        now = message["now"]
        reply = sim.link.call(message)
        if sim._profiles_to_collect:
            sim.profiles_collected()
        if self.end_sent:
            sim.warn_decisions_after_end(reply)
            yield from self._ready_after(reply)
        else:
            yield from self._decisions_from(reply, now, 0, now)
        yield ENDED

    def _decisions_from(self, reply: dict[str, Any], now: float, start: int, stamped: float):
        """The reply's decisions from `start` on, each at its stamp (`stamped`: the latest so far),
        then the ready message."""
        sim, kernel = self.sim, self.kernel
        events = reply["events"]
        for index in range(start, len(events)):
            decision = events[index]
            context = DecisionContext((now, index, decision))
            when = decision["timestamp"]
            if when < stamped:
                sim._late_decision(stamped - when, context)
            stamped = max(stamped, when)
            clock = kernel.now
            if when > clock:  # send_message_at_time: sleep until the stamp, then send
                yield ("sleep", when - clock)  # (resumable: stamped)
            yield ("put", SERVER, ("decision", decision, context))  # (resumable: decided) (_put, once a decision)
        yield from self._ready_after(reply)

    def _ready_after(self, reply: dict[str, Any]):
        reply_now = float(reply["now"])
        clock = self.kernel.now
        if reply_now > clock:
            yield ("sleep", reply_now - clock)  # (resumable: thought)
        yield ("put", SERVER, ("ready",))  # (resumable: done)

    def _job_submitter(self, index: int):
        yield from self._put(("hello",))  # (resumable: greeted)
        yield from self._submit_from(index, 0, self.kernel.now)

    def _submit_from(self, index: int, position: int, current: float):
        """The workload's jobs from `position` on (`current`: the time they are submitted at so far)."""
        sim = self.sim
        kernel = self.kernel
        batch: list[JobRecord] = []
        jobs = sim.config.workloads[index].jobs
        while position < len(jobs):
            job = jobs[position]
            if job.subtime > current:
                if batch:
                    yield ("put", SERVER, ("jobs", batch))  # (resumable: sent) (_put, once a submission time)
                    batch = []
                yield ("sleep", job.subtime - current)  # (resumable: waited) (a difference > 0: _sleep's test holds)
                current = kernel.now
            batch.append(sim.records[job.id])
            if not self._first_job_read and self.machines is not None:  # energy_first_job_submission
                self._first_job_read = True
                yield from self._energy_reads(self.machines)
                sim.energy.read_window_start(kernel.now)  # (in the submitter, before the server knows)
            position += 1
        if batch:
            yield from self._put(("jobs", batch))  # (resumable: last)
        yield from self._put(("bye",))  # (resumable: done)

    def _workflow_submitter(self, run: "WorkflowRun"):
        """workflow_submitter_process: hello, sleep to the start time, then submit the ready tasks
        one message each and wait for the server's call back after each completion."""
        sim, kernel = self.sim, self.kernel
        yield from self._put(("hello",))
        yield from self._sleep(run.workflow.start_time - kernel.now)
        box = f"{run.name}_submitter"
        while not run.finished():
            for task in run.take_ready():
                yield from self._put(("jobs", [sim.workflow_record(run, task, kernel.now)]))
            if run.in_flight:
                run.completed((yield ("get", box)))  # receive_message: Mailbox::by_name, then get
        run.over = True
        yield from self._put(("bye",))

    def _workflow_callbacks(self, events: list[dict[str, Any]] | None, ended_records: "Sequence[JobRecord]" = ()):
        """The server's SUBMITTER_CALLBACK (send_message to the workflow's submitter) for each
        workflow job whose end these events report (JOB_COMPLETED), or with `events` None for
        each of `ended_records` (the jobs whose end the server just handled) not called back yet:
        a kill or a rejection. Batsim calls back for completions only, leaving such a workflow
        waiting forever; joulesim calls back so that it ends.

        Batsim's callback is a blocking put, and so is each submission of its workflow
        submitter: a job of the workflow ending while the submitter submits several ready tasks
        leaves each waiting for the other for ever (SimGrid's deadlock; e.g. one task whose
        children each have a child). joulesim's callback is detached (SimGrid's put_async): the
        server goes on and the submitter finds it in its mailbox once it has submitted."""
        runs = self.sim.workflow_runs
        if not runs:
            return
        if events is not None:
            ended = [e["data"]["job_id"] for e in events if e["type"] == "JOB_COMPLETED"]
        else:
            ended = [record.job.id for record in ended_records]
        for job_id in ended:
            run = runs.get(job_id.partition("!")[0])
            if run is not None and job_id in run.in_flight and job_id not in run.called_back:
                run.called_back.add(job_id)
                yield ("answered",)
                yield ("isend", f"{run.name}_submitter", job_id)  # (not waited for: see above)

    def _timed(self, delay: float, callback: Callable[[Any], None], value: Any, host: Any, floor: float,
               daemon: bool, reads: list[int] | None = None, start_row: Callable[[], None] | None = None,
               job_key: "JobRecord | None" = None):
        if 0 < delay < floor:
            delay = floor
        if reads is not None:  # a job's actor, with energy
            yield from self._job_energy_reads(reads)
            if start_row is not None:
                start_row()
                yield from self._creations()
        if daemon:
            if delay > 0:
                yield ("sleep", delay, True)  # (resumable: woke)
            callback(value)
            yield from self._creations()
            return
        if delay > 0:  # (_sleep, written out: once per job)
            yield ("sleep", delay)  # (resumable: slept)
        yield from self._timed_end(callback, value, reads, job_key)
        yield ENDED

    def _timed_end(self, callback: Callable[[Any], None], value: Any, reads: list[int] | None, job_key: Any):
        """A timer's actor once its sleep is over: its callback, and its report to the server."""
        if job_key is not None:  # (its sleep is over: nothing left to kill, and 20,000 of them weigh 9 MB)
            del self._job_actor[job_key]
        events = self._capture(callback, value)
        on_arrival, self._on_arrival = self._on_arrival, []
        on_exit, self._on_exit = self._on_exit, []
        if reads is not None:  # (after the job has left its machines, as execute_job_process does)
            yield from self._job_energy_reads(reads)
        if self._spawned:
            yield from self._creations()
        if events or on_arrival:
            self.live += 1  # until the server takes it
            yield ("put", SERVER, ("events", events, on_arrival))  # (resumable: reported) (_put, once a job)
        for action in on_exit:
            action()

    def runner_events(self, runner: Any, start: float = 0.0, horizon: float = 0.0, limit: float = 0.0,
                      stepped: bool = False) -> None:
        """The network runner's events (handled by maestro, Model.process, or Model.step when
        `stepped`); what they emit goes to the server from an actor of its own on the master
        host, as a timer's report does."""
        kernel, sim = self.kernel, self.sim

        def nothing_to_report() -> bool:
            return not sim.pending and not self._on_arrival and not kernel.has_ready()

        self._in_model = True
        sim.pending = []
        try:
            if stepped:
                runner.step()
            else:
                runner.process(start, horizon, limit, kernel.set_clock, nothing_to_report)
        finally:
            self._in_model = False
        events, sim.pending = sim.pending, []
        on_arrival, self._on_arrival = self._on_arrival, []
        if events or on_arrival:
            self.live += 1  # until the server takes it
            self.kernel.start(self._put(("events", events, on_arrival)), MASTER, "runner_report")

    def cpu_actions_end(self, hosts: list[int], usage_after: Any) -> None:
        """The runner's tasks on `hosts` end now: SimGrid's energy plugin brings each host's joules
        up to date (on_action_state_change), at the load of the last solve, which still counts
        them; then their variables are freed (`usage_after`: the usage without them)."""
        for host in hosts:
            self.kernel.stamp(host)
        plugin = self.kernel.energy_plugin
        assert plugin is not None  # (a runner's tasks end with energy only)
        plugin.usage_solved = usage_after

    def exec_starts_on(self, host: int) -> None:
        """An execution of one host starts: the plugin's Exec::on_start brings its joules up to
        date first (only with energy)."""
        if self.machines is not None:
            self.kernel.stamp(host)

    def model_job_ends(self, job_ends: Callable[["JobRecord"], None]) -> Callable[["JobRecord"], None]:
        """`job_ends` for the jobs the runner models: as Batsim's execute_job_process does once
        its parallel task is over, the job's actor, on its first host, reads its machines' and
        every machine's joules (with energy), then sends the job's end to the server, a transfer
        on the route from that host (its latency delays the end's arrival). (A partial, not a
        closure: a checkpoint holds the runner that keeps it.)"""
        return partial(self._model_job_ends, job_ends)

    def _model_job_ends(self, job_ends: Callable[["JobRecord"], None], record: "JobRecord") -> None:
        sim = self.sim
        self.kill_job_actor(record)  # its wait for the walltime is cancelled
        saved = sim.pending, self._on_arrival
        sim.pending, self._on_arrival = [], []
        try:
            job_ends(record)
            events, on_arrival = sim.pending, self._on_arrival
        finally:
            sim.pending, self._on_arrival = saved
        if events or on_arrival:
            self.live += 1  # until the server takes it
            reads = expand_runs(record.alloc) if self.machines is not None else None
            self.kernel.start(self._job_report(events, on_arrival, reads), record.alloc[0][0], "job_report")

    def _job_report(self, events: list[dict[str, Any]], on_arrival: list[Callable[[], None]],
                    reads: list[int] | None):
        if reads is not None:
            yield from self._job_energy_reads(reads)
        yield from self._put(("events", events, on_arrival))  # (resumable: done)

    def _beyond_time_range(self, when: float) -> Exception:
        return JoulesimError(f"at t={self.kernel.now:g} the next event is due at t={when:g}: {TIME_RANGE_TEXT}; "
                             "shorten the workload's times (submission times, walltimes, delays) or the decider's "
                             "requested calls")
