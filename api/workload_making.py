"""Workloads from Python: generate a synthetic one, or convert an SWF trace, as the commands
`joulesim workload generate` and `joulesim workload from-swf` do, without a file in between
(`joulesim.simulate` takes the returned dict as its workload)."""

from __future__ import annotations

import os
from typing import Any


def generate_workload(model: str, seed: int = 0, **parameters: Any) -> dict[str, Any]:
    """A synthetic Batsim workload (a dict) from `model`: "lublin", "batsim-eval" or
    "grid-stream"; `parameters` are the model's keywords (e.g. jobs=1000, nb_res=128,
    walltime_factor=2.0), as the command's options without their dashes. Same model,
    parameters and seed: the same workload."""
    from joulesim.workload_tools.generators import generator

    return generator(model)(seed=seed, **parameters)


def convert_swf(path: str | os.PathLike, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(workload dict, report) of an SWF trace (.swf or .swf.gz), as `joulesim workload from-swf`
    converts it; `options` are the command's (profile="compute", speed=1e9, week=3, mmax=500,
    missing_walltime="2x", ...; see joulesim.workload_tools.swf.convert_swf). The report counts the
    jobs each cleaning rule dropped."""
    from joulesim.workload_tools.swf import convert_swf as convert

    return convert(os.fspath(path), **options)


def save_workload(workload: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a workload dict as a Batsim JSON workload file (one job per line)."""
    from joulesim.inputs.output_file import write_bytes_whole
    from joulesim.workload_tools.synthetic import dumps

    write_bytes_whole(os.fspath(path), "workload file", dumps(workload))
