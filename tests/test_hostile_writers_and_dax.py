"""Issue 46's last hostile-input cases: DAX numbers read as ASCII only, `campaign report` on a
damaged results table (a clean exit 2), and writers refusing a FIFO, a device or a folder at
their output path before opening it (never blocking on a FIFO, never renaming over it).

No test opens a FIFO: a writer that opened one for writing would block, so every command here
runs in a subprocess bounded by a timeout, and the FIFO is checked to be still a FIFO after."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.dax_workflow import load_workflow

TIMEOUT = 60


def joulesim_command(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd)


# --- DAX numbers ------------------------------------------------------------------------------

def _dax(tmp_path, runtime: str = "2", num_procs: str | None = None) -> str:
    procs = "" if num_procs is None else f' num_procs="{num_procs}"'
    path = tmp_path / "w.dax"
    path.write_text(f'<adag><job id="a" runtime="3"/><job id="b" runtime="{runtime}"{procs}/>'
                    '<child ref="b"><parent ref="a"/></child></adag>', encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("runtime", ["١", "１", "1_0", "nan", "inf", "1e400", "0x10", "", " "])
def test_a_dax_runtime_that_is_not_an_ascii_number_is_refused(tmp_path, runtime):
    """job-models:2400025 and 2400316: float("١") is 1.0, so an Arabic-Indic digit was a runtime."""
    path = _dax(tmp_path, runtime)
    with pytest.raises(InputError, match=r"<job id='b'>, runtime: invalid value") as raised:
        load_workflow(path, "wf0")
    assert raised.value.path == path
    assert "without quotes" not in str(raised.value)  # a JSON hint, meaningless for an XML attribute


def test_the_1e400_runtime_message_speaks_of_the_number_not_of_quotes(tmp_path):
    with pytest.raises(InputError) as raised:
        load_workflow(_dax(tmp_path, "1e400"), "wf0")
    message = str(raised.value)
    assert "'1e400': it is beyond the largest number a double holds" in message, message
    assert "a string" not in message and "quotes" not in message, message


@pytest.mark.parametrize("num_procs", ["2.5", "x", "١", "1e400", "99999999999999999999", "", "2 cores"])
def test_a_dax_num_procs_that_is_not_an_ascii_integer_is_refused(tmp_path, num_procs):
    """Batsim's strtol reads "2.5" as 2 and junk as 0 (then 1); joulesim used to read "2.5" as 1.
    Both are accidents: a fractional or junk processor count is refused."""
    with pytest.raises(InputError, match=r"<job id='b'>, num_procs: invalid value") as raised:
        load_workflow(_dax(tmp_path, num_procs=num_procs), "wf0")
    assert "integer" in str(raised.value)


@pytest.mark.parametrize("num_procs, expected", [(None, 1), ("3", 3), (" 4 ", 4), ("+2", 2), ("0", 1), ("-1", 1)])
def test_a_dax_num_procs_as_batsim_reads_it(tmp_path, num_procs, expected):
    assert load_workflow(_dax(tmp_path, "2.5e0", num_procs), "wf0").tasks["b"].num_procs == expected
    assert load_workflow(_dax(tmp_path, "2.5e0", num_procs), "wf0").tasks["b"].runtime == 2.5


def test_a_bad_dax_number_on_the_command_line_exits_2(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
    done = joulesim_command("run", "--in-process", "-p", "small4", "-d", "fcfs", "-w", str(workload),
                            "-W", _dax(tmp_path, "١"), "-e", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert "w.dax: <job id='b'>, runtime: invalid value '١'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out_jobs.csv").exists()


# --- campaign report on a damaged results table ----------------------------------------------

STUDY = """\
[campaign]
name = "damaged"
outputs = true
[[platforms]]
path = "small4"
[[workloads]]
path = "tiny"
[[deciders]]
decider = "fcfs"
[[deciders]]
decider = "easy"
"""


@pytest.fixture(scope="module")
def campaign_folder(tmp_path_factory):
    from joulesim.campaign.runner import run_campaign

    pytest.importorskip("matplotlib")
    base = tmp_path_factory.mktemp("campaign")
    (base / "study.toml").write_text(STUDY)
    run_campaign(str(base / "study.toml"), str(base / "campaign"), workers=1, progress=False)
    return base / "campaign"


def _damaged_copy(campaign_folder, tmp_path, old: str, new: str):
    import shutil

    campaign = tmp_path / "campaign"
    shutil.copytree(campaign_folder, campaign)
    (campaign / "results.parquet").unlink(missing_ok=True)
    results = campaign / "results.csv"
    header, rest = results.read_text().split("\n", 1)
    assert old in header.split(",")
    results.write_text(",".join(new if name == old else name for name in header.split(",")) + "\n" + rest)
    return campaign


@pytest.mark.parametrize("html", [True, False])
def test_campaign_report_on_a_table_without_its_decider_column_exits_2(campaign_folder, tmp_path, html):
    """reports:2500197: a mangled 'decider' header ended in KeyError: 'decider' (after the pages)."""
    campaign = _damaged_copy(campaign_folder, tmp_path, "decider", "de")
    done = joulesim_command("campaign", "report", str(campaign), *(["--html"] if html else []), "-o",
                            str(tmp_path / "plots"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr
    assert f"{campaign / 'results.csv'}: header: has no column 'decider'" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "plots" / "index.html").exists()  # checked before any page is written


def test_campaign_report_on_a_table_without_the_default_tradeoffs_metric_exits_2(campaign_folder, tmp_path):
    """reports:2500143: one clean line, but exit status 1."""
    campaign = _damaged_copy(campaign_folder, tmp_path, "mean_waiting_time", "mean>_waiting_time")
    done = joulesim_command("campaign", "report", str(campaign), "--html", "-o", str(tmp_path / "plots"))
    assert done.returncode == 2, done.stderr
    assert f"{campaign / 'results.csv'}: header: has no column 'mean_waiting_time'" in done.stderr, done.stderr
    assert "default trade-off" in done.stderr and "--tradeoff" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_campaign_report_still_draws_an_intact_table(campaign_folder, tmp_path):
    done = joulesim_command("campaign", "report", str(campaign_folder), "--html", "-o", str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plots" / "index.html").is_file()
    assert any(name.startswith("tradeoff_") for name in os.listdir(tmp_path / "plots"))
