"""SELinux's mode against what SAS Viya 3.5's deployment expects (viya-ark's
pre.selinux_config: it stops on an enforcing host unless the deployment guide's SELinux
configuration was done)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.host_layout import SELINUX_CONFIG, SELINUX_ENFORCE
from ..facts import Facts
from ..parsers.boot import arg_value
from ..results import Evidence, Outcome, Verdict, combine, summarise
from ..unavailable import Unavailable

DONE = ("the site says the deployment guide's SELinux configuration is done "
        "(selinux_configured)")
ENFORCING = ("SAS Viya 3.5's deployment stops on an enforcing host until the deployment "
             "guide's 'Configure SELinux' steps are done: do them and set "
             "selinux_configured=true (turning SELinux off is not asked for)")


def _at_boot(facts: Facts) -> list[Evidence]:
    """The mode each boot entry that decides the next boot starts in: the kernel line's
    selinux=0 or enforcing=0|1 over the config's SELINUX= (selinux_init_load_policy)."""
    selinux = facts.selinux
    found = []
    for entry in facts.boot.deciding or ():
        if arg_value(list(entry.args), "selinux") == "0":
            found.append(Evidence("SELinux at next boot", entry.path, "selinux=0",
                                  Verdict.PASS, "off"))
        elif (enforcing := arg_value(list(entry.args), "enforcing")) in ("0", "1"):
            found.append(Evidence("SELinux at next boot", entry.path, f"enforcing={enforcing}",
                                  Verdict.FAIL if enforcing == "1" else Verdict.PASS,
                                  ENFORCING if enforcing == "1" else "permissive"))
    if found:
        return found
    configured = selinux.configured
    if isinstance(configured, Unavailable):
        return [Evidence("SELinux at next boot", SELINUX_CONFIG, configured.what, Verdict.ERROR,
                         configured.reason)]
    if configured is None:
        return [Evidence("SELinux at next boot", SELINUX_CONFIG, "missing", Verdict.PASS,
                         "no policy is loaded without it: not enforcing")]
    return [Evidence("SELinux at next boot", SELINUX_CONFIG, f"SELINUX={configured}",
                     Verdict.FAIL if configured == "enforcing" else Verdict.PASS,
                     ENFORCING if configured == "enforcing" else "")]


def selinux_not_enforcing(params: Mapping[str, Any], facts: Facts,
                          values: Mapping[str, Any]) -> Outcome:
    expected = "SELinux is not enforcing, or the site did the Viya deployment's SELinux setup"
    running = facts.selinux.running
    evidence = []
    if isinstance(running, Unavailable):
        evidence.append(Evidence("SELinux now", SELINUX_ENFORCE, running.what, Verdict.ERROR,
                                 running.reason))
    elif running is not None:
        evidence.append(Evidence("SELinux now", SELINUX_ENFORCE,
                                 {"1": "enforcing", "0": "permissive"}.get(running, running),
                                 Verdict.FAIL if running == "1" else Verdict.PASS,
                                 ENFORCING if running == "1" else ""))
    evidence += _at_boot(facts)
    if values.get("selinux_configured"):
        evidence = [Evidence(e.subject, e.source, e.actual, Verdict.INFORMATIONAL, DONE)
                    if e.verdict == Verdict.FAIL else e for e in evidence]
    judged = [e for e in evidence if e.verdict != Verdict.INFORMATIONAL]
    result = combine(judged) if judged else Verdict.PASS
    actual = "; ".join(f"{e.subject}: {e.actual}" for e in evidence)
    return Outcome(result, expected, actual if result != Verdict.FAIL else summarise(evidence),
                   evidence, ENFORCING if result == Verdict.FAIL else "")
