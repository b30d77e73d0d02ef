"""Batsim 5's own test EDCs on joulesim: the runs behind the README's "Checked against Batsim 5's
own test EDCs".

    python -m experiments.batsim5_edcs.run --batsim SRC --edcs LIBS

SRC is a checkout of Batsim 5 (oar-team/batsim, v5.0.0-rc2: its platforms/ and workloads/ are
read), LIBS the folder holding its test EDCs (test/edc-lib) built as lib<name>.so, which you
build yourself with batprotocol's C++ library (nothing here builds them). Without them the
script says so and stops.

What it runs, each EDC in a child process (`edc_isolated`: a library that aborts is a failed
case, not the end of the script):
- fcfs and easy, binary and JSON, on four of Batsim 5's workloads (cluster512, --mmax-workload),
  each jobs file compared with joulesim's own `fcfs` / `easy` on the Batsim 4 path;
- the cases of Batsim 5's test suite that joulesim supports: rejecter, exec1by1,
  exec1by1-custom-mapping, static (allocations as `extra_data` asks), killer, call-later-oneshot,
  periodic (its 48 cases, calls and energy probes), probe-energy (its 4 cases), force-simu-stop,
  dyn-register (the three cases that must succeed, the three that must fail), external-event-check
  (Batsim 5's e1, e2 and e1e2 cases, in JSON; in binary it must be refused at start).
  external-event-check needs ExternalEventOccurredEvent, of the batprotocol revision that rc2
  pins, which the 2024-11 schema lacks: build it against that schema with the event added as
  pybatsim's API and the EDC's own accessors name it (`table GenericExternalEvent { data:
  string; }`, `union ExternalEvent { GenericExternalEvent }`, `table ExternalEventOccurredEvent
  { id: string (required); external_event: ExternalEvent; }`, appended to the Event union): the
  JSON it reads is then exactly the later revision's, while its binary numbering would be a
  guess, which is why joulesim sends this event in JSON only.
Each run's verdict is the EDC's own: Batsim 5's test EDCs check what they receive (periodic: every
call and probe emission at its time, the last flagged; probe-energy: each host's energy growing
between its idle and full power, the sum probe equal to the per-host one's sum) and abort
otherwise, which is a failed run here.
Batsim 5's platforms are read as they are (their loopback routes included).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import joulesim
from joulesim.protocol.errors import JoulesimError

COMPARED_WORKLOADS = ("example_workload_hpc_seed1_jobs250", "example_workload_hpc_seed3_jobs250", "test_delays",
                      "test_batsim_paper_workload_seed1")


def run(edcs: Path, platforms: Path, batsim: Path, edc: str, platform: str, workload: str, init: dict,
        export: Path | None = None, **options) -> joulesim.RunResult | str:
    try:
        return joulesim.simulate(str(platforms / f"{platform}.xml"), str(batsim / "workloads" / f"{workload}.json"),
                                 edc_library=str(edcs / f"lib{edc}.so"), edc_init=json.dumps(init, sort_keys=True),
                                 edc_isolated=True, export=export, **options)
    except JoulesimError as exc:
        return f"error: {str(exc).splitlines()[0]}"


def compare_fcfs_easy(edcs: Path, platforms: Path, batsim: Path, folder: Path) -> list[str]:
    lines = []
    for workload in COMPARED_WORKLOADS:
        for name in ("fcfs", "easy"):
            reference = folder / f"{workload}-{name}-batsim4"
            joulesim.simulate(str(platforms / "cluster512.xml"), str(batsim / "workloads" / f"{workload}.json"), name,
                              mmax_workload=True, export=reference)
            for json_format in (False, True):
                prefix = folder / f"{workload}-{name}-{json_format}"
                result = run(edcs, platforms, batsim, name, "cluster512", workload, {"format_json": json_format},
                             export=prefix, mmax_workload=True)
                if isinstance(result, str):
                    lines.append(f"{name:5} {workload:36} {'json' if json_format else 'binary':6} {result}")
                    continue
                ours = Path(f"{prefix}_jobs.csv").read_text().splitlines()
                theirs = Path(f"{reference}_jobs.csv").read_text().splitlines()
                rows = sum(a != b for a, b in zip(ours, theirs))
                lines.append(f"{name:5} {workload:36} {'json' if json_format else 'binary':6} "
                             + ("byte-identical to joulesim's" if rows == 0 and len(ours) == len(theirs)
                                else f"{rows} of {len(ours) - 1} rows differ from joulesim's {name}"))
    return lines


def periodic_cases() -> list[tuple[str, dict]]:
    """Batsim 5's test_periodic.py cases: start0 (calls, or probes) and ten random seeds (calls
    and probes mixed as the test draws them), s and ms, finite and infinite."""
    cases = []
    for unit in ("s", "ms"):
        for infinite in (False, True):
            for probes in (False, True):
                cases.append((f"start0 {unit} {'infinite' if infinite else 'finite'}{' probes' if probes else ''}", {
                    "is_infinite": infinite, "time_unit": unit, "calls": [
                        {"init": 0, "period": 10, "nb": 1093, "is_probe": probes},
                        {"init": 0, "period": 100, "nb": 179, "is_probe": probes},
                        {"init": 0, "period": 1000, "nb": 13, "is_probe": probes},
                        {"init": 0, "period": 10000, "nb": 3, "is_probe": probes}]}))
    for seed in range(10):
        for unit in ("s", "ms"):
            for infinite in (False, True):
                random.seed(seed)  # (the test's own draws, in its order)
                count, base = random.randint(2, 5), random.randint(5, 16)
                calls = [{"init": random.randint(0, 100), "period": base ** random.randint(1, 4),
                          "nb": random.randint(1, 1000), "is_probe": bool(random.randint(0, 1))}
                         for _ in range(count)]
                cases.append((f"rand {seed} {unit} {'infinite' if infinite else 'finite'}",
                              {"is_infinite": infinite, "time_unit": unit, "calls": calls}))
    return cases


def other_edcs(edcs: Path, platforms: Path, batsim: Path) -> list[str]:
    lines = []

    def case(label: str, edc: str, platform: str, workload: str, init: dict, expect_ok: bool = True, **options):
        result = run(edcs, platforms, batsim, edc, platform, workload, init, **options)
        ok = not isinstance(result, str)
        verdict = "as expected" if ok == expect_ok else "NOT AS EXPECTED"
        lines.append(f"{label:48} {'ran' if ok else result[:90]}  ({verdict})")
        return result

    case("rejecter", "rejecter", "small_platform", "test_delays", {})
    case("exec1by1", "exec1by1", "small_platform", "test_delays", {})
    case("exec1by1-custom-mapping", "exec1by1-custom-mapping", "small_platform", "test_delays", {})
    for workload in ("test_extra_data_desired_allocation", "test_extra_data_desired_allocation_object"):
        for json_format in (False, True):
            kind = "object" if workload.endswith("object") else "string"
            result = case(f"static extra_data as {kind}, {'json' if json_format else 'binary'}", "static",
                          "small_platform", workload, {"format_json": json_format}, mmax_workload=True)
            if not isinstance(result, str):
                jobs = json.loads((batsim / "workloads" / f"{workload}.json").read_text())["jobs"]
                wanted = {f"w0!{job['id']}": (json.loads(job["extra_data"]) if isinstance(job["extra_data"], str)
                                              else job["extra_data"])["desired_allocation"] for job in jobs}
                got = dict(zip(result.jobs["workload_name"] + "!" + result.jobs["job_id"].astype(str),
                               result.jobs["allocated_resources"].astype(str)))
                lines[-1] += f"; allocations as extra_data asks: {all(got[k] == v for k, v in wanted.items())}"
    for workload in ("test_delays", "test_ptasks", "test_homo_ptasks", "test_compo_sequence_delay",
                     "test_compo_sequence_ptaskcomp"):
        for delay in (0.0, 1e-10, 1.0, 100.0):
            case(f"killer {workload} {delay:g}", "killer", "cluster512", workload, {"kill_delay": delay})
    for all_at_start in (False, True):
        for unit in ("s", "ms"):
            case(f"call-later-oneshot {all_at_start} {unit}", "call-later-oneshot", "small_platform", "test_delays",
                 {"issue_all_calls_at_start": all_at_start, "time_unit": unit, "calls": [10, 100, 1000, 10000]})
    for label, init in periodic_cases():  # (with energy, as the test runs them: --energy-host)
        case(f"periodic {label}", "periodic", "small_platform_replay_usage", "test_delays", init, energy=True)
    for behavior in ("wload", "deadline"):
        for delay in (0.0, 0.5):
            case(f"probe-energy {behavior} {delay:g}", "probe-energy", "cluster_energy_128", "test_homo_ptasks",
                 {"behavior": behavior, "inter_stop_probe_delay": delay}, energy=True)
    for json_format in (False, True):
        case(f"force-simu-stop {'json' if json_format else 'binary'}", "force-simu-stop", "small_platform",
             "test_delays", {"format_json": json_format})
    if (edcs / "libexternal-event-check.so").exists():
        for label, names in (("e1", ["test_generic_events"]), ("e2", ["test_generic_events2"]),
                             ("e1e2", ["test_generic_events", "test_generic_events2"])):
            events = [str(batsim / "events" / f"{name}.txt") for name in names]
            init = {"external_event_filenames": events}
            case(f"external-event-check {label} json", "external-event-check", "small_platform", "test_one_delay_job",
                 {**init, "format_json": True}, events=events)
        case("external-event-check binary (JSON only here)", "external-event-check", "small_platform",
             "test_one_delay_job", init, False, events=events)
    else:
        lines.append("external-event-check: not in the EDC folder (it needs the later batprotocol revision: see above)")
    for option, expect_ok in (("ack_jobs_ok", True), ("noack_jobs_ok", True), ("identical_job_names_fail", False),
                              ("identical_profile_names_fail", False), ("profile_reuse_fail", False),
                              ("profile_reuse_ok", True)):
        case(f"dyn-register {option}", "dyn-register", "small_platform", "test_one_delay_job", {"option": option},
             expect_ok)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batsim", type=Path, required=True, help="a Batsim 5 source tree (its platforms/, workloads/)")
    parser.add_argument("--edcs", type=Path, required=True, help="its test EDCs built as lib<name>.so")
    args = parser.parse_args()
    missing = [str(p) for p in (args.batsim / "workloads", args.batsim / "platforms", args.edcs / "libfcfs.so")
               if not p.exists()]
    if missing:
        sys.exit(f"not found: {', '.join(missing)} (give Batsim 5's source tree and its test EDCs, built by you)")
    with tempfile.TemporaryDirectory() as folder:
        platforms = args.batsim / "platforms"
        outputs = Path(folder) / "out"
        outputs.mkdir()
        print("fcfs and easy against joulesim's own, on the Batsim 4 path:")
        for line in compare_fcfs_easy(args.edcs, platforms, args.batsim, outputs):
            print("  " + line)
        print("Batsim 5's test cases:")
        lines = other_edcs(args.edcs, platforms, args.batsim)
        for line in lines:
            print("  " + line)
        unexpected = sum("NOT AS EXPECTED" in line for line in lines)
        print(f"{len(lines) - unexpected} of {len(lines)} cases as Batsim 5's tests expect")


if __name__ == "__main__":
    main()
