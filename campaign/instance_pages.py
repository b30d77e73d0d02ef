"""`joulesim campaign report --html`: an interactive page per instance, and an index of them.

Each instance whose Batsim files the campaign kept (`outputs = true` in its [campaign] table:
RESULTS/runs/ID/out_*) gets the page `joulesim report` writes (analysis/html_report.py) in
OUT/instances/ID.html, except that the pages share one copy of BokehJS in OUT/static/ (analysis/
shared_bokehjs.py: 16 pages of tiny runs were 36 MB with a copy each); OUT/index.html lists the
instances, a row each, sortable (campaign/index_page.py), each linking to its page. Failed
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


def write_instance_pages(results: str, out_dir: str) -> list[str]:
    """Write the pages and the index; their paths, the index first."""
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
    for row, prefix in kept.items():
        instance = str(frame.at[row, "instance_id"])
        described = ", ".join(f"{name} {frame.at[row, name]}" for name in parameters)
        run = RunOutputs(prefix, label=described or instance)  # (the page names the run by decider and options)
        source = sources[row]
        pages[row] = write_report([run], os.path.join(pages_dir, f"{instance}.html"),
                                  title=f"{instance}: {described}", groups=_groups(source, run, platforms),
                                  shared_js=shared_js)
        # The counts the page's summary shows, from the jobs file the page has just checked.
        metrics = compute_metrics(run)
        counts[row] = {key: metrics[key] for _, key in COUNT_COLUMNS}
    links = {row: os.path.relpath(page, out_dir) for row, page in pages.items()}
    write_page(index, index_page(frame, parameters, links, counts))
    return [index, *pages.values()]


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
