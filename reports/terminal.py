"""The terminal table: symbols as well as colour, so it reads in a log or on paper."""

from __future__ import annotations

import shlex
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..rules import Catalogue
from ..rules.host_layout import SAS_ROLE_VALUES
from ..scanner.fix_order import FIX_STEPS, fix_ranks, fix_steps, impact_line, step_reasons
from ..scanner.results import judged_count
from .escaping import deep, for_terminal, for_terminal_lines
from .resultfile import forced_role, scanned_archive, scanned_image

SYMBOLS = {
    "pass": ("✔", "green"),
    "fail": ("✘", "bold red"),
    "error": ("!", "bold magenta"),
    "unknown": ("?", "yellow"),
    "notapplicable": ("\u2013", "dim"),
    "notchecked": ("○", "yellow"),
    "informational": ("i", "cyan"),
}
ORDER = ["fail", "error", "unknown", "notchecked", "pass", "informational", "notapplicable"]


def render(result: dict[str, Any], console: Console, catalogue: Catalogue,
           verbose: bool = False) -> None:
    """The scan's table: one line a rule (a failing one's value and what was wanted); with
    ``verbose``, under each failing rule what the papers measured, its fix step and its
    evidence. The steps to fix it, in order, follow either way."""
    # Host names, mount points and reasons come from the host: no escape sequence in them
    # may reach the terminal (retitle it, clear it, hide lines).
    result = deep(result, for_terminal)
    host = result["host"]
    role = result["role"]
    console.print(Text.assemble(
        ("sascheck ", "bold"), f"{host.get('hostname') or '?'}  ",
        (f"root {host['root']}  ", "dim"), f"kernel {host.get('kernel') or '?'}  ",
        f"role {role['name']} ", (f"({'; '.join(role['reasons'])})", "dim")))
    if result["sas_dirs"]:
        for entry in result["sas_dirs"]:
            console.print(Text.assemble("  SAS ", (entry["role"], "bold"), f" {entry['path']} ",
                                        (f"from {entry['source']}", "dim")))
    for problem in result.get("problems", []):
        console.print(Text(f"  problem: {problem}", style="yellow"))
    for note in result.get("sas_discovery_notes", []):
        console.print(Text(f"  note: {note}", style="yellow"))
    counts = result["summary"]
    if not judged_count(counts):
        _nothing_judged(console, result)
        return
    footnotes: list[str] = []
    unmeasured = False  # a failing rule the papers give no figure for: said once, below
    rows = []
    ranks = fix_ranks(result.get("fix_order", []))
    steps = fix_steps(result.get("fix_order", []))
    reasons = step_reasons(result.get("fix_order", []), catalogue)
    for rule in sorted(result["rules"], key=lambda r: (ORDER.index(r["result"]),
                                                       ranks.get(r["id"], len(ranks) * 64))):
        symbol, style = SYMBOLS[rule["result"]]
        if rule["result"] in ("fail", "error") and rule["expected"]:
            detail = Text.assemble(rule["actual"] or rule["message"],
                                   (f"  (want: {rule['expected']})", "dim"))
            if rule["result"] == "fail" and verbose:
                impact = rule.get("impact")
                if impact:
                    detail.append(f"\n  measured: {impact_line(impact)}", style="cyan")
                unmeasured = unmeasured or not impact
                if rule["id"] in steps:
                    step = steps[rule["id"]]
                    detail.append(f"\n  fix step: {step} ({reasons[rule['id']]})", style="dim")
            if verbose:
                for evidence in rule.get("evidence", [])[:EVIDENCE_SHOWN]:
                    detail.append(_evidence_line(evidence), style="dim")
            elif rule["result"] == "error":  # which file could not be read, not 'unreadable'
                failed = [e for e in rule.get("evidence", []) if e.get("result") == "error"]
                if failed:
                    detail.append(_evidence_line(failed[0]), style="dim")
        elif rule["message"]:
            # Repeated reasons (no SAS directories, wrong role) become one footnote.
            if rule["message"] not in footnotes:
                footnotes.append(rule["message"])
            detail = Text(f"[{footnotes.index(rule['message']) + 1}]", style="dim")
        else:
            detail = Text(rule["actual"])
        rows.append((Text(f"{symbol} {rule['result']}", style=style), Text(rule["id"]),
                     Text(rule["severity"]), detail))
    if console.width >= WIDE:
        table = Table(show_lines=False, expand=False, pad_edge=False)
        table.add_column("result", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("sev", no_wrap=True)
        table.add_column("actual (expected) or reason", overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:  # 80 columns (cron mail): the reason goes below its rule, wrapped at words
        for verdict, rule_id, severity, detail in rows:
            console.print(Text.assemble(verdict, "  ", rule_id, "  ", (severity.plain, "dim")))
            console.print(Padding(detail, (0, 0, 0, 4), expand=False))
    for number, note in enumerate(footnotes, start=1):
        console.print(Text(f"[{number}] {note}", style="dim"))
    if unmeasured:
        console.print(Text("a failing rule without a 'measured:' line: the papers give no "
                           "figure for it", style="dim"))
    parts = [f"{counts[key]} {key}" for key in ORDER if counts.get(key)]
    console.print(Text("  ".join(parts), style="bold"))
    console.print(Text(_score_line(counts)))
    if result.get("fix_order"):
        _print_steps(console, result)
        console.print(Text(f"next: {fix_hint(result)}", style="bold"))


EVIDENCE_SHOWN = 12  # evidence lines under a rule with --verbose (the JSON has them all)


def _evidence_line(evidence: dict[str, Any]) -> str:
    """One evidence item: what, where it was read (the file), what it is, and the note."""
    line = f"\n  {evidence.get('subject', '')}: {evidence.get('actual', '')}"
    if evidence.get("source"):
        line += f" ({evidence['source']})"
    if evidence.get("note"):
        line += f"; {evidence['note']}"
    return line


def _nothing_judged(console: Console, result: dict[str, Any]) -> None:
    """No rule passed, failed or errored: no table of rules that say nothing, but why, once
    per distinct reason (the JSON keeps every rule's verdict)."""
    reasons: dict[str, int] = {}
    for rule in result["rules"]:
        reason = rule["message"] or rule["result"]
        reasons[reason] = reasons.get(reason, 0) + 1
    console.print(Text(f"nothing judged: none of the {len(result['rules'])} rules could be "
                       "judged on this host (exit status 4)", style="bold"))
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        console.print(Text(f"  {count} rules: {reason}", style="dim"))


def _print_steps(console: Console, result: dict[str, Any]) -> None:
    """The fix order as a maintenance window's steps (issue 49): each step a heading with
    why it sits there, its actions (the rules one action mends), and the command fixing that
    step alone; a project is planned work, listed with no command."""
    by_step: dict[str, list[dict[str, Any]]] = {}
    for entry in result["fix_order"]:
        if entry.get("step") in FIX_STEPS:
            by_step.setdefault(entry["step"], []).append(entry)
    console.print(Text("what to fix first, as a maintenance window's steps:", style="bold"))
    for number, step in enumerate((s for s in FIX_STEPS if s in by_step), start=1):
        console.print(Text.assemble((f"{number}. {step}", "bold"), f": {FIX_STEPS[step]}"))
        rules = []
        for entry in by_step[step]:
            rules += entry["rules"]
            console.print(Text(f"   {' + '.join(entry['rules'])} ({entry['severity']})"))
            if sets := [rule for rule in entry.get("profile_sets") or () if rule in entry["rules"]]:
                console.print(Text(f"     one action: sascheck's tuned profile sets {', '.join(sets)}"
                                   " too", style="dim"))
        if step != "project":
            console.print(Text(f"   fix: {fix_hint(result, rules, f'sascheck-fix-{step}.sh')}",
                               style="dim"))


def fix_hint(result: dict[str, Any], rules: list[str] | None = None,
             output: str = "sascheck-fix.sh") -> str:
    """The fix command for this host (for ``rules`` alone where given), with every choice
    the scan made (its profile, a forced role, the directory root it read), shell-quoted."""
    args = ["sascheck", "fix", "--format", "bash"]
    image = scanned_image(result)
    archive = scanned_archive(result)
    if image:
        args += ["--root", image]
    elif archive:  # written from the copy, run on the host it is of
        args += [f"--{archive[0]}", archive[1]]
    if result.get("profile") not in (None, "default"):
        args += ["--profile", result["profile"]]
    if role := forced_role(result):
        args += ["--role", role]
    given: dict[str, list[str]] = {}
    for entry in result.get("sas_dirs", []):
        if entry.get("source") == "--set" and entry.get("role") in SAS_ROLE_VALUES:
            given.setdefault(SAS_ROLE_VALUES[entry["role"]], []).append(entry["path"])
    for name, paths in given.items():
        args += ["--set", f"{name}={','.join(paths)}"]
    for rule_id in rules or ():
        args += ["--rule", rule_id]
    run = (f"SASCHECK_ROOT={shlex.quote(image)} bash {output}" if image else f"bash {output}")
    where = (f" on {for_terminal(str(result['host'].get('hostname', 'the host')))} as root"
             if archive else "")
    return f"{shlex.join([*args, '-o', output])}, then{where} {run} --dry-run"


# Narrower terminals list each rule with its reason below it instead of a table.
WIDE = 100


def _score_line(counts: dict[str, int]) -> str:
    """The score over judged rules (pass, fail, error), and how many were not judged."""
    judged = judged_count(counts)
    unjudged = sum(counts.get(key, 0) for key in ("notchecked", "unknown"))
    score = f"score {round(100 * counts.get('pass', 0) / judged)}%" if judged else "no score"
    line = f"{score} of {judged} judged rules"
    return line + (f"; {unjudged} not judged (notchecked): a pass says nothing of those"
                   if unjudged else "")


def render_drift(changes: list[Any], console: Console) -> None:
    """sascheck diff's output: per host (most recently scanned first), a table of what
    changed, worse verdicts marked; all host text made safe for the terminal."""
    if not changes:
        console.print("no changes")
        return
    hosts: dict[str, list[Any]] = {}
    for change in changes:
        hosts.setdefault(change.host, []).append(change)
    for host, host_changes in hosts.items():
        scanned = host_changes[0].scanned_at[:16].replace("T", " ")  # to the minute
        console.print(Text.assemble((for_terminal(host), "bold"), (f"  scanned {scanned}", "dim")))
        table = Table(show_lines=False, expand=False, pad_edge=False, show_header=False)
        table.add_column("", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("what", no_wrap=True)
        table.add_column("was -> now", overflow="fold")
        for change in host_changes:
            table.add_row(Text("\u25bc worse", style="bold red") if change.worse else Text(""),
                          Text(for_terminal(change.rule or "(host)")),
                          Text(for_terminal(change.field)),
                          Text(for_terminal_lines(f"{change.old} \u2192 {change.new}")))
        console.print(table)
    worse = sum(change.worse for change in changes)
    console.print(f"{len(changes)} changes on {len(hosts)} hosts, {worse} worse")
