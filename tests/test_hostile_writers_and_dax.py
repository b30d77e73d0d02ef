"""Issue 46's last hostile-input cases: DAX numbers read as ASCII only, `campaign report` on a
damaged results table (a clean exit 2), and writers refusing a FIFO, a device or a folder at
their output path before opening it (never blocking on a FIFO, never renaming over it).

No test opens a FIFO: a writer that opened one for writing would block, so every command here
runs in a subprocess bounded by a timeout, and the FIFO is checked to be still a FIFO after."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import joulesim
from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.dax_workflow import load_workflow

TIMEOUT = 60


def joulesim_command(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd)


# --- DAX numbers ------------------------------------------------------------------------------

def _dax(tmp_path, runtime: str = "2", num_procs: str | None = None) -> str:
    procs = "" if num_procs is None else f' num_procs="{num_procs}"'
    path = tmp_path / "w.dax"
    path.write_text(f'<adag><job id="a" runtime="3"/><job id="b" runtime="{runtime}"{procs}/>'
                    '<child ref="b"><parent ref="a"/></child></adag>', encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("runtime", ["١", "１", "1_0", "nan", "inf", "1e400", "0x10", "", " "])
def test_a_dax_runtime_that_is_not_an_ascii_number_is_refused(tmp_path, runtime):
    """job-models:2400025 and 2400316: float("١") is 1.0, so an Arabic-Indic digit was a runtime."""
    path = _dax(tmp_path, runtime)
    with pytest.raises(InputError, match=r"<job id='b'>, runtime: invalid value") as raised:
        load_workflow(path, "wf0")
    assert raised.value.path == path
    assert "without quotes" not in str(raised.value)  # a JSON hint, meaningless for an XML attribute


def test_the_1e400_runtime_message_speaks_of_the_number_not_of_quotes(tmp_path):
    with pytest.raises(InputError) as raised:
        load_workflow(_dax(tmp_path, "1e400"), "wf0")
    message = str(raised.value)
    assert "'1e400': it is beyond the largest number a double holds" in message, message
    assert "a string" not in message and "quotes" not in message, message


@pytest.mark.parametrize("num_procs", ["2.5", "x", "١", "1e400", "99999999999999999999", "", "2 cores"])
def test_a_dax_num_procs_that_is_not_an_ascii_integer_is_refused(tmp_path, num_procs):
    """Batsim's strtol reads "2.5" as 2 and junk as 0 (then 1); joulesim used to read "2.5" as 1.
    Both are accidents: a fractional or junk processor count is refused."""
    with pytest.raises(InputError, match=r"<job id='b'>, num_procs: invalid value") as raised:
        load_workflow(_dax(tmp_path, num_procs=num_procs), "wf0")
    assert "integer" in str(raised.value)


@pytest.mark.parametrize("num_procs, expected", [(None, 1), ("3", 3), (" 4 ", 4), ("+2", 2), ("0", 1), ("-1", 1)])
def test_a_dax_num_procs_as_batsim_reads_it(tmp_path, num_procs, expected):
    assert load_workflow(_dax(tmp_path, "2.5e0", num_procs), "wf0").tasks["b"].num_procs == expected
    assert load_workflow(_dax(tmp_path, "2.5e0", num_procs), "wf0").tasks["b"].runtime == 2.5


def test_a_bad_dax_number_on_the_command_line_exits_2(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
    done = joulesim_command("run", "--in-process", "-p", "small4", "-d", "fcfs", "-w", str(workload),
                            "-W", _dax(tmp_path, "١"), "-e", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert "w.dax: <job id='b'>, runtime: invalid value '١'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out_jobs.csv").exists()


# --- campaign report on a damaged results table ----------------------------------------------

STUDY = """\
[campaign]
name = "damaged"
outputs = true
[[platforms]]
path = "small4"
[[workloads]]
path = "tiny"
[[deciders]]
decider = "fcfs"
[[deciders]]
decider = "easy"
"""


@pytest.fixture(scope="module")
def campaign_folder(tmp_path_factory):
    from joulesim.campaign.runner import run_campaign

    pytest.importorskip("matplotlib")
    base = tmp_path_factory.mktemp("campaign")
    (base / "study.toml").write_text(STUDY)
    run_campaign(str(base / "study.toml"), str(base / "campaign"), workers=1, progress=False)
    return base / "campaign"


def _damaged_copy(campaign_folder, tmp_path, old: str, new: str):
    import shutil

    campaign = tmp_path / "campaign"
    shutil.copytree(campaign_folder, campaign)
    (campaign / "results.parquet").unlink(missing_ok=True)
    results = campaign / "results.csv"
    header, rest = results.read_text().split("\n", 1)
    assert old in header.split(",")
    results.write_text(",".join(new if name == old else name for name in header.split(",")) + "\n" + rest)
    return campaign


@pytest.mark.parametrize("html", [True, False])
def test_campaign_report_on_a_table_without_its_decider_column_exits_2(campaign_folder, tmp_path, html):
    """reports:2500197: a mangled 'decider' header ended in KeyError: 'decider' (after the pages)."""
    campaign = _damaged_copy(campaign_folder, tmp_path, "decider", "de")
    done = joulesim_command("campaign", "report", str(campaign), *(["--html"] if html else []), "-o",
                            str(tmp_path / "plots"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr
    assert f"{campaign / 'results.csv'}: header: has no column 'decider'" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "plots" / "index.html").exists()  # checked before any page is written


def test_campaign_report_on_a_table_without_the_default_tradeoffs_metric_exits_2(campaign_folder, tmp_path):
    """reports:2500143: one clean line, but exit status 1."""
    campaign = _damaged_copy(campaign_folder, tmp_path, "mean_waiting_time", "mean>_waiting_time")
    done = joulesim_command("campaign", "report", str(campaign), "--html", "-o", str(tmp_path / "plots"))
    assert done.returncode == 2, done.stderr
    assert f"{campaign / 'results.csv'}: header: has no column 'mean_waiting_time'" in done.stderr, done.stderr
    assert "default trade-off" in done.stderr and "--tradeoff" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_campaign_report_still_draws_an_intact_table(campaign_folder, tmp_path):
    done = joulesim_command("campaign", "report", str(campaign_folder), "--html", "-o", str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plots" / "index.html").is_file()
    assert any(name.startswith("tradeoff_") for name in os.listdir(tmp_path / "plots"))


# --- writers: a FIFO, a device or a folder at the output path ----------------------------------
# Each case runs the writer in its own process group, killed at HANG_S (a hang fails the test);
# the test itself never opens the FIFO.

HANG_S = 60
KINDS = ["fifo", "link_to_dev_null", "folder"]


def _make(kind: str, path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link_to_dev_null":
        os.symlink(os.devnull, path)
    else:
        os.mkdir(path)


def _still(kind: str, path) -> None:
    """What was made at `path` is still there, as it was, with nothing left beside it."""
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(path).st_mode), f"{path} is no longer a FIFO"
    elif kind == "link_to_dev_null":
        assert os.path.islink(path) and os.readlink(path) == os.devnull, f"{path} is no longer a link to /dev/null"
    else:
        assert os.path.isdir(path) and os.listdir(path) == [], f"{path} is no longer an empty folder"
    folder = os.path.dirname(os.path.abspath(path))
    assert not [name for name in os.listdir(folder) if name.endswith(".tmp")], os.listdir(folder)


def bounded(command: list[str], cwd=None) -> subprocess.CompletedProcess:
    """Run `command`; a process still running after HANG_S is a hang: its group is killed."""
    import signal

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = process.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"{' '.join(command)} hung (still running after {HANG_S} s)")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def joulesim_bounded(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return bounded([sys.executable, "-m", "joulesim.cli.main", *args], cwd=cwd)


def _refused(done: subprocess.CompletedProcess, *needles: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("joulesim: error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


_KIND_WORDS = {"fifo": "a FIFO (named pipe)", "link_to_dev_null": "a character device (through a symbolic link)",
               "folder": "folder"}


@pytest.mark.parametrize("name", ["jobs.csv", "schedule.trace", "consumed_energy.csv"])
@pytest.mark.parametrize("kind", KINDS)
def test_run_export_prefix_refuses_a_special_output_file(tmp_path, kind, name):
    """-e PREFIX: a run removes every PREFIX_* output name (those it does not write too) and
    writes new files: a FIFO or a link to a device there was removed and replaced."""
    target = tmp_path / f"out_{name}"
    _make(kind, target)
    done = joulesim_bounded("run", "--in-process", "-p", "small4", "-w", "tiny", "-d", "easy", "-e", str(tmp_path / "out"))
    words = "is a directory" if kind == "folder" else _KIND_WORDS[kind]
    _refused(done, f"{tmp_path / 'out'}: export prefix: cannot write outputs there: {target}", words)
    _still(kind, target)
    assert not (tmp_path / "out_jobs.csv").exists() or name == "jobs.csv"


@pytest.mark.parametrize("kind", ["fifo", "link_to_dev_null"])
def test_start_output_files_refuses_a_special_output_file_made_after_the_check(tmp_path, kind):
    from joulesim.simulator.output.output_files import check_output_prefix, start_output_files

    prefix = str(tmp_path / "out")
    check_output_prefix(prefix)
    _make(kind, tmp_path / "out_schedule.csv")  # (between the check and the start of the run)
    with pytest.raises(InputError, match="cannot write outputs there: .*out_schedule.csv is a"):
        start_output_files(prefix)
    _still(kind, tmp_path / "out_schedule.csv")


@pytest.mark.parametrize("kind", KINDS)
def test_slurm_refuses_a_special_jobs_output_before_slurm_is_asked(tmp_path, kind):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 1, "jobs": [], "profiles": {}}')
    target = tmp_path / "out_slurm_jobs.csv"
    _make(kind, target)
    done = joulesim_bounded("slurm", "-w", str(workload), "--slurm-conf", str(tmp_path / "absent.conf"),
                            "-e", str(tmp_path / "out"), "--no-progress")
    _refused(done, f"{target}: Slurm jobs output", _KIND_WORDS[kind])  # not the missing slurm.conf
    _still(kind, target)


@pytest.mark.parametrize("kind", KINDS)
def test_workload_generate_refuses_a_special_output(tmp_path, kind):
    target = tmp_path / "w.json"
    _make(kind, target)
    done = joulesim_bounded("workload", "generate", "lublin", "--jobs", "10", "-o", str(target))
    _refused(done, f"{target}: workload output (-o): is", _KIND_WORDS[kind])
    _still(kind, target)


def test_workload_generate_still_writes_a_regular_file_and_standard_output(tmp_path):
    target = tmp_path / "w.json"
    target.write_text("old")
    assert joulesim_bounded("workload", "generate", "lublin", "--jobs", "10", "-o", str(target)).returncode == 0
    assert '"nb_res"' in target.read_text()
    done = joulesim_bounded("workload", "generate", "lublin", "--jobs", "10", "-o", "-")
    assert done.returncode == 0 and done.stdout == target.read_text()


SWF = "; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n2 5 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n"


@pytest.mark.parametrize("option", ["-o", "--report-json"])
@pytest.mark.parametrize("kind", ["fifo", "link_to_dev_null"])  # (a folder: click's dir_okay=False refuses it)
def test_workload_from_swf_refuses_a_special_output(tmp_path, kind, option):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    target = tmp_path / "target"
    _make(kind, target)
    paths = {"-o": str(tmp_path / "w.json"), "--report-json": str(tmp_path / "report.json"), option: str(target)}
    done = joulesim_bounded("workload", "from-swf", str(trace), *[x for pair in paths.items() for x in pair])
    what = "output file" if option == "-o" else "report file"
    _refused(done, f"{target}: {what}: is", _KIND_WORDS[kind])
    _still(kind, target)
    assert not (tmp_path / "w.json").exists()  # refused before the conversion


def test_swf_write_workload_refuses_a_fifo(tmp_path):
    from joulesim.workload_tools.swf import write_workload

    os.mkfifo(tmp_path / "w.json")
    code = ("import sys\nfrom joulesim.workload_tools.swf import write_workload\n"
            "from joulesim.inputs.input_error import InputError\ntry:\n"
            "    write_workload({'nb_res': 1, 'jobs': [], 'profiles': {}}, sys.argv[1])\n"
            "except InputError as exc:\n    print(exc)\n    sys.exit(2)\n")
    done = bounded([sys.executable, "-c", code, str(tmp_path / "w.json")])  # (a writer opening it would block)
    assert done.returncode == 2 and "w.json: output file: is a FIFO" in done.stdout, (done.stdout, done.stderr)
    _still("fifo", tmp_path / "w.json")
    write_workload({"nb_res": 1, "jobs": [], "profiles": {}}, str(tmp_path / "new.json"))
    assert json_of(tmp_path / "new.json") == {"nb_res": 1, "jobs": [], "profiles": {}}


def json_of(path):
    import json

    return json.loads(path.read_text())


# rl train: training.csv, training.png, model.pt and the checkpoints of the -o folder.

@pytest.fixture
def rl_config(tmp_path):
    pytest.importorskip("torch", reason="the rl extra is not installed")
    pytest.importorskip("gymnasium", reason="the rl extra is not installed")
    sys.path.insert(0, os.path.dirname(__file__))
    from test_rl_training import tiny_config

    from joulesim.rl.training_config import config_from_dict

    platform = {"platform": {"p": {"id": "p", "model_name": "modelV1", "clusters": [
        {"id": "c0", "nodes": [{"type": "n", "number": 2}]}]}},
        "node": {"n": {"id": "n", "processors": [{"type": "pr", "number": 1}]}},
        "processor": {"pr": {"cores": 4, "clock_rate": 1.0, "dpflops_per_cycle": 1, "dynamic_power": 10.0,
                             "static_power": 10.0, "min_power": 0.5, "b": -1.85e-05, "c": 21000, "da": 1.0,
                             "db": 100, "dc": 25000, "dd": 10}}}
    workload = {"profiles": {"A": {"req_ops": 10_000_000_000, "ipc": 1, "req_time": 10, "mem": 0, "mem_vol": 0}},
                "jobs": [{"id": "J0", "subtime": 0, "res": 4, "profile": "A"},
                         {"id": "J1", "subtime": 30, "res": 4, "profile": "A"}]}
    import json

    (tmp_path / "platform.json").write_text(json.dumps(platform))
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    return config_from_dict(tiny_config(str(tmp_path / "platform.json"), str(tmp_path / "workload.json"),
                                        simulations=2, checkpoint_every=1), "tiny", "/")


@pytest.mark.parametrize("name", ["training.csv", "training.png", "model.pt", "checkpoints/simulation_0001.pt"])
@pytest.mark.parametrize("kind", KINDS)
def test_rl_train_refuses_a_special_output_before_training(tmp_path, rl_config, monkeypatch, kind, name):
    from joulesim.rl.training import train

    def refuse(*args, **kwargs):
        raise AssertionError("the training started")

    monkeypatch.setattr("joulesim.rl.ppo.PPOAgent.__init__", refuse)
    out = tmp_path / "out"
    (out / "checkpoints").mkdir(parents=True)
    _make(kind, out / name)
    with pytest.raises(InputError, match=rf"{out}: output folder: {out / name} is .*not a regular file"):
        train(rl_config, out, progress=False)
    _still(kind, out / name)


def test_rl_training_plot_refuses_a_fifo_without_opening_it(tmp_path):
    pytest.importorskip("matplotlib")
    os.mkfifo(tmp_path / "training.png")
    code = ("import sys\nfrom joulesim.rl.training import plot_training\nfrom joulesim.inputs.input_error import InputError\n"
            "rows = [{'simulation': 1, 'reward': 1.0, 'policy_loss': 0.1, 'value_loss': 0.2}]\n"
            "try:\n    plot_training(rows, sys.argv[1], 'energy')\nexcept InputError as exc:\n    print(exc)\n"
            "    sys.exit(2)\n")
    done = bounded([sys.executable, "-c", code, str(tmp_path / "training.png")])
    assert done.returncode == 2 and "training plot: is a FIFO" in done.stdout, (done.stdout, done.stderr)
    _still("fifo", tmp_path / "training.png")


# campaign workers: an external decider's log, RESULTS/logs/ID.log.

@pytest.mark.parametrize("kind", KINDS)
def test_a_campaign_instance_refuses_a_special_decider_log(tmp_path, kind):
    """The instance fails with one line naming the log (a campaign's instance never raises:
    status failed, the campaign goes on); the worker never blocks on a FIFO there."""
    log = tmp_path / "logs" / "i1.log"
    log.parent.mkdir()
    _make(kind, log)
    code = ("import json, sys\nfrom joulesim.campaign.instance_worker import run_instance\n"
            "task = {'id': 'i1', 'platform': 'small4', 'mmax': None, 'workload': 'tiny', 'decider': 'easy',\n"
            "        'command': [sys.executable, '-m', 'joulesim.cli.main', 'decide', 'easy', '-s', '{endpoint}'],\n"
            "        'edc_library': None, 'edc_isolated': False, 'options': {}, 'energy': False, 'timeout': 30,\n"
            "        'reply_timeout': 10, 'export': None, 'log_path': sys.argv[1], 'window': None}\n"
            "record = run_instance(task)\nprint(json.dumps([record['status'], record['error']]))\n")
    done = bounded([sys.executable, "-c", code, str(log)])
    assert done.returncode == 0, done.stderr
    import json

    status, error = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == "failed" and error.startswith(f"{log}: decider log: is "), error
    assert _KIND_WORDS[kind] in error and "\n" not in error
    _still(kind, log)
