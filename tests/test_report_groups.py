"""The report's Gantt grouped as the platform groups its machines (analysis/machine_groups.py):
IRMaSim node platforms by node and processor, multi-cluster platforms by cluster; through
`joulesim report --platform`, `RunResult.report` and `joulesim campaign report --html`, and in a
real browser (hover names the processor and the cores)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import joulesim
from joulesim.analysis.machine_groups import machine_groups
from joulesim.analysis.run_outputs import AnalysisError, RunOutputs
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import _irmasim_processor
from test_html_report import TOOLTIPS, errors_of, needs_browser, open_page, report_cli, screenshot

pytest.importorskip("bokeh", reason="the report extra is not installed (pip install '.[report]')")

from joulesim.analysis.html_report import GANTT_NAME, _cut_at_groups, _gantt, _time_range, write_report  # noqa: E402

# Two "dual" nodes of two 2-core processors, then a "single" node of one 3-core processor:
# cores 0-1 and 2-3 (node0), 4-5 and 6-7 (node1), 8-10 (node2).
PLATFORM = {
    "platform": {"p": {"id": "p", "model_name": "modelV1", "clusters": [
        {"id": "c0", "nodes": [{"type": "dual", "number": 2}, {"type": "single", "number": 1}]}]}},
    "node": {"dual": {"id": "dual", "processors": [{"type": "two", "number": 2}]},
             "single": {"id": "single", "processors": [{"type": "three", "number": 1}]}},
    "processor": {"two": {**_irmasim_processor(10.0, 1.0), "cores": 2},
                  "three": {**_irmasim_processor(10.0, 1.0), "cores": 3}},
}
NODES = [("node0", 0, 3), ("node1", 4, 7), ("node2", 8, 10)]
PROCESSORS = [("node0.processor0", 0, 1), ("node0.processor1", 2, 3), ("node1.processor0", 4, 5),
              ("node1.processor1", 6, 7), ("node2.processor0", 8, 10)]
# 10 s each on a 1 GHz core; 4-core jobs span two processors, 3-core ones fit node2's.
WORKLOAD = {"profiles": {"A": {"req_ops": 10_000_000_000, "ipc": 1, "req_time": 10, "mem": 0, "mem_vol": 0}},
            "jobs": [{"id": f"J{k}", "subtime": 5 * k, "res": res, "profile": "A"}
                     for k, res in enumerate([4, 4, 3, 2, 4, 1])]}


@pytest.fixture(scope="module")
def node_run(tmp_path_factory) -> tuple[str, str, str]:
    """(platform file, workload file, the run's output prefix), decider heuristic."""
    folder = tmp_path_factory.mktemp("node_groups")
    (folder / "platform.json").write_text(json.dumps(PLATFORM))
    (folder / "workload.json").write_text(json.dumps(WORKLOAD))
    prefix = str(folder / "run" / "out")
    joulesim.simulate(str(folder / "platform.json"), str(folder / "workload.json"), "heuristic", energy=True,
                      export=prefix)
    return str(folder / "platform.json"), str(folder / "workload.json"), prefix


def test_an_irmasim_platform_groups_cores_by_node_and_processor(node_run):
    groups = machine_groups(load_platform(node_run[0]))
    assert (groups.outer_kind, groups.inner_kind) == ("node", "processor")
    assert groups.outer == NODES and groups.inner == PROCESSORS and groups.finest == PROCESSORS
    assert groups.nb_machines == 11 and groups.machine_names[2] == "node0.processor1.core0"


def test_clusters_group_machines_and_one_cluster_is_no_grouping():
    griffon = machine_groups(load_platform("griffon8x16"))
    assert griffon.outer_kind == "cluster" and griffon.inner == [] and griffon.finest == griffon.outer
    # every machine in exactly one group, in order, each group one cluster of the file
    assert [first for _, first, _ in griffon.outer] == [0] + [last + 1 for _, _, last in griffon.outer[:-1]]
    assert griffon.outer[-1][2] == 127
    zones = [host.zone for host in load_platform("griffon8x16").compute_hosts]
    assert all(len({zones[m] for m in range(first, last + 1)}) == 1 for _, first, last in griffon.outer)
    assert [name for name, _, _ in griffon.outer] == [zones[first] for _, first, _ in griffon.outer]
    # a run cut to its first machines (mmax) is grouped as far as it goes
    assert machine_groups(load_platform("griffon8x16"), 20).outer[-1][2] == 19
    assert machine_groups(load_platform("small4")) is None
    assert machine_groups(load_platform("cluster32")) is None


def test_rectangles_are_cut_where_a_group_ends():
    rows, lows, highs = np.array([0, 1, 2]), np.array([0, 3, 8]), np.array([3, 9, 8])
    cut_rows, cut_lows, cut_highs, group = _cut_at_groups(rows, lows, highs, PROCESSORS)
    # job 0 on cores 0-3: processors 0 and 1; job 1 on 3-9: processors 1 (core 3), 2, 3, 4 (8-9)
    assert cut_rows.tolist() == [0, 0, 1, 1, 1, 1, 2]
    assert list(zip(cut_lows.tolist(), cut_highs.tolist())) == [(0, 1), (2, 3), (3, 3), (4, 5), (6, 7), (8, 9), (8, 8)]
    assert group.tolist() == [0, 1, 1, 2, 3, 4, 4]


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=8), data=st.data())
def test_cut_pieces_cover_each_run_exactly_within_one_group(sizes, data):
    ends = np.cumsum(sizes)
    ranges = [(f"g{k}", int(end - size), int(end - 1)) for k, (size, end) in enumerate(zip(sizes, ends))]
    machines = int(ends[-1])
    runs = data.draw(st.lists(st.tuples(st.integers(0, machines - 1), st.integers(0, machines - 1)), max_size=10))
    lows = np.array([min(a, b) for a, b in runs], dtype=np.int64)
    highs = np.array([max(a, b) for a, b in runs], dtype=np.int64)
    rows, cut_lows, cut_highs, group = _cut_at_groups(np.arange(len(runs)), lows, highs, ranges)
    for k in range(len(runs)):
        pieces = [(lo, hi) for r, lo, hi in zip(rows, cut_lows, cut_highs) if r == k]
        covered = [m for lo, hi in pieces for m in range(lo, hi + 1)]
        assert covered == list(range(lows[k], highs[k] + 1))
    for lo, hi, g in zip(cut_lows, cut_highs, group):
        assert ranges[g][1] <= lo <= hi <= ranges[g][2]


def test_the_gantt_holds_a_rectangle_per_job_and_processor(node_run):
    from bokeh.models import FixedTicker

    run = RunOutputs(node_run[2])
    groups = machine_groups(load_platform(node_run[0]))
    _, fig = _gantt(run, _time_range([run]), "g", 20_000, groups)
    data = fig.select_one({"name": "g"}).data_source.data
    jobs = run.jobs.set_index(run.jobs["job_id"].astype(str))
    names = [name for name, _, _ in PROCESSORS]
    cores_of: dict[str, list[int]] = {}
    for job, first, last, group in zip(data["job_id"], data["first"], data["last"], data["group"]):
        name, low, high = PROCESSORS[group]
        assert low <= first <= last <= high  # one processor each
        cores_of.setdefault(str(job), []).extend(range(first, last + 1))
    for job, cores in cores_of.items():  # together, exactly the job's cores
        allocated = jobs.loc[job, "allocated_resources"]
        expected = [c for part in str(allocated).split() for c in
                    range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1)]
        assert sorted(cores) == expected
    assert any(len({names[g] for g, j in zip(data["group"], data["job_id"]) if str(j) == job}) > 1
               for job in cores_of)  # (a job spans processors, so the cut is tested)
    assert isinstance(fig.yaxis.ticker, FixedTicker) and fig.yaxis.ticker.ticks == [1.5, 5.5, 9.0]
    assert fig.yaxis.major_label_overrides == {1.5: "node0", 5.5: "node1", 9.0: "node2"}
    spans = [r.data_source.data["y"] for r in fig.renderers if type(r.glyph).__name__ == "HSpan"]
    assert [sorted(y) for y in spans] == [[1.5, 5.5], [3.5, 7.5]]  # between processors, then nodes
    strips = [r.data_source.data for r in fig.renderers if type(r.glyph).__name__ == "HStrip"]
    assert [(list(s["y0"]), list(s["y1"])) for s in strips] == [([3.5], [7.5])]  # node1 shaded
    assert "cores grouped by node and processor (3 nodes, 5 processors, 11 cores)" in fig.title.text


def test_the_cli_groups_with_the_platform_and_refuses_another_s(node_run, tmp_path):
    platform, _, prefix = node_run
    done = report_cli(prefix, "-p", platform, "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert "cores grouped by node and processor" in (tmp_path / "r.html").read_text()
    other = report_cli(prefix, "-p", "small4", "-o", str(tmp_path / "s.html"))
    assert other.returncode != 0 and "Traceback" not in other.stderr
    assert "the platform has 4 machines but the run" in other.stderr and "used 11" in other.stderr
    assert not (tmp_path / "s.html").exists()
    lone = report_cli(prefix, "--platform-name", "p", "-o", str(tmp_path / "t.html"))
    assert lone.returncode == 2 and "give --platform" in lone.stderr
    missing = report_cli(prefix, "-p", str(tmp_path / "nope.json"), "-o", str(tmp_path / "t.html"))
    assert missing.returncode != 0 and "nope.json" in missing.stderr and "Traceback" not in missing.stderr


def test_the_api_groups_a_node_run_by_itself(node_run, tmp_path):
    result = joulesim.simulate(node_run[0], node_run[1], "heuristic", energy=True)
    html = Path(result.report(str(tmp_path / "api.html"))).read_text()
    assert "cores grouped by node and processor (3 nodes, 5 processors, 11 cores)" in html
    flat = joulesim.simulate("small4", {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "d"}],
                                        "profiles": {"d": {"type": "delay", "delay": 5}}}, "fcfs")
    assert "grouped by" not in Path(flat.report(str(tmp_path / "flat.html"))).read_text()


def test_a_campaign_s_pages_group_each_instance_s_platform(node_run, tmp_path):
    from test_campaign import cli

    platform, workload, _ = node_run
    (tmp_path / "study.toml").write_text(f"""
[campaign]
name = "nodes"
outputs = true

[[platforms]]
path = "{platform}"

[[workloads]]
path = "{workload}"

[[deciders]]
decider = "heuristic"
""")
    ran = cli("run", "study.toml", "--out", "res", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    done = cli("report", "res", "-o", "pages", "--html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pages = list((tmp_path / "pages" / "instances").glob("*.html"))
    assert len(pages) == 1 and "cores grouped by node and processor" in pages[0].read_text()


@needs_browser
def test_hover_names_the_processor_and_the_cores(node_run, tmp_path, browser):
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    groups = machine_groups(load_platform(node_run[0]))
    path = write_report([RunOutputs(node_run[2])], str(tmp_path / "nodes.html"), groups=groups)
    name = f"{GANTT_NAME}_0"
    where = open_page(browser, path, name)
    first, last, group = browser.execute_script(
        "const d = Bokeh.documents[0].get_model_by_name(arguments[0]).data_source.data;"
        "return [d.first[0], d.last[0], d.group[0]];", name)
    pointer = ActionBuilder(browser)
    pointer.pointer_action.move_to_location(int(where["x"]), int(where["y"]))
    pointer.perform()
    expected = rf"processor:\s*{re.escape(PROCESSORS[group][0])}\s+cores:\s*{first} to {last}\b"
    deadline = time.monotonic() + 10
    while not re.search(expected, browser.execute_script(TOOLTIPS)):
        assert time.monotonic() < deadline, browser.execute_script(TOOLTIPS)
        time.sleep(0.1)
    screenshot(browser, "report_node_groups.png")
    assert errors_of(browser) == []


def test_the_platform_check_names_both_sizes(node_run, tmp_path):
    with pytest.raises(AnalysisError, match="has 128 machines but the run .* used 11"):
        write_report([RunOutputs(node_run[2])], str(tmp_path / "x.html"),
                     groups=machine_groups(load_platform("griffon8x16")))
    assert not (tmp_path / "x.html").exists()
