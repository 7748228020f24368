"""Kernel settings read from /sys and /proc: THP, CPU governor, sysctl."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...rules.check_kinds import sysctl_wanted
from ...rules.host_layout import (
    PROC_CMDLINE,
    PROC_CPUINFO,
    SYSCTL_BYTES_TWINS,
)
from ..facts import Facts
from ..parsers.simple import ascii_int
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..unavailable import Unavailable


def thp_mode(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    setting: str = params["setting"]
    allowed: list[str] = params["allowed"]
    expected = f"THP {setting} selects {' or '.join(allowed)}"
    thp = facts.thp
    assert thp is not None  # the kind needs thp_supported: the engine checked it
    if isinstance(thp, Unavailable):
        return Outcome(Verdict.ERROR, expected, "unreadable", message=thp.reason)
    source = f"{thp.base}/{setting}"
    selection = thp.enabled if setting == "enabled" else thp.defrag
    if isinstance(selection, Unavailable):
        unreadable = Evidence(f"THP {setting}", source, selection.what, Verdict.ERROR,
                              selection.reason)
        return Outcome(Verdict.ERROR, expected, selection.what, [unreadable], selection.reason)
    verdict = Verdict.PASS if selection.selected in allowed else Verdict.FAIL
    actual = str(selection.selected)
    evidence = [Evidence(f"THP {setting}", source, actual, verdict,
                         f"choices: {' '.join(selection.options)}")]
    enabled = thp.enabled
    if (verdict == Verdict.FAIL and setting == "defrag" and
            not isinstance(enabled, Unavailable) and enabled.selected == "never"):
        # mm/huge_memory.c allocates no huge page while enabled is never, so defrag (how
        # hard an allocation compacts) never comes into play.
        evidence = [Evidence(f"THP {setting}", source, actual, Verdict.INFORMATIONAL,
                             "moot: THP enabled is never, so no huge page is allocated"),
                    Evidence("THP enabled", f"{thp.base}/enabled", "never", Verdict.PASS)]
        verdict, actual = Verdict.PASS, f"{actual} (moot: THP enabled is never)"
    return Outcome(verdict, expected, actual, evidence)


def cpu_governor(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    wanted: str = params["governor"]
    expected = f"every CPU with cpufreq uses the '{wanted}' governor"
    evidence = []
    for cpu, governor in facts.governors.items():
        source = f"/sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor"
        if isinstance(governor, Unavailable):
            evidence.append(Evidence(cpu, source, governor.what, Verdict.ERROR, governor.reason))
        else:
            verdict = Verdict.PASS if governor == wanted else Verdict.FAIL
            evidence.append(Evidence(cpu, source, governor, verdict))
    result = combine(evidence)
    governors = sorted({e.actual for e in evidence})
    return Outcome(result, expected, ", ".join(governors) if result == Verdict.PASS
                   else summarise(evidence), evidence)


# How a sysctl rule holds a value against the site's (its check's compare): the words of its
# expected text, and the test.
_COMPARE: dict[str, tuple[str, Callable[[int, int], bool]]] = {
    "equal": ("=", operator.eq), "at_most": ("<=", operator.le), "at_least": (">=", operator.ge)}


def holds(params: Mapping[str, Any], value: int | None, wanted: int) -> bool:
    """Whether ``value`` is as the rule wants it against the site's ``wanted``."""
    return value is not None and _COMPARE[params.get("compare", "equal")][1](value, wanted)


def expected_text(params: Mapping[str, Any], wanted: Any, after: str = "") -> str:
    return f"{params['key']} {_COMPARE[params.get('compare', 'equal')][0]} {wanted}{after}"


def _running(facts: Facts, key: str, expected: str) -> tuple[str, str | Outcome]:
    """The key's /proc/sys file and the value read there, or the error that it was not."""
    source = "/proc/sys/" + key.replace(".", "/")
    actual = facts.sysctl.get(key, Unavailable(f"{key} was not collected"))
    if isinstance(actual, Unavailable):
        return source, Outcome(Verdict.ERROR, expected, actual.what, [Evidence(
            key, source, actual.what, Verdict.ERROR, actual.reason)], actual.reason)
    return source, actual


def sysctl_value(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    key: str = params["key"]
    wanted = sysctl_wanted(params, values)
    expected = expected_text(params, wanted)
    source, actual = _running(facts, key, expected)
    if isinstance(actual, Outcome):
        return actual
    number = ascii_int(actual)
    if number is None:
        return Outcome(Verdict.ERROR, expected, actual, [Evidence(
            key, source, actual, Verdict.ERROR, "not a number")], f"{source}: not a number")
    verdict = Verdict.PASS if holds(params, number, int(wanted)) else Verdict.FAIL
    evidence = [Evidence(key, source, actual, verdict)]
    twin = _bytes_twin_in_use(facts, key) if verdict == Verdict.FAIL and number == 0 else None
    if twin:
        evidence = [Evidence(key, source, actual, Verdict.INFORMATIONAL,
                             f"0: the site sets {twin[0]} instead"),
                    Evidence(twin[0], twin[1], twin[2], Verdict.PASS, BYTES_NOTE)]
        return Outcome(Verdict.PASS, expected, f"{twin[0]} = {twin[2]} (reported)", evidence)
    return Outcome(verdict, expected, actual, evidence)


def sysctl_fields(params: Mapping[str, Any], facts: Facts,
                  values: Mapping[str, Any]) -> Outcome:
    """Each field of a value of several numbers (kernel.sem: SEMMSL SEMMNS SEMOPM SEMMNI,
    tab-separated) is at least its site value; a higher field is the site's, kept."""
    key: str = params["key"]
    names: list[str] = params["fields_from"]
    wanted = [int(values[name]) for name in names]
    expected = f"{key} at least {' '.join(map(str, wanted))}, field by field"
    source, actual = _running(facts, key, expected)
    if isinstance(actual, Outcome):
        return actual
    fields = [ascii_int(field) for field in actual.split()]
    shown = " ".join(actual.split())
    if len(fields) != len(wanted) or None in fields:
        why = f"{source}: not {len(wanted)} numbers"
        return Outcome(Verdict.ERROR, expected, shown, [Evidence(
            key, source, shown, Verdict.ERROR, why)], why)
    evidence = [Evidence(f"{key} field {number + 1} ({name})", source, str(field),
                         Verdict.PASS if field is not None and field >= least else Verdict.FAIL,
                         f"at least {least}")
                for number, (name, field, least) in enumerate(zip(names, fields, wanted))]
    return Outcome(combine(evidence), expected, shown, evidence)


BYTES_NOTE = ("the kernel keeps one of the ratio and bytes limits (writing one zeroes the "
              "other): the site's byte limit is reported, not judged")


def _bytes_twin_in_use(facts: Facts, key: str) -> tuple[str, str, str] | None:
    """(twin key, source, value) when the key's byte twin holds a positive value."""
    twin = SYSCTL_BYTES_TWINS.get(key)
    value = facts.sysctl.get(twin) if twin else None
    if twin and isinstance(value, str) and (ascii_int(value) or 0) > 0:
        return twin, "/proc/sys/" + twin.replace(".", "/"), value
    return None


def numa_enabled(params: Mapping[str, Any], facts: Facts, values: Mapping[str, Any]) -> Outcome:
    """numa=off (the last numa= argument wins) is neither running nor in what boots next; a
    host with several sockets has several NUMA nodes online (one means the BIOS interleaves
    memory across sockets, or NUMA is off)."""
    expected = ("no numa=off on the kernel command line (running and next boot); more than one "
                "NUMA node online on a multi-socket host")
    evidence: list[Evidence] = []
    numa = facts.numa

    def judge(subject: str, source: str, args: Sequence[str]) -> None:
        # arch/x86/mm/numa.c numa_setup: any numa= value starting "off" sets numa_off, and no
        # later numa= clears it.
        values = [arg.partition("=")[2] for arg in args if arg.startswith("numa=")]
        off = next((value for value in values if value.startswith("off")), None)
        shown = (f"numa={off}" if off is not None else
                 " ".join(f"numa={value}" for value in values) or "no numa= argument")
        evidence.append(Evidence(subject, source, shown,
                                 Verdict.FAIL if off is not None else Verdict.PASS))
    if isinstance(numa.running_args, Unavailable):
        evidence.append(Evidence("running kernel", PROC_CMDLINE, "unreadable", Verdict.ERROR,
                                 str(numa.running_args)))
    elif numa.running_args:
        judge("running kernel", PROC_CMDLINE, numa.running_args)
    for source in facts.boot.deciding:
        judge("next boot", source.path, source.args)
    if numa.sockets > 1 and facts.role.name == "kvm_guest":
        evidence.append(Evidence(
            "NUMA nodes", numa.nodes_source, f"{numa.sockets} sockets", Verdict.INFORMATIONAL,
            "a guest's sockets and nodes are what its domain XML gives it: judged on the "
            "physical host"))
    elif numa.sockets > 1:
        nodes = numa.nodes_online
        evidence.append(Evidence(
            "NUMA nodes", numa.nodes_source,
            f"{nodes if nodes is not None else 'no'} node{'s' if nodes != 1 else ''} online, "
            f"{numa.sockets} sockets", Verdict.PASS if nodes and nodes > 1 else Verdict.FAIL,
            "" if nodes and nodes > 1 else "one node for several sockets: the BIOS interleaves "
            "memory across sockets (turn NUMA on, node interleaving off) or numa=off"))
    if not evidence and not numa.sockets:  # an image with no command line, boot or CPU data
        return Outcome(Verdict.NOTCHECKED, expected, "", message=(
            f"nothing to judge: no {PROC_CMDLINE}, no boot loader configuration and no "
            f"sockets in {PROC_CPUINFO}"))
    return Outcome(combine(evidence, if_none=Verdict.PASS), expected,
                   summarise(evidence) or "single socket; no numa= argument", evidence)
