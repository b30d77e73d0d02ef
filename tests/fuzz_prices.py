"""Fuzzing electricity prices: the host properties price, night_price, utc_offset, day_start
and day_end of a priced platform, run with energy on (cost accounting) by EASY or by seed
004's broker, which reads the same tariffs. An accepted price must give finite costs."""

from __future__ import annotations

import json
import math
import os
import random

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID
from surface_fuzzer import NOT_A_NUMBER, ODD_NUMBERS, in_process, new_result, through_cli

_PROPS = {"A": {"cluster": "A", "price": "10", "night_price": "4", "utc_offset": "0", "day_start": "8", "day_end": "20"},
          "B": {"cluster": "B", "price": "20", "utc_offset": "+2"}}
WORKLOAD = {"nb_res": 3, "jobs": [{"id": i, "subtime": 3000 * i, "res": 1, "walltime": 40000, "profile": "p"}
                                  for i in range(6)],
            "profiles": {"p": {"type": "delay", "delay": 30000}}}
_RANGE = {"price": (0, math.inf), "night_price": (0, math.inf), "utc_offset": (-24, 24), "day_start": (0, 24),
          "day_end": (0, 24)}


def platform(props: dict[str, dict[str, str]]) -> dict:
    hosts = [{"name": f"{c.lower()}{i}", "speed": "1Gf", "wattage_per_state": [[100.0, 200.0]],
              "properties": dict(props[c])} for c, i in (("A", 0), ("B", 0), ("B", 1))]
    return {"hosts": hosts, "master": {"name": "master"}}


def _invalid_for(key: str, rng: random.Random) -> str:
    low, high = _RANGE[key]
    out_of_range = [str(low - 1), str(low - 1e-9)] + ([str(high + 0.5), "1e9"] if math.isfinite(high) else [])
    return rng.choice(NOT_A_NUMBER + out_of_range)


def _cost_problem(run) -> str | None:
    cost = run.energy_cost
    if cost is None:
        return "energy on and every host priced, yet no energy cost"
    bad = cost[~cost["cost_cents"].map(lambda v: math.isfinite(float(v)))]
    return None if bad.empty else f"non-finite costs: {bad.head(3).to_dict('records')}"


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    props = json.loads(json.dumps(_PROPS))
    cluster = rng.choice("AB")
    key = rng.choice(sorted(_RANGE))
    if rng.random() < 0.6:
        value, label = _invalid_for(key, rng), ALWAYS_INVALID
    else:
        value, label = rng.choice(ODD_NUMBERS + [str(round(rng.uniform(*_RANGE[key]) if key != "price" and
                                                            key != "night_price" else rng.uniform(0, 50), 3))]), MAYBE_VALID
    props[cluster][key] = value
    if cluster == "B" and key in ("day_start", "day_end"):
        props["B"]["night_price"] = "1"  # hours matter only with a night price
    decider = "broker" if rng.random() < 0.3 else "easy"
    options = {"algorithm": rng.choice("SP"), "h_diff": "3600"} if decider == "broker" else {}
    via_cli = rng.random() < 0.15
    result = new_result(seed, f"{key}/{decider}", label, via_cli)
    result.mutated = f"cluster {cluster}: {key}={value!r}".encode("utf-8", "replace")
    paths = {"platform": os.path.join(directory, f"price{seed}_platform.json"),
             "workload": os.path.join(directory, f"price{seed}_workload.json")}
    with open(paths["platform"], "w", encoding="utf-8") as handle:
        json.dump(platform(props), handle)
    with open(paths["workload"], "w") as handle:
        json.dump(WORKLOAD, handle)
    try:
        if via_cli:
            export = os.path.join(directory, f"price{seed}", "out")

            def costs_file() -> str | None:
                import pandas as pd
                table = pd.read_csv(export + "_energy_cost.csv")
                bad = table[~table["cost_cents"].map(lambda v: math.isfinite(float(v)))]
                return None if bad.empty else f"non-finite costs in {export}_energy_cost.csv"
            options_args = [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
            return through_cli(result, ["run", "--in-process", "-p", paths["platform"], "-w", paths["workload"], "-E",
                                        "-d", decider, *options_args, "-e", export], directory, check=costs_file)
        import joulesim

        return in_process(result, lambda: joulesim.simulate(paths["platform"], paths["workload"], decider,
                                                             options=options, energy=True, time_limit=30),
                          _cost_problem)
    finally:
        for path in paths.values():
            os.unlink(path)
