"""Fuzzing `joulesim learn` inputs: the options of `learn generate` (through the command
only: it is the surface), the scores table of `learn fit` (parquet or CSV; read, fitted and
written here, or through the command) and utility-function JSON files (read by the `utility`
decider, which then schedules a small workload). A fit that ends normally must write a
best.json that the utility decider reads back."""

from __future__ import annotations

import json
import os
import random

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_byte_mutation, random_text_mutation
from surface_fuzzer import NOT_A_NUMBER, in_process, new_result, through_cli

# --------------------------------------------------------------------------- learn generate
_GENERATE_INVALID = {
    "--pairs": NOT_A_NUMBER[:8] + ["0", "-1", "1e30", str(10**30), "1.5"],
    "--permutations": ["١٠", "1_0", "0", "-5", str(10**30), "nan", ""],
    "--seed": ["-1", "١", "1_0", "x", ""],
    "--workers": ["0", "-1", "١", str(10**9)],
}
_GENERATE_ODD = {"--seed": [str(2**80), str(2**64), str(2**32), "0"], "--workers": ["1", "2"]}


def _generate_case(seed: int, rng: random.Random, directory: str):
    options = {"--pairs": "1", "--permutations": "10", "--workers": "1"}
    if rng.random() < 0.8:
        flag = rng.choice(sorted(_GENERATE_INVALID))
        value, label = rng.choice(_GENERATE_INVALID[flag]), ALWAYS_INVALID
    else:
        flag = rng.choice(sorted(_GENERATE_ODD))
        value, label = rng.choice(_GENERATE_ODD[flag]), MAYBE_VALID
    options[flag] = value
    result = new_result(seed, f"generate{flag}", label, True)
    result.mutated = f"{flag} {value!r}".encode("utf-8", "replace")
    args = ["learn", "generate", *[a for k, v in options.items() for a in (k, v)],
            "-o", os.path.join(directory, f"scores{seed}.csv"), "--no-progress"]
    return through_cli(result, args, directory)


# --------------------------------------------------------------------------- learn fit
def _scores_table(rng: random.Random):
    import numpy as np
    import pandas as pd

    rows = 40
    r = np.array([rng.uniform(10, 20000) for _ in range(rows)])
    n = np.array([float(rng.randint(1, 256)) for _ in range(rows)])
    s = np.array([rng.uniform(0, 1e6) for _ in range(rows)])
    score = 1e-4 * np.sqrt(r) * n / 100 + 0.007 * np.log10(np.maximum(s, 1)) + np.array(
        [rng.gauss(0, 0.01) for _ in range(rows)])
    return pd.DataFrame({"pair": 0, "r": r, "n": n, "s": s, "score": score})


def _table_change(table, rng: random.Random) -> str:
    import numpy as np

    change = rng.choice(["strings", "infinite", "nan_inputs", "missing", "empty", "huge"])
    column = rng.choice(["r", "n", "s"])
    if change == "strings":
        table[column] = [rng.choice(["x", "١٢", "", "1_0"]) for _ in range(len(table))]
    elif change == "infinite":
        table.loc[rng.randrange(len(table)), column] = rng.choice([np.inf, -np.inf])
    elif change == "nan_inputs":
        table.loc[rng.randrange(len(table)), column] = np.nan
    elif change == "missing":
        del table[rng.choice(["r", "n", "s", "score"])]
    elif change == "empty":
        table.drop(table.index, inplace=True)
    else:
        table[column] = table[column] * 1e300
    return change


def _best_is_readable(best: str) -> str | None:
    from joulesim.deciders.batch.utility_functions import load_function_file
    from joulesim.protocol.errors import JoulesimError

    try:
        load_function_file(best)
    except JoulesimError as exc:
        return f"learn fit wrote a best.json that the utility decider refuses: {exc}"
    return None


def _fit_case(seed: int, rng: random.Random, directory: str, via_cli: bool):
    table = _scores_table(rng)
    csv = rng.random() < 0.3
    path = os.path.join(directory, f"scores{seed}.{'csv' if csv else 'parquet'}")
    choice = rng.random()
    if choice < 0.6:
        operator, label = "table_" + _table_change(table, rng), ALWAYS_INVALID
        if operator == "table_huge":
            label = MAYBE_VALID  # large but finite values: may fit or be refused, never a crash
        table.to_csv(path, index=False) if csv else table.to_parquet(path)
    else:
        operator, label = "random_bytes", MAYBE_VALID
        table.to_csv(path, index=False) if csv else table.to_parquet(path)
        raw = open(path, "rb").read()
        mutated = (random_text_mutation(raw.decode(), rng).encode("utf-8", "surrogatepass") if csv
                   else random_byte_mutation(raw, rng))
        with open(path, "wb") as handle:
            handle.write(mutated)
    result = new_result(seed, f"fit:{operator}", label, via_cli)
    result.mutated = open(path, "rb").read()[:300]
    out = os.path.join(directory, f"fit{seed}")
    try:
        if via_cli:
            return through_cli(result, ["learn", "fit", path, "-o", out], directory,
                               check=lambda: _best_is_readable(os.path.join(out, "best.json")))
        from joulesim.learn.function_fit import fit_forms, read_scores, write_fit

        return in_process(result, lambda: write_fit(fit_forms(read_scores(path)), out, path), _best_is_readable)
    finally:
        os.unlink(path)


# --------------------------------------------------------------------------- utility functions
def _function_text(rng: random.Random) -> tuple[str, str, str]:
    base = {"form": "F1", "coefficients": [0.0001352, 0.2765352, 0.0071470]}
    choice = rng.random()
    if choice < 0.6:
        change = rng.choice(["deep", "infinite", "form", "length", "types", "not_object"])
        text = json.dumps(base)
        if change == "deep":
            depth = rng.choice([1000, 100_000])
            text = text.replace("[0.0001352", "[" * depth + "]" * (depth - 1) + ", 0.0001352")
        elif change == "infinite":
            text = text.replace("0.2765352", rng.choice(["Infinity", "NaN", "-Infinity", "1e400"]))
        elif change == "form":
            text = text.replace('"F1"', rng.choice(['"F3"', '""', "null", "1", '"r_times"', '"F\\u0031x"']))
        elif change == "length":
            text = text.replace(", 0.007147]", rng.choice(["]", ", 0.007147, 1]"]))
        elif change == "types":
            text = text.replace("0.2765352", rng.choice(['"0.27"', "true", "null", "[]", '"١"']))
        else:
            text = rng.choice(["[]", "1", '"F1"', "null", "", "\ufeff{}", "{"])
        return f"function:{change}", ALWAYS_INVALID, text
    return "function:random", MAYBE_VALID, random_text_mutation(json.dumps(base, indent=1), rng)


def _function_case(seed: int, rng: random.Random, directory: str, via_cli: bool):
    operator, label, text = _function_text(rng)
    result = new_result(seed, operator, label, via_cli)
    result.mutated = text[:300].encode("utf-8", "replace")
    path = os.path.join(directory, f"function{seed}.json")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
    try:
        if via_cli:
            return through_cli(result, ["run", "--in-process", "-p", "small4", "-w", "tiny", "-d", "utility",
                                        "--option", "runtime=profile", "--option", f"function={path}", "-e", os.path.join(directory, f"u{seed}", "out")],
                               directory)
        import joulesim

        return in_process(result, lambda: joulesim.simulate("small4", "tiny", "utility", options={"function": path, "runtime": "profile"},
                                                             time_limit=30))
    finally:
        os.unlink(path)


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    kind = rng.random()
    if kind < 0.15:
        return _generate_case(seed, rng, directory)
    via_cli = rng.random() < 0.12
    return (_fit_case if kind < 0.6 else _function_case)(seed, rng, directory, via_cli)
