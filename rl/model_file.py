"""Model files: a trained Energy scheduler agent and what it was trained for.

Seed 002 (thesis "Intelligent Energy-Aware Task Scheduler for HPC Systems", 2023), §3.3.2 and
§3.3.4: a model is saved at the end of each training simulation, the actor being the SWA average
when there is one. The critic's size depends on the number of actions, so a model only fits the
platform size, number of jobs and wait option it was trained with; the metadata says which, and
`load_agent` compares it with what the caller expects before building anything.

The file is a `torch.save`d dict of plain values (read back with `weights_only=True`):
{"format": "joulesim-rl-1", "metadata", "n_actions", "n_features", "actor", "critic", "settings"}.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from joulesim.inputs.output_file import write_whole
from joulesim.protocol.errors import JoulesimError
from joulesim.rl.networks import ACTOR_WIDTHS
from joulesim.rl.ppo import PPOAgent, PPOSettings


class ModelFileError(JoulesimError):
    """A model file that is missing, damaged, not a joulesim model or made for another run:
    bad input (exit status 2)."""

    exit_code = 2

__all__ = ["FORMAT", "save_agent", "load_agent"]

FORMAT = "joulesim-rl-1"

_HOW_TO_GET_ONE = "train one with `joulesim rl train` or give the path of a model file it wrote"


def _plain(value: Any, where: str = "metadata") -> Any:
    """Metadata as builtins only (None, bool, int, float, str, lists, dicts with str keys).

    Numpy scalars become Python numbers and tuples lists: the file must load with
    weights_only=True, and expected and saved values must compare equal.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        plain = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"model {where}: key {key!r} is not a string")
            plain[str(key)] = _plain(item, f"{where}.{key}")
        return plain
    raise TypeError(f"model {where} is a {type(value).__name__}: only None, bool, int, float, str, lists and "
                    "dicts can be saved")


def save_agent(path: str | os.PathLike[str], agent: PPOAgent, metadata: dict[str, Any]) -> None:
    """Write the agent (actor: the SWA average if any) and its metadata to `path`."""
    plain_metadata = _plain(metadata)
    path = Path(path)
    payload = {
        "format": FORMAT,
        "metadata": plain_metadata,
        "n_actions": agent.n_actions,
        "n_features": agent.n_features,
        "actor": agent.saved_actor().state_dict(),
        "critic": agent.critic.state_dict(),
        "settings": agent.settings.to_dict(),
    }
    # Through a new file renamed over `path` (inputs/output_file.py), so that an interrupted save
    # never leaves half a model behind; a `path` that is a folder, device or FIFO is refused.
    if not path.parent.is_dir():
        raise JoulesimError(f"cannot write model file {path}: its folder {path.parent} does not exist (create it, "
                            "or give a path in a folder you can write to)")
    try:
        write_whole(str(path), "model file", lambda temporary: torch.save(payload, temporary),
                    "give a path in a folder you can write to")
    except RuntimeError as exc:  # torch.save reports some failures as a RuntimeError
        reason = str(exc).strip().splitlines()[0]
        raise JoulesimError(f"cannot write model file {path}: {reason} (does its folder exist, is it "
                            "writable?)") from None


def _mismatches(path: Path, metadata: dict[str, Any], expect: dict[str, Any]) -> str | None:
    missing = object()
    lines = []
    for key, wanted in expect.items():
        found = metadata.get(key, missing)
        if found is missing:
            lines.append(f"{key}: not recorded in the file, this run has {_plain(wanted)!r}")
        elif _plain(found) != _plain(wanted):
            lines.append(f"{key}: the model was trained with {found!r}, this run has {_plain(wanted)!r}")
    if not lines:
        return None
    trained_on = f" (platform {metadata['platform']!r})" if isinstance(metadata.get("platform"), str) else ""
    return (f"model file {path} does not fit this run:\n  " + "\n  ".join(lines) + "\n"
            f"A model only works for what it was trained for{trained_on}: train a model for this platform "
            "and these settings, or run with the platform and settings the model was trained on.")


def _check_checksums(path: Path) -> None:
    """Refuse a zip-format model file whose members fail their CRC-32 (torch.load checks none:
    64 flipped bytes in a tensor would load as different weights and decide silently)."""
    if not zipfile.is_zipfile(path):
        return  # not a torch.save file at all: torch.load's failure says so
    try:
        with zipfile.ZipFile(path) as archive:
            bad_member = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = f"its zip structure is broken: {detail}"
    else:
        if bad_member is None:
            return
        reason = f"the CRC-32 checksum of its part {bad_member!r} does not match its contents"
    raise ModelFileError(f"model file {path} is corrupted ({reason}; it was changed or damaged after it was "
                        f"written): copy it again from where it was trained, or {_HOW_TO_GET_ONE}")


def load_agent(path: str | os.PathLike[str], expect: dict[str, Any] | None = None,
               settings: PPOSettings | None = None) -> tuple[PPOAgent, dict[str, Any]]:
    """Read a model file; (agent, metadata).

    `expect`: metadata values the run needs (num_nodes, num_jobs, features, ...); any difference
    is a JoulesimError listing them. `settings`: the agent's settings (default: the saved ones,
    names this version does not know being ignored).
    """
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise ModelFileError(f"model file {path} {what}: {_HOW_TO_GET_ONE}")
    _check_checksums(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any failure to unpickle means "not a model file"
        # torch's own messages suggest weights_only=False, which would run the file's code.
        if not zipfile.is_zipfile(path):
            reason = "it is not a file written by torch.save"
        elif isinstance(exc, pickle.UnpicklingError):
            reason = "it holds objects other than tensors and plain values, refused as they could run code"
        else:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            reason = f"it cannot be read: {detail}"
        raise ModelFileError(f"model file {path} is not a joulesim model ({reason}): {_HOW_TO_GET_ONE}") from None
    if not isinstance(data, dict) or "format" not in data:
        raise ModelFileError(f"model file {path} is not a joulesim model (no format mark): {_HOW_TO_GET_ONE}")
    if data["format"] != FORMAT:
        raise ModelFileError(f"model file {path} has format {data['format']!r}, and this joulesim reads "
                            f"{FORMAT!r}: retrain the model with this version (`joulesim rl train`)")

    def damaged(reason: str) -> ModelFileError:
        return ModelFileError(f"model file {path} is damaged ({reason}): {_HOW_TO_GET_ONE}")

    kinds = {"metadata": dict, "n_actions": int, "n_features": int, "actor": dict, "critic": dict, "settings": dict}
    for key, kind in kinds.items():
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise damaged(f"{key!r} is missing or not a {kind.__name__}")
    metadata: dict[str, Any] = data["metadata"]
    if expect:
        problem = _mismatches(path, metadata, expect)
        if problem:
            raise ModelFileError(problem)
    # The network's form is the file's, whatever `settings` says: the thesis's actor ends in a
    # SELU, the default one in a linear layer, with the same weights' shapes; the actor's widths
    # are the weights'. Files written before each choice existed hold the thesis's network and
    # widths.
    saved = {**data["settings"], "network": data["settings"].get("network", "thesis"),
             "actor_widths": data["settings"].get("actor_widths", ACTOR_WIDTHS)}
    try:
        settings = PPOSettings.from_dict(saved, ignore_unknown=True) if settings is None \
            else dataclasses.replace(settings, network=saved["network"], actor_widths=saved["actor_widths"])
    except (JoulesimError, TypeError) as exc:
        raise damaged(f"its settings: {exc}") from None
    try:
        agent = PPOAgent(data["n_actions"], data["n_features"], settings)
        agent.actor.load_state_dict(data["actor"])
        agent.critic.load_state_dict(data["critic"])
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise damaged(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__) from None
    return agent, metadata
