"""`joulesim report` (analysis/html_report.py): the page's content and its bad inputs, then the
page itself in a real browser (Debian's chromium driven by selenium: no JavaScript error, the
Gantt's jobs, zoom, hover), with screenshots kept in test-artifacts/.

The browser tests skip, with the reason, where chromium, chromedriver or selenium is missing
(.ci/run installs them); the others need Bokeh (the test extra brings it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import joulesim
import numpy as np

from joulesim.analysis import report_series
from joulesim.analysis.html_report import (DIFFERENCE_NAME, GANTT_NAME, SERIES_NAME, _busy_raster,
                                           _machine_state_changes, queue_series, write_report)
from joulesim.analysis.run_outputs import AnalysisError, RunOutputs

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
# On the 2 hosts of the shipped energy2 platform: job 2 waits for job 1; EASY backfills job 3
# beside job 1 (FCFS keeps it behind job 2); job 5 reaches its walltime.
JOBS = [
    {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d30"},
    {"id": 2, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10"},
    {"id": 3, "subtime": 2, "res": 1, "walltime": 15, "profile": "d10"},
    {"id": 4, "subtime": 3, "res": 1, "walltime": 100, "profile": "d20"},
    {"id": 5, "subtime": 50, "res": 1, "walltime": 5, "profile": "d30"},
    {"id": 6, "subtime": 51, "res": 2, "walltime": 100, "profile": "d10"},
]
PROFILES = {f"d{n}": {"type": "delay", "delay": n} for n in (10, 20, 30)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("report-runs")
    workload = directory / "workload.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": JOBS, "profiles": PROFILES}))
    prefixes = {}
    for decider in ("fcfs", "easy", "sjf"):
        prefixes[decider] = str(directory / decider / "out")
        joulesim.simulate("energy2", str(workload), decider, energy=True, export=prefixes[decider])
    return prefixes


def test_a_run_s_page_is_self_contained_and_holds_its_jobs(runs, tmp_path):
    path = write_report([RunOutputs(runs["fcfs"])], str(tmp_path / "one"))
    assert path.endswith("one.html")
    html = Path(path).read_text()
    assert not re.search(r"<script[^>]*\ssrc=", html) and not re.search(r"<link\s", html)  # nothing to fetch
    assert "Bokeh" in html and f'"{GANTT_NAME}_0"' in html
    assert "cumulative energy (kWh)" in html and "power (W" in html and "queue length (jobs submitted" in html \
        and "queue in requested resources" in html and "utilisation (" in html
    for label in ("waiting time (s)", "job size (machines)", "COMPLETED_WALLTIME_REACHED"):
        assert label in html
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o666 & ~_umask())
    assert [p.name for p in tmp_path.iterdir()] == ["one.html"]  # no temporary left


def test_the_api_writes_the_same_page(runs, tmp_path):
    result = joulesim.simulate("energy2", str(Path(runs["fcfs"]).parent.parent / "workload.json"), "fcfs",
                               energy=True)
    written = result.report(str(tmp_path / "api.html"))
    assert Path(written).read_text().count(f'"{GANTT_NAME}_0"') == 1


def test_several_runs_compare_their_starts(runs, tmp_path):
    path = write_report([RunOutputs(runs[d]) for d in ("fcfs", "easy", "sjf")], str(tmp_path / "three.html"))
    html = Path(path).read_text()
    for index in (0, 1, 2):
        assert f'"{GANTT_NAME}_{index}"' in html
    assert f'"{DIFFERENCE_NAME}_1"' in html and f'"{DIFFERENCE_NAME}_2"' in html
    starts = {d: RunOutputs(runs[d]).jobs.set_index("job_id")["starting_time"] for d in ("fcfs", "easy")}
    delta = (starts["easy"] - starts["fcfs"]).dropna()
    line = (f"{runs['easy']}: {int((delta < 0).sum())} jobs started earlier, {int((delta > 0).sum())} later, "
            f"{int((delta == 0).sum())} at the same time")
    assert line in html
    assert (delta != 0).any()  # backfilling moved some job, or the comparison shows nothing


def test_the_raster_of_a_large_gantt_by_hand():
    """4 machines over 10 s in 1,600 columns: a job on machines 0-1 over [0, 5) fills half the
    columns of rows 0 and 1. With 1,200 machines, a row holds 2: a job on machine 0 alone
    makes its row half busy; one on machines 3-6 fills rows 2 (3 of 1), 3 (5-6) and half of 1."""
    busy = _busy_raster(np.array([0.0]), np.array([5.0]), np.array([0]), np.array([1]), 10.0, 4)
    assert busy.shape == (4, 1600)
    assert (busy[:2, :800] == 1.0).all() and np.isnan(busy[:2, 800:]).all() and np.isnan(busy[2:]).all()
    busy = _busy_raster(np.array([0.0, 0.0]), np.array([10.0, 10.0]), np.array([0, 3]), np.array([0, 6]), 10.0,
                        1200)
    assert busy.shape == (600, 1600)
    # machines 3-6 touch rows 1-3: 4 machines spread over 3 rows of 2: 2/3 each
    assert np.allclose(busy[:4, 0], [0.5, 2 / 3, 2 / 3, 2 / 3]) and np.isnan(busy[4:, 0]).all()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------- bad input
def report_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "report", *args], capture_output=True,
                          text=True, timeout=300)


def test_a_missing_file_is_one_line_and_no_page(runs, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(Path(runs["fcfs"]).parent, broken)
    (broken / "out_machine_states.csv").unlink()
    result = report_cli(str(broken / "out"), "-o", str(tmp_path / "r.html"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"{broken / 'out_machine_states.csv'}: no such file" in result.stderr
    assert not (tmp_path / "r.html").exists() and not list(tmp_path.glob(".report-*"))


def test_an_output_folder_that_does_not_exist_is_refused_before_the_work(runs, tmp_path, monkeypatch):
    from joulesim.analysis import html_report

    monkeypatch.setattr(html_report, "_check_runs", lambda runs: pytest.fail("read the runs first"))
    with pytest.raises(AnalysisError, match="the folder .*missing does not exist or is not writable"):
        write_report([RunOutputs(runs["fcfs"])], str(tmp_path / "missing" / "r.html"))


def test_a_truncated_file_is_named(runs, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(Path(runs["fcfs"]).parent, broken)
    jobs = broken / "out_jobs.csv"
    text = jobs.read_text()
    jobs.write_text(text[:text.index("\n", len(text) // 2) + 12])  # cut in the middle of a row
    with pytest.raises(AnalysisError, match=f"{jobs}: data row .* looks cut short"):
        write_report([RunOutputs(str(broken / "out"))], str(tmp_path / "r.html"))
    assert not (tmp_path / "r.html").exists()


def test_runs_of_different_platforms_and_a_run_without_jobs_are_refused(runs, tmp_path):
    other = tmp_path / "other"
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": JOBS[:2], "profiles": PROFILES}))
    joulesim.simulate("small4", str(workload), "fcfs", export=str(other / "out"))
    with pytest.raises(AnalysisError, match="different numbers of machines"):
        write_report([RunOutputs(runs["fcfs"]), RunOutputs(str(other / "out"))], str(tmp_path / "r.html"))
    empty = tmp_path / "empty"
    shutil.copytree(Path(runs["fcfs"]).parent, empty)
    header = (empty / "out_jobs.csv").read_text().splitlines()[0]
    (empty / "out_jobs.csv").write_text(header + "\n")
    result = report_cli(str(empty / "out"), "-o", str(tmp_path / "r.html"))
    assert result.returncode != 0 and "the run has no job: nothing to report" in result.stderr
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------------- in a browser
def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the test extra brings it)"
    for program in ("chromium", "chromedriver"):
        if shutil.which(program) is None:
            return f"{program} is not installed (apt-get install chromium chromium-driver; .ci/run does)"
    return None


needs_browser = pytest.mark.skipif(_browser_missing() is not None, reason=_browser_missing() or "")

# The Gantt `name`: its rectangles (and every row, and those in view), its figure's view, and the
# page position of rectangle `row`'s centre (of every row's, when it shows none).
LOCATE = """
const [name, row] = arguments;
const doc = Bokeh.documents[0];
const renderer = doc.get_model_by_name(name);
let plot = null;
for (const model of doc.all_models)
    if (model.x_range && model.renderers && model.renderers.includes(renderer)) plot = model;
const view = [...Bokeh.index.all_views()].find(v => v.model === plot);
const data = renderer.data_source.data;
const every = doc.get_model_by_name(name + '_all').data;
const box = view.el.getBoundingClientRect();
const located = data.job_id.length ? data : every;  // (the raster shows the jobs: no rectangle yet)
const in_view = every.left.filter((left, i) => left <= plot.x_range.end && every.right[i] >= plot.x_range.start);
return {rows: data.job_id.length, every_rows: every.job_id.length, in_view: in_view.length,
        jobs: new Set(data.job_id).size, job: data.job_id[row],
        x: box.left + view.frame.x_scale.compute((located.left[row] + located.right[row]) / 2),
        y: box.top + view.frame.y_scale.compute((located.bottom[row] + located.top[row]) / 2),
        start: plot.x_range.start, end: plot.x_range.end};
"""
# Text of the tooltips shown, looking into the shadow roots Bokeh draws in.
TOOLTIPS = """
const texts = [];
const visit = (root) => {
    for (const element of root.querySelectorAll('*')) {
        if (element.classList && [...element.classList].some(c => c.includes('tooltip')) && element.innerText)
            texts.push(element.innerText);
        if (element.shadowRoot) visit(element.shadowRoot);
    }
};
visit(document);
return texts.join('\\n');
"""


def open_page(browser, path: str, name: str) -> dict:
    """Load the page; once its Gantt `name` is drawn, where it is."""
    browser.get(Path(path).as_uri())
    browser.get_log("browser")  # (what an earlier page left)
    deadline = time.monotonic() + 60
    while True:
        ready = browser.execute_script(
            "return !!(window.Bokeh && Bokeh.documents.length && Bokeh.documents[0].get_model_by_name(arguments[0]) "
            "&& [...Bokeh.index.all_views()].length)", name)
        if ready:
            break
        assert time.monotonic() < deadline, "the page's Gantt was not drawn within 60 s"
        time.sleep(0.1)
    return browser.execute_script(LOCATE, name, 0)


def errors_of(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(browser, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / name))


@needs_browser
def test_a_large_gantt_opens_on_its_raster_and_shows_the_jobs_zoomed_in(runs, tmp_path, browser):
    """The level of detail, with the threshold brought down to 2 rectangles: zoomed out the
    raster (and no rectangle), zoomed in (under a third of the run) the rectangles of the jobs
    in view."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    path = write_report([RunOutputs(runs["fcfs"])], str(tmp_path / "lod.html"), exact_rectangles=2)
    where = open_page(browser, path, f"{GANTT_NAME}_0")
    visible = ("return [Bokeh.documents[0].get_model_by_name(arguments[0]).visible, "
               "Bokeh.documents[0].get_model_by_name(arguments[0] + '_raster').visible]")
    assert browser.execute_script(visible, f"{GANTT_NAME}_0") == [False, True]
    assert where["rows"] == 0 and where["every_rows"] == len(RunOutputs(runs["fcfs"]).allocation_runs()[0])
    title = ("const doc = Bokeh.documents[0], renderer = doc.get_model_by_name(arguments[0]);"
             "return [...doc.all_models].find(m => m.renderers && m.renderers.includes(renderer)).title.text;")
    assert "how busy the machines are" in browser.execute_script(title, f"{GANTT_NAME}_0")
    legend = "return Bokeh.documents[0].get_model_by_name(arguments[0] + '_legend').visible;"
    assert browser.execute_script(legend, f"{GANTT_NAME}_0") is False  # (the raster has no job colours)
    screenshot(browser, "report_lod_raster.png")
    deadline = time.monotonic() + 20
    while browser.execute_script(visible, f"{GANTT_NAME}_0") != [True, False]:
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_viewport(int(where["x"]), int(where["y"])),
                                                 0, -300).perform()
        assert time.monotonic() < deadline
        time.sleep(0.2)
    zoomed = browser.execute_script(LOCATE, f"{GANTT_NAME}_0", 0)
    # the title says what is drawn now (it said "how busy" over the jobs themselves)
    assert re.search(r": each job in view \(zoom out past [\d.,]+ (d|h|min|s) for how busy the machines are\)$",
                     browser.execute_script(title, f"{GANTT_NAME}_0"))
    assert browser.execute_script(legend, f"{GANTT_NAME}_0") is True
    assert zoomed["end"] - zoomed["start"] <= (where["end"] - where["start"]) * 2 / where["every_rows"] * 1.000001
    assert 0 < zoomed["rows"] == zoomed["in_view"] < where["every_rows"], zoomed
    # the hatched overlay of the killed jobs follows: zoomed in on one, the overlay shows those in view
    overlay = """
        const doc = Bokeh.documents[0];
        const every = doc.get_model_by_name(arguments[0] + '_hatched');
        const drawn = [...doc.all_models].find(m => m.glyph && m.glyph.hatch_pattern && m.data_source !== every &&
                                              m.glyph.hatch_pattern.value === '/' && m.data_source.data.job_id);
        const x = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.includes(drawn)).x_range;
        if (arguments[1]) x.setv({start: every.data.left[0], end: every.data.right[0]});
        const in_view = Array.from(every.data.job_id).filter((_, i) => every.data.left[i] <= x.end &&
                                                                      every.data.right[i] >= x.start);
        return [drawn.visible, Array.from(drawn.data_source.data.job_id), in_view];"""
    browser.execute_script(overlay, f"{GANTT_NAME}_0", True)
    deadline = time.monotonic() + 10
    while (now := browser.execute_script(overlay, f"{GANTT_NAME}_0", False))[1] == []:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    assert now[0] is True and now[1] == now[2] != []
    screenshot(browser, "report_lod_exact.png")
    assert errors_of(browser) == []


@needs_browser
@pytest.mark.parametrize("deciders", [("fcfs",), ("fcfs", "easy")])
def test_the_page_in_a_browser(runs, tmp_path, browser, deciders):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    path = write_report([RunOutputs(runs[d]) for d in deciders], str(tmp_path / "page.html"))
    where = open_page(browser, path, f"{GANTT_NAME}_0")
    jobs = RunOutputs(runs[deciders[0]]).jobs
    # every job that ran is on the Gantt, one rectangle per contiguous host range
    assert where["jobs"] == int(jobs["starting_time"].notna().sum()) == len(JOBS)
    assert where["rows"] == len(RunOutputs(runs[deciders[0]]).allocation_runs()[0])
    assert (where["start"], where["end"]) == (0.0, float(jobs["finish_time"].max()))
    # hovering a job's rectangle shows its id
    pointer = ActionBuilder(browser)
    pointer.pointer_action.move_to_location(int(where["x"]), int(where["y"]))
    pointer.perform()
    deadline = time.monotonic() + 10
    while not re.search(rf"job:\s*{where['job']}\s", browser.execute_script(TOOLTIPS)):
        assert time.monotonic() < deadline, browser.execute_script(TOOLTIPS)
        time.sleep(0.1)
    state = jobs.loc[jobs["job_id"].astype(str) == str(where["job"]), "final_state"].iloc[0]  # (the page: a code)
    assert re.search(rf"state:\s*{state}\b", browser.execute_script(TOOLTIPS)), browser.execute_script(TOOLTIPS)
    assert re.search(r"workload:\s*w0\b", browser.execute_script(TOOLTIPS)), browser.execute_script(TOOLTIPS)
    screenshot(browser, f"report_{'_'.join(deciders)}_hover.png")
    # the wheel zooms the time axis, and every run's figures follow
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_viewport(int(where["x"]), int(where["y"])),
                                             0, -300).perform()
    deadline = time.monotonic() + 10
    while True:
        zoomed = browser.execute_script(LOCATE, f"{GANTT_NAME}_{len(deciders) - 1}", 0)
        if zoomed["end"] - zoomed["start"] < where["end"] - where["start"]:
            break
        assert time.monotonic() < deadline, (where, zoomed)
        time.sleep(0.1)
    screenshot(browser, f"report_{'_'.join(deciders)}_zoomed.png")
    assert errors_of(browser) == []


# Set the time axis of the figure of renderer `name` to [start, end] (with no source to read), or
# read the named data sources.
SET_VIEW = """
const [name, start, end, sources] = arguments;
const doc = Bokeh.documents[0];
const renderer = doc.get_model_by_name(name);
if (sources === null)
    for (const model of doc.all_models)
        if (model.x_range && model.renderers && model.renderers.includes(renderer)) model.x_range.setv({start, end});
const read = (source) => Object.fromEntries(Object.entries(doc.get_model_by_name(source).data).map(([k, v]) => [k, Array.from(v)]));
return sources === null ? null : Object.fromEntries(sources.map(source => [source, read(source)]));
"""


def set_view(browser, name: str, start: float, end: float, sources: list[str]) -> dict:
    """The sources once redrawn for the view [start, end] (Bokeh runs the callbacks a moment later)."""
    before = browser.execute_script(SET_VIEW, name, 0, 0, sources)
    browser.execute_script(SET_VIEW, name, start, end, None)
    deadline = time.monotonic() + 10
    while any((now := browser.execute_script(SET_VIEW, name, 0, 0, sources))[s] == before[s] for s in sources):
        assert time.monotonic() < deadline, "the series were not redrawn"
        time.sleep(0.05)
    return now


@needs_browser
def test_series_are_redrawn_at_the_view_s_resolution(runs, tmp_path, browser, monkeypatch):
    """Bins and the threshold brought down (3 bins; corners for 2 changes at most): the page's
    machine states, utilisation and the queue's two series are aggregated; a view of part of the run makes the browser
    recompute them, to the points report_series gives for that view; a view of a few changes
    draws their corners."""
    monkeypatch.setattr(report_series, "BINS", 3)
    monkeypatch.setattr(report_series, "EXACT_CHANGES", 2)
    run = RunOutputs(runs["fcfs"])
    path = write_report([run], str(tmp_path / "series.html"))
    where = open_page(browser, path, f"{GANTT_NAME}_0")
    times, columns, _ = _machine_state_changes(run)
    computing = columns["computing"].astype(float)  # (the utilisation's axis reads it over the machines)
    until = where["end"]
    states, ratio = f"{SERIES_NAME}_states_0", f"{SERIES_NAME}_utilisation_0"
    start, end = until * 0.1, until * 0.9
    assert report_series.changes_in(times, start, end) > 2
    drawn = set_view(browser, f"{GANTT_NAME}_0", start, end, [states, ratio])
    xs, means = report_series.area_means(times, list(columns.values()), start, end, until)
    assert np.allclose(drawn[states]["x"], xs, rtol=1e-12)
    for label, mean in zip(columns, means):
        assert np.allclose(drawn[states][label], mean, rtol=1e-6), label  # (counts as int32 in the page)
    xs, ys = report_series.line_envelope(times, computing, start, end, until)
    assert np.allclose(drawn[ratio]["x"], xs, rtol=1e-12) and drawn[ratio]["computing"] == ys.tolist()
    axis = browser.execute_script("""
        const doc = Bokeh.documents[0];
        const source = doc.get_model_by_name(arguments[0]);
        const plot = [...doc.all_models].find(m => m.x_range && m.renderers && m.renderers.some(r => r.data_source === source));
        const ticks = plot.left[0].ticker.ticks;
        return [ticks, ticks.map(t => plot.left[0].formatter.compute(t)), plot.y_range.end];""", ratio)
    machines = run.nb_machines  # (the computing count on an axis whose ticks read it over the machines)
    assert axis == [[machines * k / 5 for k in range(6)], ["0", "0.2", "0.4", "0.6", "0.8", "1"], 1.05 * machines]
    # the queue's two series (jobs, machines requested) share one page source of their changes
    queue, machines = f"{SERIES_NAME}_queue_0", f"{SERIES_NAME}_queued_machines_0"
    queue_times, jobs_waiting = queue_series(run)
    _, machines_waiting = queue_series(run, "requested_number_of_resources")
    assert report_series.changes_in(queue_times, start, end) > 2
    drawn = set_view(browser, f"{GANTT_NAME}_0", start * 1.01, end, [queue, machines])
    for key, column, values in ((queue, "queue", jobs_waiting), (machines, "machines", machines_waiting)):
        xs, ys = report_series.line_envelope(queue_times, values, start * 1.01, end, until)
        assert np.allclose(drawn[key]["x"], xs, rtol=1e-12) and drawn[key][column] == ys.tolist(), key
    # power (a step from each row's previous one) and cumulative energy (a curve through the rows)
    energy = run.consumed_energy
    rows = energy["time"].to_numpy(dtype=float)
    since, power = np.concatenate([[0.0], rows[:-1]]), energy["epower"].to_numpy(dtype=float)
    known = ~np.isnan(power)
    watts, joules = f"{SERIES_NAME}_power_0", f"{SERIES_NAME}_energy_0"
    start, end = float(rows[1]), float(rows[-2])
    assert report_series.changes_in(rows, start, end) > 2
    drawn = set_view(browser, f"{GANTT_NAME}_0", start, end, [watts, joules])
    xs, ys = report_series.line_envelope(since[known], power[known], start, end, float(rows[known][-1]))
    # (rows at one printed time, a job's end then the next start 1e-10 s later on SimGrid's clock,
    # carry Batsim's epower over that sub-nanosecond step, 189.999 W or 190.008 W for 190 W: the page
    # and report_series may keep different ones of such ties)
    assert np.allclose(drawn[watts]["x"], xs, rtol=1e-12) and np.allclose(drawn[watts]["power"], ys, rtol=1e-4)
    xs, ys = report_series.curve_envelope(rows, energy["energy"].to_numpy(dtype=float), start, end)
    assert drawn[joules]["x"] == xs.tolist() and np.allclose(drawn[joules]["energy"], ys, rtol=1e-12)
    # a view holding a single change: the corners around it, each the value the series holds there
    middle = float(times[len(times) // 2])
    drawn = set_view(browser, f"{GANTT_NAME}_0", middle - 1e-3, middle + 1e-3, [ratio])[ratio]
    assert len(drawn["x"]) >= 4 and drawn["x"][0] <= middle - 1e-3 and drawn["x"][-1] >= middle + 1e-3
    for (x0, x1), (y0, y1) in zip(zip(drawn["x"][::2], drawn["x"][1::2]), zip(drawn["computing"][::2],
                                                                             drawn["computing"][1::2])):
        assert y0 == y1
        if x1 > x0:  # (several rows at one time, as Batsim writes them, leave steps of no length between them)
            assert y0 == computing[np.searchsorted(times, (x0 + x1) / 2, side="right") - 1]
    screenshot(browser, "report_series_zoomed.png")
    assert errors_of(browser) == []


@needs_browser
def test_the_gantt_is_coloured_by_state_workload_or_size(runs, tmp_path, browser):
    """The colouring's choice changes the rectangles' fill and the legend shown (the items
    every colouring shows, hatching and power states, aside); by default each job's own colour
    (test_report_readability.py checks it)."""
    path = write_report([RunOutputs(runs["fcfs"])], str(tmp_path / "colours.html"))
    open_page(browser, path, f"{GANTT_NAME}_0")
    shown = """
        const doc = Bokeh.documents[0];
        if (arguments[1]) doc.get_model_by_name(arguments[0] + '_colour_by').value = arguments[1];
        const renderer = doc.get_model_by_name(arguments[0]);
        const legend = [...doc.all_models].find(m => m.items && m.items.length && m.items[0].label !== undefined &&
                                            m.items.some(i => i.label.value === 'COMPLETED_SUCCESSFULLY'));
        return [renderer.glyph.fill_color.field, legend.items.filter(i => i.visible).map(i => i.label.value)
                .filter(label => !label.startsWith('hatched') && !label.startsWith('machine '))];"""
    assert browser.execute_script(shown, f"{GANTT_NAME}_0", None) == [
        "colour", ["each job: one of 7 colour-blind-safe colours, touching jobs differ"]]
    deadline = time.monotonic() + 10
    while (now := browser.execute_script(shown, f"{GANTT_NAME}_0", "final state")) != [
            "state", ["COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"]]:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    sizes = sorted(int(size) for size in RunOutputs(runs["fcfs"]).jobs["requested_number_of_resources"].unique())
    expected = {1: "1", 2: "2-3"}
    while (now := browser.execute_script(shown, f"{GANTT_NAME}_0", "size (machines)")) != [
            "size_class", [expected[size] for size in sizes]]:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    screenshot(browser, "report_coloured_by_size.png")
    while (now := browser.execute_script(shown, f"{GANTT_NAME}_0", "workload")) != ["workload", ["w0"]]:
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    assert errors_of(browser) == []


def test_a_priced_run_shows_each_cluster_s_cost_and_each_job_s(tmp_path):
    """A platform with electricity prices: the cost per cluster (bars) and each job's cost in the
    Gantt's data, as PREFIX_energy_cost.csv has them."""
    from bokeh.models import ColumnDataSource

    from joulesim.analysis.html_report import _time_figures, _time_range

    joulesim.simulate("grid_table2", "default", "easy", energy=True, export=str(tmp_path / "out"))
    run = RunOutputs(str(tmp_path / "out"))
    costs = run.energy_cost
    figures = _time_figures(run, _time_range([run]), 0, 20_000)
    bars = next(f for f in figures if getattr(getattr(f, "title", None), "text", "").startswith("electricity cost"))
    source = bars.renderers[0].data_source
    clusters = costs[costs["kind"] == "cluster"]
    assert source.data["name"] == clusters["name"].tolist()
    assert source.data["cost"].tolist() == clusters["cost_cents"].tolist()
    every = next(m for f in figures for m in f.references()
                 if isinstance(m, ColumnDataSource) and m.name == f"{GANTT_NAME}_0_all")
    jobs = costs[costs["kind"] == "job"].set_index("name")["cost_cents"]
    for job_id, cost in zip(every.data["job_id"].tolist(), every.data["cost"].tolist()):
        assert cost == jobs[f"w0!{job_id}"]
    html = Path(write_report([run], str(tmp_path / "priced.html"))).read_text()
    assert "electricity cost per cluster" in html and "cents" in html
    # cost over time: PREFIX_energy_cost_trace.csv, a column per cluster (platform order), each
    # cluster's cost since time 0 at every change (non-decreasing), to the end of the run; over
    # the window of PREFIX_energy_cost.csv (first submission to last job end) it adds up to that
    # file's cluster rows; the page draws its rows (few enough to be drawn as they are)
    trace = run.energy_cost_trace
    names = clusters["name"].tolist()
    assert trace.columns.tolist() == ["time", *names]
    times = trace["time"].to_numpy()
    assert times[0] == 0.0 and np.all(np.diff(times) > 0) and times[-1] == pytest.approx(run.schedule["makespan"])
    assert all(np.all(np.diff(trace[name].to_numpy()) >= 0) for name in names)
    # (the jobs file prints times to the microsecond; the trace's rows are at the exact instants)
    first, last = (int(np.argmin(np.abs(times - t))) for t in (run.jobs["submission_time"].min(),
                                                                 run.jobs["finish_time"].max()))
    assert abs(times[last] - run.jobs["finish_time"].max()) < 1e-5
    for name, cost in zip(names, clusters["cost_cents"]):
        assert trace[name].iloc[last] - trace[name].iloc[first] == pytest.approx(cost, rel=1e-12, abs=1e-12)
    over_time = next(f for f in figures if getattr(getattr(f, "title", None), "text", "").startswith("cost over time"))
    drawn = {r.data_source.name: r.data_source.data for r in over_time.renderers if r.data_source.name}
    for k, name in enumerate(names):
        assert drawn[f"{SERIES_NAME}_cost_0_{k}"]["x"].tolist() == times.tolist()
        assert drawn[f"{SERIES_NAME}_cost_0_{k}"][f"c{k}"].tolist() == trace[name].tolist()
