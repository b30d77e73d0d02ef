"""Figure 5.1 (Batsim thesis §5.5.1-5.5.3): the parallel-task workload generator on a small SWF
excerpt, and experiments/placement_network/run.py end to end on a tiny sweep."""

from __future__ import annotations

import csv
import subprocess

import pytest

from joulesim.simulator.workload.workload_loader import load_workload
from joulesim.workload_tools.ptask_from_swf import (
    PtaskParams,
    eligible_jobs,
    make_ptask_workload,
    pick_jobs,
    ptask_workload,
)
from joulesim.workload_tools.swf import write_workload

from conftest import REPO_ROOT, experiment_command

SCRIPT = experiment_command("placement_network")  # run from the repository root (cwd=REPO_ROOT)
HEADER = "; Version: 2.2\n; Computer: test\n; MaxNodes: 64\n; MaxProcs: 64\n;\n"
H = 3600


def swf_line(job, runtime, alloc, req_procs=-1, req_time=-1, submit=0):
    fields = [job, submit, 0, runtime, alloc, -1, -1, req_procs, req_time, -1, 1, 1, 1, -1, 1, -1, -1, -1]
    return " ".join(str(f) for f in fields)


# (job, run time, allocated procs, requested procs, requested time), and whether it is eligible
# for [1 h, 4 h] and <= 16 hosts.
EXCERPT = [
    ((1, H - 1, 4, 4, 2 * H), False),  # just under 1 h
    ((2, H, 4, 4, 2 * H), True),  # exactly 1 h: bounds are inclusive
    ((3, 4 * H, 16, 16, 5 * H), True),  # exactly 4 h, exactly one cluster
    ((4, 4 * H + 1, 2, 2, 5 * H), False),  # just over 4 h
    ((5, 2 * H, 17, 17, 3 * H), False),  # wider than a cluster
    ((6, 2 * H, -1, 8, 3 * H), True),  # allocated unknown: requested processors
    ((7, 2 * H, -1, -1, 3 * H), False),  # no size at all
    ((8, 3 * H, 1, 1, -1), True),  # requested time unknown
    ((9, 2 * H + 30, 12, 12, 3 * H), True),
    ((2, 2 * H, 4, 4, 3 * H), False),  # repeated job number: the first line wins
]


@pytest.fixture
def excerpt(tmp_path) -> str:
    path = tmp_path / "excerpt.swf"
    path.write_text(HEADER + "\n".join(swf_line(j, r, a, q, t) for (j, r, a, q, t), _ in EXCERPT) + "\n")
    return str(path)


def test_selection_keeps_jobs_within_bounds_and_one_cluster(excerpt):
    eligible = eligible_jobs(excerpt, p_lower=H, p_upper=4 * H, max_size=16)
    assert [j.job for j in eligible] == [rec[0] for rec, ok in EXCERPT if ok]
    assert all(H <= j.runtime <= 4 * H and 1 <= j.size <= 16 for j in eligible)
    assert {j.job: j.size for j in eligible}[6] == 8  # from the requested processors


def test_amounts_walltimes_and_release(excerpt, tmp_path):
    eligible = eligible_jobs(excerpt)
    params = PtaskParams(f_comp=1e6, f_comm=3e7, f_wall=1e3, nb_res=128)
    workload = ptask_workload(eligible, params)
    by_id = {job["id"]: job for job in workload["jobs"]}
    for source in eligible:
        job = by_id[source.job]
        profile = workload["profiles"][job["profile"]]
        assert job["subtime"] == 0
        assert job["res"] == source.size
        assert profile == {"type": "parallel_homogeneous", "cpu": source.runtime * 1e6,
                           "com": source.runtime * 3e7}
        assert job["walltime"] == max(source.requested_time, source.runtime * 1e3)
    # A request larger than run time x F_w wins.
    small_factor = ptask_workload(eligible, PtaskParams(f_wall=1.0))
    assert {j["id"]: j["walltime"] for j in small_factor["jobs"]}[3] == 5 * H
    # Without F_comm, no communication; the file loads as a Batsim workload.
    path = tmp_path / "w.json"
    write_workload(ptask_workload(eligible, PtaskParams(nb_res=128)), str(path))
    loaded = load_workload(str(path), "w0")
    assert len(loaded.jobs) == len(eligible)
    assert all(p["com"] == 0 for p in loaded.profiles.values())


def test_pick_is_deterministic_by_seed(tmp_path):
    lines = [swf_line(1000 + i, H + 37 * i, 1 + i % 16, req_time=5 * H) for i in range(200)]
    path = tmp_path / "many.swf"
    path.write_text(HEADER + "\n".join(lines) + "\n")
    eligible = eligible_jobs(str(path))
    assert len(eligible) == 200
    first = [j.job for j in pick_jobs(eligible, 30, seed=7)]
    assert first == [j.job for j in pick_jobs(eligible, 30, seed=7)]
    assert first != [j.job for j in pick_jobs(eligible, 30, seed=8)]
    assert len(set(first)) == 30 and first == sorted(first)  # distinct, in trace order
    assert make_ptask_workload(str(path), 30, 7) == ptask_workload(pick_jobs(eligible, 30, 7))
    with pytest.raises(ValueError, match="only 200 are eligible"):
        pick_jobs(eligible, 201, seed=0)


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError, match="f_comm"):
        PtaskParams(f_comm=-1)
    with pytest.raises(ValueError, match="p_lower"):
        eligible_jobs("unused.swf", p_lower=2 * H, p_upper=H)


# ----------------------------------------------------------------------------- the script
EXPECTED_COLUMNS = ["variant", "seed", "f_comm", "makespan_s", "mean_waiting_time_s", "nb_jobs",
                    "nb_jobs_killed", "wall_time_s"]
VARIANTS = {"basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local"}


def test_script_tiny_sweep(shared_data, tmp_path):
    trace = shared_data / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"
    proc = subprocess.run(
        [*SCRIPT, "--seeds", "1", "--fcomm-steps", "2", "--jobs", "20",
         "--workers", "2", "--trace", str(trace), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr

    with open(tmp_path / "results.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == EXPECTED_COLUMNS
        rows = list(reader)
    assert {r["variant"] for r in rows} == VARIANTS
    assert {float(r["f_comm"]) for r in rows} == {0.0, 1e7}
    assert len(rows) == 10 and all(int(r["nb_jobs"]) == 20 for r in rows)
    makespan = {(r["variant"], r["seed"], float(r["f_comm"])): float(r["makespan_s"]) for r in rows}
    for variant in VARIANTS:
        # Communication can only slow jobs down: never a shorter schedule than without it.
        assert makespan[(variant, "0", 1e7)] >= makespan[(variant, "0", 0.0)] > 0
    assert "| basic |" in (tmp_path / "results.md").read_text()
    for name in ("fig5_1_makespan_vs_fcomm.png", "makespan_relative_to_basic.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_script_without_trace(tmp_path):
    proc = subprocess.run(
        [*SCRIPT, "--trace", str(tmp_path / "absent.swf.gz"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert proc.returncode == 2
    assert "not found" in proc.stderr and "../shared/data" in proc.stderr


# ----------------------------------------------------------------------------- results/ and the README (issue 48)
def _run_module():
    from conftest import load_experiment_script

    return load_experiment_script("placement_network")


@pytest.mark.parametrize("argv", [
    ["--seeds", "5"], ["--fcomm-stride", "4"], ["--fcomm-steps", "20"], ["--jobs", "100"],
    ["--variants", "basic,local"], ["--out", "/tmp/elsewhere"], ["--trace", "/tmp/other.swf.gz"], ["--quick"],
    ["--host-link-bw", "1.25e8"], ["--host-link-bw", "1e9", "--fcomm-stride", "4"],
    ["--host-link-bw", "1.25e8", "--fcomm-stride", "4", "--seeds", "5"],
])
def test_a_reduced_run_never_writes_the_committed_results(argv):
    run = _run_module()
    assert run.results_folder(run.parse_args(argv)) is None


def test_the_two_whole_sweeps_write_their_results_folders():
    run = _run_module()
    assert run.results_folder(run.parse_args([])) == run.RESULTS
    # Workers and the default output folder, given explicitly, change nothing of the figures.
    assert run.results_folder(run.parse_args(["--workers", "1", "--out", str(run.DEFAULT_OUT)])) == run.RESULTS
    host = run.parse_args(["--host-link-bw", "1.25e8", "--fcomm-stride", "4"])
    assert run.results_folder(host) == run.RESULTS / "hostlink_1.25e8"
    assert run.default_out(host.host_link_bw) != run.DEFAULT_OUT  # the two sweeps do not share a folder


def test_quick_refuses_sweep_options():
    proc = subprocess.run([*SCRIPT, "--quick", "--seeds", "3"], capture_output=True, text=True, timeout=60,
                          cwd=REPO_ROOT)
    assert proc.returncode == 2 and "drop --seeds" in proc.stderr


# Mean makespan / basic's at F_comm > 0 and spread across seeds (coefficient of variation) of a
# synthetic sweep: one where the thesis's five findings all hold, one where none does.
THESIS_LIKE = {"basic": (1.0, 0.15), "best_effort_contiguous": (0.85, 0.2), "best_effort_local": (0.6, 0.3),
               "contiguous": (0.3, 0.1), "local": (0.27, 0.05)}
AS_PRINTED = {"basic": (1.0, 0.05), "best_effort_contiguous": (1.0, 0.05), "best_effort_local": (0.998, 0.05),
              "contiguous": (1.02, 0.05), "local": (0.996, 0.05)}


def _write_sweep(folder, shape: dict, killed_from: float | None) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    f_comms = [0.0, 1e7, 2e7, 3e7]
    with open(folder / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(EXPECTED_COLUMNS)
        for variant, (factor, cv) in shape.items():
            for seed, z in enumerate((-1, 0, 1)):  # standard deviation 1 (ddof=1): the spread is cv
                for f_comm in f_comms:
                    mean = (1e6 + 0.3 * f_comm) * (factor if f_comm > 0 else 1.0)
                    killed = int(killed_from is not None and f_comm >= killed_from)
                    writer.writerow([variant, seed, f_comm, mean * (1 + cv * z), 10.0, 300, killed, 1.0])
    (folder / "workload.json").write_text(json.dumps(
        {"job_lines": 1000, "eligible": 100, "eligible_by_size": {"1": 30, "4": 14, "8": 10, "16": 46}}))
    (folder / "run.json").write_text(json.dumps(
        {"command": "python -m experiments.placement_network.run", "date": "2026-01-01", "commit": "abc1234",
         "wall_s": 100.0, "cpu": "a CPU", "cores": 2, "load_average_at_end": 1.0, "event_grouping": "batsim",
         "seeds": [0, 1, 2], "f_comm": f_comms, "variants": list(shape), "runs": 60,
         "decider": "conservative, in-process (Python API)"}))


def test_the_readme_is_written_from_results_and_checks_the_thesis_findings(tmp_path):
    from experiments.readme_results import loose_numbers, render_readme, source_numbers

    run = _run_module()
    _write_sweep(tmp_path, AS_PRINTED, killed_from=2e7)
    _write_sweep(tmp_path / run.HOST_LINK_RESULTS, THESIS_LIKE, killed_from=None)
    block, figures = run.readme_figures(tmp_path)
    readme = run.HERE / "README.md"
    text = render_readme(readme.read_text(), block, figures)  # every marker's key is a figure
    assert loose_numbers(text, source_numbers(run.HERE)) == []
    assert figures["hostlink.findings"] == "all five findings appear"
    assert figures["printed.findings"] == "none of the five findings appears"
    assert figures["printed.locality"].startswith("barely")  # below contiguous, within 1 % of basic
    assert figures["printed.stable"] == "no (spreads 0.050 for all)"
    assert figures["printed.first_kill"] == "2e7" and figures["hostlink.killed"] == "no job reaches its walltime"
    assert figures["trace.sizes"] == "46 of 16 processors, 30 of 1, 14 of 4, 10 of 8"
    assert "20 seeds" not in block and "3 seeds x 4 F_comm x 5 variants = 60 runs" in block
