"""Power states of the compute machines and SET_RESOURCE_STATE, with Batsim's semantics.

A machine is ON (idle or computing, in a computation pstate), SWITCHING_OFF, SLEEPING or
SWITCHING_ON. Sleep pstates come with two virtual pstates (platform `sleep_pstates`
"S:OFF:ON"): a switch-off passes through OFF and a switch-on through ON, each for one flop
at that pstate's speed (1/speed seconds) at its wattage. Changes between computation
pstates are instantaneous. RESOURCE_STATE_CHANGED is sent once, when every machine of a
request has arrived. This module checks the request against the machines' state and
explains any refusal; the shape of the decision was validated already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import DecisionError
from joulesim.protocol.interval_set import canonical_runs, expand_runs
from joulesim.simulator.output.machine_states import IDLE, SLEEPING, SWITCHING_OFF, SWITCHING_ON

if TYPE_CHECKING:
    from joulesim.simulator.engine.decisions import DecisionContext
    from joulesim.simulator.engine.simulation import Simulation

# Power states of one machine.
ON, GOING_OFF, ASLEEP, GOING_ON = range(4)
_CATEGORY_OF_POWER_STATE = {ON: IDLE, GOING_OFF: SWITCHING_OFF, ASLEEP: SLEEPING, GOING_ON: SWITCHING_ON}
_DESCRIPTION = {ON: "on", GOING_OFF: "switching off", ASLEEP: "sleeping", GOING_ON: "switching on"}


class _Request:
    """One SET_RESOURCE_STATE: answered when its last machine arrives."""

    __slots__ = ("resources", "state", "remaining", "hosts")

    def __init__(self, resources: str, state: int, hosts: list[int]):
        self.resources = resources
        self.state = state
        self.remaining = len(hosts)
        self.hosts = hosts  # ascending


class MachineSwitching:
    def __init__(self, sim: "Simulation"):
        self.sim = sim
        hosts = sim.hosts
        # Per host: sleep pstate -> (switch-off, switch-on) virtual pstates; all virtual pstates.
        # (Read-only: hosts without sleep pstates share one empty dict and set, which keeps
        # the start of a run cheap on platforms of many such hosts.)
        no_sleep: dict = {}
        no_virtual: frozenset = frozenset()
        self._sleep = [{s.sleep: s for s in h.sleep_pstates} if h.sleep_pstates else no_sleep for h in hosts]
        self._virtual = [{p for s in h.sleep_pstates for p in (s.switch_off, s.switch_on)} if h.sleep_pstates
                         else no_virtual for h in hosts]
        self.power_state = [ASLEEP if h.pstate in self._sleep[i] else ON for i, h in enumerate(hosts)]
        for i, h in enumerate(hosts):
            if h.pstate in self._virtual[i]:
                raise InputError(sim.config.platform.source, f"host {h.name}, pstate",
                                 f"starts in pstate {h.pstate}, a virtual switching pstate",
                                 "start it in a computation or a sleep pstate")
        # True while a host is not on (sleeping or switching): it cannot run jobs. A list beside
        # power_state so that EXECUTE_JOB checks whole intervals with slices; nb_off lets it
        # skip the check when every host is on.
        self.host_off = [state != ON for state in self.power_state]
        self.nb_off = self.host_off.count(True)
        self.arrival_time = [0.0] * len(hosts)  # when a switching machine arrives
        self.in_progress = 0  # requests with machines still switching
        # With Batsim's actors: each switching machine's (hosts, target pstate, state, request).
        self._switch_of: dict[int, tuple[list[int], int, int, _Request]] = {}
        self.nb_machine_switches = 0
        self.nb_grouped_switches = 0

    def describe(self, host: int) -> str:
        state = self.power_state[host]
        text = _DESCRIPTION[state]
        if state in (GOING_OFF, GOING_ON):
            text += f" until t={self.arrival_time[host]:g}"
        return text

    def category(self, host: int) -> int:
        """The machine-state category of a host, availability and jobs aside."""
        return _CATEGORY_OF_POWER_STATE[self.power_state[host]]

    # ------------------------------------------------------------------ requests
    def request(self, data: dict[str, Any], context: "DecisionContext") -> None:
        sim = self.sim
        runs, _, _ = canonical_runs(data["resources"])  # the reply's validation bounded its length
        if not runs:
            raise DecisionError(f"{context}: resources is empty: name the machines to switch, e.g. "
                                "\"0-3\" (a request for no machine would never be answered)")
        if runs[-1][1] >= sim.nb_hosts:  # before expanding: the ids may be huge
            raise DecisionError(f"{context}: resources '{data['resources']}' name hosts outside "
                                f"0-{sim.nb_hosts - 1}")
        hosts = expand_runs(runs)  # ascending, distinct
        target = int(data["state"])
        kinds = self._check_all(hosts, target, context)  # all checked before any change
        now = sim.env._now
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(hosts)
        request = _Request(data["resources"], target, hosts)
        # As Batsim writes them: the request's machines go to -2 (towards a sleep pstate) or -1
        # (towards a computation pstate) now, and to the target pstate when the last one is there.
        towards_sleep = target in self._sleep[hosts[0]]
        actors = sim.actors
        if actors is not None:  # server_on_pstate_modification writes a row of the energy trace first
            actors.read_energy()
        self._record_request(now, hosts, -2 if towards_sleep else -1)
        instant = [h for h, kind in zip(hosts, kinds) if kind == "instant"]
        if instant:
            self._arrive(instant, target, ON, request, notify=False)
        # Transitions: into the virtual pstate now, grouped by kind and duration for the arrival.
        # Switching hosts run no job, so their category is their power state's (or unavailable).
        groups: dict[tuple[str, int, float], list[int]] = {}
        host_pstate, host_off, power_state = sim.host_pstate, self.host_off, self.power_state
        for host, kind in zip(hosts, kinds):
            if kind == "instant":
                continue
            if kind == "off":
                virtual = self._sleep[host][target].switch_off
                power_state[host] = GOING_OFF
            else:
                virtual = self._sleep[host][host_pstate[host]].switch_on
                power_state[host] = GOING_ON
            host_pstate[host] = virtual
            if not host_off[host]:
                host_off[host] = True
                self.nb_off += 1
            duration = 1.0 / sim.hosts[host].speeds[virtual]
            self.arrival_time[host] = now + duration
            groups.setdefault((kind, virtual, duration), []).append(host)
        if actors is not None:  # (simcalls the server makes once this handler is done)
            self._server_simcalls(hosts, kinds, request)
        if not groups:
            if request.remaining == 0:
                self._notify(request)
            sim.machines.write_row(now)  # Batsim's row after each SET_RESOURCE_STATE
            return
        self.in_progress += 1
        for (kind, virtual, duration), group in groups.items():
            if kind == "off":
                sim.machines.set_state(now, group, SWITCHING_OFF)
                arrival = (group, target, ASLEEP, request)
            else:
                sim.machines.set_state(now, group, SWITCHING_ON)
                arrival = (group, target, ON, request)
            self._set_static_watts(now, virtual, group)
            if actors is None:
                sim.at(now + duration, self._transition_ends, arrival)
            else:
                for host in group:
                    self._switch_of[host] = arrival
        sim.machines.write_row(now)  # Batsim's row after each SET_RESOURCE_STATE

    def _server_simcalls(self, hosts: list[int], kinds: list[str], request: _Request) -> None:
        """With Batsim's actors, what the server does for each machine in order: a pstate change
        at once (a simcall), or an actor that computes the switch's flop (switch_machine); and
        the energy trace's row if the request is answered at once."""
        sim = self.sim
        actors = sim.actors
        for host, kind in zip(hosts, kinds):
            if kind == "instant":
                actors.set_pstate_now(host)
            else:
                actors.switch_machine(host, sim.host_pstate[host], request.state, self._host_arrives,
                                      self._host_reported)
        if request.remaining == 0:
            actors.read_energy()

    def _check_all(self, hosts: list[int], target: int, context: "DecisionContext") -> list[str]:
        """The kind of change of each host; the usual cases are decided inline, anything else
        (including every refusal) goes through `_check`, which explains."""
        power_state, host_job, sleeps_of, hosts_of = self.power_state, self.sim.host_job, self._sleep, self.sim.hosts
        kinds = []
        for host in hosts:
            state = power_state[host]
            if target in sleeps_of[host]:
                if state == ON and host_job[host] is None:
                    kinds.append("off")
                    continue
            elif state == ASLEEP and target < len(hosts_of[host].speeds) and target not in self._virtual[host]:
                kinds.append("on")
                continue
            kinds.append(self._check(host, target, context))
        return kinds

    def _check(self, host: int, target: int, context: "DecisionContext") -> str:
        """'instant', 'off' or 'on' for this host, or a DecisionError explaining the refusal."""
        sim = self.sim
        platform_host = sim.hosts[host]
        nb = len(platform_host.speeds)
        if not 0 <= target < nb:
            raise DecisionError(f"{context}: host {host} ({platform_host.name}) has no pstate {target}: "
                                f"its pstates are 0-{nb - 1}")
        if target in self._virtual[host]:
            raise DecisionError(f"{context}: pstate {target} of host {host} is a virtual switching pstate: "
                                "ask for the sleep pstate to switch a machine off, or for a computation "
                                "pstate to switch it on")
        state = self.power_state[host]
        if state in (GOING_OFF, GOING_ON):
            raise DecisionError(f"{context}: host {host} is {self.describe(host)}: wait for its "
                                "RESOURCE_STATE_CHANGED before changing its state again")
        sleeps = self._sleep[host]
        if target in sleeps:
            if state == ASLEEP:
                raise DecisionError(f"{context}: host {host} is already sleeping (pstate "
                                    f"{sim.host_pstate[host]}): sleep -> sleep is not allowed; switch "
                                    "it on to a computation pstate first")
            running = sim.host_job[host]
            if running is not None:
                raise DecisionError(f"{context}: cannot switch off host {host}: it is computing job "
                                    f"{running.job.id} (started at t={running.start:g}); switch off "
                                    "idle machines only, or kill the job first")
            return "off"
        if state == ASLEEP:
            return "on"
        return "instant"

    # ------------------------------------------------------------------ arrivals
    def _transition_ends(self, item: tuple[list[int], int, int, _Request]) -> None:
        hosts, final_pstate, final_state, request = item
        self._arrive(hosts, final_pstate, final_state, request, notify=True)

    def _host_arrives(self, host: int) -> None:
        """A switching machine's actor has computed its flop: the machine is in its target pstate."""
        hosts, final_pstate, final_state, _ = self._switch_of[host]
        self._hosts_reach([host], final_pstate, final_state)

    def _host_reported(self, host: int) -> None:
        """The server takes a machine's report (server_on_switched): its request is answered
        once its last machine is there."""
        request = self._switch_of.pop(host)[3]
        if request.remaining == 1:  # mark_switch_as_done writes a row of the energy trace
            self.sim.actors.read_energy()
        self._count_arrivals(request, 1, notify=True)

    def _arrive(self, hosts: list[int], pstate: int, power_state: int, request: _Request, notify: bool) -> None:
        """`hosts` (ascending, all in the same power state) reach `pstate` and `power_state`."""
        self._hosts_reach(hosts, pstate, power_state)
        self._count_arrivals(request, len(hosts), notify)

    def _hosts_reach(self, hosts: list[int], pstate: int, power_state: int) -> None:
        sim = self.sim
        now = sim.env._now
        before = self.power_state[hosts[0]]
        speeds, host_pstate, host_speed, states = sim.hosts, sim.host_pstate, sim.host_speed, self.power_state
        for host in hosts:
            host_pstate[host] = pstate
            host_speed[host] = speeds[host].speeds[pstate]
            states[host] = power_state
        simgrid = sim.energy.simgrid if sim.energy is not None else None
        if simgrid is not None:  # (Batsim's server sets a computation pstate at once, before its row)
            for host in hosts:
                simgrid.set_current(host, pstate)
        if before != power_state:  # the end of a switch-off or switch-on
            off = power_state != ON
            host_off = self.host_off
            for host in hosts:
                host_off[host] = off
            if not off:
                self.nb_off -= len(hosts)
            sim.machines.set_state(now, hosts, _CATEGORY_OF_POWER_STATE[power_state])
        self._set_static_watts(now, pstate, hosts)

    def _count_arrivals(self, request: _Request, count: int, notify: bool) -> None:
        request.remaining -= count
        if request.remaining == 0:
            self._record_request(self.sim.env._now, request.hosts, request.state)
            if notify:
                self.in_progress -= 1
                self.sim.machines.write_row(self.sim.env._now)  # Batsim's row when a switch is done
                self._notify(request)

    def _notify(self, request: _Request) -> None:
        self.sim.emit("RESOURCE_STATE_CHANGED", {"resources": request.resources, "state": str(request.state)})

    def _record_request(self, now: float, hosts: list[int], pstate: int) -> None:
        """A row of the pstate output and a `p` row of the energy output (only with -E)."""
        sim = self.sim
        if sim.energy is None:
            return
        sim.pstate_out.write(now, hosts, pstate)
        sim.energy.write_row(now, "p")

    def _set_static_watts(self, now: float, pstate: int, hosts: list[int]) -> None:
        """The hosts' static power follows their new pstate (only with -E)."""
        sim = self.sim
        if sim.energy is None:
            return
        platform_hosts = sim.hosts
        virtual = self._virtual
        watts = []
        for host in hosts:
            idle, epsilon, peak = platform_hosts[host].power_range(pstate)
            if pstate in virtual[host]:  # it computes its switch's flop there: one core loaded (SimGrid's plugin)
                idle = epsilon + min(1.0, 1.0 / platform_hosts[host].cores) * (peak - epsilon)
            watts.append(idle)
        sim.energy.set_static_watts(now, hosts, watts, sim.host_job, row=False)
        if sim.host_running is not None:  # compute sharing: each job on them gets its share
            sim.host_running.share_static_power(now, [(h, h) for h in hosts], sim.energy)
