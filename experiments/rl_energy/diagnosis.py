"""Why the thesis's agent collapses: the measurements README.md's section of that name quotes.

    python -m experiments.rl_energy.diagnosis            # results/diagnosis.json and results/three_nodes.csv
    python -m experiments.rl_energy.diagnosis --only first-observation   # the quick part (seconds)

- On experiment 2's first observation: each feature's range over the valid rows under the
  thesis's normalisation (the whole matrix over its Frobenius norm); the standard deviation of
  the thesis actor's pre-activations through its layers (its N(0, 1) weights, training seed 0);
  and, over initialisation seeds 0-99, how often every valid row starts where the thesis's last
  SELU is flat (below -5: output within 0.012 of its floor, gradient under 0.012).
- On the three-node case (`write_three_nodes`: four jobs in turn, the cool node last; optimum
  860 J), seeds 0-7 and 30 training simulations for each combination of the three fixes: the
  probability the trained policy (and the untrained one of the same seed) gives the optimal
  schedule, and the policy's entropy at the end (ln 3: uniform, every row scored alike).
- From the campaign's own trainings (out/rl_energy, when there): the critic's value loss at the
  last training simulation of experiment 2's energy objective, with the thesis's agent (rewards
  in joules) and with the default agent (rewards scaled by the first trajectory's total).

Each figure goes to results/ and README.md quotes it from there (run.py's readme_figures).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DIAGNOSIS = RESULTS / "diagnosis.json"
THREE_NODES = RESULTS / "three_nodes.csv"
CAMPAIGN_OUT = HERE.parents[1] / "out" / "rl_energy"

#: (network, normalisation, reward scale): the thesis's agent, each fix alone and together.
COMBINATIONS = [("thesis", "matrix", 1.0), ("thesis", "columns", 1.0), ("thesis", "matrix", "auto"),
                ("snn", "matrix", 1.0), ("snn", "columns", 1.0), ("snn", "matrix", "auto"),
                ("snn", "columns", "auto")]
SEEDS = range(8)
SIMULATIONS = 30
FLAT = -5.0  # below it the thesis's last SELU is within 0.012 of its floor, with a gradient under 0.012
INITIALISATIONS = range(100)
OPTIMUM_J = 860.0
COOL = 2  # the cool node's row: one job is pending at each decision, so its rows are 0-2


def irmasim_processor(static: float, dynamic: float) -> dict:
    return {"cores": 4, "clock_rate": 1.0, "dpflops_per_cycle": 1, "dynamic_power": dynamic, "static_power": static,
            "min_power": 0.5, "b": -1.85e-05, "c": 21000, "da": 1.0, "db": 100, "dc": 25000, "dd": 10}


def write_three_nodes(folder: Path) -> tuple[str, str]:
    """Three 4-core nodes, hot (100 W static, 10 W per busy core), warm (40, 4) and cool (10, 1),
    the cool one last (a policy that collapses to "the first valid pair" picks the hot one);
    four 4-core jobs of 10 s at t = 0, 30, 60, 90, so that each decision is one job among three
    nodes. Under IRMaSim's accounting a node draws nothing before its first task and its
    min_power share (0.5 x static) when idle after it. Best: every job on the cool node,
    4 x (10 + 4 x 1) W x 10 s + 3 idle gaps x 20 s x 5 W = 560 + 300 = 860 J; any job elsewhere
    starts a node that then draws its idle power to the end, and costs more."""
    platform = {"platform": {"p": {"id": "p", "model_name": "modelV1", "clusters": [
        {"id": "c0", "nodes": [{"type": t, "number": 1} for t in ("hot", "warm", "cool")]}]}},
        "node": {t: {"id": t, "processors": [{"type": f"{t}p", "number": 1}]} for t in ("hot", "warm", "cool")},
        "processor": {"hotp": irmasim_processor(100.0, 10.0), "warmp": irmasim_processor(40.0, 4.0),
                      "coolp": irmasim_processor(10.0, 1.0)}}
    workload = {"profiles": {"A": {"req_ops": 10_000_000_000, "ipc": 1, "req_time": 10, "mem": 0, "mem_vol": 0}},
                "jobs": [{"id": f"J{k}", "subtime": 30 * k, "res": 4, "profile": "A"} for k in range(4)]}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "platform.json").write_text(json.dumps(platform))
    (folder / "workload.json").write_text(json.dumps(workload))
    return str(folder / "platform.json"), str(folder / "workload.json")


def three_node_config(platform: str, workload: str, seed: int, network: str = "snn",
                      normalisation: str = "columns", reward_scale: float | str = "auto"):
    """The tiny-case training settings (tests/test_rl_learning.py): 30 simulations of 4 trajectories."""
    from joulesim.rl.training_config import config_from_dict

    return config_from_dict({"environment": {"platform": platform, "workload": workload,
                                             "normalisation": normalisation},
                             "training": {"simulations": SIMULATIONS, "trajectories": 4, "seed": seed},
                             "ppo": {"minibatch_size": 8, "epochs": 8, "actor_lr": 0.01, "critic_lr": 0.01,
                                     "network": network, "reward_scale": reward_scale}},
                            "three nodes", "/")


def probability_of_the_optimum(agent, config) -> float:
    """The policy's probability of the optimal schedule: the product, along it, of the
    probability of putting the job on the cool node."""
    from joulesim.rl.training import make_environment

    env = make_environment(config)
    observation, _ = env.reset(seed=0)
    probability, terminated, info = 1.0, False, {}
    while not terminated:
        probability *= float(agent.probabilities(observation)[COOL])
        observation, _, terminated, _, info = env.step(COOL)
    env.close()
    if abs(info["energy"] - OPTIMUM_J) > 1e-9:
        raise SystemExit(f"the three-node case's optimal schedule gives {info['energy']} J, not {OPTIMUM_J}")
    return probability


def three_node_rows(folder: Path) -> list[dict]:
    from joulesim.rl.model_file import load_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings
    from joulesim.rl.training import make_environment, train

    platform, workload = write_three_nodes(folder / "case")
    rows = []
    for network, normalisation, scale in COMBINATIONS:
        for seed in SEEDS:
            config = three_node_config(platform, workload, seed, network, normalisation, scale)
            env = make_environment(config)
            untrained = PPOAgent(env.n_actions, len(env.features), PPOSettings(seed=seed, **config.ppo))
            env.close()
            outcome = train(config, folder / f"{network}_{normalisation}_{scale}_{seed}", progress=False)
            agent, _ = load_agent(outcome.model)
            curve = pd.read_csv(Path(outcome.model).parent / "training.csv")
            rows.append({"network": network, "normalisation": normalisation, "reward_scale": str(scale),
                         "seed": seed, "untrained_probability": probability_of_the_optimum(untrained, config),
                         "probability": probability_of_the_optimum(agent, config),
                         "final_entropy": float(curve.entropy.iloc[-1])})
            print(f"{network} {normalisation} {scale} seed {seed}: {rows[-1]['probability']:.4f}", flush=True)
    return rows


def first_observation() -> dict:
    """Experiment 2's first observation under the thesis's normalisation, and the thesis actor on it."""
    import torch

    from joulesim.rl.ppo import PPOAgent, PPOSettings
    from joulesim.rl.training import make_environment
    from joulesim.rl.training_config import load_training_config

    config = load_training_config(HERE / "exp2_energy_ablation_thesis.toml")
    env = make_environment(config)
    observation, _ = env.reset(seed=0)
    valid = observation["mask"].astype(bool)
    rows = observation["features"][valid]
    ranges = {name: [float(rows[:, k].min()), float(rows[:, k].max())] for k, name in enumerate(env.features)}
    n_actions, n_features = env.n_actions, len(env.features)
    env.close()

    def pre_activations(seed: int) -> list[torch.Tensor]:
        actor = PPOAgent(n_actions, n_features, PPOSettings(seed=seed, network="thesis")).actor
        x, out = torch.as_tensor(rows), []
        with torch.no_grad():
            for i, layer in enumerate(actor.net.layers):
                pre = torch.nn.functional.linear(x, layer.weight, layer.bias)
                out.append(pre)
                x = torch.selu(pre)
        return out

    spreads = [float(pre.std()) for pre in pre_activations(0)]
    flat = sum(bool((pre_activations(seed)[-1] < FLAT).all()) for seed in INITIALISATIONS)
    return {"valid_rows": int(valid.sum()), "feature_ranges": ranges, "thesis_pre_activation_std": spreads,
            "all_rows_flat": flat, "initialisations": len(INITIALISATIONS)}


def final_value_losses(out: Path) -> dict:
    """The critic's value loss at the last training simulation of each seed of experiment 2's energy
    objective, the thesis's agent and the default one (from the campaign's training curves)."""
    losses = {}
    for name in ("exp2_energy_ablation_thesis", "exp2_energy"):
        curves = sorted((out / name).glob("seed_*/training.csv"))
        losses[name] = [float(pd.read_csv(path).value_loss.iloc[-1]) for path in curves]
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["first-observation", "three-nodes", "value-loss"])
    parser.add_argument("--out", type=Path, default=CAMPAIGN_OUT, help="the campaign's trainings (run.py's --out)")
    args = parser.parse_args(argv)
    import joulesim.rl  # noqa: F401  (pins torch's CPU kernels before torch loads: rl/cpu_kernels.py)
    from joulesim.rl import cpu_kernels

    found: dict = {}
    if args.only in (None, "first-observation"):
        found["first_observation"] = first_observation()
    if args.only in (None, "value-loss"):
        losses = final_value_losses(args.out)
        if not all(losses.values()):
            print(f"{args.out}: no training curves of exp2_energy and its thesis ablation; run "
                  "python -m experiments.rl_energy.run --ablation first", file=sys.stderr)
            return 2
        found["final_value_loss"] = losses
    if args.only in (None, "three-nodes"):
        with tempfile.TemporaryDirectory() as folder:
            pd.DataFrame(three_node_rows(Path(folder))).to_csv(THREE_NODES, index=False, float_format="%.6g")
        found["three_nodes_cpu_kernels"] = cpu_kernels.capability()
    # (read at the end: the parts not rerun stay as they were, whatever ran meanwhile)
    diagnosis = json.loads(DIAGNOSIS.read_text()) if DIAGNOSIS.is_file() else {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    DIAGNOSIS.write_text(json.dumps({**diagnosis, **found}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
