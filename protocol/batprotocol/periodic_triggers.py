"""Batsim 5's periodic triggers, for an EDC: its calls-me-later (one-shot or periodic) and its
energy probes, on Batsim 5's grid of multiples of each period.

Each instant something is due at is asked of the simulator as one Batsim 4 CALL_ME_LATER; the
REQUESTED_CALL that answers it brings what is due then (`due_at`), and the bridge turns that
into RequestedCallEvents and ProbeDataEmittedEvents. What Batsim 5.0.0-rc2 does is done here
(src/periodic.cpp, src/server.cpp):

- a periodic trigger comes at every multiple of its period strictly after its creation, an
  infinite or given number of times (the last call flagged), until stopped; offsets other
  than 0 are refused, as Batsim 5 refuses them;
- calls due together come in the order of their ids, one-shot calls after them, then the
  probes by id;
- a probe's first trigger only starts its measure: its data comes from the next period on;
- call ids and probe ids are two namespaces;
- a stopped trigger's instant is still asked of the simulator (it then finds nothing due, and
  the EDC is not called), where Batsim 5 would forget it at once.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Callable

from joulesim.protocol.errors import DecisionError
from joulesim.protocol.interval_set import format_interval_set, parse_runs

# What Batsim 5.0.0-rc2 implements of CreateProbeEvent's choices (its periodic actor stops on the others)
PROBE_AGGREGATIONS = ("NoResourcesAggregation", "Sum", "ArithmeticMean")


@dataclass
class Probe:
    """A periodic energy probe (CreateProbeEvent) as Batsim 5.0.0-rc2 implements them: the
    Power metric read as each host's joules since t=0 (SimGrid's sg_host_get_consumed_energy),
    on hosts, accumulated without reset."""

    hosts: list[int]
    host_ids: str  # the hosts as Batsim 5 writes them back (a canonical interval set)
    aggregation: str  # NoResourcesAggregation (one value per host), Sum or ArithmeticMean
    started: bool = False  # Batsim 5's first trigger only starts the measure; data comes from the second


@dataclass
class Trigger:
    id: str
    period_ms: int = 0  # 0: one shot
    remaining: int | None = None  # occurrences left (None: until stopped)
    at_ms: int = 0  # a periodic trigger's next occurrence, in whole milliseconds
    probe: Probe | None = None  # a probe's triggers, else a call-me-later's


# A trigger that came due, whether it is its last, and whether it counts as one of its
# occurrences (a probe's first trigger does not)
Due = tuple[Trigger, bool, bool]


@dataclass
class PeriodicTriggers:
    due: dict[float, list[Trigger]] = field(default_factory=dict)  # time -> triggers due then
    asked: list[float] = field(default_factory=list)  # (a heap) the times a CALL_ME_LATER was sent for
    # Each compute host's joules since t=0 now, given host ids (None: the run has no energy
    # accounting), and how many compute hosts it knows: what energy probes read.
    host_energy: Callable[[list[int]], list[float]] | None = None
    energy_hosts: int = 0

    # ------------------------------------------------------------------ what comes due
    def due_at(self) -> list[Due]:
        """What the next REQUESTED_CALL brings. Each time asked got one CALL_ME_LATER, so each
        REQUESTED_CALL answers the earliest time still asked for (matched by order, not by
        value: the simulator's clock may read 0.9999999999999999 at a call asked for 1.0)."""
        if not self.asked:
            return []
        triggers = self.due.pop(heapq.heappop(self.asked), [])
        ordered = (sorted((t for t in triggers if t.period_ms and t.probe is None), key=lambda t: t.id)
                   + [t for t in triggers if not t.period_ms]
                   + sorted((t for t in triggers if t.probe is not None), key=lambda t: t.id))
        due = []
        for trigger in ordered:
            counted = trigger.probe is None or trigger.probe.started
            due.append((trigger, counted and trigger.period_ms > 0 and trigger.remaining == 1, counted))
            if trigger.probe is not None:
                trigger.probe.started = True
        return due

    def probe_data(self, probe_id: str, probe: Probe, number: Callable[[float], float]) -> dict[str, Any]:
        """A ProbeDataEmittedEvent as Batsim 5.0.0-rc2's periodic actor fills it (its nb_emitted
        and nb_triggered are always 0 there: "TODO: implement me"); `number`: how a double
        goes to the EDC."""
        assert self.host_energy is not None  # (checked when the probe was created)
        joules = self.host_energy(probe.hosts)
        if probe.aggregation == "NoResourcesAggregation":
            kind, data = "VectorialProbeData", {"data": [number(value) for value in joules]}
        else:
            total = 0.0
            for value in joules:  # (summed in order, as Batsim 5's loop does)
                total += value
            if probe.aggregation == "ArithmeticMean":
                total /= len(joules)
            kind, data = "AggregatedProbeData", {"data": number(total)}
        return {"probe_id": probe_id, "resources_type": "HostResources", "resources": {"host_ids": probe.host_ids},
                "metrics": "Power", "data_type": kind, "data": data, "manually_triggered": False,
                "nb_emitted": 0, "nb_triggered": 0}

    def next_occurrences(self, due: list[Due], call_now: float) -> list[dict[str, Any]]:
        """The CALL_ME_LATER decisions for the next occurrence of the periodic triggers that came
        due in the message sent at `call_now` (asked whether the EDC was called or not: a
        probe's first trigger tells it nothing)."""
        decisions: list[dict[str, Any]] = []
        for trigger, last, counted in due:
            if trigger.period_ms and not last:  # (from its own time: the clock may read a hair before it)
                trigger.at_ms += trigger.period_ms
                remaining = trigger.remaining if trigger.remaining is None or not counted else trigger.remaining - 1
                self._ask(trigger, _seconds(trigger.at_ms), decisions, call_now, remaining)
        return decisions

    # ------------------------------------------------------------------ the EDC's requests
    def call_me_later(self, body: dict[str, Any], at: float, decisions: list, where: str) -> None:
        call_id, when, kind = body["call_me_later_id"], body.get("when") or {}, body.get("when_type")
        self.forget(call_id)  # (asked again under the same id: replaces the earlier one)
        if kind == "OneShot":
            to_ms = 1 if when.get("time_unit") == "Millisecond" else 1000
            time = _seconds(when.get("time", 0) * to_ms)
            self._ask(Trigger(call_id), time if time >= at else at, decisions, at, None)
            return
        period_ms, remaining = _periodic(when, "call", where)
        if remaining is not None and remaining <= 0:
            return
        first_ms = _next_multiple(at, period_ms)
        self._ask(Trigger(call_id, period_ms, remaining, first_ms), _seconds(first_ms), decisions, at, remaining)

    def create_probe(self, body: dict[str, Any], at: float, decisions: list, where: str) -> None:
        """A periodic energy probe, checked as Batsim 5.0.0-rc2 checks it: what it refuses (a
        one-shot trigger, another metric, links, no accumulation or a reset, a quantile) is
        refused here with the field to change. Like Batsim 5, the emission filter and the
        temporal aggregation are read but not applied (every period emits)."""
        probe_id = body.get("probe_id") or ""
        where = f"{where}: probe {probe_id!r}"
        if self.host_energy is None:
            raise DecisionError(f"{where}: energy probes read the hosts' consumed energy: run the simulation with "
                                "-E/--energy (Batsim 5's --energy-host)")
        if any(t.id == probe_id and t.probe is not None for triggers in self.due.values() for t in triggers):
            raise DecisionError(f"{where}: this probe id is already in use (stop it first with a StopProbeEvent, or "
                                "give the new probe another id)")
        if body.get("metrics", "Power") != "Power":
            raise DecisionError(f"{where}: metrics {body['metrics']}: Batsim 5 implements the Power metric only "
                                "(each host's consumed energy)")
        if body.get("resources_type") != "HostResources":
            raise DecisionError(f"{where}: resources must be HostResources (Batsim 5 implements probes on hosts only; "
                                f"got {body.get('resources_type', 'none')})")
        hosts = self._probe_hosts(str((body.get("resources") or {}).get("host_ids") or ""), where)
        accumulation = body.get("data_accumulation_strategy") or {}
        if body.get("data_accumulation_strategy_type") != "ProbeDataAccumulation":
            raise DecisionError(f"{where}: data_accumulation_strategy must be ProbeDataAccumulation (Batsim 5 "
                                "implements accumulative probes only; got "
                                f"{body.get('data_accumulation_strategy_type', 'none')})")
        if accumulation.get("reset_mode_type") != "NoReset":
            raise DecisionError(f"{where}: the accumulation's reset_mode must be NoReset (Batsim 5 does not "
                                f"implement resets; got {accumulation.get('reset_mode_type', 'none')})")
        aggregation = body.get("resources_aggregation_function_type", "NONE")
        if aggregation not in PROBE_AGGREGATIONS:
            raise DecisionError(f"{where}: resources_aggregation_function must be one of "
                                f"{', '.join(PROBE_AGGREGATIONS)} (what Batsim 5 implements; got {aggregation})")
        if body.get("emission_filtering_policy_type", "NONE") not in ("NoFiltering", "ThresholdFilteringFunction"):
            raise DecisionError(f"{where}: give an emission_filtering_policy (NoFiltering)")
        trigger = (body.get("measurement_triggering_policy") or {})
        if (body.get("measurement_triggering_policy_type") != "TemporalTriggerWrapper"
                or trigger.get("temporal_trigger_type") != "Periodic"):
            raise DecisionError(f"{where}: the measurement_triggering_policy must be a periodic TemporalTrigger "
                                "(Batsim 5 does not implement one-shot probes)")
        period_ms, remaining = _periodic(trigger.get("temporal_trigger") or {}, "probe", where)
        if remaining is not None and remaining < 1:
            raise DecisionError(f"{where}: a finite periodic probe needs nb_periods >= 1 (got {remaining})")
        probe = Probe(hosts, format_interval_set(hosts), aggregation)
        first_ms = _next_multiple(at, period_ms)
        self._ask(Trigger(probe_id, period_ms, remaining, first_ms, probe), _seconds(first_ms), decisions, at,
                  remaining)

    def forget(self, trigger_id: str, probe: bool = False) -> None:
        """No more calls (or probe triggers) of this id (the simulator's REQUESTED_CALL at their
        time then finds none due, and the EDC is not called for it)."""
        for triggers in self.due.values():
            triggers[:] = [t for t in triggers if t.id != trigger_id or (t.probe is not None) != probe]

    # ------------------------------------------------------------------ helpers
    def _probe_hosts(self, text: str, where: str) -> list[int]:
        try:
            runs = parse_runs(text, max_intervals=max(self.energy_hosts, 1))
        except ValueError as exc:
            raise DecisionError(f"{where}: resources.host_ids: {exc}") from None
        if not runs:
            raise DecisionError(f"{where}: resources.host_ids is empty: name the hosts to measure (e.g. \"0-3\")")
        if any(high >= self.energy_hosts for _, high in runs):
            raise DecisionError(f"{where}: resources.host_ids {text!r} names hosts that are not compute hosts "
                                f"(their ids are 0-{self.energy_hosts - 1})")
        return sorted({host for low, high in runs for host in range(low, high + 1)})

    def _ask(self, trigger: Trigger, time: float, decisions: list, at: float, remaining: int | None) -> None:
        trigger.remaining = remaining
        if time not in self.due:
            self.due[time] = []
            heapq.heappush(self.asked, time)
            decisions.append({"timestamp": at, "type": "CALL_ME_LATER", "data": {"timestamp": time}})
        self.due[time].append(trigger)


def _periodic(when: dict[str, Any], what: str, where: str) -> tuple[int, int | None]:
    """A Periodic trigger's period in milliseconds and its number of periods (None: infinite)."""
    to_ms = 1 if when.get("time_unit") == "Millisecond" else 1000
    if when.get("offset"):
        raise DecisionError(f"{where}: a periodic {what} with offset {when['offset']} (Batsim 5 supports offset 0 only)")
    period_ms = when.get("period", 0) * to_ms
    if period_ms <= 0:
        raise DecisionError(f"{where}: a periodic {what} needs a period > 0")
    if when.get("mode_type") == "FinitePeriodNumber":
        return period_ms, (when.get("mode") or {}).get("nb_periods", 0)
    return period_ms, None


def _seconds(milliseconds: int) -> float:
    """A time in whole milliseconds as seconds: one float per millisecond count, so that calls
    due at the same instant (10 x 30 ms, 3 x 100 ms) meet at the same time."""
    return milliseconds / 1000


def _next_multiple(after: float, period_ms: int) -> int:
    """The first multiple of the period strictly after `after`, in milliseconds (Batsim 5's
    periodic grid)."""
    k = int(after * 1000 // period_ms) + 1
    while _seconds((k - 1) * period_ms) > after:  # (after * 1000 rounded up past a multiple)
        k -= 1
    while _seconds(k * period_ms) <= after:
        k += 1
    return k * period_ms


__all__ = ["Due", "PROBE_AGGREGATIONS", "PeriodicTriggers", "Probe", "Trigger"]
