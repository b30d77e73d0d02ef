"""`joulesim campaign run`: check the study, prepare its workloads, run what is not done yet.

Resumable: each instance's record is written as soon as it finishes, so Ctrl-C or a killed
runner loses nothing finished, and a rerun of the same file runs only the instances whose
record is missing (or failed, unless `retry_failed` is off). The results table is rewritten
at the end of every run, interrupted or not.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from joulesim.campaign.executors import DaskCluster, LocalPool, default_workers
from joulesim.campaign.instances import FileDigests, Instance, expand, select
from joulesim.campaign.results_store import ResultsStore
from joulesim.campaign.study_file import Study, load_study
from joulesim.campaign.workload_preparation import prepare, prepared_path
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError


@dataclass
class CampaignSummary:
    study: Study
    directory: str
    nb_instances: int
    nb_already_done: int
    nb_run: int = 0
    failed: list[str] = field(default_factory=list)  # ids of instances whose record is not "ok"
    tables: list[str] = field(default_factory=list)
    wall_time: float = 0.0
    interrupted: bool = False

    @property
    def exit_status(self) -> int:
        """0 when every instance succeeded; 100 + the number of failed instances (at most 199)."""
        return 100 + min(len(self.failed), 99) if self.failed else 0


def default_directory(study: Study) -> str:
    return f"{study.name}_results"


def instances_of(path: str, where: dict[str, list[str]] | None = None) -> tuple[Study, list[Instance], FileDigests]:
    """The study and its instances (those matching `where`, see instances.select)."""
    study = load_study(path)
    digests = FileDigests()
    return study, select(expand(study, digests), where or {}), digests


def prepare_workloads(study: Study, instances: list[Instance], digests: FileDigests, store: ResultsStore,
                      progress: bool) -> dict[Any, str]:
    """Convert each trace week and generate each seeded workload the instances use, once."""
    paths: dict[Any, str] = {}
    needed = list(dict.fromkeys(instance.workload for instance in instances))
    to_make = [w for w in needed if w.kind != "file" and not os.path.exists(prepared_path(w, digests, store.workloads_dir))]
    bar = _bar(progress, len(to_make), "preparing workloads", "workload")
    try:
        for workload in needed:
            try:
                paths[workload], _ = prepare(workload, digests, store.workloads_dir)
            except JoulesimError as exc:
                raise InputError(study.path, f"[[workloads]] {workload.label!r}"
                                 + (f" ({workload.variant[0]} {workload.variant[1]})" if workload.variant else ""),
                                 str(exc), "fix the workload's entry in the campaign file") from None
            except (TypeError, ValueError) as exc:  # a parameter of the wrong type for a generator
                raise InputError(study.path, f"[[workloads]] {workload.label!r}", f"{type(exc).__name__}: {exc}",
                                 "check the types of its parameters") from None
            if workload in to_make and bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return paths


def task_of(instance: Instance, study: Study, workload_path: str, store: ResultsStore) -> dict[str, Any]:
    return {
        "id": instance.id,
        "platform": instance.platform.source,
        "mmax": instance.platform.mmax,
        "workload": workload_path,
        "decider": instance.decider.name,
        "command": list(instance.decider.command) if instance.decider.command else None,
        "edc_library": instance.decider.edc_library,
        "edc_isolated": instance.decider.edc_isolated,
        "options": dict(instance.options),
        "energy": instance.energy,
        "timeout": study.timeout_s,
        "reply_timeout": study.reply_timeout_s,
        "export": os.path.join(store.runs_dir, instance.id, "out") if study.keep_outputs else None,
        "log_path": os.path.join(store.logs_dir, f"{instance.id}.log"),
        "window": list(study.window) if study.window else None,
    }


def run_campaign(path: str, directory: str | None = None, workers: int | None = None,
                 dask_address: str | None = None, connect_timeout: float = 10.0, retry_failed: bool = True,
                 progress: bool | None = None, where: dict[str, list[str]] | None = None) -> CampaignSummary:
    """Run the instances of campaign file `path` (those matching `where`) that are not done;
    the results table lists those instances. Progress goes to stderr unless `progress` is
    False: a bar on a terminal, a line every few seconds in a log."""
    started = time.perf_counter()
    progress = progress is not False
    study, instances, digests = instances_of(path, where)
    if not instances:
        raise JoulesimError(f"{path}: no instance matches --where " +
                            " ".join(f"{k}={','.join(v)}" for k, v in (where or {}).items()))
    store = ResultsStore(os.path.abspath(directory or default_directory(study)))
    store.check_writable()
    done = {}
    for instance in instances:
        record = store.load(instance.id)
        if record is not None and (record.get("status") == "ok" or not retry_failed):
            done[instance.id] = record
    todo = [instance for instance in instances if instance.id not in done]
    summary = CampaignSummary(study, store.directory, len(instances), len(done))
    by_id = {instance.id: instance for instance in todo}
    executor = None
    if todo:  # connect before preparing workloads: a wrong --dask address is told at once
        executor = (DaskCluster(dask_address, connect_timeout) if dask_address
                    else LocalPool(min(workers or default_workers(), len(todo))))
    try:
        workload_paths = prepare_workloads(study, instances, digests, store, progress)
    except BaseException:
        if executor is not None:
            executor.close(cancel=True)
        raise
    bar = _bar(progress, len(todo), f"campaign {study.name}", "instance")
    cancel = False
    try:
        if executor is not None:
            # Tasks are made as the executor takes them: the first instances start at once.
            tasks = (task_of(i, study, workload_paths[i.workload], store) for i in todo)
            for task, record in executor.run(tasks):
                store.save(by_id[task["id"]], record)
                summary.nb_run += 1
                if record["status"] != "ok":
                    summary.failed.append(task["id"])
                if bar is not None:
                    bar.set_postfix_str(f"failed {len(summary.failed)}", refresh=False)
                    bar.update()
    except KeyboardInterrupt:
        cancel = summary.interrupted = True
        raise
    finally:
        if bar is not None:
            bar.close()
        if executor is not None:
            executor.close(cancel)
        summary.failed += [i for i, r in done.items() if r.get("status") != "ok"]
        summary.tables = store.write_table(store.table(instances))
        summary.wall_time = time.perf_counter() - started
    return summary


def _bar(enabled: bool, total: int, description: str, unit: str) -> Any:
    if not enabled or total == 0:
        return None
    from joulesim.console.progress_bar import progress_bar

    return progress_bar(total, description, unit)
