"""The resource broker of seed 004 (§3-§4): each arriving job goes to one of several clusters,
each scheduled by its own EASY backfilling (with opportunistic shutdown given `t_idle`).

    broker --option algorithm=S|P [--option h_diff=SECONDS] [--option t_idle=SECONDS]
           [--option start_utc_hour=HOURS]

- **Algorithm S**: the cluster with the least h = (sum of the requested areas, width x
  walltime, of the jobs queued on it: assigned and not yet started) / (its number of nodes);
  ties go to the first cluster in platform order. Only clusters with at least the job's width
  of nodes are eligible (none: the job is rejected).
- **Algorithm P** (needs `h_diff`): over the eligible clusters, if max h - min h > h_diff, S's
  choice; otherwise the cluster where running the job costs least now: the electricity price
  at the cluster's local time (day or night tariff) times its node power (the peak watts of
  the hosts' `wattage_per_state`; the price alone without it). Ties: lower h, then platform order.

Clusters come from the hosts' properties in SIMULATION_BEGINS (see cluster_router.py):
`cluster` (name), `price` (US cents/kWh), `utc_offset` (hours, "+2", "-7"), optional
`night_price` with `day_start` / `day_end` (local hours, default 8 and 20; the day price
applies in [day_start, day_end); the rule is protocol/tariffs.py's, shared with the energy cost
accounting). Simulation time 0 is `start_utc_hour` o'clock UTC (default 0).
A platform without `cluster` properties is one cluster (the broker is then plain EASY).

The broker learns which of its jobs started from the EXECUTE_JOB decisions of the clusters'
deciders: it sees only protocol messages, like any decider. A job without walltime adds no
area to h (its work is unknown).
"""

from __future__ import annotations

import math

from joulesim.deciders.batch.easy import EasyBackfilling
from joulesim.deciders.common.decider_options import choice_option, float_option
from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown
from joulesim.deciders.grid.cluster_router import Cluster, ClusterRouter
from joulesim.protocol.decider import Decider, SubmittedJob
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.number_text import NumberTextError, parse_decimal
from joulesim.protocol.tariffs import DAY_END, DAY_START, TARIFF_RANGES, price_at, tariff_number

__all__ = ["ClusterBroker", "Tariff"]

class Tariff:
    """A cluster's electricity price (US cents/kWh) at its local time, and its node power."""

    def __init__(self, cluster: Cluster, who: str):
        props = cluster.properties
        self.name = cluster.name
        self.price = _number(props, "price", cluster, who, None)
        self.utc_offset = _number(props, "utc_offset", cluster, who, 0.0)
        self.night_price = _number(props, "night_price", cluster, who, self.price)
        self.day_start = _number(props, "day_start", cluster, who, DAY_START)
        self.day_end = _number(props, "day_end", cluster, who, DAY_END)
        self.watts = _peak_watts(props.get("wattage_per_state"), cluster, who)
        for key in TARIFF_RANGES:
            values = {str((r.get("properties") or {}).get(key)) for r in cluster.resources}
            if len(values) > 1:
                raise JoulesimError(f"decider {who}: the hosts of cluster {cluster.name!r} disagree on property "
                                    f"{key!r} ({', '.join(sorted(values))}): give it once per cluster")

    def price_at(self, now: float, start_utc_hour: float) -> float:
        """The price in force at simulation time `now` (cents/kWh); `price` must be known."""
        assert self.price is not None
        return price_at(now, self.price, self.night_price, self.utc_offset,  # type: ignore[arg-type]
                        self.day_start, self.day_end, start_utc_hour)

    def cost_rate(self, now: float, start_utc_hour: float) -> float:
        """Cost per node-second, up to a constant: price x node power (price alone without power)."""
        return self.price_at(now, start_utc_hour) * (self.watts if self.watts is not None else 1.0)


def _number(props: dict[str, str], key: str, cluster: Cluster, who: str, default: float | None) -> float | None:
    if key not in props:
        return default
    text = props[key].strip()
    try:
        return tariff_number(key, text)
    except ValueError as exc:
        raise JoulesimError(f"decider {who}: cluster {cluster.name!r} has property {key}={text!r}: "
                            f"expected a number in {exc}") from None


def _peak_watts(text: str | None, cluster: Cluster, who: str) -> float | None:
    """The largest wattage of a Batsim `wattage_per_state` string ("idle:max, ..."), or None."""
    if not text:
        return None
    try:
        values = [parse_decimal(w) for state in str(text).split(",") for w in state.split(":")]
    except NumberTextError:
        raise JoulesimError(f"decider {who}: cluster {cluster.name!r} has an unreadable wattage_per_state "
                            f"{text!r} (expected 'idle:max, ...')") from None
    return max(values) if values else None


class ClusterBroker(ClusterRouter):
    """Seed 004's broker: one EASY (with shutdown given t_idle) per cluster, jobs sent by S or P."""

    OPTIONS = {
        "algorithm": "S (least queued area per node) or P (cheapest energy unless the queues differ "
                     "by more than h_diff); default S",
        "h_diff": "seconds: P falls back to S when max h - min h exceeds it (required by P; 'inf': never)",
        "t_idle": "seconds a node stays idle before it is switched off, on every cluster (default: never)",
        "start_utc_hour": "UTC hour of simulation time 0 (default 0), for the clusters' local tariffs",
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        name = "broker"
        self.algorithm = choice_option(name, self.options, "algorithm", ("S", "P"), "S")
        self.h_diff = float_option(name, self.options, "h_diff", math.nan, minimum=0.0, allow_inf=True)
        if self.algorithm == "P" and math.isnan(self.h_diff):
            raise JoulesimError("decider broker: algorithm P needs option h_diff (seconds, e.g. "
                                "--option h_diff=1800; 'inf' always picks the cheapest cluster)")
        float_option(name, self.options, "t_idle", math.inf, minimum=0.0, allow_inf=True)  # checked now
        self.start_utc_hour = float_option(name, self.options, "start_utc_hour", 0.0, minimum=0.0, maximum=24.0)
        self.sub_options = {"t_idle": self.options["t_idle"]} if "t_idle" in self.options else {}
        self.tariffs: list[Tariff] = []
        self.queued: list[dict[str, float]] = []  # per cluster: queued job id -> requested area

    # ---------------------------------------------------------------- composition
    def setup_clusters(self) -> None:
        self.tariffs = [Tariff(cluster, "broker") for cluster in self.clusters]
        self.queued = [{} for _ in self.clusters]
        if self.algorithm == "P" and len(self.clusters) > 1:
            missing = [t.name for t in self.tariffs if t.price is None]
            if missing:
                raise JoulesimError(f"decider broker: algorithm P needs a 'price' property (US cents/kWh) on "
                                    f"every cluster; cluster(s) {', '.join(map(repr, missing))} have none")

    def make_decider(self, cluster: Cluster) -> Decider:
        # What `easy` is with these options: with t_idle EasyWithShutdown, without it plain EASY.
        if self.sub_options:
            return EasyWithShutdown(dict(self.sub_options))
        return EasyBackfilling({})

    def job_started(self, index: int, job_id: str) -> None:
        self.queued[index].pop(job_id, None)

    def job_left(self, index: int, job_id: str) -> None:
        self.queued[index].pop(job_id, None)

    # ---------------------------------------------------------------- S and P
    def queue_heights(self) -> list[float]:
        """h of every cluster: queued requested area / number of nodes (seconds)."""
        return [sum(queued.values()) / cluster.size for queued, cluster in zip(self.queued, self.clusters)]

    def choose(self, job: SubmittedJob) -> int | None:
        eligible = [i for i, cluster in enumerate(self.clusters) if cluster.size >= job.res]
        if not eligible:
            return None
        heights = self.queue_heights()
        by_height = min(eligible, key=lambda i: heights[i])  # min() keeps the first of ties
        if self.algorithm == "S" or len(eligible) == 1:
            return by_height
        gap = max(heights[i] for i in eligible) - heights[by_height]
        if gap > self.h_diff:
            return by_height
        return min(eligible, key=lambda i: (self.tariffs[i].cost_rate(self.now, self.start_utc_hour), heights[i]))

    def assign(self, job: SubmittedJob) -> int | None:
        index = self.choose(job)
        if index is not None:
            self.queued[index][job.id] = job.res * max(job.walltime, 0.0)
        return index
