"""smpi_replay.py's rank programs interpreted in compiled code (numba), state in arrays.

SmpiReplay runs each rank as a Python generator and keeps requests, mailboxes and request lists
as objects: ~25 us of Python per action, a third of an SMPI replay's time. Here the same
semantics (see smpi_replay.py's docstring, which this file follows point by point) run over
arrays, one compiled call per completion event of the job; what the job asks of the runner
(computations, sleeps, transfers, cancellations, the end) comes back as a list of commands,
which smpi_replay_compiled.py carries out in order, as SmpiReplay would have done them in its
drain. Anything that makes SmpiReplay raise comes back as an error code with what the message
needs; smpi_replay_compiled.py writes the same message.

State (`State` below, a tuple of arrays so that one argument carries it):
- ranks (R, one row per rank): host, current action, its arguments, a continuation (what to do
  when woken), collective registers, how many requests it waits for, its request list (a linked
  list of requests in insertion order, with its epoch: a waitall empties it);
- requests (Q, one row per posted MPI request, recycled through a free stack once done and no
  longer listed): endpoints, tag, size, flags, waiter, peer, channel, its list links;
- channels (C, one row per (source, destination, tag), found through an int_index_kernel index): the queues of
  unposted sends and receives (linked through the requests), `dead` after a cancelled send, and
  per side of the request lists the key's group number and last request in the current epoch;
- G: counters (in flight, default datatype, ready queue, terminations, commands...).

A request list's order (SimGrid's RequestStorage: keys in first-insertion order, each key's
requests in order) matters only to which request an error names and to the final wait (the
last request of each key), so requests carry their group and insertion numbers instead of being
kept in per-key queues; dropping requests that no longer block and are not the last of their key
(to bound memory, as SmpiReplay does per key) changes nothing either.

The arrays grow from Python: a call stops before an action whose posts could overflow them
(status GROW) and continues where it stopped once they are larger.
"""

from __future__ import annotations

import numpy as np

from joulesim.simulator.models import int_index_kernel
from joulesim.simulator.models.fair_bottleneck_kernel import AVAILABLE, njit
from joulesim.simulator.models.smpi_replay import (  # SimGrid 3.32's values, and as_int32, alltoall_code
    DETACHED_THRESHOLD, ENVELOPE_BYTES, TAG_ALLGATHER, TAG_ALLGATHERV, TAG_ALLTOALL, TAG_ALLTOALLV, TAG_BARRIER,
    TAG_BCAST, TAG_GATHER, TAG_GATHERV, TAG_REDUCE, TAG_REDUCE_SCATTER, TAG_SCAN, TAG_SCATTER, TAG_SCATTERV,
    alltoall_code, as_int32)
from joulesim.simulator.workload.smpi_traces import (
    ALLGATHER, ALLGATHERV, ALLREDUCE, ALLTOALL, ALLTOALLV, BARRIER, BCAST, COMPUTE, EXSCAN, GATHER, GATHERV, INIT,
    IRECV, ISEND, RECV, REDUCE, REDUCESCATTER, SCAN, SCATTER, SCATTERV, SEND, SENDRECV, SLEEP, TEST, WAIT, WAITALL)

__all__ = ["AVAILABLE", "new_state", "run"]

if AVAILABLE:
    from numba import types

    # One signature per function (compiled at import, or loaded from numba's cache): literal
    # arguments (tags, flags) would otherwise make a specialization per call site.
    _SIGNATURE_TYPES = {
        "I": types.int64, "F": types.float64, "B": types.boolean, "NONE": types.none,
        "A1": types.Array(types.int64, 1, "C"), "A2": types.Array(types.int64, 2, "C"),
        "F1": types.Array(types.float64, 1, "C"), "TRIPLE": types.UniTuple(types.int64, 3),
        "DICT": types.Array(types.int64, 2, "C"),  # an int_index_kernel index
    }
    _SIGNATURE_TYPES["STATE"] = types.Tuple((  # new_state's arrays, in order
        _SIGNATURE_TYPES["A2"], _SIGNATURE_TYPES["F1"], _SIGNATURE_TYPES["A2"], _SIGNATURE_TYPES["A1"],
        _SIGNATURE_TYPES["A2"], _SIGNATURE_TYPES["A1"], types.Array(types.uint8, 1, "C"), _SIGNATURE_TYPES["A1"],
        _SIGNATURE_TYPES["F1"], _SIGNATURE_TYPES["A1"], _SIGNATURE_TYPES["A1"], _SIGNATURE_TYPES["A1"],
        _SIGNATURE_TYPES["A1"], _SIGNATURE_TYPES["A2"], _SIGNATURE_TYPES["F1"]))


# The kernel's functions and their signatures, compiled (or loaded from numba's cache) once all
# are defined (_load_or_compile, at the end): `entry` ones are called from Python, the others
# only from compiled code.
_ENTRIES: list = []
_INTERNAL: list = []


def _compiled(signature: str, entry: bool = False):
    """njit with the signature written with _SIGNATURE_TYPES' names, e.g. "I(STATE, I)". Only
    `entry` functions get a Python wrapper (less to compile and load)."""
    if not AVAILABLE:
        return lambda function: function

    def decorate(function):
        dispatcher = njit(cache=True, nogil=True, no_cpython_wrapper=not entry)(function)
        (_ENTRIES if entry else _INTERNAL).append((dispatcher, eval(signature, {}, _SIGNATURE_TYPES)))
        return dispatcher

    return decorate


def _in_cache(dispatcher, signature) -> bool:
    """Whether numba's cache holds the function for `signature` (its index, as
    Dispatcher.compile looks it up; numba internals: any surprise means no)."""
    try:
        cache = dispatcher._cache
        return cache._index_key(signature, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 (another numba version: compile as if nothing were cached)
        return False


def _load_or_compile() -> None:
    """Entries found in numba's cache are loaded alone: their code holds the functions they
    call, which then need no loading (a third of a second per 20 functions). Otherwise every
    function is compiled with its signature, callees first (a signature also keeps numba from
    compiling a function again for each constant argument at its call sites)."""
    if not all(_in_cache(dispatcher, signature) for dispatcher, signature in _ENTRIES):
        for dispatcher, signature in _INTERNAL:
            dispatcher.compile(signature)
            dispatcher.disable_compile()
    for dispatcher, signature in _ENTRIES:
        dispatcher.compile(signature)
        dispatcher.disable_compile()


# Rank columns.
R_HOST, R_PC, R_ARG, R_NEXTARG, R_CONT, R_PH, R_K1, R_K2, R_K3, R_K4, R_K5, R_BLOCKING, R_OVER, R_HEAD, R_TAIL, \
    R_COUNT, R_EPOCH, R_GROUPS, R_ORD, R_PRUNE, R_WAITSEQ = range(21)
R_FIELDS = 21
# Continuations: what a rank does when woken.
CONT_NEXT, CONT_CLEAR, CONT_FINAL, CONT_COLLECTIVE = range(4)
# Request columns; flags.
Q_SRC, Q_DST, Q_TAG, Q_SIZE, Q_FLAGS, Q_WAITER, Q_PEER, Q_CHAN, Q_PC, Q_LIMIT, Q_NEXT, Q_SNEXT, Q_GROUP, Q_ORD, \
    Q_WAITSEQ = range(15)
Q_FIELDS = 15
F_RECV, F_DETACHED, F_DONE, F_FAILED, F_STORED = 1, 2, 4, 8, 16
# Channel columns (S: the side of the request lists where the sender keeps its isends and a
# rank its requests to itself; R: where the receiver keeps its irecvs).
C_SHEAD, C_STAIL, C_RHEAD, C_RTAIL, C_DEAD, C_SGROUP, C_SEPOCH, C_SLAST, C_RGROUP, C_REPOCH, C_RLAST, C_SRC, C_DST, \
    C_TAG = range(14)
C_FIELDS = 14
# Globals.
G_N, G_IN_FLIGHT, G_DT, G_READY_HEAD, G_READY_SIZE, G_TERM_HEAD, G_TERM_SIZE, G_BUSY, G_TERMINATED, G_FINISHED, \
    G_LAUNCHER, G_FREE_TOP, G_CHANNELS, G_NCMD, G_ENDING, G_ENDING_DONE, G_ERROR, G_ERR_A, G_ERR_B, G_ERR_C, \
    G_TOKEN_POS, G_IN_DRAIN = range(22)
G_FIELDS = 22
# Commands (what the runner is asked, in order): kind, a, b, token; amount in the float column.
CMD_COMPUTE, CMD_SLEEP, CMD_TRANSFER, CMD_TERMINATION, CMD_CANCEL, CMD_FINISH = range(6)
# Statuses (a rank's run, a collective's step, a call).
OK, BLOCKED, ENDED, GROW, ERROR = range(5)
# Errors (G_ERROR) and their details (G_ERR_A.. C).
ERR_WAIT_EMPTY, ERR_TRUNCATE, ERR_FAILURE, ERR_DEADLOCK, ERR_PAIRWISE, ERR_BRUCK = range(1, 7)
TERMINATION_TOKEN = -1  # tokens: >= 0 a transfer (its send request), -1 a termination, -2 - r rank r's activity


def new_state(nb_ranks: int, hosts: np.ndarray, ops: np.ndarray, op_start: np.ndarray, args: np.ndarray,
              arg_start: np.ndarray, launcher: int) -> tuple:
    """The state of a job about to start (rank r on host hosts[r]; launcher -1: no job actor)."""
    ranks = np.zeros((nb_ranks, R_FIELDS), dtype=np.int64)
    ranks[:, R_HOST] = hosts
    ranks[:, R_PC] = -1
    ranks[:, R_NEXTARG] = arg_start[:-1]
    ranks[:, R_HEAD] = -1
    ranks[:, R_TAIL] = -1
    ranks[:, R_EPOCH] = 1
    ranks[:, R_PRUNE] = 256
    ended = np.full(nb_ranks, np.nan)
    requests = np.zeros((0, Q_FIELDS), dtype=np.int64)
    free = np.zeros(0, dtype=np.int64)
    channels = np.zeros((0, C_FIELDS), dtype=np.int64)
    globals_ = np.zeros(G_FIELDS, dtype=np.int64)
    globals_[G_N] = nb_ranks
    globals_[G_DT] = 1
    globals_[G_LAUNCHER] = launcher
    globals_[G_READY_SIZE] = nb_ranks
    ready = np.arange(nb_ranks, dtype=np.int64)  # a ring: every rank once at most
    terminating = np.zeros(nb_ranks, dtype=np.int64)
    ending = np.zeros(nb_ranks, dtype=np.int64)
    commands = np.zeros((0, 4), dtype=np.int64)
    amounts = np.zeros(0)
    return (ranks, ended, requests, free, channels, globals_, ops, op_start, args, arg_start, ready, terminating,
            ending, commands, amounts)


# smpi_replay's own integer functions, compiled for the kernel (one definition serves both).
_int32 = _compiled("I(I)")(as_int32)
alltoall_algorithm = _compiled("I(I, I)", entry=True)(alltoall_code)


@_compiled("I(I, I)")
def stored_arguments(op, n):
    if op == INIT or op == COMPUTE or op == SLEEP:
        return 1
    if op == SEND or op == ISEND or op == RECV or op == IRECV or op == REDUCE or op == SENDRECV:
        return 4
    if op == TEST or op == WAIT or op == BCAST or op == ALLREDUCE or op == ALLTOALL or op == GATHER or \
            op == GATHERV or op == SCATTER or op == SCAN or op == EXSCAN:
        return 3
    if op == ALLGATHER or op == ALLGATHERV:
        return 2
    if op == WAITALL or op == BARRIER:
        return 0
    if op == ALLTOALLV:
        return n + 1
    return n + 2  # SCATTERV, REDUCESCATTER


# ---------------------------------------------------------------------- room and commands
@_compiled("B(STATE, I)")
def _room(S, posts):
    """Whether `posts` requests, channels and commands (+2) fit without growing."""
    channels, G, commands = S[4], S[5], S[13]
    return (G[G_FREE_TOP] >= posts and channels.shape[0] - G[G_CHANNELS] >= posts
            and commands.shape[0] - G[G_NCMD] >= posts + 2)


@_compiled("NONE(STATE, I, I, I, I, F)")
def _command(S, kind, a, b, token, amount):
    G, commands, amounts = S[5], S[13], S[14]
    k = G[G_NCMD]
    commands[k, 0] = kind
    commands[k, 1] = a
    commands[k, 2] = b
    commands[k, 3] = token
    amounts[k] = amount
    G[G_NCMD] = k + 1


@_compiled("I(STATE, I, I, I, I)")
def _error(S, kind, a, b, c):
    G = S[5]
    G[G_ERROR] = kind
    G[G_ERR_A] = a
    G[G_ERR_B] = b
    G[G_ERR_C] = c
    return ERROR


# ---------------------------------------------------------------------- requests and channels
@_compiled("I(STATE, DICT, I, I, I)")
def _channel(S, chan_of, src, dst, tag):
    channels, G = S[4], S[5]
    n = G[G_N]
    key = ((src * n + dst) << 33) + (tag + (1 << 32))
    chan = int_index_kernel.get(chan_of, key)
    if chan < 0:
        chan = G[G_CHANNELS]
        G[G_CHANNELS] = chan + 1
        int_index_kernel.put(chan_of, key, chan)
        row = channels[chan]
        row[:] = 0
        row[C_SHEAD] = row[C_STAIL] = row[C_RHEAD] = row[C_RTAIL] = -1
        row[C_SLAST] = row[C_RLAST] = -1
        row[C_SRC] = src
        row[C_DST] = dst
        row[C_TAG] = tag
    return chan


@_compiled("B(A2, I)")
def _blocks(requests, q):
    flags = requests[q, Q_FLAGS]
    return (flags & F_DONE) == 0 and ((flags & F_RECV) != 0 or (flags & F_DETACHED) == 0)


@_compiled("I(STATE, I, I, I, I, I, I, I, I)")
def _new_request(S, src, dst, tag, size, flags, pc, limit, chan):
    requests, free, G = S[2], S[3], S[5]
    top = G[G_FREE_TOP] - 1
    G[G_FREE_TOP] = top
    q = free[top]
    row = requests[q]
    row[Q_SRC] = src
    row[Q_DST] = dst
    row[Q_TAG] = tag
    row[Q_SIZE] = size
    row[Q_FLAGS] = flags
    row[Q_WAITER] = -1
    row[Q_PEER] = -1
    row[Q_CHAN] = chan
    row[Q_PC] = pc
    row[Q_LIMIT] = limit
    row[Q_NEXT] = -1
    row[Q_SNEXT] = -1
    row[Q_GROUP] = 0
    row[Q_ORD] = 0
    row[Q_WAITSEQ] = 0
    return q


@_compiled("NONE(STATE, I)")
def _release(S, q):
    S[3][S[5][G_FREE_TOP]] = q
    S[5][G_FREE_TOP] += 1


@_compiled("NONE(A2, A2, I, I, I, I)")
def _enqueue(requests, channels, chan, head, tail, q):
    last = channels[chan, tail]
    if last < 0:
        channels[chan, head] = q
    else:
        requests[last, Q_NEXT] = q
    channels[chan, tail] = q
    requests[q, Q_NEXT] = -1


@_compiled("I(A2, A2, I, I, I)")
def _dequeue(requests, channels, chan, head, tail):
    q = channels[chan, head]
    nxt = requests[q, Q_NEXT]
    channels[chan, head] = nxt
    if nxt < 0:
        channels[chan, tail] = -1
    return q


@_compiled("NONE(STATE, I, I, I)")
def _wait_for(S, r, q, seq):
    """Rank r waits for request q (if it blocks)."""
    requests, ranks = S[2], S[0]
    if _blocks(requests, q):
        requests[q, Q_WAITER] = r
        requests[q, Q_WAITSEQ] = seq
        ranks[r, R_BLOCKING] += 1


@_compiled("I(STATE, I, I)")
def _transfer(S, send, recv):
    requests, ranks, G = S[2], S[0], S[5]
    limit = requests[recv, Q_LIMIT]
    if limit >= 0 and limit < requests[send, Q_SIZE]:
        return _error(S, ERR_TRUNCATE, send, recv, 0)
    requests[send, Q_PEER] = recv
    requests[recv, Q_PEER] = send
    G[G_IN_FLIGHT] += 1
    _command(S, CMD_TRANSFER, ranks[requests[send, Q_SRC], R_HOST], ranks[requests[send, Q_DST], R_HOST], send,
             float(requests[send, Q_SIZE] + ENVELOPE_BYTES))
    return OK


@_compiled("I(STATE, DICT, I, I, I, I, B, I, I)")
def _post(S, chan_of, src, dst, tag, size, recv, limit, waiter):
    """A send (recv False) of `size` bytes, or a receive of at most `limit` (-1: unchecked),
    matched at once with the oldest post of the other side; `waiter` >= 0 waits for it.
    Returns the request, or -1 after an error."""
    requests, channels, ranks = S[2], S[4], S[0]
    chan = _channel(S, chan_of, src, dst, tag)
    if recv:
        q = _new_request(S, src, dst, tag, 0, F_RECV, ranks[dst, R_PC], limit, chan)
        if channels[chan, C_SHEAD] >= 0 and channels[chan, C_DEAD] == 0:
            if _transfer(S, _dequeue(requests, channels, chan, C_SHEAD, C_STAIL), q) == ERROR:
                return -1
        else:
            _enqueue(requests, channels, chan, C_RHEAD, C_RTAIL, q)
    else:
        flags = F_DETACHED if _int32(size) < DETACHED_THRESHOLD else 0
        q = _new_request(S, src, dst, tag, size, flags, ranks[src, R_PC], -1, chan)
        if channels[chan, C_RHEAD] >= 0 and channels[chan, C_DEAD] == 0:
            if _transfer(S, q, _dequeue(requests, channels, chan, C_RHEAD, C_RTAIL)) == ERROR:
                return -1
        else:
            _enqueue(requests, channels, chan, C_SHEAD, C_STAIL, q)
    if waiter >= 0:
        seq = ranks[waiter, R_WAITSEQ]
        ranks[waiter, R_WAITSEQ] = seq + 1
        _wait_for(S, waiter, q, seq)
    return q


# ---------------------------------------------------------------------- request lists
@_compiled("TRIPLE(A2, I, I)")
def _side(requests, q, r):
    """The channel columns (group, epoch, last) of q's key in rank r's list."""
    if (requests[q, Q_FLAGS] & F_RECV) != 0 and requests[q, Q_SRC] != requests[q, Q_DST]:
        return C_RGROUP, C_REPOCH, C_RLAST
    return C_SGROUP, C_SEPOCH, C_SLAST


@_compiled("B(STATE, I, I)")
def _is_last(S, r, q):
    requests, channels, ranks = S[2], S[4], S[0]
    group, epoch, last = _side(requests, q, r)
    chan = requests[q, Q_CHAN]
    return channels[chan, epoch] == ranks[r, R_EPOCH] and channels[chan, last] == q


@_compiled("NONE(STATE, I)")
def _unstore(S, q):
    """q leaves its rank's list: freed if nothing else holds it."""
    requests = S[2]
    requests[q, Q_FLAGS] &= ~F_STORED
    if (requests[q, Q_FLAGS] & F_DONE) != 0 and requests[q, Q_WAITER] < 0:
        _release(S, q)


@_compiled("NONE(STATE, I)")
def _prune(S, r):
    """Drop the requests that no longer block and are not the last of their key."""
    requests, ranks = S[2], S[0]
    q = ranks[r, R_HEAD]
    previous = -1
    while q >= 0:
        nxt = requests[q, Q_SNEXT]
        if not _blocks(requests, q) and not _is_last(S, r, q):
            if previous < 0:
                ranks[r, R_HEAD] = nxt
            else:
                requests[previous, Q_SNEXT] = nxt
            ranks[r, R_COUNT] -= 1
            _unstore(S, q)
        else:
            previous = q
        q = nxt
    ranks[r, R_TAIL] = previous
    ranks[r, R_PRUNE] = max(256, 2 * ranks[r, R_COUNT])


@_compiled("NONE(STATE, I, I)")
def _store(S, r, q):
    requests, channels, ranks = S[2], S[4], S[0]
    group, epoch, last = _side(requests, q, r)
    chan = requests[q, Q_CHAN]
    if channels[chan, epoch] != ranks[r, R_EPOCH]:
        channels[chan, epoch] = ranks[r, R_EPOCH]
        channels[chan, group] = ranks[r, R_GROUPS]
        ranks[r, R_GROUPS] += 1
    channels[chan, last] = q
    requests[q, Q_GROUP] = channels[chan, group]
    requests[q, Q_ORD] = ranks[r, R_ORD]
    ranks[r, R_ORD] += 1
    requests[q, Q_FLAGS] |= F_STORED
    requests[q, Q_SNEXT] = -1
    tail = ranks[r, R_TAIL]
    if tail < 0:
        ranks[r, R_HEAD] = q
    else:
        requests[tail, Q_SNEXT] = q
    ranks[r, R_TAIL] = q
    ranks[r, R_COUNT] += 1
    if ranks[r, R_COUNT] > ranks[r, R_PRUNE]:
        _prune(S, r)


@_compiled("NONE(STATE, I)")
def _clear_store(S, r):
    requests, ranks = S[2], S[0]
    q = ranks[r, R_HEAD]
    while q >= 0:
        nxt = requests[q, Q_SNEXT]
        _unstore(S, q)
        q = nxt
    ranks[r, R_HEAD] = -1
    ranks[r, R_TAIL] = -1
    ranks[r, R_COUNT] = 0
    ranks[r, R_EPOCH] += 1
    ranks[r, R_GROUPS] = 0
    ranks[r, R_ORD] = 0


@_compiled("I(STATE, I, B)")
def _wait_store(S, r, last_only):
    """waitall (every listed request) or the final wait (each key's last); ERROR if one failed."""
    requests, ranks = S[2], S[0]
    failed = -1
    failed_seq = 0
    q = ranks[r, R_HEAD]
    while q >= 0:
        if (not last_only or _is_last(S, r, q)) and _blocks(requests, q):
            seq = (requests[q, Q_GROUP] << 32) | requests[q, Q_ORD]
            if (requests[q, Q_FLAGS] & F_FAILED) != 0 and (failed < 0 or seq < failed_seq):
                failed, failed_seq = q, seq
            _wait_for(S, r, q, seq)
        q = requests[q, Q_SNEXT]
    if failed >= 0:
        return _error(S, ERR_FAILURE, r, failed, 0)
    return OK


# ---------------------------------------------------------------------- ranks
@_compiled("I(STATE, F, F)")
def _size(S, count, dt):
    return np.int64(count) * (np.int64(dt) if dt >= 0 else S[5][G_DT])


@_compiled("NONE(STATE, I, I, F)")
def _activity(S, r, kind, amount):
    S[5][G_IN_FLIGHT] += 1
    _command(S, kind, S[0][r, R_HOST], 0, -2 - r, amount)


@_compiled("NONE(STATE, I)")
def _push_ready(S, r):
    ready, G = S[10], S[5]
    n = G[G_N]
    ready[(G[G_READY_HEAD] + G[G_READY_SIZE]) % n] = r
    G[G_READY_SIZE] += 1


# ---------------------------------------------------------------------- collectives
# Each is a resumable machine: R_PH says which group of posts comes next, the registers K1..K5
# what it needs (sizes computed once, at the action's start, as SmpiReplay computes them). A
# group posts its requests, then waits for them (returning 1 if they block); the machine
# returns 0 when the action is over.

@_compiled("I(STATE, DICT, I, I, I, I)")
def _bcast(S, chan_of, r, size, root, base):
    """Phases base (the receive) and base + 1 (the sends; K1 the mask)."""
    ranks, G = S[0], S[5]
    n = G[G_N]
    relative = (r - root) % n
    if ranks[r, R_PH] == base:
        if not _room(S, 2):
            return GROW
        mask = 1
        source = -1
        while mask < n:
            if relative & mask:
                source = (r - mask) % n
                break
            mask <<= 1
        ranks[r, R_K1] = mask >> 1
        ranks[r, R_PH] = base + 1
        if source >= 0:
            if _post(S, chan_of, source, r, TAG_BCAST, 0, True, -1, r) < 0:
                return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
    while ranks[r, R_K1] > 0:
        mask = ranks[r, R_K1]
        if relative + mask < n:
            if not _room(S, 2):
                return GROW
            ranks[r, R_K1] = mask >> 1
            if _post(S, chan_of, r, (r + mask) % n, TAG_BCAST, size, False, -1, r) < 0:
                return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        else:
            ranks[r, R_K1] = mask >> 1
    return 0


@_compiled("I(STATE, DICT, I, I, I, I, B)")
def _to_root(S, chan_of, r, size, root, tag, gather):
    """One group: everyone sends `size` to the root, which receives from each (gather), or the
    root sends `size` to each, who receives from it (scatter with equal sizes)."""
    ranks, G = S[0], S[5]
    n = G[G_N]
    if not _room(S, n + 2):
        return GROW
    if r != root:
        if gather:
            q = _post(S, chan_of, r, root, tag, size, False, -1, r)
        else:
            q = _post(S, chan_of, root, r, tag, 0, True, -1, r)
        if q < 0:
            return ERROR
    else:
        for i in range(n):
            if i != root:
                if gather:
                    q = _post(S, chan_of, i, r, tag, 0, True, -1, r)
                else:
                    q = _post(S, chan_of, r, i, tag, size, False, -1, r)
                if q < 0:
                    return ERROR
    return BLOCKED if ranks[r, R_BLOCKING] > 0 else OK


@_compiled("I(STATE, DICT, I, I, I, I, I)")
def _sendrecv(S, chan_of, r, dst, size, src, tag):
    ranks = S[0]
    if dst == r and src == r:
        return 0
    if _post(S, chan_of, r, dst, tag, size, False, -1, r) < 0:
        return ERROR
    if _post(S, chan_of, src, r, tag, 0, True, -1, r) < 0:
        return ERROR
    return BLOCKED if ranks[r, R_BLOCKING] > 0 else OK


@_compiled("I(STATE, I, F, I)")
def _flops_then(S, r, flops, phase):
    """The computation after a reduction (phase `phase`), then the end."""
    ranks = S[0]
    if ranks[r, R_PH] == phase:
        ranks[r, R_PH] = phase + 1
        if flops != 0:
            _activity(S, r, CMD_COMPUTE, flops)
            return BLOCKED
    return 0


@_compiled("I(STATE, I, I, I)")
def _group_done(S, r, next_phase, status):
    """After a group's posts: the machine moves to `next_phase`; 1 if the rank blocks."""
    if status == GROW or status == ERROR:
        return status
    S[0][r, R_PH] = next_phase
    return BLOCKED if S[0][r, R_BLOCKING] > 0 else OK


@_compiled("I(F1, I, I)")
def _prefix(args, c, k):
    total = 0
    for i in range(k):
        total += np.int64(args[c + i])
    return total


@_compiled("I(STATE, DICT, I, I)")
def _reduce_scatter(S, chan_of, r, c):
    """smpi_replay._reduce_scatter, then the computation. K1 dt; equal counts: phases 1-2 the
    reduce and the scatterv; mpich_pair: K2 = i; mpich_rdb: K2 mask, K3 i, K4 tmp_mask (0: the
    round's sendrecv is next), K5 k."""
    ranks, G, args = S[0], S[5], S[8]
    n = G[G_N]
    flops = args[c + n]
    if ranks[r, R_PH] == 0:
        ranks[r, R_K1] = _size(S, 1, args[c + n + 1])
        equal = True
        for i in range(n):
            if np.int64(args[c + i]) != np.int64(args[c]):
                equal = False
        total = _prefix(args, c, n)
        if equal:
            ranks[r, R_PH] = 1
        elif total > 524288:
            ranks[r, R_PH] = 10
            ranks[r, R_K2] = 1
        else:
            ranks[r, R_PH] = 20
            ranks[r, R_K2] = 1
            ranks[r, R_K3] = 0
            ranks[r, R_K4] = 0
    dt = ranks[r, R_K1]
    ph = ranks[r, R_PH]
    if ph == 1:
        status = _group_done(S, r, 2, _to_root(S, chan_of, r, _prefix(args, c, n) * dt, 0, TAG_REDUCE, True))
        if status != 0:
            return status
        ph = 2
    if ph == 2:
        if not _room(S, n + 2):
            return GROW
        ranks[r, R_PH] = 30
        if r != 0:
            if _post(S, chan_of, 0, r, TAG_SCATTERV, 0, True, -1, r) < 0:
                return ERROR
        else:
            for i in range(1, n):
                if _post(S, chan_of, 0, i, TAG_SCATTERV, np.int64(args[c + i]) * dt, False, -1, r) < 0:
                    return ERROR
        if ranks[r, R_BLOCKING] > 0:
            return BLOCKED
        ph = 30
    if ph == 10:
        while ranks[r, R_K2] < n:
            if not _room(S, 4):
                return GROW
            i = ranks[r, R_K2]
            ranks[r, R_K2] = i + 1
            src, dst = (r - i) % n, (r + i) % n
            status = _sendrecv(S, chan_of, r, dst, np.int64(args[c + dst]) * dt, src, TAG_REDUCE_SCATTER)
            if status != 0:
                return status
        ranks[r, R_PH] = 30
        ph = 30
    if ph == 20:
        total = _prefix(args, c, n)
        while ranks[r, R_K2] < n:
            mask, i = ranks[r, R_K2], ranks[r, R_K3]
            dst = r ^ mask
            dst_tree_root = (dst >> i) << i
            my_tree_root = (r >> i) << i
            if ranks[r, R_K4] == 0:  # the round's sendrecv
                if not _room(S, 4):
                    return GROW
                ranks[r, R_K4] = -1 if dst_tree_root + mask > n else -2  # -1: the inner loop next
                if ranks[r, R_K4] == -1:
                    k = 0
                    m = mask
                    while m > 1:
                        m >>= 1
                        k += 1
                    ranks[r, R_K5] = k
                    ranks[r, R_K4] = mask >> 1 if mask >> 1 else -2
                if dst < n:
                    send_elements = _prefix(args, c, min(my_tree_root, n)) + (
                        total - _prefix(args, c, min(my_tree_root + mask, n)))
                    status = _sendrecv(S, chan_of, r, dst, send_elements * dt, dst, TAG_REDUCE_SCATTER)
                    if status != 0:
                        return status
            while ranks[r, R_K4] > 0:
                if not _room(S, 4):
                    return GROW
                tmp_mask, k = ranks[r, R_K4], ranks[r, R_K5]
                ranks[r, R_K4] = tmp_mask >> 1 if tmp_mask >> 1 else -2
                ranks[r, R_K5] = k - 1
                completed = n - my_tree_root - mask
                peer = r ^ tmp_mask
                tree_root = (r >> k) << k
                if peer > r and r < tree_root + completed <= peer:
                    recv_elements = _prefix(args, c, min(dst_tree_root, n)) + (
                        total - _prefix(args, c, min(dst_tree_root + mask, n)))
                    q = _post(S, chan_of, r, peer, TAG_REDUCE_SCATTER, recv_elements * dt, False, -1, r)
                elif peer < r and peer < tree_root + completed <= r:
                    q = _post(S, chan_of, peer, r, TAG_REDUCE_SCATTER, 0, True, -1, r)
                else:
                    continue
                if q < 0:
                    return ERROR
                if ranks[r, R_BLOCKING] > 0:
                    return BLOCKED
            ranks[r, R_K2] = mask << 1
            ranks[r, R_K3] = i + 1
            ranks[r, R_K4] = 0
        ranks[r, R_PH] = 30
    return _flops_then(S, r, flops, 30)


@_compiled("I(STATE, DICT, I)")
def _collective(S, chan_of, r):
    ranks, G, ops, op_start, args = S[0], S[5], S[6], S[7], S[8]
    n = G[G_N]
    c = ranks[r, R_ARG]
    op = ops[op_start[r] + ranks[r, R_PC]]
    if op == BARRIER:
        while True:
            ph = ranks[r, R_PH]
            if ph == 2:
                return 0
            if not _room(S, n + 2):
                return GROW
            if r > 0:
                if ph == 0:
                    q = _post(S, chan_of, r, 0, TAG_BARRIER, 0, False, -1, r)
                else:
                    q = _post(S, chan_of, 0, r, TAG_BARRIER, 0, True, -1, r)
                if q < 0:
                    return ERROR
            else:
                for i in range(1, n):
                    if ph == 0:
                        q = _post(S, chan_of, i, 0, TAG_BARRIER, 0, True, -1, r)
                    else:
                        q = _post(S, chan_of, 0, i, TAG_BARRIER, 0, False, -1, r)
                    if q < 0:
                        return ERROR
            ranks[r, R_PH] = ph + 1
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
    if op == BCAST:
        if ranks[r, R_PH] == 0:
            ranks[r, R_K2] = _size(S, args[c], args[c + 2])
            ranks[r, R_PH] = 1
        return _bcast(S, chan_of, r, ranks[r, R_K2], np.int64(args[c + 1]), 1)
    if op == REDUCE or op == ALLREDUCE:
        if op == REDUCE:
            flops, root = args[c + 1], np.int64(args[c + 2])
        else:
            flops, root = args[c + 1], 0
        if ranks[r, R_PH] == 0:
            ranks[r, R_K2] = _size(S, args[c], args[c + 3] if op == REDUCE else args[c + 2])
            status = _group_done(S, r, 1, _to_root(S, chan_of, r, ranks[r, R_K2], root, TAG_REDUCE, True))
            if status != 0:
                return status
        if op == ALLREDUCE and ranks[r, R_PH] <= 2:
            status = _bcast(S, chan_of, r, ranks[r, R_K2], 0, 1)
            if status != 0:
                return status
            ranks[r, R_PH] = 3
        if ranks[r, R_PH] < 3:
            ranks[r, R_PH] = 3
        return _flops_then(S, r, flops, 3)
    if op == ALLTOALL:
        if ranks[r, R_PH] == 0:
            count = np.int64(args[c])
            ranks[r, R_K1] = count
            ranks[r, R_K2] = _size(S, 1, args[c + 1])
            ranks[r, R_K3] = _size(S, 1, args[c + 2])
            ranks[r, R_K4] = alltoall_algorithm(n, ranks[r, R_K2] * count)
            ranks[r, R_K5] = 0 if ranks[r, R_K4] == 2 else 1  # pairwise: i from 0; Bruck: pof2 from 1
            ranks[r, R_PH] = 1
            if ranks[r, R_K4] == 2 and (n & (n - 1)) != 0:
                return _error(S, ERR_PAIRWISE, r, count * ranks[r, R_K2], 0)
        count, dt1, dt2, algorithm = ranks[r, R_K1], ranks[r, R_K2], ranks[r, R_K3], ranks[r, R_K4]
        if algorithm == 1:
            if ranks[r, R_PH] == 1 and n > 1:
                if not _room(S, 2 * n + 2):
                    return GROW
                ranks[r, R_PH] = 2
                for k in range(1, n):
                    if _post(S, chan_of, (r + k) % n, r, TAG_ALLTOALL, 0, True, -1, r) < 0:
                        return ERROR
                for k in range(1, n):
                    if _post(S, chan_of, r, (r - k) % n, TAG_ALLTOALL, count * dt1, False, -1, r) < 0:
                        return ERROR
                if ranks[r, R_BLOCKING] > 0:
                    return BLOCKED
            return 0
        if algorithm == 2:
            while ranks[r, R_K5] < n:
                if not _room(S, 4):
                    return GROW
                peer = r ^ ranks[r, R_K5]
                ranks[r, R_K5] += 1
                status = _sendrecv(S, chan_of, r, peer, count * dt1, peer, TAG_ALLTOALL)
                if status != 0:
                    return status
            return 0
        pack_limit = count * n * dt1
        while ranks[r, R_K5] < n:
            pof2 = ranks[r, R_K5]
            if not _room(S, 4):
                return GROW
            blocks = 0
            for block in range(1, n):
                if block & pof2:
                    blocks += 1
            packed = blocks * count * dt2
            if packed > pack_limit:
                return _error(S, ERR_BRUCK, r, 0, 0)
            ranks[r, R_K5] = pof2 * 2
            status = _sendrecv(S, chan_of, r, (r + pof2) % n, packed, (r - pof2) % n, TAG_ALLTOALL)
            if status != 0:
                return status
        return 0
    if op == ALLTOALLV:
        if ranks[r, R_PH] == 0:
            if not _room(S, 2 * n + 2):
                return GROW
            dt = args[c + n]
            ranks[r, R_PH] = 1
            for i in range(n):
                if i != r and _post(S, chan_of, i, r, TAG_ALLTOALLV, 0, True, -1, r) < 0:
                    return ERROR
            for i in range(n):
                if i != r and _post(S, chan_of, r, i, TAG_ALLTOALLV, _size(S, args[c + i], dt), False, -1, r) < 0:
                    return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        return 0
    if op == GATHER or op == GATHERV or op == SCATTER:
        if ranks[r, R_PH] == 0:
            size, root = _size(S, args[c], args[c + 1]), np.int64(args[c + 2])
            tag = TAG_GATHER if op == GATHER else (TAG_GATHERV if op == GATHERV else TAG_SCATTER)
            return _group_done(S, r, 1, _to_root(S, chan_of, r, size, root, tag, op != SCATTER))
        return 0
    if op == ALLGATHER or op == ALLGATHERV:
        if ranks[r, R_PH] == 0:
            if not _room(S, 2 * n + 2):
                return GROW
            size = _size(S, args[c], args[c + 1])
            tag = TAG_ALLGATHER if op == ALLGATHER else TAG_ALLGATHERV
            ranks[r, R_PH] = 1
            for other in range(n):
                if other != r:
                    if _post(S, chan_of, r, other, tag, size, False, -1, r) < 0:
                        return ERROR
                    if _post(S, chan_of, other, r, tag, 0, True, -1, r) < 0:
                        return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        return 0
    if op == SCATTERV:
        if ranks[r, R_PH] == 0:
            if not _room(S, n + 2):
                return GROW
            dt, root = args[c + n], np.int64(args[c + n + 1])
            ranks[r, R_PH] = 1
            if r != root:
                if _post(S, chan_of, root, r, TAG_SCATTERV, 0, True, -1, r) < 0:
                    return ERROR
            else:
                for i in range(n):
                    if i != root and _post(S, chan_of, r, i, TAG_SCATTERV, _size(S, args[c + i], dt), False, -1,
                                           r) < 0:
                        return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        return 0
    if op == REDUCESCATTER:
        return _reduce_scatter(S, chan_of, r, c)
    if op == SCAN or op == EXSCAN:
        flops = args[c + 1]
        if ranks[r, R_PH] == 0:
            if not _room(S, n + 2):
                return GROW
            size = _size(S, args[c], args[c + 2])
            ranks[r, R_PH] = 1
            for i in range(r):
                if _post(S, chan_of, i, r, TAG_SCAN, 0, True, -1, r) < 0:
                    return ERROR
            for i in range(r + 1, n):
                if _post(S, chan_of, r, i, TAG_SCAN, size, False, -1, r) < 0:
                    return ERROR
            if ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        return _flops_then(S, r, flops, 1)
    if op == SENDRECV:
        if ranks[r, R_PH] == 0:
            ranks[r, R_PH] = 1
            return _sendrecv(S, chan_of, r, np.int64(args[c + 1]), _size(S, args[c], args[c + 3]),
                             np.int64(args[c + 2]), 0)
        return 0
    return 0


@_compiled("I(STATE, DICT, I)")
def _run_rank(S, chan_of, r):
    """Run rank r until it is BLOCKED, ENDED, needs room (GROW) or fails (ERROR)."""
    ranks, G, ops, op_start, args = S[0], S[5], S[6], S[7], S[8]
    n = G[G_N]
    if not _room(S, 4):  # (a resumed collective may post or compute at once)
        return GROW
    cont = ranks[r, R_CONT]
    if cont != CONT_NEXT:
        if cont == CONT_COLLECTIVE:
            status = _collective(S, chan_of, r)
            if status != 0:
                return status
        elif cont == CONT_CLEAR:
            _clear_store(S, r)
        elif cont == CONT_FINAL:
            return ENDED
        ranks[r, R_CONT] = CONT_NEXT
    first = op_start[r]
    count = op_start[r + 1] - first
    while True:
        if not _room(S, 4):
            return GROW
        pc = ranks[r, R_PC] + 1
        if pc >= count:
            ranks[r, R_PC] = count
            if ranks[r, R_COUNT] > 0:  # smpi_replay_main: the last request of each key
                if _wait_store(S, r, True) == ERROR:
                    return ERROR
                if ranks[r, R_BLOCKING] > 0:
                    ranks[r, R_CONT] = CONT_FINAL
                    return BLOCKED
            return ENDED
        op = ops[first + pc]
        c = ranks[r, R_NEXTARG]
        ranks[r, R_PC] = pc
        ranks[r, R_ARG] = c
        ranks[r, R_NEXTARG] = c + stored_arguments(op, n)
        if op == COMPUTE or op == SLEEP:
            if args[c] > 0:
                _activity(S, r, CMD_COMPUTE if op == COMPUTE else CMD_SLEEP, args[c])
                return BLOCKED
        elif op == SEND or op == ISEND or op == RECV or op == IRECV:
            partner, tag = np.int64(args[c]), np.int64(args[c + 1])
            size = _size(S, args[c + 2], args[c + 3])
            blocking = op == SEND or op == RECV
            waiter = r if blocking else -1
            if op == SEND or op == ISEND:
                q = _post(S, chan_of, r, partner, tag, size, False, -1, waiter)
            else:
                q = _post(S, chan_of, partner, r, tag, 0, True, size, waiter)
            if q < 0:
                return ERROR
            if not blocking:
                _store(S, r, q)
            elif ranks[r, R_BLOCKING] > 0:
                return BLOCKED
        elif op == WAIT or op == TEST:  # under Batsim's keys they find nothing
            if op == WAIT and ranks[r, R_COUNT] == 0:
                return _error(S, ERR_WAIT_EMPTY, r, 0, 0)
        elif op == WAITALL:
            if ranks[r, R_COUNT] > 0:
                if _wait_store(S, r, False) == ERROR:
                    return ERROR
                if ranks[r, R_BLOCKING] > 0:
                    ranks[r, R_CONT] = CONT_CLEAR
                    return BLOCKED
                _clear_store(S, r)
        elif op == INIT:
            G[G_DT] = 8 if args[c] != 0 else 1
        else:
            ranks[r, R_CONT] = CONT_COLLECTIVE
            ranks[r, R_PH] = 0
            status = _collective(S, chan_of, r)
            if status != 0:
                return status
            ranks[r, R_CONT] = CONT_NEXT


# ---------------------------------------------------------------------- ends and cancellations
@_compiled("NONE(STATE)")
def _finish(S):
    S[5][G_FINISHED] = 1
    _command(S, CMD_FINISH, 0, 0, 0, 0.0)


@_compiled("NONE(STATE)")
def _next_termination(S):
    G, ranks, terminating = S[5], S[0], S[11]
    if G[G_BUSY] != 0 or G[G_TERM_SIZE] == 0:
        return
    n = G[G_N]
    r = terminating[G[G_TERM_HEAD]]
    G[G_TERM_HEAD] = (G[G_TERM_HEAD] + 1) % n
    G[G_TERM_SIZE] -= 1
    G[G_BUSY] = 1
    G[G_IN_FLIGHT] += 1
    _command(S, CMD_TERMINATION, ranks[r, R_HOST], G[G_LAUNCHER], TERMINATION_TOKEN, 4.0)


@_compiled("NONE(STATE, I, F)")
def _rank_over(S, r, now):
    ranks, ended, G, terminating, ending = S[0], S[1], S[5], S[11], S[12]
    n = G[G_N]
    ranks[r, R_OVER] = 1
    ended[r] = now
    ending[G[G_ENDING]] = r
    G[G_ENDING] += 1
    if G[G_LAUNCHER] < 0:
        G[G_TERMINATED] += 1
        if G[G_TERMINATED] == n:
            _finish(S)
        return
    terminating[(G[G_TERM_HEAD] + G[G_TERM_SIZE]) % n] = r
    G[G_TERM_SIZE] += 1
    _next_termination(S)


@_compiled("NONE(A2, A2, I, I, I, I)")
def _unlink(requests, channels, chan, head, tail, q):
    previous = -1
    p = channels[chan, head]
    while p >= 0 and p != q:
        previous = p
        p = requests[p, Q_NEXT]
    nxt = requests[q, Q_NEXT]
    if previous < 0:
        channels[chan, head] = nxt
    else:
        requests[previous, Q_NEXT] = nxt
    if channels[chan, tail] == q:
        channels[chan, tail] = previous


@_compiled("I(STATE, I)")
def _cancel_outstanding(S, r):
    """SimGrid cancels an ended actor's requests it did not wait for, in list order."""
    requests, channels, ranks, G = S[2], S[4], S[0], S[5]
    count = ranks[r, R_COUNT]
    listed = np.empty(count, dtype=np.int64)
    keys = np.empty(count, dtype=np.int64)
    q = ranks[r, R_HEAD]
    k = 0
    while q >= 0:
        listed[k] = q
        keys[k] = (requests[q, Q_GROUP] << 32) | requests[q, Q_ORD]
        k += 1
        q = requests[q, Q_SNEXT]
    for i in range(1, count):  # insertion sort by key (lists are short when ranks end)
        j = i
        while j > 0 and keys[j - 1] > keys[j]:
            keys[j - 1], keys[j] = keys[j], keys[j - 1]
            listed[j - 1], listed[j] = listed[j], listed[j - 1]
            j -= 1
    for q in listed:
        flags = requests[q, Q_FLAGS]
        if not _blocks(requests, q) or (flags & F_FAILED) != 0:
            continue
        peer = requests[q, Q_PEER]
        chan = requests[q, Q_CHAN]
        if peer < 0:  # still in the mailbox: it leaves it
            if (flags & F_RECV) != 0:
                _unlink(requests, channels, chan, C_RHEAD, C_RTAIL, q)
            else:
                _unlink(requests, channels, chan, C_SHEAD, C_STAIL, q)
                channels[chan, C_DEAD] = 1
            requests[q, Q_FLAGS] |= F_FAILED
            continue
        requests[q, Q_FLAGS] |= F_FAILED
        requests[peer, Q_FLAGS] |= F_FAILED
        _command(S, CMD_CANCEL, 0, 0, q if (flags & F_RECV) == 0 else peer, 0.0)
        G[G_IN_FLIGHT] -= 1
        partner = requests[peer, Q_WAITER]
        if partner >= 0:
            return _error(S, ERR_FAILURE, partner, peer, 0)
    return OK


@_compiled("I(STATE, DICT, F)")
def _drain(S, chan_of, now):
    """SmpiReplay._drain: ready ranks run in turn; the ranks that ended cancel what they left."""
    ranks, G, ready, ending = S[0], S[5], S[10], S[12]
    n = G[G_N]
    while True:
        while G[G_READY_SIZE] > 0:
            r = ready[G[G_READY_HEAD]]
            G[G_READY_HEAD] = (G[G_READY_HEAD] + 1) % n
            G[G_READY_SIZE] -= 1
            status = _run_rank(S, chan_of, r)
            if status == GROW:  # back in front, to run first when there is room
                G[G_READY_HEAD] = (G[G_READY_HEAD] - 1) % n
                ready[G[G_READY_HEAD]] = r
                G[G_READY_SIZE] += 1
                return GROW
            if status == ERROR:
                return ERROR
            if status == ENDED:
                _rank_over(S, r, now)
        while G[G_ENDING_DONE] < G[G_ENDING]:
            r = ending[G[G_ENDING_DONE]]
            if not _room(S, ranks[r, R_COUNT]):
                return GROW
            G[G_ENDING_DONE] += 1
            if _cancel_outstanding(S, r) == ERROR:
                return ERROR
        G[G_ENDING] = 0
        G[G_ENDING_DONE] = 0
        if G[G_READY_SIZE] == 0:
            break
    if G[G_IN_FLIGHT] == 0 and G[G_FINISHED] == 0:
        return _error(S, ERR_DEADLOCK, 0, 0, 0)
    return OK


@_compiled("NONE(STATE, I)")
def _completed(S, token):
    """SmpiReplay's callbacks: an activity of the job ended."""
    requests, ranks, G = S[2], S[0], S[5]
    G[G_IN_FLIGHT] -= 1
    if token == TERMINATION_TOKEN:
        G[G_BUSY] = 0
        G[G_TERMINATED] += 1
        if G[G_TERMINATED] == G[G_N]:
            _finish(S)
        else:
            _next_termination(S)
        return
    if token < 0:
        _push_ready(S, -2 - token)
        return
    send = token
    recv = requests[send, Q_PEER]
    requests[send, Q_PEER] = -1
    requests[recv, Q_PEER] = -1
    for q in (send, recv):
        requests[q, Q_FLAGS] |= F_DONE
        waiter = requests[q, Q_WAITER]
        if waiter >= 0:
            requests[q, Q_WAITER] = -1
            ranks[waiter, R_BLOCKING] -= 1
            if ranks[waiter, R_BLOCKING] == 0:
                _push_ready(S, waiter)
        if (requests[q, Q_FLAGS] & F_STORED) == 0:
            _release(S, q)


@_compiled("I(STATE, DICT, A1, F)", entry=True)
def run(S, chan_of, tokens, now):
    """Go on with an interrupted drain, then deliver the completions tokens[G_TOKEN_POS:], each
    followed by a drain (as each SmpiReplay callback drains); OK, GROW or ERROR. The commands
    are in S[13][:G_NCMD] (kind, a, b, token) and S[14] (amounts)."""
    G = S[5]
    if G[G_IN_DRAIN] != 0:
        status = _drain(S, chan_of, now)
        if status != OK:
            return status
        G[G_IN_DRAIN] = 0
    while G[G_TOKEN_POS] < tokens.shape[0]:
        if G[G_FINISHED] != 0:  # the job ended: its other activities are not called back
            G[G_TOKEN_POS] = tokens.shape[0]
            break
        if not _room(S, 0):  # a completion may send a termination or end the job
            return GROW
        token = tokens[G[G_TOKEN_POS]]
        G[G_TOKEN_POS] += 1
        _completed(S, token)
        G[G_IN_DRAIN] = 1
        status = _drain(S, chan_of, now)
        if status != OK:
            return status
        G[G_IN_DRAIN] = 0
    return OK


if AVAILABLE:
    _load_or_compile()
