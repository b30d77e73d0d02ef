"""Unit tests of the deciders for IRMaSim platforms (`heuristic`, `pcbe`), driven with
hand-written simulator messages carrying the node hierarchy."""

from __future__ import annotations

import random

import pytest

from joulesim.deciders import load_decider
from joulesim.deciders.node.irmasim_heuristic import IrmasimHeuristic
from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.pcbe import PCBE
from joulesim.deciders.node.pcbe_estimates import NodeClass, job_key, node_estimate
from joulesim.protocol.errors import JoulesimError

from conftest import send


# --------------------------------------------------------------------------- message helpers
def proc(cores: int, clock: float = 2.0, dpflops: float = 1, static: float = 10.0, dynamic: float = 1.0) -> dict:
    return {"type": "p", "cores": cores, "clock_rate": clock, "dpflops_per_cycle": dpflops,
            "static_power": static, "dynamic_power": dynamic, "min_power": 0.05,
            "b": -1.85e-05, "c": 32000, "da": 1.75, "db": 2000, "dc": 50000, "dd": 6000}


def node(*processors: dict, id: str | None = None) -> dict:
    return {"id": id, "processors": list(processors)}


def begins(*nodes: dict, profiles: dict | None = None, hierarchy: bool = True) -> dict:
    """SIMULATION_BEGINS of these nodes; cores get ids 0, 1, ... in platform order."""
    resources = []
    nodes_out = []
    for n, spec in enumerate(nodes):
        name = f"node{n}"
        procs_out = []
        for p, processor in enumerate(spec["processors"]):
            pname = f"{name}.processor{p}"
            ids = list(range(len(resources), len(resources) + processor["cores"]))
            for c, core in enumerate(ids):
                resources.append({"id": core, "name": f"{pname}.core{c}", "state": "idle",
                                  "properties": {"node": name, "processor": pname}, "zone_properties": {}})
            procs_out.append({**processor, "name": pname, "cores": ids})
        nodes_out.append({"name": name, "id": spec["id"] or name, "cluster": "cluster0", "type": "t",
                          "memory": None, "processors": procs_out})
    data = {"nb_resources": len(resources), "nb_compute_resources": len(resources), "nb_storage_resources": 0,
            "allow_compute_sharing": False, "allow_storage_sharing": False, "config": {},
            "compute_resources": resources, "storage_resources": [], "workloads": {"w0": "w.json"},
            "profiles": {"w0": profiles if profiles is not None else {"p": {"type": "cpu_ops", "req_ops": 1e9,
                                                                              "ipc": 1, "mem_vol": 1}}}}
    if hierarchy:
        data["hierarchy"] = {"model": "modelV1", "nodes": nodes_out}
    return {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}


def job(now: float, name: str, res: int, *, req_time: float = 1, req_energy: float | None = 0, mem: float = 0,
        profile: str = "p", subtime: float | None = None, forwarded: dict | None = None, **size: int) -> dict:
    job_id = f"w0!{name}"
    body = {"id": job_id, "subtime": now if subtime is None else subtime, "res": res, "profile": profile,
            "walltime": -1, "req_time": req_time, "mem": mem, **size}
    if req_energy is not None:
        body["req_energy"] = req_energy
    data = {"job_id": job_id, "job": body}
    if forwarded is not None:
        data["profile"] = forwarded
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": data}


def done(now: float, name: str, alloc: str) -> dict:
    return {"timestamp": now, "type": "JOB_COMPLETED",
            "data": {"job_id": f"w0!{name}", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": alloc}}


def started(decisions: list[tuple]) -> list[str]:
    return [d[1] for d in decisions if d[0] == "EXECUTE"]


def make(name: str, platform: dict, **options: str):
    decider = load_decider(name, {k: str(v) for k, v in options.items()})
    assert send(decider, 0.0, platform) == []
    return decider


def run_serially(decider, names: list[str], first_alloc: str, t: float = 10.0) -> list[str]:
    """Complete the blocker 'b', then each started job in turn (one job fits at a time); the start order."""
    order = []
    running = ("b", first_alloc)
    while running is not None:
        decisions = send(decider, t, done(t, *running))
        t += 1
        running = None
        for kind, name, alloc in decisions:
            order.append(name)
            running = (name, alloc)
    assert sorted(order) == sorted(names)
    return order


# --------------------------------------------------------------------------- heuristic: defaults
def test_heuristic_default_fills_the_first_node_core_by_core():
    decider = make("heuristic", begins(node(proc(4)), node(proc(4))))
    assert isinstance(decider, IrmasimHeuristic)
    assert send(decider, 0.0, job(0, "1", 2), job(0, "2", 2), job(0, "3", 3)) == [
        ("EXECUTE", "1", "0-1"), ("EXECUTE", "2", "2-3"), ("EXECUTE", "3", "4-6")]


def test_first_sorts_node_ids_as_text():
    # Platform order node2, node10, node3; as text: node10 < node2 < node3.
    decider = make("heuristic", begins(node(proc(2), id="node2"), node(proc(2), id="node10"),
                                       node(proc(2), id="node3")))
    assert send(decider, 0.0, job(0, "a", 2), job(0, "b", 2), job(0, "c", 2)) == [
        ("EXECUTE", "a", "2-3"), ("EXECUTE", "b", "0-1"), ("EXECUTE", "c", "4-5")]


def test_strict_head_of_queue_blocks_smaller_jobs():
    decider = make("heuristic", begins(node(proc(4))))
    assert send(decider, 0.0, job(0, "a", 3)) == [("EXECUTE", "a", "0-2")]
    # b (2 cores) does not fit; c (1 core) would, but never passes the head.
    assert send(decider, 1.0, job(1, "b", 2), job(1, "c", 1)) == []
    assert send(decider, 5.0, done(5, "a", "0-2")) == [("EXECUTE", "b", "0-1"), ("EXECUTE", "c", "2")]


# --------------------------------------------------------------------------- heuristic: job selection
@pytest.mark.parametrize("selection, expected", [
    ("first", ["x", "y", "z"]),
    ("shortest", ["y", "z", "x"]),  # req_time 5, 1, 3
    ("longest", ["x", "z", "y"]),
    ("low_mem", ["z", "x", "y"]),  # mem 200, 300, 100
    ("low_mem_ops", ["y", "x", "z"]),  # mem_vol 20, 10, 30
])
def test_job_selection_orders(selection, expected):
    profiles = {"px": {"type": "cpu_ops", "req_ops": 1e9, "ipc": 1, "mem_vol": 20},
                "py": {"type": "cpu_ops", "req_ops": 1e9, "ipc": 1, "mem_vol": 10},
                "pz": {"type": "cpu_ops", "req_ops": 1e9, "ipc": 1, "mem_vol": 30}}
    decider = make("heuristic", begins(node(proc(4)), profiles=profiles), job_selection=selection)
    assert started(send(decider, 0.0, job(0, "b", 4, profile="px"))) == ["b"]
    assert send(decider, 1.0, job(1, "x", 4, req_time=5, mem=200, profile="px"),
                job(1, "y", 4, req_time=1, mem=300, profile="py", subtime=2),
                job(1, "z", 4, req_time=3, mem=100, profile="pz", subtime=3)) == []
    assert run_serially(decider, ["x", "y", "z"], "0-3") == expected


def test_first_orders_by_subtime_not_by_arrival_and_ties_keep_submission_order():
    decider = make("heuristic", begins(node(proc(4))), job_selection="first")
    send(decider, 0.0, job(0, "b", 4))
    send(decider, 1.0, job(1, "x", 4, subtime=0.5), job(1, "y", 4, subtime=0.2), job(1, "z", 4, subtime=0.5))
    assert run_serially(decider, ["x", "y", "z"], "0-3") == ["y", "x", "z"]


def test_shortest_ties_keep_submission_order():
    decider = make("heuristic", begins(node(proc(4))), job_selection="shortest")
    send(decider, 0.0, job(0, "b", 4))
    send(decider, 1.0, job(1, "x", 4, req_time=2), job(1, "y", 4, req_time=1), job(1, "z", 4, req_time=2))
    send(decider, 2.0, job(2, "w", 4, req_time=1))
    assert run_serially(decider, ["x", "y", "z", "w"], "0-3") == ["y", "w", "x", "z"]


def test_smallest_job_first_then_strict_head():
    decider = make("heuristic", begins(node(proc(4))), job_selection="smallest")
    send(decider, 0.0, job(0, "b", 4))
    send(decider, 1.0, job(1, "x", 4), job(1, "y", 3), job(1, "z", 4))
    # y (3 cores) first; x (4) is then the head and waits for y, z (tie with x) after x.
    assert send(decider, 2.0, done(2, "b", "0-3")) == [("EXECUTE", "y", "0-2")]
    assert send(decider, 3.0, done(3, "y", "0-2")) == [("EXECUTE", "x", "0-3")]
    assert send(decider, 4.0, done(4, "x", "0-3")) == [("EXECUTE", "z", "0-3")]


def test_random_job_selection_follows_the_seeded_draws():
    def order(seed: int) -> list[str]:
        decider = make("heuristic", begins(node(proc(4))), job_selection="random", seed=seed)
        send(decider, 0.0, job(0, "b", 4))
        send(decider, 1.0, *[job(1, n, 4) for n in "pqrstu"])
        return run_serially(decider, list("pqrstu"), "0-3")

    for seed in (0, 7):
        rng = random.Random(seed)
        draws = {name: rng.random() for name in "bpqrstu"}  # one draw per submitted job, blocker included
        assert order(seed) == sorted("pqrstu", key=lambda n: draws[n])
        assert order(seed) == order(seed)
    assert order(0) != order(7)


# --------------------------------------------------------------------------- heuristic: resource selection
def test_high_gflops_prefers_the_fastest_first_processor_ties_in_platform_order():
    platform = begins(node(proc(2, clock=2.0)), node(proc(2, clock=3.0), proc(2, clock=9.0)),
                      node(proc(2, clock=1.5, dpflops=2)))
    decider = make("heuristic", platform, resource_selection="high_gflops")
    # node1 and node2 both have 3.0 Gop/s first processors (node1's second processor is ignored).
    assert send(decider, 0.0, job(0, "a", 2), job(0, "b", 2), job(0, "c", 2), job(0, "d", 2)) == [
        ("EXECUTE", "a", "2-3"), ("EXECUTE", "b", "4-5"), ("EXECUTE", "c", "6-7"), ("EXECUTE", "d", "0-1")]


def test_high_cores_and_low_cores_follow_idle_cores():
    platform = begins(node(proc(4)), node(proc(8)), node(proc(2)))  # cores 0-3, 4-11, 12-13
    high = make("heuristic", platform, resource_selection="high_cores")
    assert send(high, 0.0, job(0, "a", 2), job(0, "b", 4), job(0, "c", 2)) == [
        ("EXECUTE", "a", "4-5"),  # 8 idle
        ("EXECUTE", "b", "6-9"),  # node1 still has 6, node0 4
        ("EXECUTE", "c", "0-1")]  # node0 4, node1 2, node2 2
    low = make("heuristic", platform, resource_selection="low_cores")
    assert send(low, 0.0, job(0, "a", 2), job(0, "b", 3), job(0, "c", 1)) == [
        ("EXECUTE", "a", "12-13"),  # node2: 2 idle, the fewest able
        ("EXECUTE", "b", "0-2"),  # node0 (4) before node1 (8)
        ("EXECUTE", "c", "3")]  # node0 has 1 idle left


def test_high_mem_prefers_the_node_with_most_memory_in_use():
    decider = make("heuristic", begins(node(proc(2)), node(proc(2)), node(proc(2))), resource_selection="high_mem")
    assert send(decider, 0.0, job(0, "a", 1, mem=100)) == [("EXECUTE", "a", "0")]
    assert send(decider, 1.0, job(1, "b", 1, mem=50)) == [("EXECUTE", "b", "1")]  # node0 uses 100
    assert send(decider, 2.0, job(2, "c", 1, mem=10)) == [("EXECUTE", "c", "2")]  # node0 full; node1 first
    assert decider.platform.memory == [150, 10, 0]
    send(decider, 3.0, done(3, "a", "0"), done(3, "b", "1"))
    assert decider.platform.memory == [0, 10, 0]
    assert send(decider, 4.0, job(4, "d", 1, mem=1)) == [("EXECUTE", "d", "3")]  # node1 uses the most
    # e needs 2 idle cores: node1 has 1; node0 and node2 tie at 0 -> node0.
    assert send(decider, 5.0, job(5, "e", 2, mem=1)) == [("EXECUTE", "e", "0-1")]


def test_memory_in_use_counts_the_job_mem_once_per_task():
    decider = make("heuristic", begins(node(proc(4)), node(proc(4))), resource_selection="high_mem")
    send(decider, 0.0, job(0, "a", 3, mem=7))
    assert decider.platform.memory == [21, 0]


def test_high_mem_bw_uses_the_first_processors_requested_bandwidth():
    # node0: processor0 (cores 0-1, 2 GHz) + processor1 (cores 2-3); node1: one 1 GHz processor (cores 4-7).
    profiles = {"pa": {"type": "cpu_ops", "req_ops": 2e9, "ipc": 1, "mem_vol": 10},
                "pb": {"type": "cpu_ops", "req_ops": 1e9, "ipc": 2, "mem_vol": 8}}
    platform = begins(node(proc(2, clock=2.0), proc(2, clock=2.0)), node(proc(4, clock=1.0)), profiles=profiles)
    decider = make("heuristic", platform, resource_selection="high_mem_bw")
    bandwidth = decider.platform.bandwidth
    # Bandwidth of a task: mem_vol / (ops / (clock * dpflops * 1e3 * 1e6)), ops = ceil(req_ops / ipc).
    assert send(decider, 0.0, job(0, "a", 1, profile="pa")) == [("EXECUTE", "a", "0")]
    assert bandwidth == [10 / (2e9 / 2e9), 0.0]
    assert send(decider, 1.0, job(1, "b", 1, profile="pb")) == [("EXECUTE", "b", "4")]
    assert bandwidth == [10.0, 8 / (5e8 / 1e9)]  # 16
    assert send(decider, 2.0, job(2, "c", 1, profile="pa")) == [("EXECUTE", "c", "1")]  # 10 < 16
    assert bandwidth == [20.0, 16.0]
    assert send(decider, 3.0, job(3, "d", 1, profile="pa")) == [("EXECUTE", "d", "5")]  # 16 < 20
    assert bandwidth == [20.0, 16.0 + 10 / (2e9 / 1e9)]  # 21
    # e and f go to node0's second processor: its bandwidth does not count.
    assert send(decider, 4.0, job(4, "e", 1, profile="pa"), job(4, "f", 1, profile="pa"),
                job(4, "g", 1, profile="pa")) == [
        ("EXECUTE", "e", "2"), ("EXECUTE", "f", "3"), ("EXECUTE", "g", "6")]
    assert bandwidth == [20.0, 26.0]
    send(decider, 5.0, done(5, "a", "0"), done(5, "e", "2"), done(5, "b", "4"))
    assert bandwidth == [10.0, 10.0]


def test_high_mem_bw_reads_forwarded_profiles():
    decider = make("heuristic", begins(node(proc(2)), node(proc(2)), profiles={}), resource_selection="high_mem_bw")
    forwarded = {"type": "cpu_ops", "req_ops": 4e9, "ipc": 1, "mem_vol": 6}
    assert send(decider, 0.0, job(0, "a", 1, profile="q", forwarded=forwarded)) == [("EXECUTE", "a", "0")]
    assert decider.platform.bandwidth == [6 / (4e9 / 2e9), 0.0]


def test_low_power_orders_nodes_by_total_maximum_power():
    # Max power: node0 4 x 2 + 10 = 18; node1 2 x 5 + 2 = 12; node2 2 x (1 + 1) + 4 x 0.5 + 1 = 7.
    platform = begins(node(proc(4, dynamic=2, static=10)), node(proc(2, dynamic=5, static=2)),
                      node(proc(2, dynamic=1, static=2), proc(4, dynamic=0.5, static=1)))
    decider = make("heuristic", platform, resource_selection="low_power")
    assert [n.max_power for n in decider.platform.nodes] == [18, 12, 7]
    assert send(decider, 0.0, job(0, "a", 4), job(0, "b", 2), job(0, "c", 2), job(0, "d", 2)) == [
        ("EXECUTE", "a", "6-9"), ("EXECUTE", "b", "10-11"), ("EXECUTE", "c", "4-5"), ("EXECUTE", "d", "0-1")]


def test_high_power_is_the_pre_2024_low_power_order():
    platform = begins(node(proc(4, dynamic=2, static=10)), node(proc(2, dynamic=5, static=2)),
                      node(proc(2, dynamic=1, static=2), proc(4, dynamic=0.5, static=1)))
    decider = make("heuristic", platform, resource_selection="high_power")
    # Most powerful first: node0 (18 W), node1 (12 W), node2 (7 W).
    assert send(decider, 0.0, job(0, "a", 4), job(0, "b", 2), job(0, "c", 2)) == [
        ("EXECUTE", "a", "0-3"), ("EXECUTE", "b", "4-5"), ("EXECUTE", "c", "6-7")]


def test_random_resource_selection_shuffles_viable_nodes_with_the_seeded_generator():
    def run(seed: int) -> list[str]:
        decider = make("heuristic", begins(*[node(proc(1)) for _ in range(6)]), resource_selection="random",
                       seed=seed)
        return [d[2] for d in send(decider, 0.0, *[job(0, str(i), 1) for i in range(6)])]

    for seed in (0, 3):
        rng = random.Random(seed)
        for _ in range(6):
            rng.random()  # the job draws, one per submitted job
        free = list(range(6))
        expected = []
        for _ in range(6):
            viable = list(free)
            rng.shuffle(viable)
            expected.append(str(viable[0]))
            free.remove(viable[0])
        assert run(seed) == expected
        assert run(seed) == run(seed)
    assert run(0) != run(3)


# --------------------------------------------------------------------------- heuristic: multi-node jobs
def test_multi_node_jobs_are_laid_out_round_robin_on_the_first_viable_nodes():
    decider = make("heuristic", begins(*[node(proc(4)) for _ in range(4)]))  # cores 0-3, 4-7, 8-11, 12-15
    # 6 tasks on 2 nodes (3 per node): tasks 0, 2, 4 on node0, 1, 3, 5 on node1.
    assert send(decider, 0.0, job(0, "a", 6, nodes=2, ntasks_per_node=3)) == [("EXECUTE", "a", "0-2 4-6")]
    # 5 tasks on 2 nodes, ntasks_per_node defaulting to 3: node2 takes 3, node3 2.
    assert send(decider, 1.0, job(1, "b", 5, nodes=2)) == [("EXECUTE", "b", "8-10 12-13")]
    # 2 tasks asking 3 nodes: three viable nodes are needed, the first two are used.
    assert send(decider, 2.0, job(2, "c", 2, nodes=3, ntasks_per_node=1)) == [("EXECUTE", "c", "3 7")]
    # 4 tasks on 2 nodes: only node2 (1 idle) and node3 (2 idle) have room for one task: too few.
    assert send(decider, 3.0, job(3, "d", 4, nodes=2, ntasks_per_node=2)) == []
    assert decider.platform.idle == [0, 0, 1, 2]
    # Once a ends, node0 and node1 have 3 idle cores each (c keeps cores 3 and 7).
    assert send(decider, 4.0, done(4, "a", "0-2 4-6")) == [("EXECUTE", "d", "0-1 4-5")]
    assert decider.platform.idle == [1, 1, 1, 2]


def test_node_bookkeeping_after_completion():
    decider = make("heuristic", begins(node(proc(2), proc(2)), node(proc(4))))
    send(decider, 0.0, job(0, "a", 3, mem=5), job(0, "b", 2, mem=1))
    platform = decider.platform
    assert platform.idle == [1, 2]
    assert platform.nodes_with_idle[1] == {0} and platform.nodes_with_idle[2] == {1}
    assert platform.memory == [15, 2]
    send(decider, 1.0, done(1, "a", "0-2"))
    assert platform.idle == [4, 2] and platform.memory == [0, 2] and platform.max_idle() == 4
    assert send(decider, 2.0, job(2, "c", 4)) == [("EXECUTE", "c", "0-3")]
    assert platform.runs.keys() == {"w0!b", "w0!c"}


def test_submissions_are_scheduled_before_completions_of_the_same_message():
    # IRMaSim hands a step's submissions to the manager before it frees the ended jobs' cores.
    decider = make("heuristic", begins(node(proc(4)), node(proc(2))))
    assert send(decider, 0.0, job(0, "a", 4)) == [("EXECUTE", "a", "0-3")]
    assert send(decider, 5.0, done(5, "a", "0-3"), job(5, "b", 2), job(5, "c", 4)) == [
        ("EXECUTE", "b", "4-5"), ("EXECUTE", "c", "0-3")]


# --------------------------------------------------------------------------- heuristic: step rule
def test_one_per_step_starts_one_job_per_instant_and_the_rest_at_later_events():
    # Seed 002's step rule for the learned scheduler, offered to the heuristic so that both are
    # compared under it (issue 48): all three jobs fit at t=0; one starts then, one at each event.
    platform = begins(node(proc(4)), node(proc(4)))
    everything = make("heuristic", platform)
    assert started(send(everything, 0.0, job(0, "1", 2), job(0, "2", 2), job(0, "3", 2))) == ["1", "2", "3"]
    one = make("heuristic", platform, per_step="one")
    assert send(one, 0.0, job(0, "1", 2), job(0, "2", 2), job(0, "3", 2)) == [("EXECUTE", "1", "0-1")]
    assert send(one, 0.0) == []  # the same instant again: still one
    assert send(one, 3.0, job(3, "4", 1)) == [("EXECUTE", "2", "2-3")]  # a submission is an event
    # A completion's instant: its two passes (submissions, then freed cores) share one start.
    assert send(one, 7.0, done(7, "1", "0-1"), job(7, "5", 1)) == [("EXECUTE", "3", "4-5")]
    assert send(one, 9.0, done(9, "2", "2-3")) == [("EXECUTE", "4", "0")]
    assert send(one, 9.5, done(9.5, "3", "4-5")) == [("EXECUTE", "5", "1")]


# --------------------------------------------------------------------------- heuristic: refusals
def test_jobs_that_can_never_fit_are_rejected():
    decider = make("heuristic", begins(node(proc(4)), node(proc(2))))
    assert send(decider, 0.0, job(0, "zero", 0), job(0, "wide", 5), job(0, "per_node", 2, ntasks_per_node=5),
                job(0, "three_nodes", 3, nodes=3), job(0, "ok", 4, nodes=2, ntasks_per_node=2)) == [
        ("REJECT", "zero"), ("REJECT", "wide"), ("REJECT", "per_node"), ("REJECT", "three_nodes"),
        ("EXECUTE", "ok", "0-1 4-5")]


@pytest.mark.parametrize("name", ["heuristic", "pcbe"])
def test_a_platform_without_hierarchy_is_a_clear_error(name):
    decider = load_decider(name, {})
    with pytest.raises(JoulesimError, match=f"decider {name}: the platform has no node hierarchy.*IRMaSim platform"):
        send(decider, 0.0, begins(node(proc(4)), hierarchy=False))


@pytest.mark.parametrize("name, options, message", [
    ("heuristic", {"job_selection": "oldest"}, r"option job_selection='oldest' is invalid: accepted values are "
                                               r"'random', 'first', 'shortest', 'longest', 'smallest', 'low_mem', "
                                               r"'low_mem_ops'"),
    ("heuristic", {"resource_selection": "fastest"}, r"option resource_selection='fastest' is invalid: .*'high_gflops'"),
    ("heuristic", {"seed": "x"}, r"option seed='x' is invalid: accepted values are integers >= 0"),
    ("heuristic", {"seed": "-1"}, r"option seed='-1' is invalid"),
    ("heuristic", {"node_prio": "lo_first"}, r"does not accept option\(s\) node_prio"),
    ("heuristic", {"per_step": "two"}, r"option per_step='two' is invalid: accepted values are 'one', 'all'"),
    ("pcbe", {"criterion": "power"}, r"option criterion='power' is invalid: accepted values are 'energy', 'edp'"),
    ("pcbe", {"job_prio": "low"}, r"option job_prio='low' is invalid: accepted values are 'lo_first', 'hi_first'"),
    ("pcbe", {"node_prio": "hi"}, r"option node_prio='hi' is invalid"),
    ("pcbe", {"starvation": "-5"}, r"option starvation='-5' is invalid: accepted values are numbers in \[0, inf\]"),
    ("pcbe", {"starvation": "soon"}, r"option starvation='soon' is invalid"),
    ("pcbe", {"job_selection": "first"}, r"does not accept option\(s\) job_selection"),
])
def test_bad_option_values(name, options, message):
    with pytest.raises(JoulesimError, match=message):
        load_decider(name, options)


def test_a_needed_field_missing_from_a_job_is_a_clear_error():
    decider = make("heuristic", begins(node(proc(4)), profiles={}), job_selection="low_mem_ops")
    with pytest.raises(JoulesimError, match=r"job w0!a has profile 'p', which neither.*job_selection=low_mem_ops"):
        send(decider, 0.0, job(0, "a", 1))
    pcbe = make("pcbe", begins(node(proc(4))))
    bad = job(0, "a", 1)
    del bad["data"]["job"]["req_time"]
    with pytest.raises(JoulesimError, match=r"decider pcbe: job w0!a has no req_time"):
        send(pcbe, 0.0, bad)


# --------------------------------------------------------------------------- PCBE
# The PCBE comparison platform of seed 000: node0 3.4 GHz, node1 1.5 GHz, 4 cores each.
def pcbe_platform() -> dict:
    return begins(node(proc(4, clock=3.4, static=6.14211, dynamic=5.59316)),
                  node(proc(4, clock=1.5, static=2.31082, dynamic=1.59482)))


def test_pcbe_estimates_by_hand():
    decider = make("pcbe", pcbe_platform())
    assert isinstance(decider, PCBE)
    fast, slow = (NodeClass.of(n) for n in decider.platform.nodes)
    j = NodeJob("w0!h", 0, 0.0, 4, 1, 4, req_time=10, req_energy=2.5, mem=1100, mem_vol=None, ops=None)
    # T = req_time x (F_min / F) / dpflops; energy = T x (tasks x dynamic + static / (assigned + 1)).
    t_fast = 10 * (1.5 / 3.4)
    assert node_estimate("energy", "lo_first", j, fast, 0, 1.5) == pytest.approx(t_fast * (4 * 5.59316 + 6.14211),
                                                                                 rel=1e-15)
    assert node_estimate("energy", "lo_first", j, fast, 0, 1.5) == pytest.approx(125.80036764705883, rel=1e-15)
    assert node_estimate("energy", "lo_first", j, slow, 0, 1.5) == pytest.approx(86.901, rel=1e-15)
    assert node_estimate("energy", "lo_first", j, slow, 1, 1.5) == pytest.approx(10 * (4 * 1.59482 + 2.31082 / 2))
    assert node_estimate("edp", "lo_first", j, fast, 0, 1.5) == pytest.approx(125.80036764705883 * t_fast)
    assert node_estimate("edp", "hi_first", j, slow, 0, 1.5) == pytest.approx(-869.01)
    assert job_key("energy", "lo_first", j) == 10.0
    assert job_key("edp", "hi_first", j) == -100.0


@pytest.mark.parametrize("options, alloc", [
    ({}, "4-7"),  # energy: 86.9 J on node1 < 125.8 J on node0
    ({"node_prio": "hi_first"}, "0-3"),
    ({"criterion": "edp"}, "0-3"),  # EDP: 555.0 on node0 < 869.0 on node1
    ({"criterion": "edp", "node_prio": "hi_first"}, "4-7"),
])
def test_pcbe_node_choice(options, alloc):
    decider = make("pcbe", pcbe_platform(), **options)
    assert send(decider, 0.0, job(0, "h", 4, req_time=10)) == [("EXECUTE", "h", alloc)]


def test_pcbe_counts_jobs_assigned_to_nodes():
    platform = begins(node(proc(4)), node(proc(4)))  # identical nodes
    lo = make("pcbe", platform)
    # a ties on both nodes -> node0; b: node0 now shares its static power between 2 jobs -> node0 again.
    assert send(lo, 0.0, job(0, "a", 1, req_time=10), job(0, "b", 1, req_time=10)) == [
        ("EXECUTE", "a", "0"), ("EXECUTE", "b", "1")]
    assert lo.assigned == {"node0": 2, "node1": 0}
    send(lo, 1.0, done(1, "a", "0"), done(1, "b", "1"))
    assert lo.assigned == {"node0": 0, "node1": 0} and lo.platform.idle == [4, 4]
    hi = make("pcbe", platform, node_prio="hi_first")
    assert send(hi, 0.0, job(0, "a", 1, req_time=10), job(0, "b", 1, req_time=10)) == [
        ("EXECUTE", "a", "0"), ("EXECUTE", "b", "4")]
    send(hi, 1.0, done(1, "a", "0"))
    assert hi.assigned == {"node0": 0, "node1": 1}
    assert send(hi, 2.0, job(2, "c", 1, req_time=10)) == [("EXECUTE", "c", "0")]


@pytest.mark.parametrize("options, expected", [
    ({}, ["y", "z", "x"]),  # req_energy x ntasks: 40, 8, 12
    ({"job_prio": "hi_first"}, ["x", "z", "y"]),
    ({"criterion": "edp"}, ["z", "x", "y"]),  # x req_time 1, y 10, z 1: 40, 80, 12
])
def test_pcbe_job_order(options, expected):
    decider = make("pcbe", begins(node(proc(4))), **options)
    send(decider, 0.0, job(0, "b", 4, req_time=1))
    send(decider, 1.0, job(1, "x", 4, req_energy=10, req_time=1), job(1, "y", 4, req_energy=2, req_time=10),
         job(1, "z", 4, req_energy=3, req_time=1))
    assert run_serially(decider, ["x", "y", "z"], "0-3", t=2.0) == expected


def test_pcbe_job_order_ties_keep_submission_order_and_missing_req_energy_is_zero():
    decider = make("pcbe", begins(node(proc(4))))
    send(decider, 0.0, job(0, "b", 4))
    send(decider, 1.0, job(1, "x", 4, req_energy=1), job(1, "y", 4, req_energy=None), job(1, "z", 4, req_energy=0))
    assert run_serially(decider, ["x", "y", "z"], "0-3", t=2.0) == ["y", "z", "x"]


def test_pcbe_does_not_block_on_a_job_that_fits_nowhere():
    decider = make("pcbe", begins(node(proc(4))))
    assert send(decider, 0.0, job(0, "a", 3)) == [("EXECUTE", "a", "0-2")]
    # b comes first (lower energy) but needs 2 cores; c fits in the one idle core.
    assert send(decider, 1.0, job(1, "b", 2, req_energy=0), job(1, "c", 1, req_energy=5)) == [("EXECUTE", "c", "3")]
    assert send(decider, 2.0, done(2, "a", "0-2")) == [("EXECUTE", "b", "0-1")]


def test_pcbe_rejects_jobs_larger_than_every_node():
    decider = make("pcbe", begins(node(proc(4)), node(proc(2))))
    assert send(decider, 0.0, job(0, "wide", 5), job(0, "split", 6, nodes=2), job(0, "zero", 0),
                job(0, "ok", 4)) == [("REJECT", "wide"), ("REJECT", "split"), ("REJECT", "zero"),
                                     ("EXECUTE", "ok", "0-3")]


@pytest.mark.parametrize("options, when, first", [
    ({}, 61.0, "old"),  # old has waited 60 s: placed before young, though young ranks first
    ({}, 60.5, "young"),  # old has waited 59.5 s only
    ({"starvation": "inf"}, 61.0, "young"),
    ({"starvation": "0"}, 61.0, "young"),  # every job starves: plain order
])
def test_pcbe_starvation_guard(options, when, first):
    decider = make("pcbe", begins(node(proc(4))), **options)
    assert send(decider, 0.0, job(0, "b", 4)) == [("EXECUTE", "b", "0-3")]
    send(decider, 1.0, job(1, "old", 3, req_energy=9))
    send(decider, 50.0, job(50, "young", 3, req_energy=1))
    assert send(decider, when, done(when, "b", "0-3")) == [("EXECUTE", first, "0-2")]


def test_pcbe_starving_jobs_keep_their_order_among_themselves():
    decider = make("pcbe", begins(node(proc(2)), node(proc(1))))
    assert started(send(decider, 0.0, job(0, "b", 2), job(0, "c", 1))) == ["b", "c"]
    send(decider, 1.0, job(1, "s2", 1, req_energy=2), job(1, "s1", 1, req_energy=1))
    send(decider, 100.0, job(100, "y", 1, req_energy=0))
    # At 100 s, s1 and s2 starve: s1 (lower energy) then s2 take the two free cores; y waits.
    assert started(send(decider, 100.0, done(100, "b", "0-1"))) == ["s1", "s2"]
    assert started(send(decider, 101.0, done(101, "c", "2"))) == ["y"]


def test_pcbe_counts_assigned_jobs_per_node_id_as_irmasim():
    # IRMaSim's Energy manager keys its counters by node id, which is unique within a cluster
    # only: the first two nodes (both "node0", of two clusters) share one counter.
    platform = begins(node(proc(4), id="node0"), node(proc(4), id="node0"), node(proc(4), id="node1"))
    decider = make("pcbe", platform, node_prio="hi_first")
    assert send(decider, 0.0, job(0, "a", 1, req_time=10)) == [("EXECUTE", "a", "0")]
    assert decider.assigned == {"node0": 1, "node1": 0}
    # Highest estimate = fewest assigned jobs: node1, not the idle second "node0".
    assert send(decider, 1.0, job(1, "b", 1, req_time=10)) == [("EXECUTE", "b", "8")]


def test_unavailable_cores_are_not_used_until_available_again():
    decider = make("heuristic", begins(node(proc(2)), node(proc(2))))
    unavailable = {"timestamp": 0.0, "type": "NOTIFY", "data": {"type": "event_machine_unavailable", "resources": "1"}}
    assert send(decider, 0.0, unavailable, job(0, "a", 2)) == [("EXECUTE", "a", "2-3")]
    assert send(decider, 1.0, job(1, "b", 2)) == []
    available = {"timestamp": 2.0, "type": "NOTIFY", "data": {"type": "event_machine_available", "resources": "1"}}
    assert send(decider, 2.0, available) == [("EXECUTE", "b", "0-1")]
