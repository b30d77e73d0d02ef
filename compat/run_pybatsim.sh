#!/usr/bin/env bash
# Run unmodified pybatsim 3.2.1 schedulers against `joulesim simulate` (Batsim 4 protocol).
# pybatsim pins pyzmq<23, which does not build on Python 3.11, so it is installed with
# --no-deps beside a current pyzmq. Usage: bash compat/run_pybatsim.sh [OUTPUT_FOLDER]
# (needs joulesim on PATH). The runs' outputs and the schedulers' logs go to OUTPUT_FOLDER
# (default: pybatsim_results); the throw-away environment is removed when the script ends,
# however it ends.
set -euo pipefail
out=${1:-pybatsim_results}
mkdir -p "$out"
work=$(mktemp -d)
decider=
cleanup() {
  if [ -n "$decider" ]; then kill "$decider" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q pyzmq procset sortedcontainers docopt
"$work/venv/bin/pip" install -q --no-deps pybatsim==3.2.1
"$work/venv/bin/pip" download -q --no-deps -d "$work/wheel" pybatsim==3.2.1
unzip -q -o "$work"/wheel/pybatsim-3.2.1-py3-none-any.whl 'schedulers/*' -d "$work"
# pybatsim's sched framework asserts start times > 0: shift the default workload by 10 s.
python3 - "$work" <<'PY'
import json, sys, importlib.resources
src = importlib.resources.files("joulesim.workloads") / "default.json"
doc = json.loads(src.read_text())
for job in doc["jobs"]:
    job["subtime"] += 10
json.dump(doc, open(f"{sys.argv[1]}/shifted.json", "w"))
PY
for scheduler in fillerSched easyBackfill schedFcfs; do
  endpoint="ipc://$work/$scheduler.sock"
  "$work/venv/bin/pybatsim" "$work/schedulers/$scheduler.py" -s "$endpoint" > "$out/$scheduler.log" 2>&1 &
  decider=$!
  joulesim simulate -p cluster32 -w "$work/shifted.json" -s "$endpoint" -e "$out/$scheduler" --timeout 30
  wait "$decider"
  decider=
  echo "== pybatsim $scheduler: OK ($out/${scheduler}_jobs.csv)"
done
