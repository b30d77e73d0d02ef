"""Fuzzing `--option key=value` of every shipped decider (`joulesim decide --list`): one option
given a hostile or odd value (or a mistyped name), then a short run on a platform the decider
suits, in this process or through `joulesim run` (in-process decider or its own process).
A value the option can never take must be refused, at construction or at the run's start."""

from __future__ import annotations

import os
import random

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID
from surface_fuzzer import NOT_A_NUMBER, ODD_NUMBERS, in_process, new_result, through_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE = (os.path.join(REPO, "experiments", "irmasim_grid", "exp2", "platform.json"),
        os.path.join(REPO, "experiments", "irmasim_grid", "exp2", "workload.json"), True)
PLAIN = ("small4", "tiny", False)
WALLTIMES = ("small4", "small", False)  # every job has a walltime (the ordered policies need one)
ENERGY = ("energy2", "tiny", True)

_INF = {"inf", "-inf", "+inf", "Infinity", "1e400", "-1e400", "1e309"}


def number(minimum: float = float("-inf"), maximum: float = float("inf"), allow_inf: bool = False,
           integer: bool = False, excluded: bool = False) -> dict:
    return {"kind": "int" if integer else "float", "min": minimum, "max": maximum, "inf": allow_inf,
            "excluded": excluded}


def choice(*values: str) -> dict:
    return {"kind": "choice", "values": values}


BOOL = {"kind": "bool"}
FILE = {"kind": "file"}
_SHUTDOWN = {"t_idle": number(0, allow_inf=True), "compute_pstate": number(0, integer=True),
             "sleep_pstate": number(0, integer=True)}
_BUDGET = {"budget": number(0, allow_inf=True), "start": number(0), "end": number(0, allow_inf=True),
           "p_idle": number(0), "p_computing": number(0), **_SHUTDOWN}
_ORDERED = {"backfill": choice("none", "easy"), "runtime": choice("walltime", "profile")}

#: decider -> (platform, workload, energy), {option: what it accepts}
CATALOGUE: dict[str, tuple[tuple, dict[str, dict]]] = {
    "fcfs": (PLAIN, {}), "sjf": (PLAIN, {}), "rejecter": (PLAIN, {}),
    "easy": (ENERGY, dict(_SHUTDOWN)),
    "conservative": (PLAIN, {"placement": choice("basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local"),
                             "cluster_size": number(1, integer=True)}),
    "proportional": (ENERGY, {"rho": number(0, 1), **_SHUTDOWN}),
    "inertial": (ENERGY, {"period": number(0, excluded=True), "v_ub": number(0, allow_inf=True),
                          "f": choice("n+1", "2n"), "future_switches": BOOL, **_SHUTDOWN}),
    "powercap": (ENERGY, dict(_BUDGET)),
    "energybud": (ENERGY, {**_BUDGET, "period": number(0, excluded=True)}),
    "reducepc": (ENERGY, {**_BUDGET, "period": number(0, excluded=True)}),
    "heuristic": (NODE, {"job_selection": choice("random", "first", "shortest", "longest", "smallest", "low_mem",
                                                 "low_mem_ops"),
                         "resource_selection": choice("random", "first", "high_gflops", "high_cores", "low_cores",
                                                      "high_mem", "high_mem_bw", "low_power", "high_power"),
                         "seed": number(0, integer=True)}),
    "pcbe": (NODE, {"criterion": choice("energy", "edp"), "job_prio": choice("lo_first", "hi_first"),
                    "node_prio": choice("lo_first", "hi_first"), "starvation": number(0, allow_inf=True)}),
    "wfp": (WALLTIMES, dict(_ORDERED)), "unicef": (WALLTIMES, dict(_ORDERED)),
    "utility": (WALLTIMES, {**_ORDERED, "function": FILE}),
    "broker": (None, {"algorithm": choice("S", "P"), "h_diff": number(0, allow_inf=True),
                      "t_idle": number(0, allow_inf=True), "start_utc_hour": number(0, 24)}),
    "rl": (NODE, {"model": FILE, "mode": choice("greedy", "sample"), "seed": number(0, integer=True)}),
}


def _invalid_value(spec: dict, rng: random.Random, directory: str) -> str:
    kind = spec["kind"]
    if kind in ("float", "int"):
        junk = [v for v in NOT_A_NUMBER if not (spec["inf"] and v in _INF)]
        if spec["min"] > float("-inf"):
            junk += [repr(spec["min"] - 1), "-1e-9" if spec["min"] == 0 else repr(spec["min"] - 0.5)]
            if spec.get("excluded"):
                junk.append(repr(spec["min"]))
        if spec["max"] < float("inf"):
            junk.append(repr(spec["max"] + 0.5))
        if kind == "int":
            junk += ["1.5", "2.0e0", "0.5"]
        return rng.choice(junk)
    if kind == "choice":
        return rng.choice(["", "x", spec["values"][0].upper() + "?", spec["values"][0] + " x", "١", "none,easy"])
    if kind == "bool":
        return rng.choice(["maybe", "2", "", "tru", "١", "-1"])
    return rng.choice([os.path.join(directory, "no_such_file.json"), directory, "/dev/null", "/proc/self/mem", ""])


def _odd_value(spec: dict, rng: random.Random) -> str:
    kind = spec["kind"]
    if kind in ("float", "int"):
        return rng.choice(ODD_NUMBERS + (["inf"] if spec["inf"] else []))
    if kind == "choice":
        return rng.choice(list(spec["values"]) + [f" {spec['values'][0]} "])
    if kind == "bool":
        return rng.choice(["true", "false", "1", "0", "yes", "No", "TRUE"])
    return rng.choice(["F1", "F2", "f1"])


def _typo(name: str, rng: random.Random) -> str:
    i = rng.randrange(len(name))
    return rng.choice([name[:i] + name[i + 1:], name.upper(), name + "s", name.replace("_", "")]) or "x"


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    decider = rng.choice(sorted(CATALOGUE))
    (scenario, accepted) = CATALOGUE[decider]
    options: dict[str, str] = {}
    if decider == "rl":
        from fuzz_rl_inputs import trained_model
        options["model"] = trained_model(directory)
    if decider == "broker":
        from fuzz_prices import WORKLOAD, _PROPS, platform
        import json
        path = os.path.join(directory, f"broker_platform_{os.getpid()}.json")
        if not os.path.exists(path):
            with open(path + ".tmp", "w") as handle:
                json.dump(platform(_PROPS), handle)
            with open(path.replace("platform", "workload") + ".tmp", "w") as handle:
                json.dump(WORKLOAD, handle)
            os.replace(path.replace("platform", "workload") + ".tmp", path.replace("platform", "workload"))
            os.replace(path + ".tmp", path)
        scenario = (path, path.replace("platform", "workload"), True)
    choice_ = rng.random()
    if not accepted or choice_ < 0.12:
        name = _typo(rng.choice(sorted(accepted)), rng) if accepted else rng.choice(["t_idle", "x", "seed"])
        if name in accepted:
            name += "_x"
        operator, label, value = f"{decider}:unknown_option", ALWAYS_INVALID, "1"
    elif choice_ < 0.65:
        name = rng.choice(sorted(accepted))
        value = _invalid_value(accepted[name], rng, directory)
        operator, label = f"{decider}:{name}:invalid", ALWAYS_INVALID
    else:
        name = rng.choice(sorted(accepted))
        value = _odd_value(accepted[name], rng)
        operator, label = f"{decider}:{name}:odd", MAYBE_VALID
    options[name] = value
    platform_, workload, energy = scenario
    if workload == "small":
        from reply_fuzzer import _workload_path
        workload = _workload_path("small", directory)
    via_cli = rng.random() < 0.15
    result = new_result(seed, operator, label, via_cli)
    result.mutated = f"-d {decider} --option {name}={value!r}".encode("utf-8", "replace")
    if via_cli:
        two_processes = rng.random() < 0.3
        args = ["run", "-p", platform_, "-w", workload, "-d", decider, "-e", os.path.join(directory, f"opt{seed}", "out")]
        args += ([] if two_processes else ["--in-process"]) + (["-E"] if energy else [])
        args += [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
        return through_cli(result, args, directory)
    import joulesim

    return in_process(result, lambda: joulesim.simulate(platform_, workload, decider, options=options, energy=energy,
                                                         time_limit=30))
