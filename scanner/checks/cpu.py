"""turbo_and_smt: Turbo Boost and Hyper-Threading on, now and after the next boot (seed 001,
64 Core Benchmark Configuration: "NUMA ON, HT ON, TURBO ON"; seed 000 §4.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.host_layout import CPU_SMT_ACTIVE, CPU_SMT_CONTROL, CPUFREQ_BOOST, INTEL_NO_TURBO
from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine_judged, summarise
from ..unavailable import Unavailable
from .boot import enabled_tuned, tuned_unknown

# tuned's [cpu] options that turn turbo off: no_turbo=1 (plugin_cpu.py, from v2.3.0) and
# boost=0 (from v2.24.0).
TUNED_BOOST_SINCE = (2, 24)


def _now(subject: str, path: str, value: str | Unavailable | None, on: str,
         off_note: str, meaning: tuple[str, str] | None = None) -> Evidence | None:
    """The value read now, judged on or off; ``meaning`` (what on, what off is called) is
    said beside a number whose sense is not its look: intel_pstate's no_turbo 0 is turbo on."""
    if value is None:
        return None
    if isinstance(value, Unavailable):
        return Evidence(subject, path, value.what, Verdict.ERROR, value.reason)
    shown = f"{value} ({meaning[0] if value == on else meaning[1]})" if meaning else value
    return Evidence(subject, path, shown, Verdict.PASS if value == on else Verdict.FAIL,
                    "" if value == on else off_note)


def _smt_off_at_boot(args: tuple[str, ...] | list[str]) -> str | None:
    """kernel/cpu.c: early_param("nosmt") disables SMT (nosmt=force for good); mitigations=
    auto,nosmt does where the CPU is vulnerable to L1TF or MDS."""
    for arg in args:
        name, _, value = arg.partition("=")
        if name == "nosmt" or (name == "mitigations" and "nosmt" in value.split(",")):
            return arg
    return None


def turbo_and_smt(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    expected = "Hyper-Threading (SMT) and Turbo Boost on, now and after the next boot"
    cpu = facts.cpu_features
    items: list[Evidence] = []
    if cpu.smt_control == "notsupported" and cpu.htt:
        # kernel/cpu.c: notsupported when the topology shows no sibling threads, which is
        # also what Hyper-Threading switched off in the firmware looks like; the ht flag is
        # set on every multi-core CPU, so it cannot tell the two apart.
        items.append(Evidence("SMT", CPU_SMT_CONTROL, "notsupported", Verdict.NOTCHECKED,
                              "the kernel sees no sibling threads: the CPU has none, or "
                              "Hyper-Threading is off in the firmware (which looks the same "
                              "to the kernel); check the firmware setup"))
    elif cpu.smt_control == "notsupported":
        items.append(Evidence("SMT", CPU_SMT_CONTROL, "notsupported", Verdict.NOTAPPLICABLE,
                              "the CPU has no sibling threads (no ht flag in cpuinfo)"))
    elif smt := _now("SMT now", CPU_SMT_ACTIVE, cpu.smt_active, "1",
                     f"sibling threads are off ({CPU_SMT_CONTROL}: {cpu.smt_control}): turn "
                     "Hyper-Threading on in the firmware, or echo on > " + CPU_SMT_CONTROL):
        items.append(smt)
        for source in facts.boot.deciding:
            if argument := _smt_off_at_boot(source.args):
                always = argument.startswith("nosmt")  # else mitigations=...,nosmt
                items.append(Evidence(
                    "SMT at next boot", source.path, argument,
                    Verdict.FAIL if always else Verdict.INFORMATIONAL,
                    "the kernel turns sibling threads off at boot" if always else
                    "turns sibling threads off where the CPU is vulnerable to L1TF or MDS: a "
                    "security choice, which tailoring can keep"))
    for subject, path, value, on in (("Turbo now (intel_pstate)", INTEL_NO_TURBO,
                                      cpu.no_turbo, "0"),
                                     ("Turbo now (cpufreq boost)", CPUFREQ_BOOST, cpu.boost, "1")):
        if turbo := _now(subject, path, value, on,
                         "turbo is off (the firmware, or a write to this file)",
                         ("turbo on", "turbo off")):
            items.append(turbo)
    items.extend(_turbo_at_boot(facts))
    judged = [item for item in items if item.verdict not in (Verdict.NOTAPPLICABLE,
                                                              Verdict.INFORMATIONAL)]
    result = combine_judged(judged, if_none=Verdict.NOTAPPLICABLE)
    return Outcome(result, expected, summarise(judged) or "no SMT or turbo control exposed",
                   items)


def _turbo_at_boot(facts: Facts) -> list[Evidence]:
    tuned = enabled_tuned(facts)
    if tuned is None:
        return []
    if unknown := tuned_unknown(facts):
        return [unknown]
    found = []
    if (setting := tuned.chain.setting("cpu", "no_turbo")) and setting[0].strip() not in ("0", ""):
        found.append(Evidence("Turbo at next boot", f"tuned profile {setting[1]} [cpu]",
                              f"no_turbo={setting[0]}", Verdict.FAIL,
                              "tuned writes it to intel_pstate/no_turbo when it starts"))
    if (setting := tuned.chain.setting("cpu", "boost")) and setting[0].strip() == "0":
        honoured = tuned.honours(TUNED_BOOST_SINCE) is not False
        found.append(Evidence("Turbo at next boot", f"tuned profile {setting[1]} [cpu]",
                              "boost=0", Verdict.FAIL if honoured else Verdict.INFORMATIONAL,
                              "tuned turns boost off when it starts" if honoured else
                              "ignored: tuned honours boost from 2.24"))
    return found
