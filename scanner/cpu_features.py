"""Hyper-Threading (SMT) and Turbo Boost as the kernel exposes them now."""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.host_layout import CPU_SMT_ACTIVE, CPU_SMT_CONTROL, CPUFREQ_BOOST, INTEL_NO_TURBO
from .hostroot import FactError, HostRoot
from .unavailable import Unavailable

Value = str | Unavailable | None  # None: the file is not there


@dataclass(frozen=True)
class CpuFeatures:
    smt_active: Value = None
    smt_control: Value = None
    no_turbo: Value = None
    boost: Value = None

    @property
    def exposed(self) -> bool:
        """The kernel offers SMT or turbo control at all (else nothing to judge)."""
        return any(value is not None for value in
                   (self.smt_active, self.smt_control, self.no_turbo, self.boost))


def _first_line(root: HostRoot, path: str) -> Value:
    try:
        text = root.read_optional(path, 4096)
    except FactError as exc:
        return Unavailable(str(exc))
    if text is None:
        return None
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def collect_cpu_features(root: HostRoot) -> CpuFeatures:
    return CpuFeatures(*(_first_line(root, path) for path in
                         (CPU_SMT_ACTIVE, CPU_SMT_CONTROL, INTEL_NO_TURBO, CPUFREQ_BOOST)))
