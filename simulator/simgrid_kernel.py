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

The arithmetic is the same IEEE double arithmetic, in the same order, so the clock values are
SimGrid's to the last bit (for what is modelled here: sleeps, and messages alone on their
links). Actors are Python generators that yield simcalls.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any, Callable, Generator

SURF_PRECISION = 1e-9  # SimGrid's surf/precision
REMAINS_PRECISION = 1e-5 * 1e-9  # maxmin/precision x surf/precision (Action::update_remains)
NO_MAX_DURATION = -1.0
# A ptask with nothing to compute or move: SimGrid's fair-bottleneck solver gives its variable
# DBL_MAX, and the action ends in a step of length 0.
UNBOUNDED_RATE = sys.float_info.max

ActorCode = Generator[tuple, Any, None]


class Action:
    """One started action of the ptask_L07 host model (a sleep or a transfer)."""

    __slots__ = ("max_duration", "remains", "rate", "full_rate", "latency", "active", "on_end")

    def __init__(self, max_duration: float, remains: float, rate: float, latency: float,
                 on_end: Callable[[], None]):
        self.max_duration = max_duration
        self.remains = remains
        self.full_rate = rate  # the solver's value once the latency has elapsed
        self.latency = latency
        # A sleep's variable has penalty 0, as has a transfer's during its latency: no rate.
        self.active = rate > 0 and latency <= 0
        self.rate = rate if self.active else 0.0
        self.on_end = on_end


class Route:
    """What a 1-byte message crosses: its latency, and the rate the solver gives it alone."""

    __slots__ = ("latency", "rate")

    def __init__(self, latency: float, rate: float):
        self.latency = latency
        self.rate = rate


class Comm:
    """A send matched (or waiting to be matched) with a receive on a mailbox."""

    __slots__ = ("sender", "receiver", "payload", "done", "waiters")

    def __init__(self) -> None:
        self.sender: Actor | None = None
        self.receiver: Actor | None = None
        self.payload: Any = None
        self.done = False
        self.waiters: list[Actor] = []


class Actor:
    __slots__ = ("code", "host", "simcall", "answer", "name", "sleep", "alive")

    def __init__(self, code: ActorCode, host: Any, name: str):
        self.code = code
        self.sleep: int | None = None  # the key of its sleep action while it sleeps
        self.alive = True
        self.host = host
        self.simcall: tuple | None = None
        self.answer: Any = None
        self.name = name


class Mailbox:
    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: deque[tuple[str, Comm]] = deque()  # ("send" | "recv", comm), in posting order

    def empty(self) -> bool:
        return not self.queue

    def take(self, kind: str) -> Comm | None:
        for index, (posted, comm) in enumerate(self.queue):
            if posted == kind:
                del self.queue[index]
                return comm
        return None


class Kernel:
    """The clock, the started actions, the actors and the mailboxes."""

    def __init__(self, route_of: Callable[[Any, Any], Route], on_time: Callable[[float], None]):
        self.now = 0.0
        self._route_of = route_of  # (source host, destination host) -> Route
        self._on_time = on_time  # told each new clock value
        self._actions: dict[int, Action] = {}  # creation order, as SimGrid's started-action set
        self._daemon_sleeps: set[int] = set()  # sleeps of daemon actors: they keep no run going
        self._next_action = 0
        self._ready: list[Actor] = []
        self.mailboxes: dict[str, Mailbox] = {}
        self.current: Actor | None = None  # the actor running now (None: maestro)
        self._stopped = False

    # ------------------------------------------------------------------ actors
    def start(self, code: ActorCode, host: Any, name: str) -> Actor:
        """A new actor, ready to run in the next sub-round (Actor::create done by maestro)."""
        actor = Actor(code, host, name)
        self._ready.append(actor)
        return actor

    def mailbox(self, name: str) -> Mailbox:
        box = self.mailboxes.get(name)
        if box is None:
            box = self.mailboxes[name] = Mailbox()
        return box

    def run(self, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        """Run until no actor can run and no action is left (SimGrid's EngineImpl::run)."""
        while True:
            while self._ready:
                ran, self._ready = self._ready, []
                for actor in ran:
                    self._resume(actor)
                for actor in ran:
                    if actor.simcall is not None:
                        self._handle(actor)
            if self._stopped:
                return
            if len(self._daemon_sleeps) == len(self._actions):  # SimGrid kills daemons left alone
                return
            self._step(time_limit, beyond_limit)

    def stop(self) -> None:
        """End the run once the running sub-round is over, whatever still sleeps."""
        self._stopped = True

    def kill(self, actor: Actor) -> bool:
        """Actor::kill: its sleep leaves the started actions at once; False if it had ended."""
        if not actor.alive:
            return False
        actor.alive = False
        if actor.sleep is not None:
            self._actions.pop(actor.sleep, None)
            self._daemon_sleeps.discard(actor.sleep)
        if actor in self._ready:
            self._ready.remove(actor)
        actor.code.close()
        return True

    def _resume(self, actor: Actor) -> None:
        self.current = actor
        try:
            actor.simcall = actor.code.send(actor.answer)
        except StopIteration:
            actor.simcall = None
            actor.alive = False
        finally:
            self.current = None
        actor.answer = None

    def _handle(self, actor: Actor) -> None:
        call = actor.simcall
        kind = call[0]
        if kind == "sleep":  # blocking: answered when the action ends
            actor.sleep = self._add_action(Action(call[1], 1.0, 0.0, 0.0, lambda: self._wake(actor)))
            if len(call) > 2 and call[2]:  # ("sleep", duration, daemon)
                self._daemon_sleeps.add(actor.sleep)
        elif kind == "isend":
            box = self.mailbox(call[1])
            comm = box.take("recv")
            if comm is None:
                comm = Comm()
                box.queue.append(("send", comm))
                comm.sender, comm.payload = actor, call[2]
            else:
                comm.sender, comm.payload = actor, call[2]
                self._transfer(comm)
            actor.answer = comm
            self._ready.append(actor)
        elif kind == "irecv":
            box = self.mailbox(call[1])
            comm = box.take("send")
            if comm is None:
                comm = Comm()
                box.queue.append(("recv", comm))
                comm.receiver = actor
            else:
                comm.receiver = actor
                self._transfer(comm)
            actor.answer = comm
            self._ready.append(actor)
        elif kind == "wait":
            comm = call[1]
            comm.waiters.append(actor)
            if comm.done:
                self._finish(comm)
        elif kind == "answered":  # a simcall answered at once (e.g. Mailbox::by_name)
            self._ready.append(actor)
        elif kind == "create":  # the new actor first, then its creator (ActorImpl::start)
            self._ready.append(call[1])
            self._ready.append(actor)
        else:
            raise AssertionError(f"unknown simcall {kind!r}")
        actor.simcall = None

    # ------------------------------------------------------------------ actions
    def _add_action(self, action: Action) -> int:
        key = self._next_action
        self._actions[key] = action
        self._next_action += 1
        return key

    def _wake(self, actor: Actor) -> None:
        self._daemon_sleeps.discard(actor.sleep)
        actor.sleep = None
        self._ready.append(actor)

    def _transfer(self, comm: Comm) -> None:
        route = self._route_of(comm.sender.host, comm.receiver.host)
        remains = 0.0 if route.rate == UNBOUNDED_RATE else 1.0  # nothing to move: L07Action sets 0
        self._add_action(Action(NO_MAX_DURATION, remains, route.rate, route.latency, lambda: self._comm_ends(comm)))

    def _comm_ends(self, comm: Comm) -> None:
        comm.done = True
        self._finish(comm)

    def _finish(self, comm: Comm) -> None:
        waiters, comm.waiters = comm.waiters, []
        for actor in waiters:
            if actor is comm.receiver:
                actor.answer = comm.payload
            self._ready.append(actor)

    def _step(self, time_limit: float, beyond_limit: Callable[[float], Exception]) -> None:
        """One solve(): the next step's length, the clock, every action's update."""
        actions = self._actions
        delta = -1.0
        for action in actions.values():  # Model::next_occurring_event_full
            rate = action.rate
            if rate > 0:
                value = action.remains / rate if action.remains > 0 else 0.0
                if delta < 0 or value < delta:
                    delta = value
            if action.max_duration >= 0 and (delta < 0 or action.max_duration < delta):
                delta = action.max_duration
        for action in actions.values():  # HostL07Model::next_occurring_event: latencies
            if action.latency > 0 and (delta < 0 or action.latency < delta):
                delta = action.latency
        if delta < 0:  # only actions that never end: nothing can happen any more
            raise beyond_limit(float("inf"))
        if self.now + delta >= time_limit:
            raise beyond_limit(self.now + delta)
        self.now += delta
        self._on_time(self.now)
        ended: list[int] = []
        for key, action in actions.items():  # HostL07Model::update_actions_state
            if action.latency > 0:
                if action.latency > delta:
                    action.latency -= delta
                    if action.latency < SURF_PRECISION:
                        action.latency = 0.0
                else:
                    action.latency = 0.0
                if action.latency <= 0:
                    # The penalty goes to 1 now; the rate it gets comes from the next solve.
                    action.active = True
                    pending_rate = action.full_rate
                else:
                    pending_rate = 0.0
                action.remains -= action.rate * delta
                if action.remains < REMAINS_PRECISION:
                    action.remains = 0.0
                action.rate = pending_rate
            elif action.rate:
                action.remains -= action.rate * delta
                if action.remains < REMAINS_PRECISION:
                    action.remains = 0.0
            if action.max_duration != NO_MAX_DURATION:
                action.max_duration -= delta
                if action.max_duration < SURF_PRECISION:
                    action.max_duration = 0.0
            if (action.remains <= 0 and action.active) or (
                    action.max_duration != NO_MAX_DURATION and action.max_duration <= 0):
                ended.append(key)
        for key in ended:  # handle_ended_actions: in the order they ended
            actions.pop(key).on_end()
