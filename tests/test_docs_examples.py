"""The documentation's examples run as written and print or save what the pages say (docs/: the
decider, energy, Python API, campaign, node model and reinforcement learning examples; the
README's test command; the tutorial's blocks are run by test_docs_site.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import read_csv
from test_html_report import needs_browser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def page(name: str) -> str:
    """A documentation page's text (docs/NAME)."""
    return (ROOT / "docs" / name).read_text()


def python_blocks(name: str) -> dict[str, str]:
    """A page's code blocks that start with a '# file.py' comment, by file name."""
    blocks = re.findall(r"```python\n(.*?)```", page(name), flags=re.S)
    return {block.splitlines()[0][2:].strip(): block for block in blocks if block.startswith("# ")}


def test_the_python_decider_runs_as_written(tmp_path):
    source = python_blocks("guide/decider-python.md")["my_fcfs.py"]
    (tmp_path / "my_fcfs.py").write_text(source)
    command = re.search(r"PYTHONPATH=\. joulesim (run .*)", page("guide/decider-python.md")).group(1).split()
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *command], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = read_csv(str(tmp_path / "runs" / "001_jobs.csv"))
    assert len(rows) == 4 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)


def test_the_energy_example_runs_as_written_and_saves_what_it_says(tmp_path):
    block = page("guide/energy.md")
    commands = re.findall(r"^(joulesim run .*)$", block, flags=re.M)[:3]
    assert len(commands) == 3
    for command in commands:
        result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *command.split()[1:]], cwd=tmp_path,
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert result.returncode == 0, result.stderr
    claimed = re.search(r"\(([\d.]+) kWh -> ([\d.]+) kWh, ([\d,]+) machine switches\)", block)
    easy = read_csv(str(tmp_path / "results/easy_schedule.csv"))[0]
    shutdown = read_csv(str(tmp_path / "results/os_schedule.csv"))[0]
    assert f"{float(easy['consumed_joules']) / 3.6e6:.1f}" == claimed.group(1)
    assert f"{float(shutdown['consumed_joules']) / 3.6e6:.1f}" == claimed.group(2)
    assert shutdown["nb_machine_switches"] == claimed.group(3).replace(",", "")


def test_the_python_api_example_runs_as_written_and_prints_what_it_says(tmp_path):
    source = python_blocks("guide/python-api.md")["api_example.py"]
    (tmp_path / "api_example.py").write_text(source)
    result = subprocess.run([sys.executable, "api_example.py"], cwd=tmp_path, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    claimed = re.findall(r"^# (easy.*)$", source, flags=re.M)
    assert len(claimed) == 2
    for line in claimed:
        assert line in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1] == "60.0"
    assert os.listdir(tmp_path) == ["api_example.py"]  # no output file unless asked


def test_the_campaign_runs_as_written(tmp_path):
    block = page("guide/campaigns.md")
    study = re.search(r"```toml\n(# study.toml\n.*?)```", block, flags=re.S).group(1)
    (tmp_path / "study.toml").write_text(study)
    commands = re.findall(r"^(joulesim campaign (?:list|run) study.toml)", block, flags=re.M)[:2]
    assert commands == ["joulesim campaign list study.toml", "joulesim campaign run study.toml"]
    listed = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *commands[0].split()[1:]], cwd=tmp_path,
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    claimed = int(re.search(r"print the (\d+) instances", block).group(1))
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == claimed
    ran = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *commands[1].split()[1:]], cwd=tmp_path,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert f"{claimed} instances, {claimed} run now" in ran.stdout
    assert (tmp_path / "shutdown_results" / "results.csv").exists()


def test_the_node_model_example_runs_as_written(shared_data, tmp_path):
    block = page("guide/node-model.md")
    command = re.search(r"```sh\n(.*?)```", block, flags=re.S).group(1).replace("\\\n", " ").split()
    assert command[:2] == ["joulesim", "run"]
    # The paths are relative to the repository's root, beside which ../shared lives.
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *command[1:], "-e", str(tmp_path / "out")],
                            cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "node model            modelV1, idle power irmasim" in result.stdout
    assert len(read_csv(str(tmp_path / "out_jobs.csv"))) == 7


def test_the_reinforcement_learning_example_runs_as_written():
    import pytest

    pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")
    source = python_blocks("guide/reinforcement-learning.md")["rl_example.py"]
    result = subprocess.run([sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    claimed = re.findall(r"^# (\d.*)$", source, flags=re.M)
    assert claimed and claimed[0] in result.stdout.splitlines()


def test_the_readme_test_command_installs_what_ci_installs():
    # (a newcomer who runs the README's line gets the tests CI runs, none skipped for a package)
    block = re.search(r"```sh\n(apt-get [^\n]*)\n(python3 -m venv [^\n]*)\n```", README.read_text())
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert block is not None and block.group(1) in ci and block.group(2) in ci
    # and the documentation's install page gives the same two lines
    assert f"{block.group(1)}\n{block.group(2)}" in page("install.md")


def test_compare_names_each_run_by_its_label_and_refuses_other_inputs(tmp_path):
    import joulesim
    import pytest

    from joulesim.protocol.errors import JoulesimError

    workload = joulesim.generate_workload("batsim-eval", seed=2, jobs=40)
    runs = {"first come": joulesim.simulate("cluster32", workload, "fcfs"),
            "backfilling": joulesim.simulate("cluster32", workload, "easy")}
    table = joulesim.compare(runs)
    assert list(table.index) == ["first come", "backfilling"]
    assert table.loc["backfilling", "makespan"] == runs["backfilling"].metrics["makespan"]
    page = (tmp_path / "page.html")
    joulesim.compare_report(runs, page)
    assert "first come" in page.read_text() and "backfilling" in page.read_text()
    for bad in ({}, [runs["first come"]], {"x": "not a run"}):
        with pytest.raises(JoulesimError, match="RunResult"):
            joulesim.compare(bad)


@pytest.mark.parametrize("block, printed, lines", [
    ("typed_options_example.py", r"(?:fcfs|easy) .*", 2),
    ("stepwise_example.py", r"(?:t=|the last|True).*", 3),  # (joulesim.Simulation: run_until, state, fork)
    ("whatif_example.py", r"\w+ from 12 h on: .*", 3),  # (fork(decider=...): another decider takes over)
])
def test_a_python_api_example_prints_exactly_its_comments(tmp_path, block, printed, lines):
    source = python_blocks("guide/python-api.md")[block]
    result = subprocess.run([sys.executable, "-c", source], cwd=tmp_path, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    claimed = re.findall(rf"^# ({printed})$", source, flags=re.M)
    assert len(claimed) == lines and result.stdout.splitlines() == claimed


@pytest.fixture(scope="module")
def kth_report(tmp_path_factory) -> Path:
    """The reports guide's dated, labelled report of a KTH trace's first jobs, each command as
    written (the traces read from ../shared beside the checkout): the folder it was made in."""
    from conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent: the real traces live in ../shared/data beside the checkout")
    folder = tmp_path_factory.mktemp("kth-report")
    block = re.findall(r"```sh\n(joulesim workload from-swf .*?)```", page("guide/reports.md"), flags=re.S)[0]
    for line in block.strip().splitlines():
        command = line.replace("../shared/data", str(SHARED_DATA)).split()
        arguments = [part.strip('"') for part in re.findall(r'"[^"]*"|\S+', " ".join(command))]
        result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", *arguments[1:]], cwd=folder,
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        assert result.returncode == 0, (line, result.stderr)
    return folder


def test_the_report_example_runs_as_written(kth_report):
    html = (kth_report / "kth.html").read_text()
    assert "easy t_idle=600" in html and "easy, never off" in html and "date and time (UTC)" in html


@needs_browser
def test_the_kth_comparison_is_drawn_and_kept_as_screenshots(kth_report, browser):
    """The KTH comparison in Chromium, no JavaScript error, its screenshots kept as test artefacts
    (issue 49: a researcher looks at them): the second run's Gantt coloured by its start against
    the first run's (the difference Gantt, whose classes are each job's start shift between the two
    jobs files), then the distributions."""
    from joulesim.analysis.html_report import GANTT_NAME, shift_classes
    from joulesim.analysis.run_outputs import RunOutputs
    from test_report_readability import scroll_to_plot_of, sources
    from test_html_report import errors_of, open_page, screenshot

    open_page(browser, str(kth_report / "kth.html"), f"{GANTT_NAME}_1")
    browser.execute_script("Bokeh.documents[0].get_model_by_name(arguments[0] + '_colour_by').value = arguments[1];",
                           f"{GANTT_NAME}_1", "start against easy t_idle=600")
    drawn = sources(browser, f"{GANTT_NAME}_1_all")[f"{GANTT_NAME}_1_all"]
    first, second = (RunOutputs(str(kth_report / "out" / name)) for name in ("kth", "kth_on"))
    starts = first.jobs.set_index(first.jobs["job_id"].astype(int))["starting_time"]
    shifts = np.array([left - starts[int(job)] for job, left in zip(drawn["job_id"], drawn["left"])])
    assert drawn["shift"] == shift_classes(shifts).tolist() and len(set(drawn["shift"])) >= 2
    scroll_to_plot_of(browser, f"{GANTT_NAME}_1")
    screenshot(browser, "report_kth_difference_gantt.png")
    scroll_to_plot_of(browser, "cdf_0_0")
    screenshot(browser, "report_kth_distributions.png")
    assert errors_of(browser) == []

