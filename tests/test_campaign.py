"""`joulesim campaign`: campaign files, instance ids, the runner (pool and Dask), resuming, failures."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest

import joulesim
from joulesim.campaign import executors
from joulesim.campaign.instances import expand
from joulesim.campaign.option_grid import expand_options
from joulesim.campaign.runner import run_campaign
from joulesim.campaign.study_file import load_study
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError

TESTS = Path(__file__).resolve().parent

WORKLOAD = {"nb_res": 4,
            "jobs": [{"id": str(i), "subtime": 10 * i, "res": 1 + i % 4, "walltime": 400, "profile": f"p{i % 3}"}
                     for i in range(10)],
            "profiles": {f"p{k}": {"type": "delay", "delay": 60 * (k + 1)} for k in range(3)}}


def write_study(directory: Path, body: str, name: str = "study.toml") -> Path:
    (directory / "jobs.json").write_text(json.dumps(WORKLOAD))
    path = directory / name
    path.write_text(body)
    return path


BASIC = """
[campaign]
name = "basic"
energy = [false, true]

[[platforms]]
path = "energy2"

[[workloads]]
path = "jobs.json"

[[deciders]]
decider = "fcfs"

[[deciders]]
name = "easy-os"
decider = "easy"
grid = {t_idle = [0, 60]}
"""
# What runs: switching machines off needs energy accounting (Batsim aborts without it), so the
# instances that run keep energy on; BASIC's energy grid is for the tests that only count.
RUNS = BASIC.replace("energy = [false, true]", "energy = true")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "campaign", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)


# ---------------------------------------------------------------- grids and ids

def test_grid_is_a_cartesian_product_and_zip_goes_value_by_value():
    combos = expand_options({"a": 1}, {"g": [1, 2], "h": ["x", "y"]}, {"z1": [10, 20], "z2": [0.1, 0.2]})
    assert len(combos) == 8
    assert combos[0] == {"a": 1, "z1": 10, "z2": 0.1, "g": 1, "h": "x"}
    assert combos[-1] == {"a": 1, "z1": 20, "z2": 0.2, "g": 2, "h": "y"}
    assert all(c["z2"] == c["z1"] / 100 for c in combos)
    assert expand_options({}, {}, {}) == [{}]


def test_instances_and_stable_ids(tmp_path):
    study_path = write_study(tmp_path, BASIC)
    instances = expand(load_study(study_path))
    # 1 platform x 1 workload x (1 + 2 option sets) x 2 energies
    assert len(instances) == 6
    assert len({i.id for i in instances}) == 6
    again = expand(load_study(study_path))
    assert [i.id for i in instances] == [i.id for i in again]
    # Renaming a label changes no id; a changed option value changes only its instances.
    renamed = write_study(tmp_path, BASIC.replace('name = "easy-os"', 'name = "os"').replace("[0, 60]", "[0, 61]"),
                          "renamed.toml")
    ids = {i.id for i in expand(load_study(renamed))}
    assert len(ids & {i.id for i in instances}) == 4
    # An edited input file gives new ids.
    (tmp_path / "jobs.json").write_text(json.dumps({**WORKLOAD, "nb_res": 5}))
    assert not {i.id for i in expand(load_study(study_path))} & {i.id for i in instances}


# ---------------------------------------------------------------- bad campaign files

BAD_FILES = [
    ("[campaign]\nnmae = 1\n", "[campaign]: key 'nmae': is not a known key"),
    ("[[platforms]]\npath = \"no/such.xml\"\n", "no such file"),
    (BASIC.replace('decider = "fcfs"', 'decider = "fcfss"'), "unknown decider 'fcfss'"),
    (BASIC.replace('decider = "fcfs"', 'decider = ""'), "key 'decider': is empty"),
    (BASIC.replace("grid = {t_idle = [0, 60]}", "grid = {t_idel = [0, 60]}"), "does not accept option(s) t_idel"),
    (BASIC.replace("grid = {t_idle = [0, 60]}", "grid = {t_idle = []}"), "key 'grid.t_idle': is an empty list"),
    (BASIC.replace("grid = {t_idle = [0, 60]}", "zip = {t_idle = [0, 60], compute_pstate = [0]}"),
     "lists of different lengths"),
    (BASIC.replace('path = "jobs.json"', 'path = "jobs.json"\ntrace = "x.swf"'), "has path and trace"),
    (BASIC.replace('path = "jobs.json"', 'path = "jobs.json"\nweeks = [1]'), "key 'weeks': applies to a trace"),
    (BASIC.replace('path = "jobs.json"', 'path = "jobs.json"\nplatforms = ["nope"]'), "'nope' names no [[platforms]]"),
    (BASIC.replace("[[deciders]]\ndecider = \"fcfs\"", "[[deciders]]\ncommand = [\"prog\"]"), "no {endpoint} placeholder"),
    (BASIC + "\n[[deciders]]\ndecider = \"fcfs\"\n", "has the same name 'fcfs' as #1"),
    (BASIC.replace("energy = [false, true]", "energy = \"yes\""), "key 'energy': is a string"),
    (BASIC.replace('name = "basic"', 'name = "basic"\ntimeout = -1'), "key 'timeout': is -1"),
    (BASIC.replace("[[deciders]]", "[[deciderz]]", 1), "key 'deciderz': is not a known key"),
    ("[[platforms]\n", "TOML syntax"),
    (BASIC.replace('decider = "fcfs"', 'decider = "energybud"\noptions = {budget = 1e9}'), "energybud"),
    (BASIC.replace('path = "jobs.json"', 'generator = "lublin"\nparameters = {jobz = 3}'),
     "key 'parameters': key 'jobz': is not a known key"),
    # Nesting deep enough to exhaust tomllib's recursion, or to pass it and exhaust a JSON encoder's.
    ("[campaign]\nname = " + "[" * 100_000 + "]" * 100_000 + "\n", "file: nests arrays or inline tables"),
    ("[campaign]\nname = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n", "file: nests arrays or inline tables"),
    (BASIC.replace('path = "jobs.json"', 'generator = "lublin"\nparameters = {jobs = ' + "[" * 300 + "]" * 300
                   + "}"), "file: nests tables and arrays more than 100 levels deep"),
    ("[campaign]\nrepetitions = " + "9" * 5_000 + "\n", "TOML value: Exceeds the limit (4300 digits)"),
    # Names that become file or folder names must stay inside the results folder.
    (BASIC.replace('name = "basic"', 'name = "../../x"'), "[campaign]: key 'name': is '../../x'"),
    (BASIC.replace('name = "basic"', 'name = ""'), "[campaign]: key 'name': is '' (it names the results folder"),
    (BASIC.replace('name = "basic"', 'name = "/tmp/x"'), "without '/', '\\', '..' or control characters"),
    (BASIC.replace('path = "jobs.json"', 'generator = "lublin"\nname = "../w"'),
     "[[workloads]] #1: key 'name': is '../w' (it names its converted or generated workload files"),
    # 6 options of 100 values: 10^12 combinations, refused before any is made.
    (BASIC.replace("grid = {t_idle = [0, 60]}", "grid = {" + ", ".join(
        f"{key} = [{', '.join(str(v) for v in range(100))}]" for key in
        ("t_idle", "compute_pstate", "sleep_pstate", "a", "b", "c")) + "}"),
     "[[deciders]] #2: grid: give 1,000,000,000,000 option combinations (t_idle: 100 x compute_pstate: 100 x "
     "sleep_pstate: 100 x a: 100 x b: 100 x c: 100) (a campaign file holds at most 100,000 instances: split"),
]


@pytest.mark.parametrize("body,message", BAD_FILES)
def test_a_bad_campaign_file_is_refused_before_anything_runs(tmp_path, body, message):
    study = write_study(tmp_path, body)
    result = cli("run", str(study), "--out", str(tmp_path / "results"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.startswith(f"joulesim: error: {study}: ")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "results").exists()


def test_a_generator_parameter_of_the_wrong_value_is_refused_naming_the_workload(tmp_path):
    study = write_study(tmp_path, BASIC.replace('path = "jobs.json"', 'generator = "lublin"\n'
                                                'parameters = {jobs = 0, nb_res = 4}'))
    with pytest.raises(InputError, match=r"\[\[workloads\]\] 'lublin' \(seed 0\).*number of jobs must be >= 1"):
        run_campaign(str(study), str(tmp_path / "r"), workers=1, progress=False)
    assert not (tmp_path / "r" / "instances").exists()


# ---------------------------------------------------------------- running

def test_results_equal_single_runs_and_a_rerun_runs_nothing(tmp_path):
    study = write_study(tmp_path, RUNS)
    result = cli("run", str(study), "--out", "res", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "3 instances, 3 run now, 0 already done, 0 failed" in result.stdout
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(table) == 3 and set(table["status"]) == {"ok"}
    parquet = pd.read_parquet(tmp_path / "res" / "results.parquet")
    assert parquet["error"].isna().all() and table["error"].isna().all()  # null in Parquet, empty in CSV
    pd.testing.assert_frame_equal(parquet.drop(columns="error"), table.drop(columns="error"), check_dtype=False)
    for _, row in table.iterrows():
        options = {} if pd.isna(row["option.t_idle"]) else {"t_idle": int(row["option.t_idle"])}
        decider = "fcfs" if row["decider"] == "fcfs" else "easy"
        single = joulesim.simulate("energy2", WORKLOAD, decider, options=options, energy=bool(row["energy"]))
        for metric in ("makespan", "mean_waiting_time", "mean_bounded_slowdown", "nb_jobs_rejected"):
            assert row[metric] == pytest.approx(single.metrics[metric], rel=1e-12)
        if row["energy"]:
            assert row["consumed_joules"] == pytest.approx(single.metrics["consumed_joules"], rel=1e-12)
    again = cli("run", str(study), "--out", "res", cwd=tmp_path)
    assert again.returncode == 0
    assert "3 instances, 0 run now, 3 already done, 0 failed" in again.stdout
    # A new grid value: only its instances run.
    study.write_text(RUNS.replace("[0, 60]", "[0, 60, 120]"))
    more = cli("run", str(study), "--out", "res", cwd=tmp_path)
    assert "4 instances, 1 run now, 3 already done, 0 failed" in more.stdout
    assert len(pd.read_csv(tmp_path / "res" / "results.csv")) == 4


def test_failures_are_recorded_and_the_others_go_on(tmp_path):
    study = write_study(tmp_path, RUNS + """
[[deciders]]
name = "crashing"
decider = "campaign_deciders:CrashingDecider"

[[deciders]]
name = "exiting"
decider = "campaign_deciders:ExitingDecider"
""")
    result = cli("run", str(study), "--out", "res", cwd=tmp_path)
    assert result.returncode == 102, result.stderr
    assert "5 instances, 5 run now, 0 already done, 2 failed" in result.stdout
    table = pd.read_csv(tmp_path / "res" / "results.csv").set_index("decider")
    assert list(table.loc[["fcfs", "easy-os"], "status"].unique()) == ["ok"]
    assert table.loc["crashing", "status"] == "failed"
    assert "deliberate bug on call 3" in table.loc["crashing", "error"]
    record = json.loads((tmp_path / "res" / "instances" / f"{table.loc['crashing', 'instance_id']}.json").read_text())
    assert "Traceback" in record["log"] and "campaign_deciders.py" in record["log"]
    assert table.loc["exiting", "status"] == "failed"
    assert "worker process running the instance died (exit code 3)" in table.loc["exiting", "error"]
    # Failed instances are retried by a rerun, unless asked not to.
    kept = cli("run", str(study), "--out", "res", "--keep-failed", cwd=tmp_path)
    assert "0 run now, 5 already done, 2 failed" in kept.stdout and kept.returncode == 102
    retried = cli("run", str(study), "--out", "res", cwd=tmp_path)
    assert "2 run now, 3 already done, 2 failed" in retried.stdout


def test_shutdown_without_energy_fails_its_instances_with_the_fix_and_the_others_run(tmp_path):
    # Batsim aborts on SET_RESOURCE_STATE without energy; the campaign records why, per instance.
    study = write_study(tmp_path, BASIC)
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False,
                           where={"option.t_idle": ["0"]})
    table = pd.read_csv(tmp_path / "res" / "results.csv").set_index("energy")
    assert summary.nb_run == 2 and len(summary.failed) == 1
    assert table.loc[True, "status"] == "ok" and table.loc[False, "status"] == "failed"
    assert "SET_RESOURCE_STATE needs energy accounting" in table.loc[False, "error"]
    assert "run with -E (--energy)" in table.loc[False, "error"]


def test_an_instance_past_its_time_limit_stops_and_a_stuck_one_is_killed(tmp_path, monkeypatch):
    # 2 s of wall time per instance: the small ones take ~0.2 s, but once took over 0.5 s on a
    # loaded machine; the spinning decider's never ends.
    study = write_study(tmp_path, RUNS.replace('energy = true', 'energy = true\ntimeout = 2') + """
[[deciders]]
name = "spinning"
decider = "campaign_deciders:SpinningDecider"
""")
    monkeypatch.setattr(executors, "KILL_GRACE_S", 0.5)
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    table = pd.read_csv(tmp_path / "res" / "results.csv").set_index("decider")
    assert table.loc["spinning", "status"] == "timeout"
    assert "its worker was killed" in table.loc["spinning", "error"]
    assert (table.drop(index="spinning")["status"] == "ok").all()
    assert summary.exit_status == 101
    # The simulator's own check stops a run past its limit between two decider calls.
    short = write_study(tmp_path, RUNS.replace('energy = true', 'energy = true\ntimeout = 1e-9'),
                        "short.toml")
    run_campaign(str(short), str(tmp_path / "short"), workers=1, progress=False)
    statuses = pd.read_csv(tmp_path / "short" / "results.csv")
    assert set(statuses["status"]) == {"timeout"}
    assert statuses["error"].str.contains("went past its time limit of 1e-09 s").all()


def test_an_interrupted_campaign_keeps_what_finished_and_resumes(tmp_path, monkeypatch):
    study = write_study(tmp_path, RUNS)
    real_run = executors.LocalPool.run

    def interrupted_after_two(self, tasks):
        for count, item in enumerate(real_run(self, tasks)):
            if count == 2:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(executors.LocalPool, "run", interrupted_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(str(study), str(tmp_path / "res"), workers=1, progress=False)
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    assert sorted(table["status"]) == ["missing"] + ["ok"] * 2
    monkeypatch.setattr(executors.LocalPool, "run", real_run)
    # A record left half-written by a killed runner counts as missing.
    first_missing = table[table["status"] == "missing"]["instance_id"].iloc[0]
    (tmp_path / "res" / "instances" / f"{first_missing}.json").write_text('{"id": "')
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    assert (summary.nb_run, summary.nb_already_done, summary.failed) == (1, 2, [])
    assert set(pd.read_csv(tmp_path / "res" / "results.csv")["status"]) == {"ok"}


def test_trace_weeks_generator_seeds_external_command_and_kept_outputs(tmp_path):
    lines = [f"{i + 1} {i * 86400 * 2} 0 {100 + i} 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1" for i in range(10)]
    (tmp_path / "t.swf").write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    study = write_study(tmp_path, f"""
[campaign]
outputs = true

[[platforms]]
path = "small4"

[[workloads]]
trace = "t.swf"
weeks = [0, 1]

[[workloads]]
generator = "batsim-eval"
seeds = [1, 2]
parameters = {{jobs = 5, nb_res = 32}}

[[deciders]]
name = "external-easy"
command = ["{sys.executable}", "-m", "joulesim.cli.main", "decide", "easy", "-s", "{{endpoint}}"]
""")
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    assert summary.failed == [] and summary.nb_run == 4
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    by_week = table[table["workload"] == "t"].set_index("week")
    assert list(by_week["nb_jobs"]) == [4, 3]  # days 0,2,4,6 then 8,10,12 (weeks from the first job)
    assert sorted(table["seed"].dropna()) == [1, 2]
    for instance_id in table["instance_id"]:
        assert (tmp_path / "res" / "runs" / instance_id / "out_jobs.csv").exists()
        assert (tmp_path / "res" / "logs" / f"{instance_id}.log").exists()
    assert len(os.listdir(tmp_path / "res" / "workloads")) == 4


def test_dask_local_cluster_gives_the_pool_s_table_and_a_dead_address_is_a_clear_error(tmp_path):
    distributed = pytest.importorskip("distributed")
    study = write_study(tmp_path, RUNS)
    run_campaign(str(study), str(tmp_path / "pool"), workers=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        summary = run_campaign(str(study), str(tmp_path / "dask"), dask_address=cluster.scheduler_address,
                               progress=False)
        worker = next(iter(cluster.scheduler_info["workers"]))
        with pytest.raises(JoulesimError, match=re.escape(f"{worker} is a Dask Worker, not the scheduler; give the "
                                                          "scheduler's tcp://HOST:PORT")):
            run_campaign(str(study), str(tmp_path / "worker"), dask_address=worker, connect_timeout=5,
                         progress=False)
    assert summary.nb_run == 3 and summary.failed == []
    pool = pd.read_csv(tmp_path / "pool" / "results.csv").drop(columns="wall_time")
    dask = pd.read_csv(tmp_path / "dask" / "results.csv").drop(columns="wall_time")
    pd.testing.assert_frame_equal(pool, dask)
    with pytest.raises(JoulesimError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"):
        run_campaign(str(study), str(tmp_path / "nowhere"), dask_address="tcp://127.0.0.1:9", connect_timeout=1,
                     progress=False)


def test_list_prints_the_instances_without_running(tmp_path):
    study = write_study(tmp_path, BASIC)
    result = cli("list", str(study), cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 6 and "6 instances" in result.stderr
    assert lines[2].split()[1:] == ["platform=energy2", "workload=jobs", "decider=easy-os", "energy=False",
                                    "repetition=0", "option.t_idle=0"]
    assert not (tmp_path / "basic_results").exists()


def test_report_draws_metric_and_tradeoff_plots(tmp_path):
    pytest.importorskip("matplotlib")
    study = write_study(tmp_path, RUNS)
    run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    result = cli("report", "res", "-o", "plots", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = result.stdout.split()
    assert "plots/consumed_joules_vs_option.t_idle.png" in written
    assert "plots/tradeoff_consumed_joules_vs_mean_waiting_time.png" in written
    assert all((tmp_path / p).stat().st_size > 10_000 for p in written)
    bad = cli("report", "res", "--y", "no_such_metric", cwd=tmp_path)
    assert bad.returncode == 2 and "has no column 'no_such_metric'" in bad.stderr  # (a command-line value)
    missing = cli("report", "nowhere", cwd=tmp_path)
    assert missing.returncode == 2 and "nowhere: file: does not exist" in missing.stderr


def test_default_results_folder_is_named_after_the_campaign(tmp_path):
    study = write_study(tmp_path, RUNS)
    result = cli("run", str(study), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "basic_results" / "results.csv").exists()


# ---------------------------------------------------------------- windows and selections

def test_window_metrics_count_only_what_happens_inside_the_window():
    # energy2: 2 hosts at 95 W idle; a delay job keeps its hosts at idle power.
    workload = {"jobs": [{"id": "a", "subtime": 0, "res": 2, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 100}}}
    result = joulesim.simulate("energy2", workload, "fcfs", energy=True)
    assert result.window_metrics(50, 150) == {"window_utilization": 0.5, "window_jobs_started": 0,
                                              "window_energy": 2 * 95 * 50}  # the run ends at t=100
    assert result.window_metrics(0, 50) == {"window_utilization": 1.0, "window_jobs_started": 1,
                                            "window_energy": 2 * 95 * 50}
    no_energy = joulesim.simulate("energy2", workload, "fcfs")
    assert no_energy.window_metrics(0, 200)["window_energy"] is None


def test_a_campaign_window_adds_window_columns_and_where_selects_instances(tmp_path):
    study = write_study(tmp_path, BASIC.replace('name = "basic"', 'name = "basic"\nwindow = [0, 300]'))
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=1, progress=False,
                           where={"decider": ["fcfs"], "energy": ["True"]})
    assert summary.nb_instances == 1
    row = pd.read_csv(tmp_path / "res" / "results.csv").iloc[0]
    single = joulesim.simulate("energy2", WORKLOAD, "fcfs", energy=True).window_metrics(0, 300)
    for key, value in single.items():
        assert row[key] == pytest.approx(value, rel=1e-12)
    listed = cli("list", str(study), "--where", "option.t_idle=60", cwd=tmp_path)
    assert len(listed.stdout.splitlines()) == 2
    bad = cli("list", str(study), "--where", "colour=red", cwd=tmp_path)
    assert bad.returncode == 1 and "no instance parameter is named 'colour'" in bad.stderr
    none = cli("run", str(study), "--where", "decider=nobody", cwd=tmp_path)
    assert none.returncode == 1 and "no instance matches --where decider=nobody" in none.stderr
    malformed = cli("run", str(study), "--where", "decider", cwd=tmp_path)
    assert malformed.returncode == 2 and "is not PARAMETER=VALUE" in malformed.stderr


# ---------------------------------------------------------------- hostile sizes, names, outputs, addresses

def test_a_study_beyond_the_instance_bound_is_refused_before_any_instance_is_made(tmp_path, monkeypatch):
    from joulesim.campaign import study_file

    study = write_study(tmp_path, BASIC.replace('energy = [false, true]', 'energy = [false, true]\n'
                                                'repetitions = 20000'))
    # 1 pair x 3 option sets x 2 energies x 20,000 repetitions
    with pytest.raises(InputError, match=r"the whole campaign: has 120,000 instances \(1 platform-workload pairs x "
                                         r"3 decider option sets x 2 energy settings x 20,000 repetitions\) \(a "
                                         r"campaign file holds at most 100,000 instances: split the study"):
        load_study(study)
    monkeypatch.setattr(study_file, "MAX_INSTANCES", 5)
    one = write_study(tmp_path, BASIC, "one.toml")
    with pytest.raises(InputError, match=r"has 6 instances"):
        load_study(one)
    # One decider's grid is counted on its own first: a 10^12 grid never reaches the total.
    wide = write_study(tmp_path, BASIC.replace("[0, 60]", "[0, 60, 120, 180, 240, 300]"), "wide.toml")
    with pytest.raises(InputError, match=r"\[\[deciders\]\] #2: grid: give 6 option combinations \(t_idle: 6\)"):
        load_study(wide)


def test_the_local_pool_takes_tasks_as_its_workers_free_up(tmp_path):
    drawn = []

    def tasks():
        for index in range(50):
            drawn.append(index)
            yield {"id": str(index), "timeout": 60}

    pool = executors.LocalPool(2)
    try:
        results = pool.run(tasks(), work=len)
        first_task, first_result = next(results)
        assert first_result == 2  # len of the task dict
        # the 2 x 2 tasks handed ahead, and the one that replaces the first finished: not all 50
        assert len(drawn) <= 2 * executors.TASKS_AHEAD_PER_WORKER + 1
        assert sorted(int(task["id"]) for task, _ in [(first_task, None), *results]) == list(range(50))
    finally:
        pool.close()


def test_a_name_that_would_leave_the_results_folder_writes_nothing(tmp_path):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    study = write_study(inner, BASIC.replace('name = "basic"', 'name = "../../x"'))
    result = cli("run", str(study), cwd=inner)
    assert result.returncode == 2 and "key 'name': is '../../x'" in result.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "jobs.json", "study.toml"]


def _a_file(tmp: Path) -> Path:
    (tmp / "afile").write_text("x")
    return tmp / "afile"


def _a_folder_holding(name: str, kind: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / "res").mkdir()
        if kind == "folder":
            (tmp / "res" / name).mkdir()
        else:
            (tmp / "res" / name).write_text("")
        return tmp / "res"

    return make


@pytest.mark.parametrize("make_out,where", [
    (_a_file, "afile: results folder (--out): is a file, not a folder"),
    (lambda tmp: Path("/proc/joulesim-results"), "/proc/joulesim-results: results folder (--out): cannot be written"),
    (_a_folder_holding("results.csv", "folder"), "results.csv: results table: is a folder where the campaign writes"),
    (_a_folder_holding("results.parquet", "folder"), "results.parquet: results table: is a folder"),
    (_a_folder_holding("instances", "file"), "instances: results folder: is a file where the campaign keeps a folder"),
])
def test_an_output_folder_that_cannot_hold_the_results_is_refused_before_any_simulation(tmp_path, make_out, where):
    study = write_study(tmp_path, BASIC)
    out = make_out(tmp_path)
    with pytest.raises(InputError, match=re.escape(where)) as refused:
        run_campaign(str(study), str(out), workers=1, progress=False)
    assert refused.value.exit_code == 2
    assert [p.name for p in tmp_path.rglob("*.json")] == ["jobs.json"]  # no instance record


def test_an_unwritable_out_is_one_line_from_the_cli(tmp_path):
    study = write_study(tmp_path, BASIC)
    (tmp_path / "afile").write_text("x")
    result = cli("run", str(study), "--out", "afile/sub", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"joulesim: error: {tmp_path}/afile/sub: results folder (--out): cannot be written (Not a directory) "
        "(give --out a folder you can write to (it is created if missing))"]


def test_campaign_progress_is_a_line_per_update_in_a_log(tmp_path, monkeypatch, capsys):
    from joulesim.console import progress_bar

    monkeypatch.setattr(progress_bar, "PLAIN_DELAY_S", 0.0)
    monkeypatch.setattr(progress_bar, "PLAIN_INTERVAL_S", 0.0)
    study = write_study(tmp_path, RUNS)
    run_campaign(str(study), str(tmp_path / "res"), workers=1)  # progress is on by default
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if line.startswith("campaign basic:")]
    assert lines[-1].startswith("campaign basic: 100%|") and "3/3" in lines[-1]


class _HttpServer:
    """An HTTP server on a free loopback port, in a thread: what --dask may be pointed at by mistake
    (a dashboard, a web server)."""

    def __enter__(self) -> str:
        import http.server
        import threading

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return f"tcp://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc_info) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def test_dask_at_an_http_server_is_a_clear_error_within_the_connect_timeout(tmp_path):
    pytest.importorskip("distributed")
    study = write_study(tmp_path, BASIC)
    with _HttpServer() as address:
        with pytest.raises(JoulesimError, match=re.escape(f"cannot reach the Dask scheduler at {address} within 1 s")
                           + r".*tcp://HOST:PORT, not its dashboard's"):
            run_campaign(str(study), str(tmp_path / "res"), dask_address=address, connect_timeout=1, progress=False)
    assert not (tmp_path / "res" / "instances").exists()


@pytest.mark.parametrize("address", ["garbage", "http://127.0.0.1:8787", "tcp://127.0.0.1:99999", "tcp://[::1"])
def test_a_malformed_dask_address_is_refused_at_once(tmp_path, address):
    pytest.importorskip("distributed")
    study = write_study(tmp_path, BASIC)
    with pytest.raises(InputError, match=r"--dask: .*: is not the address of a Dask scheduler \(give the "
                                         r"tcp://HOST:PORT the scheduler prints"):
        run_campaign(str(study), str(tmp_path / "res"), dask_address=address, progress=False)


def test_a_malformed_dask_address_is_one_line_from_the_cli(tmp_path):
    pytest.importorskip("distributed")
    study = write_study(tmp_path, BASIC)
    result = cli("run", str(study), "--dask", "garbage", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "joulesim: error: --dask: 'garbage': is not the address of a Dask scheduler (give the tcp://HOST:PORT the "
        "scheduler prints when it starts, e.g. tcp://10.1.2.3:8786, or tls://HOST:PORT with TLS)"]
