"""The engine on cases computed by hand: exact times, life cycle, time dilation, batching."""

from __future__ import annotations

import pytest
from conftest import (jobs_by_id, read_csv, run_in_process, run_with_host_1_unavailable_from_2_to_20, write_platform,
                      write_workload)
from scripted_decider import ScriptedDecider, submitted

from joulesim.protocol.errors import DecisionError, JoulesimError


def execute_all_at_submission(first_host: int = 0):
    """Script: run every submitted job at once on hosts first_host.. (jobs must fit)."""
    def script(d: ScriptedDecider, message):
        for data in submitted(message):
            res = data["job"]["res"]
            d.execute_job(data["job_id"], f"{first_host}-{first_host + res - 1}" if res > 1 else str(first_host))
    return script


def test_compute_profiles_take_flops_over_speed(tmp_path):
    platform = write_platform(tmp_path, ["1Gf", "500Mf", "1Gf", "1Gf"])
    profiles = {
        "ten_gflop": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0},
        "vector": {"type": "parallel", "cpu": [4e9, 4e9], "com": [0, 0, 0, 0]},
        "total": {"type": "parallel_homogeneous_total", "cpu": 8e9, "com": 0},
        "d3": {"type": "delay", "delay": 3},
        "one_gflop": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
        "composed": {"type": "composed", "seq": ["d3", "one_gflop"], "repeat": 2},
    }
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "profile": "ten_gflop"},
        {"id": 2, "subtime": 100, "res": 2, "profile": "vector"},
        {"id": 3, "subtime": 200, "res": 4, "profile": "total"},
        {"id": 4, "subtime": 300, "res": 1, "profile": "composed"},
    ], profiles)

    def script(d, message):
        for data in submitted(message):
            alloc = {"w0!1": "0", "w0!2": "0-1", "w0!3": "0-3", "w0!4": "2"}[data["job_id"]]
            d.execute_job(data["job_id"], alloc)

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert jobs["1"]["execution_time"] == "10.000000"  # 10e9 flop on a 1 Gflop/s host
    assert jobs["2"]["execution_time"] == "8.000000"  # slowest executor: 4e9 flop at 0.5 Gflop/s
    assert jobs["3"]["execution_time"] == "4.000000"  # 8e9/4 per host, slowest host 0.5 Gflop/s
    assert jobs["4"]["execution_time"] == "8.000000"  # (3 s + 1 s) x 2
    assert jobs["4"]["finish_time"] == "308.000000"
    assert all(row["final_state"] == "COMPLETED_SUCCESSFULLY" for row in jobs.values())


def test_walltime_kill_and_failed_return_code(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "walltime": 30, "delay": 100},
        {"id": 2, "subtime": 0, "res": 1, "walltime": 100, "profile": "fails"},
    ], {"fails": {"type": "delay", "delay": 5, "ret": 2}})

    def script(d, message):
        for i, data in enumerate(submitted(message)):
            d.execute_job(data["job_id"], str(i))

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert (jobs["1"]["final_state"], jobs["1"]["finish_time"], jobs["1"]["success"]) == \
        ("COMPLETED_WALLTIME_REACHED", "30.000000", "0")
    assert (jobs["2"]["final_state"], jobs["2"]["finish_time"]) == ("COMPLETED_FAILED", "5.000000")
    completed = {e["data"]["job_id"]: (now, e["data"]) for now, e in decider.events_of("JOB_COMPLETED")}
    assert completed["w0!1"][0] == 30 and completed["w0!1"][1]["job_state"] == "COMPLETED_WALLTIME_REACHED"
    assert completed["w0!2"][1]["return_code"] == 2


def start_then_kill(starts: dict[str, str], at: float, kill: list[str]) -> ScriptedDecider:
    """A decider that starts `starts` (job id -> alloc) at t=0, then sends KILL_JOB `kill` at `at`."""
    def script(d, message):
        if message["now"] == 0:
            for job_id, alloc in starts.items():
                d.execute_job(job_id, alloc)
            d.call_me_later(at)
        elif any(e["type"] == "REQUESTED_CALL" for e in message["events"]):
            d.kill_jobs(kill)
    return ScriptedDecider(script)


def test_kill_with_progress_for_leaf_and_composed_profiles(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "delay": 100},
        {"id": 2, "subtime": 0, "res": 1, "profile": "seq"},
    ], {"d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20},
        "seq": {"type": "composed", "seq": ["d10", "d20"]}})

    decider = start_then_kill({"w0!1": "0", "w0!2": "1"}, 15, ["w0!1", "w0!2"])
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    [(now, killed)] = decider.events_of("JOB_KILLED")
    assert now == 15 and killed["data"]["job_ids"] == ["w0!1", "w0!2"]
    progress = killed["data"]["job_progress"]
    assert progress["w0!1"] == {"profile_name": "delay_100", "progress": 0.15}
    assert progress["w0!2"] == {"profile_name": "seq", "current_task_index": 1,
                                "current_task": {"profile_name": "d20", "progress": 0.25}}
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert jobs["1"]["final_state"] == jobs["2"]["final_state"] == "COMPLETED_KILLED"
    assert jobs["1"]["finish_time"] == "15.000000"
    # As Batsim 4.2.1 reports a kill: a JOB_COMPLETED per job really killed (COMPLETED_KILLED,
    # return code -1), then JOB_KILLED, all in one message.
    killed_message = next(m for m in decider.messages if any(e["type"] == "JOB_KILLED" for e in m["events"]))
    assert [(e["type"], e["data"].get("job_id"), e["data"].get("job_state"), e["data"].get("return_code"),
             e["data"].get("alloc")) for e in killed_message["events"]] == [
        ("JOB_COMPLETED", "w0!1", "COMPLETED_KILLED", -1, "0"), ("JOB_COMPLETED", "w0!2", "COMPLETED_KILLED", -1, "1"),
        ("JOB_KILLED", None, None, None, None)]


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_killing_a_job_whose_end_was_told_or_a_waiting_one_is_refused(tmp_path, grouping):
    """Batsim 4.2.1 forgets a job once the message telling its end is sent, and aborts on a
    KILL_JOB naming it ("Cannot get job ... it does not exist"); it aborts on a waiting one too."""
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 5}])

    def kill(job_id):
        def script(d, message):
            if any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!1" for e in message["events"]):
                d.execute_job("w0!1", "0")
            elif any(e["type"] == "JOB_COMPLETED" for e in message["events"]):
                d.kill_jobs([job_id])
        return ScriptedDecider(script)

    with pytest.raises(DecisionError, match=r"cannot kill job w0!1: it is already finished \(COMPLETED_SUCCESSFULLY "
                                            r"at t=5\), and that end was already sent to the decider"):
        run_in_process(kill("w0!1"), platform, [workload], str(tmp_path / "out"), event_grouping=grouping)
    with pytest.raises(DecisionError, match=r"cannot kill job w0!2: it is waiting.*REJECT_JOB"):
        run_in_process(kill("w0!2"), platform, [workload], str(tmp_path / "out"), event_grouping=grouping)


def test_a_job_named_twice_in_a_kill_is_killed_and_told_once(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 100}])

    decider = start_then_kill({"w0!1": "0"}, 10, ["w0!1", "w0!1"])
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    [(_, killed)] = decider.events_of("JOB_KILLED")
    assert killed["data"]["job_ids"] == ["w0!1"] and len(decider.events_of("JOB_COMPLETED")) == 1


def test_call_me_later_wakes_the_decider_at_the_exact_time(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])

    def script(d, message):
        if message["now"] == 0:
            d.call_me_later(42.5)
        elif message["now"] == 42.5:
            d.execute_job("w0!1", "0")

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    assert [now for now, _ in decider.events_of("REQUESTED_CALL")] == [42.5]
    assert jobs_by_id(str(tmp_path / "out"))["1"]["starting_time"] == "42.500000"
    assert decider.types_per_message()[-1] == (47.5, ["SIMULATION_ENDS"])


def test_same_time_events_come_in_one_message(tmp_path):
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [{"id": i, "subtime": 0, "res": 1, "delay": 10} for i in range(1, 4)]
                              + [{"id": 9, "subtime": 10, "res": 1, "delay": 1}])

    def script(d, message):
        for i, data in enumerate(submitted(message)):
            d.execute_job(data["job_id"], str(i))

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    messages = decider.types_per_message()
    # SIMULATION_BEGINS comes alone, as from Batsim (pybatsim relies on it), then every t=0 event.
    assert messages[0] == (0, ["SIMULATION_BEGINS"])
    assert messages[1] == (0, ["JOB_SUBMITTED", "JOB_SUBMITTED", "JOB_SUBMITTED"])
    assert messages[2] == (10, ["JOB_SUBMITTED", "NOTIFY", "JOB_COMPLETED", "JOB_COMPLETED", "JOB_COMPLETED"])
    assert messages[-1] == (11, ["SIMULATION_ENDS"])


def test_time_dilation_case_1_ignores_thinking_time(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 3, "res": 1, "delay": 10}])
    run_in_process(ScriptedDecider(execute_all_at_submission()), platform, [workload], str(tmp_path / "out"))
    assert jobs_by_id(str(tmp_path / "out"))["1"]["starting_time"] == "3.000000"


def test_time_dilation_case_2_applies_everything_at_the_reply_time(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 10},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 10}])

    def script(d, message):
        if message["now"] == 0:
            d.think(7)  # decisions and the reply both at t=7
            d.execute_job("w0!1", "0")
            d.execute_job("w0!2", "1")

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert jobs["1"]["starting_time"] == jobs["2"]["starting_time"] == "7.000000"
    assert jobs["1"]["waiting_time"] == "7.000000"


def test_time_dilation_case_3_applies_decisions_on_the_fly_and_queues_events(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 2},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 10},
                                         {"id": 3, "subtime": 4, "res": 1, "delay": 1}])

    def script(d, message):
        if message["now"] == 0:
            d.execute_job("w0!1", "0")  # at t=0, ends at t=2 while the decider still thinks
            d.think(3)
            d.execute_job("w0!2", "1")  # at t=3
            d.think(3)  # the reply's now is t=6
        else:
            for data in submitted(message):
                d.execute_job(data["job_id"], "0")

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert jobs["1"]["starting_time"] == "0.000000"
    assert jobs["2"]["starting_time"] == "3.000000"
    # The completion at t=2 and the submission at t=4 wait until the decider is free at t=6.
    second = decider.messages[2]  # after SIMULATION_BEGINS and the t=0 call
    assert second["now"] == 6
    assert [(e["timestamp"], e["type"]) for e in second["events"]] == [
        (2, "JOB_COMPLETED"), (4, "JOB_SUBMITTED"), (4, "NOTIFY")]
    assert jobs["3"]["starting_time"] == "6.000000"


def test_simulation_ends_waits_for_pending_call_me_later(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 1}])

    def script(d, message):
        if message["now"] == 0:
            d.execute_job("w0!1", "0")
            d.call_me_later(100)

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    assert decider.types_per_message()[-2:] == [(100, ["REQUESTED_CALL"]), (100, ["SIMULATION_ENDS"])]


def test_dynamic_jobs_registered_and_acknowledged(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0" if data["job_id"] == "w0!1" else "1")
        if message["now"] == 0:
            d.think(2)
            d.register_profile("dyn", "p20", {"type": "delay", "delay": 20})
            d.register_job("dyn!a", {"res": 1, "profile": "p20", "walltime": 50, "user": "alice"})
            d.notify_registration_finished()

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"),
                   dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    acks = [(now, e) for now, e in decider.events_of("JOB_SUBMITTED") if e["data"]["job_id"] == "dyn!a"]
    assert len(acks) == 1 and acks[0][1]["timestamp"] == 2 and acks[0][1]["data"]["job"]["user"] == "alice"
    jobs = read_csv(str(tmp_path / "out_jobs.csv"))
    dyn = [r for r in jobs if r["workload_name"] == "dyn"][0]
    assert (dyn["job_id"], dyn["submission_time"], dyn["finish_time"]) == ("a", "2.000000", "22.000000")
    assert decider.messages[0]["events"][0]["data"]["config"]["dynamic-jobs-enabled"] is True


def test_dynamic_registration_left_open_is_reported_not_hung(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])
    with pytest.raises(JoulesimError, match="registration_finished"):
        run_in_process(ScriptedDecider(execute_all_at_submission()), platform, [workload],
                       str(tmp_path / "out"), dynamic_jobs=True)


def test_register_job_needs_dynamic_jobs(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])

    def script(d, message):
        if message["now"] == 0:
            d.register_job("w0!2", {"res": 1, "profile": "delay_5"})

    with pytest.raises(DecisionError, match="--enable-dynamic-jobs"):
        run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))


def test_external_events_make_machines_unavailable_then_available(tmp_path):
    decider = run_with_host_1_unavailable_from_2_to_20(tmp_path)
    notifies = [(now, e["data"]) for now, e in decider.events_of("NOTIFY")]
    assert (2, {"type": "event_machine_unavailable", "resources": "1"}) in notifies
    assert (20, {"type": "event_machine_available", "resources": "1"}) in notifies
    assert (20, {"type": "no_more_external_event_to_occur"}) in notifies
    states = [(r["time"], r["nb_idle"], r["nb_computing"]) for r in read_csv(str(tmp_path / "out_machine_states.csv"))]
    # As Batsim counts them: host 1 is unavailable from 2 (job 1 still running on it) to 20, when
    # it becomes idle again without a row (rows come with jobs and switches only).
    assert states == [("0", "0", "2"), ("4", "1", "0"), ("6", "0", "1"), ("10", "1", "0")]
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert schedule["time_unavailable"] == "18.000000"  # host 1 from 2 to 20


def test_executing_on_an_unavailable_machine_is_refused(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 5, "res": 1, "delay": 4}])
    events = tmp_path / "events.txt"
    events.write_text('{"type":"machine_unavailable","resources":"0","timestamp":1}\n')

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0")

    with pytest.raises(DecisionError, match="host 0 is unavailable"):
        run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"),
                       events_path=str(events))


def test_metadata_goes_to_the_jobs_output(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 1},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 1}])

    def script(d, message):
        if message["now"] == 0:
            d.set_job_metadata("w0!1", "queue=fast, user \"x\"")
            d.execute_job("w0!1", "0")
            d.reject_job("w0!2")

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert jobs["1"]["metadata"] == "queue=fast, user \"x\""
    assert jobs["2"]["final_state"] == "REJECTED" and jobs["2"]["starting_time"] == ""
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert (schedule["nb_jobs"], schedule["nb_jobs_rejected"], schedule["nb_jobs_success"]) == ("2", "1", "1")


def test_an_alloc_in_any_valid_form_is_recorded_canonically(tmp_path):
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 3, "delay": 1}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "3 0-0 1-1")

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"))
    assert jobs_by_id(str(tmp_path / "out"))["1"]["allocated_resources"] == "0-1 3"
    [(_, completed)] = decider.events_of("JOB_COMPLETED")
    assert completed["data"]["alloc"] == "0-1 3"
