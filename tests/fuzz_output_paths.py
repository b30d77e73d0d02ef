"""Fuzzing output paths: every command that writes (-e, -o, --out, keys DIR) pointed at a
place it cannot write (under a regular file, in /proc or /sys, a name too long, a folder
where a file goes, a file where a folder goes, a campaign whose results.csv is a folder).
Each must be one clean error, exit 2, before any long work; never a traceback. Through the
real command, or click's CliRunner in this process (same code, no interpreter start-up)."""

from __future__ import annotations

import os
import random
import sys
import traceback

from hostile_mutations import ALWAYS_INVALID
from surface_fuzzer import BAD_INPUT_EXIT, CaseOvertime, classify_exit, new_result, through_cli

CAMPAIGN = """\
[campaign]
name = "out"
[[platforms]]
path = "small4"
[[workloads]]
path = "tiny"
[[deciders]]
decider = "fcfs"
"""


def _inputs(directory: str) -> dict[str, str]:
    """Valid inputs of the commands, made once per worker process."""
    folder = os.path.join(directory, f"outputs_inputs_{os.getpid()}")
    paths = {"campaign": os.path.join(folder, "study.toml"), "config": os.path.join(folder, "train.toml"),
             "scores": os.path.join(folder, "scores.csv"), "file": os.path.join(folder, "a_file"),
             "folder": os.path.join(folder, "a_folder")}
    if not os.path.exists(folder):
        import random as _random

        from fuzz_learn_inputs import _scores_table
        from fuzz_rl_inputs import BASE_CONFIG

        os.makedirs(paths["folder"])
        for key, text in (("campaign", CAMPAIGN), ("config", BASE_CONFIG), ("file", "x")):
            with open(paths[key], "w") as handle:
                handle.write(text)
        _scores_table(_random.Random(0)).to_csv(paths["scores"], index=False)
    return paths


def _bad_path(kind: str, paths: dict[str, str], directory: str, seed: int) -> str:
    return {"under_a_file": os.path.join(paths["file"], "x", "out"),
            "proc": f"/proc/joulesim-fuzz-{seed}/out", "sys": f"/sys/joulesim-fuzz-{seed}",
            "name_too_long": os.path.join(directory, "x" * 300, "out"),
            "folder_for_a_file": paths["folder"], "file_for_a_folder": paths["file"]}[kind]


_ANYWHERE = ["under_a_file", "proc", "sys", "name_too_long"]


def _commands(paths: dict[str, str], bad: str, directory: str, seed: int) -> dict[str, tuple[list[str], list[str]]]:
    """command name -> (arguments, kinds of bad paths that apply: an export prefix or an
    output folder may be named like an existing file or folder and still be writable)."""
    from fuzz_rl_inputs import PLATFORM, WORKLOAD, trained_model

    return {
        "run -e": (["run", "--in-process", "-p", "small4", "-w", "tiny", "-d", "easy", "-e", bad], _ANYWHERE),
        "run -e (two processes)": (["run", "-p", "small4", "-w", "tiny", "-d", "easy", "-e", bad], _ANYWHERE),
        "campaign run --out": (["campaign", "run", paths["campaign"], "--out", bad, "--workers", "1"],
                               _ANYWHERE + ["file_for_a_folder"]),
        "rl train -o": (["rl", "train", paths["config"], "-o", bad], _ANYWHERE + ["file_for_a_folder"]),
        "rl evaluate -o": (["rl", "evaluate", trained_model(directory), "-p", PLATFORM, "-w", WORKLOAD, "--runs", "1",
                            "-o", bad], _ANYWHERE + ["folder_for_a_file"]),
        "learn generate -o": (["learn", "generate", "--pairs", "1", "--permutations", "10", "--workers", "1",
                               "--no-progress", "-o", bad], _ANYWHERE + ["folder_for_a_file"]),
        "learn fit -o": (["learn", "fit", paths["scores"], "-o", bad], _ANYWHERE + ["file_for_a_folder"]),
        "workload generate -o": (["workload", "generate", "lublin", "--jobs", "5", "-o", bad],
                                 _ANYWHERE + ["folder_for_a_file"]),
        "keys generate": (["keys", "generate", bad], _ANYWHERE + ["file_for_a_folder"]),
    }


def _results_csv_a_folder(paths: dict[str, str], directory: str, seed: int) -> list[str]:
    out = os.path.join(directory, f"campaign_out{seed}")
    os.makedirs(os.path.join(out, "results.csv"))
    return ["campaign", "run", paths["campaign"], "--out", out, "--workers", "1"]


def _cli_runner(result, args: list[str]):
    from click.testing import CliRunner

    from joulesim.cli.main import main

    result.detail = "joulesim " + " ".join(args)
    outcome = CliRunner().invoke(main, args)
    if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
        if isinstance(outcome.exception, CaseOvertime):
            raise outcome.exception
        text = "".join(traceback.format_exception(*outcome.exc_info))
        return classify_exit(result, 1, outcome.stderr + text, (BAD_INPUT_EXIT,))
    return classify_exit(result, outcome.exit_code, outcome.stderr, (BAD_INPUT_EXIT,))


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    paths = _inputs(directory)
    via_cli = rng.random() < 0.3
    if rng.random() < 0.08:
        operator, args = "campaign results.csv is a folder", _results_csv_a_folder(paths, directory, seed)
    else:
        commands = _commands(paths, "BAD", directory, seed)
        name = rng.choice(sorted(commands))
        kind = rng.choice(commands[name][1])
        bad = _bad_path(kind, paths, directory, seed)
        args = [bad if a == "BAD" else a for a in commands[name][0]]
        operator = f"{name} {kind}"
    result = new_result(seed, operator, ALWAYS_INVALID, via_cli)
    result.mutated = " ".join(args)[:300].encode("utf-8", "replace")
    cwd = os.path.join(directory, f"outputs_cwd_{os.getpid()}")
    os.makedirs(cwd, exist_ok=True)
    if via_cli or args[0] == "campaign":  # a process pool is not started inside a fuzzing worker
        return through_cli(result, args, cwd)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return _cli_runner(result, args)
    finally:
        os.chdir(here)
        sys.stdout.flush()
