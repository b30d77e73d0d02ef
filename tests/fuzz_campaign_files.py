"""Fuzzing campaign files (TOML): `load_study` and the instance expansion in this process,
`joulesim campaign list` through the command. Nothing runs: the file surface only (output
folders are fuzzed by fuzz_output_paths)."""

from __future__ import annotations

import os
import random

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_text_mutation
from surface_fuzzer import NOT_A_NUMBER, in_process, new_result, replace_once, through_cli

BASE = """\
[campaign]
name = "fz"
energy = [false, true]
repetitions = 1
timeout = 60
reply_timeout = 30
window = [0, 1000]

[[platforms]]
path = "small4"
name = "s4"

[[workloads]]
path = "tiny"

[[deciders]]
decider = "easy"
grid = {t_idle = [0, 300]}

[[deciders]]
decider = "inertial"
options = {period = 600}
zip = {v_ub = [10, 20], f = ["n+1", "2n"]}
"""

_SETTINGS = {
    "repetitions": ["0", "-1", "1.5", '"1"', "inf", "nan", "true", "[]"],
    "timeout": ["0", "-5", "inf", "nan", '"60"', "-inf", "1e400"],
    "reply_timeout": ["86401", "-1", "nan", "0", "inf"],
    "window": ["[10, 5]", "[0]", "[-1, 5]", "[0, nan]", "[0, inf]", '"0-5"', "[0, 1, 2]", "[5, 5]"],
    "energy": ["[]", '"yes"', "[1]", "[true, 0]"],
}


def _setting(text: str, rng: random.Random) -> tuple[str, str]:
    key = rng.choice(sorted(_SETTINGS))
    line = next(line for line in text.splitlines() if line.startswith(key + " ="))
    return f"bad_{key}", replace_once(text, line, f"{key} = {rng.choice(_SETTINGS[key])}")


def _deep(rng: random.Random) -> str:
    depth = rng.choice([1000, 5000, 100_000])
    if rng.random() < 0.5:
        return BASE.replace("energy = [false, true]", "energy = " + "[" * depth + "]" * depth)
    return BASE.replace('name = "fz"', 'name = "fz"\nx = ' + "{a = " * depth + "1" + "}" * depth)


# Each: (label, mutation of the base text). A name is the operator of a case.
TARGETED = {
    "unknown_key": lambda t, r: replace_once(t, "[campaign]\n", f"[campaign]\n{r.choice(['colour', 'Name', 'timeout '])} = 1\n"),
    "bad_setting": lambda t, r: _setting(t, r)[1],
    "number_junk_option": lambda t, r: replace_once(t, "grid = {t_idle = [0, 300]}",
                                                    f'grid = {{t_idle = ["0", "{r.choice(NOT_A_NUMBER[:8])}"]}}'),
    "nan_option": lambda t, r: replace_once(t, "options = {period = 600}",
                                            f"options = {{period = {r.choice(['nan', '-1', '0', '-inf'])}}}"),
    "unknown_option": lambda t, r: replace_once(t, "grid = {t_idle", f"grid = {{{r.choice(['tidle', 't_idel', 'T_IDLE'])}"),
    "unknown_decider": lambda t, r: replace_once(t, 'decider = "easy"', f'decider = "{r.choice(["eazy", "", "os:system"])}"'),
    "missing_platform": lambda t, r: replace_once(t, 'path = "small4"', f'path = "{r.choice(["nowhere.xml", "/", "."])}"'),
    "zip_lengths": lambda t, r: replace_once(t, 'f = ["n+1", "2n"]', 'f = ["n+1"]'),
    "deep_nesting": lambda t, r: _deep(r),
    "huge_grid": lambda t, r: replace_once(t, "grid = {t_idle = [0, 300]}", "grid = {" + ", ".join(
        f"{k} = [{', '.join(str(v) for v in range(100))}]" for k in ("t_idle", "compute_pstate", "sleep_pstate"))
        + "}").replace("options = {period = 600}", "grid = {" + ", ".join(
        f"{k} = [{', '.join(str(v + 1) for v in range(100))}]" for k in ("period", "t_idle", "compute_pstate",
                                                                          "sleep_pstate", "v_ub")) + "}"),
    "huge_repetitions": lambda t, r: replace_once(t, "repetitions = 1", f"repetitions = {r.choice([10**12, 2**62])}"),
    "mmax_junk": lambda t, r: replace_once(t, 'name = "s4"', 'name = "s4"\nmmax = ' + r.choice(["-1", "1.5", '"4"'])),
    "command_without_endpoint": lambda t, r: replace_once(t, 'decider = "easy"', 'command = ["true"]'),
    "options_for_command": lambda t, r: replace_once(t, 'decider = "inertial"', 'command = ["x", "{endpoint}"]'),
    "weeks_on_a_file": lambda t, r: replace_once(t, 'path = "tiny"', 'path = "tiny"\nweeks = [1]'),
    "not_utf8": lambda t, r: t.replace('name = "fz"', 'name = "f\udcffz"'),
}
# Names that must not lead outside the results' parent folder once accepted (checked below).
NAMES = ["", "../../x", "..", ".", "a/b", "/tmp/abs", "x\x00y", "é", " ", "~", "-rf", "a" * 300, "con"]


def _escapes(study) -> str | None:
    from joulesim.campaign.runner import default_directory

    folder = default_directory(study)
    if not study.name.strip() or os.path.dirname(folder) or folder in (".", "..") or folder.startswith("_"):
        return f"campaign name {study.name!r} accepted: results would go to {folder!r}"
    return None


def run_case(seed: int, directory: str) -> "CaseResult":  # noqa: F821 - reply_fuzzer.CaseResult
    rng = random.Random(seed)
    choice = rng.random()
    if choice < 0.6:
        operator = rng.choice(sorted(TARGETED))
        label, text = ALWAYS_INVALID, TARGETED[operator](BASE, rng)
    elif choice < 0.7:
        operator, label = "name", MAYBE_VALID
        text = BASE.replace('name = "fz"', 'name = "' + rng.choice(NAMES).replace("\\", "\\\\").replace(
            "\x00", "\\u0000") + '"')
    else:
        operator, label, text = "random", MAYBE_VALID, random_text_mutation(BASE, rng)
    via_cli = rng.random() < 0.15
    result = new_result(seed, operator, label, via_cli)
    result.mutated = text[:300].encode("utf-8", "replace")
    path = os.path.join(directory, f"campaign{seed}.toml")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(text)
    try:
        if via_cli:
            def listed_name() -> str | None:
                from joulesim.campaign.study_file import load_study
                return _escapes(load_study(path))
            return through_cli(result, ["campaign", "list", path], directory,
                               check=listed_name if operator == "name" else None)
        from joulesim.campaign.runner import instances_of

        return in_process(result, lambda: instances_of(path), lambda found: _escapes(found[0]))
    finally:
        os.unlink(path)
