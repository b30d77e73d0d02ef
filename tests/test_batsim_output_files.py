"""The output files as Batsim 4.2.1 writes them, byte for byte: jobs, schedule, machine states,
pstate changes, and the Pajé trace of the schedule.

Two kinds of tests: runs of the cases measured with real Batsim 4.2.1 (../shared/reference,
skipped when absent) compared with Batsim's own files; and small runs whose expected values
are worked out by hand from Batsim's rules (src/export.cpp, src/machines.cpp, src/server.cpp).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim
from joulesim.deciders import load_decider

from conftest import read_csv, run_in_process, run_with_host_1_unavailable_from_2_to_20, write_platform, write_workload

CASES = "batsim-energy-and-kills/cases"
WALL_CLOCK_COLUMNS = ("scheduling_time", "simulation_time")
# joulesim names itself in out_schedule.csv's batsim_version (Batsim writes "4.2.1").
IDENTITY_COLUMNS = ("batsim_version",)


# ---------------------------------------------------------------------- the measured cases
def run_case(reference: Path, case: str, prefix: Path) -> Path:
    """Run a measured case as its summary.json says Batsim was run (same decider, inputs and
    flags); returns the folder of Batsim's files."""
    bundle = reference / CASES / case
    summary = json.loads((bundle / "summary.json").read_text())
    inputs = bundle.parent.parent
    decider = summary["decider"].split()
    if decider[:2] == ["joulesim", "decide"]:  # "joulesim decide NAME [-o K=V]... -s {EP}": in this process
        chosen: dict = {"decider": decider[2], "options": dict(decider[i + 1].split("=", 1)
                                                                for i, word in enumerate(decider) if word == "-o")}
    else:  # "python3 tools/SCRIPT {EP} ARGS...": the bundle's decider, in its own process
        command = [sys.executable, str(inputs / decider[1])] + decider[2:]
        chosen = {"decider": [word.replace("{EP}", "{endpoint}") for word in command], "in_process": False}
    flags = summary["flags"]
    keywords: dict = {"energy": "-E" in flags}
    if "--mmax" in flags:
        keywords["mmax"] = int(flags[flags.index("--mmax") + 1])
    if "-m" in flags:
        keywords["master_host"] = flags[flags.index("-m") + 1]
    joulesim.simulate(str(inputs / summary["platform"]), str(inputs / summary["workload"]), export=prefix,
                      verbosity="quiet", **chosen, **keywords)
    return bundle / "batsim"


@pytest.fixture(scope="module")
def measured_runs(tmp_path_factory):
    """Each measured case run once for this file's tests: case -> (our folder, Batsim's folder)."""
    folders: dict[str, tuple[Path, Path]] = {}

    def run(reference: Path, case: str) -> tuple[Path, Path]:
        if case not in folders:
            ours = tmp_path_factory.mktemp(case)
            folders[case] = (ours, run_case(reference, case, ours / "out"))
        return folders[case]
    return run


def csv_columns(path: Path, dropped: tuple[str, ...] = ()) -> list[list[str]]:
    """The rows of a Batsim CSV file (split on commas: its fields hold none in these cases),
    without the `dropped` columns."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    kept = [i for i, name in enumerate(header) if name not in dropped]
    return [[fields[i] for i in kept] for fields in (line.split(",") for line in lines)]


# What each measured case's files must match: Batsim's bytes, except the wall-clock columns and
# joulesim's name in batsim_version. The energy columns too, to the last digit: Batsim prints
# SimGrid's per-host joules (updated at the plugin's moments, ...999999 for 1000000) summed in
# long double, and the mean power between rows that share a time (a sub-nanosecond apart).
NOT_COMPARED = {
    "out_schedule.csv": WALL_CLOCK_COLUMNS + IDENTITY_COLUMNS,
}
WITHOUT_ENERGY = ["out_jobs.csv", "out_machine_states.csv", "out_schedule.csv"]
WITH_ENERGY = WITHOUT_ENERGY + ["out_pstate_changes.csv", "out_consumed_energy.csv"]
MEASURED = [(case, name) for case in ("5_no_energy_fcfs", "6_platform_floyd8", "6_platform_dijkstra8", "4b_kill_running")
            for name in WITHOUT_ENERGY]
MEASURED += [(case, name) for case in ("3_easy_shutdown", "2_energybud60_shutdown", "1_reducepc50")
             for name in WITH_ENERGY]


@pytest.mark.parametrize("case,name", MEASURED)
def test_a_measured_case_writes_batsims_file(shared_reference, measured_runs, case, name):
    """Shutdowns (case 3: machines asleep at the end, whose sleep Batsim does not count), energy
    budgets with shutdowns (2), power capping (1), a kill (4b), no energy (5), Floyd and Dijkstra
    platforms (6)."""
    ours, batsim = measured_runs(shared_reference, case)
    dropped = NOT_COMPARED.get(name, ())
    assert csv_columns(ours / name, dropped) == csv_columns(batsim / name, dropped)
    if not dropped:
        assert (ours / name).read_bytes() == (batsim / name).read_bytes()


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


def test_storage_machines_count_and_initial_pstates_come_by_pstate(tmp_path):
    """Batsim counts storage machines in nb_computing_machines, gives them a container in the
    trace and a row of initial pstates; those rows come by ascending pstate."""
    host = ('<host id="h{i}" speed="1Gf, 1e-9Mf, 0.16393442622950818f, 0.006599788806758184f" pstate="{p}">'
            '<prop id="wattage_per_state" value="95.0:190.74, 9.75:9.75, 101.0:101.0, 125.17:125.17"/>'
            '<prop id="sleep_pstates" value="1:2:3"/></host>')
    platform = tmp_path / "three.xml"
    platform.write_text("<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                        + "".join(host.format(i=i, p=p) for i, p in ((0, 1), (1, 0), (2, 0)))
                        + '<host id="m" speed="1Gf"><prop id="role" value="master"/></host></zone></platform>')
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 10}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "1")  # host 0 sleeps

    joulesim.simulate(str(platform), workload, ScriptedDecider(script), energy=True,
                      add_role_to_hosts={"h2": "storage"}, export=tmp_path / "out", verbosity="quiet")
    assert read_csv(str(tmp_path / "out_schedule.csv"))[0]["nb_computing_machines"] == "3"
    pstates = (tmp_path / "out_pstate_changes.csv").read_text().splitlines()
    assert pstates == ["time,machine_id,new_pstate", "0,1-2,0", "0,0,1"]
    assert (tmp_path / "out_machine_states.csv").read_text().splitlines()[1].endswith(",0,0,0,1,1")
    assert '2 0.000000 machine_ct m2 "h2" root' in (tmp_path / "out_schedule.trace").read_text().splitlines()


# ---------------------------------------------------------------------- machine states
def test_machine_times_stop_at_each_machines_last_change(tmp_path):
    """energy2: job 1 computes on host 0 from 0 to 10; host 1 is switched off at 30 (6.1 s)
    and sleeps until the end (t=100, job 2 on host 0). Batsim adds a machine's time in a state
    when it leaves the state: host 1's sleep and host 0's idling after job 2 are never added."""
    off = 6.1
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 10},
                                         {"id": 2, "subtime": 90, "res": 1, "delay": 10}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0")
            if data["job_id"] == "w0!1":
                d.call_me_later(30)
        if any(e["type"] == "REQUESTED_CALL" for e in message["events"]):
            d.set_resource_state("1", 1)

    run_in_process(ScriptedDecider(script), "energy2", [workload], str(tmp_path / "out"), energy=True)
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert (schedule["time_computing"], schedule["time_idle"], schedule["time_switching_off"],
            schedule["time_sleeping"], schedule["time_switching_on"]) == (
        "20.000000", f"{30 + 80:f}", f"{off:f}", "0.000000", "0.000000")  # idle: host 1 to 30, host 0 10..90
    assert schedule["nb_computing_machines"] == "2"
    rows = (tmp_path / "out_machine_states.csv").read_text().splitlines()
    # A row after each job start and end, each SET_RESOURCE_STATE and each switch done; none at
    # t=0 for the initial state; times with %g.
    assert rows == ["time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing",
                    "0,0,0,0,1,1", "10,0,0,0,2,0", "30,0,0,1,1,0", "36.1,1,0,0,1,0", "90,1,0,0,0,1",
                    "100,1,0,0,1,0"]
    pstates = (tmp_path / "out_pstate_changes.csv").read_text().splitlines()
    assert pstates == ["time,machine_id,new_pstate", "0,0-1,0", "30,1,-2", "36.1,1,1"]


def test_machine_states_rows_one_per_event_with_g_times(tmp_path):
    """Two jobs ending at one time give two rows at that time; a late time prints as %g does
    (six significant digits)."""
    platform = write_platform(tmp_path, 3)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 1234567},
                                         {"id": 2, "subtime": 0, "res": 2, "delay": 1234567}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0" if data["job_id"] == "w0!1" else "1-2")

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))
    rows = (tmp_path / "out_machine_states.csv").read_text().splitlines()
    assert rows[1:] == ["0,0,0,0,2,1", "0,0,0,0,0,3", "1.23457e+06,0,0,0,1,2", "1.23457e+06,0,0,0,3,0"]
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    assert (schedule["time_computing"], schedule["time_idle"]) == (f"{3 * 1234567:f}", "0.000000")


def test_an_unavailable_machine_is_counted_as_batsim_counts_it(tmp_path):
    """Host 1 computes job 1 (0..4) and is unavailable from 2 to 20: Batsim marks it unavailable
    at once, leaves it so when the job ends (no idle), and makes it idle at 20 (no row then)."""
    run_with_host_1_unavailable_from_2_to_20(tmp_path)
    rows = (tmp_path / "out_machine_states.csv").read_text().splitlines()
    assert rows[1:] == ["0,0,0,0,0,2", "4,0,0,0,1,0", "6,0,0,0,0,1", "10,0,0,0,1,0"]
    schedule = read_csv(str(tmp_path / "out_schedule.csv"))[0]
    # computing: host 0 0..4 and 6..10, host 1 0..2; idle: host 0 4..6; unavailable: host 1 2..20
    assert (schedule["time_computing"], schedule["time_idle"], schedule["time_unavailable"]) == (
        "10.000000", "2.000000", "18.000000")


# ---------------------------------------------------------------------- the Pajé trace
def pj_dump(trace: Path) -> list[list[str]]:
    """pajeng's reading of a trace (its pj_dump lines, split); skips when pajeng is absent."""
    if shutil.which("pj_dump") is None:
        pytest.skip("pajeng is absent (apt-get install pajeng): the Pajé trace's validity is not checked")
    done = subprocess.run(["pj_dump", str(trace)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [[field.strip() for field in line.split(",")] for line in done.stdout.splitlines()]


def killed_at_walltime(tmp_path: Path, **config) -> Path:
    """Job 1 on hosts 0-1 from 0 to 10; job 2 on host 1 killed at its walltime 5 (t=10..15)."""
    platform = write_platform(tmp_path, 3)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "delay": 10},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 20, "walltime": 5}])

    def script(d, message):
        for data in submitted(message):
            if data["job_id"] == "w0!1":
                d.execute_job("w0!1", "0-1")
        if any(e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == "w0!1" for e in message["events"]):
            d.execute_job("w0!2", "1")

    prefix = tmp_path / "out"
    run_in_process(ScriptedDecider(script), platform, [workload], str(prefix), **config)
    return tmp_path / "out_schedule.trace"


def test_the_trace_shows_jobs_on_machines_and_walltime_kills(tmp_path):
    trace = killed_at_walltime(tmp_path)
    text = trace.read_text()
    assert text.startswith("%EventDef PajeDefineContainerType 1\n% Type string\n% Alias string\n% Name string\n"
                           "%EndEventDef\n\n%EventDef PajeCreateContainer 2\n% Time date \n% Type string  \n")
    events = text[text.index("# Begin of events\n"):].splitlines()
    color = events[4].split(" ", 4)[4]
    assert events[:4] == ["# Begin of events", "6 0.000000 machine_state m0 w", "6 0.000000 machine_state m1 w",
                          "6 0.000000 machine_state m2 w"]
    assert color.startswith('"') and len(color.split()) == 3
    second = events[9].split(" ", 4)[4]
    assert events[4:] == [
        f'5 jw0!1 machine_state "w0!1" {color}',
        "6 0.000000 machine_state m0 jw0!1", "6 0.000000 machine_state m1 jw0!1",
        "6 10.000000 machine_state m0 w", "6 10.000000 machine_state m1 w",
        f'5 jw0!2 machine_state "w0!2" {second}', "6 10.000000 machine_state m1 jw0!2",
        '8 15.000000 kk k "w0!2"', '8 15.000000 km m1 "w0!2"', "6 15.000000 machine_state m1 w",
        "", "# End of events, containers destruction",
        "3 15.000000 m0 machine_ct", "3 15.000000 m1 machine_ct", "3 15.000000 m2 machine_ct",
        "3 15.000000 root root_ct"]
    assert second != color  # successive jobs get different colours
    assert '2 0.000000 machine_ct m2 "h2" root' in text.splitlines()
    # pajeng reads it: each machine's states and the kill events
    dump = pj_dump(trace)
    states = [(row[1], row[3], row[4], row[7]) for row in dump if row[0] == "State"]
    assert ("h1", "10.000000", "15.000000", "w0!2") in states and ("h0", "0.000000", "10.000000", "w0!1") in states
    assert sorted(row[1:] for row in dump if row[0] == "Event") == [
        ["Killer", "Job kill", "15.000000", "w0!2"], ["h1", "Job kill", "15.000000", "w0!2"]]


def test_the_trace_of_a_measured_case_matches_its_jobs(shared_reference, measured_runs):
    """Floyd platform case: every job's machines compute it exactly from its start to its finish."""
    ours, _ = measured_runs(shared_reference, "6_platform_floyd8")
    jobs = read_csv(str(ours / "out_jobs.csv"))
    shown: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for row in pj_dump(ours / "out_schedule.trace"):
        if row[0] == "State" and row[7] != "Waiting":
            shown.setdefault((row[7], row[3]), []).append((row[1], row[4]))
    for job in jobs:
        hosts = shown[(f"w0!{job['job_id']}", job["starting_time"])]
        assert [end for _, end in hosts] == [job["finish_time"]] * len(hosts)
        assert len(hosts) == int(job["requested_number_of_resources"])


def test_a_shared_machine_shows_its_oldest_job(tmp_path):
    """With compute sharing, a machine shows the oldest job it runs, then the next one."""
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 10},
                                         {"id": 2, "subtime": 5, "res": 2, "delay": 10}])

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0" if data["job_id"] == "w0!1" else "0-1")

    run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"), compute_sharing=True)
    lines = [line for line in (tmp_path / "out_schedule.trace").read_text().splitlines() if line.startswith("6 ")]
    assert lines[2:] == ["6 0.000000 machine_state m0 jw0!1", "6 5.000000 machine_state m1 jw0!2",
                         "6 10.000000 machine_state m0 jw0!2", "6 15.000000 machine_state m0 w",
                         "6 15.000000 machine_state m1 w"]
    pj_dump(tmp_path / "out_schedule.trace")


def test_disable_schedule_tracing_writes_no_trace_and_removes_an_older_one(tmp_path):
    from click.testing import CliRunner

    from joulesim.cli.main import main

    prefix = tmp_path / "out"
    joulesim.simulate("small4", "tiny", "fcfs", export=prefix)
    assert (tmp_path / "out_schedule.trace").is_file()
    outcome = CliRunner().invoke(main, ["run", "--in-process", "-d", "fcfs", "-p", "small4", "-w", "tiny",
                                        "-e", str(prefix), "-q", "--disable-schedule-tracing"])
    assert outcome.exit_code == 0, outcome.output
    assert not (tmp_path / "out_schedule.trace").exists()
    joulesim.simulate("small4", "tiny", "fcfs", export=prefix, disable_schedule_tracing=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_jobs.csv", "out_machine_states.csv",
                                                           "out_schedule.csv"]
