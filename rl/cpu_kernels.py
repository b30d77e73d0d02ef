"""Torch's CPU kernels pinned to one instruction set: the same training gives the same model on
every x86-64 CPU that has it.

Torch picks its vectorised kernels by the CPU's instruction set (AVX-512, AVX2, or none), and PPO
amplifies their rounding differences: experiment 2's energy objective, seed 0, trained to a test
mean of 23,729.61 J with AVX2 kernels and 23,694.88 J with AVX-512 kernels on the same AMD EPYC
(2026-11-29); with AVX2 kernels that CPU gave the AVX2 machine's figure to the last digit. So
joulesim's rl package asks torch for its AVX2 kernels (ATEN_CPU_CAPABILITY=avx2) before torch
is imported, on every CPU that has AVX2 (x86-64 CPUs since 2013-2015). Left alone: a choice the
user made (ATEN_CPU_CAPABILITY already set), CPUs without AVX2 (torch then uses what they have,
and results may differ), and a process that imported torch before joulesim.rl (too late to
choose: `capability()` tells which kernels run, and training records it in the model file).
"""

from __future__ import annotations

import os
import sys

PINNED = "avx2"
VARIABLE = "ATEN_CPU_CAPABILITY"


def cpu_has_avx2(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether the CPU advertises AVX2 (Linux's cpuinfo flags; False where it cannot be read)."""
    try:
        with open(cpuinfo) as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "avx2" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def pin(environ: "os._Environ[str] | dict[str, str]" = os.environ, modules: dict = sys.modules,
        has_avx2: bool | None = None) -> str | None:
    """Ask torch for its AVX2 kernels unless the user chose, torch is already imported or the CPU
    lacks AVX2. Returns the value set, else None."""
    if VARIABLE in environ or "torch" in modules:
        return None
    if not (cpu_has_avx2() if has_avx2 is None else has_avx2):
        return None
    environ[VARIABLE] = PINNED
    return PINNED


def capability() -> str:
    """The kernels torch runs in this process (e.g. "AVX2", "AVX512", "DEFAULT")."""
    import torch

    return str(torch.backends.cpu.get_cpu_capability())
