"""Outgrowing one machine: the documentation's script (docs/guide/campaigns.md) runs a campaign on Dask workers started as Slurm
jobs by dask-jobqueue's SLURMCluster; on a real Slurm started on this machine it gives the local
pool's results, instance for instance, and leaves nothing it started running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from marked_processes import MARK_VARIABLE, live_marked_processes, new_mark
from test_campaign import RUNS
from test_docs_examples import python_blocks

from joulesim.adapters.slurm.local_cluster import LocalSlurm, slurm_available

REASON = slurm_available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no local Slurm: {REASON}")

WORKLOAD = {"nb_res": 4,
            "jobs": [{"id": str(i), "subtime": 10 * i, "res": 1 + i % 4, "walltime": 400, "profile": f"p{i % 3}"}
                     for i in range(10)],
            "profiles": {f"p{k}": {"type": "delay", "delay": 60 * (k + 1)} for k in range(3)}}

# Two deciders, a grid, energy on (shutdown needs it, as in Batsim)
STUDY = RUNS.replace('name = "basic"', 'name = "on-slurm"')


# The documented SLURMCluster settings, and what this machine needs instead: two one-CPU jobs, loopback
# only ("lo"), no dashboards, no --mem (the fake nodes declare no memory: Slurm would keep a job
# asking for some pending), the workers' logs in the test's folder.
README_SETTINGS = 'SLURMCluster(cores=32, processes=32, memory="64GB", walltime="04:00:00")'
LOCAL_SETTINGS = ('SLURMCluster(cores=1, processes=1, memory="1GB", walltime="00:10:00", interface="lo", '
                  'python=sys.executable, scheduler_options={{"dashboard": False}}, '
                  'worker_extra_args=["--no-dashboard"], job_directives_skip=["--mem"], log_directory={logs!r})')


def campaign_run(study: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "campaign", "run", str(study), "--out", str(out),
                             *options], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def slurm_jobs(cluster: LocalSlurm) -> list[tuple[str, ...]]:
    """(name, nodes) of every job the cluster knows, ended ones included."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j %N"], env=cluster.env, capture_output=True,
                         text=True, check=True)
    return sorted(tuple(line.split()) for line in out.stdout.splitlines())


def test_the_readme_s_slurmcluster_script_runs_a_campaign_equal_to_the_local_pool(tmp_path):
    # No skip without them: the test extra installs both, as the hpc extra does for users.
    import dask_jobqueue  # noqa: F401
    import distributed  # noqa: F401

    script = python_blocks("guide/campaigns.md")["campaign_on_slurm.py"]
    assert README_SETTINGS in script and "cluster.scale(jobs=8)" in script
    script = script.replace(README_SETTINGS, LOCAL_SETTINGS.format(logs=str(tmp_path / "worker_logs")))
    (tmp_path / "campaign_on_slurm.py").write_text(script.replace("cluster.scale(jobs=8)", "cluster.scale(jobs=2)"))
    (tmp_path / "jobs.json").write_text(json.dumps(WORKLOAD))
    (tmp_path / "study.toml").write_text(STUDY)
    campaign_run(tmp_path / "study.toml", tmp_path / "pool", "--workers", "2")

    mark = new_mark()  # everything the script starts inherits it: workers, job steps, the daemons
    with LocalSlurm(tmp_path / "slurm", nodes=2) as slurm:
        env = {**slurm.env, MARK_VARIABLE: mark, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                                          os.environ["PATH"]])}
        script_run = subprocess.run([sys.executable, "campaign_on_slurm.py", "study.toml"], cwd=tmp_path, env=env,
                                    capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert script_run.returncode == 0, script_run.stdout + script_run.stderr
        assert "3 run now" in script_run.stdout and "0 failed" in script_run.stdout
        # The workers were two Slurm jobs, one on each fake node.
        assert slurm_jobs(slurm) == [("dask-worker", "n1"), ("dask-worker", "n2")]
    pool = pd.read_csv(tmp_path / "pool" / "results.csv").drop(columns="wall_time")
    on_slurm = pd.read_csv(tmp_path / "on-slurm_results" / "results.csv").drop(columns="wall_time")
    pd.testing.assert_frame_equal(pool, on_slurm)
    # Nothing started here is left: no worker, no job step, no Slurm daemon, no munged.
    assert live_marked_processes(mark) == {}
