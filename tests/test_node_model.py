"""IRMaSim's node model in the simulator: platform and workload files, modelV1 contention,
processor energy, and the protocol extension (cores as resources, the hierarchy)."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.models.memory_contention import speedup
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.workload_loader import load_workload

# Processor "fast": 4 cores at 2 GHz x 1 flop/cycle = 2e9 ops/s per core; contention parameters
# chosen for round numbers: the floor is 1/(1 + 0.6 n) (dc tiny: the smoothstep is 0), the
# linear part 1 - 1e-5 (X - 1000).
FAST = {"cores": 4, "clock_rate": 2.0, "dpflops_per_cycle": 1, "static_power": 10.0, "dynamic_power": 3.0,
        "min_power": 0.1, "b": -1e-05, "c": 1000, "da": 0, "db": 0, "dc": 1, "dd": 0}
SLOW = dict(FAST, cores=2, clock_rate=1.0, static_power=8.0, dynamic_power=1.0)


def platform(**platforms) -> dict:
    names = platforms or {"p": [{"type": "n_fast", "number": 1}, {"type": "n_slow", "number": 1}]}
    return {
        "platform": {name: {"id": name, "model_name": "modelV1", "clusters": [{"id": "cluster0", "nodes": nodes}]}
                     for name, nodes in names.items()},
        "node": {"n_fast": {"id": "n_fast", "processors": [{"type": "fast", "number": 1}], "memory": {"capacity": 32}},
                 "n_slow": {"id": "n_slow", "processors": [{"type": "slow", "number": 1}]}},
        "processor": {"fast": dict(FAST), "slow": dict(SLOW)},
    }


def workload(*jobs: dict) -> dict:
    """IRMaSim jobs with inline parameters (req_ops per task; ipc 1)."""
    return {"jobs": [dict({"id": f"j{i}", "req_time": 1, "ipc": 1, "mem": 0, "mem_vol": 0}, **job)
                     for i, job in enumerate(jobs)]}


class Pinned(Decider):
    """Starts each job at submission on the cores given by job id; records what it saw."""

    def __init__(self, cores: dict[str, list[int]]):
        super().__init__()
        self.cores = cores
        self.begins: dict = {}
        self.submitted: list[dict] = []

    def on_simulation_begins(self, data):
        self.begins = data

    def on_job_submitted(self, job):
        self.submitted.append(job.json)
        self.execute_job(job.id, self.cores[job.id.split("!")[1]])


def run(jobs_workload: dict, cores: dict[str, list[int]], **kwargs):
    decider = Pinned(cores)
    result = joulesim.simulate(kwargs.pop("platform", platform()), jobs_workload, decider, energy=True, **kwargs)
    return result, decider


def finish(result, job: str) -> float:
    """The job's finish time (the jobs file prints microseconds)."""
    jobs = result.jobs.set_index("job_id")
    return float(jobs.loc[job, "finish_time"])


def about(value: float):
    return pytest.approx(value, abs=1e-6)


# --------------------------------------------------------------------------- the formula
def test_speedup_in_each_branch_of_modelv1():
    params = dict(b=-1e-05, c=1000, da=0, db=0, dc=1, dd=0)
    assert speedup(999, 500, 1, **params) == 1.0  # below c: no contention
    assert speedup(11000, 0, 2, **params) == 1.0  # a task asking no bandwidth has floor 1
    assert speedup(11000, 5500, 1, **params) == 0.9  # linear: 1 - 1e-5 x 10,000
    assert speedup(100000, 50000, 1, **params) == 0.625  # floor 1 / (1 + 0.6)
    # The smoothstep between 0 and 1: own demand halfway (x = 0.5) gives ss = 0.5, so with one
    # other task the floor is 0.5 x 0.6/1.6 + 1/1.6 = 0.8125.
    assert speedup(1e6, 0.5, 1, b=-1e-05, c=1000, da=0, db=0, dc=1, dd=0) == 0.8125
    # IRMaSim rounds to 9 decimals: 1/(1 + 0.6 x 2) = 0.454545454545...
    assert speedup(1e7, 1e7, 2, **params) == 0.454545455


# --------------------------------------------------------------------------- analytic runs
def test_one_job_alone_runs_at_nominal_speed_and_draws_its_processor_power():
    # 2 tasks of 4e9 operations at 2e9 ops/s: 2 s. Processor power while busy: 10 W static +
    # 2 busy cores x 3 W; the slow processor never runs a task: 0 W under IRMaSim's rule.
    result, decider = run(workload({"subtime": 0, "res": 2, "req_ops": 4e9}), {"j0": [0, 1]})
    assert finish(result, "j0") == about(2.0)
    assert float(result.schedule["consumed_joules"]) == about(32.0)
    # The job's energy: its cores' dynamic power and their quarter shares of static power.
    assert float(result.jobs["consumed_energy"][0]) == pytest.approx(2 * (3 + 10 / 4) * 2.0, rel=1e-12)
    always, _ = run(workload({"subtime": 0, "res": 2, "req_ops": 4e9}), {"j0": [0, 1]}, idle_power="always")
    # ...and from t=0 with min power: the slow processor draws 0.1 x 8 W for 2 s.
    assert float(always.schedule["consumed_joules"]) == about(32.0 + 1.6)


def test_ipc_divides_the_operations():
    result, _ = run(workload({"subtime": 0, "res": 1, "req_ops": 8e9, "ipc": 2}), {"j0": [0]})
    assert finish(result, "j0") == about(2.0)


def test_tasks_sharing_a_processor_slow_down_linearly_then_down_to_the_floor():
    # Each task asks mem_vol / (its 1 s alone) = 5,500 MB/s: X = 11,000, speedup 0.9.
    result, _ = run(workload({"subtime": 0, "res": 2, "req_ops": 2e9, "mem_vol": 5500}), {"j0": [0, 1]})
    assert finish(result, "j0") == about(1 / 0.9)
    assert float(result.schedule["consumed_joules"]) == about(16 / 0.9)
    heavy, _ = run(workload({"subtime": 0, "res": 2, "req_ops": 2e9, "mem_vol": 50000}), {"j0": [0, 1]})
    assert finish(heavy, "j0") == about(1 / 0.625)


def test_speeds_are_resolved_when_a_job_starts_and_ends_on_the_processor():
    # j0 (2 tasks asking 5,500 MB/s) runs at 0.9 from 0; j1 (1 task asking 1,000) joins at 0.5
    # on the same processor: X = 12,000, all three at 0.89 (the floor, now 1/2.2, is not
    # reached). j0 has 1.1e9 ops left: it ends 1.1e9 / 1.78e9 s later, when j1 has done as
    # much; j1 then runs alone at nominal speed (a lone task has floor 1).
    result, _ = run(workload({"subtime": 0, "res": 2, "req_ops": 2e9, "mem_vol": 5500},
                             {"subtime": 0.5, "res": 1, "req_ops": 2e9, "mem_vol": 1000}),
                    {"j0": [0, 1], "j1": [2]})
    t0 = 0.5 + 1.1e9 / 1.78e9
    t1 = t0 + 0.9e9 / 2e9
    assert finish(result, "j0") == about(t0)
    assert finish(result, "j1") == about(t1)
    # Power: 10 + 2 x 3 W until 0.5, 10 + 3 x 3 W until j0 ends, then 10 + 3 W.
    assert float(result.schedule["consumed_joules"]) == about(16 * 0.5 + 19 * (t0 - 0.5) + 13 * (t1 - t0))


def test_tasks_on_other_processors_do_not_contend_and_an_idle_used_processor_draws_min_power():
    # The same heavy pair split over two processors: a task alone on its processor has the
    # floor 1 (n = 0), so it runs at nominal speed whatever its demand.
    result, _ = run(workload({"subtime": 0, "res": 1, "req_ops": 2e9, "mem_vol": 5500},
                             {"subtime": 0, "res": 1, "req_ops": 2e9, "mem_vol": 5500}),
                    {"j0": [0], "j1": [4]})
    t_fast, t_slow = 1.0, 2.0
    assert finish(result, "j0") == about(t_fast)
    assert finish(result, "j1") == about(t_slow)
    # After its task, the fast processor idles at min power (0.1 x 10 W) until the end.
    expected = 13 * t_fast + 1.0 * (t_slow - t_fast) + 9 * t_slow
    assert float(result.schedule["consumed_joules"]) == about(expected)


def test_a_walltime_kills_a_cpu_ops_job_and_reports_its_progress():
    doc = {"nb_res": 6, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 0.5}],
           "profiles": {"p": {"type": "cpu_ops", "req_ops": 2e9, "ipc": 1, "mem_vol": 0}}}
    result, _ = run(doc, {"1": [0]})
    row = result.jobs.iloc[0]
    assert row["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert float(row["finish_time"]) == pytest.approx(0.5)
    assert float(result.schedule["consumed_joules"]) == about(13 * 0.5)


# --------------------------------------------------------------------------- protocol
def test_resources_are_cores_and_simulation_begins_carries_the_hierarchy():
    result, decider = run(workload({"subtime": 3, "res": 1, "req_ops": 2e9, "mem": 100, "req_energy": 5}),
                          {"j0": [5]})
    begins = decider.begins
    assert begins["nb_compute_resources"] == 6
    assert [r["name"] for r in begins["compute_resources"]][:2] == ["node0.processor0.core0", "node0.processor0.core1"]
    assert begins["compute_resources"][4]["properties"] == {"role": "", "node": "node1", "processor": "node1.processor0"}
    nodes = begins["hierarchy"]["nodes"]
    assert [n["name"] for n in nodes] == ["node0", "node1"]
    assert nodes[0]["memory"] == 32 and nodes[1]["memory"] is None
    assert nodes[1]["processors"][0]["cores"] == [4, 5]
    assert nodes[1]["processors"][0]["clock_rate"] == 1.0 and nodes[0]["processors"][0]["c"] == 1000
    # Times count from the first submission; visible fields on the job, hidden ones in the profile.
    job = decider.submitted[0]
    assert job["subtime"] == 0 and job["res"] == 1 and job["mem"] == 100 and job["req_energy"] == 5
    assert "req_ops" not in job and "mem_vol" not in job
    profile = begins["profiles"]["w0"][job["profile"]]
    assert profile == {"type": "cpu_ops", "req_ops": 2e9, "ipc": 1, "mem_vol": 0}
    assert finish(result, "j0") == pytest.approx(2.0)


def test_power_state_changes_are_refused_on_a_node_platform():
    class Switcher(Pinned):
        def on_job_submitted(self, job):
            self.set_resource_state("0", 1)

    with pytest.raises(JoulesimError, match="no power states"):
        joulesim.simulate(platform(), workload({"subtime": 0, "res": 1, "req_ops": 1e9}), Switcher({}), energy=True)


def test_a_batsim_decider_runs_unchanged_on_cores(tmp_path):
    result = joulesim.simulate(platform(), workload({"subtime": 0, "res": 4, "req_ops": 2e9},
                                                    {"subtime": 0, "res": 2, "req_ops": 2e9}), "easy", energy=True)
    assert sorted(result.jobs["allocated_resources"]) == ["0-3", "4-5"]
    assert float(result.schedule["makespan"]) == pytest.approx(2.0)  # 2e9 ops at 1e9 ops/s on slow cores


def test_simulate_and_decide_in_two_processes_give_the_in_process_result(tmp_path):
    (tmp_path / "platform.json").write_text(json.dumps(platform()))
    jobs = workload({"subtime": 0, "res": 4, "req_ops": 2e9, "mem_vol": 3000},
                    {"subtime": 0.2, "res": 2, "req_ops": 1e9, "mem_vol": 100})
    (tmp_path / "workload.json").write_text(json.dumps(jobs))
    one = joulesim.simulate(tmp_path / "platform.json", tmp_path / "workload.json", "fcfs", energy=True)
    two = joulesim.simulate(tmp_path / "platform.json", tmp_path / "workload.json", "fcfs", energy=True,
                            in_process=False)
    assert one.jobs.drop(columns=[]).equals(two.jobs)
    assert one.schedule["consumed_joules"] == two.schedule["consumed_joules"]


# --------------------------------------------------------------------------- files and errors
def test_an_irmasim_file_with_several_platforms_needs_a_name(tmp_path):
    doc = platform(small=[{"type": "n_slow", "number": 1}], big=[{"type": "n_fast", "number": 3}])
    path = tmp_path / "platforms.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"holds 2 platforms \(big, small\).*--platform-name"):
        load_platform(str(path))
    assert load_platform(str(path), platform_name="big").nb_compute == 12
    with pytest.raises(InputError, match="no platform named 'huge'"):
        load_platform(str(path), platform_name="huge")


def test_node_names_follow_irmasim_across_entries_and_clusters(tmp_path):
    doc = platform(p=[{"type": "n_slow", "number": 2}, {"type": "n_fast", "number": 1}])
    doc["platform"]["p"]["clusters"].append({"nodes": [{"type": "n_slow", "number": 1}]})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    hierarchy = load_platform(str(path)).nodes
    assert [n.name for n in hierarchy.nodes] == ["cluster0.node0", "cluster0.node1", "cluster0.node2", "cluster1.node0"]
    assert [n.id for n in hierarchy.nodes] == ["node0", "node1", "node2", "node0"]


@pytest.mark.parametrize("change, where, fix", [
    (lambda d: d["node"]["n_fast"]["processors"][0].update(type="gpu"), r"\$\.node\.n_fast\.processors\[0\]\.type",
     "define the processor type"),
    (lambda d: d["platform"]["p"]["clusters"][0]["nodes"][0].update(type="n_x"), r"nodes\[0\]\.type", "define the node type"),
    (lambda d: d["processor"]["fast"].pop("dd"), r"\$\.processor\.fast\.dd", "modelV1 needs dd"),
    (lambda d: d["processor"]["fast"].update(cores=0), r"\$\.processor\.fast\.cores", "integer >= 1"),
    (lambda d: d["processor"]["fast"].update(min_power=2), r"min_power", "between 0 and 1"),
    (lambda d: d["processor"]["fast"].update(dc=6000, dd=2000), r"dc - 3 x dd is 0", "check dc and dd"),
    (lambda d: d["platform"]["p"].update(model_name="modelV2"), r"model_name", "modelV1"),
    # a negative or non-numeric memory capacity was accepted (issue 23)
    (lambda d: d["node"]["n_fast"].update(memory={"capacity": -32}), r"\$\.node\.n_fast\.memory\.capacity: is -32", "a number >= 0"),
    (lambda d: d["node"]["n_fast"].update(memory={"capacity": "32"}), r"\$\.node\.n_fast\.memory\.capacity: is '32'", "a number >= 0"),
    (lambda d: d["node"]["n_fast"].update(memory=32), r"\$\.node\.n_fast\.memory: is 32", '{"capacity": 32}'),
])
def test_bad_irmasim_platforms_name_the_entry_and_the_fix(tmp_path, change, where, fix):
    doc = copy.deepcopy(platform())
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_platform(str(path))
    assert str(path) in str(info.value)
    assert __import__("re").search(where, str(info.value)), str(info.value)
    assert fix in str(info.value)


@pytest.mark.parametrize("job, where, fix", [
    ({"subtime": 0, "res": 1, "req_ops": -5}, "field 'req_ops'", ">= 0"),
    ({"subtime": 0, "res": 1}, "field 'req_ops'", "need req_ops"),
    ({"subtime": 0, "res": 2, "ntasks": 2, "req_ops": 1}, "field 'res'", "either res"),
    ({"subtime": 0, "req_ops": 1}, "field 'ntasks'", "give res"),
    ({"subtime": 0, "res": 1, "req_ops": 1, "ipc": 0}, "field 'ipc'", "> 0"),
    ({"subtime": 0, "res": 1, "req_ops": 1, "mem": -1}, "field 'mem'", ">= 0"),
    # req_ops / ipc overflowed to inf: an OverflowError mid-run (issue 23)
    ({"subtime": 0, "res": 1, "req_ops": 1e10, "ipc": 1e-300}, "jobs[0] (id 'j0'): field 'ipc'", "check req_ops and ipc"),
    ({"subtime": 0, "res": 1, "req_ops": 1e30}, "jobs[0] (id 'j0'): field 'req_ops'", "check req_ops and ipc"),
    ({"subtime": 0, "res": 1, "req_ops": 1, "mem_vol": 1e300}, "jobs[0] (id 'j0'): field 'mem_vol'", "memory volume in MB"),
])
def test_bad_irmasim_jobs_name_the_job_and_the_fix(tmp_path, job, where, fix):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload(job)))
    with pytest.raises(InputError) as info:
        load_workload(str(path), "w0")
    assert str(path) in str(info.value) and where in str(info.value) and fix in str(info.value)


@pytest.mark.parametrize("profile, where", [
    ({"type": "cpu_ops", "req_ops": 1e10, "ipc": 1e-300}, "profile 'p': field 'ipc': req_ops / ipc = 1e+10 / 1e-300 = inf"),
    ({"type": "cpu_ops", "req_ops": 1e25}, "profile 'p': field 'req_ops': req_ops / ipc = 1e+25 / 1 = 1e+25"),
    ({"type": "cpu_ops", "req_ops": 1, "mem_vol": 1e25}, "profile 'p': field 'mem_vol': is 1e+25"),
])
def test_cpu_ops_profiles_whose_tasks_could_never_end_are_refused_at_load(tmp_path, profile, where):
    # ipc 1e-300 made ceil(req_ops / ipc) an OverflowError mid-run, blamed on the decider
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}], "profiles": {"p": profile}}))
    with pytest.raises(InputError) as info:
        joulesim.simulate(platform(), path, "fcfs")
    assert str(path) in str(info.value) and where in str(info.value), str(info.value)
    assert "limit of 1e+24" in str(info.value)


def test_negative_job_memory_is_refused_on_a_node_platform(tmp_path):
    # A Batsim-shaped workload's jobs carry mem as an extra field: the node deciders read it.
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "mem": -5}],
                                "profiles": {"p": {"type": "cpu_ops", "req_ops": 1e9}}}))
    with pytest.raises(InputError, match=r"w\.json: job '1': field 'mem': is -5 \(give the memory each task uses"):
        joulesim.simulate(platform(), path, "heuristic")
    good = json.loads(path.read_text())
    good["jobs"][0]["mem"] = 4
    assert joulesim.simulate(platform(), good, "heuristic").jobs["job_id"].astype(str).tolist() == ["1"]


def test_negative_node_memory_is_refused_in_the_native_node_format(tmp_path):
    path = tmp_path / "native.json"
    path.write_text(json.dumps({"model": "modelV1", "nodes": [{"memory": -32, "processors": [dict(FAST)]}]}))
    with pytest.raises(InputError, match=r"native\.json: \$\.nodes\[0\]\.memory: is -32 \(give the node's memory capacity"):
        load_platform(str(path))


def test_a_job_larger_than_every_node_is_refused_before_the_run(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload({"subtime": 0, "res": 5, "req_ops": 1e9})))
    with pytest.raises(InputError, match=r"w\.json: job 'j0': needs 5 cores .* largest node .* has 4 cores"):
        joulesim.simulate(platform(), path, "fcfs")


def test_cpu_ops_profiles_need_a_node_platform_and_node_platforms_need_them(tmp_path):
    with pytest.raises(InputError, match="runs on IRMaSim node platforms only"):
        joulesim.simulate("cluster32", {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                                        "profiles": {"p": {"type": "cpu_ops", "req_ops": 1}}}, "fcfs")
    with pytest.raises(InputError, match="whose jobs run cpu_ops"):
        joulesim.simulate(platform(), {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                                       "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1, "com": 0}}}, "fcfs")


def test_the_pcbe_inputs_load_as_irmasim_files(shared_data):
    base = shared_data / "pcbe"
    scaling = load_platform(str(base / "scaling" / "platform.json"))
    assert scaling.nb_compute == 3 * 64 + 9 * 8
    jobs = load_workload(str(base / "scaling" / "workload.json"), "w0").jobs
    assert len(jobs) == 891 and jobs[0].subtime == 0


def test_fcfs_on_a_pcbe_case_gives_irmasims_first_first_figures(shared_data):
    # Lowest cores first is IRMaSim's first/first heuristic on this case (each job fits the first
    # free node); results.csv column "heuristic 1 1" is IRMaSim's run.
    case = shared_data / "pcbe" / "comparison" / "energy_1"
    result = joulesim.simulate(case / "platform.json", case / "workload.json", "fcfs", energy=True)
    makespan, energy, _ = pd.read_csv(case / "results.csv")["heuristic 1 1"]
    assert float(result.schedule["makespan"]) == pytest.approx(makespan, rel=1e-6)
    assert float(result.schedule["consumed_joules"]) == pytest.approx(energy, rel=1e-6)


def test_the_hierarchy_extension_is_validated_by_the_protocol_schemas():
    from joulesim.protocol.errors import ProtocolError
    from joulesim.protocol.validation import validate_simulator_message

    _, decider = run(workload({"subtime": 0, "res": 1, "req_ops": 1e9}), {"j0": [0]})
    message = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": decider.begins}]}
    validate_simulator_message(message)
    broken = copy.deepcopy(message)
    broken["events"][0]["data"]["hierarchy"]["nodes"][0]["processors"][0]["min_power"] = 3
    with pytest.raises(ProtocolError, match="min_power"):
        validate_simulator_message(broken)


def test_the_native_node_platform_format_means_the_same_as_irmasims(tmp_path):
    native = {"model": "modelV1", "nodes": [
        {"count": 1, "memory": 32, "processors": [dict(FAST, count=1)]},
        {"processors": [dict(SLOW)]}]}
    path = tmp_path / "native.json"
    path.write_text(json.dumps(native))
    jobs = workload({"subtime": 0, "res": 2, "req_ops": 2e9, "mem_vol": 5500}, {"subtime": 0.5, "res": 1, "req_ops": 1e9})
    a = joulesim.simulate(str(path), jobs, "fcfs", energy=True)
    b = joulesim.simulate(platform(), jobs, "fcfs", energy=True)
    assert a.jobs.equals(b.jobs) and a.schedule["consumed_joules"] == b.schedule["consumed_joules"]
    assert [n.name for n in load_platform(str(path)).nodes.nodes] == ["node0", "node1"]
    native["nodes"][0]["processors"][0].pop("clock_rate")
    path.write_text(json.dumps(native))
    with pytest.raises(InputError, match=r"\$\.nodes\[0\]\.processors\[0\]\.clock_rate: is missing"):
        load_platform(str(path))


def test_plot_draws_a_gantt_chart_by_node(tmp_path):
    from click.testing import CliRunner

    from joulesim.cli.plot_command import plot

    (tmp_path / "p.json").write_text(json.dumps(platform()))
    joulesim.simulate(tmp_path / "p.json", workload({"subtime": 0, "res": 2, "req_ops": 2e9}), "fcfs", energy=True,
                      export=tmp_path / "out")
    result = CliRunner().invoke(plot, [str(tmp_path / "out"), "-p", str(tmp_path / "p.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out_gantt.png").stat().st_size > 0
    from joulesim.cli.plot_command import _node_groups

    assert _node_groups(str(tmp_path / "p.json"), None) == [("node0", 0, 3), ("node1", 4, 5)]
    assert _node_groups("cluster32", None) is None
