"""Size and build time of `joulesim campaign report --html` on 16 tiny instances (issue 49).

    python benchmarks/bench_campaign_pages.py            # in a temporary folder, removed after
    python benchmarks/bench_campaign_pages.py --keep DIR # the campaign and report kept in DIR

The campaign of tests/test_campaign_pages.py: two workloads of 10 jobs on the 2 hosts of the
shipped energy2 platform (in one of them, some jobs reach their walltime), FCFS and EASY
switching idle machines off after 7 delays, energy on: 16 instances, each with its page. Prints
the report folder's size in bytes, split into the pages, the shared BokehJS, the index and the
rest (the PNG plots of `campaign report`, with the plot extra), and the report's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from joulesim.campaign.runner import run_campaign

STUDY = """
[campaign]
name = "pages"
energy = true
outputs = true

[[platforms]]
path = "energy2"

[[workloads]]
path = "ok.json"

[[workloads]]
path = "kills.json"

[[deciders]]
decider = "fcfs"

[[deciders]]
name = "easy-os"
decider = "easy"
grid = {t_idle = [30, 60, 120, 240, 480, 960, 1920]}
"""


def workload(walltime) -> dict:
    return {"nb_res": 2,
            "jobs": [{"id": str(i), "subtime": 10 * i, "res": 1 + i % 2, "walltime": walltime(i), "profile": f"p{i % 3}"}
                     for i in range(10)],
            "profiles": {f"p{k}": {"type": "delay", "delay": 60 * (k + 1)} for k in range(3)}}


def write_inputs(directory: str) -> str:
    """The campaign's workloads and study file in `directory` (tests/test_campaign_pages.py builds
    the same campaign from here); the study file's path."""
    with open(os.path.join(directory, "ok.json"), "w") as handle:
        json.dump(workload(lambda i: 400), handle)
    with open(os.path.join(directory, "kills.json"), "w") as handle:
        json.dump(workload(lambda i: 100 if i % 2 else 400), handle)
    with open(os.path.join(directory, "study.toml"), "w") as handle:
        handle.write(STUDY)
    return os.path.join(directory, "study.toml")


def size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(path) for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="a new folder to keep the campaign and report in")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="bench-campaign-pages-")
    os.makedirs(directory, exist_ok=True)
    try:
        summary = run_campaign(write_inputs(directory), os.path.join(directory, "res"), workers=2, progress=False)
        assert summary.failed == [], summary.failed
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "joulesim.cli.main", "campaign", "report", "res", "-o", "report",
                        "--html"], cwd=directory, check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        report = os.path.join(directory, "report")
        parts = {name: size(os.path.join(report, name)) for name in ("instances", "static", "index.html")}
        total = size(report)
        pages = len(os.listdir(os.path.join(report, "instances")))
        print(f"{pages} pages: {parts['instances']:,} bytes; shared BokehJS (static/): {parts['static']:,}; "
              f"index: {parts['index.html']:,}; the rest (PNG plots): {total - sum(parts.values()):,}; "
              f"total {total:,} bytes; report built in {seconds:.1f} s")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
