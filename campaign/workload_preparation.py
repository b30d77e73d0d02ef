"""Turn a study's trace slices and generated workloads into workload files, once.

A week of an SWF trace or a seed of a generator is converted once per campaign folder and
kept under RESULTS/workloads/, named by the hash of what defines it: every instance (and a
rerun) reads the same file, and workers never convert a trace.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import orjson

from joulesim.campaign.instances import FileDigests, workload_identity
from joulesim.campaign.study_file import WorkloadSpec
from joulesim.inputs.output_file import write_bytes_whole
from joulesim.workload_tools.generators import generator


def prepared_path(workload: WorkloadSpec, digests: FileDigests, directory: str) -> str:
    """Where the workload's file is (a given file) or will be (a converted or generated one)."""
    if workload.kind == "file":
        return workload.source
    key = hashlib.sha256(orjson.dumps(workload_identity(workload, digests), option=orjson.OPT_SORT_KEYS))
    return os.path.join(directory, f"{workload.label}-{key.hexdigest()[:16]}.json")


def prepare(workload: WorkloadSpec, digests: FileDigests, directory: str) -> tuple[str, dict[str, Any] | None]:
    """Write the workload's file unless it exists; returns (path, conversion report or None)."""
    path = prepared_path(workload, digests, directory)
    if workload.kind == "file" or os.path.exists(path):
        return path, None
    settings = dict(workload.settings)
    report = None
    if workload.kind == "trace":
        from joulesim.workload_tools.swf import convert_swf

        week = workload.variant[1] if workload.variant else None
        document, report = convert_swf(workload.source, week=week, **settings)
    else:
        document = generator(workload.source)(seed=workload.variant[1], **settings)
    os.makedirs(directory, exist_ok=True)
    # A new file renamed over `path` (atomic: a reader never sees half a file; each worker its own
    # temporary); a `path` that is a folder, device or FIFO is refused.
    write_bytes_whole(path, "prepared workload", orjson.dumps(document),
                      "remove what is there, or give the campaign another --out")
    return path, report
