"""Fuzzing Batsim 5 EDCs: hostile C libraries (a constructor that crashes, init or deinit that
crash, a take_decisions that never returns, aborts or exits, a NULL reply, a truncated ELF, files
that are not libraries at all: empty, junk, /dev/zero, /dev/null, a FIFO, a folder), their
--edc-init strings (non-UTF-8, 100 kB, junk) and --edc-init-file files (non-UTF-8, empty,
/dev/zero, a FIFO, a folder, missing, 5 MB), Batsim 5's spellings (--edc-library-str,
--edc-library-file), --edc-isolated, --no-sched beside an EDC, and process EDCs nobody serves.
Each run must end normally or in one clean error (exit 2 to 6), within its bound.

The libraries are compiled once per worker process (cc, in the campaign's temporary folder).
A crashing or never-returning library must not take the harness with it, so "in this process"
means here: in a fork of this process (the same code, no interpreter start-up) run through
click's CliRunner, killed with its process group at the bound. This module also holds the two
bounded runners the other new surfaces share (fuzz_job_models, fuzz_reports,
fuzz_xml_platforms): `in_fork` and `through_cli_group` (a command in its own session, killed
with its whole process group, its outputs in files so that no grandchild can block the
harness on a pipe). FIFOs are made with os.mkfifo and never opened by the harness.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_text_mutation
from reply_fuzzer import HANG, TRACEBACK
from surface_fuzzer import classify_exit, joulesim_command, new_result

#: Seconds a case of these surfaces may take (a never-returning EDC has --timeout 2).
CASE_BOUND_S = 15.0
#: Address space of a case's process: reading /dev/zero to its end must fail well before the
#: machine's memory is gone.
CASE_MEMORY_BYTES = 3 * 2**30
#: Exit statuses of a refusal here: bad inputs, protocol violations, decisions that cannot be
#: applied, a decider that crashed or fell silent, an exception in a decider (docs/reference/reliability.md).
EDC_EXITS = (2, 3, 4, 5, 6)


# ============================================================================ bounded runners
def limit_case_memory() -> None:
    """At most CASE_MEMORY_BYTES of address space beyond what the process maps already: a case
    runs in a fork of the harness, which in a test worker that ran numba-compiled code maps
    gigabytes; a fixed limit left it no room (threads failed to start, reads of a few MB failed)."""
    limit = _address_space_bytes() + CASE_MEMORY_BYTES
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _address_space_bytes() -> int:
    """This process's virtual memory size (VmSize), 0 where /proc does not tell it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _child_run(args: list[str], cwd: str, stdout_fd: int, stderr_fd: int) -> None:
    """In the forked child: `joulesim ARGS` through the command's own entry point, its standard
    streams the real file descriptors 1 and 2 (sent to files), ending with its exit status."""
    status = 1
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        # (under pytest sys.stdout/sys.stderr are its capture objects, not fds 1 and 2)
        sys.stdout = sys.__stdout__ = open(1, "w", closefd=False, errors="backslashreplace")
        sys.stderr = sys.__stderr__ = open(2, "w", closefd=False, errors="backslashreplace")
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        limit_case_memory()
        os.chdir(cwd)
        from joulesim.cli.main import main

        try:
            main.main(args, prog_name="joulesim", standalone_mode=True)
            status = 0
        except SystemExit as exit_:
            code = exit_.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:  # noqa: BLE001 - an exception out of the command: its traceback
        traceback.print_exc()
        status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status & 0xFF)


def in_fork(result, args: list[str], cwd: str, exits: tuple[int, ...] = EDC_EXITS, check=None,
            bound_s: float = CASE_BOUND_S):
    """`joulesim ARGS` in a fork of this process (the command's entry point, no interpreter
    start-up), classified as through_cli does; over `bound_s` it is a hang (the child is killed
    with its process group), a child killed by a signal a crash (counted as a traceback)."""
    result.detail = "joulesim " + " ".join(args)
    command = result.detail
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            _child_run(args, cwd, out.fileno(), err.fileno())
        try:
            os.setpgid(pid, pid)
        except (ProcessLookupError, PermissionError):
            pass
        deadline, wait_status = time.monotonic() + bound_s, None
        while True:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                _kill_group(pid)
                os.waitpid(pid, 0)
                wait_status = None
                break
            time.sleep(0.02)
        _kill_group(pid)  # what the run left behind (an isolated EDC's child, a decider)
        err.seek(0)
        out.seek(0)
        stderr = err.read()[-20000:].decode("utf-8", "replace")
        result.stdout = out.read()[-2000:].decode("utf-8", "replace")
    if wait_status is None:
        result.outcome, result.detail = HANG, f"over {bound_s:g} s (in a fork): {command}"
        return result
    if os.WIFSIGNALED(wait_status):
        result.outcome = TRACEBACK
        result.detail = f"{command}\nthe process running it was killed by signal {os.WTERMSIG(wait_status)}\n{stderr[-1500:]}"
        return result
    return classify_exit(result, os.WEXITSTATUS(wait_status), stderr, exits, check)


def through_cli_group(result, args: list[str], cwd: str, exits: tuple[int, ...] = EDC_EXITS, check=None,
                      bound_s: float = CASE_BOUND_S):
    """`joulesim ARGS` as a real command in its own session; over `bound_s` it is a hang and its
    whole process group is killed. stdout and stderr go to files (no pipe a grandchild keeps)."""
    args = [a.replace("\x00", "\\x00") for a in args]  # a command line cannot carry NUL
    result.detail = "joulesim " + " ".join(args)
    command = result.detail
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(joulesim_command(*args), stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                                start_new_session=True, preexec_fn=limit_case_memory,
                                env={**os.environ, "PYTHONWARNINGS": "ignore"})
        try:
            status = proc.wait(timeout=bound_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
            result.outcome, result.detail = HANG, f"over {bound_s:g} s: {command}"
            return result
        finally:
            _kill_group(proc.pid)
        err.seek(0)
        out.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        result.stdout = out.read()[-2000:].decode("utf-8", "replace")
    if status < 0:
        result.outcome, result.detail = TRACEBACK, f"{command}\nkilled by signal {-status}\n{stderr[-1500:]}"
        return result
    result.detail = command
    return classify_exit(result, status, stderr, exits, check)


def run_bounded(result, args: list[str], cwd: str, via_cli: bool, **kwargs):
    result.mutated = " ".join(args)[:300].encode("utf-8", "replace")
    return (through_cli_group if via_cli else in_fork)(result, args, cwd, **kwargs)


# ---------------------------------------------------------------- special files (never opened here)
SPECIAL_FILES = ["empty", "dev_zero", "dev_null", "fifo", "folder", "missing"]


def special_file(kind: str, folder: str, name: str) -> str:
    """A path of `kind` in `folder`: made without opening a FIFO (os.mkfifo only)."""
    path = os.path.join(folder, name)
    if kind == "empty":
        open(path, "wb").close()
    elif kind == "dev_zero":
        return "/dev/zero"
    elif kind == "dev_null":
        return "/dev/null"
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        os.makedirs(path)
    elif kind != "missing":
        raise AssertionError(kind)
    return path


def case_folder(directory: str, prefix: str, seed: int) -> str:
    folder = os.path.join(directory, f"{prefix}{seed}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


# ============================================================================ EDC libraries
EDC_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <signal.h>
#include <unistd.h>
static char *reply;
static size_t cap;
static void put(const char *s) {
    size_t n = strlen(reply), m = strlen(s);
    if (n + m + 1 > cap) { cap = 2 * (n + m + 1); reply = realloc(reply, cap); }
    memcpy(reply + n, s, m + 1);
}
static void crash(void) { raise(SIGSEGV); }
#if MODE == 1
__attribute__((constructor)) static void boom(void) { crash(); }
#endif
uint8_t batsim_edc_init(const uint8_t *d, uint32_t n, uint32_t *flags, uint8_t **r, uint32_t *rs) {
    (void)d; (void)n;
    if (MODE == 2) crash();
    *flags = 0x2;
    cap = 4096; reply = malloc(cap); reply[0] = 0;
    put("{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"EDCHelloEvent\",\"event\":"
        "{\"batprotocol_version\":\"0.1.0\",\"decision_component_name\":\"fuzz\",\"decision_component_version\":\"1\"}}]}");
    *r = (uint8_t *)reply; *rs = strlen(reply) + 1;
    return 0;
}
uint8_t batsim_edc_deinit(void) { if (MODE == 4) crash(); return MODE == 5 ? 1 : 0; }
uint8_t batsim_edc_take_decisions(const uint8_t *w, uint32_t n, uint8_t **r, uint32_t *rs) {
    if (MODE == 3) for (;;) pause();
    if (MODE == 6) { *r = NULL; *rs = 0; return 0; }
    if (MODE == 7) abort();
    if (MODE == 8) exit(3);
    char *msg = malloc(n + 1); memcpy(msg, w, n); msg[n] = 0;
    const char *now = strstr(msg, "\"now\":");
    double t = now ? atof(now + 6) : 0.0;
    char head[64]; snprintf(head, sizeof head, "{\"now\":%.17g,\"events\":[", t);
    reply[0] = 0; put(head);
    int first = 1; const char *p = msg;
    while ((p = strstr(p, "\"JobSubmittedEvent\"")) != NULL) {   /* rejects every job */
        const char *id = strstr(p, "\"job_id\":\"");
        if (!id) break;
        id += 10; const char *end = strchr(id, '"'); if (!end) break;
        char ev[512]; int len = (int)(end - id); if (len > 400) len = 400;
        snprintf(ev, sizeof ev, "%s{\"timestamp\":%.17g,\"event_type\":\"RejectJobEvent\",\"event\":{\"job_id\":\"%.*s\"}}",
                 first ? "" : ",", t, len, id);
        put(ev); first = 0; p = end;
    }
    put("]}");
    free(msg);
    *r = (uint8_t *)reply; *rs = strlen(reply) + 1;
    return 0;
}
"""
#: library kind -> MODE of EDC_SOURCE; "good" rejects every job it is given.
LIBRARIES = {"good": 0, "constructor_crash": 1, "init_crash": 2, "never_returns": 3, "deinit_crash": 4,
             "deinit_fails": 5, "null_reply": 6, "aborts": 7, "exits": 8}
#: Libraries that crash the process they are loaded in: run with --edc-isolated only (without
#: it a crash ends the simulator, as in Batsim 5; that is what --edc-isolated is for).
CRASHING = {"constructor_crash", "init_crash", "deinit_crash", "aborts", "exits"}
NOT_LIBRARIES = ["truncated_elf", "junk_bytes", *SPECIAL_FILES]


def build_libraries(directory: str) -> dict[str, str]:
    """The hostile libraries, compiled once per process (a lock-free per-pid folder)."""
    folder = os.path.join(directory, f"edc_libs_{os.getpid()}")
    paths = {kind: os.path.join(folder, f"lib{kind}.so") for kind in LIBRARIES}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, "edc.c")
    with open(source, "w") as handle:
        handle.write(EDC_SOURCE)
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("fuzz_edc_inputs needs a C compiler (cc or gcc)")
    for kind, mode in LIBRARIES.items():
        made = subprocess.run([compiler, "-shared", "-fPIC", "-O1", f"-DMODE={mode}", "-o", paths[kind] + ".tmp",
                               source], capture_output=True, text=True)
        if made.returncode != 0:
            raise RuntimeError(made.stderr)
        os.replace(paths[kind] + ".tmp", paths[kind])
    return paths


def _library(kind: str, libraries: dict[str, str], folder: str, rng: random.Random) -> str:
    if kind in LIBRARIES:
        return libraries[kind]
    path = os.path.join(folder, "libhostile.so")
    if kind == "truncated_elf":
        with open(libraries["good"], "rb") as handle:
            raw = handle.read()
        with open(path, "wb") as handle:
            handle.write(raw[:rng.choice([0, 4, 16, 63, 64, 200, rng.randrange(len(raw)), len(raw) - rng.randrange(1, 600)])])
        return path
    if kind == "junk_bytes":
        with open(path, "wb") as handle:
            handle.write(rng.choice([b"\x7fELF", b"\x7fELF\x02\x01\x01" + bytes(rng.randrange(256) for _ in range(300)),
                                     bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000)))]))
        return path
    return special_file(kind, folder, "libhostile.so")


# ---------------------------------------------------------------- init data
NON_UTF8 = ["\udcff\udcfe", "{\"a\": \"\udce9\"}", "\udcc3(", "abc\udc80", "\udced\udca0\udc80"]


def _init_string(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["json", "junk", "non_utf8", "huge", "empty", "newlines"])
    return kind, {"json": '{"policy": "reject"}', "junk": random_text_mutation('{"policy": "reject", "n": 1}', rng),
                  "non_utf8": rng.choice(NON_UTF8), "huge": "x" * 100_000, "empty": "",
                  "newlines": "\n\r\n\t"}[kind]


#: Init files that can never be an EDC's init data: endless, blocking, not files.
BAD_INIT_FILES = {"dev_zero", "fifo", "folder", "missing"}


def _init_file(rng: random.Random, folder: str) -> tuple[str, str]:
    kind = rng.choice(["json", "non_utf8", "random_bytes", "huge", *SPECIAL_FILES])
    path = os.path.join(folder, "init.data")
    if kind in SPECIAL_FILES:
        return kind, special_file(kind, folder, "init.data")
    data = {"json": b'{"policy": "reject"}', "non_utf8": b"\xff\xfe{\xe9}\x80",
            "random_bytes": bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000))),
            "huge": b"y" * (5 * 2**20)}[kind]
    with open(path, "wb") as handle:
        handle.write(data)
    return kind, path


# ---------------------------------------------------------------- one case
def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    libraries = build_libraries(directory)
    folder = case_folder(directory, "edc", seed)
    via_cli = rng.random() < 0.3
    label = MAYBE_VALID
    args = ["simulate", "-p", "small4", "-w", "tiny", "-e", os.path.join(folder, "out"), "-q", "--timeout", "5"]
    pick = rng.random()
    if pick < 0.06:  # a process EDC nobody serves
        kind = rng.choice(["ipc_nobody", "tcp_nobody", "junk_endpoint"])
        endpoint = {"ipc_nobody": f"ipc://{folder}/nobody.sock", "tcp_nobody": "tcp://127.0.0.1:1",
                    "junk_endpoint": rng.choice(["", "ipc://", "tcp://x:y", "\udcff", "udp://1.2.3.4:5"])}[kind]
        args += ["--edc-socket", endpoint, "--timeout", "1"]
        operator, label = f"edc-socket {kind}", ALWAYS_INVALID
    else:
        if pick < 0.45:
            kind = "good"
        elif pick < 0.80:
            kind = rng.choice(sorted(LIBRARIES))
        else:
            kind = rng.choice(NOT_LIBRARIES)
        library = _library(kind, libraries, folder, rng)
        isolated = kind in CRASHING or rng.random() < 0.35
        if kind not in ("good", "deinit_fails", "truncated_elf"):
            label = ALWAYS_INVALID
        init_how = rng.choice(["none", "string", "string", "file", "file"])
        init_kind, init_value = "none", None
        if init_how == "string":
            init_kind, init_value = _init_string(rng)
        elif init_how == "file":
            init_kind, init_value = _init_file(rng, folder)
            if init_kind in BAD_INIT_FILES:
                label = ALWAYS_INVALID
        spelled = rng.random() < 0.25 and init_how != "none"
        if spelled:
            args += ["--edc-library-str" if init_how == "string" else "--edc-library-file", library, init_value]
        else:
            args += ["--edc-library", library]
            if init_how != "none":
                args += ["--edc-init" if init_how == "string" else "--edc-init-file", init_value]
        if isolated:
            args.append("--edc-isolated")
        if kind == "never_returns":
            args += ["--timeout", "2"]
        operator = f"library {kind}{' isolated' if isolated else ''}, init {init_how} {init_kind}"
        if rng.random() < 0.05:
            args.append("--no-sched")  # no decider at all: an EDC beside it cannot be honoured
            operator += ", --no-sched"
            label = ALWAYS_INVALID
        if rng.random() < 0.1:
            args.append("-E")
            args[args.index("small4")] = "energy2"
    result = new_result(seed, operator, label, via_cli)
    try:
        return run_bounded(result, args, folder, via_cli)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
