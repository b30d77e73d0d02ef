"""`joulesim campaign report --html`: a page per instance whose files were kept, sharing one copy
of BokehJS, and an index sortable by any column, with each instance's succeeded and killed jobs.
The browser tests open the pages in headless Chromium (tests/conftest.py's `browser`)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from joulesim.campaign.runner import run_campaign
from joulesim.protocol.errors import JoulesimError

from test_campaign import RUNS, cli, write_study
from test_html_report import errors_of, needs_browser

pytest.importorskip("bokeh", reason="the report extra is not installed (pip install '.[report]')")


def test_each_kept_instance_gets_a_page_linked_from_the_index(tmp_path):
    study = write_study(tmp_path, RUNS.replace('name = "basic"', 'name = "basic"\noutputs = true'))
    assert run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False).failed == []
    done = cli("report", "res", "-o", "plots", "--html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    index = (tmp_path / "plots" / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', index)
    assert sorted(name for _, name in links) == sorted(table["instance_id"])
    for target, name in links:
        page = (tmp_path / "plots" / target).read_text()
        assert target == f"instances/{name}.html" and "Bokeh" in page and f"{name}: decider" in page
    assert "t_idle" in index and "decider" in index  # the parameters that vary are columns
    assert "plots/index.html" in done.stdout.splitlines()


def test_a_campaign_that_kept_no_files_is_one_line(tmp_path):
    study = write_study(tmp_path, RUNS)
    run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    done = cli("report", "res", "-o", "plots", "--html", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "set 'outputs = true' in the study's [campaign] table" in done.stderr
    assert not (tmp_path / "plots" / "index.html").exists()
    with pytest.raises(JoulesimError, match="no instance kept its output files"):
        from joulesim.campaign.instance_pages import write_instance_pages

        write_instance_pages(str(tmp_path / "res"), str(tmp_path / "plots"))



def test_a_file_where_the_shared_copy_goes_is_one_line(tmp_path):
    study = write_study(tmp_path, RUNS.replace('name = "basic"', 'name = "basic"\noutputs = true'))
    run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "static").write_text("not a folder")
    done = cli("report", "res", "-o", "plots", "--html", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert "shared BokehJS folder (in -o)" in done.stderr and "static" in done.stderr
    assert not list((tmp_path / "plots" / "instances").glob("*.html"))
    assert not (tmp_path / "plots" / "index.html").exists()

# ------------------------------------------------ 16 instances: one copy of BokehJS, a sortable index
# Two workloads of 10 jobs on the 2 hosts of energy2: in "kills", the odd jobs' walltime (100 s) is
# shorter than some of their delays, so some are killed; FCFS and EASY switching idle machines off
# after 7 delays: 16 instances, each succeeding with its page. Built by the benchmark that
# measures the same report (benchmarks/bench_campaign_pages.py).
def _load_benchmark(name: str):
    """benchmarks/NAME.py as a module (the benchmarks are scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BOKEH_PAGE_LIMIT = 5_000_000  # issue 49: 16 instances' report under 5 MB (36 MB with BokehJS in each page)


@pytest.fixture(scope="module")
def campaign_report(tmp_path_factory) -> tuple[Path, Path]:
    """(the results folder, the report folder) of the 16 instances."""
    directory = tmp_path_factory.mktemp("pages")
    study = _load_benchmark("bench_campaign_pages").write_inputs(str(directory))
    assert run_campaign(study, str(directory / "res"), workers=2, progress=False).failed == []
    done = cli("report", "res", "-o", "report", "--html", "--compare", cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "res", directory / "report"


def _folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _jobs_counts(results: Path, instance: str) -> tuple[int, int]:
    """(succeeded, killed) read from the instance's jobs file; walltime reached counts as killed."""
    states = pd.read_csv(results / "runs" / instance / "out_jobs.csv")["final_state"]
    return (int((states == "COMPLETED_SUCCESSFULLY").sum()),
            int(states.isin(["COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED"]).sum()))


def test_sixteen_pages_share_one_copy_of_bokehjs_by_relative_paths(campaign_report):
    results, report = campaign_report
    pages = sorted((report / "instances").glob("*.html"))
    assert len(pages) == 16
    # (the instances' report: the comparison pages --compare adds are not part of the target)
    assert _folder_size(report) - _folder_size(report / "comparisons") < BOKEH_PAGE_LIMIT, _folder_size(report)
    copies = sorted(path.relative_to(report).as_posix() for path in (report / "static").rglob("*.js"))
    assert [name for name in copies if name.endswith("/bokeh.min.js")] == [copies[0].rsplit("/", 1)[0] + "/bokeh.min.js"]
    for page in pages:
        text = page.read_text()
        assert "/* BEGIN bokeh" not in text  # no BokehJS inlined
        sources = re.findall(r'<script[^>]*\ssrc="([^"]+)"', text)
        assert sources and not re.search(r"<link\s", text)
        for source in sources:  # relative, inside the report folder, and there
            assert "://" not in source and not source.startswith("/"), source
            target = (page.parent / source).resolve()
            assert target.is_file() and report.resolve() in target.parents, source


def test_the_index_counts_succeeded_and_killed_jobs_from_the_jobs_files(campaign_report):
    results, report = campaign_report
    index = (report / "index.html").read_text()
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", index)
    succeeded, killed = headers.index("succeeded"), headers.index("killed")
    rows = re.findall(r"<tr>(<td.*?)</tr>", index)
    assert len(rows) == 16
    counted = {}
    for row in rows:
        cells = re.findall(r'<td data-key="[^"]*">(.*?)</td>', row)
        instance = re.sub(r"<[^>]+>", "", cells[0])
        counted[instance] = (int(cells[succeeded]), int(cells[killed]))
    expected = {path.name: _jobs_counts(results, path.name) for path in (results / "runs").iterdir()}
    assert counted == expected
    assert {kills for _, kills in counted.values()} > {0}  # some instance had jobs killed


# Plots drawn: every Plot model of the page has its view, finished, and canvases are drawn.
PAGE_STATE = """
if (!(window.Bokeh && Bokeh.documents.length)) return null;
const plots = [...Bokeh.documents[0].all_models].filter(m => m.x_range && m.renderers);
const views = [...Bokeh.index.all_views()].filter(v => plots.includes(v.model));
let canvases = 0;
const visit = (root) => {
    for (const element of root.querySelectorAll('*')) {
        if (element.tagName === 'CANVAS' && element.width > 0 && element.height > 0) canvases++;
        if (element.shadowRoot) visit(element.shadowRoot);
    }
};
visit(document);
return {plots: plots.length, views: views.length, finished: views.filter(v => v.has_finished()).length, canvases};
"""


@needs_browser
def test_pages_draw_from_the_shared_copy_once_the_folder_is_moved(campaign_report, browser, tmp_path):
    _, report = campaign_report
    moved = tmp_path / "elsewhere" / "moved report"  # (a space: the paths are URLs once loaded)
    shutil.copytree(report, moved)
    hidden = report.with_name(report.name + ".hidden")
    os.rename(report, hidden)  # nothing may still point into the original folder
    try:
        pages = sorted((moved / "instances").glob("*.html"))
        # Four of the sixteen, first and last among them: every page's script paths are checked
        # without a browser above, and each page drawn costs about two seconds of the suite.
        for page in [pages[0], pages[5], pages[10], pages[-1]]:
            browser.get_log("browser")  # (what the previous page left)
            browser.get(page.as_uri())
            deadline = time.monotonic() + 60
            while not ((state := browser.execute_script(PAGE_STATE)) and state["plots"]
                       and state["finished"] == state["views"] == state["plots"]):
                assert time.monotonic() < deadline, f"{page.name}: not drawn within 60 s: {state}, {errors_of(browser)}"
                time.sleep(0.1)
            assert state["plots"] >= 5 and state["canvases"] >= state["plots"], (page.name, state)
            assert errors_of(browser) == [], page.name
    finally:
        os.rename(hidden, report)


INDEX_ROWS = "return [...document.querySelectorAll('tbody tr')].map(row => [...row.cells].map(cell => cell.dataset.key));"


def _python_sort(values: list, numeric: bool, descending: bool) -> list:
    """The order the index must show: numbers as numbers, text as Python sorts it, empty last."""
    present = [float(v) if numeric else v for v in values if v != ""]
    return sorted(present, reverse=descending) + [""] * (len(values) - len(present))


@needs_browser
def test_the_index_sorts_numbers_as_numbers_and_text_as_text(campaign_report, browser):
    results, report = campaign_report
    table = pd.read_csv(results / "results.csv").set_index("instance_id")
    browser.get((report / "index.html").as_uri())
    headers = [element.text for element in browser.find_elements("css selector", "th")]
    original = {row[0]: row for row in browser.execute_script(INDEX_ROWS)}
    assert sorted(original) == sorted(table.index)
    # option.t_idle: 30 ... 1920 (text would put 120 before 30), empty for FCFS; the killed jobs;
    # a metric; the instance ids and the workloads as text.
    for header, numeric in [("option.t_idle", True), ("killed", True), ("makespan (s)", True),
                            ("instance", False), ("workload", False)]:
        column = headers.index(header)
        element = browser.find_elements("css selector", "th")[column]
        for descending in (False, True):
            before = browser.execute_script(INDEX_ROWS)
            element.click()
            after = browser.execute_script(INDEX_ROWS)
            assert sorted(map(tuple, after)) == sorted(map(tuple, before))  # whole rows moved
            assert all(row == original[row[0]] for row in after)
            shown = [float(row[column]) if numeric and row[column] != "" else row[column] for row in after]
            assert shown == _python_sort([row[column] for row in before], numeric, descending), header
            assert element.get_attribute("aria-sort") == ("descending" if descending else "ascending")
    # The keys are the values of the results table (exact, not the 6 digits shown).
    makespan = headers.index("makespan (s)")
    assert {row[0]: float(row[makespan]) for row in original.values()} == table["makespan"].to_dict()
    t_idle = headers.index("option.t_idle")
    assert [original[i][t_idle] for i in table.index if table.at[i, "decider"] == "fcfs"] == ["", ""]
    assert errors_of(browser) == []


@needs_browser
def test_compare_puts_the_instances_of_the_same_jobs_on_one_page(campaign_report, browser):
    """--compare: one page per workload (each of its 8 instances ran the same jobs: fcfs and the 7
    t_idle of easy), linked from the index, its runs named as the index names them, the first
    the reference of the others' difference Gantts (each job's start shift from the jobs files);
    the pages load the shared BokehJS; --compare without --html is a usage error."""
    from joulesim.analysis.html_report import GANTT_NAME, SUMMARY_NAME, shift_classes
    from test_html_report import open_page
    from test_report_readability import sources

    results, report = campaign_report
    index = (report / "index.html").read_text()
    links = re.findall(r'<li><a href="(comparisons/[^"]+)">([^<]+)</a></li>', index)
    assert sorted(label for _, label in links) == ["workload kills: 8 instances", "workload ok: 8 instances"], links
    table = pd.read_csv(results / "results.csv")
    for link, label in links:
        page = report / link
        assert "/* BEGIN bokeh" not in page.read_text()
        open_page(browser, str(page), f"{GANTT_NAME}_1")
        names = browser.execute_script("return Bokeh.documents[0].get_model_by_name(arguments[0]).source.data.run;",
                                       SUMMARY_NAME)
        workload = label.split("workload ")[1].split(":")[0]
        group = table[table["workload"] == workload]
        assert len(names) == 8 and names[0] == "decider fcfs" and all(n.startswith("decider easy-os") for n in names[1:])
        first = pd.read_csv(results / "runs" / group["instance_id"].iloc[0] / "out_jobs.csv")
        starts = first.set_index(first["job_id"].astype(str))["starting_time"]
        for k in (1, 7):  # (the second and the last run against the first)
            instance = group["instance_id"].iloc[k]
            drawn = sources(browser, f"{GANTT_NAME}_{k}_all")[f"{GANTT_NAME}_{k}_all"]
            jobs = pd.read_csv(results / "runs" / instance / "out_jobs.csv")
            mine = jobs.set_index(jobs["job_id"].astype(str))["starting_time"]
            assert set(drawn["left"]) == set(mine.dropna())  # (this instance's own jobs)
            shifts = np.array([left - starts[str(job)] for job, left in zip(drawn["job_id"], drawn["left"])])
            assert drawn["shift"] == shift_classes(shifts).tolist()
        assert errors_of(browser) == []
    done = cli("report", str(results), "-o", str(report.parent / "other"), "--compare", cwd=report.parent)
    assert done.returncode == 2 and "--compare draws interactive pages: give it with --html" in done.stderr
