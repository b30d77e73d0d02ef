"""Seed 004 §4's broker (`broker`): jobs routed by algorithms S and P to one EASY per cluster."""

from __future__ import annotations

import pytest

import joulesim
from joulesim.deciders import load_decider
from joulesim.protocol.errors import JoulesimError

PEAK, IDLE, SLEEP = 520.0, 223.6, 15.6


def _cluster(name: str, count: int, price: float, watts: float = PEAK, **extra: str) -> dict:
    return {"id": name, "prefix": f"{name}-", "count": count, "speed": ["1Gf", "1e-9Mf", 1.0 / 6.1, 1.0 / 151.52],
            "properties": {"cluster": name, "price": str(price), "utc_offset": "0", **extra},
            "wattage_per_state": [[IDLE * watts / PEAK, watts], [SLEEP, SLEEP], [237.7, 237.7], [294.6, 294.6]],
            "wattage_off": SLEEP, "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}]}


def _platform(a_price: float = 20.0, b_price: float = 10.0, b_watts: float = PEAK) -> dict:
    """Cluster a: hosts 0-3; cluster b: hosts 4-5."""
    return {"version": 1, "master": {"name": "master_host", "speed": "1Gf"},
            "clusters": [_cluster("a", 4, a_price), _cluster("b", 2, b_price, b_watts)]}


def _workload(jobs: list[tuple[float, int, float]]) -> dict:
    """(subtime, width, duration) -> a workload whose walltimes are the durations."""
    return {"nb_res": 6,
            "jobs": [{"id": f"j{i}", "subtime": t, "res": w, "walltime": d, "profile": f"p{i}"}
                     for i, (t, w, d) in enumerate(jobs, 1)],
            "profiles": {f"p{i}": {"type": "delay", "delay": d} for i, (_, _, d) in enumerate(jobs, 1)}}


def _cluster_of_jobs(result) -> dict[str, str]:
    """job id -> 'a' (hosts 0-3) or 'b' (hosts 4-5), from the allocations."""
    out = {}
    for row in result.jobs.itertuples():
        ids = {int(x) for part in str(row.allocated_resources).split() for x in _expand(part)}
        assert ids <= {0, 1, 2, 3} or ids <= {4, 5}, f"{row.job_id} spans clusters: {row.allocated_resources}"
        out[str(row.job_id)] = "a" if ids <= {0, 1, 2, 3} else "b"
    return out


def _expand(part: str) -> range:
    a, _, b = part.partition("-")
    return range(int(a), int(b or a) + 1)


def _run(jobs, options, **platform_args):
    return joulesim.simulate(_platform(**platform_args), _workload(jobs), "broker", options=options, energy=True)


# h values by hand (a: 4 nodes, b: 2 nodes; areas = width x walltime of the jobs queued, not started):
S_JOBS = [(0, 4, 1000),   # only a is wide enough: a, starts at once
          (1, 2, 1000),   # h a=0, b=0: tie -> a (first); waits behind j1: h_a = 2000/4 = 500
          (2, 2, 1000),   # h a=500, b=0 -> b, starts
          (3, 1, 500),    # h a=500, b=0 -> b, waits behind j3: h_b = 500/2 = 250
          (4, 1, 100),    # h a=500, b=250 -> b: h_b = 600/2 = 300
          (5, 1, 2000),   # h a=500, b=300 -> b: h_b = 2600/2 = 1300
          (6, 1, 10)]     # h a=500, b=1300 -> a


def test_algorithm_s_sends_each_job_to_the_least_queued_area_per_node():
    where = _cluster_of_jobs(_run(S_JOBS, {"algorithm": "S"}))
    assert where == {"j1": "a", "j2": "a", "j3": "b", "j4": "b", "j5": "b", "j6": "b", "j7": "a"}


P_JOBS = [(0, 4, 1000),   # only a
          (1, 2, 1000),   # h a=0, b=0: gap 0 -> cheapest, b (10 < 20 cents/kWh); starts
          (2, 2, 1000),   # gap 0 -> b; waits: h_b = 2000/2 = 1000
          (3, 1, 100),    # h a=0, b=1000: gap 1000 > 600 -> S: a; waits behind j1: h_a = 25
          (4, 1, 100)]    # h a=25, b=1000: gap 975 > 600 -> a


def test_algorithm_p_picks_the_cheapest_cluster_until_the_queues_differ_by_more_than_h_diff():
    where = _cluster_of_jobs(_run(P_JOBS, {"algorithm": "P", "h_diff": "600"}))
    assert where == {"j1": "a", "j2": "b", "j3": "b", "j4": "a", "j5": "a"}
    # Without the fall-back every job that fits goes to the cheaper cluster.
    where = _cluster_of_jobs(_run(P_JOBS, {"algorithm": "P", "h_diff": "inf"}))
    assert where == {"j1": "a", "j2": "b", "j3": "b", "j4": "b", "j5": "b"}


def test_algorithm_p_weighs_the_price_by_the_node_power():
    # b's electricity is cheaper (10 vs 20) but its nodes draw 3x more: 30 > 20 per node-hour.
    where = _cluster_of_jobs(_run([(0, 1, 100)], {"algorithm": "P", "h_diff": "inf"}, b_watts=3 * PEAK))
    assert where == {"j1": "a"}


def test_the_day_and_night_tariffs_follow_the_clusters_local_time():
    from joulesim.deciders.grid.cluster_broker import Tariff
    from joulesim.deciders.grid.cluster_router import clusters_of

    props = {"cluster": "x", "price": "20", "night_price": "5", "utc_offset": "+2", "day_start": "8", "day_end": "20"}
    (cluster,) = clusters_of([{"id": 0, "name": "h", "properties": props}], "broker")
    tariff = Tariff(cluster, "broker")
    assert tariff.price_at(5 * 3600, 0.0) == 5   # 07:00 local
    assert tariff.price_at(6 * 3600, 0.0) == 20  # 08:00 local
    assert tariff.price_at(18 * 3600, 0.0) == 5  # 20:00 local
    assert tariff.price_at(0, 6.0) == 20         # simulation starts at 06:00 UTC = 08:00 local


@pytest.mark.parametrize("t_idle", ["0", "50"])  # 50: b's sub-decider needs its REQUESTED_CALL routed
def test_each_cluster_shuts_its_own_idle_nodes_down(t_idle):
    # Every job fits a and the queues stay empty: S sends them all to a; b stays idle.
    jobs = [(0, 1, 300), (10, 2, 300), (400, 1, 100)]
    result = _run(jobs, {"algorithm": "S", "t_idle": t_idle})
    assert set(_cluster_of_jobs(result).values()) == {"a"}
    changes = result.pstate_changes
    assert changes is not None
    switched = {i for ids in changes["machine_id"] for part in str(ids).split() for i in _expand(part)}
    assert {4, 5} <= switched  # b's idle nodes were switched off
    assert result.metrics["nb_machine_switches"] > 0
    plain = _run(jobs, {"algorithm": "S"})
    assert not plain.metrics["nb_machine_switches"]  # None: no switch at all


def test_without_cluster_properties_the_broker_is_plain_easy():
    platform = {"version": 1, "master": {"name": "master_host", "speed": "1Gf"},
                "clusters": [{"id": "c", "prefix": "n-", "count": 6, "speed": "1Gf"}]}
    jobs = _workload([(0, 4, 1000), (1, 3, 500), (2, 2, 100), (3, 1, 2000), (4, 6, 50), (5, 1, 10)])
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    broker = joulesim.simulate(platform, jobs, "broker").jobs[columns].sort_values("job_id")
    easy = joulesim.simulate(platform, jobs, "easy").jobs[columns].sort_values("job_id")
    assert broker.reset_index(drop=True).equals(easy.reset_index(drop=True))


def test_a_job_wider_than_every_cluster_is_rejected():
    result = _run([(0, 5, 100), (1, 1, 100)], {"algorithm": "S"})
    states = dict(zip(result.jobs["job_id"].astype(str), result.jobs["final_state"]))
    # j2 runs its whole delay, which equals its walltime: Batsim counts that as a walltime reached.
    assert states["j1"] == "REJECTED" and states["j2"] == "COMPLETED_WALLTIME_REACHED"


@pytest.mark.parametrize("options, pattern", [
    ({"algorithm": "Q"}, r"option algorithm='Q' is invalid"),
    ({"algorithm": "P"}, r"algorithm P needs option h_diff"),
    ({"algorithm": "P", "h_diff": "-1"}, r"option h_diff='-1' is invalid"),
    ({"t_idle": "soon"}, r"option t_idle='soon' is invalid"),
    ({"bogus": "1"}, r"does not accept option\(s\) bogus"),
])
def test_bad_options_are_refused(options, pattern):
    with pytest.raises(JoulesimError, match=pattern):
        load_decider("broker", options)


def _begins(properties: list[dict[str, str]]) -> dict:
    return {"now": 0, "events": [{"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": len(properties), "nb_compute_resources": len(properties), "config": {},
        "compute_resources": [{"id": i, "name": f"h{i}", "state": "idle", "properties": p}
                              for i, p in enumerate(properties)]}}]}


@pytest.mark.parametrize("properties, options, pattern", [
    ([{"cluster": "a", "price": "1"}, {}], {}, r"host 'h1' has no 'cluster' property"),
    ([{"cluster": "a", "price": "cheap"}], {}, r"cluster 'a' has property price='cheap'"),
    ([{"cluster": "a", "price": "1"}, {"cluster": "a", "price": "2"}], {}, r"disagree on property 'price'"),
    ([{"cluster": "a", "price": "1"}, {"cluster": "b"}], {"algorithm": "P", "h_diff": "0"},
     r"cluster\(s\) 'b' have none"),
    ([{"cluster": "a", "utc_offset": "+30"}], {}, r"utc_offset='\+30'"),
])
def test_bad_cluster_properties_are_refused(properties, options, pattern):
    with pytest.raises(JoulesimError, match=pattern):
        load_decider("broker", options).handle(_begins(properties))


def test_the_table_2_platform_runs_under_the_broker():
    from conftest import load_experiment_script

    module = load_experiment_script("grid_broker", "make_platform.py")
    platform = module.platform(base_size=1)  # 1, 1, 2, 2, 2, 4, 8, 17, 19, 31 nodes
    assert [c["count"] for c in platform["clusters"]] == [1, 1, 2, 2, 2, 4, 8, 17, 19, 31]
    russia = platform["clusters"][6]
    assert russia["wattage_per_state"][0][1] == pytest.approx(520.0)
    assert platform["clusters"][5]["wattage_per_state"][0][1] == pytest.approx(520.0 / 8.4)
    # Empty queues: P sends each job to the cheapest node-second (price x node power) among the
    # clusters wide enough: a 1-wide job to the eastern United States (11.2 cents x 61.9 W), a
    # 10-wide one to Japan (12 x 144.4 W; Saudi Arabia 13.1 x 325 W, China 16 x 247.6 W).
    workload = _workload([(0, 1, 100), (1, 10, 100)])
    result = joulesim.simulate(platform, workload, "broker", options={"algorithm": "P", "h_diff": "inf"})
    starts = [0]  # hosts are numbered in table order (make_platform names them so)
    for c in platform["clusters"]:
        starts.append(starts[-1] + c["count"])
    names = [c["properties"]["cluster"] for c in platform["clusters"]]
    cost = {c["properties"]["cluster"]: float(c["properties"]["price"]) * c["wattage_per_state"][0][1]
            for c in platform["clusters"]}
    where = {}
    for row in result.jobs.itertuples():
        ids = [i for part in str(row.allocated_resources).split() for i in _expand(part)]
        (where[str(row.job_id)],) = {n for n, s, e in zip(names, starts, starts[1:]) for i in ids if s <= i < e}
    assert where["j1"] == min(cost, key=cost.get) == "united_states_e"
    wide = [c["properties"]["cluster"] for c in platform["clusters"] if c["count"] >= 10]
    assert where["j2"] == min(wide, key=cost.get) == "japan"


def test_the_broker_runs_as_its_own_decider_process_with_the_same_schedule(tmp_path):
    # The ten-cluster platform of table 2 and a grid-stream day, decider over ZeroMQ vs in-process.
    import subprocess

    from joulesim.workload_tools.grid_stream import generate

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    from conftest import experiment_command

    subprocess.run([*experiment_command("grid_broker", "make_platform"), "--out", str(tmp_path / "grid.json")],
                   check=True, capture_output=True, cwd=root)
    workload = generate(days=0.5, jobs_per_day=500, nb_res=493, seed=1)
    options = {"algorithm": "P", "h_diff": "1800", "t_idle": "209.8"}
    own = joulesim.simulate(tmp_path / "grid.json", workload, "broker", options=options, energy=True,
                            in_process=False)
    inside = joulesim.simulate(tmp_path / "grid.json", workload, "broker", options=options, energy=True)
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    assert own.jobs[columns].equals(inside.jobs[columns]) and len(own.jobs) > 100
    assert own.schedule["consumed_joules"] == inside.schedule["consumed_joules"]
