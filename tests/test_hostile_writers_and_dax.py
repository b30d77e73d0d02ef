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
