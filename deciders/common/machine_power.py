"""What a decider knows of its machines' power states, from protocol messages only.

Seed 001 §7.2.2: a machine is computing, idle, off, on->off or off->on. Here:

- `on_mask`: machines in a computation pstate, idle or computing (`computing_mask`);
- `sleeping_mask`: machines in a sleep pstate ("off");
- `switching_off_mask` / `switching_on_mask`: machines asked to change and not yet announced
  arrived by RESOURCE_STATE_CHANGED (which comes once per request, when all its machines
  arrived);
- `idle_since`: machine -> when it last became idle (on and not computing).

Pstates come from SIMULATION_BEGINS: each compute resource's `sleep_pstates` property lists
"S:OFF:ON" triples (sleep pstate, virtual switch-off and switch-on pstates), comma
separated. A machine is switched off into its first listed sleep pstate (or the one chosen
by the `sleep_pstate` option) and switched on into the compute pstate (0, or the
`compute_pstate` option). Machines without the property cannot be switched off
(`switchable_mask` leaves them out). A machine announced `sleeping` at SIMULATION_BEGINS is
taken to be in its sleep pstate.

The durations of switches are not part of the protocol: the last observed duration of
each kind (request to RESOURCE_STATE_CHANGED) is kept as an estimate, None before any.

Machine sets are bitmasks (bit i = machine i), as in queue_policy. The class knows no
scheduling policy: the decider says which machines compute (`computation_started`,
`computation_ended`) and which to switch (`begin_switch_off`, `begin_switch_on`, which
return the SET_RESOURCE_STATE requests to send).
"""

from __future__ import annotations

from typing import Any

from joulesim.deciders.common.machine_masks import mask_runs
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.interval_set import expand_runs
from joulesim.protocol.number_text import parse_integer

__all__ = ["MachinePower", "machine_ids", "parse_sleep_pstates"]


def parse_sleep_pstates(text: str, host: str) -> list[tuple[int, int, int]]:
    """The (sleep, switch-off, switch-on) pstate triples of a `sleep_pstates` property."""
    triples = []
    for item in text.split(","):
        parts = item.strip().split(":")
        try:
            if len(parts) != 3:
                raise ValueError
            triples.append((parse_integer(parts[0], signed=False), parse_integer(parts[1], signed=False),
                            parse_integer(parts[2], signed=False)))
        except ValueError:
            raise JoulesimError(f"host {host}: property sleep_pstates={text!r} is not a comma-separated "
                                "list of S:OFF:ON pstate triples (integers), e.g. '1:2:3'") from None
    return triples


class MachinePower:
    """Power states of the compute machines as announced by the simulator (seed 001 §7.2.2)."""

    def __init__(self, compute_pstate: int | None = None, sleep_pstate: int | None = None,
                 decider: str = "decider"):
        self.compute_pstate = 0 if compute_pstate is None else compute_pstate
        self._chosen_sleep_pstate = sleep_pstate
        self._decider = decider
        self._reset()

    def _reset(self) -> None:
        self.all_mask = 0
        self.on_mask = 0
        self.computing_mask = 0
        self.sleeping_mask = 0
        self.switching_on_mask = 0
        self.switching_off_mask = 0
        self.switchable_mask = 0
        self.sleep_masks: dict[int, int] = {}  # sleep pstate -> the machines switched off into it
        self.idle_since: dict[int, float] = {}
        self.switch_started: dict[int, float] = {}  # switching machine -> request time
        self.switch_on_duration: float | None = None  # last observed
        self.switch_off_duration: float | None = None

    # ---------------------------------------------------------------- set-up
    def setup(self, compute_resources: list[dict[str, Any]], nb_resources: int, now: float) -> None:
        """Read SIMULATION_BEGINS: machine ids, initial states and pstates."""
        self._reset()
        if not compute_resources:
            compute_resources = [{"id": i, "name": str(i), "state": "idle", "properties": {}}
                                 for i in range(nb_resources)]
        for resource in compute_resources:
            machine = int(resource["id"])
            bit = 1 << machine
            self.all_mask |= bit
            name = str(resource.get("name", machine))
            text = (resource.get("properties") or {}).get("sleep_pstates")
            if text:
                triples = parse_sleep_pstates(str(text), name)
                self._check_compute_pstate(triples, name, text)
                sleep = self._sleep_pstate_of(triples, name, text)
                self.switchable_mask |= bit
                self.sleep_masks[sleep] = self.sleep_masks.get(sleep, 0) | bit
            if resource.get("state") == "sleeping":
                self.sleeping_mask |= bit
            else:
                self.on_mask |= bit
                self.idle_since[machine] = now

    def _check_compute_pstate(self, triples: list[tuple[int, int, int]], name: str, text: str) -> None:
        if any(self.compute_pstate in triple for triple in triples):
            raise JoulesimError(f"decider {self._decider}: option compute_pstate={self.compute_pstate} is a sleep "
                                f"or switching pstate of host {name} (sleep_pstates {text!r}); accepted values "
                                "are its computation pstates")

    def _sleep_pstate_of(self, triples: list[tuple[int, int, int]], name: str, text: str) -> int:
        sleeps = [triple[0] for triple in triples]
        if self._chosen_sleep_pstate is None:
            return sleeps[0]
        if self._chosen_sleep_pstate not in sleeps:
            raise JoulesimError(f"decider {self._decider}: option sleep_pstate={self._chosen_sleep_pstate} is not a "
                                f"sleep pstate of host {name} (sleep_pstates {text!r}); accepted values are "
                                f"{', '.join(map(str, sleeps))}")
        return self._chosen_sleep_pstate

    # ---------------------------------------------------------------- queries
    @property
    def idle_mask(self) -> int:
        return self.on_mask & ~self.computing_mask

    @property
    def switching_mask(self) -> int:
        return self.switching_on_mask | self.switching_off_mask

    def expected_on_time(self, machine: int, now: float) -> float:
        """When a machine on or switching on is expected to compute, from observed durations."""
        bit = 1 << machine
        if self.on_mask & bit:
            return now
        if self.switching_on_mask & bit:
            return max(now, self.switch_started[machine] + (self.switch_on_duration or 0.0))
        raise ValueError(f"machine {machine} is neither on nor switching on")

    # ---------------------------------------------------------------- computations
    def computation_started(self, mask: int) -> None:
        self.computing_mask |= mask
        for machine in machine_ids(mask):
            self.idle_since.pop(machine, None)

    def computation_ended(self, mask: int, now: float) -> None:
        mask &= self.computing_mask
        self.computing_mask &= ~mask
        for machine in machine_ids(mask):
            self.idle_since[machine] = now

    # ---------------------------------------------------------------- switches
    def begin_switch_off(self, mask: int, now: float) -> list[tuple[int, int]]:
        """Mark idle switchable machines as switching off; the (machines, pstate) requests to send."""
        if mask & ~(self.idle_mask & self.switchable_mask):
            raise ValueError("only idle switchable machines can be switched off")
        self.on_mask &= ~mask
        self.switching_off_mask |= mask
        for machine in machine_ids(mask):
            del self.idle_since[machine]
            self.switch_started[machine] = now
        return [(mask & group, pstate) for pstate, group in self.sleep_masks.items() if mask & group]

    def begin_switch_on(self, mask: int, now: float) -> list[tuple[int, int]]:
        """Mark sleeping machines as switching on; the (machines, pstate) request to send."""
        if mask & ~self.sleeping_mask:
            raise ValueError("only sleeping machines can be switched on")
        self.sleeping_mask &= ~mask
        self.switching_on_mask |= mask
        for machine in machine_ids(mask):
            self.switch_started[machine] = now
        return [(mask, self.compute_pstate)] if mask else []

    def state_changed(self, mask: int, now: float) -> tuple[int, int]:
        """RESOURCE_STATE_CHANGED for `mask`: (machines now on, machines now sleeping)."""
        woke = mask & self.switching_on_mask
        slept = mask & self.switching_off_mask
        self.switching_on_mask &= ~woke
        self.on_mask |= woke
        self.switching_off_mask &= ~slept
        self.sleeping_mask |= slept
        for machine in machine_ids(woke):
            self.switch_on_duration = now - self.switch_started.pop(machine)
            self.idle_since[machine] = now
        for machine in machine_ids(slept):
            self.switch_off_duration = now - self.switch_started.pop(machine)
        return woke, slept


def machine_ids(mask: int) -> list[int]:
    """The machine ids of a bitmask, ascending (run by run: masks are mostly long runs)."""
    return expand_runs(mask_runs(mask))
