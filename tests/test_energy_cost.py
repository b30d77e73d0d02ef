"""Energy cost (issue 15): per cluster, per job and in total, for platforms whose hosts carry
electricity prices; hand-computed cases, day/night tariffs split at their boundaries, errors."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from click.testing import CliRunner

import joulesim
from joulesim.cli.analyze_command import analyze
from joulesim.inputs.input_error import InputError

KWH = 3.6e6


def host(name: str, idle: float, peak: float, **props: str) -> dict:
    return {"name": name, "speed": "1Gf", "wattage_per_state": [[idle, peak]], "properties": dict(props)}


def platform(*hosts: dict) -> dict:
    return {"hosts": list(hosts), "master": {"name": "master"}}


TWO_CLUSTERS = platform(host("a0", 100, 200, cluster="A", price="10"),
                        host("b0", 50, 150, cluster="B", price="20"),
                        host("b1", 50, 150, cluster="B", price="20"))


def workload(*jobs: tuple[str, float, int, dict]) -> dict:
    """(id, subtime, res, profile) tuples."""
    return {"nb_res": 3,
            "jobs": [{"id": j, "subtime": t, "res": r, "profile": j} for j, t, r, _ in jobs],
            "profiles": {j: p for j, _, _, p in jobs}}


def rows(frame: pd.DataFrame, kind: str) -> dict[str, tuple[float, float]]:
    part = frame[frame["kind"] == kind]
    return {str(n): (float(e), float(c)) for n, e, c in zip(part["name"], part["energy_joules"], part["cost_cents"])}


# Jobs start and end a few 1e-10 s after their nominal times (Batsim's actors on the master pass
# messages through SimGrid's loopback link), which moves energies by about 1e-12 of themselves.
REL = 1e-10


def test_two_flat_clusters_hand_computed(tmp_path):
    # j1: a delay of 50 s on a0 (cluster A: idle 100 W); j2: a computation of 100 s on b0-b1
    # (cluster B: 150 W each when loaded). Window [0, 100].
    jobs = workload(("j1", 0, 1, {"type": "delay", "delay": 50}),
                    ("j2", 0, 2, {"type": "parallel_homogeneous", "cpu": 1e11, "com": 0}))
    result = joulesim.simulate(TWO_CLUSTERS, jobs, "fcfs", energy=True)
    cost = result.energy_cost
    assert list(cost.columns) == ["kind", "name", "energy_joules", "cost_cents"]
    assert list(cost["kind"]) == ["cluster", "cluster", "job", "job", "total"]
    clusters = rows(cost, "cluster")
    assert clusters["A"] == pytest.approx((100 * 100, 100 * 100 / KWH * 10), rel=REL)
    assert clusters["B"] == pytest.approx((2 * 150 * 100, 2 * 150 * 100 / KWH * 20), rel=REL)
    consumed = float(result.schedule["consumed_joules"])
    assert consumed == pytest.approx(40_000, rel=REL)
    assert sum(e for e, _ in clusters.values()) == pytest.approx(consumed, rel=1e-9)
    jobs_rows = rows(cost, "job")
    assert jobs_rows["w0!j1"] == pytest.approx((5000, 5000 / KWH * 10), rel=REL)
    assert jobs_rows["w0!j2"] == pytest.approx((30000, 30000 / KWH * 20), rel=REL)
    energies = dict(zip(result.jobs["job_id"].astype(str), result.jobs["consumed_energy"]))
    assert jobs_rows["w0!j1"][0] == pytest.approx(energies["j1"], rel=1e-9)
    assert jobs_rows["w0!j2"][0] == pytest.approx(energies["j2"], rel=1e-9)
    total = rows(cost, "total")["all"]
    assert total == pytest.approx((40_000, 10_000 / KWH * 10 + 30_000 / KWH * 20), rel=REL)
    assert result.metrics["energy_cost_cents"] == pytest.approx(total[1])


def test_the_window_is_that_of_consumed_joules(tmp_path):
    # First submission at t=10, last end at t=40: the clusters' energies exclude idling before.
    jobs = workload(("j1", 10, 1, {"type": "delay", "delay": 30}))
    result = joulesim.simulate(TWO_CLUSTERS, jobs, "fcfs", energy=True)
    clusters = rows(result.energy_cost, "cluster")
    assert clusters["A"][0] == pytest.approx(100 * 30, rel=REL)
    assert clusters["B"][0] == pytest.approx(2 * 50 * 30, rel=REL)
    assert clusters["A"][0] + clusters["B"][0] == pytest.approx(float(result.schedule["consumed_joules"]), rel=1e-9)


@pytest.mark.parametrize("offset, expected", [
    # Local 08:00 at UTC+2 is t = 6 h = 21,600 s: 600 s of night (10 c) then 1,000 s of day (30 c).
    ("+2", (100 * 600 * 10 + 100 * 1000 * 30) / KWH),
    ("0", 100 * 1600 * 10 / KWH),  # all before 08:00 local: night
])
def test_a_day_night_boundary_splits_the_cost_exactly(offset, expected):
    eu = platform(host("e0", 100, 200, cluster="eu", price="30", night_price="10", utc_offset=offset))
    jobs = workload(("j1", 21_000, 1, {"type": "delay", "delay": 1600}))
    result = joulesim.simulate(eu, jobs, "fcfs", energy=True)
    cost = result.energy_cost
    assert rows(cost, "cluster")["eu"] == pytest.approx((160_000, expected), rel=1e-12)
    assert rows(cost, "job")["w0!j1"] == pytest.approx((160_000, expected), rel=1e-12)
    assert rows(cost, "total")["all"] == pytest.approx((160_000, expected), rel=1e-12)
    assert float(result.jobs["finish_time"].iloc[0]) == 22_600  # the boundaries change no schedule


def test_two_days_of_day_and_night_prices():
    eu = platform(host("e0", 100, 200, price="30", night_price="10", day_start="8", day_end="20"))
    jobs = workload(("j1", 0, 1, {"type": "delay", "delay": 2 * 86_400}))
    result = joulesim.simulate(eu, jobs, "fcfs", energy=True)
    expected = 100 * 86_400 * (30 + 10) / KWH  # 24 h of day and 24 h of night
    assert rows(result.energy_cost, "cluster")["all"][1] == pytest.approx(expected, rel=1e-12)
    assert rows(result.energy_cost, "job")["w0!j1"][1] == pytest.approx(expected, rel=1e-12)
    assert float(result.schedule["makespan"]) == 2 * 86_400


def test_file_and_analyze(tmp_path):
    jobs = workload(("j1", 0, 1, {"type": "delay", "delay": 50}))
    result = joulesim.simulate(TWO_CLUSTERS, jobs, "fcfs", energy=True, export=tmp_path / "out")
    assert str(tmp_path / "out_energy_cost.csv") in result.outputs
    frame = pd.read_csv(tmp_path / "out_energy_cost.csv")
    assert list(frame["name"]) == ["A", "B", "w0!j1", "all"]
    printed = CliRunner().invoke(analyze, [str(tmp_path / "out")])
    assert printed.exit_code == 0, printed.output
    assert "energy cost (US cents)" in printed.output
    assert "cluster A" in printed.output and "cluster B" in printed.output


def test_runs_without_prices_have_no_cost(tmp_path):
    plain = platform(host("h0", 100, 200), host("h1", 100, 200))
    jobs = workload(("j1", 0, 1, {"type": "delay", "delay": 5}))
    result = joulesim.simulate(plain, jobs, "fcfs", energy=True, export=tmp_path / "out")
    assert result.energy_cost is None
    assert not os.path.exists(tmp_path / "out_energy_cost.csv")
    assert "energy_cost_cents" not in result.metrics
    in_memory = joulesim.simulate(TWO_CLUSTERS, jobs, "fcfs", energy=False)  # prices, energy off
    assert in_memory.energy_cost is None


def test_a_host_without_price_among_priced_hosts():
    bad = platform(host("a0", 100, 200, price="10"), host("a1", 100, 200))
    with pytest.raises(InputError, match=r"host a1: has no price property.*give it"):
        joulesim.simulate(bad, workload(("j1", 0, 1, {"type": "delay", "delay": 5})), "fcfs", energy=True)


@pytest.mark.parametrize("props, pattern", [
    ({"price": "-1"}, r"host a0: property price='-1' is not a number"),
    ({"price": "cheap"}, r"host a0: property price='cheap' is not a number"),
    ({"price": "10", "night_price": "-3"}, r"host a0: property night_price='-3'"),
    # float() reads these as numbers: costs were inf and the total NaN, or a price in other digits
    ({"price": "inf"}, r"host a0: property price='inf' is not a number in \[0, 1e\+06\] written in ASCII decimal"),
    ({"price": "1e400"}, r"host a0: property price='1e400' is not a number in \[0, 1e\+06\]"),
    ({"price": "10", "night_price": "inf"}, r"host a0: property night_price='inf' is not a number"),
    ({"price": "nan"}, r"host a0: property price='nan' is not a number"),
    ({"price": "١٢"}, r"host a0: property price='١٢' is not a number"),
    ({"price": "1_0"}, r"host a0: property price='1_0' is not a number"),
    ({"price": "10", "utc_offset": "１"}, r"host a0: property utc_offset='１' is not a number"),
    ({"price": "1e300"}, r"host a0: property price='1e300' is not a number in \[0, 1e\+06\]"),
])
def test_bad_prices(props, pattern):
    bad = platform(host("a0", 100, 200, **props))
    with pytest.raises(InputError, match=pattern):
        joulesim.simulate(bad, workload(("j1", 0, 1, {"type": "delay", "delay": 5})), "fcfs", energy=True)
