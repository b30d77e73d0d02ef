"""`joulesim report`: one self-contained interactive HTML page of one or several runs.

Written with Bokeh (the `report` extra): it renders in the browser from data embedded in the
page, with its own JavaScript inlined (`resources=INLINE`), so the file opens from disk with no
server and no network (a campaign's pages share one copy of it instead: shared_bokehjs.py); the
only code of ours it runs is the level of detail's callbacks (a zoom shows the rectangles in view,
and redraws the series at the view's resolution: report_series.py). Bokeh rather than Plotly: its
canvas draws the tens of thousands of rectangles of a view smoothly (its WebGL, the many points
of the start-time scatter), its figures share a time axis by sharing one range object, and it
writes a single file with nothing to fetch.

The page, per run (named by its label, e.g. `joulesim report --label`, else its prefix), on one
time axis shared by every run (zoom one, the others follow), in days and hours since the start
or in UTC dates when the start is known (time_axis.py):
- a Gantt chart of jobs on machines (a rectangle per contiguous host range of a job, coloured
  by default so that jobs that touch differ (job_colouring.py), or by final state, workload or
  size class, chosen on the page; killed, failed and walltime-reached jobs hatched whatever
  the colouring; hover: job id, workload, submission, start, end, waiting time with units,
  size, state, energy in J and kWh when the run had energy), its machines grouped as the
  platform groups them when it is given (machine_groups.py: cores by node and processor on an
  IRMaSim node platform, each job a rectangle per processor it used; machines by cluster);
  behind the jobs, on an energy run, each machine's power state (power_states.py: on,
  switching on or off, asleep);
- machine states over time (computing, idle, sleeping, switching);
- power, and cumulative energy in kWh, each in its own panel, when the run had energy on;
- queue length (jobs submitted and not started), the queue in requested resources (machines
  asked for by the waiting jobs), utilisation (computing / machines), and fragmentation (free
  machines and the largest block of contiguous ones: free_slots.py), each in its own panel;
- on a priced platform, each cluster's electricity cost over time and over the run (and each
  job's in the Gantt's hover).
Then the distributions of waiting time, run time, bounded slowdown and job size, each as a
histogram (log bins where they span decades; each run an outline of its own colour) beside its
CDF, the summary metrics (one row per run) and, with several runs, each job's start compared
with the first run's: on each later run's Gantt (colour by "start against ...": the difference
Gantt) and as a scatter. Legends sit above their plots, off the data.

The page is written to a temporary file beside the target and renamed over it, so a failure
never leaves a half-written report.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pandas as pd

from joulesim.analysis import free_slots, report_series, time_axis
from joulesim.analysis.job_colouring import PALETTE, job_colours
from joulesim.analysis.power_states import STATES as POWER_STATES, machine_power_spans
from joulesim.analysis.machine_groups import MachineGroups, check_platform_fits
from joulesim.analysis.metrics import DEFAULT_TAU, compute_metrics, metric_label
from joulesim.analysis.run_outputs import AnalysisError, MissingExtraError, RunOutputs
from joulesim.analysis.shared_bokehjs import SharedBokehJS
from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import refuse_non_regular_file, write_whole

# Renderers found by name in the page (tests): GANTT_NAME_i is run i's Gantt, DIFFERENCE_NAME_i
# run i's start differences against run 0.
GANTT_NAME = "gantt_jobs"
DIFFERENCE_NAME = "start_differences"
SERIES_NAME = "series"  # SERIES_NAME_states_i, _utilisation_i, _queue_i, _queued_machines_i: run i's drawn series
# GANTT_NAME_i_power_states: run i's power-state band; HISTOGRAM_NAME_k_i: histogram k's bars of run i
HISTOGRAM_NAME = "histogram"
CDF_NAME = "cdf"  # CDF_NAME_k_i: distribution k's CDF of run i
SUMMARY_NAME = "summary"  # the metrics table
# A job that did not complete successfully is hatched, whatever colours the Gantt.
UNSUCCESSFUL_STATES = ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_FAILED")
JOB_COLOURING = "job (neighbours differ)"
# Every categorical colour of the page from Okabe and Ito's colour-blind-safe palette (the job
# colouring's, job_colouring.PALETTE), or grey: states told apart by hue and lightness alike.
STATE_COLORS = {
    "COMPLETED_SUCCESSFULLY": "#0072B2", "COMPLETED_KILLED": "#D55E00", "COMPLETED_WALLTIME_REACHED": "#E69F00",
    "COMPLETED_FAILED": "#CC79A7", "REJECTED": "#999999",
}
MACHINE_STATE_COLUMNS = [("nb_computing", "computing", "#0072B2"), ("nb_idle", "idle", "#009E73"),
                         ("nb_switching_on", "switching on", "#E69F00"),
                         ("nb_switching_off", "switching off", "#D55E00"), ("nb_sleeping", "sleeping", "#999999")]
# Above this many rectangles, a Gantt opens on a raster of RASTER_ROWS x RASTER_COLUMNS cells.
EXACT_RECTANGLES = 20_000
RASTER_ROWS, RASTER_COLUMNS = 600, 1600
SUMMARY_KEYS = ["nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected", "makespan",
                "mean_waiting_time", "max_waiting_time", "mean_bounded_slowdown", "utilization", "consumed_joules",
                "nb_machine_switches"]
WIDTH = 1100
# A later run's Gantt against the first run's (the difference Gantt): each job by how its start
# moved, in colour-blind-safe colours (Okabe-Ito; earlier blue, later orange, unmoved grey).
# Starts within SAME_START_S of each other count as the same (jobs files print microseconds).
SHIFT_HOUR = 3600.0
SAME_START_S = 1e-6
SHIFT_CLASSES = (("started earlier by more than 1 h", "#0072B2"), ("started earlier by up to 1 h", "#56B4E9"),
                 ("same start", "#BBBBBB"), ("started later by up to 1 h", "#E69F00"),
                 ("started later by more than 1 h", "#D55E00"), ("not started in the first run", "#CC79A7"))
_PAGE_FIX = "give the path of the page's file, e.g. FOLDER/report.html"


def bokeh_version() -> str:
    """Bokeh's version; a clear error when the `report` extra is not installed."""
    try:
        import bokeh
    except ImportError:
        raise MissingExtraError("the HTML report needs Bokeh: pip install 'joulesim[report]'") from None
    return bokeh.__version__


def write_report(runs: list[RunOutputs], path: str, tau: float = DEFAULT_TAU, title: str | None = None,
                 exact_rectangles: int | None = None, groups: MachineGroups | None = None,
                 start_time: float | None = None, shared_js: SharedBokehJS | None = None) -> str:
    """Write the report of `runs` to `path` (.html added if missing); the path written.
    `exact_rectangles`: above this many, a Gantt opens on its raster (EXACT_RECTANGLES).
    `groups`: how the runs' platform groups its machines (machine_groups.py), for the Gantts.
    `start_time`: the Unix time of simulated time 0, for a date axis (time_axis.py).
    `shared_js`: the page loads BokehJS from that copy (shared_bokehjs.py) rather than inlining it."""
    exact_rectangles = EXACT_RECTANGLES if exact_rectangles is None else exact_rectangles
    bokeh_version()
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import Div
    from bokeh.resources import INLINE

    if not runs:
        raise AnalysisError("no run to report")
    _check_page_path(path)
    if not path.lower().endswith((".html", ".htm")):
        path += ".html"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise AnalysisError(f"{path}: the folder {directory} does not exist or is not writable")
    refuse_non_regular_file(path, "report page", _PAGE_FIX)
    _check_runs(runs)
    if groups is not None:
        for run in runs:
            check_platform_fits(groups.source, groups.nb_machines, run.name, run.nb_machines)
    metrics = [compute_metrics(run, tau) for run in runs]
    time_range = _time_range(runs)
    parts: list[Any] = [Div(text=f"<h1>{_escape(title or 'joulesim report')}</h1>"), _summary_table(metrics, tau)]
    for index, run in enumerate(runs):
        parts.append(Div(text=_run_heading(run)))
        parts += _time_figures(run, time_range, index, exact_rectangles, groups, start_time,
                               runs[0] if index else None)
    parts.append(Div(text="<h2>Distributions</h2>"))
    parts += _distributions(runs, tau)
    if len(runs) > 1:
        parts.append(Div(text=f"<h2>Start times against {_escape(runs[0].name)}</h2>"))
        parts.append(_start_differences(runs, start_time))
    root = column(*parts, sizing_mode="stretch_width")
    resources = INLINE if shared_js is None else shared_js.resources_for(path, root)
    write_page(path, file_html(root, resources, title or "joulesim report"))
    return path


def write_page(path: str, text: str) -> None:
    """Write `text` to a new file beside `path`, then rename it over `path`: a failure never
    leaves half a page; an existing `path` that is not a regular file (a folder, a device, a FIFO)
    is refused, never replaced (inputs/output_file.py)."""

    def write(temporary: str) -> None:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)

    write_whole(path, "report page", write, "give the path of the page in a folder you can write to")


def _check_page_path(path: str) -> None:
    """Refuse a page path, as given, that names a folder (`-o pages/`, `-o pages`: the page would
    have been the hidden file pages/.html, or pages.html beside it, with the command saying all was
    well) or a device or FIFO (`-o /dev/full` would have made /dev/full.html)."""
    if path.endswith(("/", os.sep)):
        raise InputError(path, "report page", "is a folder, not a file", _PAGE_FIX)
    refuse_non_regular_file(path, "report page", _PAGE_FIX)


# ---------------------------------------------------------------------- checks
def _check_runs(runs: list[RunOutputs]) -> None:
    """Read what the report needs now, so that a bad file stops it before anything is written."""
    for run in runs:
        if len(run.jobs) == 0:
            raise AnalysisError(f"{run.path('jobs')}: the run has no job: nothing to report")
        run.machine_states
        run.allocation_runs()
        run.consumed_energy
    machines = {run.name: run.nb_machines for run in runs}
    if len(set(machines.values())) > 1:
        listed = ", ".join(f"{name} ({count})" for name, count in machines.items())
        raise AnalysisError(f"the runs have different numbers of machines, so not one platform: {listed}; "
                            "compare runs of one platform")


def _run_heading(run: RunOutputs) -> str:
    """A run's heading: its label (--label: decider and options), and the prefix its files are under."""
    heading = f"<h2>{_escape(run.name)}</h2>"
    if run.name != run.prefix:
        heading += f"<p>outputs: <code>{_escape(run.prefix)}_*</code></p>"
    return heading


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------- time figures
def _time_range(runs: list[RunOutputs]):
    from bokeh.models import Range1d

    end = 0.0
    for run in runs:
        finish = run.jobs["finish_time"].to_numpy(dtype=float)
        submit = run.jobs["submission_time"].to_numpy(dtype=float)
        end = max(end, float(np.nanmax(np.concatenate([finish, submit, [0.0]]))))
        changes = run.pstate_changes  # (a switch may end after the last job)
        if changes is not None and len(changes):
            end = max(end, float(np.nanmax(changes["time"].to_numpy(dtype=float))))
    end = end if end > 0 else 1.0
    return Range1d(0.0, end, bounds=(0.0 - 0.02 * end, end * 1.02))


def _time_figure(time_range, height: int, y_label: str, tools: str = "xpan,xwheel_zoom,box_zoom,reset,save",
                 start_time: float | None = None):
    """A figure on the shared time axis, drawn on the canvas, the Gantt too: lines of hundreds of
    thousands of points drew 20-40 times slower in WebGL than on the canvas in headless
    Chromium's software WebGL (CEA-Curie's queue: 42 s to the first frame against 2 s), and with
    the level of detail a Gantt draws at most some tens of thousands of rectangles, which the
    canvas drew 2-3 times faster than WebGL there (each WebGL frame is copied back into the page:
    CEA-Curie's zooms 0.62-0.71 s in WebGL, 0.17-0.35 s on the canvas; BENCHMARKS.md)."""
    from bokeh.models import NumeralTickFormatter
    from bokeh.plotting import figure

    fig = figure(x_range=time_range, height=height, width=WIDTH, tools=tools, active_scroll="xwheel_zoom",
                 output_backend="canvas", sizing_mode="stretch_width")
    time_axis.apply_time_axis(fig, start_time)
    fig.yaxis.axis_label = y_label
    # counts with thousands separated, never an exponent (CEA-Curie's queue read 2.000e+6 machines)
    fig.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
    fig.toolbar.logo = None
    return fig


def _time_figures(run: RunOutputs, time_range, index: int, exact_rectangles: int,
                  groups: MachineGroups | None = None, start_time: float | None = None,
                  base: RunOutputs | None = None) -> list[Any]:
    changes = _machine_state_changes(run)
    figures = (*_gantt(run, time_range, f"{GANTT_NAME}_{index}", exact_rectangles, groups, start_time, base),
               _machine_states(run, time_range, changes, index, start_time), *_power(run, time_range, index, start_time),
               *_queues(run, time_range, index, start_time),
               _utilisation(run, time_range, changes, index, start_time),
               _free_slots(run, time_range, index, start_time),
               _cost_over_time(run, time_range, index, start_time), _cluster_costs(run))
    return [fig for fig in figures if fig is not None]


def _job_keys(jobs: pd.DataFrame) -> pd.Index:
    """Each job's identity across runs of the same workloads: workload!id, as Batsim names it."""
    return pd.Index(jobs["workload_name"].astype(str) + "!" + jobs["job_id"].astype(str))


def start_shifts(run: RunOutputs, base: RunOutputs) -> np.ndarray:
    """Per job of `run` (its jobs file's order), its start here minus its start in `base` (s);
    NaN where either run did not start it."""
    base_starts = pd.Series(base.jobs["starting_time"].to_numpy(dtype=float), index=_job_keys(base.jobs))
    base_starts = base_starts[~base_starts.index.duplicated()]
    there = base_starts.reindex(_job_keys(run.jobs)).to_numpy(dtype=float)
    return run.jobs["starting_time"].to_numpy(dtype=float) - there


def shift_classes(shifts: np.ndarray) -> np.ndarray:
    """SHIFT_CLASSES' index of each start shift (NaN: not started in the first run)."""
    codes = np.full(shifts.shape, 5, dtype=np.int8)
    known = ~np.isnan(shifts)
    value = shifts[known]
    codes[known] = np.select([value < -SHIFT_HOUR, value < -SAME_START_S, value <= SAME_START_S, value <= SHIFT_HOUR],
                             [0, 1, 2, 3], 4)
    return codes


def _colourings(jobs: pd.DataFrame, job_colour: np.ndarray, shifts: np.ndarray | None = None,
                base_name: str = "") -> dict[str, tuple[str, np.ndarray, list[str], list[str]]]:
    """The Gantt's colourings: label -> (column, each job's code, the codes' names, their
    colours). Codes rather than names: a page of a million rectangles would otherwise carry a
    million names, most of its weight, to decode and parse. The first, the default: each job
    one of PALETTE's colours, neighbours never the same (job_colouring.py). With `shifts` (a
    later run's start shifts against the first run, `base_name`), the difference Gantt's too."""
    from bokeh.palettes import Category10_10, Viridis256

    states, state_codes = np.unique(jobs["final_state"].astype(str).to_numpy(), return_inverse=True)
    workloads, workload_codes = np.unique(jobs["workload_name"].astype(str).to_numpy(), return_inverse=True)
    sizes = np.maximum(pd.to_numeric(jobs["requested_number_of_resources"], errors="coerce").fillna(1).to_numpy(), 1)
    power = np.floor(np.log2(sizes)).astype(np.int64)  # size classes: 1, 2-3, 4-7, ...
    classes, class_codes = np.unique(power, return_inverse=True)
    class_names = [str(2 ** k) if k == 0 else f"{2 ** k}-{2 ** (k + 1) - 1}" for k in classes.tolist()]
    spread = [Viridis256[int(i * 255 / max(len(classes) - 1, 1))] for i in range(len(classes))]
    colourings = {
        JOB_COLOURING: ("colour", job_colour, [f"colour {i + 1}" for i in range(len(PALETTE))], list(PALETTE)),
        "final state": ("state", state_codes.astype(np.int8), states.tolist(),
                        [STATE_COLORS.get(f, "#7f7f7f") for f in states.tolist()]),
        "workload": ("workload", workload_codes.astype(np.int16), workloads.tolist(),
                     [Category10_10[i % 10] for i in range(len(workloads))]),
        "size (machines)": ("size_class", class_codes.astype(np.int8), class_names, spread),
    }
    if shifts is not None:
        colourings[shift_label(base_name)] = ("shift", shift_classes(shifts), [
            name.replace("the first run", base_name) for name, _ in SHIFT_CLASSES], [c for _, c in SHIFT_CLASSES])
    return colourings


def shift_label(base_name: str) -> str:
    """The difference Gantt's entry in a later run's colouring choice."""
    return f"start against {base_name}"


def _gantt(run: RunOutputs, time_range, name: str, exact_rectangles: int, groups: MachineGroups | None = None,
           start_time: float | None = None, base: RunOutputs | None = None):
    """The colouring's choice, and the Gantt chart (its machines grouped by `groups`, if given);
    with `base` (the first run, for a later one), also coloured by how each start moved."""
    from bokeh.models import ColumnDataSource, CustomJS, CustomJSHover, HoverTool, Legend, LegendItem, Select
    from bokeh.transform import linear_cmap

    jobs = run.jobs
    rows, lows, highs = run.allocation_runs()
    # colours from the job's whole host ranges (before any cut at groups: a job is one colour)
    job_start = jobs["starting_time"].to_numpy(dtype=float)
    job_colour, clashes = job_colours(len(jobs), rows, job_start[rows], jobs["finish_time"].to_numpy(dtype=float)[rows],
                                      lows, highs, job_start)
    if groups is not None:  # a rectangle per job and group (processor, node or cluster) it used
        rows, lows, highs, group = _cut_at_groups(rows, lows, highs, groups.finest)
    start = job_start[rows]
    finish = jobs["finish_time"].to_numpy(dtype=float)[rows]
    shifts = start_shifts(run, base) if base is not None else None
    colourings = _colourings(jobs, job_colour, shifts, base.name if base is not None else "")
    unsuccessful = np.isin(jobs["final_state"].astype(str).to_numpy(), UNSUCCESSFUL_STATES)
    data = {
        "left": start, "right": finish, "bottom": (lows - 0.5).astype(np.float32),
        "top": (highs + 0.5).astype(np.float32), "job_id": _job_ids(jobs["job_id"])[rows],
        "waiting": jobs["waiting_time"].to_numpy(dtype=float)[rows],
        "size": jobs["requested_number_of_resources"].to_numpy()[rows].astype(np.int32),
        **{column: codes[rows] for column, codes, _, _ in colourings.values()},
    }
    hovers = time_axis.hover_formatters(start_time)
    tooltips = [("job", "@job_id"), ("workload", "@workload{name}"), ("submitted", "$index{submitted}"),
                ("start", "@left{time}"), ("end", "@right{time}"), ("waiting", "@waiting{duration}"),
                ("size", "@size"), ("state", "@state{name}")]
    names_of = {column: colourings[label][2] for label, column in (("final state", "state"), ("workload", "workload"))}
    if shifts is not None:
        data["start_shift"] = shifts[rows]
        tooltips.append((f"start - start in {base.name}", "@start_shift{duration}"))  # type: ignore[union-attr]
    if groups is not None:
        data.update(group=group, first=lows.astype(np.int32), last=highs.astype(np.int32))
        names_of["group"] = [group_name for group_name, _, _ in groups.finest]
        tooltips += [(groups.inner_kind or groups.outer_kind, "@group{name}"),
                     ("cores" if groups.outer_kind == "node" else "machines", "@first to @last")]
    if run.consumed_energy is not None and "consumed_energy" in jobs.columns:  # (-1 in every row with energy off)
        data["energy"] = pd.to_numeric(jobs["consumed_energy"], errors="coerce").to_numpy(dtype=float)[rows]
        tooltips.append(("energy", "@energy{energy}"))
    costs = run.energy_cost
    if costs is not None and (costs["kind"] == "job").any():  # a priced platform: each job's electricity
        by_job = costs[costs["kind"] == "job"].set_index(costs.loc[costs["kind"] == "job", "name"].astype(str))
        job_names = jobs["workload_name"].astype(str) + "!" + jobs["job_id"].astype(str)
        data["cost"] = by_job["cost_cents"].reindex(job_names).to_numpy(dtype=float)[rows]
        tooltips.append(("cost", "@cost{0.[000]} cents"))
    nb_machines = run.nb_machines
    top = max(nb_machines, int(highs.max(initial=0)) + 1)
    fig = _time_figure(time_range, max(280, min(640, 40 + 12 * nb_machines)), _machine_axis_label(groups),
                       start_time=start_time)
    fig.y_range.start, fig.y_range.end = -0.5, top - 0.5
    band_items, band = _power_band(fig, run, time_range, name)
    every = ColumnDataSource(data, name=f"{name}_all")
    # (the power band's spans count too: a large run with shutdown has hundreds of thousands)
    detailed = rows.size + (0 if band is None else len(band.data_source.data["left"])) > exact_rectangles
    lod_sources = []
    if detailed and band is not None:  # zoomed out none of its spans, zoomed in those in view
        every_band = band.data_source
        band.data_source = ColumnDataSource({key: column[:0] for key, column in every_band.data.items()})
        lod_sources.append([every_band, band.data_source])
    # With a level of detail the rectangles' renderer starts empty and gets the jobs of the view
    # once zoomed in (a browser then indexes and colours thousands of rectangles, not all).
    shown = ColumnDataSource({key: column[:0] for key, column in data.items()}) if detailed else every
    fills = {label: linear_cmap(column, colors, -0.5, len(names) - 0.5)
             for label, (column, _, names, colors) in colourings.items()}
    renderer = fig.quad(source=shown, left="left", right="right", bottom="bottom", top="top",
                        fill_color=fills[JOB_COLOURING], line_color="white" if rows.size <= 2000 else None,
                        line_width=0.5, name=name)
    # Killed, failed and walltime-reached jobs hatched, whatever colours the rectangles: an
    # overlay of theirs alone (a pattern per rectangle in the jobs' renderer made each zoom on
    # CEA-Curie's page take 3.6-4.6 s instead of 0.8-1.0 in headless Chromium).
    # With a level of detail, it too shows only the jobs in view: all of CEA-Curie's killed jobs
    # (5,416) made each zoom in 1.9-2.2 s, against 1.0 without them.
    hatched_rows = unsuccessful[rows]
    every_hatched = ColumnDataSource({key: data[key][hatched_rows] for key in ("left", "right", "bottom", "top",
                                                                               "job_id")}, name=f"{name}_hatched")
    shown_hatched = ColumnDataSource({key: column[:0] for key, column in every_hatched.data.items()}) if detailed \
        else every_hatched
    hatched = fig.quad(source=shown_hatched, left="left", right="right", bottom="bottom", top="top", fill_color=None, line_color=None,
                       hatch_pattern="/", hatch_color="#000000", hatch_alpha=0.8, hatch_scale=8)
    # A legend per colouring, the chosen one shown (a legend from the data would scan every row;
    # a rectangle at NaN draws nothing but gives its item the colour). The neighbour colouring's
    # colours mean nothing but "another job": one item says so.
    items: dict[str, list[Any]] = {}
    for label, (_, _, names, colors) in colourings.items():
        if label == JOB_COLOURING:
            names, colors = ["each job: one of 7 colour-blind-safe colours, touching jobs differ"], [PALETTE[0]]
        items[label] = [LegendItem(label=factor, visible=label == JOB_COLOURING, renderers=[
            fig.quad(left=[math.nan], right=[math.nan], bottom=[math.nan], top=[math.nan], fill_color=color,
                     line_color=None)]) for factor, color in zip(names, colors)]
    always = []
    if unsuccessful.any():
        always.append(LegendItem(label="hatched: killed, failed or walltime reached", renderers=[
            fig.quad(left=[math.nan], right=[math.nan], bottom=[math.nan], top=[math.nan], fill_color="#ffffff",
                     line_color="#000000", hatch_pattern="/", hatch_color="#000000", hatch_scale=8)]))
    legend = Legend(items=[item for group in items.values() for item in group] + always + band_items,
                    orientation="horizontal", name=f"{name}_legend")
    fig.add_layout(legend, "above")  # (not over the jobs)
    fig.legend.ncols = 3  # (wrapped: a long row would widen the page)
    formatters = {f"@{column}": CustomJSHover(args={"names": names}, code="return names[value];")
                  for column, names in names_of.items()}
    formatters.update({"$index": time_axis.submission_hover(start_time, shown), "@left": hovers["time"],
                       "@right": hovers["time"],
                       "@waiting": hovers["duration"], "@energy": hovers["energy"], "@start_shift": hovers["duration"]})
    fig.add_tools(HoverTool(renderers=[renderer], tooltips=tooltips, formatters=formatters))
    choice = Select(title="colour by", value=JOB_COLOURING, options=list(colourings), name=f"{name}_colour_by",
                    width=260)
    choice.js_on_change("value", CustomJS(args={"glyph": renderer.glyph, "fills": fills, "items": items},
                                          code=_COLOUR_BY))
    if groups is not None:
        _draw_groups(fig, groups)
    elif nb_machines <= 32:
        fig.yaxis.ticker = list(range(nb_machines))
    fig.title.text = f"jobs on machines ({len(jobs):,} jobs)" if groups is None else \
        f"jobs on {_grouping_title(groups)} ({len(jobs):,} jobs)"
    if clashes:
        fig.title.text += f"; {clashes:,} jobs share a colour with a neighbour (the palette ran out around them)"
    if detailed:
        # Level of detail: zoomed out, a raster of how busy the machines are; zoomed in to a
        # time span holding about `exact_rectangles` rectangles on average, the rectangles of
        # the jobs in view.
        span = time_range.end - time_range.start
        detail = span * exact_rectangles / rows.size
        busy = _busy_raster(start, finish, lows, highs, span, top)
        raster = fig.image(image=[busy], x=0.0, y=-0.5, dw=span, dh=top, color_mapper=_busy_mapper(),
                           level="image", name=f"{name}_raster")
        # (zoomed out, the legend's colours, hatching and power states are not what is drawn)
        renderer.visible = hatched.visible = legend.visible = False
        titles = [fig.title.text + (f": how busy the machines are (darker: busier); zoom in to under "
                                    f"{_span_text(detail)} for each job"),
                  fig.title.text + f": each job in view (zoom out past {_span_text(detail)} for how busy the "
                                   "machines are)"]
        fig.title.text = titles[0]
        toggle = CustomJS(args={"exact": renderer, "raster": raster, "range": time_range, "detail": detail,
                                "hatched": hatched, "legend": legend,
                                "sources": [[every, shown], [every_hatched, shown_hatched], *lod_sources],
                                "title": fig.title, "titles": titles},
                          code=_SHOW_JOBS_IN_VIEW)
        time_range.js_on_change("start", toggle)
        time_range.js_on_change("end", toggle)
    return choice, fig


def _span_text(seconds: float) -> str:
    """A time span in the unit that reads best: days, hours, minutes or seconds."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.3g} s"


def _power_band(fig, run: RunOutputs, time_range, name: str) -> tuple[list[Any], Any]:
    """Behind the jobs, each machine's power state over time (power_states.py), drawn light;
    its legend items (the states the run had) and its renderer (None without power states)."""
    from bokeh.models import ColumnDataSource, LegendItem
    from bokeh.transform import linear_cmap

    spans = machine_power_spans(run, time_range.end)
    if spans is None:
        return [], None
    colours = [colour for _, colour in POWER_STATES]
    source = ColumnDataSource({"left": spans["left"], "right": spans["right"],
                               "bottom": (spans["first"] - 0.5).astype(np.float32),
                               "top": (spans["last"] + 0.5).astype(np.float32), "state": spans["state"]},
                              name=f"{name}_power_states")
    band = fig.quad(source=source, left="left", right="right", bottom="bottom", top="top", line_color=None,
                    fill_color=linear_cmap("state", colours, -0.5, len(colours) - 0.5), fill_alpha=0.45,
                    level="underlay")
    present = sorted(set(spans["state"].tolist()))
    # (legend items of stand-ins: an item of the band itself would scan its rows)
    return [LegendItem(label=f"machine {POWER_STATES[state][0]}", renderers=[
            fig.quad(left=[math.nan], right=[math.nan], bottom=[math.nan], top=[math.nan],
                     fill_color=POWER_STATES[state][1], fill_alpha=0.45, line_color=None)]) for state in present], band


def _cut_at_groups(rows: np.ndarray, lows: np.ndarray, highs: np.ndarray, ranges: list[tuple[str, int, int]]):
    """The allocation runs cut where a group ends: (rows, lows, highs, each piece's group)."""
    firsts = np.array([first for _, first, _ in ranges], dtype=np.int64)
    lasts = np.array([last for _, _, last in ranges], dtype=np.int64)
    low_group = np.searchsorted(firsts, lows, side="right") - 1
    high_group = np.searchsorted(firsts, highs, side="right") - 1
    pieces = high_group - low_group + 1
    piece_of = np.repeat(np.arange(rows.size), pieces)
    group = low_group[piece_of] + (np.arange(piece_of.size) - np.repeat(np.cumsum(pieces) - pieces, pieces))
    return (rows[piece_of], np.maximum(lows[piece_of], firsts[group]), np.minimum(highs[piece_of], lasts[group]),
            group.astype(np.int32))


def _machine_axis_label(groups: MachineGroups | None) -> str:
    if groups is None:
        return "machine"
    return "core (by node)" if groups.outer_kind == "node" else "machine (by cluster)"


def _grouping_title(groups: MachineGroups) -> str:
    count = f"{len(groups.outer):,} {groups.outer_kind}s"
    if groups.inner_kind:
        count += f", {len(groups.inner):,} {groups.inner_kind}s, {groups.nb_machines:,} cores"
        return f"cores grouped by node and processor ({count})"
    return f"machines grouped by cluster ({count})"


def _draw_groups(fig, groups: MachineGroups) -> None:
    """Every other outer group (node, cluster) shaded, a line between outer groups and a dotted
    one between inner groups (processors); the axis names the outer groups when they fit."""
    outer = groups.outer
    fig.hstrip(y0=[first - 0.5 for _, first, _ in outer[1::2]], y1=[last + 0.5 for _, _, last in outer[1::2]],
               fill_color="#000000", fill_alpha=0.06, line_color=None, level="underlay")
    outer_edges = {first - 0.5 for _, first, _ in outer[1:]}
    inner_edges = sorted({first - 0.5 for _, first, _ in groups.inner[1:]} - outer_edges)
    if inner_edges:
        fig.hspan(y=inner_edges, line_color="#555555", line_dash="dashed", line_width=1, level="overlay")
    if outer_edges:
        fig.hspan(y=sorted(outer_edges), line_color="#222222", line_width=1.5, level="overlay")
    if len(outer) <= 48:
        from bokeh.models import FixedTicker

        centres = [(first + last) / 2 for _, first, last in outer]
        fig.yaxis.ticker = FixedTicker(ticks=centres, minor_ticks=[])
        fig.yaxis.major_label_overrides = {centre: group_name for centre, (group_name, _, _) in zip(centres, outer)}


# The Gantt's colouring chosen (Bokeh CustomJS): the rectangles' fill, and the legend shown.
_COLOUR_BY = """
glyph.fill_color = fills[this.value];
for (const [label, group] of Object.entries(items))
    for (const item of group) item.visible = label === this.value;
"""
# The level of detail's switch (Bokeh CustomJS, run on every change of the time axis): zoomed in,
# the rectangles of the jobs that overlap the view are copied from every row into the
# rectangles' source; zoomed out, the raster.
_SHOW_JOBS_IN_VIEW = """
const zoomed_in = range.end - range.start <= detail;
exact.visible = zoomed_in;
hatched.visible = zoomed_in;
raster.visible = !zoomed_in;
legend.visible = zoomed_in;  // (its items are the jobs', the hatching's and the power states')
const wanted = zoomed_in ? titles[1] : titles[0];  // (the title says what is drawn now)
if (title.text !== wanted) title.text = wanted;
for (const [every, shown] of sources) {  // (the jobs, and the hatched overlay of the killed ones)
    if (!zoomed_in) {
        if (shown.get_length()) shown.data = Object.fromEntries(Object.keys(shown.data).map(k => [k, []]));
        continue;
    }
    const all = every.data, left = all.left, right = all.right;
    const keep = [];
    for (let i = 0; i < left.length; i++)
        if (left[i] <= range.end && right[i] >= range.start) keep.push(i);
    const data = {};
    for (const [key, column] of Object.entries(all)) {
        const copy = ArrayBuffer.isView(column) ? new column.constructor(keep.length) : new Array(keep.length);
        for (let j = 0; j < keep.length; j++) copy[j] = column[keep[j]];
        data[key] = copy;
    }
    shown.data = data;
}
"""


def _job_ids(ids: pd.Series) -> np.ndarray:
    """Job ids as integers when they all are (a page carries them as a binary array), else as text."""
    numbers = pd.to_numeric(ids, errors="coerce")
    if numbers.notna().all() and (numbers == numbers.round()).all() and (numbers.abs() < 2 ** 31).all():
        return numbers.to_numpy().astype(np.int32)
    return ids.astype(str).to_numpy()


def _busy_mapper():
    from bokeh.models import LinearColorMapper
    from bokeh.palettes import Blues256

    return LinearColorMapper(palette=list(reversed(Blues256)), low=0.0, high=1.0, nan_color="rgba(0,0,0,0)")


def _busy_raster(start: np.ndarray, finish: np.ndarray, lows: np.ndarray, highs: np.ndarray, span: float,
                 machines: int) -> np.ndarray:
    """(RASTER_ROWS, RASTER_COLUMNS) at most: the fraction of each cell's machine-time that jobs
    used, each job's host range spread evenly over the rows it touches (exact when it fills
    them), its time over whole columns."""
    height = min(machines, RASTER_ROWS)
    per_row = machines / height
    column = span / RASTER_COLUMNS
    first_column = np.clip(np.floor(start / column), 0, RASTER_COLUMNS - 1).astype(np.int64)
    end_column = np.clip(np.ceil(finish / column), first_column + 1, RASTER_COLUMNS).astype(np.int64)
    first_row = np.minimum((lows / per_row).astype(np.int64), height - 1)
    end_row = np.minimum((highs / per_row).astype(np.int64) + 1, height)
    weight = (highs - lows + 1) / ((end_row - first_row) * per_row)
    corners = np.zeros((height + 1, RASTER_COLUMNS + 1))
    np.add.at(corners, (first_row, first_column), weight)
    np.add.at(corners, (first_row, end_column), -weight)
    np.add.at(corners, (end_row, first_column), -weight)
    np.add.at(corners, (end_row, end_column), weight)
    busy = corners.cumsum(axis=0).cumsum(axis=1)[:height, :RASTER_COLUMNS]
    return np.where(busy > 1e-9, np.minimum(busy, 1.0), np.nan).astype(np.float32)


def _machine_state_changes(run: RunOutputs):
    """The machine states' times, each state's count (int32), and the one page source of them
    (for series drawn at the view's resolution; the utilisation is drawn from the computing
    count, not a column of its own: on CEA-Curie that column was 1.6 MB of the page)."""
    from bokeh.models import ColumnDataSource

    states = run.machine_states.sort_values("time", kind="stable")
    times = states["time"].to_numpy(dtype=float)
    columns = {label: states[column].to_numpy().astype(np.int32) for column, label, _ in MACHINE_STATE_COLUMNS}
    return times, columns, ColumnDataSource({"time": times, **columns})


def _machine_states(run: RunOutputs, time_range, changes, index: int, start_time: float | None = None):
    times, columns, every = changes
    fig = _time_figure(time_range, 200, "machines", start_time=start_time)
    fig.title.text = "machine states"
    names = list(columns)
    # (each row holds until the next)
    shown = _step_series(time_range, times, columns, "area", every, f"{SERIES_NAME}_states_{index}")
    fig.varea_stack(names, x="x", color=[color for _, _, color in MACHINE_STATE_COLUMNS], legend_label=names,
                    source=shown)
    _legend_outside(fig)
    return fig


def _legend_outside(fig) -> None:
    """The figure's legend above its plot, in a row: never over the data."""
    legend = fig.legend[0]
    fig.center.remove(legend)
    legend.orientation = "horizontal"
    fig.add_layout(legend, "above")


# The energy axis' ticks (Bokeh CustomJSTicker, values in joules): about 5 over the view, each a
# round number of kWh.
_KWH_TICKS = """
const low = cb_data.range.start / 3.6e6, high = cb_data.range.end / 3.6e6;
const raw = Math.max((high - low) / 5, 1e-12);
const power = Math.pow(10, Math.floor(Math.log10(raw)));
const step = [1, 2, 5, 10].map(m => m * power).find(s => s >= raw);
const ticks = [];
for (let k = Math.ceil(low / step); k * step <= high + step * 1e-9; k++) ticks.push(k * step * 3.6e6);
return ticks;
"""


def _power(run: RunOutputs, time_range, index: int, start_time: float | None = None) -> tuple[Any, ...]:
    """Power, then cumulative energy, each in a panel of its own (not twin axes: two scales on one
    plot invite reading one against the other), the energy's axis in kWh (the page's data stay
    in joules, as the run's file gives them); nothing for a run without energy."""
    from bokeh.models import CustomJSTicker, CustomJSTickFormatter, NumeralTickFormatter

    energy = run.consumed_energy
    if energy is None or len(energy) == 0:
        return ()
    times = energy["time"].to_numpy(dtype=float)
    joules = energy["energy"].to_numpy(dtype=float)
    # A row's epower is the mean power since the row before (NA on a row at that row's time).
    since = np.concatenate([[0.0], times[:-1]])
    power = energy["epower"].to_numpy(dtype=float)
    known = ~np.isnan(power)
    fig = _time_figure(time_range, 170, "power (W)", start_time=start_time)
    fig.title.text = "power (W: the mean since the row before, as the run's energy file gives it)"
    # (each known row's power holds from the row before until its own time)
    watts = _step_series(time_range, since[known], {"power": power[known]}, "line",
                         name=f"{SERIES_NAME}_power_{index}", until=float(times[known][-1]) if known.any() else None)
    fig.line("x", "power", source=watts, color="#d62728")
    fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
    fig.y_range.start = 0.0
    cumulative = _time_figure(time_range, 170, "energy (kWh)", start_time=start_time)
    cumulative.title.text = "cumulative energy (kWh)"
    consumed = _step_series(time_range, times, {"energy": joules}, "curve", name=f"{SERIES_NAME}_energy_{index}")
    cumulative.line("x", "energy", source=consumed, color="#2ca02c")
    # Ticks on round kWh (1, 2 or 5 x 10^k), not on round joules shown as kWh (277.8, 555.6, ...).
    cumulative.yaxis.ticker = CustomJSTicker(major_code=_KWH_TICKS)
    cumulative.yaxis.formatter = CustomJSTickFormatter(code="return (tick / 3.6e6).toLocaleString('en', "
                                                            "{maximumSignificantDigits: 4});")
    cumulative.y_range.start = 0.0
    return fig, cumulative


def _cluster_costs(run: RunOutputs):
    """On a priced platform, each cluster's energy and electricity cost over the run (bars)."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure

    costs = run.energy_cost
    if costs is None or not (costs["kind"] == "cluster").any():
        return None
    clusters = costs[costs["kind"] == "cluster"]
    names = clusters["name"].astype(str).tolist()
    fig = figure(x_range=names, height=220, width=WIDTH, y_axis_label="cost (cents)", toolbar_location=None,
                 title=f"electricity cost per cluster (total {clusters['cost_cents'].sum():,.2f} cents)")
    bars = fig.vbar(x="name", top="cost", width=0.8, color="#8c564b", source=ColumnDataSource({
        "name": names, "cost": clusters["cost_cents"].to_numpy(dtype=float),
        "energy": clusters["energy_joules"].to_numpy(dtype=float)}))
    fig.add_tools(HoverTool(renderers=[bars], tooltips=[("cluster", "@name"), ("energy", "@energy{0.[00]} J"),
                                                        ("cost", "@cost{0.[000]} cents")]))
    fig.y_range.start = 0.0
    return fig


def _cost_over_time(run: RunOutputs, time_range, index: int, start_time: float | None = None):
    """On a priced platform, each cluster's electricity cost since the start over time, from
    PREFIX_energy_cost_trace.csv (its rows are the exact corners: linear between them)."""
    from bokeh.models import ColumnDataSource

    trace = run.energy_cost_trace
    if trace is None or len(trace) == 0:
        return None
    times = trace["time"].to_numpy(dtype=float)
    clusters = [column for column in trace.columns if column != "time"]
    columns = {f"c{k}": trace[name].to_numpy(dtype=float) for k, name in enumerate(clusters)}
    every = ColumnDataSource({"time": times, **columns})
    fig = _time_figure(time_range, 240, "cost (cents)", start_time=start_time)
    fig.title.text = "cost over time: each cluster's electricity cost since the start (cents)"
    # (Okabe and Ito's colours, dashed after the first eight)
    lines = [(colour, dash) for dash in ("solid", "dashed") for colour in (*RUN_COLOURS, "#F0E442")]
    for k, name in enumerate(clusters):
        shown = _step_series(time_range, times, {f"c{k}": columns[f"c{k}"]}, "curve", every,
                             f"{SERIES_NAME}_cost_{index}_{k}")
        colour, dash = lines[k % len(lines)]
        fig.line("x", f"c{k}", source=shown, color=colour, line_dash=dash, line_width=2, legend_label=name)
    _legend_outside(fig)
    fig.legend.ncols = 5
    fig.y_range.start = 0.0
    return fig


def _step_series(time_range, times: np.ndarray, columns: dict[str, np.ndarray], kind: str, every=None,
                 name: str | None = None, until: float | None = None):
    """The data source a step series is drawn from (x, and its columns): lines through its
    corners (Bokeh's line draws a million points far faster than its step glyph does); for a
    series of many changes, at the view's resolution (report_series.py), recomputed in the
    browser when the view changes from `every` change (a source of `times` and the columns,
    made here unless given: series of the same times share one). A step's last value holds
    until `until` (the time axis' end unless given)."""
    from bokeh.models import ColumnDataSource, CustomJS

    until = time_range.end if until is None else until
    start, end = time_range.start, time_range.end
    names = list(columns)
    if kind == "line":
        xs, ys = report_series.line_envelope(times, columns[names[0]], start, end, until)
        drawn = {names[0]: ys}
    elif kind == "curve":
        xs, ys = report_series.curve_envelope(times, columns[names[0]], start, end)
        drawn = {names[0]: ys}
    else:
        xs, means = report_series.area_means(times, list(columns.values()), start, end, until)
        drawn = dict(zip(names, means))
    shown = ColumnDataSource({"x": xs, **drawn}, name=name)
    if report_series.changes_in(times, start, end) <= report_series.EXACT_CHANGES:
        return shown  # (drawn as they are: every view of them is exact)
    if every is None:
        every = ColumnDataSource({"time": times, **columns})
    redraw = CustomJS(args={"range": time_range, "bins": report_series.BINS, "exact": report_series.EXACT_CHANGES,
                            "series": [{"every": every, "shown": shown, "kind": kind, "until": until,
                                        "names": names}]}, code=report_series.SERIES_JS)
    time_range.js_on_change("start", redraw)
    time_range.js_on_change("end", redraw)
    return shown


def queue_series(run: RunOutputs, weight: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(instants, what waits after each instant's submissions and starts): jobs submitted and not
    started, or with `weight` a jobs-file column (e.g. the machines they request), its sum over
    them. A rejected job leaves the queue when the decider rejects it."""
    jobs = run.jobs
    submitted = jobs["submission_time"].to_numpy(dtype=float)
    started = jobs["starting_time"].to_numpy(dtype=float)
    left = np.where(np.isnan(started), jobs["finish_time"].to_numpy(dtype=float), started)  # rejected: when told
    left = np.where(np.isnan(left), submitted, left)
    amount = np.ones(submitted.size) if weight is None else \
        pd.to_numeric(jobs[weight], errors="coerce").fillna(0).to_numpy(dtype=float)
    times, instant = np.unique(np.concatenate([submitted, left]), return_inverse=True)
    return times, np.cumsum(np.bincount(instant, np.concatenate([amount, -amount]), minlength=times.size))


def _queues(run: RunOutputs, time_range, index: int, start_time: float | None = None) -> tuple[Any, Any]:
    """Queue length (jobs submitted and not started) over time, then the queue in requested
    resources (the machines the waiting jobs ask for, beside the platform's size: three jobs of
    the whole machine are not three of one machine; the backlog a decider has to place). Each a
    panel of its own, not twin axes (two scales on one plot invite reading one against the
    other); one page source of both series' changes (they change at the same instants)."""
    from bokeh.models import ColumnDataSource, Span

    times, queue = queue_series(run)
    _, machines = queue_series(run, "requested_number_of_resources")
    # whole numbers: int32 in the page (half float64's bytes; CEA-Curie's queue changes 600,000 times)
    queue, machines = queue.astype(np.int32), machines.astype(np.int32)
    every = ColumnDataSource({"time": times, "queue": queue, "machines": machines})
    fig = _time_figure(time_range, 170, "jobs waiting", start_time=start_time)
    fig.title.text = "queue length (jobs submitted, not started)"
    queue_source = _step_series(time_range, times, {"queue": queue}, "line", every, name=f"{SERIES_NAME}_queue_{index}")
    fig.line("x", "queue", source=queue_source, color="#9467bd")
    fig.y_range.start = 0.0
    requested = _time_figure(time_range, 170, "machines requested", start_time=start_time)
    requested.title.text = (f"queue in requested resources (machines asked for by waiting jobs; the dashed line: "
                            f"the platform's {run.nb_machines:,} machines)")
    source = _step_series(time_range, times, {"machines": machines}, "line", every,
                          name=f"{SERIES_NAME}_queued_machines_{index}")
    requested.line("x", "machines", source=source, color="#8c564b")
    requested.add_layout(Span(location=run.nb_machines, dimension="width", line_dash="dashed", line_color="#555555"))
    requested.y_range.start = 0.0
    return fig, requested


def _utilisation(run: RunOutputs, time_range, changes, index: int, start_time: float | None = None):
    """Utilisation (computing machines / machines) over time, on its own 0-1 axis: the computing
    count drawn on an axis of the platform's machines whose ticks read fractions of it."""
    from bokeh.models import CustomJSTickFormatter, FixedTicker, Range1d

    machines = max(run.nb_machines, 1)
    fig = _time_figure(time_range, 170, "utilisation", start_time=start_time)
    fig.title.text = "utilisation (computing machines / machines)"
    fig.y_range = Range1d(0.0, 1.05 * machines)
    fig.yaxis.ticker = FixedTicker(ticks=[machines * k / 5 for k in range(6)])
    fig.yaxis.formatter = CustomJSTickFormatter(args={"machines": machines},
                                                code="return String(Math.round(tick / machines * 10) / 10);")
    times, columns, every = changes
    shown = _step_series(time_range, times, {"computing": columns["computing"]}, "line", every,
                         f"{SERIES_NAME}_utilisation_{index}")
    fig.line("x", "computing", source=shown, color="#17becf")
    return fig


def _free_slots(run: RunOutputs, time_range, index: int, start_time: float | None = None):
    """Fragmentation: the machines no job holds and the largest block of contiguous ones (the
    widest job that could start on contiguous machines), in one panel (one unit: machines)."""
    from bokeh.models import ColumnDataSource

    rows, lows, highs = run.allocation_runs()
    jobs = run.jobs
    start = jobs["starting_time"].to_numpy(dtype=float)[rows]
    finish = jobs["finish_time"].to_numpy(dtype=float)[rows]
    instants, exact = free_slots.report_instants(start, finish, run.nb_machines, time_range.end)
    free, largest = free_slots.free_machines(start, finish, lows, highs, run.nb_machines, instants)
    free, largest = free.astype(np.int32), largest.astype(np.int32)
    every = ColumnDataSource({"time": instants, "free": free, "largest": largest})
    fig = _time_figure(time_range, 240, "machines", start_time=start_time)
    fig.title.text = ("free machines (held by no job) and the largest block of contiguous free machines"
                      + ("" if exact else f" (at {instants.size:,} evenly spaced instants)"))
    # (the block dashed over the free count: where they coincide, both show)
    for column, label, colour, dash in (("free", "free machines", "#009E73", "solid"),
                                        ("largest", "largest contiguous block", "#CC79A7", "dashed")):
        shown = _step_series(time_range, instants, {column: every.data[column]}, "line", every,
                             f"{SERIES_NAME}_{column}_machines_{index}")
        fig.line("x", column, source=shown, color=colour, line_width=2, line_dash=dash, legend_label=label)
    _legend_outside(fig)
    fig.y_range.start = 0.0
    return fig


# ---------------------------------------------------------------------- distributions
# Distributions spanning more than this ratio (largest / smallest positive value) get log bins:
# waiting times and run times of a trace run from seconds to days, and linear bins put almost
# every job in the first one.
SKEWED_RATIO = 100.0
LOG_BINS_PER_DECADE = 5
# Runs' histograms: outlines (no fill, so two runs never blend into a third colour) in
# colour-blind-safe colours (Okabe-Ito, the blue and vermillion first: the most distinct pair).
RUN_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def distribution_values(run: RunOutputs, tau: float) -> dict[str, np.ndarray]:
    """The values each histogram counts, by its title, from the run's jobs file (finite only)."""
    jobs = run.jobs
    ran = jobs[jobs["starting_time"].notna()]
    execution = ran["execution_time"].to_numpy(dtype=float)
    slowdown = np.maximum(ran["turnaround_time"].to_numpy(dtype=float) / np.maximum(execution, tau), 1.0)
    values = {"waiting time (s)": ran["waiting_time"].to_numpy(dtype=float), "run time (s)": execution,
              metric_label("mean_bounded_slowdown", tau).replace("mean ", ""): slowdown,
              "job size (machines)": jobs["requested_number_of_resources"].to_numpy(dtype=float)}
    return {label: array[np.isfinite(array)] for label, array in values.items()}


def histogram_edges(joined: np.ndarray) -> tuple[np.ndarray, bool]:
    """The bins' edges over every run's values, and whether they are logarithmic (a skewed
    distribution: see SKEWED_RATIO; its zeros then fall outside the bins)."""
    positive = joined[joined > 0]
    if positive.size and positive.max() / positive.min() > SKEWED_RATIO:
        low, high = math.floor(math.log10(positive.min())), math.ceil(math.log10(positive.max()))
        high = max(high, low + 1)
        return np.logspace(low, high, (high - low) * LOG_BINS_PER_DECADE + 1), True
    if not joined.size:
        return np.array([0.0, 1.0]), False
    return np.histogram_bin_edges(joined, bins=min(40, max(1, len(np.unique(joined))))), False


# A CDF of more values than this is drawn at this many of them (evenly spaced ranks), each exact.
CDF_POINTS = 2000


def cdf_points(values: np.ndarray, at_most: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF at (at most `at_most` of) the values: x ascending and distinct, y the
    fraction of all the values <= x."""
    ordered = np.sort(values)
    if not ordered.size:
        return ordered, ordered
    ranks = np.arange(ordered.size) if ordered.size <= at_most else \
        np.unique(np.round(np.linspace(0, ordered.size - 1, at_most)).astype(np.int64))
    x = np.unique(ordered[ranks])
    return x, np.searchsorted(ordered, x, side="right") / ordered.size


def _cdf_figure(runs: list[RunOutputs], arrays: list[np.ndarray], label: str, number: int, logarithmic: bool):
    """The distribution as a CDF (fraction of jobs at or below each value), a step line per run:
    where histograms of skewed values hide the tails, a CDF reads medians and percentiles."""
    from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, Range1d
    from bokeh.plotting import figure

    fig = figure(height=280, width=WIDTH // 2, tools="pan,wheel_zoom,box_zoom,reset,save",
                 title=f"{label}: CDF" + (" (log x; values of 0 counted, not drawn)" if logarithmic else ""),
                 sizing_mode="stretch_width", x_axis_type="log" if logarithmic else "linear")
    fig.toolbar.logo = None
    items = []
    for index, (run, array) in enumerate(zip(runs, arrays)):
        x, y = cdf_points(array)
        if logarithmic:
            x, y = x[x > 0], y[x > 0]
        source = ColumnDataSource({"x": x, "fraction": y}, name=f"{CDF_NAME}_{number}_{index}")
        line = fig.step("x", "fraction", source=source, mode="after", line_width=2,
                        color=RUN_COLOURS[index % len(RUN_COLOURS)])
        fig.add_tools(HoverTool(renderers=[line], tooltips=[("run", run.name), ("value", "@x{0,0.[00]}"),
                                                            ("jobs at or below", "@fraction{0.0%}")], mode="vline"))
        items.append(LegendItem(label=run.name, renderers=[line]))
    fig.xaxis.axis_label = label
    fig.yaxis.axis_label = "share of jobs <= x"
    fig.y_range = Range1d(0.0, 1.02)
    fig.add_layout(Legend(items=items, orientation="horizontal"), "above")
    return fig


def _distributions(runs: list[RunOutputs], tau: float) -> list[Any]:
    from bokeh.layouts import gridplot
    from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem
    from bokeh.plotting import figure

    per_run = [distribution_values(run, tau) for run in runs]
    figures = []
    for number, label in enumerate(per_run[0]):
        arrays = [values[label] for values in per_run]
        joined = np.concatenate(arrays)
        edges, logarithmic = histogram_edges(joined)
        fig = figure(height=280, width=WIDTH // 2, tools="pan,wheel_zoom,box_zoom,reset,save", title=label,
                     sizing_mode="stretch_width", x_axis_type="log" if logarithmic else "linear")
        fig.toolbar.logo = None
        items = []
        for index, (run, array) in enumerate(zip(runs, arrays)):
            counts, _ = np.histogram(array, bins=edges)
            source = ColumnDataSource({"left": edges[:-1], "right": edges[1:], "count": counts},
                                      name=f"{HISTOGRAM_NAME}_{number}_{index}")
            bars = fig.quad(left="left", right="right", bottom=0, top="count", source=source, fill_color=None,
                            line_color=RUN_COLOURS[index % len(RUN_COLOURS)], line_width=2)
            fig.add_tools(HoverTool(renderers=[bars], tooltips=[("run", run.name), ("from", "@left{0,0.[00]}"),
                                                                ("to", "@right{0,0.[00]}"), ("jobs", "@count")]))
            items.append(LegendItem(label=run.name, renderers=[bars]))
        if logarithmic and (joined <= 0).any():
            fig.title.text += (f" (log bins; {int((joined <= 0).sum()):,} values of 0 not drawn"
                               + (", all runs" if len(runs) > 1 else "") + ")")
        elif logarithmic:
            fig.title.text += " (log bins)"
        fig.xaxis.axis_label = label
        fig.yaxis.axis_label = "jobs"
        fig.y_range.start = 0
        fig.add_layout(Legend(items=items, orientation="horizontal"), "above")  # (off the bars)
        figures += [fig, _cdf_figure(runs, arrays, label, number, logarithmic)]
    return [gridplot(figures, ncols=2, sizing_mode="stretch_width", toolbar_location="right")]


def _summary_table(metrics: list[dict[str, Any]], tau: float):
    """The metrics, a row per run; each column as wide as its title (titles are never cut: the
    table scrolls sideways when they do not fit the page)."""
    from bokeh.models import ColumnDataSource, DataTable, TableColumn

    data: dict[str, list[str]] = {"run": [str(m["run"]) for m in metrics]}
    columns = [TableColumn(field="run", title="run", width=max(120, 7 * max(len(r) for r in data["run"])))]
    for key in SUMMARY_KEYS:
        data[key] = [formatted_metric(m.get(key)) for m in metrics]
        title = metric_label(key, tau)
        width = max(70, 8 * max(len(title), *(len(text) for text in data[key])) + 12)
        columns.append(TableColumn(field=key, title=title, width=width))
    return DataTable(source=ColumnDataSource(data), columns=columns, height=40 + 28 * len(metrics), width=WIDTH,
                     index_position=None, autosize_mode="none", name=SUMMARY_NAME)


def formatted_metric(value: Any) -> str:
    """One format for every number of the table: thousands separated; whole numbers from 100 up,
    two decimals from 1, four significant digits below (an exponent only under 0.0001); "-" when
    absent."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:,.2f}"
    return f"{value:.4g}" if value else "0"


# ---------------------------------------------------------------------- comparison
def _start_differences(runs: list[RunOutputs], start_time: float | None = None):
    """Per job, its start in each other run minus its start in the first run, against its start
    in the first run (on the report's time axis: days and hours, or dates)."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    base = runs[0]
    fig = figure(height=300, width=WIDTH, tools="pan,wheel_zoom,box_zoom,reset,save", sizing_mode="stretch_width",
                 output_backend="webgl")
    fig.toolbar.logo = None
    time_axis.apply_time_axis(fig, start_time)
    fig.xaxis.axis_label = f"start in {base.name}: " + time_axis.axis_label(start_time)
    fig.yaxis.axis_label = f"start - start in {base.name} (h): > 0 later"
    hovers = time_axis.hover_formatters(start_time)
    lines = []
    for index, run in enumerate(runs[1:], start=1):
        delta = start_shifts(run, base)
        started = run.jobs["starting_time"].to_numpy(dtype=float)
        known = ~np.isnan(delta)
        source = ColumnDataSource({"job_id": _job_ids(run.jobs["job_id"])[known], "base": (started - delta)[known],
                                   "delta": delta[known], "delta_h": delta[known] / 3600.0})
        renderer = fig.scatter("base", "delta_h", source=source, size=5, alpha=0.6, color=Category10_10[index % 10],
                               legend_label=run.name, name=f"{DIFFERENCE_NAME}_{index}")
        fig.add_tools(HoverTool(renderers=[renderer], tooltips=[
            ("job", "@job_id"), (f"start in {base.name}", "@base{time}"), ("difference", "@delta{duration}")],
            formatters={"@base": hovers["time"], "@delta": hovers["duration"]}))
        shifted = delta[known]
        base_started = ~np.isnan(base.jobs["starting_time"].to_numpy(dtype=float))
        only_one = int((~np.isnan(started) & ~known).sum() + (base_started & np.isnan(start_shifts(base, run))).sum())
        lines.append(f"{run.name}: {int((shifted < -SAME_START_S).sum()):,} jobs started earlier, "
                     f"{int((shifted > SAME_START_S).sum()):,} later, "
                     f"{int((np.abs(shifted) <= SAME_START_S).sum()):,} at the same time"
                     + (f", {only_one:,} started in one run only" if only_one else ""))
    fig.legend.location = "top_left"
    from bokeh.layouts import column
    from bokeh.models import Div

    return column(Div(text="<br>".join(_escape(line) for line in lines)), fig, sizing_mode="stretch_width")
