"""The `smpi` job model with its rank programs run by compiled code (smpi_replay_kernel.py).

Same semantics, same activities in the same order, same errors as SmpiReplay (tests compare
both, run by run); chosen for a job when numba is installed and the kernel can run its traces
(smpi_replay.compiled_replay_possible). The kernel returns what SmpiReplay would have asked of the
runner during a drain as commands, carried out here in order; completions come back through
`completed(tokens)`, which the runner calls once for consecutive completions of the job
(`BatchedCompletion`), as SmpiReplay's callbacks would each have drained in turn.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any, Sequence

import numpy as np

from joulesim.inputs.input_error import InputError
from joulesim.simulator.models import activity_table_kernel, int_index_kernel
from joulesim.simulator.models.job_activity import BatchedCompletion
from joulesim.simulator.models.smpi_replay import SmpiJob, SmpiReplay, compiled_replay_possible
from joulesim.simulator.workload.smpi_traces import SmpiTraces


def _load_kernel():
    """The kernel module (and the runner's instants loop for it): numba compiles them the first
    time (30-50 s, then cached beside them), which deserves a word on stderr rather than a silent
    pause."""
    notice = threading.Timer(2.0, lambda: print("joulesim: compiling the SMPI replay kernel (numba, once per "
                                                  "installation, under a minute)...", file=sys.stderr, flush=True))
    notice.start()
    try:
        from joulesim.simulator.models import smpi_instants_kernel  # noqa: F401  (the runner's loop for it)
        from joulesim.simulator.models import smpi_replay_kernel
    finally:
        notice.cancel()
    return smpi_replay_kernel


kernel = _load_kernel()
# The kernel's commands are the runner's launch commands (activity_table_kernel), then cancel and finish.
assert (kernel.CMD_COMPUTE, kernel.CMD_SLEEP, kernel.CMD_TRANSFER, kernel.CMD_TERMINATION) == (
    activity_table_kernel.COMPUTE, activity_table_kernel.SLEEP, activity_table_kernel.TRANSFER,
    activity_table_kernel.TRANSFER_TOO)


class CompiledSmpiReplay(SmpiJob):
    """JobModel of an `smpi` profile run by the kernel (SmpiJob gives the arguments)."""

    # The network runner may run this job's instants in compiled code (smpi_instants_kernel.py),
    # which calls the kernel on replay_arrays() and hands back to go_on() where it stops.
    compiled_instants = True

    def __init__(self, traces: SmpiTraces, profile_name: str, rank_executors: Sequence[int] | None = None,
                 launcher_host: int | None = None, smpirun_request_keys: bool = False):
        if not compiled_replay_possible(traces, smpirun_request_keys):
            raise ValueError("these traces need SmpiReplay (see compiled_replay_possible)")
        super().__init__(traces, profile_name, rank_executors, launcher_host)
        self._state: tuple = ()
        self._channels = int_index_kernel.new_index()  # channel key -> its row (see kernel._channel)
        self._handles: dict[int, Any] = {}  # transfer token -> its activity (to cancel it)
        # With a context that launches in batches (the runner): each transfer's (slot, key) by token.
        self._by_token = np.zeros((0, 2), dtype=np.int64)

    @property
    def ended_at(self) -> list[float | None]:
        """When each rank's replay ended (None: not yet)."""
        if not self._state:
            return [None] * self.n
        return [None if math.isnan(value) else value for value in self._state[1].tolist()]

    # ------------------------------------------------------------------ JobModel
    def start(self, context) -> None:
        self.ctx = context
        ranks = self.traces.ranks
        rank_hosts = np.array(self._rank_hosts(context), dtype=np.int64)
        op_start = np.zeros(self.n + 1, dtype=np.int64)
        op_start[1:] = np.cumsum([len(trace.ops) for trace in ranks])
        arg_start = np.zeros(self.n + 1, dtype=np.int64)
        arg_start[1:] = np.cumsum([len(trace.args) for trace in ranks])
        ops = np.frombuffer(b"".join(bytes(trace.ops) for trace in ranks), dtype=np.uint8).copy()
        args = np.concatenate([np.frombuffer(trace.args, dtype=float) for trace in ranks]) if self.n else np.zeros(0)
        launcher = -1 if self.launcher_host is None else int(self.launcher_host)
        self._state = kernel.new_state(self.n, rank_hosts, ops, op_start, args, arg_start, launcher)
        self._grow()
        self._state[5][kernel.G_IN_DRAIN] = 1  # every rank ready: the first drain
        self.completed(np.zeros(0, dtype=np.int64))

    def completed(self, tokens: Sequence[int]) -> None:
        """Activities of the job completed, in this order (BatchedCompletion)."""
        self._state[5][kernel.G_TOKEN_POS] = 0
        self.go_on(np.asarray(tokens, dtype=np.int64), None, 0)

    def replay_arrays(self) -> tuple[tuple, np.ndarray, np.ndarray]:
        """The kernel's state, its channel index, and each transfer's (slot, key) by token."""
        return self._state, self._channels, self._by_token

    def go_on(self, tokens: np.ndarray, status: int | None, first: int) -> None:
        """Deliver `tokens` from the kernel's token position, each followed by a drain, and carry
        out what they ask. With a `status`, the kernel's last call has returned it already and its
        commands before `first` are carried out (where the runner's compiled instants stopped)."""
        now = float(self.ctx.now())
        while True:
            if status is None:
                status = kernel.run(self._state, self._channels, tokens, now)
            self._carry_out(first)
            first = 0
            if status == kernel.OK:
                return
            if status == kernel.ERROR:
                self._raise()
            self._grow()
            status = None

    # ------------------------------------------------------------------ the kernel's calls
    def _carry_out(self, first: int = 0) -> None:
        """The commands of the last call from `first`, in order (what SmpiReplay did during its drain)."""
        state = self._state
        globals_ = state[5]
        count = int(globals_[kernel.G_NCMD])
        if not count:
            return
        globals_[kernel.G_NCMD] = 0
        ctx = self.ctx
        launch = getattr(ctx, "launch", None)
        if launch is not None:  # the runner builds the activities of commands in compiled code
            commands, by_token = state[13], self._by_token
            index = first
            while index < count:
                index = launch(commands, state[14], index, count, by_token)
                if index == count:
                    break
                kind, token = commands[index, 0], commands[index, 3]
                if kind == kernel.CMD_CANCEL:
                    ctx.cancel_launched(int(by_token[token, 0]), int(by_token[token, 1]))
                else:
                    ctx.finish()
                index += 1
            return
        handles = self._handles
        for (kind, a, b, token), amount in zip(state[13][first:count].tolist(), state[14][first:count].tolist()):
            if kind == kernel.CMD_TRANSFER:
                handles[token] = ctx.execute((), ((a, b, amount),), BatchedCompletion(self, token))
            elif kind == kernel.CMD_COMPUTE:
                ctx.execute(((a, amount),), (), BatchedCompletion(self, token))
            elif kind == kernel.CMD_SLEEP:
                ctx.sleep(amount, BatchedCompletion(self, token))
            elif kind == kernel.CMD_TERMINATION:
                ctx.execute((), ((a, b, amount),), BatchedCompletion(self, token))
            elif kind == kernel.CMD_CANCEL:
                handles.pop(token).cancel()
            else:
                ctx.finish()

    def _grow(self) -> None:
        """Double what is short: requests, channels, commands (at least what a group of posts of
        every rank's largest collective needs)."""
        (ranks, ended, requests, free, channels, globals_, ops, op_start, args, arg_start, ready, terminating, ending,
         commands, amounts) = self._state
        need = 4 * self.n + 64 + int(ranks[:, kernel.R_COUNT].max(initial=0))
        if int(globals_[kernel.G_FREE_TOP]) < need:
            old = requests.shape[0]
            size = max(2 * old, old + need, 1024)
            grown = np.zeros((size, kernel.Q_FIELDS), dtype=np.int64)
            grown[:old] = requests
            grown[old:, kernel.Q_FLAGS] = kernel.F_DONE  # free rows: no one waits for them
            grown[old:, kernel.Q_WAITER] = -1
            # the free stack holds every request at most: the new ones under the free old ones
            top = int(globals_[kernel.G_FREE_TOP])
            stack = np.empty(size, dtype=np.int64)
            stack[:size - old] = np.arange(size - 1, old - 1, -1)
            stack[size - old:size - old + top] = free[:top]
            globals_[kernel.G_FREE_TOP] = size - old + top
            free, requests = stack, grown
        if self._by_token.shape[0] < requests.shape[0]:  # transfer tokens are send requests' rows
            by_token = np.zeros((requests.shape[0], 2), dtype=np.int64)
            by_token[:self._by_token.shape[0]] = self._by_token
            self._by_token = by_token
        if channels.shape[0] - int(globals_[kernel.G_CHANNELS]) < need:
            old = channels.shape[0]
            grown = np.zeros((max(2 * old, old + need, 256), kernel.C_FIELDS), dtype=np.int64)
            grown[:old] = channels
            channels = grown
        self._channels = int_index_kernel.room(self._channels, channels.shape[0])  # (at most one key a row)
        if commands.shape[0] - int(globals_[kernel.G_NCMD]) < need + 2:
            commands = np.zeros((need + 2 + commands.shape[0], 4), dtype=np.int64)
            amounts = np.zeros(commands.shape[0])
        self._state = (ranks, ended, requests, free, channels, globals_, ops, op_start, args, arg_start, ready,
                       terminating, ending, commands, amounts)

    # ------------------------------------------------------------------ errors, as SmpiReplay words them
    def _raise(self) -> None:
        state = self._state
        ranks, requests, channels, globals_ = state[0], state[2], state[4], state[5]
        error = int(globals_[kernel.G_ERROR])
        a, b = int(globals_[kernel.G_ERR_A]), int(globals_[kernel.G_ERR_B])
        # SmpiReplay's own message builders, on views of the kernel's ranks and requests
        words = SmpiReplay(self.traces, self.profile_name)
        if error == kernel.ERR_WAIT_EMPTY:
            trace = self.traces.ranks[a]
            raise InputError(trace.path, f"line {trace.lines[int(ranks[a, kernel.R_PC])]} (rank {a})",
                             "wait: no isend or irecv is pending (SimGrid aborts: 'action wait not "
                             "preceded by any irecv or isend')", "remove the wait, or post the request first")
        if error == kernel.ERR_TRUNCATE:
            send, recv = requests[a], requests[b]
            trace = self.traces.ranks[int(recv[kernel.Q_DST])]
            raise InputError(trace.path, f"line {self._line(recv)} (rank {int(recv[kernel.Q_DST])})",
                             f"receives at most {int(recv[kernel.Q_LIMIT])} bytes from rank {int(send[kernel.Q_SRC])} "
                             f"(tag {int(send[kernel.Q_TAG])}), whose matching send (its line {self._line(send)}) has "
                             f"{int(send[kernel.Q_SIZE])}: SimGrid aborts with MPI_ERR_TRUNCATE",
                             "give the receive the sender's size")
        if error == kernel.ERR_FAILURE:
            words.ranks = self._rank_views()
            words._failure(words.ranks[a], self._request_view(requests[b]))
        if error == kernel.ERR_PAIRWISE or error == kernel.ERR_BRUCK:
            trace = self.traces.ranks[a]
            where = f"smpi profile {self.profile_name!r}, rank {a}, line {trace.lines[int(ranks[a, kernel.R_PC])]}"
            if error == kernel.ERR_PAIRWISE:
                raise InputError(self.traces.listing, where,
                                 f"alltoall of {b} bytes per rank on {self.n} ranks: SimGrid 3.32 picks its "
                                 "pairwise algorithm, which throws when the number of ranks is not a power of 2",
                                 "change the message size or the number of ranks")
            raise InputError(self.traces.listing, where,
                             "alltoall whose receive datatype is larger than its send datatype: SimGrid "
                             "3.32's Bruck algorithm packs more than its buffer holds and aborts (MPI_Pack)",
                             "give the alltoall the same datatype twice")
        # a deadlock: each blocked rank, what it runs and the first request it waits for
        words.ranks = self._rank_views()
        flags = requests[:, kernel.Q_FLAGS]  # (free rows are marked done)
        blocking = ((flags & kernel.F_DONE) == 0) & (
            ((flags & kernel.F_RECV) != 0) | ((flags & kernel.F_DETACHED) == 0))
        for rank in words.ranks:
            if rank.over:
                continue
            mine = np.flatnonzero((requests[:, kernel.Q_WAITER] == rank.index) & blocking)
            if mine.size:
                first = mine[np.argmin(requests[mine, kernel.Q_WAITSEQ])]
                rank.pending = [self._request_view(requests[first])]
                channel = channels[int(requests[first, kernel.Q_CHAN])]
                if channel[kernel.C_DEAD]:
                    words._dead.add(tuple(int(channel[c]) for c in (kernel.C_SRC, kernel.C_DST, kernel.C_TAG)))
        words._deadlock()

    def _line(self, request: np.ndarray) -> int:
        poster = int(request[kernel.Q_DST] if request[kernel.Q_FLAGS] & kernel.F_RECV else request[kernel.Q_SRC])
        trace = self.traces.ranks[poster]
        pc = int(request[kernel.Q_PC])
        return trace.lines[pc] if 0 <= pc < len(trace) else 0

    def _rank_views(self) -> list:
        """SmpiReplay's ranks as the kernel left them (index, host, trace, pc, over)."""
        from joulesim.simulator.models.smpi_replay import _Rank

        ranks = self._state[0]
        views = []
        for r, trace in enumerate(self.traces.ranks):
            view = _Rank(r, int(ranks[r, kernel.R_HOST]), trace)
            view.pc = int(ranks[r, kernel.R_PC])
            view.over = bool(ranks[r, kernel.R_OVER])
            views.append(view)
        return views

    def _request_view(self, request: np.ndarray):
        from joulesim.simulator.models.smpi_replay import _Request

        flags = int(request[kernel.Q_FLAGS])
        view = _Request(int(request[kernel.Q_SRC]), int(request[kernel.Q_DST]), int(request[kernel.Q_TAG]),
                        int(request[kernel.Q_SIZE]), bool(flags & kernel.F_RECV), bool(flags & kernel.F_DETACHED),
                        self._line(request))
        view.done = bool(flags & kernel.F_DONE)
        view.failed = bool(flags & kernel.F_FAILED)
        return view
