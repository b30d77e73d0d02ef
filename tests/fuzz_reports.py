"""Fuzzing the readers of joulesim's own outputs: `joulesim report` on damaged run outputs
(non-finite, negative or inverted times, bad allocated_resources, lines cut short, missing
columns, a folder, a FIFO or /dev/zero where a file should be, random edits) and at outputs it
cannot write (-o a folder, a FIFO, /dev/full), and `joulesim campaign report --html` on damaged
campaign folders (results table cut, bad metrics, a folder for results.csv, a corrupt parquet,
damaged run outputs, -o a file). The valid outputs are made once per worker process; each case
damages a copy. In a fork of this process or through the real command, bounded (fuzz_edc_inputs).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess

from fuzz_edc_inputs import case_folder, run_bounded, special_file
from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_text_mutation
from surface_fuzzer import joulesim_command, new_result

EXITS = (2,)
STUDY = """\
[campaign]
name = "fuzzed"
outputs = true
[[platforms]]
path = "energy2"
[[workloads]]
path = "mixed"
[[deciders]]
decider = "fcfs"
[[deciders]]
decider = "easy"
"""
TIME_COLUMNS = ["submission_time", "starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time"]


def _bases(directory: str) -> str:
    """Valid outputs, once per process: runs 'plain' (cluster32, default workload, EASY) and
    'energy' (energy2, mixed, -E), and a campaign folder 'campaign' that kept its outputs."""
    base = os.path.join(directory, f"reports_base_{os.getpid()}")
    if os.path.exists(os.path.join(base, "done")):
        return base
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    import joulesim

    joulesim.simulate("small4", "tiny", "easy", export=os.path.join(base, "plain", "out"))
    joulesim.simulate("energy2", "mixed", "easy", energy=True, export=os.path.join(base, "energy", "out"))
    with open(os.path.join(base, "study.toml"), "w") as handle:
        handle.write(STUDY)
    subprocess.run(joulesim_command("campaign", "run", os.path.join(base, "study.toml"), "--out",
                                    os.path.join(base, "campaign"), "--workers", "1"),
                   check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=300)
    open(os.path.join(base, "done"), "w").close()
    return base


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:] if line]


def _join(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n"


def _completed(header, rows):
    state = header.index("final_state")
    return [r for r in rows if len(r) > state and r[state] == "COMPLETED_SUCCESSFULLY"]


def _set_time(text: str, rng: random.Random, values: list[str]) -> str | None:
    return _set_time_in(text, rng, values)[0]


def _set_time_in(text: str, rng: random.Random, values: list[str]) -> tuple[str | None, str, str]:
    """_set_time, and the column and value it set (the same draws)."""
    header, rows = _rows(text)
    done = _completed(header, rows)
    if not done:
        return None, "", ""
    row = rng.choice(done)
    value = rng.choice(values)  # (before the column: the order in which the first version drew them)
    column = rng.choice(TIME_COLUMNS)
    row[header.index(column)] = value
    return _join(header, rows), column, value


def _jobs_op(name: str, text: str, rng: random.Random) -> tuple[str | None, str]:
    """One damage of a jobs.csv text: (new text or None when it does not apply, label)."""
    header, rows = _rows(text)
    if name == "time_non_finite":
        return _set_time(text, rng, ["inf", "-inf", "nan", "1e400", "Infinity"]), ALWAYS_INVALID
    if name == "time_negative":
        damaged, column, value = _set_time_in(text, rng, ["-5", "-1e-3", "-1e300"])
        # Batsim's --no-sched starts every job at t=0, before its submission, and writes negative
        # waiting and turnaround times: those are valid within +-2^33 s (since ebf0f2f).
        signed = column in ("waiting_time", "turnaround_time") and value != "-1e300"
        return damaged, MAYBE_VALID if signed else ALWAYS_INVALID
    if name == "time_huge":
        return _set_time(text, rng, ["1e20", "9e15", "1e308"]), ALWAYS_INVALID
    if name == "finish_before_start":
        done = _completed(header, rows)
        if not done:
            return None, ALWAYS_INVALID
        row = rng.choice(done)
        start = float(row[header.index("starting_time")])
        row[header.index("finish_time")] = f"{start - rng.choice([1, 100]):.6f}"
        return _join(header, rows), ALWAYS_INVALID
    if name == "bad_allocated_resources":
        done = _completed(header, rows)
        if not done:
            return None, ALWAYS_INVALID
        rng.choice(done)[header.index("allocated_resources")] = rng.choice(
            ["5-2", "x", "1_0", "0  1", "-1", "١", "0-", "0 1-", "9" * 30, "0-99999999999"])
        return _join(header, rows), ALWAYS_INVALID
    if name == "cut_line":
        lines = text.split("\n")
        if len(lines) < 3:
            return None, ALWAYS_INVALID
        i = rng.randrange(1, len(lines) - 1)  # a data line (the last element is after the final newline)
        if len(lines[i]) < 2:
            return None, ALWAYS_INVALID
        start = sum(len(line) + 1 for line in lines[:i])
        return text[:start + rng.randrange(1, len(lines[i]) - 1)], ALWAYS_INVALID
    if name == "missing_column":
        column = header.index(rng.choice(["finish_time", "starting_time", "job_id", "final_state", "allocated_resources"]))
        return _join([h for j, h in enumerate(header) if j != column],
                     [[v for j, v in enumerate(r) if j != column] for r in rows]), ALWAYS_INVALID
    if name == "empty":
        return "", ALWAYS_INVALID
    if name == "header_only":
        return text.split("\n")[0] + "\n", MAYBE_VALID
    if name == "mutated":
        return random_text_mutation(text, rng), MAYBE_VALID
    raise AssertionError(name)


JOBS_OPS = ["time_non_finite", "time_negative", "time_huge", "finish_before_start", "bad_allocated_resources",
            "cut_line", "missing_column", "empty", "header_only", "mutated"]


def _states_op(text: str, rng: random.Random) -> tuple[str, str]:
    header, rows = _rows(text)
    how = rng.choice(["time_non_finite", "time_negative", "count_negative", "cut_line", "mutated"])
    row = rng.choice(rows)
    if how == "time_non_finite":
        row[0] = rng.choice(["inf", "nan", "-inf"])
    elif how == "time_negative":
        row[0] = "-7"
    elif how == "count_negative":
        row[rng.randrange(1, len(row))] = "-3"
    elif how == "cut_line":
        body = _join(header, rows)
        return body[:len(body) - rng.randrange(2, max(3, len(",".join(rows[-1]))))], ALWAYS_INVALID
    else:
        return random_text_mutation(text, rng), MAYBE_VALID
    return _join(header, rows), ALWAYS_INVALID


def _replace_by_special(path: str, kind: str) -> None:
    os.unlink(path)
    folder, name = os.path.split(path)
    made = special_file(kind, folder, name)
    if made != path:
        os.symlink(made, path)


def _write(path: str, text: str | bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _run_report_case(rng: random.Random, base: str, folder: str) -> tuple[str, str, list[str]]:
    which = rng.choice(["plain", "energy"])
    run = os.path.join(folder, "run")
    shutil.copytree(os.path.join(base, which), run)
    prefix = os.path.join(run, "out")
    output = os.path.join(folder, "report.html")
    pick = rng.random()
    label = MAYBE_VALID
    if pick < 0.55:
        name = rng.choice(JOBS_OPS)
        text, label = _jobs_op(name, _read(prefix + "_jobs.csv"), rng)
        if text is None:
            name, (text, label) = "mutated", _jobs_op("mutated", _read(prefix + "_jobs.csv"), rng)
        _write(prefix + "_jobs.csv", text)
        operator = f"jobs.csv {name}"
    elif pick < 0.70:
        text, label = _states_op(_read(prefix + "_machine_states.csv"), rng)
        operator = "machine_states.csv damaged"
        _write(prefix + "_machine_states.csv", text)
    elif pick < 0.85:
        target = rng.choice(["jobs", "machine_states", "jobs", "machine_states", "schedule", "consumed_energy",
                             "pstate_changes"])
        kind = rng.choice(["folder", "fifo", "dev_zero", "missing"])
        path = f"{prefix}_{target}.csv"
        if not os.path.exists(path):
            target, path = "jobs", prefix + "_jobs.csv"
        _replace_by_special(path, kind)
        operator = f"{target}.csv is {kind}"
        if target in ("jobs", "machine_states") and not (target == "machine_states" and kind == "missing"):
            label = ALWAYS_INVALID
        if target == "consumed_energy" and kind != "missing":
            label = ALWAYS_INVALID
    else:
        kind = rng.choice(["folder", "fifo", "dev_full", "under_a_file", "proc"])
        output = {"folder": os.path.join(folder, "a_folder"), "fifo": os.path.join(folder, "page.html"),
                  "dev_full": "/dev/full", "under_a_file": os.path.join(prefix + "_jobs.csv", "r.html"),
                  "proc": "/proc/joulesim-fuzz/r.html"}[kind]
        if kind == "folder":
            os.makedirs(output)
        elif kind == "fifo":
            os.mkfifo(output)
        operator, label = f"report -o {kind}", ALWAYS_INVALID
    args = ["report", prefix, "-o", output]
    if rng.random() < 0.2:
        args[2:2] = [os.path.join(base, "plain" if which == "energy" else "energy", "out")]
    return operator, label, args


def _campaign_case(rng: random.Random, base: str, folder: str) -> tuple[str, str, list[str]]:
    campaign = os.path.join(folder, "campaign")
    shutil.copytree(os.path.join(base, "campaign"), campaign)
    results = os.path.join(campaign, "results.csv")
    out = os.path.join(folder, "plots")
    label = ALWAYS_INVALID
    how = rng.choice(["results_cut", "metric_bad", "results_folder", "parquet_corrupt", "run_damaged",
                      "run_missing", "instances_damaged", "output_a_file", "output_fifo", "results_mutated",
                      "status_junk"])
    if how not in ("parquet_corrupt", "output_a_file", "output_fifo", "run_damaged", "run_missing"):
        os.unlink(os.path.join(campaign, "results.parquet"))
    text = _read(results)
    header, rows = _rows(text)
    if how == "results_cut":
        _write(results, text[:len(text) - rng.randrange(2, 30)])
    elif how == "metric_bad":
        rng.choice(rows)[header.index(rng.choice(["makespan", "mean_waiting_time", "utilization"]))] = rng.choice(
            ["inf", "-inf", "nan", "-5", "1e400"])
        _write(results, _join(header, rows))
    elif how == "results_folder":
        os.unlink(results)
        os.makedirs(results)
    elif how == "parquet_corrupt":
        parquet = os.path.join(campaign, "results.parquet")
        with open(parquet, "rb") as handle:
            raw = handle.read()
        _write(parquet, raw[:rng.randrange(len(raw))] if rng.random() < 0.5 else b"PAR1" + b"\x00" * 64)
    elif how in ("run_damaged", "run_missing"):
        runs = os.path.join(campaign, "runs")
        run = os.path.join(runs, rng.choice(sorted(os.listdir(runs))))
        if how == "run_missing":
            shutil.rmtree(run)
            label = MAYBE_VALID  # (the page may say that this instance has no outputs)
        else:
            name = rng.choice(["time_non_finite", "time_negative", "bad_allocated_resources", "cut_line", "empty"])
            damaged, label = _jobs_op(name, _read(os.path.join(run, "out_jobs.csv")), rng)
            if damaged is None:
                damaged = ""
            _write(os.path.join(run, "out_jobs.csv"), damaged)
            how += f" ({name})"
    elif how == "instances_damaged":
        instances = os.path.join(campaign, "instances")
        target = os.path.join(instances, rng.choice(sorted(os.listdir(instances))))
        _write(target, rng.choice(["", "{", "[]", "null", '{"platform": 3}']))
        label = MAYBE_VALID
    elif how == "output_a_file":
        _write(out, "x")
    elif how == "output_fifo":
        os.mkfifo(out)
    elif how == "status_junk":
        for row in rows:
            row[header.index("status")] = rng.choice(["", "OK", "failed", "okay"])
        _write(results, _join(header, rows))
    else:
        _write(results, random_text_mutation(text, rng))
        label = MAYBE_VALID
    args = ["campaign", "report", campaign, "--html", "-o", out]
    return f"campaign {how}", label, args


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    base = _bases(directory)
    import joulesim.cli.main  # noqa: F401 - loaded before the fork: each case starts at once

    folder = case_folder(directory, "report", seed)
    try:
        if rng.random() < 0.7:
            operator, label, args = _run_report_case(rng, base, folder)
        else:
            operator, label, args = _campaign_case(rng, base, folder)
        via_cli = rng.random() < 0.2
        result = new_result(seed, operator, label, via_cli)
        return run_bounded(result, args, folder, via_cli, exits=EXITS)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
