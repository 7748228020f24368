"""tuned_profile: a throughput tuned profile, RHEL 5's ktune, or a site's own profile that
gives what the throughput profiles give, at every boot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.host_layout import RHEL5_KERNEL_PREFIX, TUNED_ACTIVE_FILES
from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine
from ..tuned.active import TunedFacts
from ..unavailable import Unavailable
from .boot import enabled_tuned, thp_after_boot
from .io_boot import io_tuning_at_boot
from .sysctl_boot import sysctl_at_boot

# What Red Hat's throughput profiles give a SAS host (tuned 0.2.22's throughput-performance
# and enterprise-storage; tuned 2's throughput-performance), each judged as the rules that
# own it judge it after boot.
THROUGHPUT_GOVERNOR = "performance"
DIRTY_RATIO = {"key": "vm.dirty_ratio", "value_from": "dirty_ratio"}


def tuned_profile(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    allowed: list[str] = values["allowed_tuned_profiles"]
    expected = f"tuned installed, enabled at boot, active profile is or includes " \
               f"{' or '.join(allowed)}"
    tuned = facts.tuned
    if isinstance(tuned, Unavailable):
        return Outcome(Verdict.ERROR, expected, "unreadable", message=tuned.reason)
    if not tuned.installed and facts.host.kernel.startswith(RHEL5_KERNEL_PREFIX):
        return rhel5_ktune(tuned, expected)
    evidence = [
        Evidence("tuned installed", "", "yes" if tuned.installed else "no",
                 Verdict.PASS if tuned.installed else Verdict.FAIL, tuned.installed_evidence),
        Evidence("tuned enabled at boot", "", "yes" if tuned.enabled_at_boot else "no",
                 Verdict.PASS if tuned.enabled_at_boot else Verdict.FAIL,
                 tuned.enabled_evidence),
    ]
    active = tuned.active
    if isinstance(active, Unavailable):
        evidence.append(Evidence("active profile", tuned.active_source, "unreadable",
                                 Verdict.ERROR, active.reason))
    elif not active:
        evidence.append(Evidence("active profile", TUNED_ACTIVE_FILES[0], "none",
                                 Verdict.FAIL, "no active tuned profile"))
    elif tuned.chain.failed:  # tuned refuses the whole load and applies nothing
        evidence.append(Evidence("active profile", tuned.active_source, " ".join(active),
                                 Verdict.FAIL, tuned.chain.failed + ": it applies no profile"))
    else:
        # The active profiles count even when their files were not collected; includes
        # only when the including profile could be read.
        chain = list(dict.fromkeys([*active, *tuned.chain.names]))
        matched = [name for name in chain if name in allowed]
        note = "chain: " + " -> ".join(chain)
        for said in (tuned.ppd, tuned.startup):
            if said:
                note = f"{said}; {note}"
        if tuned.chain.problems:
            note += "; " + "; ".join(tuned.chain.problems)
        if tuned.chain.skipped:
            note += "; not applied on this host: " + "; ".join(tuned.chain.skipped)
        # A profile that could not be read may be the one that includes an allowed one.
        missed = Verdict.ERROR if tuned.chain.unreadable else Verdict.FAIL
        equivalent = ([] if matched or tuned.chain.unreadable
                      else _gives_throughput(facts, values))
        if equivalent:
            note += ("; a site profile: it gives what the throughput profiles give, "
                     "so it counts")
        evidence.append(Evidence("active profile", tuned.active_source, " ".join(active),
                                 Verdict.PASS if matched or equivalent else missed, note))
        evidence.extend(equivalent)
    result = combine(evidence)
    actual = "; ".join(f"{e.subject}: {e.actual}" for e in evidence)
    return Outcome(result, expected, actual, evidence)


def rhel5_ktune(tuned: TunedFacts, expected: str) -> Outcome:
    """RHEL 5 has no tuned: the ktune service, started at boot, is its throughput tuning."""
    started = bool(tuned.ktune.enabled)
    item = Evidence("ktune enabled at boot (RHEL 5: no tuned)", tuned.ktune.enabled or "",
                    "yes" if started else "no", Verdict.PASS if started else Verdict.FAIL,
                    (f"ELEVATOR={tuned.ktune.elevator}" if tuned.ktune.elevator else "")
                    if started else "no S<NN>ktune link in runlevels 3 and 5: chkconfig ktune on")
    return Outcome(item.verdict, expected + " (RHEL 5: ktune enabled at boot)",
                   f"{item.subject}: {item.actual}", [item])


def _governor_at_boot(facts: Facts) -> tuple[str, str] | None:
    """(governor, source) the enabled tuned or ktune sets at boot: tuned's [cpu] governor
    may list several separated by |, of which the CPU gets the first it offers
    (plugin_cpu.py); the first listed is taken here, which is what the throughput profiles
    list. ktune runs set_cpu_governor in its scripts' start()."""
    tuned = enabled_tuned(facts)
    if tuned is not None and (setting := tuned.chain.setting("cpu", "governor")):
        return setting[0].split("|")[0].strip(), f"tuned profile {setting[1]} [cpu]"
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    if ktune and ktune.enabled and ktune.governor:
        return ktune.governor
    return None


def _gives_throughput(facts: Facts, values: Mapping[str, Any]) -> list[Evidence]:
    """The settings that make a site's own active profile count, each as its boot rule
    judges it (governor, THP, vm.dirty_ratio, read-ahead and scheduler), or [] when one is
    missing."""
    items = []
    governor = _governor_at_boot(facts)
    if governor is None or governor[0] != THROUGHPUT_GOVERNOR:
        return []
    items.append(Evidence("counts: CPU governor at boot", governor[1], governor[0],
                          Verdict.PASS))
    thp = thp_after_boot(facts, "enabled")
    if not thp or any(item.verdict != Verdict.PASS for item in thp):
        return []
    items.append(Evidence("counts: THP after boot", thp[-1].source, thp[-1].actual,
                          Verdict.PASS))
    dirty = sysctl_at_boot(DIRTY_RATIO, facts, values)
    io = io_tuning_at_boot({}, facts, values)
    if dirty.result != Verdict.PASS or io.result != Verdict.PASS:
        return []
    items.append(Evidence("counts: vm.dirty_ratio after boot", dirty.evidence[0].source,
                          dirty.evidence[0].actual, Verdict.PASS))
    items.append(Evidence("counts: read-ahead and scheduler at boot",
                          "; ".join(sorted({e.source for e in io.evidence if e.source})),
                          io.actual, Verdict.PASS))
    return items
