"""Every figure in an experiment's README is written from its committed results (issue 48).

For each experiment whose README is generated: the README equals what its `readme_figures` makes
of the committed results (a figure typed by hand, or results committed without the README they
give, fails here), and no number outside the generated parts looks like a measurement.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, load_experiment_script

if str(REPO_ROOT) not in sys.path:  # the experiments are a package of the repository's root (see conftest)
    sys.path.insert(0, str(REPO_ROOT))
from experiments.readme_results import ReadmeError, loose_numbers, render_readme, source_numbers  # noqa: E402
EXPERIMENTS = REPO_ROOT / "experiments"
# The experiments whose README is written from results files so far; the others' READMEs still
# carry figures typed from their last run (issue 48 converts them one by one).
GENERATED = ["pcbe", "grid_energy", "irmasim_grid", "utility_policies", "energy_shutdown", "placement_network",
             "grid_broker", "rl_energy", "energy_budget"]


@pytest.mark.parametrize("name", GENERATED)
def test_the_readme_is_what_its_results_give(name):
    run = load_experiment_script(name)
    readme = EXPERIMENTS / name / "README.md"
    text = readme.read_text()
    expected = render_readme(text, *run.readme_figures(run.RESULTS), name=str(readme))
    assert text == expected, (f"{readme} differs from its results: rewrite it with "
                              f"python -m experiments.{name}.run --readme-only")


@pytest.mark.parametrize("name", GENERATED)
def test_no_measurement_is_typed_by_hand_in_the_readme(name):
    folder = EXPERIMENTS / name
    loose = loose_numbers((folder / "README.md").read_text(), source_numbers(folder))
    assert loose == [], (f"numbers in {folder / 'README.md'} that are neither generated figures nor the "
                         f"experiment's inputs (line, number): {loose}")


@pytest.mark.parametrize("name", GENERATED)
def test_the_results_record_says_where_and_how_they_were_measured(name):
    run = load_experiment_script(name)
    import json

    record = json.loads((run.RESULTS / "run.json").read_text())
    assert {"command", "date", "commit", "wall_s", "cpu", "cores", "event_grouping", "seeds"} <= set(record)
    assert "--quick" not in record["command"] and "--comparison" not in record["command"]


def test_placement_network_s_host_link_sweep_has_its_own_record():
    """placement_network's README quotes two sweeps: the second's record must say it is the host-link one."""
    run = load_experiment_script("placement_network")
    import json

    record = json.loads((run.RESULTS / run.HOST_LINK_RESULTS / "run.json").read_text())
    assert record["command"] == "python -m experiments.placement_network.run --host-link-bw 1.25e8 --fcomm-stride 4"
    assert len(record["seeds"]) == run.WHOLE_SEEDS and record["event_grouping"] == "batsim"


def test_a_figure_the_experiment_does_not_know_is_refused_by_name():
    text = "energy <!-- figure: ratio_10 -->9.6<!-- /figure --> and <!-- figure: ratio_20 -->7.9<!-- /figure -->"
    with pytest.raises(ReadmeError, match="no figure named ratio_20"):
        render_readme(text, None, {"ratio_10": "8.1"})
    assert render_readme(text, None, {"ratio_10": "8.1", "ratio_20": "7"}) == (
        "energy <!-- figure: ratio_10 -->8.1<!-- /figure --> and <!-- figure: ratio_20 -->7<!-- /figure -->")


def test_a_readme_without_its_results_block_is_refused():
    with pytest.raises(ReadmeError, match="no results block"):
        render_readme("no markers here", "| table |", {})


def test_loose_numbers_are_the_measurements_typed_in_prose():
    text = "\n".join([
        "# Seed 004, figures 1 and 2 (§3, table 6.1)",
        "Nodes draw 520 W; we measure 9.6x at 10 jobs/day (2,396 -> <!-- figure: e -->250<!-- /figure --> kWh).",
        "Rerun 2026-11-29 with `--seeds 20`.",
        "```sh",
        "python -m experiments.x.run --jobs 300   # about 33 min",
        "```",
    ])
    assert loose_numbers(text, {"520"}) == [(2, "9.6"), (2, "2,396"), (5, "33")]


def test_reproduce_lists_every_experiment_folder():
    from experiments.reproduce import BY_NAME

    folders = {p.name for p in EXPERIMENTS.iterdir() if (p / "run.py").is_file()}
    # batsim5_edcs runs against a Batsim 5 source tree built beside the repository, not a seed.
    assert folders - {"batsim5_edcs"} == set(BY_NAME)


def test_a_quick_run_keeps_its_records_of_finished_trainings_out_of_the_committed_ones(tmp_path):
    """rl_energy records each finished training under keys of its test settings; a quick run's
    (two test runs) written to the committed results/tasks.jsonl would sit there beside the whole
    run's, and its writes race a whole run going on. Its records go to its output folder."""
    from experiments.reproduce import BY_NAME

    command = BY_NAME["rl_energy"].command(True, tmp_path)
    records = Path(command[command.index("--records") + 1])
    assert tmp_path in records.parents


def test_reproduce_quick_reruns_the_fast_experiments_and_leaves_the_committed_files(shared_data, tmp_path):
    fast = ["pcbe", "irmasim_grid", "grid_energy"]
    committed = {path: path.read_bytes() for name in fast
                 for path in [EXPERIMENTS / name / "README.md", *sorted((EXPERIMENTS / name / "results").iterdir())]}
    proc = subprocess.run([sys.executable, "-m", "experiments.reproduce", "--quick", "--only", ",".join(fast), "--out",
                           str(tmp_path)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for i, name in enumerate(fast, 1):
        assert f"[{i}/{len(fast)}] {name}: done" in proc.stdout
    assert (tmp_path / "pcbe" / "runs.csv").is_file() and (tmp_path / "pcbe" / "run.json").is_file()
    assert (tmp_path / "irmasim_grid" / "results" / "grid.csv").is_file()
    assert '"command": "python -m experiments.grid_energy.run --quick"' in (
        tmp_path / "grid_energy" / "results" / "run.json").read_text()
    assert {path: path.read_bytes() for path in committed} == committed


def test_reproduce_refuses_an_unknown_experiment():
    proc = subprocess.run([sys.executable, "-m", "experiments.reproduce", "--only", "pcbee"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no experiment pcbee" in proc.stderr and "Traceback" not in proc.stderr


def test_the_experiments_index_says_which_readmes_are_generated():
    rows = [line.split("|") for line in (EXPERIMENTS / "README.md").read_text().splitlines()
            if line.startswith("| `")]
    status = {cells[1].strip().strip("`"): cells[3].strip() for cells in rows}
    folders = {p.name for p in EXPERIMENTS.iterdir() if (p / "run.py").is_file()} - {"batsim5_edcs"}
    assert set(status) == folders
    assert {name for name, text in status.items() if text == "written from `results/`"} == set(GENERATED)
