#!/usr/bin/env bash
# Run unmodified pybatsim 3.2.1 schedulers against `joulesim simulate` (Batsim 4 protocol).
# pybatsim pins pyzmq<23, which does not build on Python 3.11, so it is installed with
# --no-deps beside a current pyzmq. Usage: bash compat/run_pybatsim.sh (needs joulesim on PATH).
set -euo pipefail
work=$(mktemp -d)
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
  "$work/venv/bin/pybatsim" "$work/schedulers/$scheduler.py" -s "$endpoint" > "$work/$scheduler.log" 2>&1 &
  decider=$!
  joulesim simulate -p cluster32 -w "$work/shifted.json" -s "$endpoint" -e "$work/$scheduler" --timeout 30
  wait "$decider"
  echo "== pybatsim $scheduler: OK ($work/${scheduler}_jobs.csv)"
done
