"""Batsim 4.2.1's flags --sched-cfg / --sched-cfg-file (a string forwarded to the decider in
SIMULATION_BEGINS, config.sched-config) and --mmax-workload (as many compute hosts as the
workloads' largest nb_res, at most --mmax): on the command line, in separate processes, and in
the Python API (issue 27)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.protocol.decider import Decider

RECORDER = textwrap.dedent('''
    import json, os
    from joulesim.protocol.decider import Decider

    class Recorder(Decider):
        """Writes what SIMULATION_BEGINS said to $RECORD, then runs jobs in order on the lowest hosts."""

        def on_simulation_begins(self, data):
            with open(os.environ["RECORD"], "w") as f:
                json.dump({"config": data["config"], "nb_compute_resources": data["nb_compute_resources"]}, f)
            self.queue, self.used = [], set()

        def on_job_submitted(self, job):
            self.queue.append(job)

        def on_job_completed(self, job, state, return_code, alloc):
            self.used -= set(alloc)

        def decide(self):
            from procset import ProcSet
            while self.queue:
                free = [h for h in range(self.nb_resources) if h not in self.used][: self.queue[0].res]
                if len(free) < self.queue[0].res:
                    break
                job = self.queue.pop(0)
                self.used |= set(free)
                self.execute_job(job.id, ProcSet(*free))
''')


@pytest.fixture()
def recorder(tmp_path):
    (tmp_path / "recorder.py").write_text(RECORDER)
    return tmp_path


def run_cli(folder, *args):
    env = {"PYTHONPATH": str(folder), "RECORD": str(folder / "record.json"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-d", "recorder:Recorder",
                           "-e", str(folder / "out" / "run"), *args], capture_output=True, text=True,
                          timeout=120, cwd=folder, env=env)


def test_sched_cfg_reaches_the_decider_process(recorder):
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", "--sched-cfg", '{"queue": "fcfs", "x": 1}')
    assert done.returncode == 0, done.stderr
    record = json.loads((recorder / "record.json").read_text())
    assert record["config"]["sched-config"] == '{"queue": "fcfs", "x": 1}'
    done = run_cli(recorder, "-p", "small4", "-w", "tiny")
    assert json.loads((recorder / "record.json").read_text())["config"]["sched-config"] == ""


def test_sched_cfg_file_forwards_the_whole_text(recorder):
    text = 'line one\n{"é": [1, 2]}\n\ttabbed\n'
    (recorder / "sched.cfg").write_text(text, encoding="utf-8")
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", "--sched-cfg-file", "sched.cfg")
    assert done.returncode == 0, done.stderr
    assert json.loads((recorder / "record.json").read_text())["config"]["sched-config"] == text


@pytest.mark.parametrize("args, message", [
    (["--sched-cfg", "a", "--sched-cfg-file", "f"], "given together with --sched-cfg"),
    (["--sched-cfg-file", "absent.cfg"], "absent.cfg: file: does not exist"),
])
def test_bad_scheduler_configurations_are_refused_before_the_run(recorder, args, message):
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (recorder / "out").exists() and not (recorder / "record.json").exists()


def test_a_scheduler_configuration_file_that_is_not_utf8_is_named(recorder):
    (recorder / "latin1.cfg").write_bytes("caf\xe9\n".encode("latin-1"))
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", "--sched-cfg-file", "latin1.cfg")
    assert done.returncode == 2 and "latin1.cfg: line 1: is not UTF-8 text" in done.stderr, done.stderr


def test_mmax_workload_limits_the_hosts_to_the_workloads_nb_res(recorder):
    # tiny.json says nb_res 4; cluster32 has 32 compute hosts.
    done = run_cli(recorder, "-p", "cluster32", "-w", "tiny", "--mmax-workload")
    assert done.returncode == 0, done.stderr
    assert json.loads((recorder / "record.json").read_text())["nb_compute_resources"] == 4
    done = run_cli(recorder, "-p", "cluster32", "-w", "tiny", "--mmax-workload", "--mmax", "2",
                   "-w", "tiny")  # nb_res 4, at most --mmax 2: 2 (tiny's jobs of 4 hosts are rejected)
    assert json.loads((recorder / "record.json").read_text())["nb_compute_resources"] == 2


def _workload(nb_res):
    doc = {"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
           "profiles": {"p": {"type": "delay", "delay": 1}}}
    return doc if nb_res is None else {"nb_res": nb_res, **doc}


class FirstHosts(Decider):
    """Runs the n-th submitted job on host n (the jobs here need one host each)."""

    def on_simulation_begins(self, data):
        self.seen, self.started = data, 0

    def on_job_submitted(self, job):
        from procset import ProcSet

        self.execute_job(job.id, ProcSet(self.started))
        self.started += 1


def test_the_api_takes_both_flags():
    decider = FirstHosts()
    joulesim.simulate("cluster32", [_workload(3), _workload(6)], decider, mmax_workload=True,
                      sched_config="from python")
    assert decider.seen["nb_compute_resources"] == 6  # the largest nb_res of the workloads
    assert decider.seen["config"]["sched-config"] == "from python"


@pytest.mark.parametrize("nb_res, message", [
    (None, "field 'nb_res': is missing, and --mmax-workload limits the machines"),
    (64, "field 'nb_res': is 64, more than the 32 compute hosts"),
])
def test_mmax_workload_needs_a_nb_res_the_platform_can_give(nb_res, message):
    with pytest.raises(InputError, match=message):
        joulesim.simulate("cluster32", _workload(nb_res), "fcfs", mmax_workload=True)


def test_dump_execution_context_prints_batsims_json_and_runs_nothing(tmp_path):
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", "-p", "small4", "-w", "tiny",
                           "-s", "ipc:///tmp/joulesim-ctx.sock", "-e", str(tmp_path / "out" / "run"),
                           "--dump-execution-context"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ('{"socket_endpoint":"ipc:///tmp/joulesim-ctx.sock","redis_enabled":false,'
                           '"redis_hostname":"127.0.0.1","redis_port":6379,"redis_prefix":"default",'
                           f'"export_prefix":"{tmp_path / "out" / "run"}","external_scheduler":true}}\n')
    assert not (tmp_path / "out").exists()  # no decider was needed, nothing was written


class Notified(Decider):
    """Records every NOTIFY and the config; runs each job on host 0 when free."""

    def on_simulation_begins(self, data):
        self.config, self.notes = data["config"], []

    def on_no_more_static_job_to_submit(self):
        self.notes.append((self.now, {"type": "no_more_static_job_to_submit"}))

    def on_no_more_external_event_to_occur(self):
        self.notes.append((self.now, {"type": "no_more_external_event_to_occur"}))

    def on_machine_unavailable(self, resources):
        self.notes.append((self.now, {"type": "event_machine_unavailable"}))

    def on_machine_available(self, resources):
        self.notes.append((self.now, {"type": "event_machine_available"}))

    def on_notify(self, notify_type, data):  # the types the library has no callback for
        self.notes.append((self.now, data))

    def on_job_submitted(self, job):
        from procset import ProcSet

        self.execute_job(job.id, ProcSet(0))


EVENTS = [{"timestamp": 5, "type": "machine_unavailable", "resources": "1"},
          {"timestamp": 7, "type": "cooling_alarm", "room": "B", "level": [2, 3]},
          {"timestamp": 9, "type": "machine_available", "resources": "1"}]


def test_unknown_events_are_forwarded_whole_at_their_time():
    decider = Notified()
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 20}}}
    joulesim.simulate("small4", workload, decider, events=EVENTS, forward_unknown_events=True)
    assert decider.config["forward-unknown-events"] is True
    assert (7.0, {"timestamp": 7, "type": "cooling_alarm", "room": "B", "level": [2, 3]}) in decider.notes
    assert [note["type"] for _, note in decider.notes] == [
        "no_more_static_job_to_submit", "event_machine_unavailable", "cooling_alarm", "event_machine_available",
        "no_more_external_event_to_occur"]


def test_without_the_flag_an_unknown_event_type_is_refused_and_says_how_to_forward_it():
    with pytest.raises(InputError, match=r"line 2: field 'type': unknown event type 'cooling_alarm'.*"
                                         r"--forward-unknown-events"):
        joulesim.simulate("small4", "tiny", "fcfs", events=EVENTS)


def test_forward_unknown_events_over_the_wire(recorder):
    (recorder / "events.jsonl").write_text("\n".join(json.dumps(e) for e in EVENTS) + "\n")
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", "--events", "events.jsonl", "--forward-unknown-events")
    assert done.returncode == 0, done.stderr
    assert json.loads((recorder / "record.json").read_text())["config"]["forward-unknown-events"] is True
    # Without --events the flag changes nothing (Batsim ignores it then).
    done = run_cli(recorder, "-p", "small4", "-w", "tiny", "--forward-unknown-events")
    assert json.loads((recorder / "record.json").read_text())["config"]["forward-unknown-events"] is False


def _schedule_without_wall_clock(path):
    import csv

    with open(path, newline="") as f:
        row = next(csv.DictReader(f))
    return {k: v for k, v in row.items() if k not in ("scheduling_time", "simulation_time")}


def test_disable_machine_state_tracing_writes_no_machine_states_and_removes_an_older_one(tmp_path):
    def run(prefix, *flags):
        return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "cluster32", "-w", "default",
                               "-d", "easy", "--in-process", "-e", str(tmp_path / prefix), *flags],
                              capture_output=True, text=True, timeout=120)

    assert run("full").returncode == 0
    assert (tmp_path / "full_machine_states.csv").exists()
    (tmp_path / "cut_machine_states.csv").write_text("an older run's file\n")
    done = run("cut", "--disable-machine-state-tracing", "--disable-schedule-tracing")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "cut_machine_states.csv").exists()  # never mixed with an older run's
    assert (tmp_path / "cut_jobs.csv").read_bytes() == (tmp_path / "full_jobs.csv").read_bytes()
    # The time_* totals do not come from the file: they stay.
    assert (_schedule_without_wall_clock(tmp_path / "cut_schedule.csv")
            == _schedule_without_wall_clock(tmp_path / "full_schedule.csv"))


def test_the_api_keeps_no_machine_states_when_asked():
    from joulesim.analysis.run_outputs import AnalysisError

    result = joulesim.simulate("small4", "tiny", "fcfs", disable_machine_state_tracing=True)
    assert len(result.jobs) == 4
    with pytest.raises(AnalysisError, match="kept no such output"):
        result.machine_states


def _run_fcfs(tmp_path, *flags):
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "small4", "-w", "tiny", "-d", "fcfs",
                           "-e", str(tmp_path / "out"), *flags], capture_output=True, text=True, timeout=120)


def test_quiet_prints_nothing_and_still_writes_the_outputs(tmp_path):
    for flags in (["-q"], ["--verbosity", "quiet"]):
        done = _run_fcfs(tmp_path, *flags)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", (done.stdout, done.stderr)
        assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 5  # header + 4 jobs


def test_network_only_prints_every_message_and_nothing_else(tmp_path):
    done = _run_fcfs(tmp_path, "-v", "network-only")
    assert done.returncode == 0 and done.stdout == ""
    lines = done.stderr.splitlines()
    sent = [json.loads(line.removeprefix("joulesim: sent: ")) for line in lines if line.startswith("joulesim: sent: ")]
    received = [line for line in lines if line.startswith("joulesim: received: ")]
    assert len(sent) + len(received) == len(lines) and len(sent) == len(received) > 2
    assert sent[0]["events"][0]["type"] == "SIMULATION_BEGINS" and sent[-1]["events"][-1]["type"] == "SIMULATION_ENDS"
    executed = [json.loads(line.removeprefix("joulesim: received: ")) for line in received]
    assert sum(event["type"] == "EXECUTE_JOB" for reply in executed for event in reply["events"]) == 4


def test_debug_prints_the_messages_and_the_summary(tmp_path):
    done = _run_fcfs(tmp_path, "--verbosity", "debug")
    assert done.returncode == 0 and "makespan" in done.stdout and "joulesim: sent: " in done.stderr


def test_the_api_refuses_an_unknown_verbosity():
    from joulesim.protocol.errors import JoulesimError

    with pytest.raises(JoulesimError, match="verbosity='loud': use one of quiet"):
        joulesim.simulate("small4", "tiny", "fcfs", verbosity="loud")


def test_simgrid_options_are_accepted_and_answered(tmp_path):
    done = _run_fcfs(tmp_path, "--sg-cfg", "host/model:ptask_L07", "--sg-cfg", "surf/precision:1e-9",
                     "--sg-cfg", "network/model:SMPI", "--sg-log", "root.thresh:debug")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("joulesim: warning:")]
    assert len(warnings) == 2  # the two replicated values match: no word about them
    assert "--sg-cfg network/model:SMPI changes nothing" in warnings[0] and "--sg-log root.thresh:debug" in warnings[1]
    assert _run_fcfs(tmp_path, "-q", "--sg-cfg", "network/model:SMPI").stderr == ""
    done = _run_fcfs(tmp_path, "--sg-cfg", "nocolon")
    assert done.returncode == 2 and "'nocolon' is not NAME:VALUE" in done.stderr
