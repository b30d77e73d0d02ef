"""Another decider takes over a simulation under way (`joulesim.Simulation.fork(decider=...)`).

A decider learns a simulation from its messages, from SIMULATION_BEGINS on; one that arrives
at time t has missed them. It is told the present instead, with the next message the simulator
sends: SIMULATION_BEGINS alone first (as Batsim sends it: deciders set up on it; every machine is
then on and available, see below), then, at the head of that message, JOB_RUNNING for each running job (joulesim's, not Batsim's: its job, its
allocation and its start, in start order; a decider takes them over in `on_job_running`), and
JOB_SUBMITTED for each waiting job, in submission order. Its replies apply from then on, as the
old decider's did; the old decider is dropped.

Where the present cannot be told that way, the takeover is refused, with the reason: machines
switched off or switching, or unavailable (SIMULATION_BEGINS has no state for them that every
decider reads), decisions or calls the old decider asked for later, a reply not yet given (a
decider "thinking"), events on their way to the old decider, or dynamic jobs and workflows (the
new decider would have to know what the old one registered).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.interval_set import format_runs
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.simulator.workload.job_record import RUNNING, SUBMITTED

if TYPE_CHECKING:
    from joulesim.protocol.decider import Decider
    from joulesim.simulator.engine.simulation import Simulation


def take_over(sim: "Simulation", decider: "Decider") -> None:
    """From the next message on, `decider` decides `sim` (see the module's docstring)."""
    link = sim.link
    if link.calls == 0:  # nothing said yet: the new decider hears everything from the start
        link.transport = InProcessRequester(decider)
        return
    reason = refusal(sim)
    if reason:
        raise JoulesimError(reason)
    records = sim.records.values()
    running = sorted((r for r in records if r.state == RUNNING), key=lambda r: r.start)
    waiting = [r for r in records if r.state == SUBMITTED]  # (in submission order: the workloads')
    waiting.sort(key=lambda r: r.job.subtime)
    events: list[dict[str, Any]] = [{"type": "SIMULATION_BEGINS", "data": sim._simulation_begins_data()}]
    events += [{"type": "JOB_RUNNING", "data": {**sim.job_data(r), "alloc": format_runs(r.alloc), "start": r.start}}
               for r in running]
    events += [{"type": "JOB_SUBMITTED", "data": sim.job_data(r)} for r in waiting]
    link.transport = InProcessRequester(decider)
    link.takeover = events


def refusal(sim: "Simulation") -> str:
    """Why another decider cannot take `sim` over now ("" when it can)."""
    if sim.link.calls == 0:
        return ""
    if not isinstance(sim.link.transport, InProcessRequester):
        return "only a simulation whose decider runs in the simulator's process can change decider"
    reason = _why_not(sim)
    return f"the decider cannot change at t={sim.env._now:g}: {reason}" if reason else ""


def _why_not(sim: "Simulation") -> str:
    config = sim.config
    if sim.switching.nb_off or sim.switching.in_progress:
        return "some machines are switched off or switching (a new decider would not know their states)"
    if sim.nb_unavailable:
        return "some machines are unavailable (a new decider would not know which)"
    # (with Batsim's actors, a reply's decisions reach the server one by one after the call, and
    # the decider is free again once its SCHED_READY has)
    replying = not sim.decider_free if sim.actors is None else not sim.actors.sched_ready
    if sim.scheduled_decisions or sim.pending_calls or replying:
        return ("the old decider has decisions or calls due later, or has not replied yet (fork at an instant "
                "where it has none)")
    if sim.pending or (sim.actors is not None and sim.actors.writer):
        return "events are on their way to the old decider (fork a moment later)"
    if config.dynamic_jobs or config.workflows or sim.hierarchy is not None or sim.host_running is not None:
        return ("dynamic jobs, workflows, node platforms and shared machines are not handed over to another "
                "decider")
    return ""
