"""A run's output files under its export prefix: their names, the check of the prefix before a
run starts, and the removal of an older run's files when it does.

The rule: the files under one prefix always come from one run. A run checks its inputs, its
decider and its output prefix first, and a run refused there touches nothing (an older run's
results stay as they were). Once it starts writing, it first removes every output name a run
may write under the prefix (also those it will not write itself, e.g. the energy files of an
older run with -E), then opens its own; each file gets its header at once, so a run killed in
its first second leaves headed files, never a mix with an older run's.
"""

from __future__ import annotations

import os
import tempfile

from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import non_regular_kind

#: Every output a run may write, in the order they are opened and listed (the checkpoint last:
#: `joulesim run --checkpoint-at`, api/run_checkpoint.py).
ALL_OUTPUT_NAMES = ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes", "energy_cost",
                    "energy_cost_trace", "schedule_trace", "checkpoint")
# The outputs whose file is not PREFIX_<name>.csv.
_FILE_NAMES = {"schedule_trace": "schedule.trace", "checkpoint": "checkpoint.jsck"}  # Batsim's Pajé trace; ours

_FIX = "choose an export prefix in a directory you can write to"


def output_names(energy: bool = False, cost: bool = False, machine_states: bool = True,
                 schedule_trace: bool = True) -> list[str]:
    """The outputs a run writes; without `machine_states`, Batsim's --disable-machine-state-tracing;
    without `schedule_trace`, its --disable-schedule-tracing."""
    names = ["jobs", "schedule"] + (["machine_states"] if machine_states else [])
    if energy:
        names += ["consumed_energy", "pstate_changes"]
        if cost:  # a platform with prices (simulator/energy/energy_cost.py)
            names += ["energy_cost", "energy_cost_trace"]
    if schedule_trace:
        names.append("schedule_trace")
    return names


def output_paths(prefix: str | None, energy: bool = False, cost: bool = False,
                 machine_states: bool = True, schedule_trace: bool = True) -> dict[str, str]:
    """Output name -> file path; empty when outputs stay in memory (no prefix: no Pajé trace
    either, it exists only as a file)."""
    if prefix is None:
        return {}
    return {name: output_path(prefix, name)
            for name in output_names(energy, cost, machine_states, schedule_trace)}


class DiscardedOutput:
    """Where an output that is not kept goes (--disable-machine-state-tracing): written, not stored."""

    def write(self, text: str) -> int:
        return len(text)

    def close(self) -> None:
        pass


def output_path(prefix: str, name: str) -> str:
    return f"{prefix}_{_FILE_NAMES.get(name, name + '.csv')}"


def check_output_prefix(prefix: str) -> None:
    """Refuse, before anything runs, a prefix whose files could not be written: its directory
    (or the nearest existing one above it, where it would be created) must be a directory in
    which a file can be created, and no output name may be a directory, a FIFO, a device or a
    socket (refuse_special_outputs). Changes nothing."""
    directory = os.path.dirname(os.path.abspath(prefix))
    existing = directory
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise InputError(prefix, "export prefix", f"cannot write outputs there: {existing} is not a directory",
                         _FIX)
    try:  # the only sure test: permissions, read-only file systems, /proc, ...
        handle, probe = tempfile.mkstemp(prefix=".joulesim-write-check-", dir=existing)
    except OSError as exc:
        raise InputError(prefix, "export prefix",
                         f"cannot write outputs there: cannot create a file in {existing} "
                         f"({exc.strerror or exc})", _FIX) from None
    os.close(handle)
    os.unlink(probe)
    refuse_special_outputs(prefix)


def refuse_special_outputs(prefix: str) -> None:
    """Refuse a prefix where an output name (any run's, see start_output_files) is an existing
    folder, FIFO, device or socket, or a symbolic link to one: a run would remove it and write a
    regular file in its place (or, opening a FIFO, wait for a reader for ever). Opens nothing."""
    for name in ALL_OUTPUT_NAMES:
        path = output_path(prefix, name)
        kind = non_regular_kind(path)
        if kind is None:
            continue
        if kind == "a folder":
            raise InputError(prefix, "export prefix", f"cannot write outputs there: {path} is a directory", _FIX)
        raise InputError(prefix, "export prefix", f"cannot write outputs there: {path} is {kind}, not a regular "
                         "file: a run removes the files under its prefix and writes new ones, which would replace it",
                         "remove it, or choose another export prefix")


def start_output_files(prefix: str) -> None:
    """Make the prefix's directory and remove every output an older run left under the prefix
    (see the module docstring); a folder, FIFO or device among them is refused, never removed."""
    refuse_special_outputs(prefix)  # (checked before the run too: check_output_prefix)
    directory = os.path.dirname(prefix)
    try:
        if directory:
            os.makedirs(directory, exist_ok=True)
        for name in ALL_OUTPUT_NAMES:
            try:
                os.remove(output_path(prefix, name))
            except FileNotFoundError:
                pass
    except OSError as exc:
        raise output_error(prefix, exc) from None


def output_error(prefix: str, exc: OSError) -> InputError:
    """An output file or folder that could not be made after all (e.g. removed meanwhile)."""
    where = f" ({exc.filename})" if exc.filename else ""
    return InputError(prefix, "export prefix", f"cannot write outputs there: {exc.strerror or exc}{where}", _FIX)
