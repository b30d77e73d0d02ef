"""Training (`joulesim rl train`), the trained policy as decider `rl`, and their errors."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")
pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")

import joulesim  # noqa: E402
from joulesim.inputs.input_error import InputError  # noqa: E402
from joulesim.protocol.errors import JoulesimError  # noqa: E402
from joulesim.rl.training import train  # noqa: E402
from joulesim.rl.training_config import config_from_dict, load_training_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments" / "rl_energy"


def _processor(static: float, dynamic: float) -> dict:
    return {"cores": 4, "clock_rate": 1.0, "dpflops_per_cycle": 1, "dynamic_power": dynamic, "static_power": static,
            "min_power": 0.5, "b": -1.85e-05, "c": 21000, "da": 1.0, "db": 100, "dc": 25000, "dd": 10}


@pytest.fixture
def two_nodes(tmp_path: Path) -> tuple[str, str]:
    """Two 4-core nodes, "hot" (100 W static, 10 W per core) and "cool" (10 W, 1 W), and two
    4-core jobs of 10 s at t=0 and t=30. Best: both on the cool node, 14 W x 10 s twice plus
    5 W idle x 20 s = 380 J (the hot node never starts, so it draws nothing); both on the hot
    node: 3,800 J."""
    platform = {"platform": {"p": {"id": "p", "model_name": "modelV1", "clusters": [
        {"id": "c0", "nodes": [{"type": "hot", "number": 1}, {"type": "cool", "number": 1}]}]}},
        "node": {"hot": {"id": "hot", "processors": [{"type": "hotp", "number": 1}]},
                 "cool": {"id": "cool", "processors": [{"type": "coolp", "number": 1}]}},
        "processor": {"hotp": _processor(100.0, 10.0), "coolp": _processor(10.0, 1.0)}}
    workload = {"profiles": {"A": {"req_ops": 10_000_000_000, "ipc": 1, "req_time": 10, "mem": 0, "mem_vol": 0}},
                "jobs": [{"id": "J0", "subtime": 0, "res": 4, "profile": "A"},
                         {"id": "J1", "subtime": 30, "res": 4, "profile": "A"}]}
    (tmp_path / "platform.json").write_text(json.dumps(platform))
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    return str(tmp_path / "platform.json"), str(tmp_path / "workload.json")


def tiny_config(platform: str, workload: str, **training) -> dict:
    return {"environment": {"platform": platform, "workload": workload, "objective": "energy"},
            "training": {"simulations": 25, "trajectories": 2, "seed": 3, **training},
            "ppo": {"minibatch_size": 4, "epochs": 8, "clip": 0.2, "actor_lr": 0.01, "critic_lr": 0.01}}


@pytest.fixture
def trained(tmp_path: Path, two_nodes) -> tuple[str, tuple[str, str]]:
    config = config_from_dict(tiny_config(*two_nodes), "tiny", "/")
    outcome = train(config, tmp_path / "out", progress=False)
    return outcome.model, two_nodes


def test_training_writes_curves_and_is_reproducible(tmp_path, two_nodes):
    config = config_from_dict(tiny_config(*two_nodes, simulations=4, checkpoint_every=2), "tiny", "/")
    first = train(config, tmp_path / "a", progress=False)
    second = train(config, tmp_path / "b", progress=False)
    lines = Path(first.csv).read_text().splitlines()
    assert lines[0].startswith("simulation,reward,energy,makespan,edp,policy_loss,value_loss,entropy")
    assert len(lines) == 1 + 4
    assert Path(first.csv).read_text().split("\n")[1].split(",")[:5] == \
        Path(second.csv).read_text().split("\n")[1].split(",")[:5]
    assert os.path.isfile(tmp_path / "a" / "checkpoints" / "simulation_0002.pt")
    assert first.plot is not None and os.path.getsize(first.plot) > 1000
    import torch

    a, b = torch.load(first.model, weights_only=True), torch.load(second.model, weights_only=True)
    for key in a["actor"]:
        assert torch.equal(a["actor"][key], b["actor"][key])


def test_a_training_into_an_earlier_runs_folder_leaves_none_of_its_files(tmp_path, two_nodes):
    longer = config_from_dict(tiny_config(*two_nodes, simulations=4, checkpoint_every=1), "tiny", "/")
    train(longer, tmp_path / "out", progress=False)
    assert os.path.isfile(tmp_path / "out" / "checkpoints" / "simulation_0003.pt")
    shorter = config_from_dict(tiny_config(*two_nodes, simulations=2, checkpoint_every=0), "tiny", "/")
    outcome = train(shorter, tmp_path / "out", progress=False)
    assert os.listdir(tmp_path / "out" / "checkpoints") == []
    assert len(Path(outcome.csv).read_text().splitlines()) == 1 + 2


def test_the_trained_policy_runs_as_a_decider_process_and_reloads_identically(trained, tmp_path):
    model, (platform, workload) = trained
    outputs = []
    for run in range(2):
        prefix = tmp_path / f"run{run}" / "out"
        result = joulesim.simulate(platform, workload, "rl", options={"model": model, "mode": "sample", "seed": 5},
                                   energy=True, export=prefix, in_process=False)
        assert result.decider_calls > 2
        outputs.append(Path(f"{prefix}_jobs.csv").read_text())
    assert outputs[0] == outputs[1]


def test_the_decider_builds_the_observation_the_model_was_trained_with(trained, tmp_path):
    import torch

    from joulesim.rl.trained_policy import RLPolicy

    model, _ = trained
    assert RLPolicy({"model": model}).normalisation == "columns"
    payload = torch.load(model, weights_only=True)
    del payload["metadata"]["normalisation"]  # as written before the choice existed
    torch.save(payload, tmp_path / "old.pt")
    assert RLPolicy({"model": str(tmp_path / "old.pt")}).normalisation == "matrix"


def test_a_model_for_another_platform_size_is_refused(trained):
    model, _ = trained
    grid = ROOT / "experiments" / "irmasim_grid" / "exp2"
    with pytest.raises(JoulesimError, match=r"trained for a platform of 2 nodes .* this platform has 4"):
        joulesim.simulate(grid / "platform.json", grid / "workload.json", "rl", options={"model": model})


def test_decider_rl_errors_name_the_fix(tmp_path):
    with pytest.raises(JoulesimError, match="option model=FILE is required"):
        joulesim.simulate(EXPERIMENTS / "exp3" / "platform.json", EXPERIMENTS / "exp3" / "workload.json", "rl")
    with pytest.raises(JoulesimError, match="missing.pt"):
        joulesim.simulate(EXPERIMENTS / "exp3" / "platform.json", EXPERIMENTS / "exp3" / "workload.json", "rl",
                          options={"model": str(tmp_path / "missing.pt")})
    not_a_model = tmp_path / "model.pt"
    not_a_model.write_text("hello")
    with pytest.raises(JoulesimError, match="model.pt"):
        joulesim.simulate(EXPERIMENTS / "exp3" / "platform.json", EXPERIMENTS / "exp3" / "workload.json", "rl",
                          options={"model": str(not_a_model)})


@pytest.mark.parametrize("text, where", [
    ('[environment]\nplatform = "p"\nworkload = "w"\n[trainig]\n', "table [trainig]"),
    ('[environment]\nplatform = "p"\nworkload = "w"\ncolour = 1\n', "[environment] key 'colour'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nclip = 2\n', "[ppo] key 'clip'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[training]\nsimulations = 0\n', "[training] key 'simulations'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\nnormalisation = "rows"\n', "[environment] key 'normalisation'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nnetwork = "lecun"\n', "[ppo] key 'network'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nactor_widths = []\n', "[ppo] key 'actor_widths'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nactor_widths = [16, 0]\n', "[ppo] key 'actor_widths'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nactor_widths = [16.0]\n', "[ppo] key 'actor_widths'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nactor_widths = 16\n', "[ppo] key 'actor_widths'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nreward_scale = 0\n', "[ppo] key 'reward_scale'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nreward_scale = "big"\n', "[ppo] key 'reward_scale'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nentropy_end = -1\n', "[ppo] key 'entropy_end'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nself_imitation = -1\n', "[ppo] key 'self_imitation'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\ntrajectory_origin = "random"\n[ppo]\nself_imitation = 1\n',
     "[ppo] key 'self_imitation'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[training]\nexploring_starts = 1\n',
     "[training] key 'exploring_starts'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nkeep_best_steps = -1\n', "[ppo] key 'keep_best_steps'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nkeep_best_steps = 0.5\n', "[ppo] key 'keep_best_steps'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\ntrajectory_origin = "random"\n[ppo]\nkeep_best_steps = 9\n',
     "[ppo] key 'keep_best_steps'"),
    ('[environment]\nplatform = "p"\nworkload = "w"\n[ppo]\nkeep_best_steps = 9\nswa = true\n',
     "[ppo] key 'keep_best_steps': is given with swa"),
    ('[environment]\nworkload = "w"\n', "[environment] key 'platform'"),
    ('[environment]\nplatform = "nowhere.json"\nworkload = "w"\n', "[environment] key 'platform'"),
    ('[environment\n', "TOML syntax"),
    ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "file: nests arrays or inline tables about a thousand"),
    ("x = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n", "file: nests arrays or inline tables about a thousand"),
    ("x = " + "[" * 300 + "]" * 300 + "\n", "file: nests tables and arrays more than 100 levels deep"),
    ("x = " + "9" * 5_000 + "\n", "TOML value"),
])
def test_config_errors_name_the_key(tmp_path, text, where):
    for name in ("p", "w"):
        (tmp_path / name).write_text("{}")
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_training_config(path)
    assert where in str(caught.value) and str(path) in str(caught.value)


def test_a_workload_too_small_for_the_trajectory_is_a_clear_error(two_nodes):
    config = config_from_dict({"environment": {"platform": two_nodes[0], "workload": two_nodes[1],
                                               "trajectory_length": 5}}, "tiny", "/")
    with pytest.raises(JoulesimError, match="has 2 jobs, fewer than the trajectory length 5"):
        train(config, "/tmp/never", progress=False)


def test_cli_train_and_evaluate_end_to_end(tmp_path, two_nodes):
    config = tmp_path / "tiny.toml"
    config.write_text(f'[environment]\nplatform = "{two_nodes[0]}"\nworkload = "{two_nodes[1]}"\n\n'
                      "[training]\nsimulations = 3\ntrajectories = 1\n\n[ppo]\nminibatch_size = 4\nepochs = 2\n")
    command = [sys.executable, "-m", "joulesim.cli.main"]
    done = subprocess.run(command + ["rl", "train", str(config), "-o", str(tmp_path / "out"), "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "trained 3 simulation(s)" in done.stdout
    assert (tmp_path / "out" / "model.pt").is_file() and (tmp_path / "out" / "training.png").is_file()
    from joulesim.rl import cpu_kernels
    from joulesim.rl.model_file import load_agent

    _, metadata = load_agent(str(tmp_path / "out" / "model.pt"))  # (torch's kernels: AVX2 wherever the CPU has them)
    assert metadata["cpu_kernels"] == ("AVX2" if cpu_kernels.cpu_has_avx2() else cpu_kernels.capability())
    done = subprocess.run(command + ["rl", "evaluate", str(tmp_path / "out" / "model.pt"), "-p", two_nodes[0],
                                     "-w", two_nodes[1], "--runs", "3", "-o", str(tmp_path / "runs.csv")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "energy J" in done.stdout and len((tmp_path / "runs.csv").read_text().splitlines()) == 4
    bad = tmp_path / "bad.toml"
    bad.write_text('[environment]\nplatform = "x.json"\n')
    done = subprocess.run(command + ["rl", "train", str(bad)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "[environment] key 'platform'" in done.stderr or "[environment] key 'workload'" in done.stderr


@pytest.mark.parametrize("config", sorted(p.name for p in EXPERIMENTS.glob("*.toml")))
def test_every_experiment_configuration_loads_and_builds_its_environment(config):
    from joulesim.rl.training import make_environment

    settings = load_training_config(EXPERIMENTS / config)
    env = make_environment(settings)
    observation, _ = env.reset(seed=settings.seed)
    assert observation["features"].shape == (env.n_actions, len(settings.environment["features"]))
    assert settings.environment["objective"] in config


def test_unseen_workloads_are_the_experiments_jobs_in_orders_never_trained_on(tmp_path):
    # Issue 48: the agent is also tested on workloads it never saw, from the thesis's generator
    # (the same job types and numbers, one every 0.05 s). Experiment 1's 4 A and 2 B jobs have
    # 15 orders: the training one and 14 others.
    import json

    from conftest import load_experiment_script

    module = load_experiment_script("rl_energy")
    training = json.loads((ROOT / "experiments" / "irmasim_grid" / "exp1" / "workload.json").read_text())

    def kinds(workload):
        return [(job["profile"], job["res"]) for job in workload["jobs"]]

    paths = module.unseen_workloads("exp1", 14, tmp_path / "a")
    workloads = [json.loads(path.read_text()) for path in paths]
    orders = {tuple(kinds(w)) for w in workloads}
    assert len(orders) == 14 and tuple(kinds(training)) not in orders
    for workload in workloads:
        assert sorted(kinds(workload)) == sorted(kinds(training))
        assert [job["subtime"] for job in workload["jobs"]] == [job["subtime"] for job in training["jobs"]]
        assert workload["profiles"] == training["profiles"]
    again = module.unseen_workloads("exp1", 3, tmp_path / "b")  # the same draws, whatever the count
    assert [path.read_bytes() for path in again] == [path.read_bytes() for path in paths[:3]]
    with pytest.raises(SystemExit, match="only 14 orders"):
        module.unseen_workloads("exp1", 15, tmp_path / "c")


def test_without_the_rl_extra_the_commands_and_the_decider_say_what_to_install(tmp_path):
    script = """
import sys
sys.modules["gymnasium"] = None
from joulesim.cli.main import main
sys.argv = ["joulesim", *sys.argv[1:]]
main()
"""
    config = str(EXPERIMENTS / "exp1_energy.toml")
    done = subprocess.run([sys.executable, "-c", script, "rl", "train", config], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "install the rl extra" in done.stderr
    grid = ROOT / "experiments" / "irmasim_grid" / "exp1"
    done = subprocess.run([sys.executable, "-c", script, "run", "--in-process", "-p", str(grid / "platform.json"),
                           "-w", str(grid / "workload.json"), "-d", "rl", "-o", "model=x.pt"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "decider rl needs the rl extra (gymnasium is missing)" in done.stderr


# -- limits, output paths and progress, all checked or shown before the long work -------------


@pytest.mark.parametrize("table, key, value, limit", [
    ("training", "threads", 1_000_000_000, "at most"),  # std::bad_alloc in torch.set_num_threads
    ("training", "simulations", 10**12, "[1, 1,000,000]"),
    ("training", "trajectories", 10**9, "[1, 100,000]"),
    ("ppo", "epochs", 10**9, "[1, 100,000]"),
    ("training", "seed", 2**63, "[0, 9,223,372,036,854,775,807]"),  # torch.manual_seed overflowed
])
def test_counts_beyond_their_limit_are_refused_with_the_limit(two_nodes, table, key, value, limit):
    document = tiny_config(*two_nodes)
    document[table][key] = value
    with pytest.raises(InputError, match=rf"\[{table}\] key '{key}': is {value}.*{re.escape(limit)}"):
        config_from_dict(document, "tiny", "/")


def test_threads_up_to_the_cpus_are_accepted(two_nodes):
    from joulesim.campaign.executors import default_workers

    document = tiny_config(*two_nodes, threads=default_workers())
    assert config_from_dict(document, "tiny", "/").threads == default_workers()
    document["training"]["threads"] = default_workers() + 1
    with pytest.raises(InputError, match=rf"give at most {default_workers()}, the CPUs"):
        config_from_dict(document, "tiny", "/")


@pytest.fixture
def no_work(monkeypatch):
    """Building the agent is where the training's work and memory start: it must not be reached."""
    def refuse(*args, **kwargs):
        raise AssertionError("the training started")
    monkeypatch.setattr("joulesim.rl.ppo.PPOAgent.__init__", refuse)


@pytest.mark.parametrize("environment, message", [
    ({"max_steps": 10**15}, r".* may need [\d,.]+ GiB, more than this machine's"),
    ({"max_waits": 10**15}, r".* may need [\d,.]+ GiB, more than this machine's"),
])
def test_trajectories_that_cannot_fit_in_memory_are_refused_before_training(tmp_path, two_nodes, no_work,
                                                                            environment, message):
    document = tiny_config(*two_nodes)
    document["environment"].update(environment)
    config = config_from_dict(document, "tiny.toml", "/")
    with pytest.raises(InputError, match=r"tiny\.toml: \[training\] trajectories x \[environment\] max_steps: "
                       + message):
        train(config, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()  # nothing written either


def test_an_observation_too_large_is_refused_before_it_is_allocated(two_nodes):
    from joulesim.rl.environment import MAX_ACTIONS, NodeSchedulingEnv

    with pytest.raises(JoulesimError, match=r"num_jobs 1000000000 x 2 nodes = 2,000,000,000 actions: at most "
                       rf"{MAX_ACTIONS:,}"):
        NodeSchedulingEnv(*two_nodes, num_jobs=10**9)


def test_an_unwritable_training_folder_is_refused_before_training(tmp_path, two_nodes, no_work):
    a_file = tmp_path / "a_file"
    a_file.write_text("kept")
    config = config_from_dict(tiny_config(*two_nodes, checkpoint_every=1), "tiny", "/")
    for out, problem in ((a_file, "is a file, not a folder"), (a_file / "x", "Not a directory"),
                         ("/proc/joulesim_training", "cannot be created or written"),
                         (tmp_path / "checkpoints_is_a_file", "is a file, not a folder")):
        if out == tmp_path / "checkpoints_is_a_file":
            (tmp_path / "checkpoints_is_a_file").mkdir()
            (tmp_path / "checkpoints_is_a_file" / "checkpoints").write_text("")
        with pytest.raises(InputError, match=rf"{re.escape(str(out))}: output folder: .*{problem}.*rl train -o"):
            train(config, out, progress=False)
    assert a_file.read_text() == "kept"


def test_cli_output_paths_are_checked_before_the_work(tmp_path, two_nodes):
    config = tmp_path / "tiny.toml"
    config.write_text(f'[environment]\nplatform = "{two_nodes[0]}"\nworkload = "{two_nodes[1]}"\n\n'
                      "[training]\nsimulations = 1000000\n")  # would train for hours
    command = [sys.executable, "-m", "joulesim.cli.main", "rl"]
    done = subprocess.run(command + ["train", str(config), "-o", "/etc/passwd/x"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.startswith("joulesim: error: /etc/passwd/x: output folder")
    # evaluate: the path is refused before the model is even read (this one does not exist).
    for out, problem in (("/etc/passwd/x.csv", "cannot be written in folder /etc/passwd"),
                         ("/proc/runs.csv", "cannot be written in folder /proc"), (str(tmp_path), "is a folder")):
        done = subprocess.run(command + ["evaluate", str(tmp_path / "absent.pt"), "-p", two_nodes[0], "-w",
                                         two_nodes[1], "-o", out], capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"joulesim: error: {out}: -o/--out: {problem}"), done.stderr
        assert "Traceback" not in done.stderr


@pytest.fixture
def progress_at_once(monkeypatch):
    """Progress lines without a terminal from the first update, not after 5 s."""
    monkeypatch.setattr("joulesim.console.progress_bar.PLAIN_DELAY_S", 0.0)
    monkeypatch.setattr("joulesim.console.progress_bar.PLAIN_INTERVAL_S", 0.0)


def test_training_and_evaluation_report_progress_without_a_terminal(tmp_path, two_nodes, progress_at_once):
    # As in a batch job's log: stderr is not a terminal, and no option asks for progress.
    from click.testing import CliRunner

    from joulesim.cli.rl_command import rl

    config = tmp_path / "tiny.toml"
    config.write_text(f'[environment]\nplatform = "{two_nodes[0]}"\nworkload = "{two_nodes[1]}"\n\n'
                      "[training]\nsimulations = 3\n\n[ppo]\nminibatch_size = 4\nepochs = 2\n")
    done = CliRunner().invoke(rl, ["train", str(config), "-o", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert any(line.startswith("training:") and "3/3" in line for line in lines), done.stderr
    assert "\r" not in done.stderr  # one line per report, not a bar redrawn in place

    done = CliRunner().invoke(rl, ["evaluate", str(tmp_path / "out" / "model.pt"), "-p", two_nodes[0],
                                   "-w", two_nodes[1], "--runs", "2"])
    assert done.exit_code == 0, done.output
    assert any(line.startswith("evaluating:") and "2/2" in line for line in done.stderr.splitlines()), done.stderr
    assert "\r" not in done.stderr


def test_known_optimum_cases_enumerate_every_schedule_through_the_environment(three_nodes):
    # The three-node case of tests/conftest.py: every decision has all three nodes free, so
    # 3^4 = 81 schedules; the optimum is every job on the cool node, 860 J (derived there).
    from experiments.rl_energy.known_optimum import every_schedule, settings

    energies = every_schedule(settings(*three_nodes, seed=0, simulations=1, actor_lr=0.01, entropy=0.0))
    assert len(energies) == 81
    assert min(energies, key=energies.get) == (2, 2, 2, 2) and min(energies.values()) == pytest.approx(860.0, abs=1e-9)
    assert sorted(energies.values())[1] > 860.0  # unique


def test_known_optimum_study_draws_cases_with_a_unique_mixed_optimum(tmp_path):
    from experiments.rl_energy.known_optimum import draw_cases

    cases = draw_cases(2, tmp_path)
    assert [case["case"] for case in cases] == [case["case"] for case in draw_cases(2, tmp_path / "again")]
    for case in cases:
        assert len(set(case["optimum"])) >= 2 and 1 < case["schedules"] <= 81 and case["second_gap_pct"] > 0


def test_known_optimum_summary_counts_each_variant_s_reached_seeds_per_case(tmp_path):
    """--summarise: a row per CSV (its settings, episodes = simulations x episodes per update, its
    seeds), per case the seeds that reached the optimum, the total; the next-best gaps last."""
    import pandas as pd

    from experiments.rl_energy.known_optimum import summary_table

    def rows(simulations, trajectories, lr, entropy, reached):
        return [{"simulations": simulations, "trajectories": trajectories, "actor_lr": lr, "entropy": entropy,
                 "requests": "constant", "normalisation": "columns",
                 "case": case, "seed": seed, "reached": hit, "second_gap_pct": gap}
                for (case, gap), hits in zip((("draw_002", 11.4), ("draw_010", 1.6)), reached)
                for seed, hit in enumerate(hits)]

    # (a: a run from before the actor's widths were a column, the thesis's; b: a wider actor)
    pd.DataFrame(rows(50, 4, 0.01, 0.0, [[True, False, True], [False, False, False]])).to_csv(tmp_path / "a.csv")
    pd.DataFrame(rows(100, 8, 0.003, 0.01, [[True, True, True], [True, False, False]])).assign(
        actor_widths="32-32-16-16-8-8").to_csv(tmp_path / "b.csv")
    assert summary_table([tmp_path / "a.csv", tmp_path / "b.csv"]).splitlines() == [
        "| actor lr | actor's hidden widths | episodes per update | entropy | random openings | self-imitation "
        "| keep best (steps) | episodes | requested time | normalisation | seeds | draw_002 | draw_010 | all cases |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| 0.01 | 16, 16, 8, 8, 4, 4 | 4 | 0 | 0 | 0 | 0 | 200 | constant | columns | 0-2 | 2/3 | 0/3 | **2/6** |",
        "| 0.003 | 32, 32, 16, 16, 8, 8 | 8 | 0.01 | 0 | 0 | 0 | 800 | constant | columns | 0-2 | 3/3 | 1/3 "
        "| **4/6** |",
        "| the next-best schedule, % above the optimum | | | | | | | | | | | 11.4 | 1.6 | |"]


def test_torch_kernels_are_pinned_to_avx2_unless_chosen_torch_came_first_or_the_cpu_lacks_it(tmp_path):
    """cpu_kernels.pin: ATEN_CPU_CAPABILITY=avx2 when unset, torch not yet imported and the CPU has
    AVX2 (read from cpuinfo's flags); nothing otherwise. A fresh process that imports joulesim.rl
    runs torch's AVX2 kernels on a CPU with AVX2, and the kernels a user sets otherwise."""
    from joulesim.rl.cpu_kernels import cpu_has_avx2, pin

    environ: dict[str, str] = {}
    assert pin(environ, {}, has_avx2=True) == "avx2" and environ == {"ATEN_CPU_CAPABILITY": "avx2"}
    for environ, modules, has in (({"ATEN_CPU_CAPABILITY": "default"}, {}, True), ({}, {"torch": object()}, True),
                                  ({}, {}, False)):
        before = dict(environ)
        assert pin(environ, modules, has_avx2=has) is None and environ == before
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    assert cpu_has_avx2(str(info))
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx512f\n")
    assert not cpu_has_avx2(str(info)) and not cpu_has_avx2(str(tmp_path / "absent"))
    script = "import joulesim.rl; from joulesim.rl import cpu_kernels; print(cpu_kernels.capability())"
    env = {key: value for key, value in os.environ.items() if key != "ATEN_CPU_CAPABILITY"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    if cpu_has_avx2():
        assert done.stdout.strip() == "AVX2"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**env, "ATEN_CPU_CAPABILITY": "default"})
    assert done.stdout.strip() == "DEFAULT", done.stderr


#: The settings with keep_best (experiments/rl_energy/README.md, "Keeping the best episode").
KEEP = "openings0.75_imitation3_keep_best20000_800_episodes"


def test_the_committed_known_optimum_table_is_what_its_rows_give():
    """experiments/rl_energy/results/known_optimum/summary.md is --summarise of the CSVs beside it
    (in the order of the README's command); summary_new_cases.md and summary_fresh_cases.md of the
    runs on the cases drawn after them; summary_wide_actor.md of the wider actor's runs."""
    from experiments.rl_energy.known_optimum import summary_table

    folder = EXPERIMENTS / "results" / "known_optimum"
    entropy = [f"lr0.003_8_episodes_entropy0.01{name}.csv" for name in (
        "", "_near_ties_1200_episodes", "_openings0.5", "_openings0.5_imitation1_800_episodes",
        "_openings0.5_imitation1_1600_episodes", "_openings0.75_imitation1_800_episodes",
        "_openings0.75_imitation1_800_episodes_seeds10-19", "_openings0.75_imitation3_800_episodes",
        "_openings0.75_imitation3_800_episodes_seeds10-19", f"_{KEEP}", f"_{KEEP}_seeds10-19", "_requests_work",
        "_requests_work_matrix")]
    names = ["tiny_case_settings.csv", "lr0.003_8_episodes.csv", *entropy, "lr0.003_8_episodes_entropy0.1_to_0.csv"]
    later = {draw: [f"{draw}_cases_lr0.003_8_episodes_entropy0.01_{run}.csv" for run in (
        "openings0.75_imitation1_800_episodes", "openings0.75_imitation3_800_episodes", KEEP)]
        for draw in ("new", "fresh")}
    later["cases25-32"] = [f"cases25-32_lr0.003_8_episodes_entropy0.01_{KEEP}.csv"]
    misses = ["misses_lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_keep_best20000_800_episodes.csv"]
    assert sorted(path.name for path in folder.glob("*.csv")) == sorted(names + sum(later.values(), []) + misses)
    assert (folder / "summary.md").read_text() == summary_table([folder / name for name in names]) + "\n"
    for draw, runs in later.items():
        name = f"summary_{draw}_cases.md" if draw in ("new", "fresh") else f"summary_{draw}.md"
        assert (folder / name).read_text() == summary_table([folder / n for n in runs]) + "\n"
    wide = [folder / "wide_actor" / f"cases{run}.csv" for run in (
        "01-08_seeds00-09", "01-08_seeds10-19", "09-16", "17-24", "25-32", "33-40")]
    assert sorted((folder / "wide_actor").glob("*.csv")) == sorted(wide)
    assert (folder / "summary_wide_actor.md").read_text() == summary_table(wide) + "\n"


def test_random_openings_play_valid_decisions_untrained_until_a_draw_says_stop():
    """Exploring starts: each opening decision is drawn uniformly among the valid ones while a
    uniform draw falls below the probability, then the policy takes over (the observation it
    takes over at, and whether the opening was empty); an episode that ends in its opening
    gives None. Probability 0 draws nothing, not even from the generator."""
    from joulesim.rl.training import random_opening

    class Steps:  # four decisions, of which only actions 1 and 3 are valid
        def __init__(self):
            self.played = []

        def step(self, action):
            self.played.append(action)
            done = len(self.played) == 4
            return {"mask": np.array([0, 1, 0, 1]), "step": len(self.played)}, 0.0, done, False, {}

    first = {"mask": np.array([0, 1, 0, 1]), "step": 0}
    env = Steps()
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert random_opening(env, first, 0.0, rng) == (first, True) and env.played == []
    assert rng.bit_generator.state == state
    for seed in range(20):
        env, rng, check = Steps(), np.random.default_rng(seed), np.random.default_rng(seed)
        outcome = random_opening(env, first, 0.6, rng)
        draws = 0  # the same stream: a draw below 0.6, then the action drawn
        while check.random() < 0.6:
            check.integers(2)
            draws += 1
            if draws == 4:
                break
        assert len(env.played) == draws and set(env.played) <= {1, 3}
        if draws == 4:
            assert outcome is None
        else:
            observation, whole = outcome
            assert observation["step"] == draws and whole == (draws == 0)


def test_self_imitation_is_offered_every_episode_that_terminates_random_openings_included(tmp_path, two_nodes,
                                                                                          monkeypatch):
    """With self_imitation, every episode that terminates is offered whole: those drawn at
    random from start to end (nothing to train on) too, with their opening's decisions. The
    best kept is the best offered: on the two-node case, both jobs on the cool node (380 J)."""
    from joulesim.rl import ppo

    offered, agents = [], []
    original_offer, original_init = ppo.PPOAgent.offer_episode, ppo.PPOAgent.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        agents.append(self)

    def offer(self, opening=()):
        pending = self.buffer.pending
        total = sum(step[2] for step in opening) + (self.buffer.pending_reward() if pending else 0.0)
        offered.append((len(opening), pending, total))
        return original_offer(self, opening)

    monkeypatch.setattr(ppo.PPOAgent, "__init__", init)
    monkeypatch.setattr(ppo.PPOAgent, "offer_episode", offer)
    document = tiny_config(*two_nodes, simulations=10, exploring_starts=0.7)
    document["ppo"]["self_imitation"] = 1.0
    outcome = train(config_from_dict(document, "tiny", "/"), tmp_path / "out", progress=False)
    assert len(offered) == 10 * 2  # (nothing is truncated here)
    assert any(pending == 0 and drawn == 2 for drawn, pending, _ in offered)  # wholly random
    assert any(drawn == 0 and pending == 2 for drawn, pending, _ in offered)  # the policy's own
    assert all(drawn + pending == 2 for drawn, pending, _ in offered)
    best = agents[0].best_episode
    assert best.total == max(total for _, _, total in offered) == pytest.approx(-380.0)
    assert len(best) == 2 and outcome.best_episode_total == best.total
    document["ppo"]["self_imitation"] = 0.0
    assert train(config_from_dict(document, "tiny", "/"), tmp_path / "plain", progress=False).best_episode_total is None


#: A training seed whose untrained greedy policy does not put both jobs on the cool node.
SEED_UNTRAINED_OFF_BEST = 0


def test_keep_best_ends_the_training_on_the_best_episode_and_the_model_file_keeps_it(tmp_path, two_nodes,
                                                                                     monkeypatch):
    """With keep_best_steps, a training whose greedy policy departs from its best episode ends
    with the steps that make it repeat it, before the model is saved: the model file's greedy
    schedule is the best episode's. PPO's update is made a no-op here, so that only keep_best
    can move the policy from its untrained one (which misses the best schedule)."""
    from experiments.rl_energy.known_optimum import greedy_schedule
    from joulesim.rl import ppo

    monkeypatch.setattr(ppo.PPOAgent, "update", lambda self: self.buffer.clear() or {
        "policy_loss": math.nan, "value_loss": math.nan, "entropy": math.nan, "samples": 0})
    document = tiny_config(*two_nodes, simulations=1, exploring_starts=0.9, seed=SEED_UNTRAINED_OFF_BEST)
    document["training"]["trajectories"] = 8
    untrained = train(config_from_dict(document, "tiny", "/"), tmp_path / "off", progress=False)
    config = config_from_dict(document, "tiny", "/")
    assert untrained.keep_best_steps_taken is None and greedy_schedule(untrained.model, config)[1] > 380.0
    document["ppo"]["keep_best_steps"] = 5000
    outcome = train(config_from_dict(document, "tiny", "/"), tmp_path / "out", progress=False)
    assert outcome.best_episode_total == pytest.approx(-380.0)  # (both jobs on the cool node)
    assert outcome.keep_best_steps_taken is not None and outcome.keep_best_steps_taken > 0
    assert greedy_schedule(outcome.model, config)[1] == pytest.approx(380.0)


def test_known_optimum_landscape_finds_local_optima_and_what_random_later_decisions_favour():
    """A schedule is a local optimum when every schedule one decision away costs more; a first
    decision's value under uniformly random later decisions is the mean over the valid ones."""
    from experiments.rl_energy.known_optimum import is_local_optimum, landscape, uniform_continuation_values

    # Decision 1 then decision 2; after first decision 1 only one second decision is valid.
    energies = {(0, 0): 10.0, (0, 1): 30.0, (1, 0): 12.0, (2, 0): 50.0, (2, 1): 9.0}
    assert [s for s in energies if is_local_optimum(s, energies)] == [(0, 0), (2, 1)]
    assert uniform_continuation_values(energies, ()) == {0: 20.0, 1: 12.0, 2: 29.5}
    assert uniform_continuation_values(energies, (2,)) == {0: 50.0, 1: 9.0}
    row = landscape({"case": "c", "optimum": (2, 1)}, energies)
    assert row["local_optima"] == ["0-0", "2-1"] and row["local_optima_pct_above"] == [11.11, 0.0]
    assert row["first_best_under_uniform"] == 1 and row["optimum_first_best_under_uniform"] is False


def test_a_row_scorer_can_take_a_schedule_unless_its_decisions_ask_for_opposite_choices():
    """scorer_can_take: the row taken must outrank the other valid rows at every decision.
    Consistent preferences are takeable; a tie with another valid row is not; nor are two
    decisions that see the same rows (here a last float32 bit apart, as the normalised features
    of one state can be) and ask for opposite choices; rows truly different are."""
    from experiments.rl_energy.known_optimum import scorer_can_take

    sixth = np.float32(1 / 6)
    a, b, c = np.array([float(sixth), 1.0]), np.array([1.0, 0.0]), np.array([0.5, 0.5])
    bit_apart = np.array([float(np.nextafter(sixth, np.float32(0))), 1.0])  # a, its float32 a last bit off
    valid = np.arange(3)
    assert scorer_can_take([(np.stack([a, b, c]), valid, 0), (np.stack([a, b, c]), valid[1:], 2)])  # a > b, c > b
    assert not scorer_can_take([(np.stack([a, a, c]), valid, 0)])  # a tie
    assert scorer_can_take([(np.stack([a, a, c]), np.array([0, 2]), 0)])  # (the twin is not valid)
    assert not scorer_can_take([(np.stack([a, b, c]), valid, 0), (np.stack([bit_apart, b, c]), valid, 1)])
    assert scorer_can_take([(np.stack([a, b, c]), valid, 0), (np.stack([a + 0.1, b, c]), valid, 1)])
    assert not scorer_can_take([(np.stack([a, b, c]), valid, 0), (np.stack([a, b, c]), valid, 1)])  # a > b > a


def test_known_optimum_only_trains_on_named_drawn_cases(capsys):
    """--only keeps the named cases of those drawn (the same draw as always); a name not drawn
    is one usage error naming the cases that were."""
    from experiments.rl_energy.known_optimum import main

    with pytest.raises(SystemExit) as stop:
        main(["--cases", "1", "--only", "draw_999", "--seeds", "1", "--simulations", "1"])
    assert stop.value.code == 2
    assert "--only draw_999: not among the 1 cases drawn (draw_002)" in capsys.readouterr().err


def test_known_optimum_requests_in_proportion_to_work_keep_the_cases_and_their_optima(tmp_path):
    """--requests work: each job requests time in proportion to its operations (so the
    observation tells jobs apart), never less than it runs: the same cases are drawn, with the
    same schedules' energies and optima as with the constant 100 s."""
    import json

    from experiments.rl_energy.known_optimum import draw_cases

    constant, work = draw_cases(2, tmp_path / "c"), draw_cases(2, tmp_path / "w", "work")
    for a, b in zip(constant, work):
        assert (a["case"], a["optimum"], a["optimum_j"], a["schedules"]) == (b["case"], b["optimum"], b["optimum_j"],
                                                                           b["schedules"])
        profiles = json.loads(Path(b["workload"]).read_text())["profiles"]
        requests = [profiles[f"P{k}"]["req_time"] for k in range(4)]
        assert [r / ops for r, (_, ops) in zip(requests, b["jobs"])] == pytest.approx([1e-9] * 4, rel=0.02)


def test_rl_energy_reuses_the_committed_rows_of_finished_trainings(tmp_path, monkeypatch):
    """The rerun takes hours on two cores and spans sessions: each finished training's rows are
    committed (results/tasks.jsonl) and a later run with the same settings takes them instead of
    training again; a key holds the configuration file's digest, so an edited configuration trains
    again. The file's bytes depend on its records only."""
    import pandas as pd

    from conftest import load_experiment_script

    module = load_experiment_script("rl_energy")
    from joulesim.rl import cpu_kernels

    kernels = cpu_kernels.capability()  # the records were made with this machine's kernels
    committed = pd.read_csv(module.RECORD)
    committed = committed[(committed.name == "exp1_edp") & (committed.workload == "training")
                          & committed.kind.isin(["trained", "untrained"])]
    records = {}
    for seed in (0, 1):
        key = module.task_key("train_and_test", "exp1_edp", seed, 3, 0, 10)
        rows = [{k: (None if v != v else v) for k, v in row.items()}
                for row in committed[committed.seed == seed].to_dict("records")]
        records[key] = {"key": key, "rows": rows, "cpu_kernels": kernels}
    path = tmp_path / "tasks.jsonl"
    module.write_task_records(path, dict(reversed(list(records.items()))))
    text = path.read_bytes()
    assert module.read_task_records(path) == records
    module.write_task_records(path, records)
    assert path.read_bytes() == text
    out = tmp_path / "out"
    assert module.main(["--only", "exp1_edp", "--seeds", "2", "--runs", "3", "--unseen", "0", "--no-readme",
                        "--out", str(out), "--records", str(path), "--jobs", "1"]) == 0
    assert not (out / "exp1_edp").exists()  # nothing trained
    results = pd.read_csv(out / "results.csv")
    learned = results[results.kind.isin(["trained", "untrained"])].sort_values(["seed", "kind"])
    expected = committed[committed.seed.isin([0, 1])].sort_values(["seed", "kind"])
    assert learned.energy_avg.tolist() == expected.energy_avg.tolist() and len(learned) == 4
    # another configuration file, another key; other test settings, another key
    folder = tmp_path / "edited"
    folder.mkdir()
    (folder / "exp1_edp.toml").write_text((module.HERE / "exp1_edp.toml").read_text() + "\n# edited\n")
    key = module.task_key("train_and_test", "exp1_edp", 0, 3, 0, 10)
    assert module.task_key("train_and_test", "exp1_edp", 0, 4, 0, 10) != key
    monkeypatch.setattr(module, "HERE", folder)
    assert module.task_key("train_and_test", "exp1_edp", 0, 3, 0, 10) != key
    # made with other kernels, a record is not taken (rows depend on them: rl/cpu_kernels.py)
    assert module.task_reusable(records[key], kernels) and not module.task_reusable(None, kernels)
    assert not module.task_reusable({**records[key], "cpu_kernels": "AVX512" if kernels != "AVX512" else "AVX2"}, kernels)
    path.write_text(text.decode() + "{not json\n")
    with pytest.raises(SystemExit, match=r"tasks.jsonl: line 3 is not a task record"):
        module.read_task_records(path)


def test_rl_energy_s_workers_run_the_pinned_cpu_kernels():
    """A training worker of experiments/rl_energy loads torch after joulesim.rl pinned its kernels
    (AVX2 on any CPU that has them), so its rows are those of every such machine: torch imported
    first kept AVX-512 on CPUs that have it, and the rerun's first rows were made so."""
    from joulesim.rl import cpu_kernels

    if not cpu_kernels.cpu_has_avx2():
        pytest.skip("this CPU has no AVX2: torch runs its default kernels, pinned or not")
    script = ("import experiments.rl_energy.run as run; run.worker_torch(); "
              "from joulesim.rl import cpu_kernels; print(cpu_kernels.capability())")
    environment = {key: value for key, value in os.environ.items() if key != "ATEN_CPU_CAPABILITY"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=environment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "AVX2"


def test_rl_energy_s_diagnosis_of_the_first_observation_is_what_a_rerun_gives():
    """README.md's "Why the thesis's agent collapses" quotes results/diagnosis.json: the thesis
    actor's pre-activation spreads on experiment 2's first observation, how many of 100
    initialisations start with every valid row where its last SELU is flat, and the features'
    ranges under the thesis's normalisation. Computed again, they are the committed ones (float32
    on other CPU kernels may move the last bits: the README prints two or three digits)."""
    from conftest import load_experiment_script

    module = load_experiment_script("rl_energy", "diagnosis")
    committed = json.loads(module.DIAGNOSIS.read_text())["first_observation"]
    again = module.first_observation()
    assert again["all_rows_flat"] == committed["all_rows_flat"] and again["valid_rows"] == committed["valid_rows"]
    assert again["thesis_pre_activation_std"] == pytest.approx(committed["thesis_pre_activation_std"], rel=1e-4)
    assert again["feature_ranges"].keys() == committed["feature_ranges"].keys()
    for name, bounds in committed["feature_ranges"].items():
        assert again["feature_ranges"][name] == pytest.approx(bounds, rel=1e-5, abs=1e-9), name
