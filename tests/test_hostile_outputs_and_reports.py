"""Issue 46, outputs and reports: output paths that are not regular files, and damaged run and
campaign folders given to `joulesim report` and `joulesim campaign report --html`.

Every refusal is one line `joulesim: error: PATH: ...` with exit status 2, and leaves what was at
the path as it was. No test needs root: a FIFO, a symbolic link to /dev/null and a folder stand
for /dev/full. A FIFO is only given to writers that rename over their output (a rename does not
open it); a writer that would open the path itself gets the link or the folder, and a FIFO that a
writer could open has a reader held open without blocking, so that no test can hang.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import write_whole

from test_campaign import RUNS, write_study

pytest.importorskip("bokeh", reason="the report extra is not installed (pip install '.[report]')")

JOBS = [
    {"id": 3, "subtime": 2, "res": 5, "walltime": 15, "profile": "d10"},  # rejected: 5 > 2 machines (data row 1)
    {"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d30"},
    {"id": 2, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10"},
]
PROFILES = {f"d{n}": {"type": "delay", "delay": n} for n in (10, 30)}
KINDS = ["fifo", "link_to_dev_null", "folder"]


# ---------------------------------------------------------------------- helpers
def _make(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link_to_dev_null":
        os.symlink(os.devnull, path)
    else:
        path.mkdir()


def _still(kind: str, path: Path) -> None:
    """What was made at `path` is still there, untouched, and nothing was left beside it."""
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(path).st_mode), f"{path} is no longer a FIFO"
    elif kind == "link_to_dev_null":
        assert os.path.islink(path) and os.readlink(path) == os.devnull, f"{path} is no longer a link to /dev/null"
        assert stat.S_ISCHR(os.stat(path).st_mode)
    else:
        assert path.is_dir() and list(path.iterdir()) == [], f"{path} is no longer an empty folder"
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith((".tmp", ".partial"))]


def _one_error_line(output: str, *needles: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("joulesim: error: "), output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _report(*args: str):
    from joulesim.cli.report_command import report

    return CliRunner().invoke(report, list(args))


def _campaign_report(*args: str):
    from joulesim.cli.campaign_command import campaign

    return CliRunner().invoke(campaign, ["report", *args])


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """One run's outputs on the 2 machines of energy2 (energy on): its folder, prefix `out`."""
    directory = tmp_path_factory.mktemp("run")
    workload = directory / "workload.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": JOBS, "profiles": PROFILES}))
    joulesim.simulate("energy2", str(workload), "easy", energy=True, export=str(directory / "out"))
    return directory


@pytest.fixture
def damaged(run, tmp_path) -> Path:
    """A copy of the run to damage: the prefix."""
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run" / "out"


def _set_jobs_cell(prefix: Path, data_row: int, column: str, value: str) -> None:
    path = Path(f"{prefix}_jobs.csv")
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    rows[data_row][rows[0].index(column)] = value
    with open(path, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def campaign_folder(tmp_path_factory) -> Path:
    """A campaign of 3 instances that kept their outputs (`outputs = true`)."""
    from joulesim.campaign.runner import run_campaign

    directory = tmp_path_factory.mktemp("campaign")
    study = write_study(directory, RUNS.replace('name = "basic"', 'name = "basic"\noutputs = true'))
    assert run_campaign(str(study), str(directory / "res"), workers=1, progress=False).failed == []
    return directory / "res"


@pytest.fixture
def campaign_copy(campaign_folder, tmp_path) -> Path:
    shutil.copytree(campaign_folder, tmp_path / "res")
    return tmp_path / "res"


# ---------------------------------------------------------------------- 1. outputs that are not regular files
@pytest.mark.parametrize("kind", KINDS)
def test_export_xml_refuses_a_non_regular_output_even_with_force(tmp_path, kind):
    from joulesim.cli.platform_command import platform

    target = tmp_path / "out.xml"
    _make(kind, target)
    result = CliRunner().invoke(platform, ["export-xml", "cluster32.json", "-o", str(target), "--force"])
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{target}: output (-o): is ")
    _still(kind, target)


@pytest.mark.parametrize("kind", KINDS)
def test_report_refuses_a_non_regular_page(run, tmp_path, kind):
    target = tmp_path / "page.html"
    _make(kind, target)
    result = _report(str(run / "out"), "-o", str(target))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{target}: report page: is ")
    _still(kind, target)


def _writers():
    """(name, write(path), kinds it is tested with): every writer of an output file."""

    def learn_check(path):
        from joulesim.learn.output_paths import check_output_file

        check_output_file(str(path), "output (-o)")

    def learn_write(path):
        from joulesim.learn.output_paths import write_via_temporary

        write_via_temporary(str(path), "output (-o)", lambda p: Path(p).write_text("x"))

    def page(path):
        from joulesim.analysis.html_report import write_page

        write_page(str(path), "<html></html>")

    def results_table(path):
        import pandas as pd

        from joulesim.campaign.results_store import ResultsStore

        ResultsStore(str(path.parent)).write_table(pd.DataFrame({"instance_id": ["a"], "status": ["ok"]}))

    def instance_record(path):
        from types import SimpleNamespace

        from joulesim.campaign.results_store import ResultsStore

        instance = SimpleNamespace(id=path.stem, parameters=lambda: {})  # what save uses of an Instance
        ResultsStore(str(path.parent.parent)).save(instance, {"id": path.stem, "status": "ok"})

    def rl_check(path):
        from joulesim.cli.rl_command import _check_writable_file

        _check_writable_file(str(path), "-o/--out")

    def rl_write(path):
        from joulesim.cli.rl_command import _write_runs

        _write_runs(str(path), [{"run": 0, "energy": 1.0, "makespan": 2.0, "edp": 2.0}])

    def image(path):
        pytest.importorskip("matplotlib")
        from joulesim.analysis.plotting import pyplot, save

        save(pyplot().figure(), str(path))

    rename = KINDS  # these write a temporary file and rename it: a FIFO is never opened
    return [
        ("learn check_output_file", learn_check, "scores.csv", rename),
        ("learn write_via_temporary", learn_write, "scores.csv", rename),
        ("report/index page", page, "index.html", rename),
        ("campaign results.csv", results_table, "results.csv", rename),
        ("campaign instance record", instance_record, "instances/abc.json", rename),
        ("rl evaluate -o check", rl_check, "runs.csv", rename),
        ("rl evaluate -o write", rl_write, "runs.csv", rename),
        # savefig used to open the path itself: a FIFO would block it, so no FIFO here.
        ("plot image", image, "plot.png", ["link_to_dev_null", "folder"]),
    ]


@pytest.mark.parametrize("write, relative, kind", [pytest.param(w, r, k, id=f"{n}-{k}")
                                                   for n, w, r, kinds in _writers() for k in kinds])
def test_every_writer_refuses_a_path_that_is_not_a_regular_file(tmp_path, write, relative, kind):
    from joulesim.protocol.errors import JoulesimError

    target = tmp_path / relative
    target.parent.mkdir(exist_ok=True)
    _make(kind, target)
    with pytest.raises(JoulesimError) as refused:
        write(target)
    assert refused.value.exit_code == 2 and str(refused.value).startswith(f"{target}: "), str(refused.value)
    _still(kind, target)


def test_a_model_file_path_that_is_a_fifo_is_refused(tmp_path):
    pytest.importorskip("torch")
    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings

    target = tmp_path / "model.pt"
    _make("fifo", target)
    with pytest.raises(InputError, match=f"{target}: model file: is a FIFO"):
        save_agent(target, PPOAgent(2, 3, PPOSettings()), {})
    _still("fifo", target)


def test_a_fifo_where_the_temporary_used_to_go_is_never_written_through(tmp_path):
    # The temporary was PATH.tmp, opened for writing: a FIFO (or a link to /etc/passwd) there was
    # written through, then renamed over PATH. A reader held open keeps the old code from blocking.
    from joulesim.learn.output_paths import write_via_temporary

    out = tmp_path / "scores.csv"
    os.mkfifo(f"{out}.tmp")
    reader = os.open(f"{out}.tmp", os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_via_temporary(str(out), "output (-o)", lambda p: Path(p).write_text("a,b\n"))
    finally:
        os.close(reader)
    assert stat.S_ISREG(os.lstat(out).st_mode) and out.read_text() == "a,b\n"
    assert stat.S_ISFIFO(os.lstat(f"{out}.tmp").st_mode)


def test_a_link_to_a_regular_file_is_kept_and_its_file_replaced(tmp_path):
    (tmp_path / "real.csv").write_text("old\n")
    os.symlink("real.csv", tmp_path / "link.csv")
    write_whole(str(tmp_path / "link.csv"), "output", lambda p: Path(p).write_text("new\n"))
    assert os.readlink(tmp_path / "link.csv") == "real.csv" and (tmp_path / "real.csv").read_text() == "new\n"


# ---------------------------------------------------------------------- 2. campaign report -o a file
def test_campaign_report_html_to_a_plain_file_is_one_line(campaign_copy, tmp_path):
    plain = tmp_path / "plots.txt"
    plain.write_text("keep me\n")
    result = _campaign_report(str(campaign_copy), "-o", str(plain), "--html")
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{plain}: output folder (-o): is a file, not a folder")
    assert plain.read_text() == "keep me\n"


# ---------------------------------------------------------------------- 3. an output file that is a folder
def test_report_on_a_machine_states_folder_is_one_line(damaged, tmp_path):
    states = Path(f"{damaged}_machine_states.csv")
    states.unlink()
    states.mkdir()
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{states}: file: is a folder, not a regular file")
    assert not (tmp_path / "page.html").exists()


# ---------------------------------------------------------------------- 4. damaged run outputs
@pytest.mark.parametrize("column", ["starting_time", "finish_time", "execution_time",
                                    "requested_number_of_resources"])
@pytest.mark.parametrize("value", ["inf", "-inf", "-5"])
def test_report_refuses_impossible_job_numbers(damaged, tmp_path, column, value):
    _set_jobs_cell(damaged, 2, column, value)  # job 1, which ran
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{damaged}_jobs.csv: data row 2 (job 1), column {column}: ", "damaged")
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("column, value, problem", [
    ("finish_time", "1e20", "below 2^33"),  # beyond any time the simulator accepts
    ("turnaround_time", "", "is empty while the job's other times are given"),
    ("waiting_time", "", "is empty while the job's other times are given"),
])
def test_report_refuses_huge_and_missing_times(damaged, tmp_path, column, value, problem):
    _set_jobs_cell(damaged, 2, column, value)
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{damaged}_jobs.csv: data row 2 (job 1), column {column}: ", problem)


def test_report_on_a_jobs_file_without_a_column_exits_2(damaged, tmp_path):
    jobs = Path(f"{damaged}_jobs.csv")
    lines = jobs.read_text().splitlines()
    jobs.write_text("\n".join(",".join(line.split(",")[:-3]) for line in lines) + "\n")  # no allocated_resources...
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{jobs}: missing column(s) allocated_resources")


@pytest.mark.parametrize("value, problem", [
    ("0-999", "names machine 999, but the run had 2"),
    ("3-1", "goes backwards"),
    ("", "is empty, but the job has a starting_time"),
    ("0-3", "names machine 3, but the run had 2"),  # 4 ids on a 2-machine run
    ("0 1 0 1 0 1 0 1", "names machine 0 twice"),  # 8 ids on a 2-machine run
    ("1_0", "is not an interval set"),
])
def test_report_refuses_impossible_allocations(damaged, tmp_path, value, problem):
    _set_jobs_cell(damaged, 3, "allocated_resources", value)  # job 2, which ran
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{damaged}_jobs.csv: data row 3 (job 2), column allocated_resources: ", problem)


@pytest.mark.parametrize("cut", [1, 3])  # the last newline only; the last count and its newline
def test_report_refuses_machine_states_cut_mid_line(damaged, tmp_path, cut):
    states = Path(f"{damaged}_machine_states.csv")
    states.write_bytes(states.read_bytes()[:-cut])
    result = _report(str(damaged), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{states}: data row ", "cut short")


@pytest.mark.parametrize("suffix", ["", "/"])
def test_report_to_an_existing_folder_writes_no_page_and_says_so(run, tmp_path, suffix):
    folder = tmp_path / "pages"
    folder.mkdir()
    result = _report(str(run / "out"), "-o", f"{folder}{suffix}")
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"{folder}{suffix}: report page: is a folder, not a file", "report.html")
    assert list(folder.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["pages"]


def test_an_undamaged_run_still_reports(run, tmp_path):
    result = _report(str(run / "out"), "-o", str(tmp_path / "page.html"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "page.html").stat().st_size > 0


# ---------------------------------------------------------------------- 5. damaged campaign folders
def _first_instance(res: Path) -> str:
    return sorted(p.name for p in (res / "runs").iterdir())[0]


def _remove_run_folder(res):
    instance = _first_instance(res)
    shutil.rmtree(res / "runs" / instance)
    return f"{res / 'runs' / instance}: output files of instance {instance}: are missing"


def _remove_records(res):
    shutil.rmtree(res / "instances")
    return f"{res / 'instances'}: records folder: is missing"


def _remove_jobs_file(res):
    instance = _first_instance(res)
    (res / "runs" / instance / "out_jobs.csv").unlink()
    return f"{res / 'runs' / instance / 'out_jobs.csv'}: output files of instance {instance}: are missing"


def _garbage_record(res):
    instance = _first_instance(res)
    (res / "instances" / f"{instance}.json").write_text("garbage")
    return f"{res / 'instances' / instance}.json: record of instance {instance}: is not JSON"


def _list_record(res):
    instance = _first_instance(res)
    (res / "instances" / f"{instance}.json").write_text("[1, 2]")
    return f"{res / 'instances' / instance}.json: record of instance {instance}: is a JSON list, not an object"


def _cut_results_table(res):
    (res / "results.parquet").unlink(missing_ok=True)
    table = res / "results.csv"
    table.write_bytes(table.read_bytes()[:-40])  # in the middle of the last row
    return f"{table}: line 4: ends in the middle of a line"


def _cut_results_table_in_its_first_row(res):
    (res / "results.parquet").unlink(missing_ok=True)
    table = res / "results.csv"
    first_row_end = table.read_bytes().index(b"\n", table.read_bytes().index(b"\n") + 1)
    table.write_bytes(table.read_bytes()[:first_row_end - 30])
    return f"{table}: line 2: ends in the middle of a line"


def _table_cell(res, column, value):
    import pandas as pd

    (res / "results.parquet").unlink(missing_ok=True)
    table = pd.read_csv(res / "results.csv", keep_default_na=False)
    table[column] = table[column].astype(object)
    table.loc[1, column] = value
    table.to_csv(res / "results.csv", index=False)
    return f"{res / 'results.csv'}: data row 2, column {column}: "


def _infinite_makespan(res):
    return _table_cell(res, "makespan", "inf")


def _junk_status(res):
    return _table_cell(res, "status", "okay")


@pytest.mark.parametrize("damage", [_remove_run_folder, _remove_records, _remove_jobs_file, _garbage_record,
                                    _list_record, _cut_results_table, _cut_results_table_in_its_first_row,
                                    _infinite_makespan, _junk_status],
                         ids=lambda damage: damage.__name__.lstrip("_"))
def test_campaign_report_html_refuses_a_damaged_campaign_folder(campaign_copy, tmp_path, damage):
    needle = damage(campaign_copy)
    plots = tmp_path / "plots"
    result = _campaign_report(str(campaign_copy), "-o", str(plots), "--html")
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, needle)
    assert not list(plots.rglob("*.html"))  # stopped before any page
