"""Run one campaign instance inside a worker (a pool process or a Dask worker).

`run_instance` takes a plain dict (picklable, the same for every executor) and always returns
a record: the metrics when the run succeeded, otherwise its status ("failed" or "timeout"),
the error message and a log. It never raises for a problem of the instance itself, so one
bad instance cannot take the campaign down.
"""

from __future__ import annotations

import os
import stat
import time
import traceback
from typing import IO, Any

from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import non_regular_kind
from joulesim.protocol.errors import JoulesimError, RunTimeLimitError

# Loaded platforms by (source, master host), kept for the worker's life: the instances of a
# campaign share a few platforms, and a large one takes a noticeable time to parse.
_PLATFORMS: dict[str, Any] = {}
_MAX_CACHED_PLATFORMS = 8
# The tail of a log kept in the record (the whole log stays in its file).
_LOG_TAIL_CHARS = 4000


def _platform(source: str) -> Any:
    from joulesim.simulation_inputs import platform_from

    if source not in _PLATFORMS:
        if len(_PLATFORMS) >= _MAX_CACHED_PLATFORMS:
            _PLATFORMS.pop(next(iter(_PLATFORMS)))
        _PLATFORMS[source] = platform_from(source)
    return _PLATFORMS[source]


def _tail(path: str | None) -> str:
    if not path or not os.path.isfile(path):  # (never a FIFO: reading one would wait for a writer)
        return ""
    with open(path, errors="replace") as handle:
        text = handle.read()
    return text[-_LOG_TAIL_CHARS:]


def _open_log(log_path: str) -> IO[str]:
    """The instance's decider log, opened for writing. An existing folder, FIFO, device or socket
    there (or a link to one) is refused with one line naming it, before it is opened: a FIFO
    without a reader would block the worker for ever, a device would take the output. The open
    itself does not block (O_NONBLOCK, then checked again with fstat): a FIFO put there since the
    check fails at once instead of waiting."""
    kind = non_regular_kind(log_path)
    if kind is not None:
        raise InputError(log_path, "decider log", f"is {kind}, not a regular file", _LOG_FIX)
    try:
        if os.path.dirname(log_path):
            os.makedirs(os.path.dirname(log_path), exist_ok=True)
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        raise InputError(log_path, "decider log", f"cannot be written: {exc.strerror or exc}", _LOG_FIX) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(log_path, "decider log", "is not a regular file (it was replaced while being opened)", _LOG_FIX)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "w")


_LOG_FIX = "remove what is there: the campaign writes the instance's decider output to RESULTS/logs/ID.log"


def run_instance(task: dict[str, Any]) -> dict[str, Any]:
    """Simulate one instance; returns its record (see the module docstring)."""
    import joulesim

    started = time.perf_counter()
    record: dict[str, Any] = {"id": task["id"], "status": "ok", "error": None, "log": "", "metrics": None,
                              "decider_calls": None, "platform_source": task["platform"]}
    log_path = task.get("log_path")
    log = None
    try:
        decider: Any = list(task["command"]) if task["command"] else task["decider"]
        if task["command"] and log_path:
            log = _open_log(log_path)
        if task.get("edc_library"):  # a Batsim 5 EDC library, its init data as the option edc_init
            chosen: dict[str, Any] = {"edc_library": task["edc_library"], "edc_isolated": bool(task.get("edc_isolated")),
                                      "edc_init": str(task["options"].get("edc_init", ""))}
        else:
            chosen = {"decider": decider, "options": task["options"], "decider_log": log}
        result = joulesim.simulate(
            _platform(task["platform"]), task["workload"], energy=task["energy"], mmax=task["mmax"],
            export=task.get("export"), timeout=task["reply_timeout"], time_limit=task["timeout"], **chosen)
        record["metrics"] = dict(result.metrics)
        if task.get("window"):
            record["metrics"].update(result.window_metrics(*task["window"]))
        record["decider_calls"] = result.decider_calls
    except RunTimeLimitError as exc:
        record.update(status="timeout", error=str(exc))
    except JoulesimError as exc:
        record.update(status="failed", error=str(exc))
    except Exception as exc:  # a bug in a decider's own code: keep its traceback
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}", log=traceback.format_exc())
    finally:
        if log is not None:
            log.close()
            record["log"] = (record["log"] + _tail(log_path)).strip()
    record["wall_time"] = time.perf_counter() - started
    return record
