"""Energy cost: what the compute hosts' electricity costs, per cluster, per job and in total.

On only with energy accounting (-E) on a platform whose compute hosts carry a `price`
property (US cents/kWh); the property names and the tariff rule are those of the seed 004
broker (see protocol/tariffs.py): `cluster` (the hosts are grouped by it, or form one group
"all"), `price`, `utc_offset` (hours), optional `night_price` with `day_start` / `day_end`
(local hours, default 8 and 20; the day price applies in [day_start, day_end)). Simulation
time 0 is 00:00 UTC. Either every compute host has `price` or none has.

`PricedEnergyMeter` extends `EnergyMeter` (runs without prices keep the plain meter: no cost
on their hot path): it integrates each cluster's power and its power x price exactly, settles
running jobs' costs whenever their power changes, and at each day/night boundary of the
clusters with a night price (the simulation puts those boundaries on its calendar). A job's
power is split by cluster: its hosts' static watts, and its dynamic watts in proportion to its
number of hosts in each cluster (exact for a job on one cluster, the usual case).

`PREFIX_energy_cost.csv`, columns `kind,name,energy_joules,cost_cents`: one `cluster` row per
cluster (platform order) with the energy and cost over the window of Batsim's consumed_joules
(first job submission to last job end), one `job` row per finished job (in the order they
finished; name `workload!id`, energy as `consumed_energy` in the jobs output), and a `total`
row (the sum of the clusters). Cost = joules / 3.6e6 x cents per kWh.

`PREFIX_energy_cost_trace.csv` (joulesim's, not Batsim's), columns `time` and one per cluster
(platform order): each cluster's cost in cents since time 0 at every instant the power or the
price of some cluster changed, and at the end. Between two rows a cluster's power and price are
constant, so its cost grows linearly: the rows are the exact corners of the cost over time
(the report draws it).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from joulesim.inputs.input_error import InputError
from joulesim.protocol.tariffs import DAY_END, DAY_START, TARIFF_RANGES, next_change, price_at, tariff_number
from joulesim.simulator.energy.compensated_sum import CompensatedSum
from joulesim.simulator.energy.energy_meter import EnergyMeter

if TYPE_CHECKING:
    from joulesim.simulator.workload.job_record import JobRecord

COST_COLUMNS = ["kind", "name", "energy_joules", "cost_cents"]
JOULES_PER_KWH = 3.6e6


@dataclass
class ClusterTariff:
    name: str
    price: float
    night_price: float
    utc_offset: float
    day_start: float
    day_end: float

    @property
    def flat(self) -> bool:
        return self.night_price == self.price or self.day_start % 24.0 == self.day_end % 24.0

    def next_change(self, now: float) -> float:
        return math.inf if self.flat else next_change(now, self.utc_offset, self.day_start, self.day_end)

    def price_from(self, now: float) -> float:
        """The price in force from `now` until the next change (read mid-period: no rounding
        of the local hour at a boundary can pick the wrong side)."""
        if self.flat:
            return self.price
        end = self.next_change(now)
        return price_at((now + end) / 2.0, self.price, self.night_price, self.utc_offset,
                        self.day_start, self.day_end)


@dataclass
class CostPlan:
    """The clusters of a priced platform: their tariffs, and each compute host's cluster."""

    tariffs: list[ClusterTariff]
    host_cluster: list[int]


def _number(source: str, host: Any, key: str, default: float | None) -> float | None:
    text = (host.properties or {}).get(key)
    if text is None:
        return default
    try:
        return tariff_number(key, text)
    except ValueError as exc:
        raise InputError(source, f"host {host.name}", f"property {key}={text!r} is not a number in {exc}",
                         "energy cost reads price and night_price in US cents/kWh (>= 0), utc_offset "
                         "in hours, day_start / day_end as local hours in [0, 24]") from None


def cost_plan(hosts: list[Any], source: str) -> CostPlan | None:
    """The plan of a platform whose compute hosts carry `price`; None when none does."""
    if not any("price" in (h.properties or {}) for h in hosts):
        return None
    names: dict[str, int] = {}
    tariffs: list[ClusterTariff] = []
    seen: list[dict[str, Any]] = []
    host_cluster = []
    for host in hosts:
        props = host.properties or {}
        if "price" not in props:
            raise InputError(source, f"host {host.name}", "has no price property while other compute hosts "
                             "have one (energy cost needs the price of every compute host)",
                             "give it <prop id=\"price\" value=\"CENTS_PER_KWH\"/> (in JSON, "
                             "\"properties\": {\"price\": \"...\"}), or remove price from every host")
        price = _number(source, host, "price", None)
        assert price is not None
        tariff = ClusterTariff(
            str(props.get("cluster", "all")), price,
            _number(source, host, "night_price", price),  # type: ignore[arg-type]
            _number(source, host, "utc_offset", 0.0),  # type: ignore[arg-type]
            _number(source, host, "day_start", DAY_START),  # type: ignore[arg-type]
            _number(source, host, "day_end", DAY_END))  # type: ignore[arg-type]
        index = names.get(tariff.name)
        if index is None:
            index = names[tariff.name] = len(tariffs)
            tariffs.append(tariff)
            seen.append({key: props.get(key) for key in TARIFF_RANGES})
        else:
            for key in TARIFF_RANGES:
                if props.get(key) != seen[index][key]:
                    raise InputError(source, f"host {host.name}", f"property {key}={props.get(key)!r} differs "
                                     f"from {seen[index][key]!r} on the other hosts of cluster {tariff.name!r}",
                                     "give the same tariff to every host of a cluster")
        host_cluster.append(index)
    return CostPlan(tariffs, host_cluster)


class PricedEnergyMeter(EnergyMeter):
    """An EnergyMeter that also integrates each cluster's energy and cost (see the module)."""

    def __init__(self, out: TextIO | None, static_watts: list[float], plan: CostPlan):
        super().__init__(out, static_watts)
        self.plan = plan
        self.host_cluster = plan.host_cluster
        count = len(plan.tariffs)
        self._c_static = [CompensatedSum() for _ in range(count)]
        for host, watts in enumerate(self.static_watts):
            self._c_static[self.host_cluster[host]].add(watts)
        self._c_dynamic = [CompensatedSum() for _ in range(count)]
        self._c_power = [s.value for s in self._c_static]
        self._c_energy = [CompensatedSum() for _ in range(count)]
        self._c_cost = [CompensatedSum() for _ in range(count)]  # joules x cents/kWh
        self.prices = [t.price_from(0.0) for t in plan.tariffs]
        self._running: dict["JobRecord", "JobRecord"] = {}  # (by the record itself: a checkpoint keeps the key)
        self._window_start: tuple[list[float], list[float]] | None = None
        self._window_end: tuple[list[float], list[float]] | None = None
        self.job_rows: list[tuple[str, float, float]] = []  # (job id, joules, joules x cents/kWh)
        self.trace: list[tuple[float, ...]] = [(0.0, *([0.0] * count))]  # (time, each cluster's joules x cents/kWh)

    # ------------------------------------------------------------------ integration
    def _advance(self, now: float) -> None:
        elapsed = now - self._t
        if elapsed:
            prices = self.prices
            for c, power in enumerate(self._c_power):
                if power:
                    joules = power * elapsed
                    self._c_energy[c].add(joules)
                    self._c_cost[c].add(joules * prices[c])
            # (the corners of the cost over time: what follows may change a power or a price)
            self.trace.append((now, *(cost.value for cost in self._c_cost)))
        super()._advance(now)

    def _refresh_cluster(self, c: int) -> None:
        self._c_power[c] = self._c_static[c].value + self._c_dynamic[c].value

    def _settle(self, record: "JobRecord", now: float) -> None:  # type: ignore[override]
        elapsed = now - record.energy_t
        if elapsed:
            prices = self.prices
            for c, watts in record.cost_parts.items():
                record.cost += watts * elapsed * prices[c]
        EnergyMeter._settle(record, now)

    def _snapshot(self) -> tuple[list[float], list[float]]:
        return [e.value for e in self._c_energy], [c.value for c in self._c_cost]

    def window_start(self, now: float) -> float:
        self._advance(now)
        self._window_start = self._snapshot()
        return super().window_start(now)

    # ------------------------------------------------------------------ changes
    def set_static_watts(self, now: float, hosts: list[int], watts: list[float],
                         running: "list[JobRecord | None]", row: bool = True) -> None:
        self._advance(now)
        static, clusters = self.static_watts, self.host_cluster
        touched = set()
        for host, new in zip(hosts, watts):
            old = static[host]
            if new == old:
                continue
            c = clusters[host]
            self._c_static[c].add(new - old)
            touched.add(c)
            record = running[host]
            if record is not None:
                self._settle(record, now)
                record.cost_parts[c] += new - old
        for c in touched:
            self._refresh_cluster(c)
        super().set_static_watts(now, hosts, watts, running, row)

    def job_started(self, now: float, record: "JobRecord", runs: list[tuple[int, int]],
                    dynamic_power: float, row: bool = True) -> None:
        self._advance(now)
        static, clusters = self.static_watts, self.host_cluster
        parts: dict[int, float] = {}
        counts: dict[int, int] = {}
        for a, b in runs:
            for host in range(a, b + 1):
                c = clusters[host]
                parts[c] = parts.get(c, 0.0) + static[host]
                counts[c] = counts.get(c, 0) + 1
        record.cost_parts = parts
        record.cost = 0.0
        self._running[record] = record
        super().job_started(now, record, runs, dynamic_power, row)
        if dynamic_power:
            self._add_dynamic(record, dynamic_power, counts)

    def _add_dynamic(self, record: "JobRecord", change: float, counts: dict[int, int] | None = None) -> None:
        """Spread a change of the job's dynamic watts over its clusters by number of hosts."""
        if counts is None:
            counts = self._host_counts(record)
        size = sum(counts.values())
        for c, n in counts.items():
            share = change * n / size
            record.cost_parts[c] += share
            self._c_dynamic[c].add(share)
            self._refresh_cluster(c)

    def _host_counts(self, record: "JobRecord") -> dict[int, int]:
        counts: dict[int, int] = {}
        clusters = self.host_cluster
        for a, b in record.alloc:
            for host in range(a, b + 1):
                counts[clusters[host]] = counts.get(clusters[host], 0) + 1
        return counts

    def set_dynamic_power(self, now: float, record: "JobRecord", dynamic_power: float) -> None:
        if dynamic_power == record.dynamic_power:
            return
        self._advance(now)
        self._settle(record, now)
        self._add_dynamic(record, dynamic_power - record.dynamic_power)
        super().set_dynamic_power(now, record, dynamic_power)

    def job_ended(self, now: float, record: "JobRecord") -> float:
        self._advance(now)
        self._settle(record, now)
        if record.dynamic_power:
            self._add_dynamic(record, -record.dynamic_power)
        self._running.pop(record, None)
        energy = super().job_ended(now, record)
        self._window_end = self._snapshot()
        self.job_rows.append((record.job.id, energy, record.cost))
        return energy

    def tariff_changes(self, now: float, cluster: int) -> None:
        """A day/night boundary of `cluster`: settle at the old price, then switch."""
        self._advance(now)
        for record in self._running.values():
            if cluster in record.cost_parts:
                self._settle(record, now)
        self.prices[cluster] = self.plan.tariffs[cluster].price_from(now)

    # ------------------------------------------------------------------ output
    def rows(self) -> list[tuple[str, str, float, float]]:
        """(kind, name, joules, cents) of every row of PREFIX_energy_cost.csv."""
        count = len(self.plan.tariffs)
        start = self._window_start or ([0.0] * count, [0.0] * count)
        end = self._window_end if self._window_end is not None and self._window_start is not None else start
        rows = []
        energies, costs = [], []
        for c, tariff in enumerate(self.plan.tariffs):
            joules = end[0][c] - start[0][c]
            cost = (end[1][c] - start[1][c]) / JOULES_PER_KWH
            energies.append(joules)
            costs.append(cost)
            rows.append(("cluster", tariff.name, joules, cost))
        for job_id, joules, cost in self.job_rows:
            rows.append(("job", job_id, joules, cost / JOULES_PER_KWH))
        rows.append(("total", "all", math.fsum(energies), math.fsum(costs)))
        return rows

    def write_trace(self, out: TextIO, now: float) -> None:
        """Write PREFIX_energy_cost_trace.csv, up to `now` (the end of the simulation)."""
        self._advance(now)
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["time", *(tariff.name for tariff in self.plan.tariffs)])
        for row in self.trace:
            writer.writerow([repr(row[0]), *(repr(value / JOULES_PER_KWH) for value in row[1:])])

    def write(self, out: TextIO) -> float:
        """Write PREFIX_energy_cost.csv; returns the total cost (cents), its last row's."""
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COST_COLUMNS)
        rows = self.rows()
        for kind, name, joules, cost in rows:
            writer.writerow([kind, name, repr(joules), repr(cost)])
        return rows[-1][3]
