"""Hyper-Threading (SMT) and Turbo Boost as the kernel exposes them now."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import (
    CPU_SMT_ACTIVE,
    CPU_SMT_CONTROL,
    CPUFREQ_BOOST,
    INTEL_NO_TURBO,
    PROC_CPUINFO,
)
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable

Value = str | Unavailable | None  # None: the file is not there


@dataclass(frozen=True)
class CpuFeatures:
    smt_active: Value = None
    smt_control: Value = None
    no_turbo: Value = None
    boost: Value = None
    # cpuinfo's ht flag (CPUID.1:EDX.HTT): set on every multi-core x86 CPU, so it says only
    # that the CPU may have sibling threads. None: no flags line.
    htt: bool | None = None

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


def _htt(root: HostRoot) -> bool | None:
    try:
        text = root.read_optional(PROC_CPUINFO, 4 * 1024 * 1024) or ""
    except FactError:
        return None
    match = re.search(r"^(?:flags|Features)[ \t]*:(.*)$", text, re.MULTILINE)
    return None if match is None else "ht" in match.group(1).split()


def collect_cpu_features(root: HostRoot) -> CpuFeatures:
    active, control, no_turbo, boost = (_first_line(root, path) for path in (
        CPU_SMT_ACTIVE, CPU_SMT_CONTROL, INTEL_NO_TURBO, CPUFREQ_BOOST))
    return CpuFeatures(active, control, no_turbo, boost, htt=_htt(root))
