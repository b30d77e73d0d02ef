"""Where instances run: a local process pool (pebble), or a running Dask cluster.

Both take the same task dicts and yield (task, record) as instances finish, in completion
order; they draw tasks from the iterable only a few ahead of the workers, so the first start
at once however many there are. The work function is a campaign instance by default; another
module-level function of one task dict (e.g. `joulesim learn generate`'s scoring of one job
pair) runs the same way. A problem of one instance (an error, a time limit, a worker that
dies) becomes that instance's record; the others go on.

Time limits: each instance stops itself at its `timeout` (the simulator checks the wall clock
at every decider call). In the local pool a worker still busy `KILL_GRACE_S` later (a decider
stuck in its own code) is killed and replaced by pebble. Dask cannot kill a task's thread: there
the instance's own check is the limit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import urllib.parse
from typing import Any, Callable, Iterable, Iterator

from joulesim.campaign.instance_worker import run_instance
from joulesim.console.install_hint import install_hint
from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import clip
from joulesim.protocol.errors import JoulesimError

#: Seconds past an instance's time limit before the local pool kills its worker.
KILL_GRACE_S = 30.0
#: Tasks handed to the executor ahead of those running, per worker (local pool) and at least
#: (Dask, whose workers may join later): tasks are made and submitted as others finish, so the
#: first instances start at once and a finished one is recorded at once.
TASKS_AHEAD_PER_WORKER = 2
DASK_TASKS_AHEAD = 1000


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _failure(task: dict[str, Any], status: str, error: str) -> dict[str, Any]:
    return {"id": task["id"], "status": status, "error": error, "log": "", "metrics": None,
            "decider_calls": None, "wall_time": None}


def _ignore_interrupts() -> None:
    """In pool workers: Ctrl-C reaches the whole process group, but only the runner handles it
    (it stops the pool): a worker interrupted first would record its instance as failed."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalPool:
    """A pool of worker processes on this machine."""

    description = "local process pool"

    def __init__(self, workers: int, start_method: str | None = None):
        """start_method: multiprocessing's ("fork", "forkserver", "spawn"); None: the platform's
        default (fork on Linux, which lets workers use what the parent imported)."""
        import multiprocessing

        import pebble

        self.workers = workers
        context = multiprocessing.get_context(start_method) if start_method else multiprocessing
        self._pool = pebble.ProcessPool(max_workers=workers, initializer=_ignore_interrupts, context=context)

    def run(self, tasks: Iterable[dict[str, Any]], work: Callable[[dict[str, Any]], dict[str, Any]] = run_instance
            ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        from pebble import ProcessExpired

        waiting = iter(tasks)
        running: dict[Any, dict[str, Any]] = {}

        def submit_next() -> None:
            task = next(waiting, None)
            if task is not None:
                running[self._pool.schedule(work, args=(task,), timeout=task["timeout"] + KILL_GRACE_S)] = task

        for _ in range(self.workers * TASKS_AHEAD_PER_WORKER):
            submit_next()
        while running:
            finished, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                submit_next()  # before the caller records this one: keep the workers busy
                yield task, self._record(future, task, ProcessExpired)

    @staticmethod
    def _record(future: Any, task: dict[str, Any], ProcessExpired: type) -> dict[str, Any]:
        """The record of a finished future: its result, or the failure that stopped it."""
        try:
            return future.result()
        except concurrent.futures.TimeoutError:
            return _failure(task, "timeout", f"the instance went {KILL_GRACE_S:g} s past its time limit of "
                            f"{task['timeout']:g} s without stopping; its worker was killed")
        except ProcessExpired as exc:
            return _failure(task, "failed", f"the worker process running the instance died (exit code "
                            f"{exc.exitcode}): a crash in native code, or out of memory")
        except Exception as exc:  # e.g. a task that could not be sent to the worker
            return _failure(task, "failed", f"{type(exc).__name__}: {exc}")

    def close(self, cancel: bool = False) -> None:
        if cancel:
            self._pool.stop()
        else:
            self._pool.close()
        self._pool.join()


class DaskCluster:
    """A running dask.distributed scheduler; its workers need joulesim installed and the
    campaign's files at the same paths (a shared file system, as on a cluster)."""

    def __init__(self, address: str, connect_timeout: float):
        try:
            from distributed import Client
        except ImportError:
            raise JoulesimError(f"--dask needs the dask extra: {install_hint('dask')}") from None
        address = scheduler_address(address)
        self.description = f"Dask cluster at {address}"
        # distributed's Client waits past its timeout, or ends in a traceback, at an address that
        # answers something else (an HTTP server, the dashboard): ask the scheduler who it is first.
        _check_is_scheduler(address, connect_timeout)
        try:
            self._client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise _unreachable(address, connect_timeout, exc) from None
        self.workers = len(self._client.scheduler_info().get("workers", {}))
        self._running: dict[Any, dict[str, Any]] = {}

    def run(self, tasks: Iterable[dict[str, Any]], work: Callable[[dict[str, Any]], dict[str, Any]] = run_instance
            ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        from distributed import as_completed

        waiting = iter(tasks)
        finished = as_completed(loop=self._client.loop)

        def submit_next() -> None:
            task = next(waiting, None)
            if task is not None:
                future = self._client.submit(work, task, key=f"joulesim-{work.__name__}-{task['id']}", pure=False)
                self._running[future] = task
                finished.add(future)

        for _ in range(max(DASK_TASKS_AHEAD, self.workers * TASKS_AHEAD_PER_WORKER)):
            submit_next()
        for future in finished:
            task = self._running.pop(future)
            submit_next()
            try:
                record = future.result()
            except Exception as exc:  # KilledWorker, a lost connection...
                record = _failure(task, "failed", f"Dask could not run the instance: {type(exc).__name__}: {exc}")
            yield task, record

    def close(self, cancel: bool = False) -> None:
        if cancel and self._running:
            self._client.cancel(list(self._running))
        self._client.close()


def scheduler_address(address: str) -> str:
    """`address` as tcp://HOST:PORT (HOST:PORT alone means tcp://), or an InputError saying what
    is expected: a mistyped address is refused at once, not after a connection timeout."""
    text = address if "://" in address else f"tcp://{address}"
    try:
        parts = urllib.parse.urlsplit(text)
        valid = (parts.scheme in ("tcp", "tls") and bool(parts.hostname) and bool(parts.port)
                 and parts.username is None and not (parts.path or parts.query or parts.fragment))
    except ValueError:  # a port out of range or not a number, a malformed [IPv6] host
        valid = False
    if not valid:
        raise InputError("--dask", repr(clip(address)), "is not the address of a Dask scheduler",
                         "give the tcp://HOST:PORT the scheduler prints when it starts, e.g. tcp://10.1.2.3:8786, "
                         "or tls://HOST:PORT with TLS")
    return text


def _unreachable(address: str, timeout: float, exc: BaseException) -> JoulesimError:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return JoulesimError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({detail}); check "
                         "that it runs (`dask scheduler`) and that the address is its tcp://HOST:PORT, not its "
                         "dashboard's (http://...:8787)")


def _check_is_scheduler(address: str, timeout: float) -> None:
    """Ask `address` for its identity within `timeout` seconds: a JoulesimError unless a Dask
    scheduler answers. Runs its own event loop in a thread (the caller may have one running)."""
    from distributed.comm import connect
    from distributed.security import Security

    async def identity() -> Any:
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    def ask() -> Any:
        return asyncio.run(asyncio.wait_for(identity(), timeout))

    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        try:
            reply = thread.submit(ask).result()
        except (OSError, TimeoutError) as exc:  # nothing listens, or it answers nothing Dask can read
            raise _unreachable(address, timeout, exc) from None
        except Exception as exc:  # it answered, but not in Dask's protocol (e.g. an HTTP server)
            raise JoulesimError(f"{address} is not a Dask scheduler: it does not answer in Dask's protocol "
                                f"({type(exc).__name__}); give the tcp://HOST:PORT the scheduler prints when it "
                                "starts, not its dashboard's (http://...:8787)") from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise JoulesimError(f"{address} is " + (f"a Dask {kind}" if isinstance(kind, str) else
                                                "not a Dask scheduler") +
                            ", not the scheduler; give the scheduler's tcp://HOST:PORT (the one the workers were "
                            "given)")
