"""`joulesim.simulate`: the Python API, against exact schedules and against the CLI's files."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import JoulesimError, RunTimeLimitError

TWO_HOSTS = {"hosts": [{"name": "h0", "speed": "1Gf"}, {"name": "h1", "speed": "1Gf"}],
             "master": {"name": "master"}}


def two_jobs(delay_a: float = 10, delay_b: float = 5) -> dict:
    """Job a takes both hosts for delay_a; job b (one host) must wait for it under FCFS."""
    return {"nb_res": 2,
            "jobs": [{"id": "a", "subtime": 0, "res": 2, "profile": "pa"},
                     {"id": "b", "subtime": 1, "res": 1, "profile": "pb"}],
            "profiles": {"pa": {"type": "delay", "delay": delay_a}, "pb": {"type": "delay", "delay": delay_b}}}


def test_dict_inputs_give_the_exact_schedule_and_write_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = joulesim.simulate(TWO_HOSTS, two_jobs(10, 5), "fcfs")
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["a", "starting_time"] == 0 and jobs.loc["a", "finish_time"] == 10
    assert jobs.loc["b", "starting_time"] == 10 and jobs.loc["b", "finish_time"] == 15
    assert jobs.loc["b", "waiting_time"] == 9
    assert result.metrics["makespan"] == 15
    assert result.metrics["mean_waiting_time"] == 4.5
    assert result.schedule["nb_jobs"] == 2
    assert result.outputs == [] and os.listdir(tmp_path) == []
    assert result.consumed_energy is None and result.pstate_changes is None
    assert "2 jobs, makespan 15 s" in repr(result)


def test_in_memory_frames_equal_the_files_of_the_same_run_on_the_cli(tmp_path):
    result = joulesim.simulate("cluster32", "default", "easy", energy=False)
    prefix = tmp_path / "cli"
    subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-p", "cluster32",
                    "-w", "default", "-d", "easy", "-e", str(prefix)], check=True, capture_output=True)
    from_file = pd.read_csv(f"{prefix}_jobs.csv", dtype={"job_id": str, "allocated_resources": str,
                                                         "profile": str, "workload_name": str,
                                                         "final_state": str, "metadata": str},
                            keep_default_na=False, na_values=[""])
    # the same rows, the file's in the order jobs ended (Batsim's), the frame's as submitted
    assert from_file["submission_time"].is_monotonic_increasing is False
    from_file["job_id"] = from_file["job_id"].astype("int64")
    expected = from_file.sort_values(["submission_time", "job_id"], ignore_index=True)
    pd.testing.assert_frame_equal(result.jobs, expected)
    states = pd.read_csv(f"{prefix}_machine_states.csv")
    pd.testing.assert_frame_equal(result.machine_states, states)


def test_export_writes_the_batsim_files_and_energy_frames(tmp_path):
    result = joulesim.simulate("energy2", "tiny", "easy", energy=True, export=tmp_path / "run" / "out")
    names = sorted(os.path.basename(p) for p in result.outputs)
    assert names == ["out_consumed_energy.csv", "out_jobs.csv", "out_machine_states.csv",
                     "out_pstate_changes.csv", "out_schedule.csv", "out_schedule.trace"]
    assert all(os.path.exists(p) for p in result.outputs)
    assert result.energy_enabled and result.consumed_energy is not None
    # The last energy row is the total the schedule reports.
    assert result.consumed_energy["energy"].iloc[-1] == pytest.approx(result.schedule["consumed_joules"])
    assert result.metrics["consumed_joules"] == pytest.approx(result.schedule["consumed_joules"])


class FirstHostsFirst(Decider):
    """A user's decider: starts each job at once on the lowest free hosts, in order (FCFS)."""

    def __init__(self, options=None):
        super().__init__(options)
        self.queue: list = []
        self.running: dict[str, set[int]] = {}
        self.seen = 0

    def on_job_submitted(self, job):
        self.seen += 1
        self.queue.append(job)

    def on_job_completed(self, job, state, return_code, alloc):
        self.running.pop(job.id)

    def decide(self):
        busy = set().union(*self.running.values())
        while self.queue and len(busy) + self.queue[0].res <= self.nb_resources:
            job = self.queue.pop(0)
            hosts = [h for h in range(self.nb_resources) if h not in busy][: job.res]
            busy.update(hosts)
            self.running[job.id] = set(hosts)
            self.execute_job(job.id, hosts)


def test_a_decider_instance_or_class_runs_in_process():
    instance = FirstHostsFirst()
    result = joulesim.simulate(TWO_HOSTS, two_jobs(), instance)
    assert instance.seen == 2
    assert list(result.jobs.sort_values("job_id")["finish_time"]) == [10, 15]
    by_class = joulesim.simulate(TWO_HOSTS, two_jobs(), FirstHostsFirst)
    assert list(by_class.jobs.sort_values("job_id")["finish_time"]) == [10, 15]
    with pytest.raises(JoulesimError, match="already built with its options"):
        joulesim.simulate(TWO_HOSTS, two_jobs(), FirstHostsFirst(), options={"x": 1})


def test_options_are_passed_as_text_and_checked():
    plain = joulesim.simulate("energy2", "tiny", "easy", energy=True)
    shutdown = joulesim.simulate("energy2", "tiny", "easy", energy=True, options={"t_idle": 0})
    assert shutdown.metrics["nb_machine_switches"] and not plain.metrics["nb_machine_switches"]
    with pytest.raises(JoulesimError, match="does not accept option"):
        joulesim.simulate("energy2", "tiny", "easy", options={"no_such_option": 1})


def test_decider_in_its_own_process_and_as_a_command_line(tmp_path):
    reference = joulesim.simulate("cluster32", "tiny", "easy")
    own = joulesim.simulate("cluster32", "tiny", "easy", in_process=False)
    log = open(tmp_path / "decider.log", "w")
    command = [sys.executable, "-m", "joulesim.cli.main", "decide", "easy", "-s", "{endpoint}"]
    external = joulesim.simulate("cluster32", "tiny", command, decider_log=log)
    log.close()
    for other in (own, external):
        pd.testing.assert_frame_equal(reference.jobs, other.jobs)
    assert reference.decider_calls == external.decider_calls


def test_a_command_line_without_the_endpoint_placeholder_is_refused():
    with pytest.raises(InputError, match=r"no \{endpoint\} placeholder"):
        joulesim.simulate("cluster32", "tiny", ["batsched", "-v", "easy_bf"])


def test_a_program_that_does_not_exist_is_a_clear_error():
    with pytest.raises(JoulesimError, match="cannot start the decider"):
        joulesim.simulate("cluster32", "tiny", ["/nonexistent/decider", "-s", "{endpoint}"])


def test_bad_objects_are_named_in_the_error():
    with pytest.raises(InputError, match=r"<workload dict w0>: jobs\[0\]"):
        joulesim.simulate(TWO_HOSTS, {"jobs": [{"id": 1}], "profiles": {}}, "fcfs")
    with pytest.raises(InputError, match="<platform dict>"):
        joulesim.simulate({"hosts": "nope"}, "tiny", "fcfs")
    with pytest.raises(InputError, match="cannot be written as JSON"):
        joulesim.simulate(TWO_HOSTS, {"jobs": [], "profiles": {1: {}}}, "fcfs")
    with pytest.raises(InputError, match="is a int"):
        joulesim.simulate(TWO_HOSTS, 3, "fcfs")
    with pytest.raises(JoulesimError, match="unknown decider"):
        joulesim.simulate(TWO_HOSTS, two_jobs(), "no_such_decider")
    with pytest.raises(JoulesimError, match="not both"):
        joulesim.simulate(TWO_HOSTS, two_jobs(), "easy", socket_endpoint="ipc:///tmp/x")


def test_events_as_a_list_of_dicts():
    events = [{"timestamp": 0, "type": "machine_unavailable", "resources": "1"}]
    result = joulesim.simulate(TWO_HOSTS, {"jobs": [{"id": "j", "subtime": 0, "res": 1, "profile": "p"},
                                                    {"id": "k", "subtime": 0, "res": 1, "profile": "p"}],
                                           "profiles": {"p": {"type": "delay", "delay": 7}}},
                               "fcfs", events=events)
    # Host 1 is unavailable from t=0: the two one-host jobs run one after the other on host 0.
    assert sorted(result.jobs["finish_time"]) == [7, 14]
    with pytest.raises(InputError, match=r"<events list>: line 1: field 'type'"):
        joulesim.simulate(TWO_HOSTS, two_jobs(), "fcfs", events=[{"timestamp": 0, "type": "x", "resources": "0"}])


def test_time_limit_stops_the_run_with_a_clear_error():
    with pytest.raises(RunTimeLimitError, match="time limit of 1e-09 s"):
        joulesim.simulate("cluster32", "default", "easy", time_limit=1e-9)


def test_several_workloads_are_w0_w1():
    result = joulesim.simulate(TWO_HOSTS, [two_jobs(), two_jobs()], "fcfs")
    assert sorted(set(result.jobs["workload_name"])) == ["w0", "w1"]
    assert len(result.jobs) == 4


# ---------------------------------------------------------------- issue 23: outputs never lost or mixed

class StopsAtCall(Decider):
    """Rejects every job; at its call `at` raises `error` (a decider failing mid-run, or Ctrl-C)."""

    at = 3
    error: BaseException = JoulesimError("the decider gave up")

    def __init__(self, options=None):
        super().__init__(options)
        self.calls = 0

    def handle(self, message):
        self.calls += 1
        if self.calls == self.at:
            raise self.error
        return super().handle(message)

    def on_job_submitted(self, job):
        self.reject_job(job.id)


def output_names(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_a_run_never_leaves_an_older_runs_files_beside_its_own(tmp_path):
    prefix = tmp_path / "out"
    joulesim.simulate("energy2", "tiny", "easy", energy=True, export=prefix)
    assert len(output_names(tmp_path)) == 6
    with pytest.raises(JoulesimError, match="outputs written so far are kept: .*out_jobs.csv"):
        joulesim.simulate("energy2", "tiny", StopsAtCall, export=prefix)
    # The older run's schedule and energy files are gone: what is left is the failed run's own.
    assert output_names(tmp_path) == ["out_jobs.csv", "out_machine_states.csv", "out_schedule.trace"]


def test_ctrl_c_raises_a_keyboard_interrupt_naming_the_outputs_kept(tmp_path):
    from joulesim.run_interrupted import RunInterrupted

    class Interrupted(StopsAtCall):
        error = KeyboardInterrupt()

    prefix = tmp_path / "out"
    with pytest.raises(RunInterrupted) as caught:
        joulesim.simulate("energy2", "tiny", Interrupted, export=prefix)
    kept = [f"{prefix}_jobs.csv", f"{prefix}_machine_states.csv", f"{prefix}_schedule.trace"]
    assert caught.value.outputs == kept
    assert str(caught.value) == f"interrupted; outputs so far kept in {', '.join(kept)}"
    assert isinstance(caught.value, KeyboardInterrupt)


def test_outputs_and_the_decider_are_checked_before_anything_is_written(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(InputError, match=f"cannot write outputs there: {tmp_path / 'a_file'} is not a directory"):
        joulesim.simulate("energy2", "tiny", "easy", export=tmp_path / "a_file" / "out")
    prefix = tmp_path / "out"
    joulesim.simulate("energy2", "tiny", "fcfs", export=prefix)
    before = {name: (tmp_path / name).read_bytes() for name in output_names(tmp_path)}
    for in_process in (True, False):
        with pytest.raises(JoulesimError, match=r"decider 'easy' does not accept option\(s\) tidle .*"
                                                r"\(did you mean 't_idle'\?\)") as caught:
            joulesim.simulate("energy2", "tiny", "easy", options={"tidle": 60}, export=prefix, in_process=in_process)
        assert caught.value.exit_code == 2
        assert {name: (tmp_path / name).read_bytes() for name in output_names(tmp_path)} == before


def test_time_limit_counts_the_loading_of_the_inputs(monkeypatch):
    # (issue 47: time_limit=3 fired after 8.4 s, the loading not counted) A fake clock: loading
    # the inputs "takes" 10 s of it; a 5 s limit then stops the run at its first decider call.
    from joulesim import run_simulation
    from joulesim.protocol.errors import RunTimeLimitError
    from joulesim.simulator.engine import decider_link

    clock = [1000.0]
    monkeypatch.setattr(decider_link, "perf_counter", lambda: clock[0])
    loading = run_simulation.simulation_config

    def slow_loading(*args, **kwargs):
        clock[0] += 10.0
        return loading(*args, **kwargs)
    monkeypatch.setattr(run_simulation, "simulation_config", slow_loading)
    with pytest.raises(RunTimeLimitError, match="time limit of 5 s"):
        joulesim.simulate("cluster32", "tiny", "easy", time_limit=5)
    assert joulesim.simulate("cluster32", "tiny", "easy", time_limit=15).metrics["nb_jobs"] == 4


def test_jobs_come_in_submission_order_with_integer_ids_when_every_id_is_one():
    # b ends first (FCFS: a takes both hosts until 10, b runs 10-15; c, submitted at 0, waits)
    workload = {"nb_res": 2, "jobs": [{"id": 10, "subtime": 1, "res": 1, "profile": "short"},
                                      {"id": 9, "subtime": 0, "res": 2, "profile": "long"},
                                      {"id": 2, "subtime": 1, "res": 1, "profile": "short"}],
                "profiles": {"long": {"type": "delay", "delay": 10}, "short": {"type": "delay", "delay": 5}}}
    jobs = joulesim.simulate(TWO_HOSTS, workload, "fcfs").jobs
    assert jobs["job_id"].tolist() == [9, 2, 10] and jobs["job_id"].dtype == "int64"  # numerically: 2 < 10
    assert jobs.index.tolist() == [0, 1, 2]
    assert jobs.loc[jobs.job_id == 10, "finish_time"].item() == 15.0
    # ids that are not all plain integers stay text: "007" would not come back from an int
    workload["jobs"][0]["id"] = "007"
    assert joulesim.simulate(TWO_HOSTS, workload, "fcfs").jobs["job_id"].tolist() == ["9", "007", "2"]


def test_typed_options_are_the_keywords_grouped_and_a_setting_given_twice_is_refused():
    flags = joulesim.BatsimFlags(mmax=3, event_grouping="per-time")
    typed = joulesim.simulate("small4", "tiny", "fcfs", batsim=flags)
    flat = joulesim.simulate("small4", "tiny", "fcfs", mmax=3, event_grouping="per-time")
    pd.testing.assert_frame_equal(typed.jobs, flat.jobs)
    assert typed.metrics["nb_machines"] == 3 != joulesim.simulate("small4", "tiny", "fcfs").metrics["nb_machines"]
    # the same value both ways is no conflict; two values are, named
    joulesim.simulate("small4", "tiny", "fcfs", mmax=3, batsim=flags)
    with pytest.raises(JoulesimError, match=r"mmax is given twice, 2 as a keyword and 3 in batsim=: keep one"):
        joulesim.simulate("small4", "tiny", "fcfs", mmax=2, batsim=flags)
    with pytest.raises(JoulesimError, match=r"batsim= takes a joulesim.BatsimFlags, not dict"):
        joulesim.simulate("small4", "tiny", "fcfs", batsim={"mmax": 3})
    with pytest.raises(TypeError, match="mmaxx"):
        joulesim.BatsimFlags(mmaxx=3)
    with pytest.raises(JoulesimError, match="library= .* or socket="):
        joulesim.Batsim5Decider()
    with pytest.raises(JoulesimError, match="EDC"):  # edc= reaches the EDC path: no decider beside it
        joulesim.simulate("small4", "tiny", "fcfs", edc=joulesim.Batsim5Decider(socket="ipc:///nonexistent"))
