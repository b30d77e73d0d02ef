"""Reading the time-independent traces of an `smpi` profile (SimGrid's `smpirun -replay` format).

Where the files are (Batsim 4.2.1, src/profiles.cpp, profile type "smpi"; read by
simulator/workload/trace_listing.py): the profile's `trace` field is a path relative to the
workload file's directory. That file lists one trace file per line, each path relative to the
listing's own directory; line r is rank r's trace, so the job has as many ranks as the listing
has lines. Batsim has no single-file form: a listing of one line is a job of one rank. A
listing may name one file for several ranks (SimGrid's shared form, every line prefixed by its
rank): each rank then replays its own lines, as below, and the file is read once.

What a rank's file holds (SimGrid 3.32, src/xbt/xbt_replay.cpp, ReplayReader and
replay_runner): lines split on blanks; empty lines and lines whose first character is `#` are
skipped; the first field is a rank, the second the action, the rest its arguments. A line
whose rank field is another rank of the job is skipped (SimGrid warns "Ignore trace element not
for me"); a rank field that is no rank of the job, a file with action lines but none for its
rank (a listing in the wrong order), or a file without any action line (empty), is an error here. SimGrid stops at the end of the file
before acting on a last line that no newline ends: that line is dropped here too.

The actions and their arguments (src/smpi/internals/smpi_replay.cpp, the *Parser::parse
functions and smpi_replay_init's registrations); N is the job's number of ranks, [..] optional,
DT a datatype id (Datatype::decode: "0" double, "1" int, "6" byte...; default: MPI_BYTE, or
MPI_DOUBLE after an `init` with an argument). Counts are in datatype elements.

    init [x]                        comm_size / comm_split / comm_dup / finalize   (no time)
    compute FLOPS                   sleep SECONDS                location FILE LINE  (no time)
    send|isend|recv|irecv PARTNER TAG COUNT [DT]
    wait|test SRC DST TAG           waitall                      barrier
    bcast COUNT [ROOT [DT]]         reduce COUNT FLOPS [ROOT [DT]]     allreduce COUNT FLOPS [DT]
    alltoall SCOUNT RCOUNT [DT [DT]]
    alltoallv SBUF SCOUNT*N RBUF RCOUNT*N [DT DT]
    gather SCOUNT RCOUNT [ROOT [DT [DT]]]          allgather SCOUNT RCOUNT [DT [DT]]
    gatherv SCOUNT RCOUNT*N [ROOT [DT [DT]]]
    allgatherv SCOUNT RCOUNT*N [DT DT] [DISPL*N]  (as GatherVArgParser decides from the length)
    scatter SCOUNT RCOUNT [ROOT [DT [DT]]]         scatterv SCOUNT*N RCOUNT [ROOT [DT [DT]]]
    reducescatter RCOUNT*N FLOPS [DT]              scan|exscan COUNT FLOPS [DT]
    sendRecv SCOUNT DST RCOUNT SRC DT DT

SimGrid checks only that the mandatory arguments are there and ignores extra ones; so does
this reader. Stricter than SimGrid (which would crash, hang or misread): a count, flops or
seconds that is not a finite number >= 0; a count of 2^31 or more (SimGrid passes counts as a C
int); a partner or root that is not a rank of the job; an integer field (partner, tag, root,
the per-rank counts, which SimGrid reads with std::stoi) that is not a plain integer; an
unknown datatype id; a `recv` of negative size (SimGrid probes the message's size: not
replayed here); wildcard receives (MPI_ANY_TAG -444 as a receive's tag).

The result is compact (traces reach 100,000 actions per rank): per rank, one opcode byte per
action, its arguments in one flat array of floats, and its line number; actions that take no
time and change nothing (finalize, comm_*, location) are checked and dropped.
"""

from __future__ import annotations

import math
import os
from array import array
from dataclasses import dataclass, field

from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.trace_listing import action_lines, listing_path, rank_files

__all__ = ["listing_path", "load_smpi_traces", "parse_rank_file", "SmpiTraces", "RankTrace"]

# Opcodes (one byte per action).
INIT, COMPUTE, SLEEP, SEND, ISEND, RECV, IRECV, TEST, WAIT, WAITALL, BARRIER, BCAST, REDUCE, \
    ALLREDUCE, ALLTOALL, ALLTOALLV, GATHER, GATHERV, ALLGATHER, ALLGATHERV, SCATTER, SCATTERV, \
    REDUCESCATTER, SCAN, EXSCAN, SENDRECV = range(26)

OP_NAMES = ("init", "compute", "sleep", "send", "isend", "recv", "irecv", "test", "wait", "waitall",
            "barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "gather", "gatherv",
            "allgather", "allgatherv", "scatter", "scatterv", "reducescatter", "scan", "exscan",
            "sendRecv")

# Stored arguments per opcode (the number of floats each action appends to `args`; N = ranks):
#   INIT: has_argument(0/1)        COMPUTE: flops        SLEEP: seconds
#   SEND/ISEND/RECV/IRECV: partner, tag, count, dt
#   TEST/WAIT: src, dst, tag       WAITALL, BARRIER: -
#   BCAST: count, root, dt         REDUCE: count, flops, root, dt     ALLREDUCE: count, flops, dt
#   ALLTOALL: scount, dt1, dt2     ALLTOALLV: scount*N, dt1
#   GATHER: scount, dt1, root      GATHERV: scount, dt1, root
#   ALLGATHER: scount, dt1         ALLGATHERV: scount, dt1
#   SCATTER: scount, dt1, root     SCATTERV: scount*N, dt1, root
#   REDUCESCATTER: rcount*N, flops, dt     SCAN/EXSCAN: count, flops, dt
#   SENDRECV: scount, dst, src, dt1
# where dt is the datatype's size in bytes, or -1 for the default datatype (resolved when the
# action runs: SimGrid parses each action just before it runs it, after the `init`s so far).


def stored_arguments(op: int, nb_ranks: int) -> int:
    """How many floats an action of opcode `op` stores, in a job of `nb_ranks` ranks."""
    fixed = _FIXED_ARGS[op]
    if fixed >= 0:
        return fixed
    return nb_ranks + (1 if op == ALLTOALLV else 2)  # ALLTOALLV: +dt; SCATTERV, REDUCESCATTER: +2


_FIXED_ARGS = {INIT: 1, COMPUTE: 1, SLEEP: 1, SEND: 4, ISEND: 4, RECV: 4, IRECV: 4, TEST: 3, WAIT: 3,
               WAITALL: 0, BARRIER: 0, BCAST: 3, REDUCE: 4, ALLREDUCE: 3, ALLTOALL: 3, ALLTOALLV: -1,
               GATHER: 3, GATHERV: 3, ALLGATHER: 2, ALLGATHERV: 2, SCATTER: 3, SCATTERV: -1,
               REDUCESCATTER: -1, SCAN: 3, EXSCAN: 3, SENDRECV: 4}

DEFAULT_DATATYPE = -1.0

# Datatype id -> size in bytes on x86_64 (SimGrid 3.32, src/smpi/mpi/smpi_datatype.cpp: the
# CREATE_MPI_DATATYPE table, sizeof of each C type; -1, 55 and 56 are the null, UB and LB types).
DATATYPE_SIZES = {
    "-1": 0, "0": 8, "1": 4, "2": 1, "3": 2, "4": 8, "5": 4, "6": 1, "7": 8, "8": 1, "9": 1,
    "10": 2, "11": 4, "12": 8, "13": 8, "14": 16, "15": 4, "16": 1, "17": 1, "18": 2, "19": 4,
    "20": 8, "21": 1, "22": 2, "23": 4, "24": 8, "25": 8, "26": 16, "27": 32, "28": 8, "29": 8,
    "30": 8, "31": 16, "32": 16, "33": 8, "34": 8, "35": 8, "36": 16, "37": 16, "38": 4, "39": 4,
    "40": 8, "41": 16, "42": 8, "43": 16, "44": 16, "45": 4, "46": 2, "47": 4, "48": 8, "49": 16,
    "50": 32, "51": 1, "52": 8, "53": 16, "54": 32, "55": 0, "56": 0, "57": 1, "58": 8, "59": 8,
}

_DATATYPE_FLOATS = {key: float(value) for key, value in DATATYPE_SIZES.items()}
_FAST = {"compute": COMPUTE, "send": SEND, "isend": ISEND, "recv": RECV, "irecv": IRECV, "wait": WAIT,
         "test": TEST, "waitall": WAITALL, "barrier": BARRIER}
MAX_COUNT = 2 ** 31 - 1  # SimGrid hands counts to MPI calls as C ints
MPI_ANY_TAG = -444


@dataclass
class RankTrace:
    """One rank's actions, compactly: `ops[i]` is action i's opcode, `lines[i]` its line in
    `path`; the arguments of all actions follow one another in `args` (see stored_arguments)."""

    path: str
    ops: bytearray = field(default_factory=bytearray)
    args: array = field(default_factory=lambda: array("d"))
    lines: array = field(default_factory=lambda: array("i"))

    def __len__(self) -> int:
        return len(self.ops)


@dataclass
class SmpiTraces:
    """The parsed traces of one smpi profile: `ranks[r]` is rank r's."""

    listing: str
    ranks: list[RankTrace]

    @property
    def nb_ranks(self) -> int:
        return len(self.ranks)


def load_smpi_traces(listing: str, where: str = "smpi profile") -> SmpiTraces:
    """Read the listing file and every rank's trace. `where` names the profile in messages."""
    listing = os.fspath(listing)
    files = rank_files(listing, where)
    nb_ranks = len(files)
    by_file: dict[str, list[int]] = {}
    for rank, path in enumerate(files):
        by_file.setdefault(os.path.normpath(path), []).append(rank)
    ranks: list[RankTrace | None] = [None] * nb_ranks
    for path, wanted in by_file.items():
        parsed = parse_rank_file(files[wanted[0]], nb_ranks, wanted, listing)
        for rank in wanted:
            ranks[rank] = parsed[rank]
    return SmpiTraces(listing, ranks)  # type: ignore[arg-type]


def parse_rank_file(path: str, nb_ranks: int, wanted: list[int], listing: str = "") -> dict[int, RankTrace]:
    """Parse one trace file for the ranks of `wanted` (the ranks whose listing line names it)."""
    label = f"rank {wanted[0]}" if len(wanted) == 1 else "ranks " + ", ".join(map(str, wanted))
    lines = action_lines(path, f"the trace of {label}" + (f" (listed in {listing})" if listing else ""))
    traces = {rank: RankTrace(path) for rank in wanted}
    parser = _Parser(path, nb_ranks)
    tokens = {str(rank): traces[rank] for rank in wanted}
    others = {str(rank) for rank in range(nb_ranks)}
    foreign: dict[str, int] = {}
    for number, fields, line in lines:
        trace = tokens.get(fields[0])
        if trace is not None and "_" not in line and parser.fast(trace, fields, number):
            continue
        if trace is None:
            if fields[0] not in others:
                raise InputError(path, f"line {number}", f"the rank field {fields[0]!r} is not a rank of this job "
                                 f"(ranks 0 to {nb_ranks - 1}, one per line of the listing)",
                                 "start every line with the rank that runs it")
            foreign.setdefault(fields[0], number)
            continue
        parser.parse(trace, fields, number)
    for rank, trace in traces.items():
        if not trace.ops and not parser.dropped.get(rank):
            if not foreign:  # (SimGrid replays nothing for it; Batsim would run it as a rank that does nothing)
                raise InputError(path, f"the trace of rank {rank}" + (f" (listed in {listing})" if listing else ""),
                                 "has no action line (the file is empty, or holds only blank lines and '#' comments)",
                                 f"write rank {rank}'s actions, e.g. '{rank} init' and '{rank} compute 1e9', one per line")
            token, number = next(iter(foreign.items()))
            raise InputError(path, f"line {number}", f"this file is rank {rank}'s trace in the listing, but none "
                             f"of its lines is for rank {rank} (they are for rank {token}...)",
                             "list the rank traces in rank order, or start rank "
                             f"{rank}'s lines with '{rank}'")
    return traces


class _Parser:
    """Checks one action line and appends it to a RankTrace."""

    def __init__(self, path: str, nb_ranks: int):
        self.path = path
        self.n = nb_ranks
        self.dropped: dict[int, int] = {}  # rank -> no-op actions read (finalize, comm_*, location)
        n = nb_ranks
        self.table = {
            "init": (INIT, 0, self._init), "finalize": (None, 0, None),
            "comm_size": (None, 0, None), "comm_split": (None, 0, None), "comm_dup": (None, 0, None),
            "location": (None, 2, self._location),
            "compute": (COMPUTE, 1, self._amount), "sleep": (SLEEP, 1, self._amount),
            "send": (SEND, 3, self._p2p), "isend": (ISEND, 3, self._p2p),
            "recv": (RECV, 3, self._p2p), "irecv": (IRECV, 3, self._p2p),
            "test": (TEST, 3, self._wait), "wait": (WAIT, 3, self._wait),
            "waitall": (WAITALL, 0, None), "barrier": (BARRIER, 0, None),
            "bcast": (BCAST, 1, self._bcast), "reduce": (REDUCE, 2, self._reduce),
            "allreduce": (ALLREDUCE, 2, self._allreduce), "alltoall": (ALLTOALL, 2, self._alltoall),
            "alltoallv": (ALLTOALLV, 2 * n + 2, self._alltoallv),
            "gather": (GATHER, 2, self._gather), "allgather": (ALLGATHER, 2, self._allgather),
            "gatherv": (GATHERV, n + 1, self._gatherv), "allgatherv": (ALLGATHERV, n + 1, self._allgatherv),
            "scatter": (SCATTER, 2, self._gather), "scatterv": (SCATTERV, n + 1, self._scatterv),
            "reducescatter": (REDUCESCATTER, n + 1, self._reducescatter),
            "scan": (SCAN, 2, self._scan), "exscan": (EXSCAN, 2, self._scan),
            "sendRecv": (SENDRECV, 6, self._sendrecv),
        }
        self.fields: list[str] = []
        self.where = ""
        self.out: array = array("d")

    def fast(self, trace: RankTrace, fields: list[str], number: int) -> bool:
        """The frequent actions when well formed (no underscore in the line: int() and float()
        accept some); False leaves the line to `parse`, which checks everything."""
        size = len(fields)
        if size < 2:
            return False
        op = _FAST.get(fields[1])
        if op is None:
            return False
        try:
            if op == COMPUTE:
                flops = float(fields[2])
                if not 0 <= flops < math.inf:
                    return False
                trace.args.append(flops)
            elif op <= IRECV:  # SEND, ISEND, RECV, IRECV
                partner, tag, count = int(fields[2]), int(fields[3]), float(fields[4])
                if not (0 <= partner < self.n and 0 <= count <= MAX_COUNT) or (tag == MPI_ANY_TAG and op >= RECV):
                    return False
                dt = _DATATYPE_FLOATS.get(fields[5]) if size > 5 else DEFAULT_DATATYPE
                if dt is None:
                    return False
                trace.args.extend((partner, tag, math.trunc(count), dt))
            elif op == WAIT or op == TEST:
                trace.args.extend((int(fields[2]), int(fields[3]), int(fields[4])))
        except (ValueError, IndexError):
            return False
        trace.ops.append(op)
        trace.lines.append(number)
        return True

    def parse(self, trace: RankTrace, fields: list[str], number: int) -> None:
        self.where = where = f"line {number} (rank {fields[0]})"
        if len(fields) < 2:
            raise InputError(self.path, where, "a rank but no action", "write 'RANK ACTION [ARGUMENTS]'")
        entry = self.table.get(fields[1])
        if entry is None:
            raise InputError(self.path, where, f"unknown action {fields[1]!r}",
                             "SimGrid 3.32's replay knows: " + ", ".join(sorted(self.table)))
        op, mandatory, handler = entry
        if len(fields) - 2 < mandatory:
            raise InputError(self.path, where,
                             f"{fields[1]} needs {mandatory} argument{'s' if mandatory > 1 else ''}, "
                             f"the line gives {len(fields) - 2}", _FORMS.get(fields[1], "see SimGrid's replay format"))
        self.fields = fields
        self.out = trace.args
        if handler is not None:
            handler(op)
        if op is None:
            rank = int(fields[0])
            self.dropped[rank] = self.dropped.get(rank, 0) + 1
            return
        trace.ops.append(op)
        trace.lines.append(number)

    # ------------------------------------------------------------------ field readers
    def _fail(self, problem: str, fix: str = "") -> None:
        raise InputError(self.path, self.where, f"{self.fields[1]}: {problem}",
                         fix or _FORMS.get(self.fields[1], ""))

    def _number(self, i: int, what: str) -> float:
        token = self.fields[i]
        try:
            value = float(token)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or "_" in token:
            self._fail(f"{what} {token!r} is not a number")
        if value < 0:
            self._fail(f"{what} {token!r} is negative")
        return value

    def _count(self, i: int, what: str = "count") -> float:
        """parse_integer: a number, truncated; at most a C int."""
        value = math.trunc(self._number(i, what))
        if value > MAX_COUNT:
            self._fail(f"{what} {self.fields[i]} is 2^31 or more: SimGrid passes counts as C ints",
                       "split the message")
        return float(value)

    def _integer(self, i: int, what: str) -> int:
        """std::stoi fields: a plain integer here (stoi would read '1e3' as 1)."""
        token = self.fields[i]
        try:
            if "_" in token:
                raise ValueError
            return int(token)
        except ValueError:
            self._fail(f"{what} {token!r} is not an integer")
            raise  # unreachable

    def _rank(self, i: int, what: str) -> float:
        value = self._integer(i, what)
        if not 0 <= value < self.n:
            self._fail(f"{what} {value} is not a rank of this job (0 to {self.n - 1})")
        return float(value)

    def _int_count(self, i: int, what: str) -> float:
        value = self._integer(i, what)
        if value < 0:
            self._fail(f"{what} {value} is negative")
        return float(value)

    def _datatype(self, i: int) -> float:
        if i >= len(self.fields):
            return DEFAULT_DATATYPE
        size = DATATYPE_SIZES.get(self.fields[i])
        if size is None:
            self._fail(f"unknown datatype id {self.fields[i]!r}",
                       "SimGrid's ids go from -1 to 59 (0: double, 1: int, 2: char, 6: byte...)")
        return float(size)

    def _root(self, i: int) -> float:
        return self._rank(i, "root") if i < len(self.fields) else 0.0

    # ------------------------------------------------------------------ actions
    def _init(self, op: int) -> None:
        self.out.append(1.0 if len(self.fields) > 2 else 0.0)

    def _location(self, op: None) -> None:
        self._integer(3, "line number")

    def _amount(self, op: int) -> None:
        self.out.append(self._number(2, "flops" if op == COMPUTE else "duration"))

    def _p2p(self, op: int) -> None:
        out = self.out
        out.append(self._rank(2, "partner"))
        tag = self._integer(3, "tag")
        if op in (RECV, IRECV) and tag == MPI_ANY_TAG:
            self._fail("tag -444 is MPI_ANY_TAG: wildcard receives are not replayed", "give the sender's tag")
        out.append(float(tag))
        token = self.fields[4]
        if op in (RECV, IRECV) and token.startswith("-"):
            self._fail(f"size {token} is negative: SimGrid would probe for the message's size, which joulesim "
                       "does not replay", "give the message's size")
        out.append(self._count(4, "size"))
        out.append(self._datatype(5))

    def _wait(self, op: int) -> None:
        out = self.out
        out.append(float(self._integer(2, "source")))
        out.append(float(self._integer(3, "destination")))
        out.append(float(self._integer(4, "tag")))

    def _bcast(self, op: int) -> None:
        out = self.out
        out.append(self._count(2, "size"))
        out.append(self._root(3))
        out.append(self._datatype(4))

    def _reduce(self, op: int) -> None:
        out = self.out
        out.append(self._count(2, "size"))
        out.append(self._number(3, "flops"))
        out.append(self._root(4))
        out.append(self._datatype(5))

    def _allreduce(self, op: int) -> None:
        out = self.out
        out.append(self._count(2, "size"))
        out.append(self._number(3, "flops"))
        out.append(self._datatype(4))

    def _scan(self, op: int) -> None:
        self._allreduce(op)

    def _alltoall(self, op: int) -> None:
        self._count(3, "receive count")
        self.out.append(self._count(2, "send count"))
        self.out.append(self._datatype(4))
        self.out.append(self._datatype(5))

    def _alltoallv(self, op: int) -> None:
        n = self.n
        self._count(2, "send buffer size")
        self._count(3 + n, "receive buffer size")
        counts = [self._int_count(3 + i, f"send count for rank {i}") for i in range(n)]
        for i in range(n):
            self._int_count(4 + n + i, f"receive count from rank {i}")
        self._datatype(5 + 2 * n)
        self.out.extend(counts)
        self.out.append(self._datatype(4 + 2 * n))

    def _gather(self, op: int) -> None:  # gather and scatter: SCOUNT RCOUNT [ROOT [DT [DT]]]
        self._count(3, "receive count")
        self._datatype(6)
        out = self.out
        out.append(self._count(2, "send count"))
        out.append(self._datatype(5))
        out.append(self._root(4))

    def _allgather(self, op: int) -> None:
        self._count(3, "receive count")
        self._datatype(5)
        self.out.append(self._count(2, "send count"))
        self.out.append(self._datatype(4))

    def _receive_counts(self) -> None:
        for i in range(self.n):
            self._int_count(3 + i, f"receive count from rank {i}")

    def _gatherv(self, op: int) -> None:
        n = self.n
        self._receive_counts()
        self._datatype(5 + n)
        out = self.out
        out.append(self._count(2, "send count"))
        out.append(self._datatype(4 + n))
        out.append(self._root(3 + n))

    def _allgatherv(self, op: int) -> None:
        # GatherVArgParser for allgatherv: what follows the counts depends on the line's length.
        n = self.n
        size = len(self.fields)
        self._receive_counts()
        if size > 3 + 2 * n:
            dt1 = self._datatype(3 + n)
            self._datatype(4 + n)
            displacements = 5 + n
        elif size > 5 + n:
            dt1 = DEFAULT_DATATYPE
            displacements = 3 + n
        else:
            dt1 = self._datatype(3 + n)
            self._datatype(4 + n)
            displacements = 0
        if displacements:
            if displacements + n > size:
                self._fail(f"the line gives datatypes and {size - displacements} of the {n} displacements",
                           "give all N displacements after the datatypes")
            for i in range(n):
                self._integer(displacements + i, f"displacement of rank {i}")
        self.out.append(self._count(2, "send count"))
        self.out.append(dt1)

    def _scatterv(self, op: int) -> None:
        n = self.n
        counts = [self._int_count(2 + i, f"send count for rank {i}") for i in range(n)]
        self._count(2 + n, "receive count")
        self._datatype(5 + n)
        self.out.extend(counts)
        self.out.append(self._datatype(4 + n))
        self.out.append(self._root(3 + n))

    def _reducescatter(self, op: int) -> None:
        n = self.n
        counts = [self._int_count(2 + i, f"receive count of rank {i}") for i in range(n)]
        self.out.extend(counts)
        self.out.append(self._number(2 + n, "flops"))
        self.out.append(self._datatype(3 + n))

    def _sendrecv(self, op: int) -> None:
        out = self.out
        scount = self._count(2, "send count")
        dst = self._rank(3, "destination")
        self._count(4, "receive count")
        src = self._rank(5, "source")
        dt1 = self._datatype(6)
        self._datatype(7)
        out.extend((scount, dst, src, dt1))


_FORMS = {
    "location": "write 'RANK location FILE LINE'",
    "compute": "write 'RANK compute FLOPS'", "sleep": "write 'RANK sleep SECONDS'",
    "send": "write 'RANK send DST TAG COUNT [DATATYPE]'", "isend": "write 'RANK isend DST TAG COUNT [DATATYPE]'",
    "recv": "write 'RANK recv SRC TAG COUNT [DATATYPE]'", "irecv": "write 'RANK irecv SRC TAG COUNT [DATATYPE]'",
    "wait": "write 'RANK wait SRC DST TAG'", "test": "write 'RANK test SRC DST TAG'",
    "bcast": "write 'RANK bcast COUNT [ROOT [DATATYPE]]'",
    "reduce": "write 'RANK reduce COUNT FLOPS [ROOT [DATATYPE]]'",
    "allreduce": "write 'RANK allreduce COUNT FLOPS [DATATYPE]'",
    "alltoall": "write 'RANK alltoall SEND_COUNT RECV_COUNT [DATATYPE [DATATYPE]]'",
    "alltoallv": "write 'RANK alltoallv SEND_BUF SEND_COUNT*N RECV_BUF RECV_COUNT*N [DATATYPE DATATYPE]' (N ranks)",
    "gather": "write 'RANK gather SEND_COUNT RECV_COUNT [ROOT [DATATYPE [DATATYPE]]]'",
    "allgather": "write 'RANK allgather SEND_COUNT RECV_COUNT [DATATYPE [DATATYPE]]'",
    "gatherv": "write 'RANK gatherv SEND_COUNT RECV_COUNT*N [ROOT [DATATYPE [DATATYPE]]]' (N ranks)",
    "allgatherv": "write 'RANK allgatherv SEND_COUNT RECV_COUNT*N [DATATYPE DATATYPE] [DISPLACEMENT*N]' (N ranks)",
    "scatter": "write 'RANK scatter SEND_COUNT RECV_COUNT [ROOT [DATATYPE [DATATYPE]]]'",
    "scatterv": "write 'RANK scatterv SEND_COUNT*N RECV_COUNT [ROOT [DATATYPE [DATATYPE]]]' (N ranks)",
    "reducescatter": "write 'RANK reducescatter RECV_COUNT*N FLOPS [DATATYPE]' (N ranks)",
    "scan": "write 'RANK scan COUNT FLOPS [DATATYPE]'", "exscan": "write 'RANK exscan COUNT FLOPS [DATATYPE]'",
    "sendRecv": "write 'RANK sendRecv SEND_COUNT DST RECV_COUNT SRC DATATYPE DATATYPE'",
}
