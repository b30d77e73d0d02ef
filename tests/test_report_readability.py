"""Issue 49's first increment of `joulesim report`, each checked in a real browser against the
run's output files: jobs coloured so that neighbours differ (killed ones hatched), each
machine's power state behind the jobs, a time axis in days and hours (or dates, from an SWF
trace's UnixStartTime), units in the hover, histograms on log bins, queue and utilisation in
panels of their own, and runs named by --label. Then the comparison of runs: the queue in
requested resources, each later run's Gantt coloured by how its starts moved against the first
run's (the difference Gantt), each distribution's CDF, the start-time scatter on the time axis.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import joulesim
from joulesim.analysis.html_report import (CDF_NAME, DIFFERENCE_NAME, GANTT_NAME, HISTOGRAM_NAME, SERIES_NAME,
                                           SHIFT_CLASSES, UNSUCCESSFUL_STATES, cdf_points, distribution_values,
                                           shift_label, write_report)
from joulesim.analysis.job_colouring import PALETTE
from joulesim.analysis.power_states import STATES as POWER_STATES
from joulesim.analysis.run_outputs import RunOutputs, parse_interval_set
from test_html_report import LOCATE, TOOLTIPS, errors_of, needs_browser, open_page, screenshot

# 60 jobs on the 4 hosts of small4, sizes 1-4 and run times from 1 s to about 3 h: jobs touch in
# time and across machines, waiting times span decades, and a few reach their walltime.
RNG = np.random.default_rng(49)
SIZES = RNG.integers(1, 5, 60)
RUN_TIMES = np.round(10 ** RNG.uniform(0, 4, 60))
JOBS = [{"id": i + 1, "subtime": int(i * 37), "res": int(SIZES[i]),
         "walltime": float(RUN_TIMES[i] if i % 9 == 4 else RUN_TIMES[i] * 2), "profile": f"d{int(RUN_TIMES[i])}"}
        for i in range(60)]
PROFILES = {f"d{int(t)}": {"type": "delay", "delay": float(t) + (1 if i % 9 == 4 else 0)}
            for i, t in enumerate(RUN_TIMES)}
# The shutdown run: energy2's 2 hosts switched off after 5 s idle (EASY with t_idle), so that
# they sleep, switch on and off between the jobs.
SHUTDOWN_JOBS = [
    {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d30"},
    {"id": 2, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10"},
    {"id": 3, "subtime": 2, "res": 1, "walltime": 15, "profile": "d10"},
    {"id": 4, "subtime": 3, "res": 1, "walltime": 100, "profile": "d20"},
    {"id": 5, "subtime": 150, "res": 1, "walltime": 5, "profile": "d30"},
    {"id": 6, "subtime": 251, "res": 2, "walltime": 100, "profile": "d10"},
]
SHUTDOWN_PROFILES = {f"d{n}": {"type": "delay", "delay": n} for n in (10, 20, 30)}
UNIX_START = 1296571124  # CEA-Curie's header
SWF_HEADER = f"; UnixStartTime: {UNIX_START}\n; MaxNodes: 4\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("readable-runs")
    workload = directory / "workload.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))
    prefixes = {}
    for decider in ("fcfs", "easy"):
        prefixes[decider] = str(directory / decider / "out")
        joulesim.simulate("small4", str(workload), decider, export=prefixes[decider])
    shutdown = directory / "shutdown.json"
    shutdown.write_text(json.dumps({"nb_res": 2, "jobs": SHUTDOWN_JOBS, "profiles": SHUTDOWN_PROFILES}))
    prefixes["shutdown"] = str(directory / "shutdown" / "out")
    joulesim.simulate("energy2", str(shutdown), "easy", options={"t_idle": 5}, energy=True,
                      export=prefixes["shutdown"])
    # an SWF trace with UnixStartTime, converted (its first job at 100 s: the shift moves time 0)
    trace = directory / "trace.swf"
    trace.write_text(SWF_HEADER + "".join(f"{i + 1} {100 + 3600 * i} 0 {600 * (i + 1)} {1 + i % 4} -1 -1 "
                                          f"{1 + i % 4} {1200 * (i + 1)} -1 1 1 1 1 1 -1 -1 -1\n"
                                          for i in range(12)))
    prefixes["swf_workload"] = str(directory / "trace.json")
    subprocess.run([sys.executable, "-m", "joulesim.cli.main", "workload", "from-swf", str(trace), "-o",
                    prefixes["swf_workload"]], check=True, capture_output=True)
    prefixes["swf"] = str(directory / "swf" / "out")
    joulesim.simulate("small4", prefixes["swf_workload"], "easy", export=prefixes["swf"])
    return prefixes


def report_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "report", *args], capture_output=True,
                          text=True, timeout=300)


# Every column of the named data sources, as plain arrays.
SOURCES = """
const doc = Bokeh.documents[0];
const read = (name) => Object.fromEntries(Object.entries(doc.get_model_by_name(name).data)
                                          .map(([k, v]) => [k, Array.from(v)]));
return Object.fromEntries(arguments[0].map(name => [name, read(name)]));
"""


# plot_of(name): the renderer drawing the data source `name`, and its plot.
PLOT_OF_SOURCE = """
const doc = Bokeh.documents[0];
const plot_of = (name) => {
    const renderer = [...doc.all_models].find(m => m.data_source && m.data_source.name === name);
    return [renderer, [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.includes(renderer))];
};
"""


def sources(browser, *names: str) -> dict:
    return browser.execute_script(SOURCES, list(names))


# ---------------------------------------------------------------------- 1. neighbours' colours
def touching(a: dict, b: dict) -> bool:
    """Two rectangles as drawn ([left, right] x [bottom, top]) touch or overlap."""
    return a["left"] <= b["right"] and b["left"] <= a["right"] and a["bottom"] <= b["top"] and b["bottom"] <= a["top"]


@needs_browser
def test_neighbouring_jobs_never_share_a_colour_and_killed_jobs_are_hatched(runs, tmp_path, browser):
    """The page's rectangles are the jobs file's (start, end, machines); every pair of
    rectangles of different jobs that touch (a job ending where the other starts on a shared or
    adjacent machine, or side by side on adjacent machines) has two colours of the palette; the
    jobs the file says were killed or reached their walltime, and only they, are hatched."""
    for decider in ("fcfs", "easy"):
        run = RunOutputs(runs[decider])
        path = write_report([run], str(tmp_path / f"{decider}.html"))
        open_page(browser, path, f"{GANTT_NAME}_0")
        both = sources(browser, f"{GANTT_NAME}_0_all", f"{GANTT_NAME}_0_hatched")
        data, overlay = both[f"{GANTT_NAME}_0_all"], both[f"{GANTT_NAME}_0_hatched"]
        jobs = run.jobs.set_index(run.jobs["job_id"].astype(int))
        expected = sorted((int(job), float(jobs.at[job, "starting_time"]), float(jobs.at[job, "finish_time"]), lo, hi)
                          for job, alloc in jobs["allocated_resources"].items() if isinstance(alloc, str)
                          for lo, hi in parse_interval_set(alloc))
        drawn = sorted((job, left, right, int(bottom + 0.5), int(top - 0.5)) for job, left, right, bottom, top in
                       zip(data["job_id"], data["left"], data["right"], data["bottom"], data["top"]))
        assert drawn == expected
        rectangles = [dict(zip(data, values)) for values in zip(*data.values())]
        pairs = [(a, b) for a, b in itertools.combinations(rectangles, 2)
                 if a["job_id"] != b["job_id"] and touching(a, b)]
        assert len(pairs) > 50, len(pairs)  # (a schedule where jobs do touch)
        same = [(a["job_id"], b["job_id"]) for a, b in pairs if a["colour"] == b["colour"]]
        assert same == [], f"{len(same)} neighbouring pairs share a colour: {same[:5]}"
        # the colours are the palette's, as the page maps them (the default colouring)
        mapping = browser.execute_script("""
            const doc = Bokeh.documents[0];
            const glyph = doc.get_model_by_name(arguments[0]).glyph;
            const mapper = glyph.fill_color.transform;
            const over = [...doc.all_models].find(m => m.data_source && m.data_source.name === arguments[0] + '_hatched');
            return [glyph.fill_color.field, mapper.palette, mapper.low, mapper.high, over.visible,
                    over.glyph.hatch_pattern.value, over.glyph.fill_color.value];""", f"{GANTT_NAME}_0")
        assert mapping == ["colour", list(PALETTE), -0.5, len(PALETTE) - 0.5, True, "/", None]
        assert set(data["colour"]) <= set(range(len(PALETTE))) and len(set(data["colour"])) > 2
        killed = {int(job) for job, state in jobs["final_state"].items() if state in UNSUCCESSFUL_STATES}
        assert killed, "the workload has jobs that reach their walltime"
        # the hatched overlay: exactly the killed jobs' rectangles
        assert sorted(zip(overlay["job_id"], overlay["left"], overlay["bottom"])) == sorted(
            (job, left, bottom) for job, left, bottom in zip(data["job_id"], data["left"], data["bottom"])
            if job in killed)
        legend = browser.execute_script("""
            return [...Bokeh.documents[0].all_models].filter(m => m.label && m.label.value !== undefined
                && m.visible !== false && m.renderers).map(m => m.label.value);""")
        assert "hatched: killed, failed or walltime reached" in legend
        screenshot(browser, f"report_neighbour_colours_{decider}.png")
        assert errors_of(browser) == []


# ---------------------------------------------------------------------- 2. power states
def power_spans_from_file(path: str, until: float) -> dict[int, list[tuple[float, float, str]]]:
    """Each machine's (from, to, state) by a plain walk of PREFIX_pstate_changes.csv: -1
    switching on, -2 switching off, a pstate reached after -2 asleep, others on; a machine's
    consecutive spans in one state joined, spans of no length left out."""
    rows = [line.split(",") for line in Path(path).read_text().splitlines()[1:]]
    by_machine: dict[int, list[tuple[float, int]]] = {}
    for time_text, machines, pstate in rows:
        for lo, hi in parse_interval_set(machines):
            for machine in range(lo, hi + 1):
                by_machine.setdefault(machine, []).append((float(time_text), int(pstate)))
    sleep = {after for changes in by_machine.values() for (_, before), (_, after) in zip(changes, changes[1:])
             if before == -2}
    names = {-1: "switching on", -2: "switching off"}
    spans: dict[int, list[tuple[float, float, str]]] = {}
    for machine, changes in by_machine.items():
        states = [(t, names.get(p, "asleep / off" if p in sleep else "on (idle where no job)")) for t, p in changes]
        ends = [t for t, _ in states[1:]] + [max(until, states[-1][0])]
        joined: list[tuple[float, float, str]] = []
        for (start, state), end in zip(states, ends):
            if joined and joined[-1][2] == state:
                joined[-1] = (joined[-1][0], end, state)
            else:
                joined.append((start, end, state))
        spans[machine] = [span for span in joined if span[1] > span[0]]
    return spans


@needs_browser
def test_the_gantt_draws_each_machine_s_power_state_behind_the_jobs(runs, tmp_path, browser):
    """An energy run with shutdown: the band's rectangles, machine by machine, are the spans
    PREFIX_pstate_changes.csv gives (asleep, switching on and off, on), drawn under the jobs,
    each state present named in the legend above the chart."""
    run = RunOutputs(runs["shutdown"])
    path = write_report([run], str(tmp_path / "shutdown.html"))
    where = open_page(browser, path, f"{GANTT_NAME}_0")
    name = f"{GANTT_NAME}_0_power_states"
    band = sources(browser, name)[name]
    drawn: dict[int, list[tuple[float, float, str]]] = {}
    for left, right, bottom, top, state in zip(band["left"], band["right"], band["bottom"], band["top"],
                                               band["state"]):
        for machine in range(int(bottom + 0.5), int(top - 0.5) + 1):
            drawn.setdefault(machine, []).append((left, right, POWER_STATES[state][0]))
    expected = power_spans_from_file(run.path("pstate_changes"), where["end"])
    assert {m: sorted(s) for m, s in drawn.items()} == expected
    assert {state for spans in expected.values() for _, _, state in spans} == {
        "on (idle where no job)", "switching on", "switching off", "asleep / off"}
    drawing = browser.execute_script("""
        const doc = Bokeh.documents[0];
        const band = [...doc.all_models].find(m => m.data_source && m.data_source.name === arguments[0]);
        const jobs = doc.get_model_by_name(arguments[1]);
        const legend = [...doc.all_models].filter(m => m.label && m.label.value !== undefined && m.renderers)
            .map(m => m.label.value);
        return [band.visible, band.level, jobs.level, band.glyph.fill_color.transform.palette, legend];""",
                                     name, f"{GANTT_NAME}_0")
    assert drawing[:3] == [True, "underlay", "glyph"]
    assert drawing[3] == [colour for _, colour in POWER_STATES]
    for state_name, _ in POWER_STATES:
        assert f"machine {state_name}" in drawing[4]
    screenshot(browser, "report_power_states.png")
    assert errors_of(browser) == []


@needs_browser
def test_a_large_gantt_draws_the_power_states_of_the_view_only(runs, tmp_path, browser):
    """With the level of detail on (its threshold brought down to 3 rectangles, the band's spans
    counted), zoomed out the band draws none of its spans; zoomed in, exactly those that overlap
    the view (from the band's every span, as the jobs)."""
    run = RunOutputs(runs["shutdown"])
    path = write_report([run], str(tmp_path / "lod_band.html"), exact_rectangles=3)
    open_page(browser, path, f"{GANTT_NAME}_0")
    name = f"{GANTT_NAME}_0_power_states"
    drawn = """
        const doc = Bokeh.documents[0];
        const every = doc.get_model_by_name(arguments[0]);
        const band = [...doc.all_models].find(m => m.glyph && m.level === 'underlay' && m.data_source &&
                                              m.data_source !== every && m.data_source.data.state);
        const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.includes(band));
        if (arguments[1] !== null) plot.x_range.setv({start: arguments[1], end: arguments[2]});
        const x = plot.x_range;
        const in_view = Array.from(every.data.left).map((l, i) => [l, every.data.right[i], every.data.state[i]])
            .filter(([l, r]) => l <= x.end && r >= x.start);
        const shown = Array.from(band.data_source.data.left).map((l, i) => [l, band.data_source.data.right[i],
                                                                            band.data_source.data.state[i]]);
        return [shown, in_view, every.data.left.length];"""
    shown, _, total = browser.execute_script(drawn, name, None, None)
    assert shown == [] and total > 3
    every = sources(browser, name)[name]
    middle = (every["left"][1] + every["right"][1]) / 2
    browser.execute_script(drawn, name, middle - 0.5, middle + 0.5)  # (a second: under the threshold)
    deadline = time.monotonic() + 10
    while not (now := browser.execute_script(drawn, name, None, None))[0]:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    assert sorted(map(tuple, now[0])) == sorted(map(tuple, now[1])) and 0 < len(now[0]) < total
    assert errors_of(browser) == []


# ---------------------------------------------------------------------- 3. time axis, units
# The Gantt's time axis: the ticks of a view [start, end] and their labels, as the page makes them.
AXIS = """
const [name, start, end] = arguments;
const doc = Bokeh.documents[0];
const renderer = doc.get_model_by_name(name);
const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.includes(renderer));
const axis = plot.below[0];
const ticks = axis.ticker.get_ticks(start, end, plot.x_range, NaN).major;
return [Array.from(ticks), axis.formatter.doFormat(ticks, {loc: 0}), axis.axis_label];
"""


def elapsed_label(seconds: float, step: float) -> str:
    days, rest = divmod(round(seconds), 86400)
    if step % 86400 == 0:
        return f"{days} d"
    text = (f"{days} d " if days else "") + f"{rest // 3600:02d}:{rest % 3600 // 60:02d}"
    return text + (f":{rest % 60:02d}" if step < 60 else "")


@needs_browser
def test_the_time_axis_reads_days_and_hours_or_dates_and_the_hover_has_units(runs, tmp_path, browser):
    """Without a start: ticks on round durations, labelled days and hh:mm since the start. With
    --start-time read from the SWF-converted workload (UnixStartTime + the conversion's shift):
    the same instants as UTC dates. The hover gives times, waiting and (with energy) energy with
    their units; a run without energy has no energy in its hover nor its summary."""
    run = RunOutputs(runs["swf"])
    page = tmp_path / "elapsed.html"
    assert report_cli(runs["swf"], "-o", str(page)).returncode == 0
    where = open_page(browser, str(page), f"{GANTT_NAME}_0")
    ticks, labels, axis_label = browser.execute_script(AXIS, f"{GANTT_NAME}_0", 0, where["end"])
    step = ticks[1] - ticks[0]
    assert step in (3600, 7200, 10800, 21600, 43200, 86400) and 3 <= len(ticks) <= 10
    assert all(t % step == 0 for t in ticks) and ticks[0] >= 0 and ticks[-1] <= where["end"]
    assert labels == [elapsed_label(t, step) for t in ticks] and axis_label == "time since the start (d hh:mm)"
    ticks, labels, _ = browser.execute_script(AXIS, f"{GANTT_NAME}_0", 100, 400)
    assert ticks[1] - ticks[0] == 30 and labels[0] == elapsed_label(ticks[0], 30) and labels[0].count(":") == 2
    # the dates: from the converted workload (its unix_start_time), as the CLI reads it
    workload = json.loads(Path(runs["swf_workload"]).read_text())
    assert workload["unix_start_time"] == UNIX_START + 100  # (the first job's submission became time 0)
    page = tmp_path / "dated.html"
    result = report_cli(runs["swf"], "-o", str(page), "--start-time", runs["swf_workload"])
    assert result.returncode == 0, result.stderr
    where = open_page(browser, str(page), f"{GANTT_NAME}_0")
    ticks, labels, axis_label = browser.execute_script(AXIS, f"{GANTT_NAME}_0", 0, where["end"])
    origin = UNIX_START + 100
    step = ticks[1] - ticks[0]
    assert all((t + origin) % step == 0 for t in ticks), ticks  # (a day's tick at midnight UTC)
    fmt = "%Y-%m-%d" if step % 86400 == 0 else "%Y-%m-%d %H:%M"
    assert labels == [dt.datetime.fromtimestamp(t + origin, dt.timezone.utc).strftime(fmt) for t in ticks]
    assert axis_label == "date and time (UTC)"
    # hover: the first rectangle of a job that waited: its start as seconds and as its date,
    # waiting in s and h, submission (its start minus its waiting) in s and as its date
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    waited = sources(browser, f"{GANTT_NAME}_0_all")[f"{GANTT_NAME}_0_all"]["waiting"]
    row = next(i for i, w in enumerate(waited) if w > 0)
    where = browser.execute_script(LOCATE, f"{GANTT_NAME}_0", row)

    pointer = ActionBuilder(browser)
    pointer.pointer_action.move_to_location(int(where["x"]), int(where["y"]))
    pointer.perform()
    jobs = run.jobs.set_index(run.jobs["job_id"].astype(str))
    start = float(jobs.at[str(where["job"]), "starting_time"])
    waiting = float(jobs.at[str(where["job"]), "waiting_time"])
    date = dt.datetime.fromtimestamp(round(start + origin), dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    submitted = float(jobs.at[str(where["job"]), "submission_time"])
    submitted_date = dt.datetime.fromtimestamp(round(submitted + origin), dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    wanted = [rf"start:\s*{start:.3f} s \({date} UTC\)", rf"waiting:\s*{waiting:.3f} s \({waiting / 3600:.2f} h\)",
              rf"submitted:\s*{submitted:.3f} s \({submitted_date} UTC\)"]
    deadline = time.monotonic() + 10
    while not all(re.search(w, browser.execute_script(TOOLTIPS)) for w in wanted):
        assert time.monotonic() < deadline, (wanted, browser.execute_script(TOOLTIPS))
        time.sleep(0.1)
    assert "energy" not in browser.execute_script(TOOLTIPS)  # (no energy: Batsim's -1 per job is not shown)
    html = page.read_text()
    assert "cumulative energy" not in html and not re.search(r"energy: *0 J", html)
    summary = browser.execute_script("""
        const table = [...Bokeh.documents[0].all_models].find(m => m.columns && m.source &&
                                                              m.source.data.consumed_joules);
        return table.source.data.consumed_joules;""")
    assert summary == ["-"]
    screenshot(browser, "report_dated_axis.png")
    assert errors_of(browser) == []


@needs_browser
def test_an_energy_run_s_hover_gives_joules_and_kwh(runs, tmp_path, browser):
    run = RunOutputs(runs["shutdown"])
    path = write_report([run], str(tmp_path / "energy.html"))
    where = open_page(browser, path, f"{GANTT_NAME}_0")
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    pointer = ActionBuilder(browser)
    pointer.pointer_action.move_to_location(int(where["x"]), int(where["y"]))
    pointer.perform()
    jobs = run.jobs.set_index(run.jobs["job_id"].astype(str))
    joules = float(jobs.at[str(where["job"]), "consumed_energy"])
    wanted = rf"energy:\s*{joules:.2f} J \({float(f'{joules / 3.6e6:.3g}'):g}"
    deadline = time.monotonic() + 10
    while not re.search(wanted.replace("e-", r"e-"), browser.execute_script(TOOLTIPS).replace("e-0", "e-")):
        assert time.monotonic() < deadline, (wanted, browser.execute_script(TOOLTIPS))
        time.sleep(0.1)
    assert re.search(r"kWh\)", browser.execute_script(TOOLTIPS))
    # power and cumulative energy: two panels, no twin axis, the energy's ticks in kWh
    panels = browser.execute_script("""
        const doc = Bokeh.documents[0];
        return arguments[0].map(name => {
            const source = doc.get_model_by_name(name);
            const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.some(r => r.data_source === source));
            const view = [...Bokeh.index.all_views()].find(v => v.model === plot);
            const axis = plot.left[0];
            const ticks = [1.8e6, 3.6e6, 7.2e6];
            const placed = axis.ticker.major_code === undefined ? null :
                axis.ticker.get_ticks(plot.y_range.start, plot.y_range.end, plot.y_range, NaN).major;
            return [plot.id, Object.keys(plot.extra_y_ranges || {}).length, axis.axis_label,
                    axis.formatter.compute ? ticks.map(t => axis.formatter.compute(t)) : null, placed];
        });""", [f"{SERIES_NAME}_power_0", f"{SERIES_NAME}_energy_0"])
    (power_plot, power_extra, power_label, _, _), (energy_plot, energy_extra, energy_label, ticks, placed) = panels
    assert power_plot != energy_plot and power_extra == energy_extra == 0
    assert power_label == "power (W)" and energy_label == "energy (kWh)" and ticks == ["0.5", "1", "2"]
    # the ticks placed on the run's energy axis: 3 to 11, a round number of kWh apart (1, 2 or 5 x 10^k)
    kwh = np.array(placed) / 3.6e6
    step = kwh[1] - kwh[0]
    mantissa = step / 10 ** np.floor(np.log10(step))
    assert 3 <= len(kwh) <= 11 and np.allclose(np.diff(kwh), step) and min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9
    assert np.allclose(kwh / step, np.round(kwh / step))


def test_bad_start_times_are_one_line_errors(runs, tmp_path):
    for value, message in (("yesterday", "is not a Unix time, an ISO 8601 date or a workload JSON file"),
                           (str(tmp_path / "missing.json"), "missing.json"),
                           (runs["swf_workload"].replace("trace.json", "shutdown.json"),
                            "field 'unix_start_time': is missing")):
        result = report_cli(runs["swf"], "-o", str(tmp_path / "r.html"), "--start-time", value)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------------- 4. distributions, panels
@needs_browser
def test_histograms_use_log_bins_when_skewed_and_compare_runs_in_distinct_colours(runs, tmp_path, browser):
    """Each histogram's bars, per run, count the jobs file's values in the page's bins; waiting
    and run times (spread over decades) on log bins and a log axis; each run one outline colour
    (no fill, nothing blends); legends above the plots. Queue and utilisation: two panels."""
    chosen = [RunOutputs(runs[d]) for d in ("fcfs", "easy")]
    path = write_report(chosen, str(tmp_path / "two.html"))
    open_page(browser, path, f"{GANTT_NAME}_0")
    values = [distribution_values(run, 10.0) for run in chosen]
    labels = list(values[0])
    assert labels[:2] == ["waiting time (s)", "run time (s)"]
    names = [f"{HISTOGRAM_NAME}_{k}_{i}" for k in range(len(labels)) for i in range(2)]
    drawn = sources(browser, *names)
    figures = browser.execute_script(PLOT_OF_SOURCE + """
        return arguments[0].map(name => {
            const [renderer, plot] = plot_of(name);
            const legend = plot.above.find(m => m.items);
            const value = (v) => v !== null && typeof v === 'object' && 'value' in v ? v.value : v;
            return [plot.x_scale.type, value(renderer.glyph.fill_color), value(renderer.glyph.line_color),
                    legend.items.map(i => i.label.value), plot.center.filter(m => m.items).length];
        });""", names)
    for k, label in enumerate(labels):
        joined = np.concatenate([v[label] for v in values])
        positive = joined[joined > 0]
        skewed = positive.max() / positive.min() > 100  # (spread over more than two decades)
        assert skewed or label not in ("waiting time (s)", "run time (s)")  # (this workload's are)
        for i, run in enumerate(chosen):
            bars = drawn[f"{HISTOGRAM_NAME}_{k}_{i}"]
            edges = np.array(bars["left"] + bars["right"][-1:])
            assert np.array_equal(np.array(bars["count"]), np.histogram(values[i][label], bins=edges)[0]), label
            if skewed:
                ratios = edges[1:] / edges[:-1]
                assert np.allclose(ratios, ratios[0]) and ratios[0] > 1.5  # log bins
                assert sum(bars["count"]) == int((values[i][label] > 0).sum())  # (zeros: said in the title)
            else:
                assert sum(bars["count"]) == values[i][label].size
            scale, fill, line, legend, inside = figures[k * 2 + i]
            assert scale == ("LogScale" if skewed else "LinearScale"), (label, scale)
            assert fill is None and legend == [run.name for run in chosen] and inside == 0
        assert figures[k * 2][2] != figures[k * 2 + 1][2]  # the two runs' colours
    panels = browser.execute_script("""
        const doc = Bokeh.documents[0];
        return arguments[0].map(name => {
            const source = doc.get_model_by_name(name);
            const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.some(r => r.data_source === source));
            return [plot.id, plot.extra_y_ranges ? Object.keys(plot.extra_y_ranges).length : 0, plot.title.text];
        });""", [f"{SERIES_NAME}_queue_0", f"{SERIES_NAME}_utilisation_0"])
    assert panels[0][0] != panels[1][0] and panels[0][1] == panels[1][1] == 0, panels
    screenshot(browser, "report_histograms.png")
    assert errors_of(browser) == []


# ---------------------------------------------------------------------- 5. run labels
@needs_browser
def test_runs_are_named_by_their_labels(runs, tmp_path, browser):
    """--label names each run (headings, the summary's rows, the histograms' legends), the
    prefix still said under the heading; a count of labels that is not one per run is refused."""
    page = tmp_path / "labelled.html"
    result = report_cli(runs["fcfs"], runs["easy"], "-o", str(page), "--label", "fcfs", "--label",
                        "easy backfilling")
    assert result.returncode == 0, result.stderr
    open_page(browser, str(page), f"{GANTT_NAME}_0")
    text = browser.execute_script("""
        const texts = [];
        const visit = (root) => { for (const e of root.querySelectorAll('h2, p')) texts.push(e.innerText);
            for (const e of root.querySelectorAll('*')) if (e.shadowRoot) visit(e.shadowRoot); };
        visit(document);
        const table = [...Bokeh.documents[0].all_models].find(m => m.columns && m.source && m.source.data.run);
        return [texts, table.source.data.run];""")
    assert text[1] == ["fcfs", "easy backfilling"]
    assert "fcfs" in text[0] and "easy backfilling" in text[0]
    assert f"outputs: {runs['easy']}_*" in text[0]
    result = report_cli(runs["fcfs"], runs["easy"], "-o", str(tmp_path / "r.html"), "--label", "only one")
    assert result.returncode == 2 and "--label was given 1 times for 2 OUT_PREFIX" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "r.html").exists()
    assert errors_of(browser) == []


def test_the_neighbour_search_finds_every_touching_pair_and_no_other():
    """neighbour_pairs against a search of every pair, on random schedules: jobs in sequence on
    machine ranges (touching in time and across machines, some of no length), and rectangles
    thrown anywhere (overlapping, as compute sharing or a job file's rounded times make them)."""
    from joulesim.analysis.job_colouring import greedy_colours, neighbour_pairs

    rng = np.random.default_rng(7)
    for trial in range(400):
        n, machines = int(rng.integers(2, 30)), int(rng.integers(1, 8))
        if trial % 2:
            lows = rng.integers(0, machines, n)
            highs = np.minimum(lows + rng.integers(0, 3, n), machines - 1)
            starts = rng.integers(0, 10, n).astype(float)
            ends = starts + rng.integers(0, 4, n)
        else:
            free = np.zeros(machines)
            lows, highs, starts, ends = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n), np.zeros(n))
            for job in range(n):
                size = int(rng.integers(1, machines + 1))
                lows[job] = int(rng.integers(0, machines - size + 1))
                highs[job] = lows[job] + size - 1
                starts[job] = free[lows[job]:highs[job] + 1].max() + rng.choice([0, 0, 1, 2.5])
                ends[job] = starts[job] + rng.choice([0.0, 1, 2, 3, 5])
                free[lows[job]:highs[job] + 1] = ends[job]
        jobs = rng.integers(0, max(2, n - 3), n)  # (some jobs of several rectangles)
        expected = set()
        for i, k in itertools.combinations(range(n), 2):
            in_time = (ends[i] == starts[k] or ends[k] == starts[i]) and lows[k] <= highs[i] + 1 \
                and lows[i] <= highs[k] + 1
            across = (highs[i] + 1 == lows[k] or highs[k] + 1 == lows[i]) and starts[k] <= ends[i] \
                and starts[i] <= ends[k]
            if (in_time or across) and jobs[i] != jobs[k]:
                expected.add((min(jobs[i], jobs[k]), max(jobs[i], jobs[k])))
        a, b = neighbour_pairs(jobs, starts, ends, lows, highs)
        assert set(zip(a.tolist(), b.tolist())) == expected, trial
        colours, clashes = greedy_colours(int(jobs.max()) + 1, np.arange(int(jobs.max()) + 1), a, b)
        assert clashes > 0 or not (colours[a] == colours[b]).any()  # (a clash is always counted)


# ---------------------------------------------------------------------- 6. comparing runs
def waiting_machines(jobs, t: float) -> float:
    """Machines asked for by the jobs submitted at or before t and not started by then (a job
    started at t has left the queue)."""
    total = 0.0
    for submitted, started, size in zip(jobs["submission_time"], jobs["starting_time"],
                                        jobs["requested_number_of_resources"]):
        if submitted <= t and not started <= t:
            total += size
    return total


def scroll_to_plot_of(browser, name: str) -> None:
    """Scroll the page so that the plot drawing the renderer or data source `name` is at the top
    (for the screenshots kept as test artefacts)."""
    browser.execute_script("""
        const doc = Bokeh.documents[0];
        const named = doc.get_model_by_name(arguments[0]);
        const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.some(
            r => r === named || r.data_source === named));
        const view = [...Bokeh.index.all_views()].find(v => v.model === plot);
        window.scrollBy(0, view.el.getBoundingClientRect().top - 60);""", name)


def expected_shift_class(shift: float) -> int:
    if np.isnan(shift):
        return 5
    return 0 if shift < -3600 else 1 if shift < -1e-6 else 2 if shift <= 1e-6 else 3 if shift <= 3600 else 4


@needs_browser
def test_the_comparison_views_hold_what_the_jobs_files_say(runs, tmp_path, browser):
    """Two runs (fcfs first, easy second) of the same jobs:
    - each run's queue in requested resources is, after every instant, the machines asked for by
      the jobs submitted and not started (a loop over the jobs file), in its own panel;
    - easy's Gantt can be coloured by its start against fcfs's (each rectangle's class is its
      job's start shift's, from the two jobs files; both directions occur here); choosing it
      shows that colouring and its legend; fcfs's Gantt has no such choice;
    - each distribution's CDF is, at every drawn value, the fraction of the run's values at or
      below it, up to 1, on a log axis where the histogram has log bins;
    - the start-time scatter's differences are the jobs files', its x axis the report's time axis."""
    chosen = [RunOutputs(runs[d]) for d in ("fcfs", "easy")]
    path = write_report(chosen, str(tmp_path / "compare.html"))
    open_page(browser, path, f"{GANTT_NAME}_1")
    names = [f"{SERIES_NAME}_queued_machines_{i}" for i in range(2)] + [f"{GANTT_NAME}_1_all", f"{GANTT_NAME}_0_all"]
    drawn = sources(browser, *names)
    for i, run in enumerate(chosen):
        series = drawn[f"{SERIES_NAME}_queued_machines_{i}"]
        jobs = run.jobs
        instants = np.unique(np.concatenate([jobs["submission_time"], jobs["starting_time"]]))
        assert set(series["x"]) >= set(instants.tolist())
        last_at = {x: y for x, y in zip(series["x"], series["machines"])}  # (the value after the instant)
        assert [last_at[t] for t in instants] == [waiting_machines(jobs, t) for t in instants]
        assert max(series["machines"]) > run.nb_machines  # (a backlog beyond the platform: worth its panel)
    fcfs = chosen[0].jobs.set_index(chosen[0].jobs["job_id"].astype(int))["starting_time"]
    easy = drawn[f"{GANTT_NAME}_1_all"]
    shifts = [easy_start - fcfs[int(job)] for job, easy_start in zip(easy["job_id"], easy["left"])]
    assert easy["shift"] == [expected_shift_class(shift) for shift in shifts]
    assert {0, 1, 2}.issubset(set(easy["shift"])) and set(easy["shift"]) & {3, 4}, set(easy["shift"])
    assert np.allclose(easy["start_shift"], shifts, rtol=0, atol=1e-9)
    assert "shift" not in drawn[f"{GANTT_NAME}_0_all"]
    label = shift_label(chosen[0].name)
    browser.execute_script("Bokeh.documents[0].get_model_by_name(arguments[0] + '_colour_by').value = arguments[1];",
                           f"{GANTT_NAME}_1", label)
    chosen_view = browser.execute_script("""
        const doc = Bokeh.documents[0];
        const options = doc.get_model_by_name(arguments[0] + '_colour_by').options;
        const renderer = doc.get_model_by_name(arguments[0]);
        const plot = [...doc.all_models].find(m => m.renderers && m.renderers.includes(renderer));
        const legend = plot.above.find(m => m.items);
        return [options, renderer.glyph.fill_color.field, legend.items.filter(i => i.visible).map(i => i.label.value),
                doc.get_model_by_name(arguments[2] + '_colour_by').options];
        """, f"{GANTT_NAME}_1", label, f"{GANTT_NAME}_0")
    options, field, legend, first_options = chosen_view
    assert label in options and field == "shift" and label not in first_options
    assert legend[:len(SHIFT_CLASSES)] == [name.replace("the first run", chosen[0].name) for name, _ in SHIFT_CLASSES]
    scroll_to_plot_of(browser, f"{GANTT_NAME}_1")
    screenshot(browser, "report_difference_gantt.png")
    values = [distribution_values(run, 10.0) for run in chosen]
    labels = list(values[0])
    cdf_names = [f"{CDF_NAME}_{k}_{i}" for k in range(len(labels)) for i in range(2)]
    cdfs = sources(browser, *cdf_names)
    scales = browser.execute_script(PLOT_OF_SOURCE + "return arguments[0].map(name => plot_of(name)[1].x_scale.type);",
                                    cdf_names)
    for k, label_k in enumerate(labels):
        joined = np.concatenate([v[label_k] for v in values])
        positive = joined[joined > 0]
        skewed = positive.max() / positive.min() > 100
        for i in range(2):
            x, y = np.array(cdfs[f"{CDF_NAME}_{k}_{i}"]["x"]), np.array(cdfs[f"{CDF_NAME}_{k}_{i}"]["fraction"])
            data = values[i][label_k]
            assert np.all(np.diff(x) > 0) and y[-1] == 1.0 and x[-1] == data.max()
            assert np.array_equal(y, np.array([np.mean(data <= v) for v in x]))
            assert set(x.tolist()) == set((data[data > 0] if skewed else data).tolist())  # (small runs: every value)
            assert scales[k * 2 + i] == ("LogScale" if skewed else "LinearScale")
    scatter = browser.execute_script("""
        const data = Bokeh.documents[0].get_model_by_name(arguments[0]).data_source.data;
        return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Array.from(v)]));""", f"{DIFFERENCE_NAME}_1")
    easy_jobs = chosen[1].jobs.set_index(chosen[1].jobs["job_id"].astype(int))["starting_time"]
    assert sorted(int(j) for j in scatter["job_id"]) == sorted(fcfs.index)
    for job, base, delta in zip(scatter["job_id"], scatter["base"], scatter["delta"]):
        assert base == fcfs[int(job)] and delta == pytest.approx(easy_jobs[int(job)] - fcfs[int(job)], abs=1e-9)
    axis = browser.execute_script("""
        const doc = Bokeh.documents[0];
        const renderer = doc.get_model_by_name(arguments[0]);
        const plot = [...doc.all_models].find(m => m.renderers && m.renderers.includes(renderer));
        return [plot.below[0].axis_label, plot.below[0].formatter.type];""", f"{DIFFERENCE_NAME}_1")
    assert axis[0] == f"start in {chosen[0].name}: time since the start (d hh:mm)", axis
    assert axis[1] == "CustomJSTickFormatter"
    scroll_to_plot_of(browser, f"{CDF_NAME}_0_0")
    screenshot(browser, "report_cdfs.png")
    assert errors_of(browser) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e7, allow_nan=False), min_size=1, max_size=300), st.integers(2, 50))
def test_cdf_points_are_exact_at_every_point_they_keep(values, at_most):
    """At most `at_most` distinct values (every one when there are fewer), ascending, the
    smallest and largest among them, each with the exact fraction of values at or below it."""
    data = np.array(values)
    x, y = cdf_points(data, at_most)
    assert np.all(np.diff(x) > 0) and len(x) <= max(at_most, 1)
    assert x[0] == data.min() and x[-1] == data.max() and y[-1] == 1.0
    assert np.array_equal(y, np.array([np.mean(data <= v) for v in x]))
    if len(np.unique(data)) <= at_most and data.size <= at_most:
        assert np.array_equal(x, np.unique(data))


# ---------------------------------------------------------------------- 7. the summary table
HEADERS = """
const cells = [];
const visit = (root) => {
    for (const e of root.querySelectorAll('.slick-header-column')) {
        const name = e.querySelector('.slick-column-name') || e;
        cells.push([name.innerText, name.scrollWidth, e.clientWidth]);
    }
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) visit(e.shadowRoot);
};
visit(document);
return cells;
"""


@needs_browser
def test_the_summary_table_shows_whole_titles_and_one_number_format(runs, tmp_path, browser):
    """Every column title of the metrics table fits its column (none cut), and every number is
    written the one way (no exponent: the makespan of 48,450 s read 4.845e+04)."""
    from joulesim.analysis.html_report import SUMMARY_KEYS, SUMMARY_NAME, formatted_metric
    from joulesim.analysis.metrics import compute_metrics

    chosen = [RunOutputs(runs[d]) for d in ("fcfs", "easy")]
    path = write_report(chosen, str(tmp_path / "table.html"))
    open_page(browser, path, f"{GANTT_NAME}_0")
    cells = browser.execute_script(HEADERS)
    assert len(cells) == 1 + len(SUMMARY_KEYS)
    cut = [(title, needed, shown) for title, needed, shown in cells if needed > shown]
    assert cut == [], cut
    data = browser.execute_script("return Bokeh.documents[0].get_model_by_name(arguments[0]).source.data;",
                                  SUMMARY_NAME)
    for index, run in enumerate(chosen):
        metrics = compute_metrics(run, 10.0)
        assert [data[key][index] for key in SUMMARY_KEYS] == [formatted_metric(metrics[key]) for key in SUMMARY_KEYS]
    assert not any("e+" in text or "e-" in text for key in SUMMARY_KEYS for text in data[key])
    screenshot(browser, "report_summary_table.png")


def test_every_metric_is_written_one_way():
    from joulesim.analysis.html_report import formatted_metric

    assert [formatted_metric(v) for v in (48450.0, 14720.4, 935.44, 60, 2_768_626_813.57, 12.0808, 0.80583, 0.0,
                                          1.5e-7, None, float("nan"), -250.5)] == [
        "48,450", "14,720", "935", "60", "2,768,626,814", "12.08", "0.8058", "0", "1.5e-07", "-", "-", "-250"]


# ---------------------------------------------------------------------- 8. fragmentation
@needs_browser
def test_the_free_machines_panel_holds_each_instant_s_free_machines_and_largest_block(runs, tmp_path, browser):
    """The fcfs run's page: after every instant of change (every instant of this small run), the
    free machines and the largest block of contiguous free ones are those of the jobs file's
    allocations, counted machine by machine (tests/test_free_slots.py's brute force)."""
    from test_free_slots import brute_force

    run = RunOutputs(runs["fcfs"])
    path = write_report([run], str(tmp_path / "free.html"))
    open_page(browser, path, f"{GANTT_NAME}_0")
    names = [f"{SERIES_NAME}_free_machines_0", f"{SERIES_NAME}_largest_machines_0"]
    drawn = sources(browser, *names)
    jobs = run.jobs
    ranges = [(float(s), float(f), lo, hi) for s, f, alloc in zip(jobs["starting_time"], jobs["finish_time"],
                                                                   jobs["allocated_resources"])
              if isinstance(alloc, str) for lo, hi in parse_interval_set(alloc)]
    start, finish, lows, highs = (np.array(column) for column in zip(*ranges))
    instants = np.unique(np.concatenate([[0.0], start, finish]))
    for name, column, which in ((names[0], "free", 0), (names[1], "largest", 1)):
        after = {x: y for x, y in zip(drawn[name]["x"], drawn[name][column])}  # (the value after each instant)
        assert [after[t] for t in instants] == [brute_force(start, finish, lows, highs, run.nb_machines, t)[which]
                                                for t in instants], name
    assert any(a != b for a, b in zip(drawn[names[0]]["free"], drawn[names[1]]["largest"]))  # (fragmented at times)
    scroll_to_plot_of(browser, names[0])
    screenshot(browser, "report_free_machines.png")
    assert errors_of(browser) == []


def test_count_axes_separate_thousands_and_never_use_an_exponent(runs, tmp_path):
    """Every time panel's y axis but those with their own units (utilisation, energy) reads counts
    with thousands separated (CEA-Curie's queue in machines read 2.000e+6)."""
    from bokeh.models import NumeralTickFormatter

    from joulesim.analysis.html_report import _queues, _time_range

    run = RunOutputs(runs["fcfs"])
    for fig in _queues(run, _time_range([run]), 0):
        assert isinstance(fig.yaxis[0].formatter, NumeralTickFormatter) and fig.yaxis[0].formatter.format == "0,0.[00]"


def test_every_categorical_colour_is_colour_blind_safe():
    """The job colouring's, the final states', the machine states', the power band's and the runs'
    colours are all Okabe and Ito's (or grey, for rejected jobs and sleeping machines)."""
    from joulesim.analysis.html_report import MACHINE_STATE_COLUMNS, RUN_COLOURS, SHIFT_CLASSES, STATE_COLORS

    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    used = {*PALETTE, *STATE_COLORS.values(), *(c for _, _, c in MACHINE_STATE_COLUMNS), *(c for _, c in POWER_STATES),
            *RUN_COLOURS, *(c for _, c in SHIFT_CLASSES)}
    assert {c.upper() for c in used} - okabe_ito <= {"#999999", "#BBBBBB"}, used
