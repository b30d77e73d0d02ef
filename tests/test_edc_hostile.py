"""Hostile EDC libraries and inputs (issue 46): each ends in one line naming the library or the
file, with the exit status docs/reference/reliability.md's table gives, never a traceback, a hang, a MemoryError
or a silent death. The libraries are small C EDCs built here: a rejecter (it rejects every job,
so a run completes) that checks its init data, and copies of it that crash or never return at
one chosen place."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

COMPILER = shutil.which("cc") or shutil.which("gcc")

HOSTILE_EDC = textwrap.dedent(r"""
    #include <signal.h>
    #include <stdint.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    static char reply[1 << 16];
    static int calls;
    #if MODE == 1
    __attribute__((constructor)) static void crash_when_loaded(void) { raise(SIGSEGV); }
    #endif
    uint8_t batsim_edc_init(const uint8_t *d, uint32_t n, uint32_t *flags, uint8_t **r, uint32_t *rs) {
    #ifdef EXPECTED_INIT
        /* the init data must be exactly these bytes (the command line's, as Batsim 5 passes them) */
        if (n != sizeof(EXPECTED_INIT) - 1 || memcmp(d, EXPECTED_INIT, n) != 0) return 7;
    #else
        (void)d; (void)n;
    #endif
        *flags = 0x2;
        strcpy(reply, "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"EDCHelloEvent\",\"event\":"
                      "{\"batprotocol_version\":\"0.1.0\",\"decision_component_name\":\"hostile\","
                      "\"decision_component_version\":\"1\"}}]}");
        *r = (uint8_t *)reply; *rs = strlen(reply) + 1;
        return 0;
    }
    uint8_t batsim_edc_take_decisions(const uint8_t *w, uint32_t n, uint8_t **r, uint32_t *rs) {
        (void)n;
        if (MODE == 2 && ++calls == 3) for (;;);  /* never returns */
        const char *text = (const char *)w, *now = strstr(text, "\"now\":");
        int used = snprintf(reply, sizeof reply, "{\"now\":%.17g,\"events\":[", now ? atof(now + 6) : 0.0);
        const char *at = text;
        int first = 1;
        while ((at = strstr(at, "\"JobSubmittedEvent\"")) != NULL) {  /* reject every job */
            const char *id = strstr(at, "\"job_id\":\"");
            if (id == NULL) break;
            id += 10;
            const char *end = strchr(id, '"');
            used += snprintf(reply + used, sizeof reply - used, "%s{\"timestamp\":%.17g,\"event_type\":"
                             "\"RejectJobEvent\",\"event\":{\"job_id\":\"%.*s\"}}", first ? "" : ",",
                             now ? atof(now + 6) : 0.0, (int)(end - id), id);
            first = 0;
            at = end;
        }
        used += snprintf(reply + used, sizeof reply - used, "]}");
        *r = (uint8_t *)reply; *rs = used + 1;
        return 0;
    }
    uint8_t batsim_edc_deinit(void) {
        if (MODE == 3) raise(SIGSEGV);
        return 0;
    }
""")
# MODE: 0 the rejecter, 1 a constructor that dies of SIGSEGV, 2 take_decisions never returns on
# its third call, 3 batsim_edc_deinit dies of SIGSEGV


def build(folder: Path, name: str, mode: int, *defines: str) -> Path:
    source = folder / "hostile.c"
    if not source.exists():
        source.write_text(HOSTILE_EDC)
    target = folder / f"lib{name}.so"
    made = subprocess.run([COMPILER, "-shared", "-fPIC", f"-DMODE={mode}", *defines, "-o", str(target), str(source)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    return target


@pytest.fixture(scope="module")
def edcs(tmp_path_factory) -> dict[str, Path]:
    if COMPILER is None:
        pytest.skip("no C compiler (cc or gcc): the test EDCs cannot be built")
    folder = tmp_path_factory.mktemp("hostile_edcs")
    built = {name: build(folder, name, mode) for name, mode in
             (("rejecter", 0), ("crashing_constructor", 1), ("endless", 2), ("crashing_deinit", 3))}
    built["checks_init"] = build(folder, "checks_init", 0, r'-DEXPECTED_INIT="\xff\xfe\x80"')
    good = built["rejecter"].read_bytes()
    built["truncated"] = folder / "libtruncated.so"
    built["truncated"].write_bytes(good[:len(good) // 4])  # (its headers whole, most of its segments gone)
    return built


def simulate(*args: str | bytes, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`joulesim simulate -p cluster32 -w default ARGS`; `timeout` only stops a test whose run
    would hang (the fixed code never gets near it)."""
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", "-p", "cluster32", "-w", "default",
                           *args], capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout, cwd=cwd)


def error_lines(done: subprocess.CompletedProcess) -> list[str]:
    stderr = done.stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("joulesim: error")]


# ------------------------------------------------------------------ 1. init data that is not UTF-8
def test_init_data_that_is_not_utf8_reaches_the_edc_byte_for_byte(edcs, tmp_path):
    """Batsim 5 passes its command line's init string to batsim_edc_init as bytes; joulesim too
    (the library returns 7 from init unless it gets exactly these three bytes)."""
    for option in (["--edc-library", os.fsencode(edcs["checks_init"]), "--edc-init"],
                   ["--edc-library-str", os.fsencode(edcs["checks_init"])]):
        done = simulate(*option, b"\xff\xfe\x80", "-e", str(tmp_path / option[0] / "out"))
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert error_lines(done) == []
    done = simulate("--edc-library", str(edcs["checks_init"]), "--edc-init", "other", "-e", str(tmp_path / "x" / "out"))
    assert done.returncode == 2 and "batsim_edc_init returned 7" in error_lines(done)[0]


def test_the_api_passes_init_bytes_and_refuses_a_string_that_stands_for_no_bytes(edcs):
    import joulesim
    from joulesim.protocol.errors import JoulesimError

    result = joulesim.simulate("cluster32", "default", edc_library=edcs["checks_init"], edc_init=b"\xff\xfe\x80")
    assert len(result.jobs) > 0
    # (a string read from bytes that are not UTF-8 keeps them as surrogate escapes: the same bytes)
    joulesim.simulate("cluster32", "default", edc_library=edcs["checks_init"], edc_init=os.fsdecode(b"\xff\xfe\x80"))
    with pytest.raises(JoulesimError, match="lone surrogate") as refused:
        joulesim.simulate("cluster32", "default", edc_library=edcs["checks_init"], edc_init="\ud800")
    assert refused.value.exit_code == 2


# ------------------------------------------------------------------ 2. init files that are not files
@pytest.mark.parametrize("isolated", [False, True])
@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_an_init_file_that_is_not_a_regular_file_is_refused_before_it_is_opened(edcs, tmp_path, kind, isolated):
    """/dev/zero was read whole (a MemoryError); a FIFO nobody writes blocked the open forever."""
    path = {"device": "/dev/zero", "fifo": str(tmp_path / "fifo"), "directory": str(tmp_path)}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    for option in (["--edc-library-file", str(edcs["rejecter"]), path],
                   ["--edc-library", str(edcs["rejecter"]), "--edc-init-file", path]):
        done = simulate(*option, *(["--edc-isolated"] if isolated else []), "-e", str(tmp_path / "out"), timeout=60)
        assert done.returncode == 2
        assert error_lines(done) == [f"joulesim: error: {path}: is not a regular file (a directory, a device or a "
                                     "FIFO); the EDC's init data is read from a regular file"]
        assert not (tmp_path / "out_jobs.csv").exists()


def test_an_init_file_over_the_cap_is_refused_before_it_is_read(edcs, tmp_path):
    from joulesim.protocol.batprotocol.edc_connection import INIT_DATA_MAX_BYTES

    big = tmp_path / "big.init"
    with open(big, "wb") as file:  # (sparse: no disk used)
        file.truncate(INIT_DATA_MAX_BYTES + 1)
    done = simulate("--edc-library-file", str(edcs["rejecter"]), str(big), "-e", str(tmp_path / "out"))
    assert done.returncode == 2
    assert error_lines(done) == [f"joulesim: error: {big}: holds {INIT_DATA_MAX_BYTES + 1} bytes, more than joulesim "
                                 "passes an EDC as its init data (64 MiB)"]


def test_a_library_that_is_not_a_regular_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo.so")
    for path in ("/dev/zero", str(tmp_path / "fifo.so")):
        for isolated in ([], ["--edc-isolated"]):
            done = simulate("--edc-library", path, *isolated, "-e", str(tmp_path / "out"), timeout=60)
            assert done.returncode == 2 and len(error_lines(done)) == 1
            assert f"{path}: is not a regular file" in error_lines(done)[0]


# ------------------------------------------------------------------ 3. a library that never returns
def test_a_library_that_never_returns_ends_the_run_at_its_timeout_with_the_outputs_kept(edcs, tmp_path):
    """In this process a call into C cannot be taken back: the watchdog flushes the outputs,
    prints one line and ends the process (exit 5). `timeout=` stops the test if it hangs."""
    done = simulate("--edc-library", str(edcs["endless"]), "--timeout", "1", "-e", str(tmp_path / "out"), timeout=60)
    assert done.returncode == 5
    stderr = done.stderr.decode()
    assert error_lines(done) == [f"joulesim: error: {edcs['endless']}: batsim_edc_take_decisions did not return within "
                                 "1 s (--timeout); the library runs in joulesim's process, which cannot take a call "
                                 "back from it, so the run ends here (--edc-isolated runs it in a child process)"]
    assert "(outputs written so far are kept: " in stderr and str(tmp_path / "out_jobs.csv") in stderr
    jobs = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert jobs[0].startswith("job_id,") and len(jobs) > 1  # (the jobs rejected before it hung)


def test_an_isolated_library_that_never_returns_is_stopped_at_its_timeout(edcs, tmp_path):
    done = simulate("--edc-library", str(edcs["endless"]), "--edc-isolated", "--timeout", "1",
                    "-e", str(tmp_path / "out"), timeout=60)
    assert done.returncode == 5 and len(error_lines(done)) == 1
    assert "did not answer within 1 s" in error_lines(done)[0]


# ------------------------------------------------------------------ 4. crashes: loading, deinit
def test_an_isolated_library_is_loaded_only_in_its_child(edcs, tmp_path):
    """Its constructor dies of SIGSEGV: one line naming the signal and what the library was
    doing, not the simulator's death (it loaded the library once itself before)."""
    library = str(edcs["crashing_constructor"])
    done = simulate("--edc-library", library, "--edc-isolated", "-e", str(tmp_path / "out"))
    assert done.returncode == 5
    assert error_lines(done) == [f"joulesim: error: {library}: the isolated process (--edc-isolated) died of SIGSEGV "
                                 "while loading the library (dlopen, which runs its constructors)"]
    assert not (tmp_path / "out_jobs.csv").exists()


@pytest.mark.parametrize("isolated", [[], ["--edc-isolated"]])
def test_a_truncated_library_is_refused_before_dlopen_dies_of_sigbus(edcs, tmp_path, isolated):
    library = edcs["truncated"]
    done = simulate("--edc-library", str(library), *isolated, "-e", str(tmp_path / "out"))
    assert done.returncode == 2
    [line] = error_lines(done)
    assert re.fullmatch(rf"joulesim: error: {re.escape(str(library))}: is a truncated or damaged ELF file: its headers "
                        rf"place (\d+) bytes of it, the file holds {library.stat().st_size} \(a copy cut short\? build "
                        r"or copy the library again\)", line), line


def test_a_crash_in_deinit_in_process_comes_after_the_summary_and_complete_outputs(edcs, tmp_path):
    """In this process a crash stays a crash (as in Batsim 5), but batsim_edc_deinit is called
    last: the summary is printed and every output complete, and Python's fault handler names it."""
    done = simulate("--edc-library", str(edcs["crashing_deinit"]), "-e", str(tmp_path / "out"))
    assert done.returncode == -11
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert "outputs " in stdout and "out_schedule.csv" in stdout  # the summary's last line
    assert "Fatal Python error: Segmentation fault" in stderr and "in close" in stderr
    assert (tmp_path / "out_schedule.csv").read_text().count("\n") == 2  # header and its row


def test_a_crash_in_deinit_in_the_isolated_process_is_one_line_after_the_summary(edcs, tmp_path):
    library = str(edcs["crashing_deinit"])
    done = simulate("--edc-library", library, "--edc-isolated", "-e", str(tmp_path / "out"))
    assert done.returncode == 5
    assert "out_schedule.csv" in done.stdout.decode()
    assert error_lines(done) == [f"joulesim: error: {library}: the isolated process (--edc-isolated) died of SIGSEGV "
                                 "in batsim_edc_deinit, after the run (the run had ended: its outputs are complete)"]
    assert (tmp_path / "out_schedule.csv").read_text().count("\n") == 2


def test_a_good_isolated_library_gets_its_deinit(tmp_path):
    """The child calls batsim_edc_deinit when the run has ended (it was stopped without it)."""
    source = tmp_path / "marks.c"
    source.write_text(HOSTILE_EDC.replace("if (MODE == 3) raise(SIGSEGV);",
                                          'fclose(fopen(getenv("DEINIT_MARK"), "w"));'))
    library = tmp_path / "libmarks.so"
    subprocess.run([COMPILER, "-shared", "-fPIC", "-DMODE=0", "-o", str(library), str(source)], check=True)
    mark = tmp_path / "deinit-called"
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", "-p", "cluster32", "-w", "default",
                           "--edc-library", str(library), "--edc-isolated", "-e", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "DEINIT_MARK": str(mark)})
    assert done.returncode == 0, done.stderr
    assert mark.exists()


# ------------------------------------------------------------------ 5, 6. options, exit statuses
def test_no_sched_with_an_edc_is_refused(edcs, tmp_path):
    for edc in (["--edc-library", str(edcs["rejecter"])], ["--edc-socket", f"ipc://{tmp_path}/none"]):
        done = simulate("--no-sched", *edc, "-e", str(tmp_path / "out"))
        assert done.returncode == 2
        assert "--no-sched runs without any decider" in done.stderr.decode()
        assert not (tmp_path / "out_jobs.csv").exists()


@pytest.mark.parametrize("isolated", [[], ["--edc-isolated"]])
def test_a_library_refused_before_any_output_exits_2(edcs, tmp_path, isolated):
    """Input files and command-line values exit 2 (docs/reference/reliability.md's table): a missing library, a
    file that is not one, an init that refuses its data."""
    (tmp_path / "text.so").write_text("not a library")
    cases = [(str(tmp_path / "missing.so"), [], "no such EDC library file"),
             (str(tmp_path / "text.so"), [], "cannot be loaded as a shared library"),
             (str(edcs["checks_init"]), ["--edc-init", "wrong"], "batsim_edc_init returned 7")]
    for library, init, expected in cases:
        done = simulate("--edc-library", library, *init, *isolated, "-e", str(tmp_path / "out"))
        assert done.returncode == 2, (library, done.stderr)
        lines = error_lines(done)
        assert len(lines) == 1 and expected in lines[0] and library in lines[0]
        assert not (tmp_path / "out_jobs.csv").exists()
