"""A host's section, built once for both pages (issue 47): the host page and the fleet page
show the same words because both come from here.

A section is a tree of plain lists, ``[tag, {attribute: value}, child, ...]``, a child
being text or another node. The host page writes it as HTML (``to_html``, every text and
attribute escaped); the fleet page carries it as inert JSON, and its script makes DOM nodes
of it with createElement and textContent (``build`` in report.js), never as markup. A few
nodes stand for what only a page knows:

- ``["#svg", {"markup": ..., "alt": ...}]``: a diagram sascheck drew (storage_svg,
  throughput_svg). Inline on the host page; the fleet page pools it as an image address.
- ``["#fill", {"name": "run"}]``: the copy button's command, which the fleet page makes from
  the host's command parts around the rule's id (pooled rule texts are the same for every host).
- ``["#details", {}]``: where the fleet page puts the rule's texts (pooled once per rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup, escape

from ..scanner.fix_order import FIX_STEPS, impact_parts
from . import storage_svg, throughput_svg
from .fix_command import fix_command, step_command
from .model import HostView, RuleView

Node = list[Any]
Child = Node | str
# A rule's fix texts (bash, ansible, manual); the fleet page gives "#fill" nodes for the
# first two, kept once per rule.
Snippet = Mapping[str, Any]

NOT_MEASURED = "nothing: the papers give no figure for this setting"


def node(tag: str, attributes: Mapping[str, Any] | None = None, *children: Child) -> Node:
    return [tag, dict(attributes or {}), *children]


def _badge(text: str) -> Node:
    return node("span", {"class": f"badge b-{text}"}, text)


# A table cell: text, or a tuple of its children (a list would be one node).
Cell = str | tuple[Child, ...]


def _table(headings: list[str], rows: list[list[Cell]], cls: str | None = None) -> Node:
    return node("table", {"class": cls} if cls else {},
                node("tr", {}, *(node("th", {}, text) for text in headings)),
                *(node("tr", {}, *(node("td", {}, *(cell if isinstance(cell, tuple)
                                                     else (cell,))) for cell in cells))
                  for cells in rows))


def _card(label: str, value: Any, cls: str = "", note: str = "") -> Node:
    box = node("div", {"class": "card"}, node("div", {"class": "muted"}, label),
               node("div", {"class": f"big {cls}".strip()}, str(value)))
    if note:
        box.append(node("div", {"class": "muted"}, note))
    return box


def _figure(svg: str, caption: str) -> Node:
    return node("figure", {}, node("#svg", {"markup": svg, "alt": caption}),
                node("figcaption", {"class": "muted"}, caption))


def _score_note(host: HostView) -> str:
    return (f"of {host.judged} judged rules pass"
            + (f"; {host.not_judged} not judged" if host.not_judged else ""))


def head(host: HostView, shared: Mapping[str, list[str]]) -> list[Node]:
    """Everything above the rules: who, what was read, what could not be (``shared``: the
    reasons several rules give alike, ``shared_messages``), the counts and the storage and
    throughput pictures."""
    title = node("h2", {}, f"{host.name} ", node("span", {"class": "muted"}, (
        f"({host.source}" + (f", profile {host.profile}" if host.profile else "") + ")")))
    parts: list[Node] = [title, _facts(host)]
    if host.sas_dirs:
        parts.append(_table(["SAS role", "Directory", "From"], [
            [str(d.get("role", "")), str(d.get("path", "")), str(d.get("source", ""))]
            for d in host.sas_dirs], "sasdirs"))
    lines = [*(("Problem:", text, None) for text in host.problems),
             *(("SAS directories:", text, None) for text in host.discovery_notes),
             *(("Also scanned by oscap:", text, "engines") for text in host.other_engines)]
    if lines or shared:
        banner = node("div", {"class": "banner", "role": "note"})
        for label, text, cls in lines:
            banner.append(node("p", {"class": cls} if cls else {}, node("b", {}, label),
                               f" {text}"))
        for message, ids in shared.items():
            banner.append(node("p", {}, node("b", {}, f"{len(ids)} rules:"), f" {message} ",
                               node("span", {"class": "muted mono"}, f"({', '.join(ids)})")))
        parts.append(banner)
    parts.append(_summary(host))
    verdicts = storage_svg.device_verdicts(host.rules)
    for number, (fs, svg) in enumerate(zip(host.storage,
                                           storage_svg.render_all(host.storage, verdicts))):
        if not number:
            parts.append(node("h3", {}, "Storage under the SAS file systems"))
        parts.append(_figure(svg, f"{fs.get('mountpoint', '')} on {fs.get('device', '')}"))
    if host.measurements:
        parts += _measurements(host)
    return parts


def _facts(host: HostView) -> Node:
    role = host.role + (f" ({'; '.join(host.role_reasons)})" if host.role and
                        host.role_reasons else "")
    memory = f"{host.memory_kib / 1048576:.1f} GiB" if host.memory_kib else ""
    facts = [("System", host.os), ("Kernel", host.kernel), ("Role", role),
             ("CPUs", str(host.cpus or "")), ("Memory", memory),
             ("Root scanned", host.root if host.root and host.root != "/" else ""),
             ("Scanned", host.scanned_at), ("Results from", host.path)]
    listed = node("dl", {"class": "facts"})
    for label, value in facts:
        if value or label == "Results from":
            listed += [node("dt", {}, label), node("dd", {}, value)]
    return listed


def _summary(host: HostView) -> Node:
    score = host.score
    cards = [_card("Score", "-" if score is None else f"{score}%", host.score_class,
                   _score_note(host))]
    if host.unreachable:  # not scanned: why, not failures by severity
        cards.append(_card("Not scanned", "unreachable", "score-bad", host.unreachable))
    else:
        failed = host.failed_by_severity()
        cards += [_card(f"Failed, {severity}", failed[severity],
                        "score-bad" if failed[severity] else "score-good")
                  for severity in ("high", "medium", "low")]
    cards += [_card("Not judged", host.not_judged, "", "notchecked / unknown"),
              _card("Not applicable", host.count("notapplicable"), "", "role or hardware")]
    return node("div", {"class": "summary"}, *cards)


def _number(value: Any, digits: int = 1) -> str:
    """A measured number; '-' for anything else (a results file is untrusted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return f"{value:.{digits}f}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _cores(m: Mapping[str, Any]) -> str:
    basis = "physical cores" if str(m.get("cores_basis", "")).startswith("physical") else "CPUs"
    return f"{m.get('cores', '-')} {basis}"


def _measurements(host: HostView) -> list[Node]:
    caption = ("fio, sequential write then read of each file system; MB/s are 10\u2076 bytes "
               f"per second, divided by {_cores(host.measurements[0])}")
    rows: list[list[Cell]] = []
    for m in host.measurements:
        write, read = _mapping(m.get("write")), _mapping(m.get("read"))
        p99 = [_mapping(side.get("latency_us")).get("p99", "-") for side in (write, read)]
        size, block = m.get("size_bytes"), m.get("block_bytes")
        job = (f"{m.get('jobs', '-')} \u00d7 "
               f"{_number(size / 1048576 if isinstance(size, (int, float)) else None, 0)} MiB, "
               f"{_number(block / 1024 if isinstance(block, (int, float)) else None, 0)} KiB "
               "blocks, "
               f"{'direct' if m.get('direct') else 'buffered'}"
               + (f", {m['fio_version']}" if m.get("fio_version") else ""))
        roles = m.get("roles")
        rows.append([
            (f"{m.get('mountpoint', '')} ",
             node("span", {"class": "muted"}, f"{m.get('fstype', '')} on {m.get('device', '')}")),
            "/".join(str(r) for r in roles) if isinstance(roles, list) and roles else "-",
            _number(write.get("mb_s")), _number(read.get("mb_s")),
            f"{_number(write.get('iops'), 0)} / {_number(read.get('iops'), 0)}",
            f"{p99[0]} / {p99[1]}", job])
    return [node("h3", {}, "Measured throughput (sascheck iotest)"),
            _figure(throughput_svg.render(host.measurements, host.io_targets), caption),
            _table(["File system", "Roles", "Write MB/s", "Read MB/s", "IOPS (w/r)",
                    "p99 latency \u00b5s (w/r)", "fio job"], rows, "measurements")]


def article(host: HostView, rule: RuleView, anchor: str, shared: Mapping[str, Any],
            details: Node) -> Node:
    """One rule's result: what was expected and found, what the papers measured, its step
    in the window, the evidence, then ``details`` (``rule_details``, or the fleet's place for it)."""
    heading = node("h3", {}, _badge(rule.result), " ", _badge(rule.severity),
                   f" {rule.title} ", node("span", {"class": "muted mono"}, rule.id))
    body = node("article", {"class": f"rule r-{rule.result}", "data-result": rule.result,
                            "data-severity": rule.severity, "id": f"{anchor}-{rule.id}"},
                heading)
    if rule.expected:
        body.append(node("p", {}, node("b", {}, "Expected:"), f" {rule.expected}",
                         node("br"), node("b", {}, "Actual:"), f" {rule.actual}"))
    if rule.result == "fail" and host.source == "sascheck":
        body.append(_measured(rule.impact))
    if rule.result == "fail" and rule.fix_step:
        why = rule.fix_reason or FIX_STEPS.get(rule.fix_step, "")
        body.append(node("p", {"class": "muted"}, node("b", {}, "Fix step:"),
                         f" {rule.fix_step} ({why})"))
    if rule.message:
        body.append(node("p", {"class": "muted"}, "See the note at the top."
                         if rule.message in shared else rule.message))
    if rule.evidence:
        body.append(_table(["What", "Value", "Result", "Source"], [
            [str(e.get("subject", "")),
             (str(e.get("actual", "")), *((" ", node("span", {"class": "muted"}, str(e["note"])))
                                          if e.get("note") else ())),
             (_badge(str(e.get("result", ""))),), str(e.get("source", ""))]
            for e in rule.evidence]))
    body.append(details)
    return body


def _measured(impact: Any) -> Node:
    line = node("p", {"class": "impact"}, node("b", {}, "Measured:"), " ")
    if isinstance(impact, dict):
        text, measured = impact_parts(impact)
        line += [f"{text} ", node("span", {"class": "muted"}, f"({measured})")]
    else:
        line.append(node("span", {"class": "muted"}, NOT_MEASURED))
    return line


def rule_details(rule_id: str, rationale: str, references: list[str],
                 snippet: Snippet | None, anchor: str, command: Child | None) -> Node:
    """Why, the sources and the fix: the bash block, or the one command that writes the
    rule's whole fix and dry-runs it (``command``), and the Ansible task."""
    more = node("details", {}, node("summary", {}, "Why, sources and remediation"),
                node("p", {}, rationale),
                node("ul", {}, *(node("li", {}, ref) for ref in references)))
    if not snippet:
        return more
    if snippet.get("manual"):  # work for a person: text, and nothing to copy
        more.append(node("p", {}, node("b", {}, "What to do"),
                         f" (by hand; no command does it): {snippet['manual']}"))
        return more

    def copyable(label: str, target: str, text: Child) -> None:
        place = f"{anchor}-{rule_id}-{target}"
        more.extend([node("p", {}, node("b", {}, label), " ",
                          node("button", {"class": "copy", "type": "button",
                                          "data-target": place}, "copy")),
                     node("pre", {"id": place}, text)])

    if snippet.get("bash") and command is not None:
        copyable("bash: this writes the rule's whole fix and dry-runs it", "run", command)
        more.extend([node("p", {"class": "muted"}, "what it does for this rule:"),
                     node("pre", {"id": f"{anchor}-{rule_id}-bash"}, snippet["bash"])])
    elif snippet.get("bash"):
        copyable("bash", "bash", snippet["bash"])
    if snippet.get("ansible"):
        copyable("Ansible", "ansible", snippet["ansible"])
    return more


def references_of(rule: RuleView) -> list[str]:
    return [ref.get("citation") or f"{ref.get('document', '')} \u00a7{ref.get('section', '')}"
            for ref in rule.references]


def steps_before(host: HostView, rules: list[RuleView], anchor: str) -> dict[str, list[Node]]:
    """The window's step headings, by the rule each comes before (``rules``: the host's, in
    the fix order, as ``sorted_rules`` gives them), each with the command fixing that step's
    failing rules alone (issue 49; sascheck's results only: an ARF's host has no scan to
    repeat, and a project is planned work, by hand)."""
    failing: dict[str, list[str]] = {}
    for rule in rules:
        if rule.result == "fail" and rule.fix_step and rule.fix_step != "project":
            failing.setdefault(rule.fix_step, []).append(rule.id)
    commands = {step: step_command(host, step, ids) for step, ids in failing.items()} \
        if host.source == "sascheck" else {}
    placed: dict[str, list[Node]] = {}
    step, number = "", 0
    for rule in rules:
        if rule.result != "fail" or rule.fix_step not in FIX_STEPS or rule.fix_step == step:
            continue
        step, number = rule.fix_step, number + 1
        nodes = [node("h3", {"class": "fix-step", "id": f"{anchor}-step-{step}"},
                      f"Step {number}: {step} ",
                      node("span", {"class": "muted"}, f"({FIX_STEPS[step]})"))]
        if commands.get(step):
            nodes += [node("p", {"class": "muted"}, "Fix this step alone:"),
                      node("pre", {"class": "step-command"}, commands[step] or "")]
        placed[rule.id] = nodes
    return placed


def host_section(host: HostView, snippets: Mapping[str, Snippet], anchor: str = "host") -> Node:
    """The whole section, as the host page shows it."""
    rules, shared = host.sorted_rules(), host.shared_messages()
    steps = steps_before(host, rules, anchor)
    section = node("section", {"class": "host", "id": anchor}, *head(host, shared))
    for rule in rules:
        section += steps.get(rule.id, [])
        command = fix_command(host, rule.id) if host.source == "sascheck" else None
        details = rule_details(rule.id, rule.rationale, references_of(rule),
                               snippets.get(rule.id), anchor, command)
        section.append(article(host, rule, anchor, shared, details))
    return section


_VOID = frozenset({"br", "img"})


def to_html(tree: Child) -> Markup:
    """The tree as HTML: text and attribute values escaped; tags and attribute names are
    this module's own."""
    if isinstance(tree, str):
        return escape(tree)
    tag, attributes, *children = tree
    if tag == "#svg":  # drawn by sascheck, every host value escaped there
        return Markup(attributes["markup"])
    shown = "".join(f' {name}="{escape(value)}"' for name, value in attributes.items()
                    if value is not None)
    if tag in _VOID:
        return Markup(f"<{tag}{shown}>")
    return Markup(f"<{tag}{shown}>" + "".join(to_html(child) for child in children)
                  + f"</{tag}>")
