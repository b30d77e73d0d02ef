"""A real Slurm (Debian's slurm-wlm: slurmctld and four slurmd on localhost, munge) driven by a
protocol decider through `joulesim slurm`, against what joulesim simulates for the same jobs."""

from __future__ import annotations

import csv
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import sigint_as_at_a_terminal
from marked_processes import MARK_VARIABLE, live_marked_processes, new_mark

import joulesim
from joulesim.adapters.slurm.local_cluster import LocalSlurm, slurm_available
from joulesim.protocol.interval_set import expand_runs, parse_runs

TESTS = Path(__file__).resolve().parent

REASON = slurm_available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no local Slurm: {REASON}")


RECORDING_DECIDER = """
import json, os, signal
from marked_processes import MARK_VARIABLE, live_marked_processes
from joulesim.protocol.decider import Decider

class Recording(Decider):
    '''Writes down the processes of the run (while the local Slurm is up), then ends as
    ENDING says: normally, on an error (a node that does not exist), or on a Ctrl-C.'''

    def on_job_submitted(self, job):
        with open(os.environ["RECORD"], "w") as out:
            json.dump(live_marked_processes(os.environ[MARK_VARIABLE]), out)
        ending = os.environ["ENDING"]
        if ending == "interrupt":  # as a terminal's Ctrl-C does: SIGINT to the foreground process group,
            # the run's (the decider has a group of its own, which a terminal's Ctrl-C does not reach)
            os.killpg(os.getpgid(os.getppid()), signal.SIGINT)
        self.execute_job(job.id, "7" if ending == "error" else "0")
"""


@pytest.mark.parametrize("ending, status, message", [("normal", 0, "1 completed on Slurm"),
                                                     ("error", 8, "names resource 7"),
                                                     ("interrupt", 130, "joulesim: interrupted")])
def test_local_nodes_stops_every_process_it_started(tmp_path, ending, status, message):
    """munged, slurmctld, the slurmd, the decider: none alive once `joulesim slurm --local-nodes`
    has ended, whether normally, on an error or on Ctrl-C. The normal run's job lasts 6 s, past the
    5 s after which progress would show, and --no-progress keeps the log clean."""
    workload = {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 60, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 6}}}
    (tmp_path / "w.json").write_text(json.dumps(workload))
    (tmp_path / "recording.py").write_text(RECORDING_DECIDER)
    mark = new_mark()
    env = {**os.environ, MARK_VARIABLE: mark, "RECORD": str(tmp_path / "record.json"), "ENDING": ending,
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS)])}
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "--local-nodes", "1", "--no-progress",
                             "-w", str(tmp_path / "w.json"), "-d", "recording:Recording", "-e", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env,
                            start_new_session=True,  # its own process group, for the decider's Ctrl-C
                            preexec_fn=sigint_as_at_a_terminal)
    assert result.returncode == status, result.stderr
    assert message in result.stdout + result.stderr and "Traceback" not in result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("slurm:")]  # --no-progress
    during = json.loads((tmp_path / "record.json").read_text())
    assert {"munged", "slurmctld", "slurmd"} <= set(during.values()), during
    assert live_marked_processes(mark) == {}


def test_a_local_slurm_stops_what_it_started_and_the_jobs_running_on_it(tmp_path, monkeypatch):
    """What the test fixtures use: after the `with`, no daemon it started and no process of a job
    that was running on it is alive."""
    mark = new_mark()
    monkeypatch.setenv(MARK_VARIABLE, mark)  # LocalSlurm and the jobs' environment inherit it
    with LocalSlurm(tmp_path / "slurm", nodes=2) as local:
        subprocess.run(["sbatch", "--parsable", "-n", "1", "-o", "/dev/null", "--wrap", "sleep 300"], env=local.env,
                       check=True, capture_output=True)
        deadline = time.monotonic() + 30
        while "sleep" not in (running := live_marked_processes(mark)).values() and time.monotonic() < deadline:
            time.sleep(0.1)  # polling the job's start, bounded by the deadline
        assert set(local.pids) <= set(running)
        assert {"munged", "slurmctld", "slurmd", "slurmstepd", "sleep"} <= set(running.values()), running
    assert live_marked_processes(mark) == {}


@pytest.fixture(scope="module")
def cluster(local_slurm):
    return local_slurm  # (conftest.py: shared with the forecast's tests)


def run_on_slurm(cluster, workload: dict, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "-w", str(path), "--slurm-conf",
                           cluster.conf, "-e", str(tmp_path / "real" / "out"), *extra],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def held_or_pending(cluster) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-t", "PENDING,RUNNING", "-o", "%i"], env=cluster.env,
                         capture_output=True, text=True)
    return out.stdout.split()


def eight_jobs() -> dict:
    """8 jobs of 1-4 nodes, all submitted in the first 0.8 s (their queue order is fixed),
    lasting 4-10 s, walltimes 2-30 s above. Seed 1776: in simulation no two jobs end less than
    4 s apart, so the ~1-2 s a real Slurm takes to start a released job cannot reorder the
    completions the decider reacts to (checked below), and EASY backfills jobs 3 and 7 (42 s of
    simulated time; the dozen jobs of 5-17 s used before took 85 s for the same checks)."""
    rng = random.Random(1776)
    jobs, profiles = [], {}
    for i in range(8):
        run = rng.choice([4, 6, 8, 10])
        jobs.append({"id": i, "subtime": round(0.1 * i, 1), "res": rng.choice([1, 1, 2, 3, 4]),
                     "walltime": run + rng.choice([2, 10, 30]), "profile": f"d{run}"})
        profiles[f"d{run}"] = {"type": "delay", "delay": run}
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


def test_easy_drives_slurm_as_it_drives_the_simulation(cluster, tmp_path):
    workload = eight_jobs()
    result = run_on_slurm(cluster, workload, tmp_path, "-d", "easy")
    assert result.returncode == 0, result.stderr
    # Progress is on by default: in a log (stderr is a pipe here), a line every 5 s, jobs ended of 8.
    progress = [line for line in result.stderr.splitlines() if line.startswith("slurm:")]
    assert len(progress) >= 2 and all("/8 " in line for line in progress), result.stderr
    # and what runs meanwhile (issue 47: `--local-nodes` sat at 0/4 for a minute)
    assert all(re.search(r"\d+ running, \d+ submitted and waiting", line) for line in progress), result.stderr
    with open(tmp_path / "real" / "out_slurm_jobs.csv") as f:
        real = {row["job_id"]: row for row in csv.DictReader(f)}
    simulated = joulesim.simulate("cluster32", workload, "easy", mmax=4).jobs
    simulated = simulated.assign(job_id=simulated["job_id"].astype(str)).set_index("job_id")
    ends = sorted(simulated["finish_time"].astype(float))
    assert min(b - a for a, b in zip(ends, ends[1:])) >= 4  # what makes the comparison meaningful
    starts = simulated["starting_time"].astype(float)
    assert sum(starts[str(j)] < starts[str(k)] for j in range(8) for k in range(j)) >= 2  # EASY backfills
    assert all(row["state"] == "COMPLETED_SUCCESSFULLY" for row in real.values())
    # The same nodes for every job: the decider's choice, and where Slurm really ran it.
    for job_id, row in real.items():
        assert row["allocated_resources"] == simulated.loc[job_id, "allocated_resources"]
        ids = expand_runs(parse_runs(row["allocated_resources"]))
        assert set(row["slurm_nodes"].split(",")) == {f"n{i + 1}" for i in ids}
    # The same start order. Real starts lag the simulated ones: sbatch takes ~0.3 s a job, a
    # released job ~1-2 s to run, and lags add up along a chain of jobs.
    real_order = sorted(real, key=lambda j: (float(real[j]["starting_time"]), int(j)))
    simulated_order = sorted(simulated.index, key=lambda j: (float(simulated.loc[j, "starting_time"]), int(j)))
    assert real_order == simulated_order
    for job_id, row in real.items():
        lag = float(row["starting_time"]) - float(simulated.loc[job_id, "starting_time"])
        assert -0.5 < lag < 15, (job_id, lag)
    assert held_or_pending(cluster) == []


def test_a_job_larger_than_the_cluster_is_refused_before_anything_is_submitted(cluster, tmp_path):
    before = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], env=cluster.env, capture_output=True,
                            text=True).stdout.split()
    workload = {"nb_res": 5, "jobs": [{"id": 1, "subtime": 0, "res": 5, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 1}}}
    result = run_on_slurm(cluster, workload, tmp_path)
    assert result.returncode != 0
    assert "job 1 needs 5 nodes; the cluster has 4 (n1, n2, n3, n4)" in result.stderr
    after = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], env=cluster.env, capture_output=True,
                           text=True).stdout.split()
    assert after == before


def all_jobs(cluster) -> list[str]:
    return subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], env=cluster.env, capture_output=True,
                          text=True).stdout.split()


@pytest.mark.parametrize("extra, message", [
    (["-d", "eazy"], "unknown decider 'eazy' (did you mean 'easy'?)"),
    (["-d", "easy", "--option", "tidle=60"], "did you mean 't_idle'?"),
])
def test_a_mistyped_decider_stops_before_slurm_sees_a_job(cluster, tmp_path, extra, message):
    before = all_jobs(cluster)
    result = run_on_slurm(cluster, eight_jobs(), tmp_path, *extra)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert all_jobs(cluster) == before


def test_an_unwritable_export_prefix_stops_before_slurm_sees_a_job(cluster, tmp_path):
    (tmp_path / "file").write_text("")
    before = all_jobs(cluster)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(eight_jobs()))
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "-w", str(workload), "--slurm-conf",
                             cluster.conf, "-e", str(tmp_path / "file" / "out")],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and "is not a directory" in result.stderr, result.stderr
    assert all_jobs(cluster) == before


def test_a_decider_that_fails_leaves_no_held_job_behind(cluster, tmp_path):
    workload = {"nb_res": 4, "jobs": [{"id": i, "subtime": 0, "res": 1, "profile": "p"} for i in range(3)],
                "profiles": {"p": {"type": "delay", "delay": 30}}}
    (tmp_path / "bad_decider.py").write_text(
        "from joulesim.protocol.decider import Decider\n"
        "class Bad(Decider):\n"
        "    def on_job_submitted(self, job):\n"
        "        self.execute_job(job.id, '7')  # no such node\n")
    (tmp_path / "w.json").write_text(json.dumps(workload))
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "-w", str(tmp_path / "w.json"),
                             "--slurm-conf", cluster.conf, "-d", "bad_decider:Bad", "-e", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                            cwd=tmp_path, env={**cluster.env, "PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    assert "7" in result.stderr and "Traceback" not in result.stderr
    assert held_or_pending(cluster) == []


def test_an_unreachable_controller_is_a_clear_error(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nSlurmctldPort=16999\nAuthType=auth/munge\n"
                    "NodeName=z1 CPUs=1\nPartitionName=p Nodes=z1 Default=YES\n"
                    "MessageTimeout=2\n")  # the clients give up after 2 s, not 10
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {}}))
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "-w", str(workload), "--slurm-conf",
                             str(conf), "-e", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert "Unable to contact slurm controller" in result.stderr or "did not answer" in result.stderr
    assert "Traceback" not in result.stderr


def test_kill_job_cancels_the_slurm_job_and_answers_job_killed(cluster, tmp_path):
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 60}}}
    (tmp_path / "w.json").write_text(json.dumps(workload))
    (tmp_path / "killer.py").write_text(
        "from joulesim.protocol.decider import Decider\n"
        "class Killer(Decider):\n"
        "    def on_job_submitted(self, job):\n"
        "        self.execute_job(job.id, '0-1')\n"
        "        self.call_me_later(self.now + 3)\n"
        "    def on_requested_call(self):\n"
        "        self.kill_jobs(['w0!1'])\n"
        "    def on_job_completed(self, job, state, return_code, alloc):\n"
        "        assert (job.id, state, return_code) == ('w0!1', 'COMPLETED_KILLED', -1), (state, return_code)\n"
        "        self.told_completed = True\n"
        "    def on_job_killed(self, job_ids, progress):\n"
        "        assert getattr(self, 'told_completed', False), 'JOB_COMPLETED comes first, as in Batsim 4.2.1'\n"
        "        assert job_ids == ['w0!1'] and 0 < progress['w0!1']['progress'] < 1, progress\n")
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "slurm", "-w", str(tmp_path / "w.json"),
                             "--slurm-conf", cluster.conf, "-d", "killer:Killer", "-e", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                            cwd=tmp_path, env={**cluster.env, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "out_slurm_jobs.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["state"] == "COMPLETED_KILLED" and float(row["finish_time"]) < 30
    assert held_or_pending(cluster) == []
