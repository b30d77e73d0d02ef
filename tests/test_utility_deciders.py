"""Utility-ordered deciders (seed 003): wfp, unicef, utility; schedules computed by hand.

Every case runs on 4 hosts; job A (t=0, 4 hosts, 100 s) fills the platform, so the jobs
submitted meanwhile are all waiting at t=100 and the order decides who starts. Delays equal
walltimes unless said otherwise. Scores are written in the comments (age = now - subtime).
"""

from __future__ import annotations

import json
import math

import pytest

import joulesim
from joulesim.deciders import load_decider
from joulesim.deciders.batch.ordered_policy import JobFacts
from joulesim.deciders.batch.utility_functions import (
    FORM_ALIASES,
    PAPER_FUNCTIONS,
    learn_forms,
    load_function_file,
    resolve_form,
    utility_function,
)
from joulesim.deciders.batch.utility_policies import unicef_score, wfp3_score
from joulesim.deciders.common.queue_order import SUBMISSION_ORDER, ScoreOrder
from joulesim.deciders.common.waiting_queue import WaitingQueue
from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError

from conftest import write_platform

Job = tuple  # (id, subtime, res, walltime or None, delay)


def workload(jobs: list[Job], profiles: dict | None = None) -> dict:
    out, all_profiles = [], dict(profiles or {})
    for name, subtime, res, walltime, delay in jobs:
        profile = delay if isinstance(delay, str) else f"d{delay:g}"
        all_profiles.setdefault(profile, {"type": "delay", "delay": delay})
        job = {"id": name, "subtime": subtime, "res": res, "profile": profile}
        if walltime is not None:
            job["walltime"] = walltime
        out.append(job)
    return {"nb_res": 4, "jobs": out, "profiles": all_profiles}


def run(tmp_path, decider: str, jobs: list[Job], profiles: dict | None = None, forward: bool = False,
        **options: str):
    return joulesim.simulate(write_platform(tmp_path, 4), workload(jobs, profiles), decider, options=options,
                             forward_profiles_on_submission=forward).jobs


def starts(tmp_path, decider: str, jobs: list[Job], **options: str) -> dict[str, float]:
    table = run(tmp_path, decider, jobs, **options)
    return dict(zip(table.job_id, table.starting_time))


# --------------------------------------------------------------------------- WFP3
# At 100: C (80/20)^3*3 = 192, D (70/50)^3*1 = 2.744, B (90/100)^3*2 = 1.458: C and D start,
# B (2 hosts) waits. E arrives at 110 (nothing is free). At 120 C ends (3 free): B scores
# (110/100)^3*2 = 2.662, E (10/10)^3*3 = 3: E, although younger, goes first (at E's arrival
# B led, 2 to 0: the order is recomputed at each pass); B starts when E ends at 130.
WFP_JOBS = [("A", 0, 4, 100, 100), ("B", 10, 2, 100, 100), ("C", 20, 3, 20, 20), ("D", 30, 1, 50, 50),
            ("E", 110, 3, 10, 10)]


def test_wfp3_orders_by_age_over_runtime_cubed_times_size_recomputed_at_each_pass(tmp_path):
    assert starts(tmp_path, "wfp", WFP_JOBS) == {"A": 0, "C": 100, "D": 100, "E": 120, "B": 130}
    # FCFS for comparison: B first; C (3 hosts, 2 free) blocks D until B ends at 200.
    assert starts(tmp_path, "fcfs", WFP_JOBS) == {"A": 0, "B": 100, "C": 200, "D": 200, "E": 220}


# --------------------------------------------------------------------------- UNICEF
# At 100: E (n = 1: log2(1) = 0, score +inf) first, B 90/(1*10) = 9, C 80/(2*10) = 4,
# D 70/(1*100) = 0.7. E and B start; C (4 hosts) waits, and without backfilling so does D.
# At 110 (B ends, 3 free): C 90/20 = 4.5 > D 80/100 = 0.8, C still waits for E (ends 1100).
UNICEF_JOBS = [("A", 0, 4, 100, 100), ("B", 10, 2, 10, 10), ("C", 20, 4, 10, 10), ("D", 30, 2, 100, 100),
               ("E", 40, 1, 1000, 1000)]


def test_unicef_strict_waits_for_the_ordered_head(tmp_path):
    assert starts(tmp_path, "unicef", UNICEF_JOBS) == {"A": 0, "E": 100, "B": 100, "C": 1100, "D": 1110}


def test_unicef_easy_backfills_a_job_that_does_not_delay_the_ordered_head(tmp_path):
    # At 110 C is reserved at 1100 (E's end), no extra host; D (2 hosts, 3 free) ends at
    # 210 <= 1100: backfilled at 110. C still starts at 1100.
    got = starts(tmp_path, "unicef", UNICEF_JOBS, backfill="easy")
    assert got == {"A": 0, "E": 100, "B": 100, "D": 110, "C": 1100}


def test_unicef_easy_does_not_backfill_a_job_that_would_delay_the_ordered_head(tmp_path):
    # D now lasts 2000 s: it fits at 110 (3 free) but would end at 2110 > 1100 with no extra
    # host, so it waits; C starts at 1100, then D at C's end.
    jobs = [job if job[0] != "D" else ("D", 30, 2, 2000, 2000) for job in UNICEF_JOBS]
    assert starts(tmp_path, "unicef", jobs, backfill="easy") == {"A": 0, "E": 100, "B": 100, "C": 1100, "D": 1110}


# --------------------------------------------------------------------------- learned F1, F2
# At 100, with seed 003's coefficients (s = subtime, the simulation starting at 0):
#        F1 = 3.7388e-5 sqrt(r) n + 0.0071470 log10 s    F2 = 2e-7 r + 0.0003207 sqrt(n) + 0.0069554 log10 s
#   B    0.00738                                          0.00741
#   X    0.01827                                          0.01041
#   Y    0.01584                                          0.01459
# F1: B, Y, X: B and Y start, X (4 hosts) waits for Y's end at 20100.
# F2: B, X, Y: B starts, X waits for B's end (110), Y waits behind X (strict) until 3710.
F_JOBS = [("A", 0, 4, 100, 100), ("B", 10, 2, 10, 10), ("X", 20, 4, 3600, 3600), ("Y", 30, 1, 20000, 20000)]


def test_utility_f1_and_f2_with_the_paper_coefficients(tmp_path):
    assert starts(tmp_path, "utility", F_JOBS) == {"A": 0, "B": 100, "Y": 100, "X": 20100}  # default F1
    assert starts(tmp_path, "utility", F_JOBS, function="F1") == {"A": 0, "B": 100, "Y": 100, "X": 20100}
    assert starts(tmp_path, "utility", F_JOBS, function="F2") == {"A": 0, "B": 100, "X": 110, "Y": 3710}


def test_utility_from_a_file(tmp_path):
    # form r_plus_n, -n: widest job first (X, 4 hosts, starts at 100; then B and Y at 3700).
    path = tmp_path / "widest.json"
    path.write_text(json.dumps({"form": "r_plus_n", "coefficients": [0, -1, 0], "mae": 0.1}))
    assert starts(tmp_path, "utility", F_JOBS, function=str(path)) == {"A": 0, "X": 100, "B": 3700, "Y": 3700}


# The jobs of tests/test_policy_schedules.py: a function reduced to one term is an existing
# policy, so the composed decider must give exactly that policy's schedule.
POLICY_JOBS = [("A", 0, 3, 100, 100), ("B", 1, 3, 10, 10), ("C", 2, 4, 10, 10), ("D", 3, 1, 150, 150),
               ("E", 4, 1, 50, 50)]


@pytest.mark.parametrize("coefficients, options, same_as", [
    ([0, 0, 1], {}, "fcfs"),  # log10 s: submission order (s <= 1 ties, kept in submission order)
    ([0, 0, 1], {"backfill": "easy"}, "easy"),
    ([1, 0, 0], {}, "sjf"),  # F2 with c1 only: shortest walltime first
])
def test_one_term_functions_reproduce_fcfs_easy_and_sjf(tmp_path, coefficients, options, same_as):
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"form": "F2", "coefficients": coefficients}))
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    got = run(tmp_path, "utility", POLICY_JOBS, function=str(path), **options)[columns]
    expected = run(tmp_path, same_as, POLICY_JOBS)[columns]
    assert got.sort_values("job_id").values.tolist() == expected.sort_values("job_id").values.tolist()


# --------------------------------------------------------------------------- runtime=profile
# B and C fill the platform; B asks 100 s and runs 50, C asks 80 and runs 70. Shortest r
# first (F2 reduced to c1 r): by walltime C then B, by profile delay B then C.
RUNTIME_JOBS = [("A", 0, 4, 100, 100), ("B", 1, 4, 100, 50), ("C", 2, 4, 80, 70)]


@pytest.mark.parametrize("forward", [False, True])
def test_runtime_profile_orders_by_the_delay_of_the_profile(tmp_path, forward):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"form": "F2", "coefficients": [1, 0, 0]}))
    by_walltime = run(tmp_path, "utility", RUNTIME_JOBS, forward=forward, function=str(path))
    by_profile = run(tmp_path, "utility", RUNTIME_JOBS, forward=forward, function=str(path), runtime="profile")
    assert dict(zip(by_walltime.job_id, by_walltime.starting_time)) == {"A": 0, "C": 100, "B": 170}
    assert dict(zip(by_profile.job_id, by_profile.starting_time)) == {"A": 0, "B": 100, "C": 150}


def test_runtime_profile_works_without_walltimes(tmp_path):
    # WFP3 by delay: at 100 C (98/10)^3 beats B (99/50)^3; no walltimes anywhere.
    jobs = [("A", 0, 4, None, 100), ("B", 1, 4, None, 50), ("C", 2, 4, None, 10)]
    assert starts(tmp_path, "wfp", jobs, runtime="profile") == {"A": 0, "C": 100, "B": 110}


def test_a_job_without_walltime_under_runtime_walltime_is_a_clear_error(tmp_path):
    jobs = [("A", 0, 4, 100, 100), ("B", 1, 2, None, 10)]
    with pytest.raises(JoulesimError, match=r"decider wfp: job w0!B has no walltime.*runtime=walltime.*"
                                            r"give every job a walltime, or use --option runtime=profile"):
        run(tmp_path, "wfp", jobs)


def test_runtime_profile_refuses_profiles_that_are_not_delays(tmp_path):
    profiles = {"par": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}
    jobs = [("A", 0, 4, 100, 100), ("B", 1, 2, 100, "par")]
    with pytest.raises(JoulesimError, match=r"decider unicef: job w0!B has profile 'par' of type "
                                            r"'parallel_homogeneous'.*use runtime=walltime"):
        run(tmp_path, "unicef", jobs, profiles, runtime="profile")


# --------------------------------------------------------------------------- options and files
@pytest.mark.parametrize("name, options, message", [
    ("wfp", {"backfill": "conservative"},
     r"decider wfp: option backfill='conservative' is invalid: accepted values are 'none', 'easy'"),
    ("unicef", {"runtime": "actual"},
     r"decider unicef: option runtime='actual' is invalid: accepted values are 'walltime', 'profile'"),
    ("wfp", {"function": "F1"}, r"decider 'wfp' does not accept option\(s\) function"),
    ("utility", {"function": "F3"},
     (r"decider utility: option function='F3': cannot read utility function file 'F3'.*"
      r"give function=F1, function=F2 or the path of a JSON file")),
])
def test_invalid_options_are_clear_errors(name, options, message):
    with pytest.raises(JoulesimError, match=message):
        load_decider(name, options)


@pytest.mark.parametrize("content, problem", [
    ("{not json", r"is not valid JSON"),
    ("[1, 2, 3]", r"holds a list, not an object"),
    ('{"coefficients": [1, 2, 3]}', r"has no string 'form'"),
    ('{"form": "F9", "coefficients": [1, 2, 3]}', r"has an unknown form 'F9'"),
    ('{"form": "F1", "coefficients": [1, 2]}', r"has coefficients \[1, 2\]: three numbers of magnitude at most 1e\+100"),
    ('{"form": "F1", "coefficients": [1, "2", 3]}',
     r"has coefficients \[1, '2' \(a string: write numbers without quotes\), 3\]: three numbers"),
    ('{"form": "F1", "coefficients": [1, true, 3]}', r"has coefficients \[1, true \(a boolean, not a number\), 3\]"),
    ('{"form": "F1", "coefficients": [1, null, 3]}', r"has coefficients \[1, null, 3\]"),
    # JSON has no NaN nor Infinity; 1e400 is no double.
    ('{"form": "F1", "coefficients": [1, NaN, 3]}', r"is not valid JSON"),
    ('{"form": "F1", "coefficients": [1, Infinity, 3]}', r"is not valid JSON"),
    ('{"form": "F1", "coefficients": [1, 1e400, 3]}', r"is not valid JSON \(number is infinity"),
    # Finite but so large that a form could reach inf - inf = NaN: no queue order then.
    ('{"form": "F2", "coefficients": [1e300, -1e300, 3]}', r"has coefficients \[1e\+300, -1e\+300, 3\]: three numbers"),
    ('{"form": "F1", "coefficients": ' + "[" * 20 + "]" * 20 + "}", r"has coefficients \[a list of 1 values\]"),
    ('{"form": "F1", "coefficients": ' + "[" * 5000 + "]" * 5000 + "}", r"is not valid JSON \(depth limit exceeded"),
    ('{"form": "F1", "coefficients": [1, 2, 3, 4, 5, 6, 7, 8]}', r"has coefficients a list of 8 values"),
    ('{"form": "' + "x" * 10_000 + '", "coefficients": [1, 2, 3]}', r"has an unknown form 'x{40}\.\.\. \(10,000 characters\)'"),
    # Nested deeper than the format needs: refused before anything walks it recursively (a
    # thousand arrays deep was a RecursionError in json.load, and in the repr of the message).
    ("[" * 1000 + "]" * 1000, r"nests arrays or objects more than 32 levels deep"),
    ('{"form": "F1", "coefficients": [1, 2, 3], "fit": ' + "[" * 1000 + "]" * 1000 + "}",
     r"nests arrays or objects more than 32 levels deep"),
    ('{"form": "F1", "coefficients": ' + "[" * 900 + "]" * 900 + "}", r"nests arrays or objects more than 32 levels"),
])
def test_invalid_function_files_are_clear_errors(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(JoulesimError, match=rf"decider utility: option function='{path}': utility function file "
                                            rf"'{path}' {problem}.*expected a JSON object like"):
        load_decider("utility", {"function": str(path)})


@pytest.mark.parametrize("path, problem", [("/dev/zero", r"is a device, not a file \(it may never end\)"),
                                           ("{tmp}", "is a directory")])
def test_function_files_that_are_no_files_are_clear_errors(tmp_path, path, problem):
    # A device would be read forever; a folder was an IsADirectoryError.
    path = path.format(tmp=tmp_path)
    with pytest.raises(JoulesimError, match=rf"cannot read utility function file '{path}': it {problem}; give "):
        load_decider("utility", {"function": path})


def test_a_function_file_with_a_utf8_bom_is_read(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"form": "F2", "coefficients": [1, 2.5, -1e100]}).encode())
    function = load_function_file(str(path))
    assert (function.form, function.coefficients) == ("r_plus_sqrt_n", (1.0, 2.5, -1e100))


# --------------------------------------------------------------------------- units
def test_learned_forms_values_and_domain():
    f1, f2 = utility_function("F1"), utility_function("F2")
    assert (f1.form, f1.coefficients) == ("sqrt_r_times_n", PAPER_FUNCTIONS["F1"])
    # r = 100, n = 4, s = 1000: 0.0001352 * 10 * 0.2765352 * 4 + 0.0071470 * 3
    assert f1.value(100, 4, 1000) == pytest.approx(0.0229365023616, rel=1e-12)
    # 0.0000002 * 100 + 0.0003207 * 2 + 0.0069554 * 3
    assert f2.value(100, 4, 1000) == pytest.approx(0.0215276, rel=1e-12)
    # s <= 1 (a job submitted at the start) gives log10 term 0, not -inf.
    assert f1.value(100, 4, 0) == f1.value(100, 4, 1) == pytest.approx(0.0001352 * 10 * 0.2765352 * 4)
    assert f2.value(100, 4, -5) == pytest.approx(0.0000002 * 100 + 0.0003207 * 2)
    assert {resolve_form(a) for a in FORM_ALIASES} == {"sqrt_r_times_n", "r_plus_sqrt_n"}
    assert len(learn_forms) == 18 and "log10_r_times_n" in learn_forms and "r_plus_log10_n" in learn_forms


def test_learned_forms_take_numpy_arrays_as_the_fit_does():
    np = pytest.importorskip("numpy")
    r, n, s = np.array([0.0, 10.0, 3600.0]), np.array([1.0, 4.0, 64.0]), np.array([0.0, 1.0, 1e5])
    c = (0.5, 2.0, 3.0)
    for name, form in learn_forms.items():
        values = form(r, n, s, c)
        expected = [form(float(a), float(b), float(d), c) for a, b, d in zip(r, n, s)]
        assert values.tolist() == pytest.approx(expected), name


def test_a_function_file_as_the_fit_writes_it(tmp_path):
    path = tmp_path / "fit.json"
    path.write_text(json.dumps({"form": "log10_r_times_n", "coefficients": [1, 2, 3], "error": 0.01}))
    function = load_function_file(str(path))
    assert (function.form, function.coefficients, function.source) == ("log10_r_times_n", (1.0, 2.0, 3.0), str(path))
    assert function.value(1000, 5, 100) == pytest.approx(1 * 3 * 2 * 5 + 3 * 2)


def test_tang_scores_edge_cases():
    assert wfp3_score(JobFacts(20, 3, 20, 20), 100) == pytest.approx(192)
    assert wfp3_score(JobFacts(0, 3, 20, 20), 100) == math.inf  # r = 0
    assert unicef_score(JobFacts(10, 2, 10, 10), 100) == pytest.approx(9)
    assert unicef_score(JobFacts(1000, 1, 40, 40), 100) == math.inf  # log2(1 + 1e-20) = 0 in doubles


def _queue(*jobs: tuple[str, float, int, float]) -> tuple[WaitingQueue, dict[str, JobFacts]]:
    queue, facts = WaitingQueue(), {}
    for name, subtime, res, walltime in jobs:
        queue.append(SubmittedJob(name, subtime, res, walltime, "p"))
        facts[name] = JobFacts(walltime, res, subtime, subtime)
    return queue, facts


def test_score_orders_are_recomputed_with_the_time_and_keep_submission_order_on_ties():
    queue, facts = _queue(("B", 10, 2, 100), ("E", 110, 3, 10), ("F", 110, 3, 10))
    order = ScoreOrder(wfp3_score, highest_first=True, dynamic=True)
    for name, job_facts in facts.items():
        order.admit(name, job_facts, 110)
    assert [job.id for job in order.ordered(queue, 110)] == ["B", "E", "F"]  # 2 > 0 = 0
    assert [job.id for job in order.ordered(queue, 120)] == ["E", "F", "B"]  # 3 = 3 > 2.662
    assert [job.id for job in SUBMISSION_ORDER.ordered(queue, 120)] == ["B", "E", "F"]
    static = ScoreOrder(lambda job, now: job.r, highest_first=False, dynamic=False)
    for name, job_facts in facts.items():
        static.admit(name, job_facts, 110)
    queue.remove("E")
    static.discard("E")
    assert [job.id for job in static.ordered(queue, 500)] == ["F", "B"]


def test_runtime_reader_reads_forwarded_profiles_first_and_names_missing_ones():
    from joulesim.deciders.common.job_runtime import RuntimeReader

    reader = RuntimeReader("wfp", "profile")
    reader.begin({"profiles": {"w0": {"p": {"type": "delay", "delay": 30}}}})
    assert reader.runtime(SubmittedJob("w0!a", 0, 1, 100, "p")) == 30
    assert reader.runtime(SubmittedJob("w0!b", 0, 1, 100, "dyn", profile_data={"type": "delay", "delay": 7})) == 7
    with pytest.raises(JoulesimError, match=r"decider wfp: job w0!c has profile 'dyn', which neither "
                                            r"SIMULATION_BEGINS' profiles nor JOB_SUBMITTED gives.*runtime=walltime"):
        reader.runtime(SubmittedJob("w0!c", 0, 1, 100, "dyn"))


@pytest.mark.parametrize("decider, options", [
    ("wfp", {"backfill": "easy"}), ("unicef", {}), ("utility", {"function": "F2", "runtime": "profile"}),
])
def test_each_order_runs_as_its_own_decider_process_with_the_same_schedule(decider, options):
    # joulesim decide NAME over ZeroMQ gives the schedule the in-process run gives.
    own = joulesim.simulate("cluster32", "default", decider, options=options, in_process=False)
    inside = joulesim.simulate("cluster32", "default", decider, options=options)
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    assert own.jobs[columns].equals(inside.jobs[columns])
    assert len(own.jobs) == 400
