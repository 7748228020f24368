"""cpu_dma_latency: how deep the CPUs may sleep after the next boot (tuned's force_latency,
RHEL 5/6 ktune's pmqos-static.py, the kernel command line's C-state limits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine
from ..system.cpuidle import cmdline_limit_us, force_latency_us
from ..unavailable import Unavailable
from .boot import enabled_tuned, tuned_unknown


def tuned_cpu_latency(params: Mapping[str, Any], facts: Facts,
                      values: Mapping[str, Any]) -> Outcome:
    """The CPUs wake within max_us after the next boot: tuned's [cpu] force_latency in the
    active chain (tuned holds /dev/cpu_dma_latency open with it; ``cstate.id:N`` and
    ``cstate.name:X`` resolve through the host's C-state table as plugin_cpu.py resolves
    them), RHEL 5/6 ktune's pmqos-static.py, or the command line that boots (``idle=poll``,
    ``intel_idle.max_cstate``, ``processor.max_cstate``). Any one holding is enough."""
    maximum = int(params["max_us"])
    expected = (f"CPU wake-up latency <= {maximum} us at boot: tuned [cpu] force_latency, "
                "ktune's cpu_dma_latency, or a C-state limit on the kernel command line")
    items = [_tuned_latency(facts, maximum)]
    for source in facts.boot.deciding:
        limit = cmdline_limit_us(source.args, facts.cpuidle)
        if limit is not None:
            items.append(Evidence("C-state limit", source.path, limit[1],
                                  Verdict.NOTCHECKED if limit[0] is None else
                                  Verdict.PASS if limit[0] <= maximum else Verdict.FAIL))
    # Any one mechanism holding the CPUs is enough; one that cannot be told may hold them.
    verdicts = {item.verdict for item in items}
    result = next((v for v in (Verdict.PASS, Verdict.ERROR, Verdict.NOTCHECKED)
                   if v in verdicts), None) or combine(items)
    return Outcome(result, expected, "; ".join(f"{i.subject}: {i.actual}" for i in items), items)


def _tuned_latency(facts: Facts, maximum: int) -> Evidence:
    ktune = facts.tuned.ktune if not isinstance(facts.tuned, Unavailable) else None
    if ktune and ktune.enabled and ktune.cpu_dma_latency:  # RHEL 5/6: tuned 0.2's PM QoS
        script, held = ktune.cpu_dma_latency
        return Evidence("cpu_dma_latency", f"{script} (ktune, {ktune.enabled})",
                        f"pmqos-static.py cpu_dma_latency={held}",
                        Verdict.PASS if held <= maximum else Verdict.FAIL)
    tuned = enabled_tuned(facts)
    if tuned is None:
        return Evidence("force_latency", "tuned", "tuned is not enabled at boot", Verdict.FAIL)
    if unknown := tuned_unknown(facts):
        return unknown
    setting = tuned.chain.setting("cpu", "force_latency")
    if setting is not None and tuned.no_daemon:
        return Evidence("force_latency", f"tuned profile {setting[1]} [cpu]",
                        f"force_latency={setting[0]}", Verdict.FAIL,
                        f"{tuned.no_daemon}: tuned applies the profile and exits, and the "
                        "request it held on /dev/cpu_dma_latency ends with it")
    if setting is None:
        return Evidence("force_latency", "tuned profile chain", "not set", Verdict.FAIL,
                        "the CPUs may sleep in deep C-states")
    microseconds, how = force_latency_us(setting[0], facts.cpuidle, tuned.version)
    return Evidence("force_latency", f"tuned profile {setting[1]} [cpu]",
                    f"force_latency={setting[0]}",
                    Verdict.PASS if microseconds is not None and microseconds <= maximum
                    else Verdict.FAIL, how)
