"""A campaign's records committed beside its experiment: campaigns that take hours on two cores
span sessions, whose output folders (out/, git-ignored) do not survive.

The records file holds one compact JSON line per finished ("ok") instance, sorted by id (the same
records give the same bytes). A run restores them into its results folder first, so the
campaign runner skips those instances, and writes them back after; `--records-only` writes what
a stopped campaign finished. An instance's id covers its parameters and its input files'
digests, so a record is reused only for the same instance on the same inputs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    import pandas as pd


def add_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """--records FILE and --records-only, as every campaign experiment takes them (`default`: the
    committed file, said in the help)."""
    parser.add_argument("--records", type=Path, default=None,
                        help=f"the committed records (default {default}; none for --quick)")
    parser.add_argument("--records-only", action="store_true",
                        help="write the finished instances' records to --records and stop (a campaign stopped "
                             "mid-way keeps what it did)")


def chosen_records(args: argparse.Namespace, default: Path) -> Path | None:
    """The records file of this run: --records, else `default`, but none for a --quick run (its
    small campaign is not committed)."""
    return args.records if args.records is not None else None if args.quick else default


def write_records_only(parser: argparse.ArgumentParser, results_dir: Path, records: Path | None) -> int:
    """--records-only: write the finished records of `results_dir` and say how many (nothing
    else is written: a campaign may be running from the same files)."""
    if records is None:
        parser.error("--records-only needs --records FILE with --quick")
    held = save_records(results_dir, records)
    print(f"{records} holds {held} finished instance(s) (those of {results_dir} added)")
    return 0


def read_keyed_lines(path: Path, key: str, what: str) -> dict[str, dict]:
    """The records of a JSON-lines file by their `key` field, in the file's order (none when it
    does not exist yet); SystemExit naming the line that is not `what` (a JSON object with a
    string `key`). The campaigns' instance records and rl_energy's training records are kept so."""
    if not path.exists():
        return {}
    found = {}
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get(key), str):
            raise SystemExit(f"{path}: line {number} is not {what} (a JSON object with a {key}): "
                             f"restore the file from git")
        found[record[key]] = record
    return found


def write_keyed_lines(path: Path, records: dict[str, dict]) -> None:
    """One compact line per record, sorted by key (the same records give the same bytes), the
    file written whole: a temporary file renamed over it, so that a run stopped while writing
    leaves the old records, never half a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(b"".join(orjson.dumps(records[key], option=orjson.OPT_SORT_KEYS) + b"\n"
                                   for key in sorted(records)))
    temporary.replace(path)


def committed(records: Path) -> list[dict]:
    """The records of the committed file (none when it does not exist yet)."""
    return list(read_keyed_lines(records, "id", "an instance record").values())


def records_table(records: Path) -> "pd.DataFrame":
    """The committed records as a campaign's results table: one row per instance, its id
    (instance_id), parameters, metrics, status and wall time (what the experiments' figures
    read, with no input file needed)."""
    import pandas as pd

    return pd.DataFrame([{"instance_id": record["id"], **record["parameters"], **(record.get("metrics") or {}),
                          "status": record["status"], "wall_time": record.get("wall_time")}
                         for record in committed(records)])


def restore_records(records: Path, results_dir: Path) -> int:
    """Write each committed record whose instance has none in `results_dir` (as the campaign's
    store writes them): the campaign then skips it. Returns how many were restored."""
    return _restore(committed(records), results_dir)


def _restore(found: list[dict], results_dir: Path) -> int:
    if not found:
        return 0
    instances = results_dir / "instances"
    instances.mkdir(parents=True, exist_ok=True)
    restored = 0
    for record in found:
        target = instances / f"{record['id']}.json"
        if not target.exists():
            target.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
            restored += 1
    return restored


def report_restored(records: Path, results_dir: Path) -> None:
    """restore_records, and one line saying what it did: how many of the committed finished
    instances it wrote, and that the others were in the results folder already."""
    found = committed(records)
    restored, total = _restore(found, results_dir), len(found)
    print(f"{total} finished instance(s) committed in {records}: {restored} restored into {results_dir}, "
          f"{total - restored} there already (the campaign skips them all)", flush=True)


def save_records(results_dir: Path, records: Path) -> int:
    """Every finished ("ok") record of `results_dir` added to those already committed (a record
    is never lost: --records-only from a folder that lacks some keeps them), one compact line
    each, sorted by id (the same records give the same bytes), into `records`; the platform named
    by its file name (the folder is the machine's). Returns how many the file holds."""
    by_id = {record["id"]: record for record in committed(records)}
    for path in sorted((results_dir / "instances").glob("*.json")):
        record = orjson.loads(path.read_bytes())
        if record.get("status") != "ok":
            continue
        record["platform_source"] = Path(str(record.get("platform_source", ""))).name
        by_id[record["id"]] = record
    write_keyed_lines(records, by_id)
    return len(by_id)
