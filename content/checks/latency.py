"""cpu_dma_latency's OVAL (scanner/checks/latency.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import KTUNE_PMQOS_LATENCY, TUNED_MAIN_CONF
from ..oval import Element, all_of, any_of, criterion, entity, none_of
from ..oval_facts import OvalFacts
from .common import Cmdline, files_matching, ktune_scripts, ktune_started


def tuned_cpu_latency(facts: OvalFacts, rule: Rule) -> Element:
    at_most = facts.oval.state("ind:textfilecontent54", f"at most {rule.params['max_us']} us",
                               entity("ind:subexpression", str(rule.params["max_us"]),
                                      datatype="int", op="less than or equal"))
    # RHEL 5/6: a ktune script's pmqos-static.py (scanner.tuned.Ktune.cpu_dma_latency).
    oval = facts.oval
    pmqos = oval.obj("ind:textfilecontent54", "ktune scripts' pmqos-static.py cpu_dma_latency",
                     entity("ind:filepath", var=ktune_scripts(facts), var_check="at least one"),
                     entity("ind:pattern", KTUNE_PMQOS_LATENCY, op="pattern match"),
                     entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    # arch/x86/kernel/process.c idle_setup: idle=poll keeps every CPU out of C-states. The
    # scanner's other limits (cstate.*, max_cstate) need the host's C-state table: README.
    # tuned-main.conf's daemon off: tuned exits and its request ends (scanner.tuned's
    # no_daemon_line; OVAL does not read tuned's version, which has the option from 2.5).
    no_daemon = files_matching(facts, "tuned's daemon turned off", (TUNED_MAIN_CONF,),
                               r"^[ \t]*daemon[ \t]*=[ \t]*(?![ \t]|(?i:1|y|yes|t|true)[ \t]*$)"
                               r"([^\n#]*?)[ \t]*$")
    return any_of(all_of(facts.tuned_setting("force_latency", [(r"(\d+)", at_most)],
                                             "tuned [cpu] force_latency"),
                         none_of(criterion(oval.test("ind:textfilecontent54",
                                                     "tuned runs as a daemon", no_daemon)))),
                  Cmdline(facts).any_argument("idle", r"poll(?=[\s\"']|$)", shown="poll"),
                  all_of(ktune_started(facts), criterion(oval.test(
                      "ind:textfilecontent54", "ktune holds cpu_dma_latency low", pmqos,
                      at_most, check="all"))))
