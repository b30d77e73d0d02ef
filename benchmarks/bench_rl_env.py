"""Speed of the reinforcement-learning environment and agent (issue 13, seed 002).

Input: experiment 3 of seed 002 (experiments/rl_energy/exp3: experiment 2 x 10, 40 nodes,
1,040 cores, 180 jobs every 10 ms). Measured, each in a fresh child process (own peak memory):

  - env: `NodeSchedulingEnv.step` calls per second, whole episodes of the 180 jobs, actions drawn
    uniformly among the valid ones by numpy (what an agent adds is excluded), for num_jobs 180
    (the thesis's option file: 7,200 actions) and 90 (our exp3 configuration), wait off and on;
  - agent: `PPOAgent.act` calls per second on those observations (torch, one thread);
  - update: seconds of one PPO update on 450 steps (5 trajectories x 90 jobs, minibatch 32,
    50 epochs: table 4.13), num_jobs 90.

    python benchmarks/bench_rl_env.py [--seconds 5] [--case env|agent|update|all]

Machine-independent check (instructions, not seconds): `--steps N` runs exactly N steps of the
num_jobs 90 case in this process; under `valgrind --tool=callgrind`, the difference of the totals
for N=2050 and N=50, over 2000, is the instructions of one step (start-up cancels; run once
first so that numba's cache is warm under valgrind too). BENCHMARKS.md compares two commits so.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXP3 = REPO / "experiments" / "rl_energy" / "exp3"


def _env(num_jobs: int, wait: bool):
    from joulesim.rl.environment import NodeSchedulingEnv

    return NodeSchedulingEnv(EXP3 / "platform.json", EXP3 / "workload.json", num_jobs=num_jobs, wait_action=wait)


def measure_env(num_jobs: int, wait: bool, seconds: float) -> dict:
    import numpy as np

    env = _env(num_jobs, wait)
    rng = np.random.default_rng(0)
    steps = episodes = 0
    env.reset(seed=0)
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        observation, _ = env.reset()
        episodes += 1
        while True:
            valid = np.flatnonzero(observation["mask"])
            observation, _, terminated, truncated, _ = env.step(int(valid[rng.integers(len(valid))]))
            steps += 1
            if terminated or truncated:
                break
    wall = time.perf_counter() - started
    return {"steps": steps, "episodes": episodes, "wall_s": wall, "steps_per_s": steps / wall,
            "actions": env.n_actions}


def measure_agent(num_jobs: int, seconds: float) -> dict:
    import numpy as np
    import torch

    from joulesim.rl.ppo import PPOAgent, PPOSettings

    torch.set_num_threads(1)
    env = _env(num_jobs, False)
    agent = PPOAgent(env.n_actions, len(env.features), PPOSettings(seed=0))
    observations = []
    observation, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    while len(observations) < 180:
        observations.append(observation)
        valid = np.flatnonzero(observation["mask"])
        observation, _, terminated, truncated, _ = env.step(int(valid[rng.integers(len(valid))]))
        if terminated or truncated:
            observation, _ = env.reset()
    calls = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        agent.act(observations[calls % len(observations)])
        calls += 1
    wall = time.perf_counter() - started
    return {"calls": calls, "wall_s": wall, "act_per_s": calls / wall, "actions": env.n_actions}


def measure_update(num_jobs: int) -> dict:
    import torch

    from joulesim.rl.ppo import PPOAgent, PPOSettings

    torch.set_num_threads(1)
    env = _env(num_jobs, False)
    env.sampler.length = 90
    env.sampler.origin = "random"
    agent = PPOAgent(env.n_actions, len(env.features), PPOSettings(seed=0, minibatch_size=32, epochs=50))
    env.reset(seed=0)
    collect = time.perf_counter()
    for _ in range(5):
        observation, _ = env.reset()
        while True:
            action, value, logp = agent.act(observation)
            following, reward, terminated, truncated, _ = env.step(action)
            agent.record(observation, action, value, logp, reward)
            observation = following
            if terminated or truncated:
                break
        agent.end_trajectory(0.0)
    collected = time.perf_counter() - collect
    started = time.perf_counter()
    losses = agent.update()
    return {"collect_s": collected, "update_s": time.perf_counter() - started, "samples": losses.get("samples"),
            "actions": env.n_actions}


def fixed_steps(n: int) -> None:
    """Exactly `n` env.step calls (num_jobs 90, no wait; numpy seed 0), episodes restarted."""
    import numpy as np

    env = _env(90, False)
    rng = np.random.default_rng(0)
    observation, _ = env.reset(seed=0)
    for _ in range(n):
        valid = np.flatnonzero(observation["mask"])
        observation, _, terminated, truncated, _ = env.step(int(valid[rng.integers(len(valid))]))
        if terminated or truncated:
            observation, _ = env.reset()
    print(f"{n} steps")


def _child(case: str, seconds: float) -> None:
    kind, _, rest = case.partition(":")
    parts = dict(p.split("=") for p in rest.split(",") if p)
    num_jobs = int(parts.get("num_jobs", 90))
    if kind == "env":
        result = measure_env(num_jobs, parts.get("wait") == "1", seconds)
    elif kind == "agent":
        result = measure_agent(num_jobs, seconds)
    else:
        result = measure_update(num_jobs)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--case", choices=["env", "agent", "update", "all"], default="all")
    parser.add_argument("--steps", type=int, help="run exactly this many env steps (num_jobs 90), for callgrind")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps is not None:
        fixed_steps(args.steps)
        return
    if args.child:
        _child(args.child, args.seconds)
        return
    cases = []
    if args.case in ("env", "all"):
        cases += [f"env:num_jobs={n},wait={w}" for n in (180, 90) for w in (0, 1)]
    if args.case in ("agent", "all"):
        cases += [f"agent:num_jobs={n}" for n in (180, 90)]
    if args.case in ("update", "all"):
        cases += ["update:num_jobs=90"]
    print(f"input: {EXP3.relative_to(REPO)} (40 nodes, 1,040 cores, 180 jobs)")
    for case in cases:
        done = subprocess.run([sys.executable, __file__, "--child", case, "--seconds", str(args.seconds)],
                              capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if case.startswith("env"):
            print(f"{case:<28} {result['steps_per_s']:>9,.0f} steps/s  ({result['steps']:,} steps, "
                  f"{result['episodes']} episodes, {result['actions']:,} actions)  peak {result['peak_rss_mb']:.0f} MB")
        elif case.startswith("agent"):
            print(f"{case:<28} {result['act_per_s']:>9,.0f} decisions/s  ({result['actions']:,} actions)  "
                  f"peak {result['peak_rss_mb']:.0f} MB")
        else:
            print(f"{case:<28} collect {result['collect_s']:.2f} s + update {result['update_s']:.2f} s "
                  f"({result['samples']} samples, {result['actions']:,} actions)  peak {result['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
