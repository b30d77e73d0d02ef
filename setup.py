"""The build's one step beyond pyproject.toml: the modules in `COMPILED` compiled to C with mypyc.

mypyc turns the same Python source into a C extension (its arithmetic on floats is the same IEEE
double arithmetic in the same order, so a compiled run writes the same files). The replicated
SimGrid kernel is most of what Batsim's event grouping costs (BENCHMARKS.md, issue 45), and
compiled it runs in fewer instructions; so do the numbers of every message as Batsim 4 prints
them (batsim_number_format), Batsim's actors (batsim_actors), four modules of functions that
every job goes through (the interval sets of its allocation, the checks of the decider's
messages, the reading of the workload and of its storages' labels), the queue policies'
waiting queue and free machines (a decider's state, which a checkpoint does not hold: a resumed
run replays the decider), the kernel's array of sleeps on wide platforms (sleep_array: made
without arguments, a checkpoint remakes it as it remakes the kernel's classes), and the decider
library's base classes with EASY (protocol/decider.py, deciders/common/queue_policy.py,
deciders/batch/easy.py: every decider extends them, so they are compiled as classes that Python
classes may extend; a decider is not part of a checkpoint, a resumed run replays it, and a fork
copies it by pickle, whose state Decider.__getstate__ makes whole), and the outputs written at
each job's start and end (jobs_output, job_statistics, machine_states, schedule_trace: made
without arguments they write nothing, so that a checkpoint remakes them as the kernel's classes),
and the simulator's end of the link to the decider (decider_link: a resuming run gives its own;
with its in-process transport, transport_inprocess), and the range of simulated times that every
message's times are checked against (time_range).

Compiled actors are generators without the frames a checkpoint reads: a run that writes
checkpoints runs the same source interpreted (simulator/engine/resumable_batsim_actors.py).
Other modules whose classes a checkpoint holds stay in Python: a class compiled by mypyc runs
its `__init__` when made, and its methods are not functions a checkpoint can name
(simulator/checkpoint/state_codec.py); the kernel's classes and the outputs' are made for that
(no argument required, no method held as a value).

A compiled function checks its arguments against their annotations when called (a TypeError
where Python would have run on): code that calls one must pass what the annotations say. mypy
finds a mismatch at its call site (`mypy --check-untyped-defs` over the package: its errors that
name a compiled module's function), and so does the suite on a built install, as CI runs it.

The source stays the reference and is installed beside the extension (Python imports the
extension when both are there):

- a build without a C compiler (or with JOULESIM_PURE_PYTHON=1) installs the Python modules
  only, with a warning: the same results, slower;
- an editable install (`pip install -e .`) keeps the Python source, so that an edit takes
  effect (an extension built in place would shadow it); JOULESIM_COMPILE=1 compiles there too.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
#: The compiled modules, as the package maps them (pyproject.toml's package-dir: joulesim.simulator
#: is simulator/): their files, and the files their types come from.
COMPILED = {"joulesim.simulator.engine.simgrid_kernel": "simulator/engine/simgrid_kernel.py",
            "joulesim.protocol.batsim_number_format": "protocol/batsim_number_format.py",
            "joulesim.protocol.interval_set": "protocol/interval_set.py",
            "joulesim.protocol.validation": "protocol/validation.py",
            "joulesim.simulator.workload.workload_loader": "simulator/workload/workload_loader.py",
            "joulesim.simulator.workload.storage_labels": "simulator/workload/storage_labels.py",
            "joulesim.simulator.engine.batsim_actors": "simulator/engine/batsim_actors.py",
            "joulesim.deciders.common.free_runs": "deciders/common/free_runs.py",
            "joulesim.deciders.common.waiting_queue": "deciders/common/waiting_queue.py",
            "joulesim.simulator.engine.sleep_array": "simulator/engine/sleep_array.py",
            "joulesim.protocol.decider": "protocol/decider.py",
            "joulesim.deciders.common.queue_policy": "deciders/common/queue_policy.py",
            "joulesim.deciders.batch.easy": "deciders/batch/easy.py",
            "joulesim.simulator.output.jobs_output": "simulator/output/jobs_output.py",
            "joulesim.simulator.output.job_statistics": "simulator/output/job_statistics.py",
            "joulesim.simulator.output.machine_states": "simulator/output/machine_states.py",
            "joulesim.simulator.output.schedule_trace": "simulator/output/schedule_trace.py",
            "joulesim.simulator.engine.decider_link": "simulator/engine/decider_link.py",
            "joulesim.protocol.time_range": "protocol/time_range.py",
            "joulesim.protocol.transport_inprocess": "protocol/transport_inprocess.py"}
TYPES_FROM = {"joulesim.simulator.engine.kernel_extensions": "simulator/engine/kernel_extensions.py"}
STAGE = HERE / "build" / "mypyc-source"  # the modules under their installed names, for mypy


def _warn(message: str) -> None:
    print(f"joulesim: {message}", file=sys.stderr)


def _fall_back(reason: str) -> None:
    """Say why the modules of COMPILED are installed as their Python source."""
    _warn(f"{reason}: the modules setup.py compiles stay in Python (the same results, slower)")


def _staged_paths() -> list[str]:
    """Copy the compiled modules (and those their types come from) under their installed names,
    with the packages' __init__.py: mypyc names an extension after its module's path."""
    shutil.rmtree(STAGE, ignore_errors=True)
    for module, source in {**COMPILED, **TYPES_FROM}.items():
        target = STAGE.joinpath(*module.split(".")).with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / source, target)
        for package in target.relative_to(STAGE).parents:
            if package != Path("."):
                (STAGE / package / "__init__.py").touch()
    return [str(STAGE.joinpath(*module.split(".")).with_suffix(".py")) for module in COMPILED]


def compiled_extensions() -> list:
    if os.environ.get("JOULESIM_PURE_PYTHON"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # (a build without isolation, in an environment without mypy)
        _fall_back("mypy is not installed")
        return []
    config = STAGE.parent / "mypyc.ini"
    paths = _staged_paths()
    config.write_text("[mypy]\nignore_missing_imports = True\nfollow_imports = silent\n")
    cwd = os.getcwd()
    os.chdir(STAGE)  # (mypy finds the staged packages from here)
    try:
        extensions = mypycify(["--config-file", str(config), *[os.path.relpath(p, STAGE) for p in paths]],
                              opt_level="3", debug_level="0", target_dir=str(STAGE.parent / "mypyc-c"),
                              group_name="joulesim_compiled")  # (their shared library: joulesim_compiled__mypyc)
    except (Exception, SystemExit) as error:  # (mypy found a type error, say: mypyc exits)
        _fall_back(f"mypyc cannot compile them ({error!r})")
        return []
    finally:
        os.chdir(cwd)
    for extension in extensions:
        extension.sources = [source if os.path.isabs(source) else os.path.join(STAGE, source)
                             for source in extension.sources]
        extension.include_dirs = [d if os.path.isabs(d) else os.path.join(STAGE, d) for d in extension.include_dirs]
        extension.optional = True  # (no compiler: build_ext warns and the Python modules serve)
    return extensions


def remove_stale_extensions(build_lib: Path, built: list[Path]) -> list[Path]:
    """Remove from `build_lib` the extensions that this build did not make, and return them.

    pip builds a local checkout in its build/ folder, which stays between builds: the extension
    of a module compiled by an earlier build and no longer (not in COMPILED now, or its build
    failed) would be installed beside its source, and Python would import the old compiled code
    instead of the source."""
    current = {path.resolve() for path in built}
    stale = [path for path in build_lib.rglob("*" + sysconfig.get_config_var("EXT_SUFFIX"))
             if path.resolve() not in current]
    for path in stale:
        path.unlink()
    return stale


class OptionalBuildExt(build_ext):
    """Extensions that a build may go without: in an editable install unless JOULESIM_COMPILE is
    set, and wherever the compiler fails (the Python modules are installed either way)."""

    def run(self) -> None:
        if getattr(self, "editable_mode", False) and not os.environ.get("JOULESIM_COMPILE"):
            _fall_back("editable install (JOULESIM_COMPILE=1 compiles them)")
            return
        try:
            super().run()
        except Exception as error:  # (e.g. no compiler at all: the Python modules are installed)
            _fall_back(f"the build failed ({error})")
        # The compiled modules load their group's library: all of them or none (a module without
        # it would fail to import, where its Python source would have served).
        built = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
        if not all(path.exists() for path in built):
            for path in built:
                path.unlink(missing_ok=True)
        if not self.inplace:
            remove_stale_extensions(Path(self.build_lib), built)

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            _warn(f"{ext.name} stays in Python (the same results, slower): {error}")


if __name__ == "__main__":  # (as the build runs it; tests import the functions above)
    setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": OptionalBuildExt})
