"""`joulesim report` on a large run: build time, file size, first paint and zoom in Chromium.

Input: the CEA-Curie trace from ../shared/data/swf (312,807 jobs after conversion; skipped
with a message when ../shared is absent), converted by `joulesim workload from-swf`, its first
--jobs jobs run by EASY in-process on a JSON platform of the trace's 93,312 hosts (as
BENCHMARKS.md's memory measurement does). Then: the report's build time and size; in headless
Chromium (Debian's chromium and chromium-driver, through selenium) the time from loading the
file to the first drawn frame of every figure, and zooms of the shared time axis (each to a
fraction of the previous view, as the zoom tools set it) until the next frame is drawn.

    python benchmarks/bench_report.py [--jobs 312807]
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
from pathlib import Path

SWF = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
HOSTS = 93_312
DRAWN = """
const done = arguments[arguments.length - 1];
if (!(window.Bokeh && Bokeh.documents.length && [...Bokeh.index.all_views()].length)) { done(false); return; }
requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
"""
# Zoom the shared time axis to a fraction of what it shows (as the zoom tools do: a new start
# and end), then wait until the frames drawn stop changing what the Gantt shows (Bokeh runs
# the level of detail's callbacks a moment after the change).
ZOOM = """
const done = arguments[arguments.length - 1];
const doc = Bokeh.documents[0];
const renderer = doc.get_model_by_name('gantt_jobs_0');
for (const model of doc.all_models)
    if (model.x_range && model.renderers && model.renderers.includes(renderer)) {
        const range = model.x_range, middle = (range.start + range.end) / 2, half = (range.end - range.start) / 2;
        range.setv({start: middle - half * arguments[0], end: middle + half * arguments[0]});
    }
let last = null, same = 0;
const state = () => `${renderer.visible} ${renderer.data_source.get_length()}`;
const frame = () => requestAnimationFrame(() => {
    const now = state();
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= 2) done(renderer.visible); else frame();
});
frame();
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="only the trace's first JOBS jobs")
    args = parser.parse_args()
    if not SWF.exists():
        raise SystemExit(f"skipped: {SWF} is absent (the benchmark reads ../shared/data beside the checkout)")
    import joulesim
    from joulesim.analysis.html_report import write_report
    from joulesim.analysis.run_outputs import RunOutputs

    with tempfile.TemporaryDirectory(prefix="bench_report_") as name:
        directory = Path(name)
        workload = directory / "curie.json"
        subprocess.run([sys.executable, "-m", "joulesim.cli.main", "workload", "from-swf", str(SWF), "-o",
                        str(workload)], check=True, capture_output=True)
        if args.jobs is not None:
            data = json.loads(workload.read_text())
            data["jobs"] = data["jobs"][:args.jobs]
            workload.write_text(json.dumps(data))
        platform = {"master": {"name": "master_host"},
                    "clusters": [{"id": "c", "prefix": "h", "count": HOSTS, "speed": "1Gf"}]}
        (directory / "platform.json").write_text(json.dumps(platform))
        start = time.perf_counter()
        # No Pajé trace: on this trace it grows by gigabytes a minute, and the report does not read it.
        result = joulesim.simulate(str(directory / "platform.json"), str(workload), "easy",
                                   export=str(directory / "out"), disable_schedule_tracing=True)
        print(f"simulation: {len(result.jobs):,} jobs in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        page = write_report([RunOutputs(str(directory / "out"))], str(directory / "report.html"))
        print(f"report: built in {time.perf_counter() - start:.1f} s, {os.path.getsize(page) / 1e6:.1f} MB")
        browse(page)


def browse(page: str) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1300,1500",
                     "--enable-unsafe-swiftshader"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_script_timeout(600)
    driver.set_page_load_timeout(600)
    try:
        start = time.perf_counter()
        driver.get(Path(page).as_uri())
        while not driver.execute_async_script(DRAWN):
            time.sleep(0.05)
        print(f"browser: first frame {time.perf_counter() - start:.1f} s after the load began")
        ARTIFACTS.mkdir(exist_ok=True)  # (screenshots to look at, as the tests keep theirs)
        driver.save_screenshot(str(ARTIFACTS / "report_curie_first_frame.png"))
        for factor in (0.5, 0.1, 0.01, 0.001):
            start = time.perf_counter()
            exact = driver.execute_async_script(ZOOM, factor)
            print(f"browser: zoom to {factor:g} of the view drawn in {time.perf_counter() - start:.2f} s "
                  f"({'rectangles' if exact else 'raster'})")
        driver.save_screenshot(str(ARTIFACTS / "report_curie_zoomed.png"))
        print(f"screenshots: {ARTIFACTS}/report_curie_first_frame.png, report_curie_zoomed.png")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
