"""Rerun every experiment under the current defaults, one after the other.

    python -m experiments.reproduce                 # every experiment, whole (hours: see each README)
    python -m experiments.reproduce --quick         # a small version of each (minutes), READMEs untouched
    python -m experiments.reproduce --only pcbe,grid_energy
    python -m experiments.reproduce --list          # the experiments and their commands

A whole run writes each experiment's committed results (its `results/` folder or the file its
README names) and rewrites its README from them; an experiment whose README quotes two sweeps
(placement_network) runs its second whole command right after the first. A quick run writes under --out (default
out/reproduce_quick) and leaves the READMEs alone: its figures are of smaller inputs. Each
experiment runs as its own process, as its README says to run it; one whose inputs in
../shared are absent says so in its output (and, for some, with a failing exit status, which
this command reports as a failure).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Experiment:
    name: str
    whole: tuple[str, ...]
    quick: Callable[[Path], list[str]]   # the quick run's arguments, given its output folder
    what: str
    then: tuple[str, ...] | None = None  # a second whole run, whose results the README quotes too

    def command(self, quick: bool, out: Path) -> list[str]:
        args = self.quick(out / self.name) if quick else list(self.whole)
        return [sys.executable, "-m", f"experiments.{self.name}.run", *args]

    def commands(self, quick: bool, out: Path) -> list[list[str]]:
        """What a run of this experiment runs: the quick command, or every whole one."""
        if quick or self.then is None:
            return [self.command(quick, out)]
        return [self.command(False, out), [sys.executable, "-m", f"experiments.{self.name}.run", *self.then]]


EXPERIMENTS = [
    Experiment("pcbe", (), lambda out: ["--comparison", "--results", str(out)],
               "seed 000, tables 5.1-5.3 against the thesis's IRMaSim results"),
    Experiment("irmasim_grid", (), lambda out: ["--out", str(out), "--results", str(out / "results")],
               "seed 002, IRMaSim's heuristic grid"),
    Experiment("grid_energy", (), lambda out: ["--quick", "--out", str(out)],
               "seed 004, figures 1 and 2"),
    Experiment("utility_policies", (), lambda out: ["--pairs", "4", "--permutations", "2000", "--seeds", "2",
                                                    "--out", str(out), "--no-readme"],
               "seed 003, utility functions from simulation and regression"),
    Experiment("energy_shutdown", (), lambda out: ["--jobs", "300", "--only", "easy,os_tidle0", "--out", str(out),
                                                   "--no-plots"],
               "seed 001 §7.6, shutdown policies on KTH-SP2"),
    Experiment("placement_network", (), lambda out: ["--quick", "--out", str(out), "--no-plots"],
               "seed 001 figure 5.1, placement against communication",
               then=("--host-link-bw", "1.25e8", "--fcomm-stride", "4")),
    Experiment("grid_broker", (), lambda out: ["--quick", "--out", str(out), "--no-readme"],
               "seed 004 figure 3, a broker over ten clusters"),
    Experiment("energy_budget", ("--out", "out/energy_budget"), lambda out: ["--quick", "--out", str(out)],
               "seed 001 §6.5, EASY under an energy budget"),
    # (its records of finished trainings in the output folder too: the committed ones are the whole run's)
    Experiment("rl_energy", (), lambda out: ["--only", "exp2_energy", "--seeds", "1", "--runs", "2", "--unseen", "2",
                                             "--unseen-runs", "2", "--out", str(out), "--no-readme",
                                             "--records", str(Path(out) / "tasks.jsonl")],
               "seed 002, the Energy scheduler (PPO) against the heuristic grid"),
]
BY_NAME = {e.name: e for e in EXPERIMENTS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small version of each; READMEs untouched")
    parser.add_argument("--only", default=None, metavar="NAMES", help="comma-separated experiment names")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "out" / "reproduce_quick",
                        help="where quick runs write (default: out/reproduce_quick)")
    parser.add_argument("--list", action="store_true", help="list the experiments and their commands")
    args = parser.parse_args(argv)
    chosen = EXPERIMENTS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            parser.error(f"--only: no experiment {', '.join(unknown)} (known: {', '.join(BY_NAME)})")
        chosen = [BY_NAME[n] for n in names]
    if args.list:
        for e in chosen:
            whole = f"\n{'':18} then:  python ".join(" ".join(c[1:]) for c in e.commands(False, args.out))
            print(f"{e.name:18} {e.what}\n{'':18} whole: python {whole}\n"
                  f"{'':18} quick: python {' '.join(e.command(True, args.out)[1:])}")
        return 0
    failed = []
    for i, e in enumerate(chosen, 1):
        began = time.perf_counter()
        status = 0
        for command in e.commands(args.quick, args.out):
            print(f"[{i}/{len(chosen)}] {e.name}: python {' '.join(command[1:])}", flush=True)
            status = subprocess.run(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL).returncode
            if status:
                break
        print(f"[{i}/{len(chosen)}] {e.name}: {'done' if status == 0 else f'FAILED (exit {status})'} in "
              f"{time.perf_counter() - began:.0f} s", flush=True)
        if status:
            failed.append(e.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
