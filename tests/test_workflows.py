"""Batsim's workflows: -W (DAX files from t=0), --WS (from a start time), --workflow-jobs-limit,
--ignore-beyond-last-workflow. A task becomes job wfN!k (k in submission order) when its parents
have completed: res = num_procs, walltime = runtime + 10 s, a delay profile of its runtime
(Batsim 4.2.1, job_submitter.cpp). Times by hand on a diamond A -> (B, C) -> D."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim
from joulesim.protocol.errors import JoulesimError

from conftest import read_csv, write_workload

DIAMOND = """<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="diamond">
  <job id="ID00000" namespace="d" name="preprocess" runtime="10"><uses file="f.a" link="input"/></job>
  <job id="ID00001" namespace="d" name="findrange" runtime="20" num_procs="2"/>
  <job id="ID00002" namespace="d" name="findrange" runtime="5"/>
  <job id="ID00003" namespace="d" name="analyze" runtime="7" num_procs="0"/>
  <child ref="ID00001"><parent ref="ID00000"/></child>
  <child ref="ID00002"><parent ref="ID00000"/></child>
  <child ref="ID00003"><parent ref="ID00001"/><parent ref="ID00002"/></child>
</adag>
"""


def dax(tmp_path, text: str = DIAMOND, name: str = "diamond.dax") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def times(result) -> dict[str, tuple[float, float]]:
    jobs = result.jobs
    return {f"{w}!{j}": (s, f) for w, j, s, f in zip(jobs["workload_name"], jobs["job_id"], jobs["starting_time"], jobs["finish_time"])}


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_a_diamond_runs_each_task_once_its_parents_completed(tmp_path, grouping):
    result = joulesim.simulate("small4", [], "fcfs", workflows=[dax(tmp_path)], event_grouping=grouping)
    got = times(result)
    expected = {"wf0!0": (0, 10), "wf0!1": (10, 30), "wf0!2": (10, 15), "wf0!3": (30, 37)}
    assert set(got) == set(expected)
    for job, (start, finish) in expected.items():  # Batsim's actors add message times (us)
        assert got[job][0] == pytest.approx(start, abs=1e-3) and got[job][1] == pytest.approx(finish, abs=1e-3), job
    jobs = result.jobs.set_index(result.jobs["workload_name"] + "!" + result.jobs["job_id"].astype(str))
    assert jobs.loc["wf0!1", "requested_number_of_resources"] == 2 and jobs.loc["wf0!3", "requested_number_of_resources"] == 1
    assert jobs.loc["wf0!1", "requested_time"] == 30 and jobs.loc["wf0!1", "profile"] == "wf0_ID00001"


def test_what_the_decider_sees(tmp_path):
    decider = ScriptedDecider(lambda d, m: [d.execute_job(j["job_id"], "0-1" if j["job"]["res"] == 2 else "2")
                                           for j in submitted(m)])
    joulesim.simulate("small4", [], decider, workflows=[dax(tmp_path)], event_grouping="per-time",
                      forward_profiles_on_submission=True)
    begins = decider.events_of("SIMULATION_BEGINS")[0][1]["data"]
    assert begins["workloads"] == {"wf0": dax(tmp_path)} and begins["profiles"] == {"wf0": {}}
    first = decider.events_of("JOB_SUBMITTED")[0][1]["data"]
    assert first["job"] == {"id": "wf0!0", "subtime": 0, "walltime": 20.0, "res": 1, "profile": "wf0_ID00000"}
    assert first["profile"] == {"type": "delay", "delay": 10.0}
    assert [t for t, _ in decider.events_of("JOB_SUBMITTED")] == [0, 10, 10, 30]
    assert ("NOTIFY", "no_more_static_job_to_submit") in [(e["type"], e["data"].get("type")) for _, e in
                                                           decider.events_of("NOTIFY")]


def test_a_workflow_start_time_and_a_jobs_limit(tmp_path):
    result = joulesim.simulate("small4", [], "fcfs", workflow_starts=[(dax(tmp_path), 100)], workflow_jobs_limit=1,
                               event_grouping="per-time")
    # One job in flight at a time: A, then B (C waits for B's end), then C, then D.
    assert times(result) == {"wfc0!0": (100, 110), "wfc0!1": (110, 130), "wfc0!2": (130, 135), "wfc0!3": (135, 142)}


def test_ignore_beyond_last_workflow_drops_later_jobs(tmp_path):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 5, "res": 1, "profile": "d"},
                                         {"id": 2, "subtime": 500, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}})
    kept = joulesim.simulate("small4", workload, "fcfs", workflows=[dax(tmp_path)], event_grouping="per-time")
    assert {"w0!1", "w0!2"} <= set(times(kept))
    dropped = joulesim.simulate("small4", workload, "fcfs", workflows=[dax(tmp_path)], event_grouping="per-time",
                                ignore_beyond_last_workflow=True)
    assert "w0!1" in times(dropped) and "w0!2" not in times(dropped)  # submitted after the workflow ended at 37


def test_a_rejected_task_counts_as_ended_for_its_children(tmp_path):
    """Batsim calls a workflow back on completions only, so rejecting a task would leave it
    waiting forever; joulesim lets its children go on."""
    def script(decider, message):
        for job in submitted(message):
            if job["job_id"] == "wf0!1":
                decider.reject_job(job["job_id"])
            else:
                decider.execute_job(job["job_id"], "0")
    for grouping in ("batsim", "per-time"):
        got = times(joulesim.simulate("small4", [], ScriptedDecider(script), workflows=[dax(tmp_path)], event_grouping=grouping))
        assert got["wf0!3"][0] == pytest.approx(15, abs=1e-3), grouping


@pytest.mark.parametrize("text, message", [
    ("<adag><job id='a' runtime='x'/></adag>", "<job id='a'>, runtime: invalid value 'x'"),
    ("<adag><job id='a' runtime='-1'/></adag>", "invalid value '-1'"),
    ("<adag><job id='a'/></adag>", "<job id='a'>, runtime: is missing"),
    ("<adag><job runtime='1'/></adag>", "<job>: has no id"),
    ("<adag><job id='a' runtime='1'/><job id='a' runtime='2'/></adag>", "used by an earlier <job>"),
    ("<adag><job id='a' runtime='1'/><child ref='b'><parent ref='a'/></child></adag>", "<child ref='b'>: names no <job>"),
    ("<adag><job id='a' runtime='1'/><child ref='a'><parent ref='z'/></child></adag>", "<parent ref='z'>: names no <job>"),
    ("<adag><job id='a' runtime='1'/><job id='b' runtime='1'/><child ref='a'><parent ref='b'/></child>"
     "<child ref='b'><parent ref='a'/></child></adag>", "cycle through job(s) a, b"),
    ("<dag/>", "the root element must be <adag>"),
    ("<adag><job id='a'", "malformed XML"),
])
def test_bad_dax_files_are_refused_before_the_run(tmp_path, text, message):
    path = dax(tmp_path, text, "bad.dax")
    with pytest.raises(JoulesimError, match=message.replace("(", r"\(").replace(")", r"\)")) as raised:
        joulesim.simulate("small4", [], "fcfs", workflows=[path], export=str(tmp_path / "out"))
    assert path in str(raised.value)
    assert not (tmp_path / "out_jobs.csv").exists()


def test_workflows_on_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "small4", "-d", "fcfs",
                           "-w", write_workload(tmp_path, [], {}), "-W", dax(tmp_path), "--WS", dax(tmp_path), "50",
                           "--workflow-jobs-limit", "2", "-e", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = read_csv(str(tmp_path / "out_jobs.csv"))
    assert sorted((r["workload_name"], r["job_id"]) for r in rows) == [(w, str(i)) for w in ("wf0", "wfc0") for i in range(4)]
    assert min(float(r["starting_time"]) for r in rows if r["workload_name"] == "wfc0") == 50
    bad = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "small4", "-d", "fcfs",
                          "--WS", dax(tmp_path), "soon", "-e", str(tmp_path / "bad")], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "the start time is not a number of seconds" in bad.stderr and "Traceback" not in bad.stderr


def test_typed_options_give_what_the_same_keywords_give(tmp_path):
    """joulesim.Workflows and joulesim.BatsimFlags are simulate's keywords grouped (issue 47)."""
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 5, "res": 1, "profile": "d"},
                                         {"id": 2, "subtime": 500, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}})
    flat = joulesim.simulate("small4", workload, "fcfs", workflows=[dax(tmp_path)], event_grouping="per-time",
                             ignore_beyond_last_workflow=True)
    typed = joulesim.simulate("small4", workload, "fcfs", batsim=joulesim.BatsimFlags(event_grouping="per-time"),
                              workflow=joulesim.Workflows(files=[dax(tmp_path)], ignore_beyond_last=True))
    assert times(typed) == times(flat) and "w0!2" not in times(typed) and "wf0!1" in str(times(typed))
