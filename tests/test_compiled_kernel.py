"""The simulation kernel compiled by mypyc where joulesim is installed with a C compiler (setup.py).

The rest of the suite runs on whichever kernel the installation has: compiled in an install made
with a compiler (the README's commands, CI), Python in an editable install or one made without a
compiler. This file checks which one that is, so that a build that silently fell back to Python
(mypy missing, a compiler error) fails here instead of passing every test more slowly.
"""

from __future__ import annotations

import importlib
import shutil
import sysconfig
from pathlib import Path

import pytest

import joulesim
from joulesim.simulator.engine import simgrid_kernel

REPOSITORY = Path(__file__).resolve().parent.parent


def _installed_from_a_wheel() -> bool:
    """Whether joulesim is a built install (site-packages), not an editable one (the checkout)."""
    return Path(joulesim.__file__).resolve().is_relative_to(Path(sysconfig.get_paths()["purelib"]).resolve())


def _skip_unless_built_with_a_compiler() -> None:
    if not _installed_from_a_wheel():
        pytest.skip("an editable install keeps the compiled modules in Python (setup.py; JOULESIM_COMPILE=1 "
                    "compiles them)")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the install keeps the compiled modules in Python")


@pytest.fixture
def setup_py(monkeypatch):
    """The checkout's setup.py as a module (its setup() runs only as a script, as the build runs it)."""
    monkeypatch.syspath_prepend(str(REPOSITORY))
    return importlib.import_module("setup")


def test_a_built_install_with_a_c_compiler_runs_the_compiled_kernel():
    _skip_unless_built_with_a_compiler()
    assert Path(simgrid_kernel.__file__).suffix == ".so", (
        f"joulesim was installed from a build with a C compiler at hand, yet its kernel is {simgrid_kernel.__file__}: "
        "the build fell back to Python (pip install -v shows setup.py's warning)")


def test_a_built_install_with_a_c_compiler_runs_every_module_setup_compiles(setup_py):
    _skip_unless_built_with_a_compiler()
    assert len(setup_py.COMPILED) >= 6
    python_ones = [module for module in setup_py.COMPILED
                   if Path(importlib.import_module(module).__file__).suffix != ".so"]
    assert python_ones == [], f"{python_ones} stayed in Python in a build with a C compiler"


def test_the_kernel_s_classes_can_be_made_without_arguments_for_checkpoints():
    """A checkpoint remakes the kernel's objects empty and then sets their attributes; a class
    compiled by mypyc runs its __init__ then, so none may require an argument."""
    for name in ("Kernel", "Actor", "Sleep", "Transfer", "Route", "Comm", "Mailbox"):
        cls = getattr(simgrid_kernel, name)
        made = cls.__new__(cls)
        assert type(made) is cls


def test_the_outputs_classes_can_be_made_without_arguments_for_checkpoints(tmp_path):
    """The same for the outputs that setup.py compiles, which a checkpoint holds too: made so,
    they write nothing (the resumed run's files are the interrupted run's)."""
    from joulesim.simulator.output.job_statistics import JobStatistics
    from joulesim.simulator.output.jobs_output import JobsOutput
    from joulesim.simulator.output.machine_states import MachineStates
    from joulesim.simulator.output.schedule_trace import ScheduleTrace

    for cls in (JobsOutput, JobStatistics, MachineStates, ScheduleTrace):
        made = cls.__new__(cls)
        assert type(made) is cls
    path = tmp_path / "jobs.csv"
    with open(path, "w") as out:
        JobsOutput(out, False)
    assert path.read_text().startswith("job_id,")


def test_setup_stages_the_compiled_modules_under_their_installed_names(tmp_path, monkeypatch, setup_py):
    """setup.py copies each compiled module (and those its types come from) to the path of its
    installed name, with its packages' __init__.py: mypyc names an extension after that path."""
    monkeypatch.setattr(setup_py, "STAGE", tmp_path / "stage")
    paths = setup_py._staged_paths()
    for module, source in setup_py.COMPILED.items():
        staged = tmp_path / "stage" / Path(*module.split(".")).with_suffix(".py")
        assert str(staged) in paths and staged.read_bytes() == (REPOSITORY / source).read_bytes()
        for package in staged.relative_to(tmp_path / "stage").parents:
            if package != Path("."):
                assert (tmp_path / "stage" / package / "__init__.py").exists()


def test_a_build_removes_the_extensions_an_earlier_build_left_in_its_folder(tmp_path, setup_py):
    """pip builds a checkout in its build/ folder, which stays: an extension that this build did
    not make (its module no longer compiled) would be installed and shadow the module's source."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    package = tmp_path / "joulesim" / "protocol"
    package.mkdir(parents=True)
    kept, stale = package / f"interval_set{suffix}", package / f"validation{suffix}"
    other = tmp_path / "joulesim" / "libeasy_edc.so"  # (not an extension module: not the build's)
    for path in (kept, stale, other):
        path.write_bytes(b"")
    assert setup_py.remove_stale_extensions(tmp_path, [kept]) == [stale]
    assert kept.exists() and other.exists() and not stale.exists()


def test_the_actors_a_checkpoint_reads_are_interpreted_generators_whatever_the_build():
    """A run that writes checkpoints takes Batsim's actors from resumable_batsim_actors, which
    runs batsim_actors.py's source interpreted: its actors are generators with frames, which a
    checkpoint reads (resumable_actors.describe), also where batsim_actors itself is compiled."""
    import inspect

    from joulesim.simulator.engine import batsim_actors, resumable_batsim_actors

    interpreted = resumable_batsim_actors.BatsimActors
    assert interpreted.__module__ == "joulesim.simulator.engine.resumable_batsim_actors"
    assert inspect.isgeneratorfunction(interpreted._serve_from) and inspect.isgeneratorfunction(interpreted._timed)
    assert resumable_batsim_actors.SOURCE.name == "batsim_actors.py" and resumable_batsim_actors.SOURCE.is_file()
    assert resumable_batsim_actors.SERVER == batsim_actors.SERVER
