"""Fuzzing node-model inputs: joulesim's native node-platform JSON, IRMaSim's platform form
and cpu_ops workloads, run on a few jobs with the node deciders (in this process, or
`joulesim run --in-process` through the command)."""

from __future__ import annotations

import json
import os
import random

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_text_mutation
from surface_fuzzer import in_process, new_result, through_cli

NATIVE = {"model": "modelV1", "nodes": [
    {"type": "fast", "count": 2, "memory": 32, "processors": [
        {"count": 1, "cores": 4, "clock_rate": 3.4, "dpflops_per_cycle": 1, "static_power": 6.14,
         "dynamic_power": 5.59, "min_power": 0.05, "b": -1.85e-05, "c": 32000, "da": 1.75, "db": 2000,
         "dc": 50000, "dd": 6000}]},
    {"type": "big", "count": 1, "memory": 64, "processors": [
        {"count": 2, "cores": 8, "clock_rate": 2.1, "dpflops_per_cycle": 2, "static_power": 20.0,
         "dynamic_power": 3.0, "min_power": 0.1, "b": -1.85e-05, "c": 21000, "da": 1.0, "db": 169,
         "dc": 25000, "dd": 100}]}]}
WORKLOAD = {"profiles": {"A": {"type": "cpu_ops", "req_ops": 2e10, "ipc": 1, "mem_vol": 10},
                         "B": {"type": "cpu_ops", "req_ops": 5e10, "ipc": 2, "mem_vol": 1000}},
            "jobs": [{"id": f"J{i}", "subtime": 0.5 * i, "res": 1 + i % 4, "mem": 4, "req_time": 20.0, "profile": "AB"[i % 2]}
                     for i in range(8)]}
DECIDERS = ["heuristic", "pcbe", "easy", "fcfs"]

_NEGATIVE = [-1, -32, -1e-9, -1e300]
_JUNK = ["١٢", "32", None, [], {}, True, "1_0", "nan"]


def _node(doc, rng):
    return rng.choice(doc["nodes"])


def _processor(doc, rng):
    return rng.choice(_node(doc, rng)["processors"])


def _set(target: dict, key: str, value) -> None:
    target[key] = value


# name -> (which document: "platform" or "workload", mutation of the parsed document)
TARGETED = {
    "negative_memory": ("platform", lambda d, r: _set(_node(d, r), "memory", r.choice(_NEGATIVE))),
    "bad_count": ("platform", lambda d, r: _set(_node(d, r), "count", r.choice([-1, 1.5, "2", True, 0]))),
    "bad_cores": ("platform", lambda d, r: _set(_processor(d, r), "cores", r.choice([0, -4, 2.5, "4", 1e30]))),
    "bad_clock": ("platform", lambda d, r: _set(_processor(d, r), r.choice(["clock_rate", "dpflops_per_cycle"]),
                                                r.choice([0, -3.4, "inf", "3.4", None, 1e400]))),
    "negative_power": ("platform", lambda d, r: _set(_processor(d, r), r.choice(["static_power", "dynamic_power"]),
                                                     r.choice(_NEGATIVE + ["nan", 1e400]))),
    "min_power_out_of_range": ("platform", lambda d, r: _set(_processor(d, r), "min_power", r.choice([-0.1, 1.5, 1e9]))),
    "junk_value": ("platform", lambda d, r: _set(_processor(d, r), r.choice(["cores", "clock_rate", "c", "dd"]),
                                                 r.choice(_JUNK))),
    "no_nodes": ("platform", lambda d, r: _set(d, "nodes", r.choice([[], {}, None, "x"]))),
    "negative_job_memory": ("workload", lambda d, r: _set(r.choice(d["jobs"]), "mem", r.choice(_NEGATIVE))),
    "tiny_ipc": ("workload", lambda d, r: _set(d["profiles"][r.choice("AB")], "ipc", r.choice([1e-300, 0, -1, 5e-324]))),
    "bad_req_ops": ("workload", lambda d, r: _set(d["profiles"][r.choice("AB")], "req_ops",
                                                  r.choice([-1, 1e400, "1e10", None, 1e300]))),
    "negative_mem_vol": ("workload", lambda d, r: _set(d["profiles"][r.choice("AB")], "mem_vol", r.choice(_NEGATIVE))),
    "job_too_large": ("workload", lambda d, r: _set(r.choice(d["jobs"]), "res", r.choice([17, 1000, 10**12, 0, -1]))),
    "too_many_tasks_per_node": ("workload", lambda d, r: r.choice(d["jobs"]).update(nodes=1, ntasks_per_node=9, res=9)),
}
_HUGE = ("platform", lambda d, r: _set(_node(d, r), "count", r.choice([10**6, 10**9, 2**63])))


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    platform, workload = json.loads(json.dumps(NATIVE)), json.loads(json.dumps(WORKLOAD))
    choice = rng.random()
    mutated_text = None
    if choice < 0.6:
        operator = rng.choice(sorted(TARGETED))
        label, (which, mutate) = ALWAYS_INVALID, TARGETED[operator]
        mutate(platform if which == "platform" else workload, rng)
    elif choice < 0.65:
        operator, label = "huge_node_count", MAYBE_VALID  # may run, or be refused with a limit; never a crash
        _HUGE[1](platform, rng)
    else:
        operator, label = "random", MAYBE_VALID
        which = rng.choice(["platform", "workload"])
        mutated_text = random_text_mutation(json.dumps(platform if which == "platform" else workload, indent=1), rng)
    texts = {"platform": json.dumps(platform), "workload": json.dumps(workload)}
    if mutated_text is not None:
        texts[which] = mutated_text
    paths = {k: os.path.join(directory, f"node{seed}_{k}.json") for k in texts}
    for key, text in texts.items():
        with open(paths[key], "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    decider = rng.choice(DECIDERS)
    energy = rng.random() < 0.7
    via_cli = rng.random() < 0.15
    result = new_result(seed, f"{operator}/{decider}", label, via_cli)
    result.mutated = (texts["workload"] if operator in TARGETED and TARGETED[operator][0] == "workload"
                      or (mutated_text is not None and which == "workload") else texts["platform"])[:300].encode(
        "utf-8", "replace")
    try:
        if via_cli:
            return through_cli(result, ["run", "--in-process", "-p", paths["platform"], "-w", paths["workload"],
                                        "-d", decider, "-e", os.path.join(directory, f"node{seed}", "out")]
                               + (["-E"] if energy else []), directory)
        import joulesim

        return in_process(result, lambda: joulesim.simulate(paths["platform"], paths["workload"], decider,
                                                             energy=energy, time_limit=30))
    finally:
        for path in paths.values():
            os.unlink(path)
