"""The CPU idle states the kernel offers (``/sys/devices/system/cpu/cpu0/cpuidle/stateN``:
``name`` and exit ``latency`` in microseconds; ``state0`` is POLL) and the driver that
offers them, which tuned's ``force_latency=cstate.*`` and the kernel's C-state limits on the
command line are resolved through."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...rules.host_layout import CPUIDLE_DRIVER, CPUIDLE_STATES
from .. import linear_re as re
from ..parsers.simple import ascii_int
from ..sources.hostroot import FactError, HostRoot
from ..tuned.active import release_text

MAX_STATES = 32


@dataclass(frozen=True)
class IdleState:
    index: int
    name: str
    latency_us: int


@dataclass(frozen=True)
class CpuIdle:
    driver: str  # intel_idle, acpi_idle, haltpoll...; "" when not known
    states: tuple[IdleState, ...] = ()

    def by_index(self, index: int) -> IdleState | None:
        return next((s for s in self.states if s.index == index), None)

    def by_name(self, name: str) -> IdleState | None:
        return next((s for s in self.states if s.name == name), None)


def collect_cpuidle(root: HostRoot) -> CpuIdle:
    """What tuned's plugin_cpu reads (``_read_cstates_latency``): states whose name and
    latency can both be read; others are passed over, as tuned passes them over."""
    try:
        driver = root.read_first_line(CPUIDLE_DRIVER)
    except FactError:
        driver = ""
    states = []
    try:
        entries = root.listdir(CPUIDLE_STATES)
    except FactError:
        entries = []
    for entry in entries[:MAX_STATES]:
        match = re.fullmatch(r"state([0-9]{1,2})", entry)
        if not match:
            continue
        try:
            name = root.read_first_line(f"{CPUIDLE_STATES}/{entry}/name").strip()
            latency = ascii_int(root.read_first_line(f"{CPUIDLE_STATES}/{entry}/latency"))
        except FactError:
            continue
        if latency is not None and name:
            states.append(IdleState(int(match.group(1)), name, latency))
    return CpuIdle(driver.strip(), tuple(sorted(states, key=lambda s: s.index)))


# plugin_cpu.py's force_latency parser by release: before v2.13.0 _set_latency int()s the
# value (a number or nothing); v2.13.0 adds _parse_latency ('|' alternatives, cstate.id:,
# cstate.name:, none); v2.18.0 the _no_zero forms. Each prefix is compared unstripped.
TUNED_CSTATE_SINCE = (2, 13)
TUNED_CSTATE_NO_ZERO_SINCE = (2, 18)


def force_latency_us(value: str, idle: CpuIdle,
                     version: tuple[int, int, int] | None = None) -> tuple[int | None, str]:
    """tuned's plugin_cpu._parse_latency: alternatives separated by '|', the first that
    resolves wins: a number of microseconds, ``cstate.id[_no_zero]:N`` (stateN's latency),
    ``cstate.name[_no_zero]:NAME``; ``none`` writes nothing. ``version`` (the installed
    tuned's; None: a current one) leaves out what that release does not parse. Returns
    (microseconds or None, how it resolved)."""
    if version is not None and version[:2] < TUNED_CSTATE_SINCE:
        number = ascii_int(value.strip())
        return (number, value.strip()) if number is not None else (
            None, f"tuned {release_text(version)} takes a number of microseconds only (cstate. and | come "
                  "in 2.13) and sets nothing")
    no_zero = version is None or version[:2] >= TUNED_CSTATE_NO_ZERO_SINCE
    for alternative in value.split("|"):
        number = ascii_int(alternative.strip())
        if number is not None:
            return number, alternative.strip()
        kind, _, argument = alternative.partition(":")
        state: IdleState | None = None
        if kind.endswith("_no_zero") and not no_zero:
            continue  # tuned before 2.18 reads it as an invalid latency
        if kind in ("cstate.id", "cstate.id_no_zero") and (index := ascii_int(argument)) is not None:
            state = idle.by_index(index)
        elif kind in ("cstate.name", "cstate.name_no_zero"):
            state = idle.by_name(argument)
        elif alternative in ("none", "None"):
            return None, "none: tuned writes no latency"
        if state is not None and not (kind.endswith("_no_zero") and state.latency_us == 0):
            return state.latency_us, f"{alternative} = {state.name}, {state.latency_us} us"
    known = ", ".join(f"state{s.index} {s.name} {s.latency_us} us" for s in idle.states)
    return None, ("resolves to no latency" +
                  (f" (this host's C-states: {known})" if known else
                   f" (no C-state table in {CPUIDLE_STATES})"))


def cmdline_limit_us(args: Sequence[str], idle: CpuIdle) -> tuple[int | None, str] | None:
    """The deepest wake-up latency the kernel command line leaves the CPUs: ``idle=poll``
    never sleeps; ``intel_idle.max_cstate=N`` (N >= 1) keeps intel_idle's states up to N, and
    ``processor.max_cstate=N`` limits acpi_idle (used when intel_idle is off:
    ``intel_idle.max_cstate=0``, or the driver is acpi_idle). None: no such argument.
    (microseconds or None when the table does not say, the argument shown)"""
    def last(name: str) -> int | None:
        values = [ascii_int(arg.partition("=")[2]) for arg in args if arg.startswith(name + "=")]
        return values[-1] if values else None

    if "idle=poll" in args:
        return 0, "idle=poll"
    intel, acpi = last("intel_idle.max_cstate"), last("processor.max_cstate")
    if intel is not None and intel > 0:
        shown, index = f"intel_idle.max_cstate={intel}", intel
    elif acpi is not None and (intel == 0 or idle.driver == "acpi_idle"):
        shown, index = f"processor.max_cstate={acpi}", acpi
        if intel == 0:
            shown = f"intel_idle.max_cstate=0 {shown}"
    else:
        return None
    deepest = [s for s in idle.states if s.index <= index]
    if not deepest or (deepest[-1].index != index and index < len(idle.states)):
        return None, f"{shown}: state{index}'s latency is not in {CPUIDLE_STATES}"
    state = deepest[-1]
    return state.latency_us, f"{shown}: deepest state{state.index} {state.name}, " \
                             f"{state.latency_us} us"
