"""A campaign's records committed beside its experiment: campaigns that take hours on two cores
span sessions, whose output folders (out/, git-ignored) do not survive.

The records file holds one compact JSON line per finished ("ok") instance, sorted by id (the same
records give the same bytes). A run restores them into its results folder first, so the
campaign runner skips those instances, and writes them back after; `--records-only` writes what
a stopped campaign finished. An instance's id covers its parameters and its input files'
digests, so a record is reused only for the same instance on the same inputs.
"""

from __future__ import annotations

from pathlib import Path

import orjson


def restore_records(records: Path, results_dir: Path) -> int:
    """Write each committed record whose instance has none in `results_dir` (as the campaign's
    store writes them): the campaign then skips it. Returns how many were restored."""
    if not records.exists():
        return 0
    instances = results_dir / "instances"
    instances.mkdir(parents=True, exist_ok=True)
    restored = 0
    for number, line in enumerate(records.read_bytes().splitlines(), start=1):
        try:
            record = orjson.loads(line)
            target = instances / f"{record['id']}.json"
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise SystemExit(f"{records}: line {number} is not an instance record (a JSON object with an id): "
                             f"restore the file from git") from None
        if not target.exists():
            target.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
            restored += 1
    return restored


def save_records(results_dir: Path, records: Path) -> int:
    """Every finished ("ok") record of `results_dir`, one compact line each, sorted by id (the
    same records give the same bytes), into `records`; the platform named by its file name (the
    folder is the machine's). Returns how many."""
    lines = []
    for path in sorted((results_dir / "instances").glob("*.json")):
        record = orjson.loads(path.read_bytes())
        if record.get("status") != "ok":
            continue
        record["platform_source"] = Path(str(record.get("platform_source", ""))).name
        lines.append(orjson.dumps(record, option=orjson.OPT_SORT_KEYS))
    records.parent.mkdir(parents=True, exist_ok=True)
    records.write_bytes(b"".join(line + b"\n" for line in lines))
    return len(lines)
