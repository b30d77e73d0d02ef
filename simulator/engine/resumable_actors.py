"""Batsim's actors written down at a checkpoint and made again when a run resumes.

An actor's code is a Python generator, whose place in its code cannot be saved. But at a step
boundary of the kernel (every actor waiting for time to pass: a sleep, an execution, a message
on its way) each actor waits at one of a few places, marked in batsim_actors.py with a comment
`# (resumable: NAME)` on the line that waits. What the actor does from such a place on depends
only on a few of its local variables: `describe` names the place and takes them, and `resumed`
makes a generator that waits there (its first `yield`, made at once when it is read back, stands
for the simcall the kernel already holds) and then goes on as the original would.

The marked generators are the actors' own or reached from them by `yield from` as a tail call
(nothing follows it in the caller), so that the place's continuation is the actor's whole future.
An actor waiting anywhere else cannot be checkpointed, and `describe` says where it waits.
"""

from __future__ import annotations

import inspect
import re
import types
from typing import TYPE_CHECKING, Any

from joulesim.simulator.engine.batsim_actors import SERVER

if TYPE_CHECKING:
    from joulesim.simulator.engine.batsim_actors import BatsimActors

#: The locals each place's continuation needs: (function, place) -> names.
_NEEDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("_switching", "switched"): ("host", "target", "arrive", "taken"),
    ("_switched", "done"): (), ("_killer", "done"): (), ("_job_report", "done"): (), ("_put", "done"): (),
    ("_ready_after", "done"): (), ("_submit_from", "done"): (),
    ("_serve_from", "served"): (),
    ("_decisions_from", "stamped"): ("reply", "now", "index", "stamped", "decision", "context"),
    ("_decisions_from", "decided"): ("reply", "now", "index", "stamped"),
    ("_ready_after", "thought"): (),
    ("_job_submitter", "greeted"): ("index",),
    ("_submit_from", "sent"): ("index", "position", "current"),
    ("_submit_from", "waited"): ("index", "position"),
    ("_submit_from", "last"): (),
    ("_timed", "slept"): ("callback", "value", "reads", "job_key"),
    ("_timed", "woke"): ("callback", "value"),
    ("_timed_end", "reported"): ("on_exit",),
}
_MARK = re.compile(r"#\s*\(resumable: (\w+)\)")
_PLACES: dict[tuple[str, int], str] = {}  # (function, line) -> place


class NotResumable(Exception):
    """An actor waiting where a checkpoint cannot say (the message names the place)."""


def _places(actors_class: type) -> dict[tuple[str, int], str]:
    """The marked lines of BatsimActors' generators and of `_resume` (read from the source once)."""
    if not _PLACES:
        functions = [(name, f) for name, f in inspect.getmembers(actors_class, inspect.isfunction)] + [("_resume", _resume)]
        for name, function in functions:
            if not inspect.isgeneratorfunction(function):
                continue
            lines, first = inspect.getsourcelines(function)
            for offset, line in enumerate(lines):
                found = _MARK.search(line)
                if found:
                    _PLACES[(name, first + offset)] = found.group(1)
    return _PLACES


def describe(actors: "BatsimActors", code: types.GeneratorType) -> tuple[str, str, dict[str, Any]]:
    """(function, place, the locals its continuation needs) of an actor's suspended code."""
    places = _places(type(actors))
    generator: Any = code
    while isinstance(generator, types.GeneratorType):
        frame = generator.gi_frame
        if frame is None:
            raise NotResumable(f"an actor's code ({code.__qualname__}) that has ended")
        name = generator.gi_code.co_name
        place = places.get((name, frame.f_lineno))
        if name == "_resume" and place is not None:  # (an actor resumed before, not yet gone on)
            values = frame.f_locals["values"]
            if place == "again":
                return frame.f_locals["function"], frame.f_locals["place"], values
            if place == "decided":
                return "_decisions_from", "decided", {k: values[k] for k in ("reply", "now", "index", "stamped")}
            return "_put", "done", {}
        if place is not None:
            needs = _NEEDS.get((name, place))
            if needs is None:
                raise NotResumable(f"the place {place} of {name} has no continuation")
            return name, place, {local: frame.f_locals[local] for local in needs}
        generator = generator.gi_yieldfrom
    raise NotResumable(f"an actor ({code.__qualname__}) waiting at line {code.gi_frame.f_lineno if code.gi_frame else '?'}"
                       " of its code, a place a checkpoint cannot hold yet")


_PENDING = ("pending",)  # (what a resumed actor's first yield gives: the kernel holds the real simcall)


def resumed(actors: "BatsimActors", function: str, place: str, values: dict[str, Any]) -> types.GeneratorType:
    """A generator that waits where the described actor waited and goes on as it would; its first
    yield is made here."""
    if (function, place) not in _NEEDS or set(values) != set(_NEEDS[(function, place)]):
        raise NotResumable(f"no continuation {function}:{place} with these values")
    code = _resume(actors, function, place, values)
    next(code)
    return code


def _resume(actors: "BatsimActors", function: str, place: str, values: dict[str, Any]):
    answer = yield _PENDING  # (resumable: again)
    key = (function, place)
    if place == "done":
        return
    if key == ("_switching", "switched"):
        yield from actors._switched(values["host"], values["target"], values["arrive"], values["taken"])
    elif key == ("_serve_from", "served"):
        yield from actors._serve_from(answer)
    elif key == ("_decisions_from", "stamped"):
        yield ("put", SERVER, ("decision", values["decision"], values["context"]))  # (resumable: decided)
        yield from actors._decisions_from(values["reply"], values["now"], values["index"] + 1, values["stamped"])
    elif key == ("_decisions_from", "decided"):
        yield from actors._decisions_from(values["reply"], values["now"], values["index"] + 1, values["stamped"])
    elif key == ("_ready_after", "thought"):
        yield ("put", SERVER, ("ready",))  # (resumable: done)
    elif key == ("_job_submitter", "greeted"):
        yield from actors._submit_from(values["index"], 0, actors.kernel.now)
    elif key == ("_submit_from", "sent"):
        yield from actors._submit_from(values["index"], values["position"], values["current"])
    elif key == ("_submit_from", "waited"):
        yield from actors._submit_from(values["index"], values["position"], actors.kernel.now)
    elif key == ("_submit_from", "last"):
        yield from actors._put(("bye",))
    elif key == ("_timed", "slept"):
        yield from actors._timed_end(values["callback"], values["value"], values["reads"], values["job_key"])
    elif key == ("_timed", "woke"):
        values["callback"](values["value"])
        yield from actors._creations()
    elif key == ("_timed_end", "reported"):
        for action in values["on_exit"]:
            action()
