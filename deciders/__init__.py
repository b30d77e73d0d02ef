"""Scheduling policies ("deciders") shipped with joulesim, and how to load one by name.

Each decider runs in its own process and sees only protocol messages, through
`joulesim.protocol.decider.Decider`. Modules are imported lazily, on load.

The policies, by family, each sub-package using only those before it (tests/test_import_rules.py):
common (the waiting queue, queue orders, options, placement, machine power states) -> batch
(FCFS, SJF, EASY and its pass with hooks, conservative, utility orders) and node (IRMaSim's
node deciders) -> energy (shutdown, budgets, power cap, composed from EASY's pass) and
learned (seed 002's step structure) -> grid (the broker). This module, the registry of names,
sits above them all; the deciders never import the simulator, the API or the command line
(the trained `rl` decider lives in joulesim.rl, beside its agent).
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from typing import TYPE_CHECKING

from joulesim.protocol.errors import JoulesimError

if TYPE_CHECKING:
    from joulesim.protocol.decider import Decider

#: Registered decider names -> "module:Class".
DECIDERS: dict[str, str] = {
    "fcfs": "joulesim.deciders.batch.fcfs:FCFS",
    "sjf": "joulesim.deciders.batch.sjf:SJF",
    "easy": "joulesim.deciders.batch.easy:EasyBackfilling",
    "conservative": "joulesim.deciders.batch.conservative:ConservativeBackfilling",
    "rejecter": "joulesim.deciders.batch.rejecter:Rejecter",
    # Energy-aware policies (seed 001, chapters 6 and 7).
    "proportional": "joulesim.deciders.energy.proportional_shutdown:ProportionalShutdown",
    "inertial": "joulesim.deciders.energy.inertial_shutdown:InertialShutdown",
    "powercap": "joulesim.deciders.energy.power_capped_easy:PowerCappedEasy",
    "energybud": "joulesim.deciders.energy.energy_budget:EnergyBudget",
    "reducepc": "joulesim.deciders.energy.energy_budget:ReducePC",
    "heuristic": "joulesim.deciders.node.irmasim_heuristic:IrmasimHeuristic",
    "pcbe": "joulesim.deciders.node.pcbe:PCBE",
    # Utility-ordered queues (seed 003): Tang et al. 2009's WFP3 and UNICEF, learned F1/F2.
    "wfp": "joulesim.deciders.batch.utility_policies:WFP3Policy",
    "unicef": "joulesim.deciders.batch.utility_policies:UnicefPolicy",
    "utility": "joulesim.deciders.batch.utility_policies:UtilityPolicy",
    # Seed 004's broker: one EASY (with shutdown) per cluster, jobs sent by algorithm S or P.
    "broker": "joulesim.deciders.grid.cluster_broker:ClusterBroker",
    # Seed 002's Energy scheduler: a policy trained by `joulesim rl train` (needs the rl extra).
    "rl": "joulesim.rl.trained_policy:RLPolicy",
    # Its yardstick: the same steps, each action drawn uniformly among the valid ones.
    "random-pairs": "joulesim.deciders.learned.random_pairs:RandomPairs",
}

#: Registered deciders that need an optional extra (name -> extra): without it, loading one says
#: what to install.
DECIDER_EXTRAS: dict[str, str] = {"rl": "rl"}

#: Shutdown options: giving any of them to a decider below selects its variant with
#: opportunistic shutdown, while the plain decider keeps its lean code path (`easy --option
#: t_idle=300` is EASY with opportunistic shutdown; plain `easy` is untouched).
SHUTDOWN_OPTION_NAMES = ("t_idle", "compute_pstate", "sleep_pstate")
OPTION_VARIANTS: dict[str, str] = {
    "easy": "joulesim.deciders.energy.easy_shutdown:EasyWithShutdown",
    "energybud": "joulesim.deciders.energy.budgeted_easy_shutdown:EnergyBudgetWithShutdown",
    "reducepc": "joulesim.deciders.energy.budgeted_easy_shutdown:ReducePCWithShutdown",
    "powercap": "joulesim.deciders.energy.budgeted_easy_shutdown:PowerCappedEasyWithShutdown",
}

__all__ = ["DECIDERS", "DeciderChoiceError", "accepted_options", "check_options", "load_decider",
           "load_decider_class", "describe_deciders"]


class DeciderChoiceError(JoulesimError):
    """An unknown decider, or options it refuses: bad command-line input, checked before any
    output file is opened."""

    exit_code = 2


def _known() -> str:
    return ", ".join(sorted(DECIDERS))


def _closest(word: str, candidates: list[str] | dict[str, str]) -> str:
    """' (did you mean X?)' for the closest candidate, or ''."""
    matches = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean {matches[0]!r}?)" if matches else ""


def load_decider_class(name_or_path: str) -> type:
    """The Decider subclass for a registered name or a "package.module:ClassName" path."""
    from joulesim.protocol.decider import Decider

    target = DECIDERS.get(name_or_path, name_or_path)
    module_name, sep, class_name = target.partition(":")
    if not sep or not module_name or not class_name:
        raise DeciderChoiceError(
            f"unknown decider {name_or_path!r}{_closest(name_or_path, DECIDERS)}: use one of {_known()}, "
            f"or 'package.module:ClassName' for a decider of your own"
        )
    if name_or_path not in DECIDERS and os.getcwd() not in sys.path:
        # User deciders are usually modules of the current directory, which is not on
        # sys.path when joulesim runs as a console script.
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        extra = DECIDER_EXTRAS.get(name_or_path)
        if extra is not None and exc.name and not exc.name.startswith("joulesim"):
            from joulesim.console.install_hint import install_hint

            raise DeciderChoiceError(f"decider {name_or_path} needs the {extra} extra ({exc.name} is missing): "
                                     f"{install_hint(extra)}") from None
        hint = ""
        if exc.name and (module_name == exc.name or module_name.startswith(f"{exc.name}.")):  # (not found itself)
            hint = (f"; deciders of your own are looked for in the current folder ({os.getcwd()}) and on PYTHONPATH: "
                    f"run from the folder that holds {module_name.replace('.', '/')}.py, or put that folder on "
                    "PYTHONPATH (PYTHONPATH=/path/to/folder joulesim ...)")
        raise DeciderChoiceError(f"cannot import decider module {module_name!r} (from {name_or_path!r}): "
                                 f"{exc}{hint}") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise DeciderChoiceError(f"module {module_name!r} has no class {class_name!r} (from {name_or_path!r})")
    if not (isinstance(cls, type) and issubclass(cls, Decider)):
        raise DeciderChoiceError(
            f"{target} is not a subclass of joulesim.protocol.decider.Decider"
        )
    return cls


def load_decider(name_or_path: str, options: dict[str, str] | None = None) -> "Decider":
    """Instantiate a decider from a registered name or "package.module:ClassName".

    When the class declares `OPTIONS` (a dict name -> description), options it does not
    list are refused. Every refusal (an unknown name or option, a value the decider refuses)
    is a DeciderChoiceError naming the decider as it was given (`easy`, not the shutdown
    variant that `easy --option t_idle=...` selects).
    """
    options = dict(options or {})
    cls = load_decider_class(name_or_path)
    accepted = accepted_options(name_or_path, cls)
    if accepted is not None:
        _refuse_unknown(name_or_path, options, accepted)
    if name_or_path in OPTION_VARIANTS and any(name in options for name in SHUTDOWN_OPTION_NAMES):
        cls = load_decider_class(OPTION_VARIANTS[name_or_path])
    try:
        return cls(options)
    except DeciderChoiceError:
        raise
    except JoulesimError as exc:
        if type(exc).exit_code != JoulesimError.exit_code:
            raise  # a more specific error keeps its own status
        # The decider refused an option's value: bad input (exit 2). The shutdown variants name
        # themselves by class in their messages; the user typed the registered name.
        message = str(exc).replace(f"decider {cls.__name__}", f"decider {name_or_path}")
        raise DeciderChoiceError(message) from None


def accepted_options(name_or_path: str, cls: type) -> dict[str, str] | None:
    """The options decider `name_or_path` accepts (its shutdown variant's too, for the names
    that switch to it when given one), or None when no class lists its options."""
    classes = [cls]
    if name_or_path in OPTION_VARIANTS:
        classes.append(load_decider_class(OPTION_VARIANTS[name_or_path]))
    listed = [getattr(c, "OPTIONS", None) for c in classes]
    if not any(isinstance(options, dict) for options in listed):
        return None
    return {k: v for options in listed if isinstance(options, dict) for k, v in options.items()}


def check_options(cls: type, name: str, options: dict[str, str]) -> None:
    """Refuse options the decider class does not list in its `OPTIONS` (when it has one)."""
    accepted = getattr(cls, "OPTIONS", None)
    if isinstance(accepted, dict):
        _refuse_unknown(name, options, accepted)


def _refuse_unknown(name: str, options: dict[str, str], accepted: dict[str, str]) -> None:
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        listed = ", ".join(sorted(accepted)) or "none"
        hints = "".join(_closest(option, accepted) for option in unknown)
        raise DeciderChoiceError(
            f"decider {name!r} does not accept option(s) {', '.join(unknown)} "
            f"(accepted: {listed}){hints}"
        )


def class_docstring(cls: type) -> str:
    """A class's docstring; read from its source when the class has none at run time: the
    classes that the build compiles (setup.py) keep none, and their source is installed beside."""
    doc = (cls.__doc__ or "").strip()
    if doc:
        return doc
    import ast
    from pathlib import Path

    module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not module_file:
        return ""
    source = Path(module_file).with_name(cls.__module__.rpartition(".")[2] + ".py")
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls.__qualname__:
            return (ast.get_docstring(node) or "").strip()
    return ""


def describe_deciders() -> dict[str, str]:
    """Registered name -> first line of the decider class's docstring, and its options."""
    result = {}
    for name in DECIDERS:
        try:
            cls = load_decider_class(name)
        except DeciderChoiceError as exc:
            if name not in DECIDER_EXTRAS:
                raise
            result[name] = f"(not installed: {exc})"  # its extra is missing: say what to install
            continue
        doc = class_docstring(cls)
        text = doc.splitlines()[0].strip() if doc else ""
        options = list(accepted_options(name, cls) or {})
        if options:
            text += " Options: " + ", ".join(options) + "."
        result[name] = text
    return result
