"""Batsim's `smpi` job model: replaying SimGrid time-independent traces as SimGrid 3.32 does.

Batsim 4.2.1 (src/jobs_execution.cpp, execute_task for ProfileType::SMPI) starts one actor per
rank, rank r on allocation host `smpi_ranks_to_hosts_mapping[r]` (default: r modulo the job's
requested resources), each running SimGrid's `smpi_replay_run` on its trace, then sending a
4-byte message to the job's own actor, which runs on the first machine of the allocation and
receives those messages one after the other; the job ends with the last one. Everything a rank
does is a SimGrid activity under the ptask_L07 host model: a computation is flops on its host's
CPU, a message is bytes over the route between two hosts (paying the route's latency first),
both shared with everything else by the fair-bottleneck rule of the runner. This module decides
which activities each rank starts and when, reproducing SMPI's semantics:

Messages (src/smpi/mpi/smpi_request.cpp: Request::start, wait, waitall, test; the kernel's
CommImpl::isend / irecv, which start a transfer when a send and a receive match):
- A message of B bytes (count x datatype size) moves B + 16 bytes (Request::start: 16 bytes of
  MPI envelope), from the sender's host to the receiver's, starting when both its send and its
  receive are posted (the later of the two); the receive side finishes with the transfer.
- Sends and receives match per (source, destination, tag), in the order each side posts them
  (Request::match_recv compares the message's sequence number with the receive count of that
  triple, so messages never overtake one another).
- A send of fewer than 65536 bytes (smpi/send-is-detached-thresh; SimGrid compares the size as
  a C int, so a size of 2^31 bytes or more can wrap and count as small) is *detached*: the
  sender never waits for it (send returns at once, wait/waitall on it return at once). A larger
  one is rendezvous: `send` and a wait on an `isend` return when the transfer completes.
  Transfers start the same way in both cases (smpi/async-small-thresh is 0: no eager mailbox).
- The injected overheads smpi/os, smpi/ois, smpi/or are 0 (defaults, Batsim sets none).
- Two ranks on one host exchange over the route SimGrid gives a host to itself (a cluster host:
  up its link and down again; a Full zone: its declared self route, else nothing): the flow is
  (h, h, bytes), and the context must route it so (NetworkTopology.message_route), not as free.
- A receive smaller than the message it matches: SimGrid aborts (MPI_ERR_TRUNCATE, errors are
  fatal): an InputError here (point-to-point receives; collectives' receives are not checked).
- When a rank's actor ends, SimGrid cancels its requests not waited for (ActorImpl::
  cleanup_from_self; a detached send is none of its own): a pending one leaves the mailbox (a
  cancelled send also blocks every later message of its (source, destination, tag), whose
  sequence numbers no longer match); a transfer under way stops and its partner's wait fails
  with a NetworkFailureException, which Batsim catches (smpi_replay_process): that rank never
  reports and the job never ends. Such a failure is an InputError here. The cancellation of a
  rank that ends in an instant comes after the other ranks of that instant ran (SimGrid runs
  the actors of an instant a simcall at a time); the transfer stops if the context's handle has
  a cancel() method, else it runs to its end unused.
- Ranks blocked forever with nothing under way (a send without its receive, a collective
  missing from a trace): SimGrid would stop ("deadlock"); an InputError here, naming each
  blocked rank, its line and what it waits for.

Actions (src/smpi/internals/smpi_replay.cpp, the *Action::kernel functions):
- init: sets the default datatype (MPI_BYTE; MPI_DOUBLE when it has an argument), a global of
  SimGrid's process, set when the action runs (before any init ran: MPI_BYTE here, a crash in
  SimGrid). finalize, comm_size, comm_split, comm_dup, location: nothing.
- compute F: F flops on the rank's host (smpi_execute_flops). sleep S: S seconds, no resource.
- send / recv: post and wait. isend / irecv: post, and keep the request in the rank's
  RequestStorage under the key (source pid - 1, destination pid - 1, tag).
- wait SRC DST TAG: takes the first request stored under the key (SRC, DST, TAG) and waits for
  it; nothing if there is none; an error if the storage is empty ("wait not preceded by any
  irecv or isend"). test SRC DST TAG: takes it likewise, sleeps n x 1e-4 s (smpi/test, n
  growing with each failed test, back to 1 after a success: smpi/grow-injected-times), then
  puts it back at the end of its list, or a null entry if it completed.
  *Under Batsim the keys never match*: the storage files a request under its actors' pids
  minus one, and `wait`/`test` look it up with the trace's rank numbers. smpirun creates the
  rank actors first, so pid - 1 = rank and the lookups succeed; Batsim creates its own actors
  before any rank, so a `wait` or `test` finds nothing and returns at once (checked with
  SimGrid 3.32 running ranks behind other actors). `smpirun_request_keys=True` replays
  smpirun's behaviour instead (for comparisons with `smpirun -replay`).
- waitall: waits for every stored request, then empties the storage.
- After its last action a rank waits for the last request stored under each key (what
  smpi_replay_main's final waitall gets, each key's list overwriting its slot), and ends.
- sendRecv: an isend and an irecv with tag 0, then a waitall (Request::sendrecv); nothing when
  both partners are the rank itself.
- Collectives, as SimGrid's "default" selector runs them (src/smpi/colls/
  smpi_default_selector.cpp, smpi_nbc_impl.cpp and the algorithm files), over MPI_COMM_WORLD
  with their tags (src/smpi/include/private.hpp, COLL_TAG_*); "x -> y: B" is a message of B
  bytes, isend/irecv are posted together and waited together (waitall):
  * barrier (barrier__ompi_basic_linear): each rank r > 0 sends 0 bytes to 0 then receives 0
    bytes from 0; rank 0 receives from 1..N-1 (waitall), then isends to 1..N-1.
  * bcast B root (bcast__binomial_tree): with r' = (r - root) mod N, a rank receives from
    r - m (mod N) where m is the lowest bit set in r', then sends (blocking) to r + m' for
    m' = m/2, m/4, ... 1 (root: m' from the highest power of 2 below N) while r' + m' < N.
  * reduce B F root (reduce__default -> colls::ireduce): every rank but the root isends B to
    the root; the root irecvs from every other rank; then every rank computes F flops
    (ReduceAction::kernel runs the computation on each rank, after the collective).
  * allreduce B F (allreduce__default): reduce to rank 0, bcast from rank 0, then F flops on
    every rank.
  * alltoall S R (alltoall__ompi, the Open MPI decision table on N and S x datatype size):
    basic linear (irecvs from r+1, r+2... and isends to r-1, r-2..., all at once), pairwise
    (N-1 rounds of sendRecv with r XOR i; SimGrid throws when N is not a power of 2) or Bruck
    (ceil(log2 N) sendRecvs of the blocks whose index has bit 2^k, to r + 2^k from r - 2^k).
  * alltoallv (colls::ialltoallv): irecvs from every other rank, isends of S_i to each i.
  * gather / gatherv (colls::igather / igatherv): every rank but the root isends S to the
    root. allgather / allgatherv (colls::iallgather / iallgatherv): every rank isends S to
    and irecvs from every other rank. scatter / scatterv (colls::iscatter / iscatterv): the
    root isends S (scatterv: S_i) to each other rank.
  * reducescatter C_0..C_N-1 F (reduce_scatter__default): equal counts: reduce of sum(C) to
    rank 0, then scatterv of C_i from rank 0; unequal: reduce_scatter__mpich, which picks
    mpich_pair (N-1 sendRecvs, C_dst to r+i from r-i) when sum(C) > 524288, else mpich_rdb
    (recursive doubling with indexed datatypes); then F flops on every rank.
  * scan / exscan B F (colls::scan / exscan): irecvs from every lower rank, isends of B to
    every higher one, then F flops.

Simultaneous events: ready ranks run one after another until they block, in rank order at the
start, then in the order the context calls back. Matching is first come, first served per
(source, destination, tag), so message times do not depend on that order; what does is shared
state SimGrid updates in its own order: the test multiplier (a static of Request::test,
shared by all ranks: per job here, process-wide in SimGrid, and Batsim never tests), the
default datatype (per job here, process-wide in SimGrid), and the cancellations above.

Not replayed (InputError when reading): receives of negative size (SimGrid probes for the
size), wildcard receives (MPI_ANY_TAG), counts of 2^31 or more.

Batsim's job_progress for a killed smpi job (src/protocol.cpp, generate_task_tree: an smpi leaf
has no ptask and no delay start, so it falls to the composed branch with index -1):
{"profile_name": NAME, "current_task_index": -1}.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator, Sequence

from joulesim.inputs.input_error import InputError
from joulesim.simulator.models import fair_bottleneck_kernel
from joulesim.simulator.workload.smpi_traces import (
    ALLGATHER, ALLGATHERV, ALLREDUCE, ALLTOALL, ALLTOALLV, BARRIER, BCAST, COMPUTE, EXSCAN, GATHER,
    GATHERV, INIT, IRECV, ISEND, OP_NAMES, RECV, REDUCE, REDUCESCATTER, SCAN, SCATTER, SCATTERV,
    SEND, SENDRECV, SLEEP, TEST, WAIT, WAITALL, SmpiTraces)

# SimGrid 3.32's values (src/smpi/include/private.hpp, smpi_config.cpp, smpi_request.cpp).
DETACHED_THRESHOLD = 65536  # smpi/send-is-detached-thresh
ENVELOPE_BYTES = 16  # Request::start: payload_size = size + 16
TEST_SLEEP = 1e-4  # smpi/test
TERMINATION_BYTES = 4.0  # Batsim's rank -> job actor message (mbox->put(rank, 4))
TAG_REDUCE = -112
TAG_SCATTER = -223
TAG_SCATTERV = -334
TAG_GATHER = -445
TAG_ALLGATHER = -556
TAG_ALLGATHERV = -667
TAG_BARRIER = -778
TAG_REDUCE_SCATTER = -889
TAG_SCAN = -888
TAG_ALLTOALLV = -1000
TAG_ALLTOALL = -1112
TAG_GATHERV = -2223
TAG_BCAST = -3334
_TAG_NAMES = {TAG_REDUCE: "reduce", TAG_SCATTER: "scatter", TAG_SCATTERV: "scatterv", TAG_GATHER: "gather",
              TAG_ALLGATHER: "allgather", TAG_ALLGATHERV: "allgatherv", TAG_BARRIER: "barrier",
              TAG_REDUCE_SCATTER: "reducescatter", TAG_SCAN: "scan", TAG_ALLTOALLV: "alltoallv",
              TAG_ALLTOALL: "alltoall", TAG_GATHERV: "gatherv", TAG_BCAST: "bcast"}
# Batsim's rank actors are never the first actors: their storage keys (pid - 1) are shifted by
# more than any rank a trace names (see the module docstring).
_BATSIM_KEY_SHIFT = 1 << 40


def compiled_replay_possible(traces: SmpiTraces, smpirun_request_keys: bool = False) -> bool:
    """Whether smpi_replay_compiled.CompiledSmpiReplay can run these traces (same results, in
    compiled code): numba is installed, fewer than 2^15 ranks (its channel keys), and under
    smpirun's request keys no `wait` or `test` (they then find requests: left to SmpiReplay)."""
    if not fair_bottleneck_kernel.AVAILABLE or traces.nb_ranks >= 1 << 15:
        return False
    if smpirun_request_keys:
        return not any(WAIT in trace.ops or TEST in trace.ops for trace in traces.ranks)
    return True


def as_int32(value: int) -> int:
    """static_cast<int> of a size_t, as SimGrid compares a message size to the threshold."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def alltoall_code(n: int, s: int) -> int:
    """alltoall__ompi's choice (smpi_openmpi_selector.cpp) on `n` ranks when each sends `s` bytes
    to each other: 1 linear, 2 pairwise, 3 Bruck. Open MPI's table numbers five algorithms; its
    1, 4 and 5 all run SimGrid's linear one, so only the bounds where the choice changes are
    written. Plain integer code: smpi_replay_kernel compiles this same function."""
    if n == 2:
        if s < 2 or 4 <= s < 16 or 64 <= s < 256 or 4096 <= s < 32768 or s >= 1048576:
            return 2
        return 1
    if n < 8:
        return 2 if 524288 <= s < 1048576 else 1
    if n < 16:
        return 1
    if n < 32:
        return 3 if 4 <= s < 512 else 1
    if n < 64:
        return 3 if s < 512 else 1
    if n < 256:
        if s < 1024:
            return 3
        return 2 if s >= 262144 else 1
    if n < 512:
        if s < 1024:
            return 3
        return 2 if s >= 32768 else 1
    if n < 1024:
        if s < 512:
            return 3
        return 2 if s >= 262144 else 1
    if n < 2048:
        return 3 if s < 512 else 1
    if n < 4096:
        return 3 if s < 1024 else 1
    return 3 if s < 2048 else 1


_ALLTOALL_NAMES = ("", "linear", "pair", "bruck")


def alltoall_algorithm(nb_ranks: int, total_bytes: int) -> str:
    """'linear', 'pair' or 'bruck' (alltoall_code)."""
    return _ALLTOALL_NAMES[alltoall_code(nb_ranks, total_bytes)]


class _Request:
    """One posted send or receive (an MPI_Request)."""

    __slots__ = ("src", "dst", "tag", "size", "recv", "detached", "done", "waiter", "peer", "handle",
                 "failed", "line", "limit")

    def __init__(self, src: int, dst: int, tag: int, size: int, recv: bool, detached: bool, line: int,
                 limit: int | None = None):
        self.src = src
        self.dst = dst
        self.tag = tag
        self.size = size  # bytes (senders; receives move the sender's size)
        self.recv = recv
        self.detached = detached
        self.done = False  # its transfer completed
        self.waiter: _Rank | None = None
        self.peer: _Request | None = None  # the request it matched
        self.handle: Any = None  # the transfer's activity
        self.failed = False  # its transfer was cancelled (its partner's actor ended)
        self.line = line  # of the action that posted it
        self.limit = limit  # a receive's size in the trace (None: not checked)

    def blocks(self) -> bool:
        """Waiting for it takes time (SimGrid: a detached send has no activity to wait on)."""
        return not self.done and (self.recv or not self.detached)

    def what(self) -> str:
        kind = _TAG_NAMES.get(self.tag)
        if kind:
            return f"{kind} message " + (f"from rank {self.src}" if self.recv else f"to rank {self.dst}")
        if self.recv:
            return f"receive from rank {self.src} (tag {self.tag}, line {self.line})"
        return f"send to rank {self.dst} (tag {self.tag}, line {self.line})"

    def describe(self) -> str:
        kind = _TAG_NAMES.get(self.tag)
        tag = f"{kind}'s messages" if kind else f"tag {self.tag}"
        if self.recv:
            return f"a message from rank {self.src} ({tag}) that is never sent"
        return f"rank {self.dst} to receive its message ({tag}), which it never does"


class _Rank:
    __slots__ = ("index", "host", "trace", "program", "store", "pending", "blocking", "pc", "over")

    def __init__(self, index: int, host: int, trace):
        self.index = index
        self.host = host
        self.trace = trace
        self.program: Iterator[None] | None = None
        self.store: dict[tuple[int, int, int], deque] = {}  # SimGrid's RequestStorage
        self.pending: list[_Request] = []  # what it waits for now
        self.blocking = 0  # how many of them have not completed
        self.pc = -1  # the action it runs (index in its trace), len(trace) once past the last
        self.over = False


class SmpiJob:
    """What the two models of an `smpi` profile share (this one and
    smpi_replay_compiled.CompiledSmpiReplay): their arguments, where each rank runs, and
    Batsim's progress entry. `traces` as smpi_traces.load_smpi_traces reads them.

    `rank_executors[r]`: the executor (index in context.hosts) of rank r (Batsim's
    smpi_ranks_to_hosts_mapping); default r modulo the number of hosts. `launcher_host`: the host
    of Batsim's job actor (the allocation's first machine), to which every rank sends its
    4-byte termination message, one after the other; None: the job ends with its last rank."""

    def __init__(self, traces: SmpiTraces, profile_name: str, rank_executors: Sequence[int] | None = None,
                 launcher_host: int | None = None):
        self.traces = traces
        self.profile_name = profile_name
        self.n = traces.nb_ranks
        if rank_executors is not None and len(rank_executors) != self.n:
            raise ValueError(f"{len(rank_executors)} rank executors for {self.n} ranks")
        self.rank_executors = rank_executors
        self.launcher_host = launcher_host
        self.ctx: Any = None

    def progress(self) -> dict[str, Any]:
        return {"profile_name": self.profile_name, "current_task_index": -1}

    def _rank_hosts(self, context) -> list[int]:
        """The host of each rank on the job's `context`."""
        hosts = list(context.hosts)
        if not hosts:
            raise ValueError("an smpi job needs at least one host")
        executors = self.rank_executors if self.rank_executors is not None else [r % len(hosts) for r in range(self.n)]
        return [hosts[executor] for executor in executors]


class SmpiReplay(SmpiJob):
    """JobModel of an `smpi` profile, in Python (SmpiJob gives the arguments).
    `smpirun_request_keys`: wait/test find their requests, as under smpirun (see docstring)."""

    def __init__(self, traces: SmpiTraces, profile_name: str, rank_executors: Sequence[int] | None = None,
                 launcher_host: int | None = None, smpirun_request_keys: bool = False):
        super().__init__(traces, profile_name, rank_executors, launcher_host)
        self.key_shift = 0 if smpirun_request_keys else _BATSIM_KEY_SHIFT
        self.ranks: list[_Rank] = []
        self._channels: dict[tuple[int, int, int], tuple[deque, deque]] = {}
        self._dead: set[tuple[int, int, int]] = set()  # channels whose next message was cancelled
        self._ready: deque[_Rank] = deque()
        self._draining = False
        self._in_flight = 0  # activities started and not completed
        self._default_dt = 1  # MPI_BYTE until an init says otherwise
        self._test_sleeps = 1  # Request::test's static multiplier
        self._terminating: deque[_Rank] = deque()
        self._ending: list[_Rank] = []  # ranks that ended in this instant: their requests to cancel
        self._launcher_busy = False
        self._terminated = 0
        self._finished = False
        self.ended_at: list[float | None] = [None] * self.n  # when each rank's replay ended

    # ------------------------------------------------------------------ JobModel
    def start(self, context) -> None:
        self.ctx = context
        for r, (trace, host) in enumerate(zip(self.traces.ranks, self._rank_hosts(context))):
            rank = _Rank(r, host, trace)
            rank.program = self._run(rank)
            self.ranks.append(rank)
        self._ready.extend(self.ranks)
        self._drain()

    # ------------------------------------------------------------------ scheduling
    def _drain(self) -> None:
        if self._draining:
            return
        self._draining = True
        try:
            ready = self._ready
            while ready:
                while ready:
                    rank = ready.popleft()
                    try:
                        next(rank.program)
                    except StopIteration:
                        self._rank_over(rank)
                # SimGrid runs the actors of one instant a simcall at a time: the others post
                # their requests before an ending actor's are cancelled.
                ending, self._ending = self._ending, []
                for rank in ending:
                    self._cancel_outstanding(rank)
        finally:
            self._draining = False
        if self._in_flight == 0 and not self._finished:
            self._deadlock()

    def _activity_done(self, rank: _Rank) -> None:
        self._in_flight -= 1
        self._ready.append(rank)
        self._drain()

    def _compute(self, rank: _Rank, flops: float) -> None:
        self._in_flight += 1
        self.ctx.execute([(rank.host, flops)], [], lambda: self._activity_done(rank))

    def _sleep(self, rank: _Rank, seconds: float) -> None:
        self._in_flight += 1
        self.ctx.sleep(seconds, lambda: self._activity_done(rank))

    def _rank_over(self, rank: _Rank) -> None:
        rank.over = True
        self.ended_at[rank.index] = self.ctx.now()
        self._ending.append(rank)
        if self.launcher_host is None:
            self._terminated += 1
            if self._terminated == self.n:
                self._finish()
            return
        self._terminating.append(rank)
        self._next_termination()

    def _next_termination(self) -> None:
        if self._launcher_busy or not self._terminating:
            return
        rank = self._terminating.popleft()
        self._launcher_busy = True
        self._in_flight += 1
        self.ctx.execute([], [(rank.host, self.launcher_host, TERMINATION_BYTES)], self._termination_received)

    def _termination_received(self) -> None:
        self._in_flight -= 1
        self._launcher_busy = False
        self._terminated += 1
        if self._terminated == self.n:
            self._finish()
        else:
            self._next_termination()
        self._drain()

    def _finish(self) -> None:
        self._finished = True
        self.ctx.finish()

    def _deadlock(self) -> None:
        blocked = []
        for rank in self.ranks:
            if rank.over:
                continue
            trace = rank.trace
            if rank.pc < len(trace):
                at = f"line {trace.lines[rank.pc]} ({OP_NAMES[trace.ops[rank.pc]]})"
            else:
                at = "the end of its trace (SimGrid then waits for its pending isend/irecv)"
            waiting = next((req for req in rank.pending if req.blocks()), None)
            if waiting is None:
                waits = "nothing"
            elif (waiting.src, waiting.dst, waiting.tag) in self._dead:
                waits = (f"a message from rank {waiting.src} (tag {waiting.tag}) after one that SimGrid cancelled "
                         f"when rank {waiting.src} ended without waiting for it")
            else:
                waits = waiting.describe()
            blocked.append(f"rank {rank.index} at {at} waits for {waits}")
        raise InputError(self.traces.listing, f"smpi profile {self.profile_name!r}",
                         "the ranks' traces deadlock: " + "; ".join(blocked[:4]) +
                         ("; ..." if len(blocked) > 4 else ""),
                         "every send needs a matching receive (same source, destination and tag) in the "
                         "partner's trace, and collectives must appear in every rank's trace")

    # ------------------------------------------------------------------ messages
    def _line(self, rank: int) -> int:
        owner = self.ranks[rank]
        return owner.trace.lines[owner.pc] if 0 <= owner.pc < len(owner.trace) else 0

    def _post_send(self, src: int, dst: int, tag: int, size: int) -> _Request:
        req = _Request(src, dst, tag, size, False, as_int32(size) < DETACHED_THRESHOLD, self._line(src))
        key = (src, dst, tag)
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = (deque(), deque())
        if channel[1] and key not in self._dead:
            self._transfer(req, channel[1].popleft())
        else:
            channel[0].append(req)
        return req

    def _post_recv(self, src: int, dst: int, tag: int, limit: int | None = None) -> _Request:
        req = _Request(src, dst, tag, 0, True, False, self._line(dst), limit)
        key = (src, dst, tag)
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = (deque(), deque())
        if channel[0] and key not in self._dead:
            self._transfer(channel[0].popleft(), req)
        else:
            channel[1].append(req)
        return req

    def _transfer(self, send: _Request, recv: _Request) -> None:
        if recv.limit is not None and recv.limit < send.size:
            receiver = self.ranks[recv.dst]
            raise InputError(receiver.trace.path, f"line {recv.line} (rank {recv.dst})",
                             f"receives at most {recv.limit} bytes from rank {send.src} (tag {send.tag}), whose "
                             f"matching send (its line {send.line}) has {send.size}: SimGrid aborts with "
                             "MPI_ERR_TRUNCATE", "give the receive the sender's size")
        send.peer, recv.peer = recv, send
        self._in_flight += 1
        ranks = self.ranks
        handle = self.ctx.execute(
            [], [(ranks[send.src].host, ranks[send.dst].host, float(send.size + ENVELOPE_BYTES))],
            lambda: self._transferred(send, recv))
        send.handle = recv.handle = handle

    def _transferred(self, send: _Request, recv: _Request) -> None:
        self._in_flight -= 1
        if send.failed:
            self._drain()  # cancelled, but the context could not stop it
            return
        send.peer = recv.peer = None  # (only a pending request's peer matters: no cycle kept)
        for req in (send, recv):
            req.done = True
            rank = req.waiter
            if rank is not None:
                req.waiter = None
                rank.blocking -= 1
                if rank.blocking == 0:
                    rank.pending = []
                    self._ready.append(rank)
        self._drain()

    def _cancel_outstanding(self, rank: _Rank) -> None:
        """SimGrid cancels the activities of an actor that ends (ActorImpl::cleanup_from_self):
        its requests not waited for (a detached send is no activity of its own)."""
        for queue in rank.store.values():
            for req in queue:
                if req is None or not req.blocks() or req.failed:
                    continue
                peer = req.peer
                if peer is None:  # still in the mailbox: removed from it
                    key = (req.src, req.dst, req.tag)
                    channel = self._channels[key]
                    (channel[1] if req.recv else channel[0]).remove(req)
                    req.failed = True
                    if not req.recv:
                        self._dead.add(key)  # the receiver waits for this message's number forever
                    continue
                req.failed = peer.failed = True
                cancel = getattr(req.handle, "cancel", None)
                if cancel is not None:
                    cancel()
                    self._in_flight -= 1
                partner = peer.waiter
                if partner is not None:
                    self._failure(partner, peer)

    def _failure(self, rank: _Rank, req: _Request) -> None:
        other = req.src if req.recv else req.dst
        trace = rank.trace
        where = f"line {trace.lines[rank.pc]}" if rank.pc < len(trace) else "after its last line"
        raise InputError(trace.path, f"{where} (rank {rank.index})",
                         f"the {req.what()} failed: rank {other} ended before the transfer completed "
                         "(SimGrid cancels the requests an actor has not waited for when it ends); Batsim 4.2.1 "
                         "catches the failure and this job never ends",
                         f"make rank {other} wait for its requests (waitall) before its trace ends: under Batsim, "
                         "the traces' wait and test actions find no request and wait for nothing")

    def _must_wait(self, rank: _Rank, requests: list) -> bool:
        """Register `rank` as waiting for `requests` (None entries are null requests); True if it
        has to yield until they complete."""
        pending = [req for req in requests if req is not None and req.blocks()]
        for req in pending:
            if req.failed:
                self._failure(rank, req)
            req.waiter = rank
        rank.pending = pending
        rank.blocking = len(pending)
        return bool(pending)

    def _store(self, rank: _Rank, req: _Request) -> None:
        shift = self.key_shift
        key = (req.src + shift, req.dst + shift, req.tag)
        queue = rank.store.get(key)
        if queue is None:
            queue = rank.store[key] = deque()
        elif shift and len(queue) >= 64:
            # Under Batsim nothing is ever taken from a list: only its last request (the final
            # wait) and the ones still to complete (waitall, cancellation) matter. Keeps memory
            # bounded when traces wait (for nothing) after every isend.
            kept = [r for r in queue if r.blocks()]
            if queue[-1] not in kept:
                kept.append(queue[-1])
            queue.clear()
            queue.extend(kept)
        queue.append(req)

    def _send(self, rank: _Rank, dst: int, tag: int, size: int) -> Iterator[None]:
        req = self._post_send(rank.index, dst, tag, size)
        if self._must_wait(rank, [req]):
            yield

    def _recv(self, rank: _Rank, src: int, tag: int) -> Iterator[None]:
        req = self._post_recv(src, rank.index, tag)
        if self._must_wait(rank, [req]):
            yield

    def _waitall(self, rank: _Rank, requests: list) -> Iterator[None]:
        if self._must_wait(rank, requests):
            yield

    def _sendrecv(self, rank: _Rank, dst: int, size: int, src: int, tag: int) -> Iterator[None]:
        me = rank.index
        if dst == me and src == me:
            return  # Request::sendrecv copies locally
        requests = [self._post_send(me, dst, tag, size), self._post_recv(src, me, tag)]
        if self._must_wait(rank, requests):
            yield

    def _size(self, count: float, dt: float) -> int:
        return int(count) * (int(dt) if dt >= 0 else self._default_dt)

    # ------------------------------------------------------------------ the replay
    def _run(self, rank: _Rank) -> Iterator[None]:
        trace = rank.trace
        ops = trace.ops
        args = trace.args
        me = rank.index
        c = 0
        for i in range(len(ops)):
            rank.pc = i
            op = ops[i]
            if op == COMPUTE:
                flops = args[c]
                c += 1
                if flops > 0:
                    self._compute(rank, flops)
                    yield
            elif op == SEND or op == ISEND:
                partner, tag = int(args[c]), int(args[c + 1])
                req = self._post_send(me, partner, tag, self._size(args[c + 2], args[c + 3]))
                c += 4
                if op == ISEND:
                    self._store(rank, req)
                elif self._must_wait(rank, [req]):
                    yield
            elif op == RECV or op == IRECV:
                partner, tag = int(args[c]), int(args[c + 1])
                req = self._post_recv(partner, me, tag, self._size(args[c + 2], args[c + 3]))
                c += 4
                if op == IRECV:
                    self._store(rank, req)
                elif self._must_wait(rank, [req]):
                    yield
            elif op == WAIT or op == TEST:
                key = (int(args[c]), int(args[c + 1]), int(args[c + 2]))
                c += 3
                if op == WAIT and not rank.store:
                    raise InputError(trace.path, f"line {trace.lines[i]} (rank {me})",
                                     "wait: no isend or irecv is pending (SimGrid aborts: 'action wait not "
                                     "preceded by any irecv or isend')", "remove the wait, or post the request first")
                queue = rank.store.get(key)
                if queue is None:
                    continue
                req = queue.popleft()
                if not queue:
                    del rank.store[key]
                if req is None:
                    continue
                if op == WAIT:
                    if self._must_wait(rank, [req]):
                        yield
                else:
                    yield from self._test(rank, req, key)
            elif op == WAITALL:
                if rank.store:
                    requests = [req for queue in rank.store.values() for req in queue]
                    if self._must_wait(rank, requests):
                        yield
                    rank.store.clear()
            elif op == SLEEP:
                seconds = args[c]
                c += 1
                if seconds > 0:
                    self._sleep(rank, seconds)
                    yield
            elif op == INIT:
                self._default_dt = 8 if args[c] else 1
                c += 1
            else:
                c = yield from self._collective(rank, op, args, c)
        rank.pc = len(ops)
        if rank.store:  # smpi_replay_main: one request per key, the last one stored
            requests = [queue[-1] for queue in rank.store.values()]
            if self._must_wait(rank, requests):
                yield

    def _test(self, rank: _Rank, req: _Request, key: tuple[int, int, int]) -> Iterator[None]:
        self._sleep(rank, self._test_sleeps * TEST_SLEEP)
        yield
        if not req.blocks():  # completed, or a detached send
            self._test_sleeps = 1
            shift = self.key_shift
            null_key = (key[0] + shift, key[1] + shift, key[2])
            rank.store.setdefault(null_key, deque()).append(None)
        else:
            self._test_sleeps += 1
            self._store(rank, req)

    def _collective(self, rank: _Rank, op: int, args, c: int) -> Iterator[None]:
        """Run collective action `op` whose arguments start at args[c]; returns the next cursor."""
        n = self.n
        me = rank.index
        if op == BARRIER:
            yield from self._barrier(rank)
            return c
        if op == BCAST:
            yield from self._bcast(rank, self._size(args[c], args[c + 2]), int(args[c + 1]))
            return c + 3
        if op == REDUCE or op == ALLREDUCE:
            if op == REDUCE:
                size, flops, root, c = self._size(args[c], args[c + 3]), args[c + 1], int(args[c + 2]), c + 4
            else:
                size, flops, root, c = self._size(args[c], args[c + 2]), args[c + 1], 0, c + 3
            yield from self._reduce(rank, size, root)
            if op == ALLREDUCE:
                yield from self._bcast(rank, size, 0)
            if flops != 0:
                self._compute(rank, flops)
                yield
            return c
        if op == ALLTOALL:
            count, dt1, dt2 = int(args[c]), args[c + 1], args[c + 2]
            yield from self._alltoall(rank, count, self._size(1, dt1), self._size(1, dt2))
            return c + 3
        if op == ALLTOALLV:
            dt = args[c + n]
            sizes = [self._size(args[c + i], dt) for i in range(n)]
            requests = [self._post_recv(i, me, TAG_ALLTOALLV) for i in range(n) if i != me]
            requests += [self._post_send(me, i, TAG_ALLTOALLV, sizes[i]) for i in range(n) if i != me]
            yield from self._waitall(rank, requests)
            return c + n + 1
        if op in (GATHER, GATHERV, SCATTER):
            size, root = self._size(args[c], args[c + 1]), int(args[c + 2])
            tag = {GATHER: TAG_GATHER, GATHERV: TAG_GATHERV, SCATTER: TAG_SCATTER}[op]
            if op == SCATTER:
                yield from self._scatter(rank, [size] * n, root, tag)
            elif me != root:
                yield from self._waitall(rank, [self._post_send(me, root, tag, size)])
            else:
                yield from self._waitall(rank, [self._post_recv(i, me, tag) for i in range(n) if i != root])
            return c + 3
        if op == ALLGATHER or op == ALLGATHERV:
            size = self._size(args[c], args[c + 1])
            tag = TAG_ALLGATHER if op == ALLGATHER else TAG_ALLGATHERV
            requests = []
            for other in range(n):
                if other != me:
                    requests.append(self._post_send(me, other, tag, size))
                    requests.append(self._post_recv(other, me, tag))
            yield from self._waitall(rank, requests)
            return c + 2
        if op == SCATTERV:
            dt, root = args[c + n], int(args[c + n + 1])
            yield from self._scatter(rank, [self._size(args[c + i], dt) for i in range(n)], root, TAG_SCATTERV)
            return c + n + 2
        if op == REDUCESCATTER:
            counts = [int(args[c + i]) for i in range(n)]
            flops, dt = args[c + n], args[c + n + 1]
            yield from self._reduce_scatter(rank, counts, self._size(1, dt))
            if flops != 0:
                self._compute(rank, flops)
                yield
            return c + n + 2
        if op == SCAN or op == EXSCAN:
            size, flops = self._size(args[c], args[c + 2]), args[c + 1]
            requests = [self._post_recv(i, me, TAG_SCAN) for i in range(me)]
            requests += [self._post_send(me, i, TAG_SCAN, size) for i in range(me + 1, n)]
            yield from self._waitall(rank, requests)
            if flops != 0:
                self._compute(rank, flops)
                yield
            return c + 3
        if op == SENDRECV:
            size, dst, src = self._size(args[c], args[c + 3]), int(args[c + 1]), int(args[c + 2])
            yield from self._sendrecv(rank, dst, size, src, 0)
            return c + 4
        raise AssertionError(f"opcode {op} has no replay")

    # ------------------------------------------------------------------ collective algorithms
    def _barrier(self, rank: _Rank) -> Iterator[None]:
        me = rank.index
        if me > 0:
            yield from self._send(rank, 0, TAG_BARRIER, 0)
            yield from self._recv(rank, 0, TAG_BARRIER)
        else:
            yield from self._waitall(rank, [self._post_recv(i, 0, TAG_BARRIER) for i in range(1, self.n)])
            yield from self._waitall(rank, [self._post_send(0, i, TAG_BARRIER, 0) for i in range(1, self.n)])

    def _bcast(self, rank: _Rank, size: int, root: int) -> Iterator[None]:
        n, me = self.n, rank.index
        relative = (me - root) % n
        mask = 1
        while mask < n:
            if relative & mask:
                yield from self._recv(rank, (me - mask) % n, TAG_BCAST)
                break
            mask <<= 1
        mask >>= 1
        while mask > 0:
            if relative + mask < n:
                yield from self._send(rank, (me + mask) % n, TAG_BCAST, size)
            mask >>= 1

    def _reduce(self, rank: _Rank, size: int, root: int) -> Iterator[None]:
        me = rank.index
        if me != root:
            yield from self._waitall(rank, [self._post_send(me, root, TAG_REDUCE, size)])
        else:
            yield from self._waitall(rank, [self._post_recv(i, me, TAG_REDUCE) for i in range(self.n) if i != root])

    def _scatter(self, rank: _Rank, sizes: list[int], root: int, tag: int) -> Iterator[None]:
        me = rank.index
        if me != root:
            yield from self._waitall(rank, [self._post_recv(root, me, tag)])
        else:
            yield from self._waitall(rank, [self._post_send(me, i, tag, sizes[i]) for i in range(self.n) if i != root])

    def _alltoall(self, rank: _Rank, count: int, dt1: int, dt2: int) -> Iterator[None]:
        n, me = self.n, rank.index
        algorithm = alltoall_algorithm(n, dt1 * count)
        if algorithm == "linear":
            if n > 1:
                requests = [self._post_recv((me + k) % n, me, TAG_ALLTOALL) for k in range(1, n)]
                requests += [self._post_send(me, (me - k) % n, TAG_ALLTOALL, count * dt1) for k in range(1, n)]
                yield from self._waitall(rank, requests)
        elif algorithm == "pair":
            if n & (n - 1):
                raise InputError(self.traces.listing, f"smpi profile {self.profile_name!r}, rank {me}, line "
                                 f"{rank.trace.lines[rank.pc]}",
                                 f"alltoall of {count * dt1} bytes per rank on {n} ranks: SimGrid 3.32 picks its "
                                 "pairwise algorithm, which throws when the number of ranks is not a power of 2",
                                 "change the message size or the number of ranks")
            for i in range(n):
                peer = me ^ i
                yield from self._sendrecv(rank, peer, count * dt1, peer, TAG_ALLTOALL)
        else:  # bruck: only the rounds between distinct ranks move data
            pack_limit = count * n * dt1  # MPI_Pack_size of the whole send buffer
            pof2 = 1
            while pof2 < n:
                blocks = sum(1 for block in range(1, n) if block & pof2)
                packed = blocks * count * dt2
                if packed > pack_limit:
                    raise InputError(self.traces.listing, f"smpi profile {self.profile_name!r}, rank {me}, line "
                                     f"{rank.trace.lines[rank.pc]}",
                                     "alltoall whose receive datatype is larger than its send datatype: SimGrid "
                                     "3.32's Bruck algorithm packs more than its buffer holds and aborts (MPI_Pack)",
                                     "give the alltoall the same datatype twice")
                yield from self._sendrecv(rank, (me + pof2) % n, packed, (me - pof2) % n, TAG_ALLTOALL)
                pof2 *= 2

    def _reduce_scatter(self, rank: _Rank, counts: list[int], dt: int) -> Iterator[None]:
        n, me = self.n, rank.index
        if all(count == counts[0] for count in counts):
            yield from self._reduce(rank, sum(counts) * dt, 0)
            yield from self._scatter(rank, [count * dt for count in counts], 0, TAG_SCATTERV)
        elif sum(counts) > 524288:  # reduce_scatter__mpich -> mpich_pair
            for i in range(1, n):
                src, dst = (me - i) % n, (me + i) % n
                yield from self._sendrecv(rank, dst, counts[dst] * dt, src, TAG_REDUCE_SCATTER)
        else:  # mpich_rdb
            prefix = [0]
            for count in counts:
                prefix.append(prefix[-1] + count)

            def outside(root: int, mask: int) -> int:
                """Elements of the blocks outside [root, root + mask): the indexed datatype's size."""
                return prefix[min(root, n)] + (prefix[n] - prefix[min(root + mask, n)])

            mask, i = 1, 0
            while mask < n:
                dst = me ^ mask
                dst_tree_root = (dst >> i) << i
                my_tree_root = (me >> i) << i
                send_elements = outside(my_tree_root, mask)
                recv_elements = outside(dst_tree_root, mask)
                if dst < n:
                    yield from self._sendrecv(rank, dst, send_elements * dt, dst, TAG_REDUCE_SCATTER)
                if dst_tree_root + mask > n:
                    completed = n - my_tree_root - mask
                    k = mask.bit_length() - 1
                    tmp_mask = mask >> 1
                    while tmp_mask:
                        peer = me ^ tmp_mask
                        tree_root = (me >> k) << k
                        if peer > me and me < tree_root + completed <= peer:
                            yield from self._send(rank, peer, TAG_REDUCE_SCATTER, recv_elements * dt)
                        elif peer < me and peer < tree_root + completed <= me:
                            yield from self._recv(rank, peer, TAG_REDUCE_SCATTER)
                        tmp_mask >>= 1
                        k -= 1
                mask <<= 1
                i += 1

