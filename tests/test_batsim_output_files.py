"""The output files as Batsim 4.2.1 writes them, byte for byte: jobs and schedule.

Small runs whose expected values are worked out by hand from Batsim's rules (src/export.cpp).
"""

from __future__ import annotations

import pytest
from scripted_decider import ScriptedDecider, submitted

from joulesim.deciders import load_decider

from conftest import read_csv, run_in_process, write_platform, write_workload


# ---------------------------------------------------------------------- out_jobs.csv
def test_jobs_rows_without_energy_metadata_and_rejection(tmp_path):
    """Without -E every job's consumed_energy is -1 (never measured); metadata is written
    between double quotes, empty or not; a rejected job has no times. (Batsim would not double
    the metadata's own double quotes, which breaks its row: joulesim's stays CSV.)"""
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 5},
                                         {"id": 3, "subtime": 1, "res": 1, "delay": 5}])

    def script(d, message):
        for data in submitted(message):
            if data["job_id"] == "w0!1":
                d.set_job_metadata("w0!1", 'queue=fast, user "x"')
                d.execute_job("w0!1", "0")
            elif data["job_id"] == "w0!2":
                d.reject_job("w0!2")
            else:
                d.execute_job("w0!3", "1")

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert rows[1:] == [
        '2,w0,delay_5,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,""',
        '1,w0,delay_5,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,5.000000,5.000000,0.000000,'
        '5.000000,1.000000,0,-1.000000,"queue=fast, user ""x"""',
        '3,w0,delay_5,1.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,1.000000,5.000000,6.000000,0.000000,'
        '5.000000,1.000000,1,-1.000000,""',
    ]


def test_texts_that_batsim_would_break_are_quoted(tmp_path):
    """A comma in a job id or a profile name (IRMaSim's profile names have some) is quoted."""
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": "a,b", "subtime": 0, "res": 1, "profile": 'p "1", fast'}],
                              {'p "1", fast': {"type": "delay", "delay": 1}})
    run_in_process(load_decider("fcfs"), platform, [workload], str(tmp_path / "out"))
    row = (tmp_path / "out_jobs.csv").read_text().splitlines()[1]
    assert row.startswith('"a,b",w0,"p ""1"", fast",0.000000,1,')
    assert read_csv(str(tmp_path / "out_jobs.csv"))[0]["profile"] == 'p "1", fast'


def test_a_job_of_no_duration_lasts_ten_microseconds_in_the_outputs(tmp_path):
    """Batsim replaces a run time of 0 by 1e-5 s, and derives finish, turnaround, stretch and
    slowdown from it."""
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 2, "res": 1, "delay": 0}])
    run_in_process(load_decider("fcfs"), platform, [workload], str(tmp_path / "out"))
    job = read_csv(str(tmp_path / "out_jobs.csv"))[0]
    assert (job["starting_time"], job["execution_time"], job["finish_time"], job["turnaround_time"],
            job["stretch"]) == ("2.000000", "0.000010", "2.000010", "0.000010", "1.000000")
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert (schedule["makespan"], schedule["mean_slowdown"]) == ("2.000010", "1.000000")


# ---------------------------------------------------------------------- out_schedule.csv
def test_schedule_means_count_rejected_jobs_and_failed_jobs_count_as_killed(tmp_path):
    """Batsim divides the sums of finished jobs by every job (rejected ones too), and counts
    every finished job that did not succeed as killed."""
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "fails"},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 30},
                                         {"id": 3, "subtime": 10, "res": 1, "delay": 10}],
                              {"fails": {"type": "delay", "delay": 20, "ret": 3}})

    def script(d, message):
        for data in submitted(message):
            if data["job_id"] == "w0!3":
                d.reject_job("w0!3")
            else:
                d.execute_job(data["job_id"], "0" if data["job_id"] == "w0!1" else "1")

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert (schedule["nb_jobs"], schedule["nb_jobs_finished"], schedule["nb_jobs_success"],
            schedule["nb_jobs_killed"], schedule["nb_jobs_rejected"]) == ("3", "2", "1", "1", "1")
    # turnarounds 20 and 30, over 3 jobs; success 1 of 3
    assert (schedule["mean_turnaround_time"], schedule["mean_waiting_time"], schedule["mean_slowdown"],
            schedule["success_rate"]) == ("16.666667", "0.000000", "0.666667", "0.333333")
    assert (schedule["max_turnaround_time"], schedule["makespan"]) == ("30.000000", "30.000000")
