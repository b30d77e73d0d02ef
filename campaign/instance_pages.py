"""`joulesim campaign report --html`: an interactive page per instance, and an index of them.

Each instance whose Batsim files the campaign kept (`outputs = true` in its [campaign] table:
RESULTS/runs/ID/out_*) gets the page `joulesim report` writes (analysis/html_report.py) in
OUT/instances/ID.html, except that the pages share one copy of BokehJS in OUT/static/ (analysis/
shared_bokehjs.py: 16 pages of tiny runs were 36 MB with a copy each); OUT/index.html lists the
instances, a row each, sortable (campaign/index_page.py), each linking to its page. With
--compare, the instances that ran the same jobs (same platform, workload, week, seed...) are
also compared on a page per group, OUT/comparisons/, linked from the index. Failed
instances are listed without a link. A campaign folder damaged since the run (a succeeded
instance's run folder, jobs file or record gone, a record that is not one, a results table cut
short) stops the report with one line naming the file, before any page is written. A page's Gantt
groups the machines as the instance's platform does (by node and processor, or by cluster) when
its record names the platform file and the file is still there.
"""

from __future__ import annotations

import os

import pandas as pd

from joulesim.analysis.html_report import write_page, write_report
from joulesim.analysis.machine_groups import MachineGroups, machine_groups
from joulesim.analysis.metrics import compute_metrics
from joulesim.analysis.run_outputs import RunOutputs
from joulesim.analysis.shared_bokehjs import SharedBokehJS
from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import make_output_folder, refuse_non_regular_file
from joulesim.simulation_inputs import platform_from
from joulesim.campaign.index_page import COUNT_COLUMNS, index_page
from joulesim.campaign.report import varying_parameters
from joulesim.campaign.results_store import ResultsStore, read_table
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.platform.platform_model import Platform


# --compare: the instances that ran the same jobs (these parameters equal) on one page each, at
# most this many runs a page (a page holds each run's panels: tens of runs would be unreadable).
SAME_INPUTS = ("platform", "workload", "week", "seed", "energy", "repetition")
MAX_COMPARED = 8


def write_instance_pages(results: str, out_dir: str, compare: bool = False) -> list[str]:
    """Write the pages and the index; their paths, the index first. With `compare`, also a page per
    group of instances that ran the same jobs (SAME_INPUTS equal; 2 to MAX_COMPARED of them),
    comparing them as `joulesim report` compares runs (the first the reference), linked from the
    index."""
    pages_dir = os.path.join(out_dir, "instances")
    index = os.path.join(out_dir, "index.html")
    make_output_folder(out_dir, "output folder (-o)")  # (-o a file: refused before any reading)
    refuse_non_regular_file(index, "campaign index page")
    frame = read_table(results)
    folder = results if os.path.isdir(results) else os.path.dirname(os.path.abspath(results))
    if "instance_id" not in frame.columns or frame["instance_id"].isna().any():
        raise InputError(results, "results table, column instance_id", "is missing or has an empty cell: the "
                         "table is damaged", "rerun `joulesim campaign run` to rewrite it")
    prefixes = {row: os.path.join(folder, "runs", str(instance), "out")
                for row, instance in zip(frame.index, frame["instance_id"])}
    kept = _kept_outputs(frame, prefixes, folder)
    make_output_folder(pages_dir, "page folder (in -o)")
    ok = frame.loc[list(kept)]
    parameters = ["decider"] * ("decider" in frame.columns) + varying_parameters(ok)
    pages = {}
    counts = {}
    store = ResultsStore(folder)
    # Every record read before any page is made: a damaged one stops the report at once.
    sources = {row: store.load_for_report(str(frame.at[row, "instance_id"])).get("platform_source") for row in kept}
    platforms: dict[str, Platform | None] = {}  # by source: instances share a few
    shared_js = SharedBokehJS(out_dir)
    runs = {}
    for row, prefix in kept.items():
        instance = str(frame.at[row, "instance_id"])
        described = _described(frame, row, parameters)
        run = runs[row] = RunOutputs(prefix, label=described or instance)  # (named by decider and options)
        source = sources[row]
        pages[row] = write_report([run], os.path.join(pages_dir, f"{instance}.html"),
                                  title=f"{instance}: {described}", groups=_groups(source, run, platforms),
                                  shared_js=shared_js)
        # The counts the page's summary shows, from the jobs file the page has just checked.
        metrics = compute_metrics(run)
        counts[row] = {key: metrics[key] for _, key in COUNT_COLUMNS}
    comparisons: list[tuple[str, str]] = []  # (what the page compares, its path)
    if compare:
        comparisons = _write_comparisons(frame.loc[list(kept)], runs, sources, platforms, out_dir, shared_js,
                                         parameters)
    links = {row: os.path.relpath(page, out_dir) for row, page in pages.items()}
    compared = [(label, os.path.relpath(page, out_dir)) for label, page in comparisons]
    write_page(index, index_page(frame, parameters, links, counts, compared))
    return [index, *pages.values(), *(page for _, page in comparisons)]


def _described(frame: pd.DataFrame, row, parameters: list[str]) -> str:
    """An instance by its parameters' values ("decider easy-os, option.t_idle 30.0"), leaving out
    those it has none of (fcfs has no t_idle)."""
    return ", ".join(f"{name} {frame.at[row, name]}" for name in parameters if pd.notna(frame.at[row, name]))


def _write_comparisons(kept: pd.DataFrame, runs: dict, sources: dict, platforms: dict, out_dir: str,
                       shared_js: SharedBokehJS, parameters: list[str]) -> list[tuple[str, str]]:
    """A page per group of kept instances on the same inputs (in the table's order, the first
    the reference; groups of more than MAX_COMPARED in pages of MAX_COMPARED)."""
    keys = [column for column in SAME_INPUTS if column in kept.columns and kept[column].notna().any()]
    folder = os.path.join(out_dir, "comparisons")
    written = []
    groups = kept.groupby(keys, sort=False, dropna=False).groups if keys else {"all": kept.index}
    for number, (key, rows) in enumerate(groups.items(), start=1):
        rows = list(rows)
        if len(rows) < 2:
            continue
        values = key if isinstance(key, tuple) else (key,)
        # (named by the inputs that vary between groups: "workload kills", not every constant too)
        inputs = ", ".join(f"{name} {value}" for name, value in zip(keys, values)
                           if pd.notna(value) and kept[name].nunique(dropna=False) > 1)
        for part, first in enumerate(range(0, len(rows), MAX_COMPARED), start=1):
            chosen = rows[first:first + MAX_COMPARED]
            if len(chosen) < 2:
                continue
            make_output_folder(folder, "comparison folder (in -o)")
            label = f"{inputs or 'the campaign'}: {len(chosen)} instances" + (
                f" (part {part} of {-(-len(rows) // MAX_COMPARED)})" if len(rows) > MAX_COMPARED else "")
            # each run named by what differs within the group (decider and options)
            named = [runs[row].labelled(_described(kept, row, [p for p in parameters if p not in keys])
                                        or runs[row].name) for row in chosen]
            path = write_report(named, os.path.join(folder, f"group{number}_{part}.html"),
                                title=label, groups=_groups(sources[chosen[0]], runs[chosen[0]], platforms),
                                shared_js=shared_js)
            written.append((label, path))
    return written


def _kept_outputs(frame: pd.DataFrame, prefixes: dict, folder: str) -> dict:
    """The succeeded instances' run prefixes. None kept: the campaign did not keep outputs (an
    InputError saying how to). Some kept: a succeeded instance whose folder or jobs file is
    missing is an InputError naming it (a folder damaged since), not a row without a link."""
    succeeded = {row: prefix for row, prefix in prefixes.items() if _succeeded(frame.loc[row])}
    if not any(os.path.exists(prefix + "_jobs.csv") for prefix in succeeded.values()):
        raise InputError(folder, "results folder", "no instance kept its output files, so there is no run to draw",
                         "set 'outputs = true' in the study's [campaign] table and run it again")
    for row, prefix in succeeded.items():
        instance = frame.at[row, "instance_id"]
        run_folder = os.path.dirname(prefix)
        missing = run_folder if not os.path.isdir(run_folder) else prefix + "_jobs.csv"
        if not os.path.exists(prefix + "_jobs.csv"):
            raise InputError(missing, f"output files of instance {instance}", "are missing, but the instance "
                             "succeeded and the campaign kept the other instances' files",
                             f"remove {os.path.join(folder, 'instances', f'{instance}.json')} and run the "
                             "campaign again to rewrite them")
    return succeeded


def _groups(source: str | None, run: RunOutputs, platforms: dict[str, Platform | None]) -> MachineGroups | None:
    """How the instance's platform groups the run's machines (its first ones, for a run cut by
    mmax); None for a record of an older joulesim (no platform named) or a platform file gone
    or changed since."""
    if not isinstance(source, str):
        return None
    if source not in platforms:
        try:
            platforms[source] = platform_from(source)
        except JoulesimError:
            platforms[source] = None
    platform = platforms[source]
    groups = None if platform is None else machine_groups(platform, run.nb_machines)
    return groups if groups is not None and groups.nb_machines == run.nb_machines else None


def _succeeded(row: pd.Series) -> bool:
    return "status" not in row.index or row["status"] == "ok"
