"""Where instances run: a local process pool (pebble), or a running Dask cluster.

Both take the same task dicts and yield (task, record) as instances finish, in completion
order. The work function is a campaign instance by default; another module-level function of
one task dict (e.g. `joulesim learn generate`'s scoring of one job pair) runs the same way. A problem of one instance (an error, a time limit, a worker that dies) becomes that
instance's record; the others go on.

Time limits: each instance stops itself at its `timeout` (the simulator checks the wall clock
at every decider call). In the local pool a worker still busy `KILL_GRACE_S` later (a decider
stuck in its own code) is killed and replaced by pebble. Dask cannot kill a task's thread: there
the instance's own check is the limit.
"""

from __future__ import annotations

import concurrent.futures
import os
from typing import Any, Callable, Iterator

from joulesim.campaign.instance_worker import run_instance
from joulesim.protocol.errors import JoulesimError

#: Seconds past an instance's time limit before the local pool kills its worker.
KILL_GRACE_S = 30.0


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

    def run(self, tasks: list[dict[str, Any]], work: Callable[[dict[str, Any]], dict[str, Any]] = run_instance
            ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        from pebble import ProcessExpired

        futures = {self._pool.schedule(work, args=(task,), timeout=task["timeout"] + KILL_GRACE_S): task
                   for task in tasks}
        for future in concurrent.futures.as_completed(futures):
            task = futures[future]
            try:
                record = future.result()
            except concurrent.futures.TimeoutError:
                record = _failure(task, "timeout", f"the instance went {KILL_GRACE_S:g} s past its time limit of "
                                  f"{task['timeout']:g} s without stopping; its worker was killed")
            except ProcessExpired as exc:
                record = _failure(task, "failed", f"the worker process running the instance died (exit code "
                                  f"{exc.exitcode}): a crash in native code, or out of memory")
            except Exception as exc:  # e.g. a task that could not be sent to the worker
                record = _failure(task, "failed", f"{type(exc).__name__}: {exc}")
            yield task, record

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
            raise JoulesimError("--dask needs the dask extra: pip install 'joulesim[dask]'") from None
        self.description = f"Dask cluster at {address}"
        try:
            self._client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise JoulesimError(f"cannot reach the Dask scheduler at {address} within {connect_timeout:g} s "
                                f"({type(exc).__name__}: {exc}); check that it runs (`dask scheduler`) and that "
                                "the address is its tcp://HOST:PORT") from None
        self.workers = len(self._client.scheduler_info().get("workers", {}))
        self._futures: list[Any] = []

    def run(self, tasks: list[dict[str, Any]], work: Callable[[dict[str, Any]], dict[str, Any]] = run_instance
            ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        from distributed import as_completed

        futures = {self._client.submit(work, task, key=f"joulesim-{work.__name__}-{task['id']}", pure=False): task
                   for task in tasks}
        self._futures = list(futures)
        for future in as_completed(futures, loop=self._client.loop):
            task = futures[future]
            try:
                record = future.result()
            except Exception as exc:  # KilledWorker, a lost connection...
                record = _failure(task, "failed", f"Dask could not run the instance: {type(exc).__name__}: {exc}")
            yield task, record

    def close(self, cancel: bool = False) -> None:
        if cancel and self._futures:
            self._client.cancel(self._futures)
        self._client.close()
