"""The instances of a study, each with a stable id hashed from its full parameters.

An instance is one simulation: a platform, a workload, a decider with one option set, energy
on or off, a repetition number. Its id is a hash of all of that, with the *content* of every
input file (so an edited file gives new ids and is run again, and renaming a label is not a
change). The same file gives the same ids on every machine and every run.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import orjson

from joulesim.campaign.study_file import DeciderSpec, PlatformSpec, Study, WorkloadSpec

#: Hex digits of an instance id (64 bits: no collision among millions of instances).
ID_LENGTH = 16


@dataclass(frozen=True)
class Instance:
    id: str
    platform: PlatformSpec
    workload: WorkloadSpec
    decider: DeciderSpec
    options: tuple[tuple[str, Any], ...]
    energy: bool
    repetition: int

    def parameters(self) -> dict[str, Any]:
        """The instance's parameters as table columns (decider options as `option.NAME`)."""
        row: dict[str, Any] = {"platform": self.platform.label, "workload": self.workload.label,
                               "week": None, "seed": None, "decider": self.decider.label,
                               "energy": self.energy, "repetition": self.repetition}
        if self.workload.variant is not None:
            key, value = self.workload.variant
            row[key] = value
        for key, value in self.options:
            row[f"option.{key}"] = value
        return row


class FileDigests:
    """sha256 of input files, computed once per run of the campaign (traces can be large)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def of(self, source: str) -> str:
        """The digest of a file, or of a shipped input's name (its content is the package's)."""
        if not os.path.isabs(source):
            return "shipped:" + source
        if source not in self._known:
            digest = hashlib.sha256()
            with open(source, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            self._known[source] = digest.hexdigest()
        return self._known[source]


def workload_identity(workload: WorkloadSpec, digests: FileDigests) -> dict[str, Any]:
    """What makes a workload what it is (its label aside)."""
    source = workload.source if workload.kind == "generator" else digests.of(workload.source)
    return {"kind": workload.kind, "source": source, "variant": workload.variant,
            "settings": [list(item) for item in workload.settings]}


def expand(study: Study, digests: FileDigests | None = None) -> list[Instance]:
    """Every instance of the study, in a stable order (platform, workload, decider, options,
    energy, repetition)."""
    digests = digests or FileDigests()
    instances = []
    seen: dict[str, Instance] = {}
    for platform in study.platforms:
        for workload in study.workloads:
            if workload.platforms is not None and platform.label not in workload.platforms:
                continue
            for decider in study.deciders:
                for options in decider.combinations:
                    for energy in study.energy:
                        for repetition in range(study.repetitions):
                            identity = {
                                "platform": digests.of(platform.source), "mmax": platform.mmax,
                                "workload": workload_identity(workload, digests),
                                "decider": decider.name, "command": decider.command,
                                **({"edc_library": digests.of(decider.edc_library), "edc_isolated": decider.edc_isolated}
                                   if decider.edc_library else {}),
                                "options": [list(item) for item in options],
                                "energy": energy, "repetition": repetition,
                            }
                            if study.window is not None:  # the window's metrics are part of the results
                                identity["window"] = list(study.window)
                            key = hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).hexdigest()
                            instance = Instance(key[:ID_LENGTH], platform, workload, decider, options, energy,
                                                repetition)
                            if instance.id in seen:  # the same simulation listed twice: run it once
                                continue
                            seen[instance.id] = instance
                            instances.append(instance)
    return instances


def select(instances: list[Instance], where: dict[str, list[str]]) -> list[Instance]:
    """The instances whose parameters match every `where` entry (parameter -> accepted values,
    compared as text: week=3, energy=True, option.t_idle=0)."""
    if not where:
        return instances
    known = sorted({key for instance in instances for key in instance.parameters()})
    for key in where:
        if key not in known:
            from joulesim.protocol.errors import JoulesimError

            raise JoulesimError(f"--where {key}=...: no instance parameter is named {key!r}; the parameters are "
                                + ", ".join(known))
    return [i for i in instances
            if all(str(i.parameters().get(key)) in values for key, values in where.items())]
