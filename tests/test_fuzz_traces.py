"""Hostile and random trace files of smpi and usage_trace profiles, and random storage
profiles: each workload loads and runs, or ends with a JoulesimError naming the file (and for a
trace the rank and line); never a traceback, a hang, or an error of another kind.

Property-based (JOULESIM_FUZZ_EXAMPLES examples each, derandomized by conftest's 'ci' profile).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import joulesim
from joulesim.protocol.errors import JoulesimError

from conftest import fuzz_settings
from test_storage_models import write_storage_platform

SMPI_ACTIONS = ["init", "finalize", "compute", "sleep", "send", "isend", "recv", "irecv", "test", "wait", "waitall",
                "barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "gather", "gatherv", "allgather",
                "allgatherv", "scatter", "scatterv", "reducescatter", "scan", "exscan", "sendRecv", "comm_size",
                "comm_split", "comm_dup", "m_usage", "bogus"]
NUMBERS = st.one_of(st.integers(-2, 70000).map(str), st.floats(-0.5, 3).map(repr),
                    st.sampled_from(["0", "1", "2", "-1", "1e3", "0.5", "65536", "1e9", "nan", "inf", "-0", "7",
                                     "2147483648", "1e400", "_1"]))
TOKENS = st.one_of(NUMBERS, NUMBERS, NUMBERS, st.text(st.characters(codec="utf-8"), max_size=6))


@st.composite
def trace_line(draw, kind: str, rank: int, nb_ranks: int) -> str:
    """Mostly a line of the right shape with hostile numbers; sometimes anything."""
    if draw(st.integers(0, 9)) == 0:
        fields = [draw(TOKENS), draw(st.sampled_from(SMPI_ACTIONS)), *draw(st.lists(TOKENS, max_size=2 * nb_ranks + 3))]
        return " ".join(fields)
    if kind == "usage_trace":
        return f"{rank} m_usage {draw(NUMBERS)} {draw(NUMBERS)}"
    action = draw(st.sampled_from(SMPI_ACTIONS[:-2]))
    partner = draw(st.one_of(st.integers(0, nb_ranks - 1).map(str), NUMBERS))
    arguments = [partner, *draw(st.lists(NUMBERS, max_size=2 * nb_ranks + 2))]
    line = " ".join([str(rank), action, *arguments[:draw(st.integers(0, len(arguments)))]])
    return draw(st.sampled_from([line, line, line, "# " + line, "", "  " + line + "\t"]))


@st.composite
def traces(draw, kind: str) -> tuple[int, list[list[str]], bool]:
    nb_ranks = draw(st.integers(1, 4))
    ranks = [draw(st.lists(trace_line(kind, r, nb_ranks), max_size=8)) for r in range(nb_ranks)]
    return nb_ranks, ranks, draw(st.booleans())


def run(directory: Path, kind: str, nb_ranks: int, ranks: list[list[str]], final_newline: bool) -> None:
    folder = directory / "t"
    folder.mkdir()
    for r, lines in enumerate(ranks):
        (folder / f"r{r}.txt").write_text("\n".join(lines) + ("\n" if final_newline else ""))
    (folder / "list.txt").write_text("".join(f"r{r}.txt\n" for r in range(nb_ranks)))
    workload = directory / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 2, "walltime": 1e6, "profile": "p"}],
                                    "profiles": {"p": {"type": kind, "trace": "t/list.txt"}}}))
    try:
        joulesim.simulate(write_storage_platform(directory), str(workload), "fcfs", time_limit=60)
    except JoulesimError as exc:
        text = str(exc)
        assert "Traceback" not in text and text.strip(), text
        assert str(directory) in text or "deadlock" in text.lower() or "job" in text, text


@fuzz_settings
@given(traces("smpi"))
def test_random_smpi_traces_run_or_are_refused_clearly(case):
    with tempfile.TemporaryDirectory() as name:
        run(Path(name), "smpi", *case)


@fuzz_settings
@given(traces("usage_trace"))
def test_random_usage_traces_run_or_are_refused_clearly(case):
    with tempfile.TemporaryDirectory() as name:
        run(Path(name), "usage_trace", *case)


STORAGE_VALUES = st.one_of(st.none(), st.integers(-3, 10 ** 10), st.floats(allow_nan=True, allow_infinity=True),
                           st.text(max_size=4), st.lists(st.integers(), max_size=2), st.booleans())


@fuzz_settings
@given(st.sampled_from(["parallel_homogeneous_pfs", "data_staging"]),
       st.dictionaries(st.sampled_from(["bytes_to_read", "bytes_to_write", "storage", "host", "nb_bytes", "from", "to"]),
                       STORAGE_VALUES, max_size=5),
       st.one_of(st.none(), st.dictionaries(st.text(max_size=4), st.integers(-2, 6), max_size=3)))
def test_random_storage_profiles_run_or_are_refused_clearly(kind, fields, mapping):
    profile = {"type": kind, **fields}
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        workload = directory / "w.json"
        workload.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                                        "profiles": {"p": profile}}))
        options = {"storage_mapping": ",".join(f"{k}:{v}" for k, v in mapping.items())} if mapping else None
        try:
            joulesim.simulate(write_storage_platform(directory), str(workload), "fcfs", options=options, time_limit=60)
        except JoulesimError as exc:
            assert str(exc).strip() and "Traceback" not in str(exc)
