"""The training configuration file of `joulesim rl train` (TOML), checked before anything runs.

Three tables, named as seed 002's hyperparameter tables (4.5, 4.10, 4.13, 4.17):

    [environment]   platform, workload (paths relative to this file), platform_name, objective
                    (energy | edp), num_jobs, trajectory_length (0: whole workload),
                    trajectory_origin (a job position or "random"), wait_action, wait_interval,
                    per_step (one: one action per time step, as the thesis; all),
                    features (default: all of table 3.1), normalisation (columns | matrix, the
                    thesis's), idle_power, max_waits, max_steps
    [training]      simulations (training updates), trajectories (per simulation), seed,
                    checkpoint_every (0: final model only), threads (torch CPU threads, at most
                    the CPUs this process may use), exploring_starts (the probability that each
                    decision of a trajectory's opening is drawn uniformly among the valid ones
                    and not trained on; default 0)
    [ppo]           gamma, lambda, clip (epsilon), actor_lr, critic_lr, minibatch_size, epochs,
                    entropy, entropy_end (the last update's entropy coefficient, reached
                    linearly; default: constant), self_imitation (the weight of imitating the
                    best whole episode so far after each update, joulesim.rl.best_episode;
                    default 0: none), keep_best_steps (the most Adam steps after the last
                    update that make the greedy policy repeat the best episode played;
                    default 0: none), swa, shuffle, network (snn | thesis),
                    actor_widths (the actor's hidden layers; default [16, 16, 8, 8, 4, 4]),
                    reward_scale ("auto" | number)

An unknown table or key, a value of the wrong type or range, a missing file: InputError naming
the file, the key and the fix. Counts that multiply the work (simulations, trajectories, epochs)
have upper limits; the memory that the sizes imply is checked when training starts
(`joulesim.rl.training`), before anything is allocated.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from joulesim.campaign.executors import default_workers
from joulesim.deciders.learned.pair_observation import FEATURES, NORMALISATIONS
from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.toml_input import decode_toml
from joulesim.rl.networks import ACTOR_WIDTHS, MAX_ACTOR_LAYERS, MAX_ACTOR_WIDTH, NETWORKS
from joulesim.simulator.models.core_task_runner import IDLE_POWER_RULES

__all__ = ["TrainingConfig", "load_training_config", "config_from_dict"]


@dataclass
class TrainingConfig:
    path: str  # the file it was read from ("<dict>" when built in Python)
    environment: dict[str, Any] = field(default_factory=dict)  # NodeSchedulingEnv keywords
    simulations: int = 100
    trajectories: int = 1
    seed: int = 0
    checkpoint_every: int = 0
    threads: int = 1
    exploring_starts: float = 0.0  # probability that each opening decision is drawn at random
    ppo: dict[str, Any] = field(default_factory=dict)  # PPOSettings keywords


def _integer(minimum: int, maximum: int | None = None) -> tuple[Callable[[Any], bool], str]:
    if maximum is None:
        return (lambda v: type(v) is int and v >= minimum), f"an integer >= {minimum}"
    return (lambda v: type(v) is int and minimum <= v <= maximum), f"an integer in [{minimum}, {maximum:,}]"


# Counts that multiply the work: beyond these a value is a typo rather than a plan (the thesis
# trains 100 simulations of 1-10 trajectories, 50 epochs each), and would run for years.
MAX_SIMULATIONS = 1_000_000
MAX_TRAJECTORIES = 100_000
MAX_EPOCHS = 100_000
MAX_KEEP_BEST_STEPS = 1_000_000
# torch and numpy take 64-bit seeds; beyond, torch.manual_seed overflows (a traceback).
MAX_SEED = 2 ** 63 - 1


def _number(minimum: float, maximum: float = math.inf, open_low: bool = False) -> tuple[Callable[[Any], bool], str]:
    low = "]" if open_low else "["
    return ((lambda v: type(v) in (int, float) and math.isfinite(v) and (v > minimum if open_low else v >= minimum)
             and v <= maximum), f"a number in {low}{minimum:g}, {maximum:g}]")


_BOOL = ((lambda v: type(v) is bool), "true or false")
_TEXT = ((lambda v: isinstance(v, str) and v != ""), "a non-empty string")

# key -> (checker, what is accepted, default (None: required), the keyword it becomes)
_ENVIRONMENT: dict[str, tuple[Callable[[Any], bool], str, Any, str]] = {
    "platform": (*_TEXT, None, "platform"),
    "workload": (*_TEXT, None, "workload"),
    "platform_name": (*_TEXT, "", "platform_name"),
    "objective": ((lambda v: v in ("energy", "edp")), "energy or edp", "energy", "objective"),
    "num_jobs": (*_integer(0), 0, "num_jobs"),
    "trajectory_length": (*_integer(0), 0, "trajectory_length"),
    "trajectory_origin": ((lambda v: v == "random" or (type(v) is int and v >= 0)),
                          'a job position (integer >= 0) or "random"', 0, "trajectory_origin"),
    "wait_action": (*_BOOL, False, "wait_action"),
    "wait_interval": (*_number(0, open_low=True), 1.0, "wait_interval"),
    "per_step": ((lambda v: v in ("one", "all")), "one or all", "one", "per_step"),
    "features": ((lambda v: isinstance(v, list) and bool(v) and all(x in FEATURES for x in v)
                  and len(set(v)) == len(v)),
                 "a non-empty list of distinct names among " + ", ".join(FEATURES), list(FEATURES), "features"),
    "normalisation": ((lambda v: v in NORMALISATIONS), " or ".join(NORMALISATIONS), "columns", "normalisation"),
    "idle_power": ((lambda v: v in IDLE_POWER_RULES), " or ".join(IDLE_POWER_RULES), "irmasim", "idle_power"),
    "max_waits": (*_integer(0), -1, "max_waits"),
    "max_steps": (*_integer(1), 0, "max_steps"),
}
_TRAINING: dict[str, tuple[Callable[[Any], bool], str, Any, str]] = {
    "simulations": (*_integer(1, MAX_SIMULATIONS), 100, "simulations"),
    "trajectories": (*_integer(1, MAX_TRAJECTORIES), 1, "trajectories"),
    "seed": (*_integer(0, MAX_SEED), 0, "seed"),
    "checkpoint_every": (*_integer(0), 0, "checkpoint_every"),
    "threads": (*_integer(1), 1, "threads"),
    "exploring_starts": ((lambda v: type(v) in (int, float) and 0 <= v < 1), "a number in [0, 1[", 0.0,
                         "exploring_starts"),
}
_PPO: dict[str, tuple[Callable[[Any], bool], str, Any, str]] = {
    "gamma": (*_number(0, 1), 0.99, "gamma"),
    "lambda": (*_number(0, 1), 0.95, "lam"),
    "clip": (*_number(0, 1, open_low=True), 0.1, "clip"),
    "actor_lr": (*_number(0, open_low=True), 1e-3, "lr_actor"),
    "critic_lr": (*_number(0, open_low=True), 1e-3, "lr_critic"),
    "minibatch_size": (*_integer(1), 32, "minibatch_size"),
    "epochs": (*_integer(1, MAX_EPOCHS), 50, "epochs"),
    "entropy": (*_number(0), 0.0, "entropy_coef"),
    "entropy_end": (*_number(0), -1, "entropy_end"),  # -1: not given, the entropy stays constant
    "self_imitation": (*_number(0), 0.0, "self_imitation"),
    "keep_best_steps": (*_integer(0, MAX_KEEP_BEST_STEPS), 0, "keep_best_steps"),
    "swa": (*_BOOL, False, "swa"),
    "shuffle": (*_BOOL, False, "shuffle"),
    "network": ((lambda v: v in NETWORKS), " or ".join(NETWORKS), "snn", "network"),
    "actor_widths": ((lambda v: isinstance(v, list) and 1 <= len(v) <= MAX_ACTOR_LAYERS
                      and all(type(w) is int and 1 <= w <= MAX_ACTOR_WIDTH for w in v)),
                     f"a list of 1 to {MAX_ACTOR_LAYERS} integers in [1, {MAX_ACTOR_WIDTH}], the actor's hidden "
                     "layers (default [16, 16, 8, 8, 4, 4], the thesis's)", ACTOR_WIDTHS, "actor_widths"),
    "reward_scale": ((lambda v: v == "auto" or (type(v) in (int, float) and math.isfinite(v) and v > 0)),
                     '"auto" or a number > 0', "auto", "reward_scale"),
}
_TABLES = {"environment": _ENVIRONMENT, "training": _TRAINING, "ppo": _PPO}


def load_training_config(path: str | os.PathLike) -> TrainingConfig:
    path = os.fspath(path)
    raw = read_input_file(path, "a training configuration (TOML); experiments/rl_energy/ has examples")
    document = decode_toml(path, raw, "a training configuration")
    return config_from_dict(document, path, os.path.dirname(os.path.abspath(path)))


def config_from_dict(document: dict[str, Any], label: str = "<dict>", base: str = ".") -> TrainingConfig:
    """A checked configuration from a parsed document; relative paths are taken from `base`."""
    unknown = [key for key in document if key not in _TABLES]
    if unknown:
        raise InputError(label, f"table [{unknown[0]}]", "is unknown", "the tables are [environment], [training] "
                         "and [ppo]")
    values: dict[str, dict[str, Any]] = {}
    for table, spec in _TABLES.items():
        given = document.get(table, {})
        if not isinstance(given, dict):
            raise InputError(label, f"[{table}]", "is not a table", f"write it as a [{table}] table")
        for key in given:
            if key not in spec:
                raise InputError(label, f"[{table}] key '{key}'", "is unknown",
                                 f"the keys of [{table}] are {', '.join(spec)}")
        out: dict[str, Any] = {}
        for key, (check, accepted, default, keyword) in spec.items():
            if key not in given:
                if default is None:
                    raise InputError(label, f"[{table}] key '{key}'", "is missing", f"give {accepted}")
                out[keyword] = default
                continue
            value = given[key]
            if not check(value):
                raise InputError(label, f"[{table}] key '{key}'", f"is {value!r}", f"give {accepted}")
            out[keyword] = value
        values[table] = out
    environment = values["environment"]
    for key in ("platform", "workload"):
        resolved = os.path.join(base, environment[key])
        if not os.path.isfile(resolved):
            raise InputError(label, f"[environment] key '{key}'", f"names {environment[key]!r}, which does not "
                             f"exist (looked for {resolved})", "give a path relative to the configuration file")
        environment[key] = resolved
    for key in ("platform_name", "max_steps", "num_jobs", "trajectory_length"):
        if not environment[key]:
            environment[key] = None
    if environment["max_waits"] == -1:  # not given: the environment's default
        environment["max_waits"] = None
    if values["ppo"]["entropy_end"] == -1:  # not given: a constant entropy coefficient
        values["ppo"]["entropy_end"] = None
    for key in ("self_imitation", "keep_best_steps"):
        if values["ppo"][key] > 0 and environment["trajectory_origin"] == "random":
            # (each episode schedules another window: the best total would be the easiest window's)
            raise InputError(label, f"[ppo] key '{key}'", "is given with [environment] trajectory_origin = "
                             "\"random\": the best episode would be the luckiest window, not the best schedule",
                             f"give trajectory_origin a job position, or leave {key} out")
    if values["ppo"]["keep_best_steps"] > 0 and values["ppo"]["swa"]:
        raise InputError(label, "[ppo] key 'keep_best_steps'", "is given with swa = true: the model keeps the "
                         "weights' average, which those steps do not move", "leave one of them out")
    training = values["training"]
    cpus = default_workers()
    if training["threads"] > cpus:
        # torch.set_num_threads(10**9) dies in std::bad_alloc; past the CPUs, threads only wait.
        raise InputError(label, "[training] key 'threads'", f"is {training['threads']}",
                         f"give at most {cpus}, the CPUs this process may use")
    return TrainingConfig(path=label, environment=environment, ppo=values["ppo"], **training)
