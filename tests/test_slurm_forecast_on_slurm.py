"""`joulesim slurm forecast` on a real Slurm (four one-CPU nodes on localhost, conftest.local_slurm):
jobs are submitted, the forecast is taken at once, and its predictions are checked against the
starts derived by hand from the state it read.

Slurm's time limits are whole minutes (`--time=0:10`, ten seconds, is stored as 1:00), so the
running jobs hold their nodes for minutes: each test takes its forecast within seconds of
submitting, then cancels its jobs; nothing has to run to its end.

Predicted starts, as wall-clock epochs, are exact: a running job that started at s (squeue's
whole second) with a limit of L minutes is simulated as ending now + (s + 60 L - now), so a
start at its end is s + 60 L whatever `now` was. The seconds-from-now column depends on `now`,
the forecast's reading of the clock while squeue answered: it lies between the clock read
before and after the command.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time

import pytest

from joulesim.adapters.slurm.local_cluster import slurm_available

REASON = slurm_available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no local Slurm: {REASON}")


def sbatch(cluster, *options: str, seconds: int) -> str:
    """A `sleep` job whose time limit equals its sleep (whole minutes)."""
    out = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "-t", str(seconds // 60), *options,
                          "--wrap", f"sleep {seconds}"], env=cluster.env, capture_output=True, text=True, check=True)
    return out.stdout.strip().split(";")[0]


def states(cluster) -> dict[str, str]:
    """Job id -> state of the jobs squeue lists, finished ones included."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %T"], env=cluster.env, capture_output=True,
                         text=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


def start_epochs(cluster, job_ids: list[str]) -> dict[str, int]:
    """Each job's start as Slurm has it (epoch seconds): what the forecast reads."""
    out = subprocess.run(["squeue", "--json"], env=cluster.env, capture_output=True, text=True, check=True).stdout
    return {str(j["job_id"]): int(j["start_time"]) for j in json.loads(out)["jobs"] if str(j["job_id"]) in job_ids}


def wait_until(condition, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s:g} s: {what}")
        time.sleep(0.1)  # polling Slurm, bounded by the deadline


@pytest.fixture
def cluster(local_slurm):
    """The module's Slurm, left without a live job by each test."""
    yield local_slurm

    def live() -> list[str]:
        return [i for i, state in states(local_slurm).items()
                if state in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING")]

    if live():
        subprocess.run(["scancel", *live()], env=local_slurm.env, capture_output=True)
    wait_until(lambda: not live(), "the jobs cancelled are gone")


def start_running(cluster, jobs: list[tuple[tuple[str, ...], int]]) -> list[str]:
    ids = [sbatch(cluster, *options, seconds=seconds) for options, seconds in jobs]
    wait_until(lambda: all(states(cluster).get(i) == "RUNNING" for i in ids), "the jobs run")
    return ids


def forecast(cluster, tmp_path, *options: str) -> tuple[dict[str, dict[str, str]], float, float, str]:
    before = time.time()
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "forecast", "--slurm-conf",
                             cluster.conf, "-e", str(tmp_path / "f"), *options],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    after = time.time()
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "f_forecast.csv") as f:
        return {row["slurm_id"]: row for row in csv.DictReader(f)}, before, after, result.stdout


def test_forecast_predicts_easy_backfilling_and_fcfs_from_the_running_jobs(cluster, tmp_path):
    # All four nodes busy: J1 (2 nodes, 3 min), J2 (1 node, 1 min), J3 (1 node, 5 min).
    j1, j2, j3 = start_running(cluster, [(("-N", "2"), 180), (("-N", "1"), 60), (("-N", "1"), 300)])
    # Pending, in priority order (submission order: Slurm's default priorities decrease):
    p1 = sbatch(cluster, "-N", "3", seconds=60)
    p2 = sbatch(cluster, "-N", "1", seconds=60)
    p3 = sbatch(cluster, "-N", "1", seconds=120)
    s = start_epochs(cluster, [j1, j2])
    rows, before, after, stdout = forecast(cluster, tmp_path, "-d", "easy", "--what-if", "fcfs")
    assert set(rows) == {p1, p2, p3}  # the running jobs are not forecast: they are the state
    # By hand. EASY: P1 (3 nodes) waits for J1's end at s1+180 (then J1's 2 nodes and J2's one are
    # free); P2 (1 node, 1 min) backfills on J2's node at s2+60, ending at s2+120, before P1's
    # reservation; P3 (2 min) would end after it: it waits for P1's end at s1+240 (J3 ends at
    # s3+300). FCFS: P2 and P3 wait behind P1 and start at its end.
    easy = {p1: s[j1] + 180, p2: s[j2] + 60, p3: s[j1] + 240}
    fcfs = {p1: s[j1] + 180, p2: s[j1] + 240, p3: s[j1] + 240}
    for decider, expected in (("easy", easy), ("fcfs", fcfs)):
        for job_id, start in expected.items():
            assert abs(float(rows[job_id][f"{decider}_start"]) - start) < 0.01, (decider, job_id, rows[job_id])
            # seconds from now: the start less the clock read while squeue answered
            assert start - after - 0.01 <= float(rows[job_id][f"{decider}_in_s"]) <= start - before + 0.01
    # and the table, in priority order
    table = [line.split()[0] for line in stdout.splitlines()[2:5]]
    assert table == [p1, p2, p3], stdout


def test_running_jobs_are_pinned_to_the_nodes_they_run_on(cluster, tmp_path):
    """Where the running jobs are matters to a placement: J1 on n1 and n3 leaves, when it ends
    first, two free nodes that are not contiguous. Conservative backfilling with contiguous
    placement starts the pending 2-node job only once J2 has freed n2 between them; counted
    without placement (EASY) it starts at J1's end. Were the running jobs placed by the decider
    (J1 on n1-n2), contiguous placement would start it at J1's end too."""
    j1, j2, _ = start_running(cluster, [(("-w", "n1,n3", "-N", "2"), 60), (("-w", "n2"), 120),
                                        (("-w", "n4"), 180)])
    p1 = sbatch(cluster, "-N", "2", seconds=60)
    s = start_epochs(cluster, [j1, j2])
    rows, _, _, _ = forecast(cluster, tmp_path, "-d", "conservative", "-o", "placement=contiguous",
                             "--what-if", "easy")
    assert abs(float(rows[p1]["conservative_start"]) - (s[j2] + 120)) < 0.01, rows
    assert abs(float(rows[p1]["easy_start"]) - (s[j1] + 60)) < 0.01, rows


def test_held_jobs_are_listed_apart_and_a_job_wider_than_the_usable_nodes_never_starts(cluster, tmp_path):
    subprocess.run(["scontrol", "update", "nodename=n4", "state=drain", "reason=test"], env=cluster.env, check=True)
    try:
        held = subprocess.run(["sbatch", "--parsable", "--hold", "-o", "/dev/null", "-t", "1", "--wrap", "sleep 60"],
                              env=cluster.env, capture_output=True, text=True, check=True).stdout.strip()
        wide = sbatch(cluster, "-N", "4", seconds=60)
        rows, _, _, stdout = forecast(cluster, tmp_path)
        assert rows[wide]["easy_start_date"] == "never" and held not in rows
        assert f"held (not forecast: they start only once released): {held}" in stdout
        assert "4 nodes (1 unavailable: n4)" in stdout
    finally:
        subprocess.run(["scontrol", "update", "nodename=n4", "state=resume"], env=cluster.env, check=True)
