"""Does training reach the optimum where it is known? Small cases whose every schedule is
enumerated through the environment, trained on ten seeds (issue 48).

    python -m experiments.rl_energy.known_optimum                  # 8 cases x seeds 0-9, tiny-case settings
    python -m experiments.rl_energy.known_optimum --cases 3 --seeds 2 --actor-lr 0.003 --simulations 100
    python -m experiments.rl_energy.known_optimum --landscape landscape.json   # local optima, no training

A case: three single-processor 4-core nodes of different speed (clock rate) and power (static
and dynamic), and four 4-core jobs arriving one after another, so that each decision places one
job on a node with idle cores (at most 3^4 = 81 schedules). Cases are drawn from a fixed seed
and kept in the order drawn when their optimum is unique and uses more than one node (a case
whose optimum is "always the same node" is what tests/test_rl_learning.py already covers); none
is chosen by its outcome.

For each case, every sequence of valid actions is played through `NodeSchedulingEnv` (the
optimum and the number of schedules), then the agent is trained with the tiny-case settings of
tests/test_rl_learning.py (or the options given) on each seed, and its greedy schedule is
compared with the optimum. Printed: per case, the seeds that reach it and the gap of the others;
with --out, the rows as CSV.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: The cases' generator (fixed: a case is never chosen by how training does on it).
CASE_SEED = 48
CLOCKS = (0.5, 1.0, 1.5, 2.0)
STATIC_W = (5, 10, 20, 40, 60, 100)
DYNAMIC_W = (1, 2, 4, 6, 10)
OPERATIONS = (1e10, 2e10, 4e10, 8e10)
GAPS_S = (10, 20, 30, 60)


def _processor(clock: float, static: float, dynamic: float) -> dict:
    # IRMaSim's processor model; the memory terms are those of tests/conftest.py's small cases.
    return {"cores": 4, "clock_rate": clock, "dpflops_per_cycle": 1, "dynamic_power": dynamic,
            "static_power": static, "min_power": 0.5, "b": -1.85e-05, "c": 21000, "da": 1.0, "db": 100,
            "dc": 25000, "dd": 10}


#: How a case's jobs request time (the observation's "requested time" column): "constant", every
#: job 100 s (the study's committed results: nothing then tells a big job from a small one), or
#: "work", in proportion to the job's operations (as a user's request would be), twice what its
#: four cores take at the slowest clock so that no job outlives its request.
REQUESTS = ("constant", "work")


def requested_time(ops: float, rule: str) -> float:
    return 100.0 if rule == "constant" else math.ceil(2 * ops / (4 * min(CLOCKS) * 1e9))


def write_case(folder: Path, nodes: list[tuple[float, float, float]], jobs: list[tuple[float, float]],
               requests: str = "constant") -> tuple[str, str]:
    """Platform and workload files of a case: nodes (clock, static W, dynamic W), jobs (subtime, ops)."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"n{i}" for i in range(len(nodes))]
    platform = {"platform": {"p": {"id": "p", "model_name": "modelV1", "clusters": [
        {"id": "c0", "nodes": [{"type": name, "number": 1} for name in names]}]}},
        "node": {name: {"id": name, "processors": [{"type": f"{name}p", "number": 1}]} for name in names},
        "processor": {f"{name}p": _processor(*node) for name, node in zip(names, nodes)}}
    workload = {"profiles": {f"P{k}": {"req_ops": int(ops), "ipc": 1, "req_time": requested_time(ops, requests),
                                       "mem": 0, "mem_vol": 0}
                             for k, (_, ops) in enumerate(jobs)},
                "jobs": [{"id": f"J{k}", "subtime": subtime, "res": 4, "profile": f"P{k}"}
                         for k, (subtime, _) in enumerate(jobs)]}
    (folder / "platform.json").write_text(json.dumps(platform))
    (folder / "workload.json").write_text(json.dumps(workload))
    return str(folder / "platform.json"), str(folder / "workload.json")


def settings(platform: str, workload: str, seed: int, simulations: int, actor_lr: float, entropy: float,
             trajectories: int = 4, normalisation: str = "columns", entropy_end: float | None = None,
             exploring_starts: float = 0.0, self_imitation: float = 0.0, keep_best_steps: int = 0,
             actor_widths: tuple[int, ...] | None = None):
    """The tiny-case settings of tests/test_rl_learning.py, with the budget, rates, entropy
    (constant, or annealed linearly to `entropy_end`), random openings, self-imitation, the
    observation's normalisation and the actor's hidden widths (None: the thesis's) given."""
    from joulesim.rl.training_config import config_from_dict

    return config_from_dict({"environment": {"platform": platform, "workload": workload,
                                             "normalisation": normalisation},
                             "training": {"simulations": simulations, "trajectories": trajectories, "seed": seed,
                                          "exploring_starts": exploring_starts},
                             "ppo": {"minibatch_size": 8, "epochs": 8, "actor_lr": actor_lr, "critic_lr": 0.01,
                                     "entropy": entropy, "self_imitation": self_imitation,
                                     "keep_best_steps": keep_best_steps,
                                     **({} if actor_widths is None else {"actor_widths": list(actor_widths)}),
                                     **({} if entropy_end is None else {"entropy_end": entropy_end})}},
                            "known-optimum case", "/")


def every_schedule(config) -> dict[tuple[int, ...], float]:
    """Every sequence of valid actions, played through the environment: its energy."""
    from joulesim.rl.training import make_environment

    env = make_environment(config)
    energies: dict[tuple[int, ...], float] = {}

    def play(prefix: list[int]) -> None:
        observation, _ = env.reset(seed=0)
        info: dict = {}
        terminated = False
        for action in prefix:
            observation, _, terminated, _, info = env.step(action)
        if terminated:
            energies[tuple(prefix)] = float(info["energy"])
            return
        for action in np.flatnonzero(observation["mask"]):
            play(prefix + [int(action)])

    play([])
    env.close()
    return energies


def draw_cases(count: int, folder: Path, requests: str = "constant") -> list[dict]:
    """The first `count` cases of the generator whose optimum is unique and uses two nodes or more
    (`requests`: REQUESTS; the draw is the same either way)."""
    rng = np.random.default_rng(CASE_SEED)
    cases: list[dict] = []
    drawn = 0
    while len(cases) < count:
        drawn += 1
        nodes = [(float(rng.choice(CLOCKS)), float(rng.choice(STATIC_W)), float(rng.choice(DYNAMIC_W)))
                 for _ in range(3)]
        arrivals = np.concatenate([[0], np.cumsum(rng.choice(GAPS_S, 3))]).tolist()
        jobs = [(float(t), float(rng.choice(OPERATIONS))) for t in arrivals]
        platform, workload = write_case(folder / f"draw_{drawn:03d}", nodes, jobs, requests)
        energies = every_schedule(settings(platform, workload, 0, 1, 0.01, 0.0))
        best = min(energies.values())
        optima = [schedule for schedule, energy in energies.items() if energy == best]
        if len(optima) != 1 or len(set(optima[0])) < 2:
            continue
        others = sorted(energy for energy in energies.values() if energy > best)
        cases.append({"case": f"draw_{drawn:03d}", "platform": platform, "workload": workload, "nodes": nodes,
                      "energies": energies,
                      "jobs": jobs, "schedules": len(energies), "optimum": optima[0], "optimum_j": best,
                      "second_gap_pct": 100 * (others[0] / best - 1) if others else float("nan")})
    return cases


def one_change_neighbours(schedule: tuple[int, ...], energies: dict[tuple[int, ...], float]) -> list[tuple[int, ...]]:
    """The schedules that differ from `schedule` in exactly one decision (all of them valid: they
    are among those played)."""
    return [other for other in energies
            if len(other) == len(schedule) and sum(a != b for a, b in zip(schedule, other)) == 1]


def is_local_optimum(schedule: tuple[int, ...], energies: dict[tuple[int, ...], float]) -> bool:
    """Every schedule one decision away costs more energy."""
    return all(energies[other] > energies[schedule] for other in one_change_neighbours(schedule, energies))


def uniform_continuation_values(energies: dict[tuple[int, ...], float], prefix: tuple[int, ...]) -> dict[int, float]:
    """Per valid next decision after `prefix`: the expected energy when every later decision is
    drawn uniformly among the valid ones (what a policy still close to uniform sees)."""
    def following(taken: tuple[int, ...]) -> list[int]:  # the valid decisions after `taken`
        return sorted({s[len(taken)] for s in energies if s[:len(taken)] == taken})

    def value(taken: tuple[int, ...]) -> float:
        if taken in energies:
            return energies[taken]
        actions = following(taken)
        return sum(value(taken + (action,)) for action in actions) / len(actions)

    return {action: value(prefix + (action,)) for action in following(prefix)}


def optimum_representable(case: dict) -> bool:
    """Whether the agent's policy, which scores each valid row of the observation on its own
    (PairScorer), can take the case's optimum greedily at all (`scorer_can_take`, along the
    optimum played through the environment). A case that fails has two decisions whose
    observations, equal to within float32 rounding, ask for opposite choices: only a policy that
    ranks rows by the last bits of their features takes its optimum (keep_best can force one to;
    experiments/rl_energy/README.md)."""
    from joulesim.rl.training import make_environment

    env = make_environment(settings(case["platform"], case["workload"], 0, 1, 0.01, 0.0))
    observation, _ = env.reset(seed=0)
    decisions = []
    try:
        for action in case["optimum"]:
            decisions.append((observation["features"].astype(np.float64), np.flatnonzero(observation["mask"]), action))
            observation, *_ = env.step(action)
    finally:
        env.close()
    return scorer_can_take(decisions)


def scorer_can_take(decisions: list[tuple[np.ndarray, np.ndarray, int]]) -> bool:
    """Whether a function scoring each row on its own can rank, at every decision (its rows,
    its valid rows, the row to take), the row to take above the other valid ones: no other valid
    row may carry the same features, and the preferences (taken row over other row, gathered
    over the decisions) must not form a cycle. Rows equal to within float32 rounding
    (np.allclose, relative 1e-5) count as the same: the features are normalised in float32, and
    two decisions that see the same state can see it a last bit apart."""
    from graphlib import CycleError, TopologicalSorter

    vectors: list[np.ndarray] = []  # the distinct rows seen, by the index that names them

    def identity(row: np.ndarray) -> int:
        for index, vector in enumerate(vectors):
            if np.allclose(row, vector, rtol=1e-5, atol=1e-7):
                return index
        vectors.append(row)
        return len(vectors) - 1

    above: dict[int, set[int]] = {}  # a row -> the rows that must score above it
    for rows, valid, action in decisions:
        taken = identity(rows[action])
        for other in valid:
            if other != action:
                row = identity(rows[other])
                if row == taken:
                    return False
                above.setdefault(row, set()).add(taken)
    try:
        tuple(TopologicalSorter(above).static_order())
    except CycleError:
        return False
    return True


def landscape(case: dict, energies: dict[tuple[int, ...], float]) -> dict:
    """A case's schedule space: its local optima (no one-decision change lowers the energy) and
    whether its optimum's first decision is the best one under uniformly random later decisions."""
    best = min(energies.values())
    local = sorted(s for s in energies if is_local_optimum(s, energies))
    first = uniform_continuation_values(energies, ())
    favoured = min(first, key=first.get)
    return {"case": case["case"], "schedules": len(energies), "optimum": "-".join(map(str, case["optimum"])),
            "local_optima": ["-".join(map(str, s)) for s in local],
            "local_optima_pct_above": [round(100 * (energies[s] / best - 1), 2) for s in local],
            "first_best_under_uniform": favoured,
            "optimum_first_best_under_uniform": bool(favoured == case["optimum"][0])}


def greedy_schedule(model: str, config) -> tuple[tuple[int, ...], float]:
    from joulesim.rl.model_file import load_agent
    from joulesim.rl.training import make_environment

    agent, _ = load_agent(model)
    env = make_environment(config)
    observation, _ = env.reset(seed=0)
    actions: list[int] = []
    while True:
        action, _, _ = agent.act(observation, greedy=True, value=False)
        actions.append(action)
        observation, _, terminated, _, info = env.step(action)
        if terminated:
            env.close()
            return tuple(actions), float(info["energy"])


#: The settings a row of the CSV records (the variant it belongs to).
SETTINGS = ("simulations", "trajectories", "actor_lr", "entropy", "entropy_end", "exploring_starts", "self_imitation",
            "keep_best_steps", "actor_widths", "requests", "normalisation")


def _pairs(parser: argparse.ArgumentParser, given: list[str], cases: list[dict]) -> dict[str, list[int]]:
    """--pairs CASE:SEED ...: the seeds to train per case, in the order given."""
    drawn = {case["case"] for case in cases}
    pairs: dict[str, list[int]] = {}
    for pair in given:
        name, _, seed = pair.partition(":")
        if name not in drawn or not seed.isdigit():
            parser.error(f"--pairs {pair}: give CASE:SEED, CASE one of the {len(cases)} cases drawn "
                         f"({', '.join(case['case'] for case in cases)}) and SEED an integer >= 0")
        pairs.setdefault(name, []).append(int(seed))
    return pairs


def settings_columns(args: argparse.Namespace) -> dict:
    from joulesim.rl.networks import ACTOR_WIDTHS

    columns = {name: getattr(args, name) for name in SETTINGS}
    columns["actor_widths"] = "-".join(map(str, args.actor_widths or ACTOR_WIDTHS))
    return columns


def summary_table(csv_paths: list[Path]) -> str:
    """The runs' results as a markdown table (a row per CSV: its settings, the episodes of
    training, its seeds, and per case the seeds that reached the optimum), from their CSVs."""
    import pandas as pd

    from joulesim.rl.networks import ACTOR_WIDTHS

    frames = [pd.read_csv(path) for path in csv_paths]
    frame = pd.concat(frames, ignore_index=True)
    cases = list(dict.fromkeys(frame["case"]))
    head = (["actor lr", "actor's hidden widths", "episodes per update", "entropy", "random openings", "self-imitation", "keep best (steps)",
             "episodes",
             "requested time", "normalisation", "seeds"]
            + [f"{case}" for case in cases] + ["all cases"])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for rows in frames:
        # A constant entropy: no entropy_end; no random openings nor self-imitation: 0 (runs from
        # before those options have no such columns).
        entropy_end = rows.get("entropy_end", pd.Series(math.nan, index=rows.index)).fillna(-1.0).iloc[0]
        openings, imitation, keep_best = (rows.get(name, pd.Series(0.0, index=rows.index)).fillna(0.0).iloc[0]
                                          for name in ("exploring_starts", "self_imitation", "keep_best_steps"))
        first = rows.iloc[0]
        # (runs from before the option have no such column: the thesis's widths)
        widths = rows.get("actor_widths", pd.Series("-".join(map(str, ACTOR_WIDTHS)), index=rows.index)).iloc[0]
        per_case = rows.groupby("case", sort=False)["reached"].agg(["sum", "count"])
        entropy_text = f"{first.entropy:g}" + (f" to {entropy_end:g}" if entropy_end >= 0 else "")
        seeds = f"{rows.seed.min()}-{rows.seed.max()}"
        cells = [f"{first.actor_lr:g}", str(widths).replace("-", ", "), f"{first.trajectories}", entropy_text, f"{openings:g}", f"{imitation:g}",
                 f"{keep_best:g}",
                 f"{first.simulations * first.trajectories:,}", first.requests, first.normalisation, seeds]
        cells += [f"{int(per_case.at[case, 'sum'])}/{int(per_case.at[case, 'count'])}" if case in per_case.index
                  else "-" for case in cases]
        cells.append(f"**{int(rows['reached'].sum())}/{len(rows)}**")
        lines.append("| " + " | ".join(cells) + " |")
    if "second_gap_pct" in frame.columns:  # (how far the next-best schedule is: near ties are the hard cases)
        gaps = frame.groupby("case", sort=False)["second_gap_pct"].first()
        lines.append("| the next-best schedule, % above the optimum |" + " |" * 10 + " "
                     + " | ".join(f"{gaps[case]:.1f}" for case in cases) + " | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=10, help="training seeds: N of them (default 10)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="the first training seed (default 0: seeds 0..N-1); other seeds check settings "
                             "chosen on the first ones")
    parser.add_argument("--simulations", type=int, default=50,
                        help="training simulations of 4 trajectories each (default 50: 200 episodes)")
    parser.add_argument("--actor-lr", type=float, default=0.01, help="default 0.01, the tiny-case tests'")
    parser.add_argument("--entropy", type=float, default=0.0, help="entropy bonus (default 0)")
    parser.add_argument("--entropy-end", type=float, default=None,
                        help="the last update's entropy bonus, reached linearly from --entropy (default: constant)")
    parser.add_argument("--trajectories", type=int, default=4, help="episodes per training simulation (default 4)")
    parser.add_argument("--exploring-starts", type=float, default=0.0,
                        help="probability that each opening decision of an episode is drawn at random and not "
                             "trained on ([training] exploring_starts; default 0)")
    parser.add_argument("--self-imitation", type=float, default=0.0,
                        help="the weight of imitating the best whole episode so far after each update ([ppo] "
                             "self_imitation; default 0: none)")
    parser.add_argument("--keep-best-steps", type=int, default=0, metavar="N",
                        help="at most N Adam steps after the last update to make the greedy policy repeat the best "
                             "episode played ([ppo] keep_best_steps; default 0: none)")
    parser.add_argument("--actor-widths", type=int, nargs="+", metavar="W",
                        help="the actor's hidden layers' widths ([ppo] actor_widths; default the thesis's, "
                             "16 16 8 8 4 4)")
    parser.add_argument("--skip-cases", type=int, default=0, metavar="K",
                        help="train on the cases drawn after the first K only (e.g. --cases 16 --skip-cases 8: "
                             "eight cases never used to choose settings on the first eight)")
    parser.add_argument("--only", nargs="+", metavar="CASE",
                        help="train on these of the drawn cases only (e.g. draw_010 draw_012: the same cases, drawn "
                             "as always)")
    parser.add_argument("--pairs", nargs="+", metavar="CASE:SEED",
                        help="train these (case, seed) pairs only, the cases in the order drawn (e.g. draw_012:18 draw_021:2: the "
                             "misses of another run; --seeds and --first-seed are then ignored)")
    parser.add_argument("--normalisation", choices=("columns", "matrix"), default="columns",
                        help="the observation's scaling (the environment's option; default columns)")
    parser.add_argument("--requests", choices=REQUESTS, default="constant",
                        help="jobs' requested time: 100 s each (default) or in proportion to their work")
    parser.add_argument("--out", type=Path, help="write the rows as CSV here")
    parser.add_argument("--landscape", type=Path, metavar="JSON",
                        help="write each case's local optima, the first decision that uniformly random later "
                             "decisions favour and whether the policy can express the optimum here (JSON, a record "
                             "per case), and stop (no training)")
    parser.add_argument("--summarise", type=Path, nargs="+", metavar="CSV",
                        help="print the markdown table of these runs' CSVs (a row per CSV) and stop")
    args = parser.parse_args(argv)
    if args.summarise:
        print(summary_table(args.summarise))
        return 0
    if min(args.cases, args.seeds, args.simulations, args.trajectories) < 1:
        parser.error("--cases, --seeds, --simulations and --trajectories take integers >= 1")
    if args.first_seed < 0 or not 0 <= args.skip_cases < args.cases:
        parser.error("--first-seed takes an integer >= 0, --skip-cases one in [0, --cases[")
    if args.entropy < 0 or (args.entropy_end is not None and args.entropy_end < 0):
        parser.error("--entropy and --entropy-end take numbers >= 0")
    if args.self_imitation < 0:
        parser.error("--self-imitation takes a number >= 0")
    if not 0 <= args.exploring_starts < 1:
        parser.error("--exploring-starts takes a number in [0, 1[")
    if args.actor_widths is not None:  # (the settings' own check, before any case is drawn)
        from joulesim.protocol.errors import JoulesimError
        from joulesim.rl.ppo import PPOSettings

        try:
            PPOSettings(actor_widths=args.actor_widths)
        except JoulesimError as error:
            parser.error(f"--actor-widths: {error}")
    if args.landscape:
        with tempfile.TemporaryDirectory() as scratch:
            cases = draw_cases(args.cases, Path(scratch) / "cases", args.requests)
            rows = [{**landscape(case, case["energies"]), "optimum_representable": optimum_representable(case)}
                    for case in cases]
        args.landscape.parent.mkdir(parents=True, exist_ok=True)
        args.landscape.write_text(json.dumps(rows, indent=1) + "\n")
        for row in rows:
            optima = ", ".join(f"{schedule} ({gap:.1f} %)"
                               for schedule, gap in zip(row["local_optima"], row["local_optima_pct_above"]))
            print(f"{row['case']}: {row['schedules']} schedules, optimum {row['optimum']}; local optima "
                  f"{optima}; first decision best under uniformly random later ones: "
                  f"{row['first_best_under_uniform']}; the policy can express the optimum: "
                  f"{'yes' if row['optimum_representable'] else 'no'}")
        return 0
    try:
        from joulesim.rl.training import train
    except ImportError as error:
        print(f"known_optimum: the rl extra is missing ({error}): pip install '.[rl]'", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        cases = draw_cases(args.cases, Path(scratch) / "cases", args.requests)[args.skip_cases:]
        if args.only:
            unknown = sorted(set(args.only) - {case["case"] for case in cases})
            if unknown:
                parser.error(f"--only {' '.join(unknown)}: not among the {args.cases} cases drawn "
                             f"({', '.join(case['case'] for case in cases)})")
            cases = [case for case in cases if case["case"] in args.only]
        pairs = _pairs(parser, args.pairs, cases) if args.pairs else None
        if pairs is not None:
            cases = [case for case in cases if case["case"] in pairs]
        for case in cases:
            reached = []
            seeds = pairs[case["case"]] if pairs is not None else range(args.first_seed, args.first_seed + args.seeds)
            for seed in seeds:
                config = settings(case["platform"], case["workload"], seed, args.simulations, args.actor_lr,
                                  args.entropy, args.trajectories, args.normalisation, args.entropy_end,
                                  args.exploring_starts, args.self_imitation, args.keep_best_steps,
                                  args.actor_widths)
                started = time.perf_counter()
                outcome = train(config, Path(scratch) / "train", progress=False)
                schedule, energy = greedy_schedule(outcome.model, config)
                gap = 100 * (energy / case["optimum_j"] - 1)
                rows.append({**settings_columns(args), "case": case["case"], "seed": seed, "schedules": case["schedules"],
                             "optimum": "-".join(map(str, case["optimum"])), "optimum_j": case["optimum_j"],
                             "greedy": "-".join(map(str, schedule)), "greedy_j": energy, "gap_pct": gap,
                             "reached": schedule == case["optimum"], "second_gap_pct": case["second_gap_pct"],
                             # with self-imitation, the best episode it played (its total reward is
                             # minus its energy): a miss that never played the optimum is exploration's
                             "best_played_j": (math.nan if outcome.best_episode_total is None
                                               else -outcome.best_episode_total),
                             # with --keep-best-steps: the steps that made the greedy policy repeat it
                             # (empty: it still departs from it)
                             "keep_best_taken": outcome.keep_best_steps_taken,
                             "training_s": time.perf_counter() - started})
                reached.append(rows[-1])
            hits = sum(row["reached"] for row in reached)
            tried = len(reached)
            gaps = ", ".join(f"{row['gap_pct']:.1f}" for row in reached if not row["reached"])
            print(f"{case['case']}: nodes (clock, static W, dynamic W) {case['nodes']}, jobs (t, ops) {case['jobs']}; "
                  f"{case['schedules']} schedules, optimum {case['optimum']} {case['optimum_j']:,.2f} J (next "
                  f"{case['second_gap_pct']:.1f} % above); reached on {hits} of {tried} seeds"
                  + (f"; the others % above: {gaps}" if gaps else ""), flush=True)
    total = sum(row["reached"] for row in rows)
    print(f"all cases: {total} of {len(rows)} trainings reach the optimum (simulations {args.simulations} of "
          f"{args.trajectories} trajectories, actor lr {args.actor_lr}, entropy {args.entropy}"
          + (f" to {args.entropy_end}" if args.entropy_end is not None else "")
          + (f", random openings {args.exploring_starts:g}" if args.exploring_starts else "")
          + (f", self-imitation {args.self_imitation:g}" if args.self_imitation else "")
          + (f", keep best {args.keep_best_steps} steps" if args.keep_best_steps else "")
          + (f", actor's hidden widths {' '.join(map(str, args.actor_widths))}" if args.actor_widths else "") + ")")
    if args.out:
        import pandas as pd

        args.out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
