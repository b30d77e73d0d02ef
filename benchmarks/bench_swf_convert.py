"""Speed of `joulesim workload from-swf` on the largest real trace (CEA-Curie, 312,826 jobs, .gz).

Converts ../shared/data/swf/CEA-Curie-2011-2.1-cln.swf.gz (beside the checkout) to a delay
workload in a temporary directory, with --procs-per-node 16 (Curie thin nodes), and prints
the seconds and jobs/s of the conversion alone, of conversion + writing the JSON, and the
process's peak memory (ru_maxrss).

    python benchmarks/bench_swf_convert.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRACE = SHARED / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()
    if not TRACE.is_file():
        sys.exit(f"bench_swf_convert: {TRACE} is absent: the real traces live in ../shared/data "
                 "beside the checkout (see its MANIFEST.md)")

    from joulesim.workload_tools.swf import convert_swf, write_workload

    best_convert = best_total = float("inf")
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "curie.json")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            workload, report = convert_swf(str(TRACE), procs_per_node=16)
            t1 = time.perf_counter()
            write_workload(workload, out)
            t2 = time.perf_counter()
            best_convert = min(best_convert, t1 - t0)
            best_total = min(best_total, t2 - t0)
            size = os.path.getsize(out)
            del workload
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    lines = report["job_lines"]
    print(f"trace: {TRACE.name} ({lines} job lines, {report['kept']} kept, nb_res {report['nb_res']})")
    print(f"convert:         {best_convert:6.2f} s  {lines / best_convert:10,.0f} jobs/s")
    print(f"convert + write: {best_total:6.2f} s  {lines / best_total:10,.0f} jobs/s  "
          f"(JSON {size / 1e6:.1f} MB)")
    print(f"peak memory: {peak_mb:.0f} MB (best of {args.repeat})")


if __name__ == "__main__":
    main()
