"""A replica of the part of SimGrid 3.32's kernel that decides when Batsim's messages happen.

Batsim's server, its job submitter, each running job and each call to the decider are SimGrid
actors on the platform's hosts; they talk through mailboxes, and every message is a 1-byte
transfer on the ptask_L07 network. Which events reach the decider together then follows from
(read in SimGrid v3.32: src/kernel/EngineImpl.cpp run() and solve(), src/surf/ptask_L07.cpp,
src/kernel/activity/CommImpl.cpp, src/kernel/resource/Model.cpp):

- Time advances in steps. Each step's length is the smallest of the started actions' remaining
  sleep (`max_duration`), transfer time (`remains / rate`) and latency; the clock adds it
  (`now += delta`), and every action is updated in creation order. A sleep whose remainder
  falls below surf/precision (1e-9 s) is over in that step; a transfer's remaining work snaps
  to zero below 1e-14 (maxmin precision x surf precision).
- Actors run in sub-rounds: each ready actor runs until its next simcall; then the simcalls are
  handled in the order the actors ran. An answered simcall (isend, irecv, actor creation, and
  Mailbox::by_name, which Batsim calls before each send, receive and emptiness check) makes its
  actor ready for the next sub-round; a blocking one (sleep, wait) when its action ends.
  Ended actions wake their actors in creation order; a transfer wakes its waiters in the order
  they started waiting.
- A send and a receive on one mailbox match in posting order; the transfer starts once both
  are there. `Mailbox::empty()` looks at the queue of unmatched posts.
- The network runner (jobs' parallel tasks) is a model of its own; its events are handled by
  maestro, before the actors whose actions ended are woken. A `stepped` runner (the parallel
  task runner) is updated as ptask_L07 updates every action, at each step: its tasks' time to
  completion counts in the step's length, each step moves every task's progress by its rate x
  the step, and a task ends when its remaining progress falls below 1e-14. Messages whose links
  its tasks use join its solve (LinkSharing): one linear system, as in ptask_L07, where a
  1-byte message takes its fair share of a busy link and slows the tasks held back by it.
  Another model gives the time of its next event, and several of its instants make one step
  while no other action ends before them.

The arithmetic is the same IEEE double arithmetic, in the same order, so the clock values are
SimGrid's to the last bit for sleeps, executions of one host and messages; a parallel task's
rate is 1 / its period (ptask_sharing), which can differ from SimGrid's value by an ulp.
Actors are Python generators that yield simcalls; a "put" or a "get" stands for three of
Batsim's (send_message / receive_message: Mailbox::by_name, isend or irecv, wait), the kernel
making the last two in the sub-rounds that follow without running the actor's code.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, Callable, Final, Generator

from joulesim.simulator.engine.kernel_extensions import LinkSharing, Model

if TYPE_CHECKING:
    from joulesim.simulator.energy.simgrid_host_energy import SimgridHostEnergy
    from joulesim.simulator.engine.sleep_array import SleepArray

# (Final: a compiled kernel reads these as constants, not from the module's dict at each use)
SURF_PRECISION: Final = 1e-9  # SimGrid's surf/precision
REMAINS_PRECISION: Final = 1e-5 * 1e-9  # maxmin/precision x surf/precision (Action::update_remains)
# A ptask with nothing to compute or move: SimGrid's fair-bottleneck solver gives its variable
# DBL_MAX, and the action ends in a step of length 0.
UNBOUNDED_RATE: Final = sys.float_info.max
# Beyond WIDE started sleeps the kernel updates them in one array (SleepArray: a numpy call
# costs about what a Python loop over 40 of them does); below NARROW it goes back to its dict.
WIDE, NARROW = 64, 16  # (not Final: tests move them; a kernel takes them when made)

# An actor's code yields its simcalls; it ends by returning, or by yielding ENDED: the same for
# the kernel, without the StopIteration of a return (which a compiled kernel pays dearly for:
# a traceback entry made, then caught). The actors that end once a job or a call do so.
ActorCode = Generator["tuple | None", Any, None]
ENDED: Final = None

# Every class here can be made without arguments (its __init__'s defaults): a checkpoint makes
# them so and then sets their attributes (simulator/checkpoint/state_codec.py), and a class
# compiled by mypyc runs its __init__ whenever it is made.


class Sleep:
    """A started sleep action: its remaining `max_duration` (its variable has penalty 0)."""

    __slots__ = ("max_duration", "actor")

    def __init__(self, max_duration: float = 0.0, actor: Any = None):
        self.max_duration = max_duration
        self.actor = actor


class Transfer:
    """A started 1-byte transfer (no max duration): latency first, then its work at its rate; also
    an execution of one host (no latency, remains 1 at the host's speed: simcall "execute")."""

    __slots__ = ("remains", "rate", "full_rate", "latency", "active", "comm", "twins", "route", "slot")

    def __init__(self, remains: float = 0.0, rate: float = 0.0, latency: float = 0.0, comm: Any = None,
                 route: Route | None = None):
        # Executions started at the same time at the same speed stay equal at every update (a
        # request switching thousands of machines): one action carries them all, each with its
        # own creation key for the order of their ends.
        self.twins: list[tuple[int, Comm]] | None = None
        self.remains = remains
        self.full_rate = rate  # the solver's value once the latency has elapsed
        self.latency = latency
        # A transfer's variable has penalty 0 during its latency: no rate.
        self.active = rate > 0 and latency <= 0
        self.rate = rate if self.active else 0.0
        self.comm = comm
        self.route = route  # (a transfer's, None for an execution)
        self.slot = -1  # where it shares links with other work (LinkSharing), -1: nowhere


class Route:
    """What a 1-byte message crosses: its latency, the rate the solver gives it alone, and its
    links (indices in the platform's network description, in route order)."""

    __slots__ = ("latency", "rate", "links")

    def __init__(self, latency: float = 0.0, rate: float = 0.0, links: tuple[int, ...] = ()):
        self.latency = latency
        self.rate = rate
        self.links = links


class Comm:
    """A send matched (or waiting to be matched) with a receive on a mailbox."""

    __slots__ = ("sender", "receiver", "payload", "done", "waiters")

    def __init__(self) -> None:
        self.sender: Actor | None = None
        self.receiver: Actor | None = None
        self.payload: Any = None
        self.done = False
        self.waiters: list[Actor] = []


# An actor's "put" and "get" (below) are three simcalls each, the last two made by the kernel.
# Actor.script: its next simcall waits for the transfer it was answered. A list, not a tuple: it
# is told by its identity, which a compiled kernel (mypyc) keeps for lists and not for tuples.
_WAIT_NEXT: Final[Any] = ["wait"]


class Actor:
    __slots__ = ("code", "host", "simcall", "answer", "name", "sleep", "alive", "reading", "script")

    def __init__(self, code: Any = None, host: Any = None, name: str = ""):
        self.code = code
        self.sleep: int | None = None  # the key of its sleep action while it sleeps
        self.alive = True
        self.host = host
        self.simcall: tuple | None = None
        self.answer: Any = None
        self.name = name
        # While it reads machines' joules ("reads"): (machines in order, the next one, every machine?)
        self.reading: tuple[Any, int, bool] | None = None
        # While it puts or gets: the simcall it makes next, in place of running its code (None: none)
        self.script: Any = None


def _scripted(actor: Actor) -> None:
    """The simcall that follows in an actor's put or get, made without running its code: the
    isend or irecv after Mailbox::by_name, then the wait on the transfer that answered it."""
    script = actor.script
    if script is _WAIT_NEXT:
        actor.simcall = ("wait", actor.answer)
        actor.script = None
    else:
        actor.simcall = script
        actor.script = _WAIT_NEXT
    actor.answer = None


class Mailbox:
    """The unmatched posts of a mailbox, oldest first. A list read from `head` on, not a deque:
    a compiled kernel calls a deque's methods as any object's, a list's directly."""

    __slots__ = ("queue", "head")

    def __init__(self) -> None:
        self.queue: list[tuple[str, Comm]] = []  # ("send" | "recv", comm), in posting order, from `head` on
        self.head = 0

    def empty(self) -> bool:
        return self.head == len(self.queue)

    def oldest_kind(self) -> str:
        """"send" or "recv": what the oldest post waiting is ("" when none waits)."""
        return self.queue[self.head][0] if self.head < len(self.queue) else ""

    def take_oldest(self) -> Comm:
        comm = self.queue[self.head][1]
        self.head += 1
        if self.head == len(self.queue):  # (most often: the one waiting was taken)
            self.queue.clear()
            self.head = 0
        elif self.head >= 1024:  # (a long queue read from its head: its taken part goes now and then)
            del self.queue[:self.head]
            self.head = 0
        return comm

    def post(self, kind: str, comm: Comm) -> None:
        self.queue.append((kind, comm))

    def clear(self) -> None:
        self.queue.clear()
        self.head = 0



class Kernel:
    """The clock, the started actions, the actors and the mailboxes."""

    def __init__(self, route_of: Any = None, on_time: Any = None):
        self.now = 0.0
        self._route_of = route_of  # (source host, destination host) -> Route
        # The routes met so far, by source then destination host (no pair made at each message)
        self._known_routes: dict[Any, dict[Any, Route]] = {}
        self._on_time = on_time  # told each new clock value
        # The started actions (SimGrid's started-action set), keyed by creation order.
        self._sleeps: dict[int, Sleep] = {}  # (empty while they are in `_wide`)
        # The smallest remaining duration in `_sleeps` (inf: none), None when to be found again:
        # the plain step keeps it without a pass over them (subtraction is monotonic: the
        # smallest stays the smallest, at its value less the step) until one ends or leaves.
        self._shortest_sleep: float | None = math.inf
        self._wide: "SleepArray | None" = None
        self._wide_beyond, self._narrow_below = WIDE, NARROW
        self._comms: dict[int, Transfer] = {}
        self._daemon_sleeps: set[int] = set()  # sleeps of daemon actors: they keep no run going
        self._next_action = 0
        self._fresh_executions: dict[float, Transfer] = {}  # speed -> an execution started since the last step
        self._ready: list[Actor] = []
        self.mailboxes: dict[str, Mailbox] = {}
        self.current: Actor | None = None  # the actor running now (None: maestro)
        self._stopped = False
        self.model: Model | None = None
        # With energy: when SimGrid's host energy plugin last brought each machine's joules up to
        # date (HostEnergy::last_updated_), None without. Reading a machine's energy is a simcall
        # only when that is before now, so it decides how many simcalls Batsim's actors make.
        self.energy_stamp: list[float] | None = None
        self._all_read_at = -1.0  # every machine was read at this time (their stamps are not set one by one)
        # And the plugin's joules, brought up to date at those moments (None without energy).
        self.energy_plugin: "SimgridHostEnergy | None" = None
        self.on_solve: Callable[[], None] | None = None  # told at each solve (each step's start)
        # Set once parallel tasks may share links with the transfers; then the rates of the
        # active transfers on links follow its version (they were solved at `_shared_version`).
        self.link_sharing: LinkSharing | None = None
        self._shared_version = -1
        # The work done, for tests that bound it per job (speed is measured in benchmarks/):
        # steps of the clock (solves), sub-rounds (rounds of ready actors), actors started, and
        # the times an actor ran its code in a sub-round (its generator resumed, or its reads of
        # joules continued), which the kernel's puts and gets spare (Actor.script).
        # Called between two steps once the clock is at or past boundary_at (a checkpoint): no
        # actor is ready then, each waits for an action to end.
        self.boundary_at = math.inf
        self.boundary: Callable[[float], None] | None = None
        self.steps = 0
        self.sub_rounds = 0
        self.actors_started = 0
        self.resumptions = 0
        # Of the steps, those the general step took (_step: energy, a network runner, shared
        # links, a solve listener, or the sleeps moving between their dict and their array), and
        # those moves (the plain step takes the others).
        self.general_steps = 0
        self.moves_to_array = 0
        self.moves_from_array = 0

    # ------------------------------------------------------------------ actors
    def start(self, code: ActorCode, host: Any, name: str) -> Actor:
        """A new actor, ready to run in the next sub-round (Actor::create done by maestro)."""
        actor = Actor(code, host, name)
        self._ready.append(actor)
        self.actors_started += 1
        return actor

    def set_clock(self, now: float) -> None:
        self.now = now
        self._on_time(now)

    def has_ready(self) -> bool:
        """Whether an actor is to run before the clock may move."""
        return bool(self._ready)

    def mailbox(self, name: str) -> Mailbox:
        box = self.mailboxes.get(name)
        if box is None:
            box = self.mailboxes[name] = Mailbox()
        return box

    def run(self, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        """Run until no actor can run and no action is left (SimGrid's EngineImpl::run)."""
        reads = self.energy_stamp is not None  # (only with energy do actors read machines' joules)
        # (the plain loop counts its sub-rounds and resumptions here: they join the kernel's when it returns)
        sub_rounds = resumptions = 0
        try:
            while True:
                while self._ready and not reads:  # (the loop below, without reads: every run without energy)
                    ran = self._ready
                    ready = self._ready = []
                    sub_rounds += 1
                    for actor in ran:
                        script = actor.script
                        if script is not None:  # (_scripted, inline: two simcalls of each put and get)
                            if script is _WAIT_NEXT:
                                actor.simcall = ("wait", actor.answer)
                                actor.script = None
                            else:
                                actor.simcall = script
                                actor.script = _WAIT_NEXT
                            actor.answer = None
                            continue
                        self.current = actor
                        resumptions += 1
                        try:
                            actor.simcall = actor.code.send(actor.answer)
                            if actor.simcall is None:  # (ENDED: its code is over, and goes as a returned one's would)
                                actor.alive = False
                                actor.code = None
                        except StopIteration:
                            actor.simcall = None
                            actor.alive = False
                        finally:
                            self.current = None
                        actor.answer = None
                    for actor in ran:
                        call = actor.simcall
                        if call is not None:
                            kind: str = call[0]  # (typed: a compiled kernel compares it as a str)
                            if kind == "answered":  # (_handle's first two cases, inline: most simcalls)
                                actor.simcall = None
                                ready.append(actor)
                            elif kind == "wait":
                                actor.simcall = None
                                comm: Comm = call[1]  # (typed: a compiled kernel reads its fields directly)
                                comm.waiters.append(actor)
                                if comm.done:
                                    self._finish(comm)
                            else:
                                self._handle(actor)  # (a method, not a local bound one: compiled, a native call)
                while self._ready:
                    ran, self._ready = self._ready, []
                    self.sub_rounds += 1
                    if ran[0].reading is not None and (len(ran) == 1 or self._in_lockstep(ran)):
                        self._read_alone(ran[0])
                        for actor in ran[1:]:  # (they read the same machines from the same place)
                            actor.reading = ran[0].reading
                    for actor in ran:  # run_all_actors: each until its next simcall
                        if actor.script is not None:
                            _scripted(actor)
                            continue
                        self.current = actor
                        self.resumptions += 1
                        try:
                            if actor.reading is None or not self._reads(actor):
                                actor.simcall = actor.code.send(actor.answer)
                                while actor.simcall is not None and actor.simcall[0] == "reads":
                                    actor.reading = (actor.simcall[1], 0, actor.simcall[2])
                                    if self._reads(actor):
                                        break
                                    actor.simcall = actor.code.send(None)
                                if actor.simcall is None:  # (ENDED: its code is over, and goes as a returned one's would)
                                    actor.alive = False
                                    actor.code = None
                        except StopIteration:
                            actor.simcall = None
                            actor.alive = False
                        finally:
                            self.current = None
                        actor.answer = None
                    for actor in ran:  # then their simcalls, in that order
                        if actor.simcall is not None:
                            self._handle(actor)
                if self._stopped:
                    return
                sleeping = len(self._sleeps) if self._wide is None else len(self._wide)  # the started sleeps
                if len(self._daemon_sleeps) == sleeping + len(self._comms) and (
                        self.model is None or self.model.next_event() == math.inf):  # SimGrid kills daemons left alone
                    return
                if self.now >= self.boundary_at:  # (a checkpoint: every actor waits for time to pass)
                    boundary: Callable[[float], None] = self.boundary  # type: ignore[assignment]  # (set with boundary_at)
                    boundary(self.now)
                if ((sleeping <= self._wide_beyond if self._wide is None else sleeping >= self._narrow_below) and self.model is None
                        and self.energy_stamp is None and self.link_sharing is None and self.on_solve is None):
                    self._plain_step(time_limit, beyond_limit)
                else:
                    self._step(time_limit, beyond_limit)
        finally:
            self.sub_rounds += sub_rounds
            self.resumptions += resumptions

    # ------------------------------------------------------------------ energy reads
    # An actor that yields ("reads", machines, every) reads these machines' joules in order
    # (`every`: all the machines, in order); each read of a machine not up to date is a simcall
    # (sg_host_get_consumed_energy), the others cost nothing. The kernel runs that loop itself,
    # one simcall per sub-round as the actor would, without resuming the actor for each machine.
    def _reads(self, actor: Actor) -> bool:
        """Go on with the actor's reads: True if one is a simcall now (actor.simcall), False
        when they are done (the actor's code goes on in this sub-round)."""
        machines, index, every = actor.reading  # type: ignore[misc]  # (an actor that reads)
        now = self.now
        if self._all_read_at != now:
            stamp: list[float] = self.energy_stamp  # type: ignore[assignment]  # (actors read only with energy)
            count = len(machines)
            while index < count:
                machine = machines[index]
                index += 1
                if stamp[machine] < now:
                    actor.reading = (machines, index, every)
                    actor.simcall = ("energy", machine)
                    return True
        actor.reading = None
        return False

    def _read_alone(self, actor: Actor) -> None:
        """The only actor ready reads (or all of them, in lockstep): its reads' simcalls follow
        each other with nothing between them, so they are all made now (the sub-rounds they take
        change nothing else)."""
        machines, index, every = actor.reading  # type: ignore[misc]  # (an actor that reads)
        now = self.now
        if self._all_read_at != now:
            stamp: list[float] = self.energy_stamp  # type: ignore[assignment]  # (actors read only with energy)
            if every:  # (the ones before `index` were read at this time too)
                self._all_read_at = now
            else:
                for position in range(index, len(machines)):
                    stamp[machines[position]] = now
            if self.energy_plugin is not None and self.energy_plugin.caught_up != now:
                self.energy_plugin.catch_up(now)
        actor.reading = (machines, len(machines), every)

    @staticmethod
    def _in_lockstep(ran: list[Actor]) -> bool:
        """Whether every actor of this sub-round reads the same machines and is at the same one:
        each sub-round they all make a simcall for the same stale machine, so they finish their
        reads in the same sub-round, in this order, with nothing else running meanwhile: as one
        actor alone does (the jobs that end together and read every machine, with energy)."""
        machines, index, _ = ran[0].reading  # type: ignore[misc]  # (the first reads: the caller checked)
        for actor in ran:
            reading = actor.reading
            if reading is None or reading[0] is not machines or reading[1] != index:
                return False
        return True

    def stop(self) -> None:
        """End the run once the running sub-round is over, whatever still sleeps."""
        self._stopped = True

    def kill(self, actor: Actor) -> bool:
        """Actor::kill: its sleep leaves the started actions at once; False if it had ended."""
        if not actor.alive:
            return False
        actor.alive = False
        actor.script = None
        if actor.sleep is not None:
            if self.energy_stamp is not None:  # its action is cancelled: a state change
                self._stamp(actor.host)
            if self._wide is None:
                self._sleeps.pop(actor.sleep, None)
                self._shortest_sleep = None  # (it may have been the shortest)
            else:
                self._wide.remove(actor.sleep)
            self._daemon_sleeps.discard(actor.sleep)
        if actor in self._ready:
            self._ready.remove(actor)
        actor.code.close()
        return True

    def _handle(self, actor: Actor) -> None:
        call: tuple = actor.simcall  # type: ignore[assignment]  # (an actor with a simcall)
        actor.simcall = None
        kind: str = call[0]  # (typed: a compiled kernel compares it as a str, not as any object)
        # (the most frequent kinds first; the run loop handles "answered" and "wait" itself
        # when no actor reads joules)
        if kind == "put" or kind == "get":
            # Batsim's send_message and receive_message: Mailbox::by_name (answered at once), then
            # isend / irecv, then wait. The actor's code has nothing to do between them, so the
            # kernel makes the last two for it in the sub-rounds that follow (Actor.script); the
            # actor resumes with what the wait answers (a get: the message).
            self._ready.append(actor)
            if actor.alive:  # (killed since it yielded: its code ends at its next resumption, as after by_name)
                actor.script = ("isend", call[1], call[2]) if kind == "put" else ("irecv", call[1])
        elif kind == "isend" or kind == "irecv":  # CommImpl::isend / irecv
            sending = kind == "isend"
            box = self.mailboxes.get(call[1]) or self.mailbox(call[1])
            # The oldest post of the other side matches. (A post waits only while none of the
            # other kind does, so the queue holds one kind at a time: thousands of switching
            # machines' reports pile up for the server without a scan.)
            matched = box.oldest_kind() == ("recv" if sending else "send")
            if matched:
                comm = box.take_oldest()
            else:
                comm = Comm()
                box.post("send" if sending else "recv", comm)
            if sending:
                comm.sender, comm.payload = actor, call[2]
            else:
                comm.receiver = actor
            if matched:
                self._transfer(comm)
            actor.answer = comm
            self._ready.append(actor)
        elif kind == "answered":  # a simcall answered at once (e.g. Mailbox::by_name)
            self._ready.append(actor)
        elif kind == "wait":  # blocking: answered when the transfer ends
            comm = call[1]
            comm.waiters.append(actor)
            if comm.done:
                self._finish(comm)
        elif kind == "sleep":  # blocking: answered when the action ends
            key = actor.sleep = self._next_action
            self._next_action += 1
            if self._wide is None:
                self._sleeps[key] = Sleep(call[1], actor)
                shortest = self._shortest_sleep
                if shortest is not None and call[1] < shortest:
                    self._shortest_sleep = call[1]
            else:
                self._wide.add(key, call[1], actor)
            if len(call) > 2 and call[2]:  # ("sleep", duration, daemon)
                self._daemon_sleeps.add(key)
        elif kind == "execute":  # blocking: a computation of one host, answered when it ends
            # ptask_L07 makes this_actor::execute(flops) a parallel task of one host: remains 1
            # (the whole task), at the rate the solver gives it alone, speed / flops.
            comm = Comm()
            comm.sender = actor  # (the host it computes on)
            comm.waiters.append(actor)
            if self.energy_stamp is not None:  # the plugin's Exec::on_start: the host's joules
                self._stamp(actor.host)
                if self.energy_plugin is not None:  # (its load counts from now on, until it ends)
                    self.energy_plugin.execution_started(actor.host)
            twin = self._fresh_executions.get(call[1])
            if twin is not None:
                if twin.twins is None:
                    twin.twins = []
                twin.twins.append((self._next_action, comm))
            else:
                self._comms[self._next_action] = self._fresh_executions[call[1]] = Transfer(1.0, call[1], 0.0, comm)
            self._next_action += 1
        elif kind == "create":  # the new actor first, then its creator (ActorImpl::start)
            self.actors_started += 1
            self._ready.append(call[1])
            self._ready.append(actor)
        elif kind == "energy":  # answered at once, bringing a machine's joules up to date
            self.energy_stamp[call[1]] = self.now  # type: ignore[index]  # (reads only with energy)
            plugin = self.energy_plugin
            if plugin is not None and plugin.caught_up != self.now:  # (Batsim reads every machine then: all at once)
                plugin.catch_up(self.now)
            self._ready.append(actor)
        elif kind == "set_pstate":  # Host::set_pstate: the plugin's on_speed_change, answered at once
            host, pstate = call[1], call[2]
            if self.energy_stamp is not None:
                self.energy_stamp[host] = self.now
                if self.energy_plugin is not None:
                    self.energy_plugin.set_pstate(host, self.now, pstate)
            self._ready.append(actor)
        else:
            raise AssertionError(f"unknown simcall {kind!r}")

    # ------------------------------------------------------------------ actions
    def _transfer(self, comm: Comm) -> None:
        sender, receiver = comm.sender, comm.receiver
        assert sender is not None and receiver is not None  # (matched; and a compiled kernel reads them as Actors)
        source, destination = sender.host, receiver.host
        known = self._known_routes.get(source)
        if known is None:
            known = self._known_routes[source] = {}
        found = known.get(destination)
        if found is None:
            found = known[destination] = self._route_of(source, destination)
        route: Route = found  # (typed Route, not Route | None: a compiled kernel reads its fields directly)
        remains = 0.0 if route.rate == UNBOUNDED_RATE else 1.0  # nothing to move: L07Action sets 0
        transfer = self._comms[self._next_action] = Transfer(remains, route.rate, route.latency, comm, route)
        self._next_action += 1
        if transfer.active and route.links and self.link_sharing is not None:
            self._share_links(transfer)

    def _share_links(self, transfer: Transfer) -> None:
        """The transfer's variable takes part in the solves from now on (its rate comes from
        the next step's solve)."""
        transfer.slot = self.link_sharing.join(transfer.route)  # type: ignore[union-attr, arg-type]  # (callers check)
        if transfer.slot >= 0:
            self._shared_version = -1

    def _finish(self, comm: Comm) -> None:
        waiters, comm.waiters = comm.waiters, []
        for actor in waiters:
            if actor is comm.receiver:
                actor.answer = comm.payload
            self._ready.append(actor)

    def _advance_clock(self, delta: float, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        if delta < 0:  # only actions that never end: nothing can happen any more
            raise beyond_limit(float("inf"))
        if self.now + delta >= time_limit:
            raise beyond_limit(self.now + delta)
        self.now += delta
        self._on_time(self.now)

    def _transfers_next_end(self, delta: float) -> float:
        """Model::next_occurring_event_full for the transfers: the smallest of `delta` (-1: none
        yet) and each one's time to its end, then L07's latencies."""
        for comm in self._comms.values():
            rate = comm.rate
            if rate > 0:
                value = comm.remains / rate if comm.remains > 0 else 0.0
                if delta < 0 or value < delta:
                    delta = value
            if comm.latency > 0 and (delta < 0 or comm.latency < delta):
                delta = comm.latency
        return delta

    def _advance_transfers(self, delta: float, shared_links: bool) -> list[int]:
        """HostL07Model::update_actions_state for the transfers, `delta` seconds on; the keys of
        those that ended, in creation order. A transfer whose latency is over gets its penalty
        lifted now and its rate from the next solve (`shared_links`: it joins the links' solve)."""
        ended: list[int] = []
        for key, comm in self._comms.items():
            if comm.latency > 0:
                if comm.latency > delta:
                    comm.latency -= delta
                    if comm.latency < SURF_PRECISION:
                        comm.latency = 0.0
                else:
                    comm.latency = 0.0
                if comm.latency <= 0:
                    comm.active = True
                    pending_rate = comm.full_rate
                    if shared_links and comm.route is not None and comm.route.links:
                        self._share_links(comm)
                else:
                    pending_rate = 0.0
                comm.remains -= comm.rate * delta
                if comm.remains < REMAINS_PRECISION:
                    comm.remains = 0.0
                comm.rate = pending_rate
            elif comm.rate:
                comm.remains -= comm.rate * delta
                if comm.remains < REMAINS_PRECISION:
                    comm.remains = 0.0
            if comm.remains <= 0 and comm.active:
                ended.append(key)
        return ended

    def _step(self, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        """One solve(): the next step's length, the clock, every action's update.

        Sleeps and transfers are kept apart (the next step is the smallest of all the same, and
        each action's update is its own); the ended ones are handled in creation order."""
        sleeps, comms, wide = self._sleeps, self._comms, self._wide
        self._shortest_sleep = None  # (this step updates the sleeps without keeping it)
        if wide is None:
            if len(sleeps) > self._wide_beyond:
                wide = self._widen()
        elif len(wide) < self._narrow_below:
            self._narrow()
            wide = None
        self.steps += 1
        self.general_steps += 1
        sharing = self.link_sharing
        if sharing is not None:  # one solve for the tasks and the transfers that share links
            sharing.refresh()
            if sharing.version != self._shared_version:
                self._shared_version = sharing.version
                for comm in comms.values():
                    if comm.slot >= 0:
                        comm.rate = sharing.rate(comm.slot)
        if self.on_solve is not None:
            self.on_solve()
        self._fresh_executions.clear()  # (updated from now on: no more twins for them)
        delta = -1.0
        if wide is not None:
            delta = wide.shortest()
        for sleep in sleeps.values():  # Model::next_occurring_event_full: max durations
            if delta < 0 or sleep.max_duration < delta:
                delta = sleep.max_duration
        delta = self._transfers_next_end(delta)
        model = self.model
        if model is not None and model.stepped:  # its actions' next end counts as the others'
            model_delta = model.next_step()
            if model_delta >= 0 and (delta < 0 or model_delta < delta):
                delta = model_delta
            self._advance_clock(delta, time_limit, beyond_limit)
            if model.move(delta):  # (most steps end nothing of the model's)
                model.step()
        else:
            model_time = math.inf if model is None else model.next_event()
            if model_time < math.inf and (delta < 0 or model_time - self.now <= delta):
                if model_time >= time_limit:
                    raise beyond_limit(model_time)
                start = self.now  # the model moves the clock to its events, up to the others' next end
                model.process(start, delta, time_limit)  # type: ignore[union-attr]  # (a finite time: a model)
                delta = self.now - start
            else:
                self._advance_clock(delta, time_limit, beyond_limit)
        ended_sleeps: list[int] = [] if wide is None else wide.advance(delta)
        for key, sleep in sleeps.items():  # HostL07Model::update_actions_state
            rest = sleep.max_duration - delta
            if rest < SURF_PRECISION:
                rest = 0.0
                ended_sleeps.append(key)
            sleep.max_duration = rest
        ended_comms = self._advance_transfers(delta, sharing is not None)
        # handle_ended_actions: in the order they ended, i.e. of their creation
        ended_transfers: dict[int, Comm] = {}
        twinned = False
        for key in ended_comms:
            action = comms.pop(key)
            if action.slot >= 0:
                sharing.leave(action.slot)  # type: ignore[union-attr]  # (a slot: sharing)
            ended_transfers[key] = action.comm
            if action.twins is not None:
                ended_transfers.update(action.twins)
                twinned = True
        if (ended_sleeps and ended_transfers) or twinned:
            ended = sorted(ended_sleeps + list(ended_transfers))
        else:
            ended = ended_sleeps or ended_comms
        ready = self._ready
        stamps = self.energy_stamp is not None
        for key in ended:
            if wide is None:
                started = sleeps.pop(key, None)
                actor = None if started is None else started.actor
            else:
                actor = wide.remove(key, ended=True)
            if actor is not None:
                self._daemon_sleeps.discard(key)
                actor.sleep = None
                ready.append(actor)
                if stamps:  # the energy plugin updates the hosts of an action that ends
                    self._stamp(actor.host)
            else:
                transfer = ended_transfers[key]
                transfer.done = True
                if stamps:
                    sender: Actor = transfer.sender  # type: ignore[assignment]  # (a transfer or an execution has one)
                    self._stamp(sender.host)
                    if transfer.receiver is not None:
                        self._stamp(transfer.receiver.host)
                    elif self.energy_plugin is not None and type(sender.host) is int:
                        self.energy_plugin.execution_ended(sender.host)  # an execution: its load ends
                self._finish(transfer)

    def _plain_step(self, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        """_step when nothing but sleeps and transfers is there (no energy, no network runner, no
        shared links, no solve listener; the sleeps in their dict, or in their array with no move
        between the two due): most steps of most runs. The same arithmetic in the same order; only
        the branches for what is absent are left out."""
        sleeps, comms, wide = self._sleeps, self._comms, self._wide
        self.steps += 1
        if self._fresh_executions:
            self._fresh_executions.clear()  # (updated from now on: no more twins for them)
        shortest = math.inf
        if wide is None:
            kept = self._shortest_sleep  # Model::next_occurring_event_full: max durations
            if kept is not None:
                shortest = kept
            else:
                for sleep in sleeps.values():
                    if sleep.max_duration < shortest:
                        shortest = sleep.max_duration
            delta = shortest if sleeps else -1.0
        else:
            delta = wide.shortest()
        if comms:
            delta = self._transfers_next_end(delta)
        if delta < 0:  # only actions that never end: nothing can happen any more
            raise beyond_limit(float("inf"))
        now = self.now + delta
        if now >= time_limit:
            raise beyond_limit(now)
        self.now = now
        self._on_time(now)
        ended_sleeps: list[int] = []
        if wide is not None:
            ended_sleeps = wide.advance(delta)
        elif shortest - delta >= SURF_PRECISION:  # (no sleep ends: the shortest stays so)
            self._shortest_sleep = shortest - delta
            for sleep in sleeps.values():  # HostL07Model::update_actions_state
                sleep.max_duration -= delta
        else:
            self._shortest_sleep = None
            for key, sleep in sleeps.items():
                rest = sleep.max_duration - delta
                if rest < SURF_PRECISION:
                    rest = 0.0
                    ended_sleeps.append(key)
                sleep.max_duration = rest
        ended_comms = self._advance_transfers(delta, False) if comms else []
        # handle_ended_actions: in the order they ended, i.e. of their creation
        ready = self._ready
        daemon_sleeps = self._daemon_sleeps
        if not ended_comms:  # (the sleeps alone: their keys are in creation order already)
            for key in ended_sleeps:
                if wide is None:  # (an item and a del: a compiled kernel calls dict.pop as any object's method)
                    actor = sleeps[key].actor
                    del sleeps[key]
                else:
                    actor = wide.remove(key, ended=True)
                if daemon_sleeps:
                    daemon_sleeps.discard(key)
                actor.sleep = None
                ready.append(actor)
            return
        ended_transfers: dict[int, Comm] = {}
        twinned = False
        for key in ended_comms:
            action = comms[key]
            del comms[key]
            ended_transfers[key] = action.comm
            if action.twins is not None:
                ended_transfers.update(action.twins)
                twinned = True
        ended = sorted(ended_sleeps + list(ended_transfers)) if ended_sleeps or twinned else ended_comms
        for key in ended:
            transfer = ended_transfers.get(key)
            if transfer is None:  # a sleep's
                if wide is None:
                    actor = sleeps[key].actor
                    del sleeps[key]
                else:
                    actor = wide.remove(key, ended=True)
                daemon_sleeps.discard(key)
                actor.sleep = None
                ready.append(actor)
            else:
                transfer.done = True
                self._finish(transfer)

    def _widen(self) -> "SleepArray":
        from joulesim.simulator.engine.sleep_array import SleepArray  # (numpy: only runs that need it)

        wide = self._wide = SleepArray()
        self.moves_to_array += 1
        for key, sleep in self._sleeps.items():
            wide.add(key, sleep.max_duration, sleep.actor)
        self._sleeps.clear()
        self._shortest_sleep = None
        return wide

    def _narrow(self) -> None:
        self.moves_from_array += 1
        wide: SleepArray = self._wide  # type: ignore[assignment]  # (called while there is one)
        for key, duration, actor in wide.items():  # (in creation order, as the dict keeps them)
            self._sleeps[key] = Sleep(duration, actor)
        self._wide = None
        self._shortest_sleep = None

    def stamp(self, host: Any) -> None:
        """The energy plugin brings a machine's joules up to date now (a model's action on it ended)."""
        if self.energy_stamp is not None:
            self._stamp(host)

    def _stamp(self, host: Any) -> None:
        """The energy plugin brings a machine's joules up to date now (the master is no machine)."""
        if type(host) is int:
            self.energy_stamp[host] = self.now  # type: ignore[index]  # (callers check)
            if self.energy_plugin is not None:
                self.energy_plugin.update(host, self.now)
