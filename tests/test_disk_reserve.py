"""A run stops before its Pajé trace fills the disk (simulator/output/disk_reserve.py).

The trace has a line per machine at each job start and end; on the CEA-Curie trace it grew by
8 GB a minute. The disk's free space is simulated here (shutil.disk_usage), and the check made
every 20 kB written instead of every 64 MB.
"""

from __future__ import annotations

import shutil
from collections import namedtuple

from click.testing import CliRunner

from joulesim.cli.main import main as cli
from joulesim.simulator.output import disk_reserve

Usage = namedtuple("Usage", "total used free")


def run(tmp_path, monkeypatch, free: int, *extra: str):
    monkeypatch.setattr(disk_reserve, "CHECK_EVERY", 20_000)  # (bytes: past the header, within the run)
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 ** 12, 0, free) if str(path).startswith(str(tmp_path)) else real(path))
    return CliRunner().invoke(cli, ["run", "--in-process", "--no-progress", "-e", str(tmp_path / "out"), *extra])


def test_a_run_stops_with_one_line_before_the_trace_fills_the_disk(tmp_path, monkeypatch):
    result = run(tmp_path, monkeypatch, 500 << 20)  # 500 MB free: less than the 1 GiB kept free
    assert result.exit_code == 1, result.output
    [message] = [line for line in result.output.splitlines() if "stopped after writing" in line]
    assert "out_schedule.trace: stopped after writing" in message and "524 MB left free" in message and "keeps 1.0 GB free" in message
    assert "--disable-schedule-tracing" in message and "Traceback" not in result.output
    assert "outputs written so far are kept" in result.output
    assert (tmp_path / "out_schedule.trace").stat().st_size > 0  # what was written is kept
    assert (tmp_path / "out_jobs.csv").exists()


def test_with_room_on_the_disk_or_without_the_trace_the_run_goes_on(tmp_path, monkeypatch):
    assert run(tmp_path, monkeypatch, 2 << 30).exit_code == 0  # 2 GiB free
    result = run(tmp_path, monkeypatch, 500 << 20, "--disable-schedule-tracing")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out_schedule.trace").exists()
