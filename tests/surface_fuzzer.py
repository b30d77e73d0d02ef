"""How a fuzzing case of the surfaces added since the hardening issue is run and classified.

Each surface (campaign files, node platforms, RL configs and model files, learn inputs,
prices, decider options, CURVE keys, output paths) has its own module `fuzz_<surface>.py`
whose `run_case(seed, directory)` builds one seeded hostile input and hands it either to the
loader in this process (`in_process`) or to the real `joulesim` command (`through_cli`), which
classify how it ended with the outcomes of reply_fuzzer. Shared by
benchmarks/fuzz_hostile_inputs.py and tests/test_fuzz_end_to_end.py.

- In this process: a JoulesimError is a clean error; any other exception a traceback.
- Through the command: exactly one `joulesim: error:` line (or click's usage error) and the
  documented exit status (docs/reference/reliability.md: 2 for input files and command-line
  values) is a clean error; a Python traceback, another status, or several error lines are
  counted as a traceback (the detail says which).
- Either way, an always-invalid input that ends normally, or a normal end whose outputs break
  the surface's own promise (`check` returns the problem), is accepted-invalid.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import traceback
from typing import Any, Callable

from hostile_mutations import ALWAYS_INVALID
from reply_fuzzer import ACCEPTED_INVALID, CLEAN_ERROR, HANG, SUCCESS, TRACEBACK, CaseResult

from joulesim.protocol.errors import JoulesimError

#: Seconds a command of a case may take; beyond it the case is a hang.
COMMAND_BOUND_S = 45.0
#: Address space of every process a case starts (and of the fuzzing workers): a grid of 10^12
#: instances must end in a MemoryError, not take the machine's memory from everybody else.
MEMORY_LIMIT_BYTES = 6 * 2**30
#: The exit status of bad input files and command-line values (docs/reference/reliability.md).
BAD_INPUT_EXIT = 2


class CaseOvertime(BaseException):
    """Raised by the harness's alarm in an in-process case that ran past its bound (not an
    Exception, so that no loader's `except Exception` can swallow it)."""


def limit_memory() -> None:
    """Cap this process's address space (idempotent; also the preexec of case commands)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > MEMORY_LIMIT_BYTES:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, hard))


#: The case being run in this process: what the harness reports when the case overruns.
current: CaseResult | None = None


def new_result(seed: int, operator: str, label: str, via_cli: bool) -> CaseResult:
    """scenario: 1 through the command, 0 in this process."""
    global current
    current = CaseResult(seed, 1 if via_cli else 0, operator, label, SUCCESS)
    return current


def in_process(result: CaseResult, call: Callable[[], Any], check: Callable[[Any], str | None] | None = None
               ) -> CaseResult:
    """Run `call()` here and classify how it ended (`check(value)`: the problem of a normal
    end's value, or None; an error raised while checking is such a problem: the outputs of an
    accepted input cannot be read back)."""
    try:
        value = call()
    except JoulesimError as exc:
        result.outcome, result.detail = CLEAN_ERROR, f"{type(exc).__name__}: {str(exc)[:300]}"
        return result
    except CaseOvertime:
        raise
    except Exception:  # noqa: BLE001 - what the fuzzer looks for
        result.outcome, result.detail = TRACEBACK, traceback.format_exc()[-1500:]
        return result
    try:
        problem = check(value) if check else None
    except CaseOvertime:
        raise
    except Exception as exc:  # noqa: BLE001 - the outputs of an accepted input are broken
        problem = f"accepted, but its outputs cannot be read back: {type(exc).__name__}: {str(exc)[:300]}"
    return _normal_end(result, problem)


def _normal_end(result: CaseResult, problem: str | None) -> CaseResult:
    if problem:
        result.outcome, result.detail = ACCEPTED_INVALID, problem
    elif result.label == ALWAYS_INVALID:
        result.outcome, result.detail = ACCEPTED_INVALID, "ended normally"
    else:
        result.outcome = SUCCESS
    return result


def joulesim_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "joulesim.cli.main", *args]


def through_cli(result: CaseResult, args: list[str], cwd: str, exits: tuple[int, ...] = (BAD_INPUT_EXIT,),
                check: Callable[[], str | None] | None = None, bound_s: float = COMMAND_BOUND_S) -> CaseResult:
    """Run `joulesim ARGS` in `cwd` and classify how it ended; `exits`: the documented statuses
    of a refusal; `check()`: the outputs' problem after a normal end, or None."""
    args = [a.replace("\x00", "\\x00") for a in args]  # a command line cannot carry NUL
    result.detail = "joulesim " + " ".join(args)
    try:
        proc = subprocess.run(joulesim_command(*args), capture_output=True, text=True, errors="replace", cwd=cwd,
                              timeout=bound_s, stdin=subprocess.DEVNULL, preexec_fn=limit_memory,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        result.outcome = HANG
        result.detail = f"over {bound_s:g} s: {result.detail}"
        return result
    return classify_exit(result, proc.returncode, proc.stderr, exits, check)


def classify_exit(result: CaseResult, status: int, stderr: str, exits: tuple[int, ...],
                  check: Callable[[], str | None] | None = None) -> CaseResult:
    command = result.detail
    errors = [line for line in stderr.splitlines() if line.startswith("joulesim: error:")]
    usage = [line for line in stderr.splitlines() if line.startswith("Error: ")]  # click's usage errors
    if "Traceback (most recent call last)" in stderr:
        result.outcome, result.detail = TRACEBACK, f"{command}\nexit {status}\n{stderr[-1500:]}"
    elif status == 0:
        return _normal_end(result, check() if check else None)
    elif len(errors) + len(usage) != 1:
        result.outcome = TRACEBACK
        result.detail = f"{command}\nexit {status} with {len(errors) + len(usage)} error lines\n{stderr[-1500:]}"
    elif status not in exits and not (usage and status == 2):
        result.outcome = TRACEBACK
        result.detail = (f"{command}\nexit {status}, documented {' or '.join(map(str, exits))}: "
                         f"{(errors or usage)[0][:400]}")
    else:
        result.outcome, result.detail = CLEAN_ERROR, (errors or usage)[0][:400]
    return result


# ------------------------------------------------------------------ hostile values shared by the surfaces
#: Number texts that are never a number in a file or an option: non-ASCII digits, Python-only
#: syntax (float()/int() accept them), non-finite values, junk.
NOT_A_NUMBER = ["١٢", "１２", "²", "১২", "𝟕", "1_0", "1__0", "nan", "NaN", "-nan", "inf", "-inf", "+inf",
                "Infinity", "1e400", "-1e400", "1e309", "", " ", "abc", "0x10", "1,5", "--5", "1e", "12abc",
                "\x00", "1\u00a02"]
#: Number texts that may or may not be accepted (the rules differ per field), never a crash.
ODD_NUMBERS = ["0", "-0", "+1", " 5 ", "1e3", "1E-3", "0.000001", "1e-300", "5e-324", "1.7976931348623157e308",
               "9" * 30, "-1", "0.5", "3", "24", "100000000000"]


def choose_number_junk(rng: random.Random) -> str:
    return rng.choice(NOT_A_NUMBER)


def replace_once(text: str, old: str, new: str) -> str:
    """`text` with the first `old` replaced; the harness's base texts always hold `old`."""
    if old not in text:
        raise AssertionError(f"fuzzer base text lacks {old!r}")
    return text.replace(old, new, 1)
