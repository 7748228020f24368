"""The fleet page's data, compact enough for 100,000 hosts.

What the page shows at once (the host x rule matrix) is an index of one short row per host.
Each host's section is the tree reports/section.py builds for the host page too, which the
page's script turns into DOM nodes when the host is opened. Rule texts (rationale, sources,
fix snippets) are kept once per rule, and each distinct rule article and diagram once per
fleet (distinct values are remembered by digest, at most _SpooledPool.REMEMBERED of them),
so identical hosts cost a few numbers each. Both are JSON in
``<script type="application/json">`` elements: inert data that the page's one script reads
with JSON.parse and shows with createElement and textContent, never as markup.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from markupsafe import Markup

from . import section
from .failing import limit_judge
from .fix_command import fix_command_parts
from .fleet_rows import RowStore
from .model import HostView

# One letter per XCCDF result in the matrix row; "-" where the host has no result.
# Where a verdict's letter counts in a rule's row of the summary: fail, error, pass, other.
_COUNTED = {"f": 0, "e": 1, "p": 2}
RESULT_CODES = {"pass": "p", "fail": "f", "error": "e", "notapplicable": "n",
                "notchecked": "c", "unknown": "u", "informational": "i",
                "notselected": "s", "fixed": "x"}


class _SpooledPool:
    """Each distinct value once, written to a file as it first comes (JSON safe inside a
    <script>, comma separated); a value's number is its place. Only digests are held, and
    at most REMEMBERED of them: a value met again after they were forgotten is written
    again (values hosts share come back long before; a fleet of unlike hosts stays flat)."""

    REMEMBERED = 1 << 14

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle
        self._numbers: dict[bytes, int] = {}
        self._count = 0

    def add(self, pooled: Pooled) -> int:
        text, key = pooled
        number = self._numbers.get(key)
        if number is None:
            if len(self._numbers) >= self.REMEMBERED:
                self._numbers.clear()
            number = self._numbers[key] = self._count
            self._count += 1
            self._handle.write(text + "\n")  # one a line: JSON text holds no newline
        return number


# A value for a pool, encoded where it was built (a worker): its JSON text, script-safe,
# and the digest that tells it apart.
Pooled = tuple[str, bytes]


def pooled(value: Any) -> Pooled:
    text = _script_safe(_ENCODER.encode(value))
    return text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


@dataclass(frozen=True)
class EncodedSection:
    """A host's section (reports/section.py) as JSON text, but for the numbers of its pooled
    nodes: the head's (its title and facts inline, the rest pooled: hosts alike share their
    counts, banner and diagrams), each rule's article with the step headings before it, and
    the copy command's parts. Diagrams are ``["#image", {"n": k}]``, k indexing ``images``."""
    head: list[str | Pooled]
    images: list[Pooled]
    items: list[tuple[str, Pooled, Pooled | None]]  # rule id, article, steps before it
    fix: str


_OWN = ("h2", "dl")  # head nodes that name the host: never alike, so not pooled


def encode_section(host: HostView) -> EncodedSection:
    images: list[Pooled] = []

    def pooled_images(item: Any) -> Any:
        if not isinstance(item, list):
            return item
        if item[0] == "#svg":
            images.append(pooled(_svg_uri(item[1]["markup"])))
            return ["#image", {"n": len(images) - 1, "alt": item[1]["alt"]}]
        return [item[0], item[1], *(pooled_images(child) for child in item[2:])]

    rules, shared = host.sorted_rules(), host.shared_messages()
    head = [_script_safe(_ENCODER.encode(item)) if item[0] in _OWN
            else pooled(pooled_images(item)) for item in section.head(host, shared)]
    steps = section.steps_before(host, rules, ANCHOR)
    items = [(rule.id, _article(host, rule, shared),
              pooled(steps[rule.id]) if rule.id in steps else None) for rule in rules]
    fix = fix_command_parts(host) if host.source == "sascheck" else None
    return EncodedSection(head, images, items, _script_safe(_ENCODER.encode(fix)))


def _article(host: HostView, rule: Any, shared: Mapping[str, Any]) -> Pooled:
    """The rule's article, pooled; one built before for the same words is taken again (most
    hosts of a fleet repeat each other's results)."""
    key = (host.source == "sascheck", rule.message in shared, rule.id, rule.result,
           rule.severity, rule.title, rule.expected, rule.actual, rule.message, rule.fix_step,
           rule.fix_reason, repr(rule.impact), repr(rule.evidence))
    found = _ARTICLES.get(key)
    if found is None:
        if len(_ARTICLES) >= 4096:  # bounded (a few MB): a fleet of unlike hosts builds afresh
            _ARTICLES.clear()
        found = _ARTICLES[key] = pooled(section.article(host, rule, ANCHOR, shared,
                                                        ["#details", {}]))
    return found


_ARTICLES: dict[tuple[Any, ...], Pooled] = {}

# The ids inside a fleet host's section: report.js makes "host-RULE" "h<row>-RULE" (articles
# are pooled across hosts, so they cannot carry the row).
ANCHOR = "host"


CHUNK_BYTES = 1 << 19  # JSON text per chunk of the page's details


def _chunk(part: str, first: int, items: list[str]) -> Markup:
    """Items ``first``... of a part as a JSON list, gzip-compressed, base64 (no character a
    <script> element could end on)."""
    packed = base64.b64encode(gzip.compress(
        ("[" + ",".join(items) + "]").encode("utf-8", "surrogatepass"), compresslevel=1,
        mtime=0)).decode("ascii")
    return Markup(f'<script type="application/octet-stream" class="fleet-chunk" '
                  f'data-part="{part}" data-first="{first}" data-count="{len(items)}">'
                  f"{packed}</script>\n")


def _script_safe(text: str) -> str:
    """JSON text that cannot end a <script> element: <, >, & and U+2028/2029 as escapes
    (str.replace, several times quicker here than str.translate)."""
    for character, escaped in _SCRIPT_SAFE:
        if character in text:
            text = text.replace(character, escaped)
    return text


_SCRIPT_SAFE = [(c, f"\\u{ord(c):04x}") for c in "<>&\u2028\u2029"]


def script_json(value: Any, prefix: str = "") -> Iterator[Markup]:
    """JSON that cannot end its <script> element or open a comment (<, > and & escaped, as
    JSON allows; U+2028/2029 for old parsers), in pieces of about a megabyte: a 10,000-host
    page is never held as one string."""
    pending: list[str] = [prefix]
    size = 0
    for piece in _ENCODER.iterencode(value):
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            yield Markup(_script_safe("".join(pending)))
            pending, size = [], 0
    yield Markup(_script_safe("".join(pending)))


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _svg_uri(svg: str) -> str:
    """An SVG as an image address: shown by <img>, where no script in it can run."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode()


def rule_info(rule: Any) -> tuple[str, str, str, list[str]]:
    """A rule as its column and its texts show it: title, severity, rationale, references."""
    return rule.title, rule.severity, rule.rationale, section.references_of(rule)


def tuned_shown(host: HostView) -> str:
    """The fleet's tuned column: the active profile, with the tuned release beside it."""
    version = f"tuned {host.tuned_version}" if host.tuned_version else ""
    if host.tuned_active:
        return f"{host.tuned_active} ({version})" if version else host.tuned_active
    return f"none active ({version})" if version else ""


def host_row(host: HostView) -> dict[str, Any]:
    """The host's row of the matrix, before the fleet numbers it: verdicts by rule id."""
    failed = host.failed_by_severity()
    slowest = host.slowest_per_core()
    return {"n": host.name, "s": host.source, "sc": host.score,
            # what the score is of: it is shown beside it, everywhere (issue 48)
            "j": host.judged, "nj": host.not_judged,
            "i": bool(host.inventory),  # named by the controller (identity.py)
            # what an administrator sorts a fleet by, cut to what a column shows
            "o": host.os[:80], "k": host.kernel[:80], "t": tuned_shown(host)[:80],
            "ro": host.role[:40], "pr": host.profile[:40],
            "f": [failed["high"], failed["medium"], failed["low"]],
            "r": {rule.id: rule.result for rule in host.rules},
            "m": round(slowest, 1) if slowest is not None else None,
            **({"x": host.unreachable[:300]} if host.unreachable else {})}


class FleetWriter:
    """Hosts added one at a time: each row to the row store (fleet_rows.py, on disk) and
    counted into the summary, each section, distinct rule result and image written to a
    scratch file at once; then the page's index and details, both read back from disk as
    they are written out."""

    def __init__(self, snippets: Mapping[str, Mapping[str, str]],
                 regressed: Mapping[str, set[str]],
                 groups: Mapping[str, list[str]] | None = None) -> None:
        self._snippets = snippets
        self._regressed = regressed
        self._groups = groups or {}
        self._rule_texts: dict[str, dict[str, Any]] = {}
        self.columns: dict[str, tuple[str, str]] = {}  # rule id -> (title, severity)
        # Unnamed scratch files (gone with the process, whatever happens to it), held
        # open from here to the page's last piece: close() ends them.
        self._scratch = contextlib.ExitStack()
        self._files = {part: self._scratch.enter_context(tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="surrogatepass", prefix="sascheck-fleet-"))
            for part in ("results", "images", "hosts")}
        self._results = _SpooledPool(self._files["results"])
        self._images = _SpooledPool(self._files["images"])
        self._rows = RowStore()  # on disk until the page is written (issue 52)
        self._sections = 0  # written to the hosts' scratch file
        self._ids: dict[str, str] = {}
        self._seen: dict[str, int] = {}  # rule id -> its letter's place in a row's codes
        # What the summary says of all rows, counted as they come: per letter place, the
        # hosts that fail, error, pass or else; hosts high failing, unreachable, from oscap,
        # worse than the baseline; whether any was measured or is in an inventory group.
        self._counts: list[list[int]] = []
        self._totals = {"high_failing": 0, "unreachable": 0, "from_oscap": 0,
                        "regressed_hosts": 0, "measured": 0, "grouped": 0}

    def add(self, host: HostView) -> None:
        self.add_built(host_row(host), encode_section(host),
                       {rule.id: rule_info(rule) for rule in host.rules
                        if rule.id not in self.columns})

    def add_built(self, row: dict[str, Any], encoded: EncodedSection,
                  infos: Mapping[str, tuple[str, str, str, list[str]]],
                  seq: int | None = None) -> None:
        """A host built by fleet_read; ``seq``: the place of its first file (equal rows keep
        that order), else the order hosts come in."""
        for rule_id in row["r"]:
            if rule_id not in self.columns and rule_id in infos:
                title, severity, rationale, refs = infos[rule_id]
                self.columns[rule_id] = (title, severity)
                snippet = self._snippets.get(rule_id) or {}
                # the fix texts once; the rule's details for a host with a command to copy
                # and for one without, each naming them
                named = {**snippet, **{name: ["#fill", {"name": name}]
                                       for name in ("bash", "ansible") if snippet.get(name)}}
                self._rule_texts[rule_id] = {
                    "trees": [section.rule_details(rule_id, rationale, refs, named, ANCHOR,
                                                   command)
                              for command in (["#fill", {"name": "run"}], None)],
                    "bash": snippet.get("bash", ""), "ansible": snippet.get("ansible", "")}
        # pooled nodes are numbers into details.results, the rest inline
        head = ",".join(item if isinstance(item, str) else str(self._results.add(item))
                        for item in encoded.head)
        items = ",".join(
            f"[{self._id_json(rule_id)},{self._results.add(article)}"
            + (f",{self._results.add(steps)}]" if steps else "]")
            for rule_id, article, steps in encoded.items)
        images = ",".join(str(self._images.add(image)) for image in encoded.images)
        self._files["hosts"].write(f'{{"head":[{head}],'
                                   f'"images":[{images}],"items":[{items}],'
                                   f'"fix":{encoded.fix}}}\n')
        # The row, compact: verdicts as one letter per rule in the order rules were first
        # seen (page() puts them in column order), the rest short.
        for rule_id in row["r"]:
            if rule_id not in self._seen:
                self._seen[rule_id] = len(self._seen)
                self._counts.append([0, 0, 0, 0])
        codes = ["-"] * len(self._seen)
        for rule_id, result in row["r"].items():
            codes[self._seen[rule_id]] = RESULT_CODES.get(result, "u")
        row["r"] = "".join(codes)
        row["d"] = self._sections  # the section's place in details.hosts
        self._sections += 1
        row["w"] = sorted(self._regressed.get(row["n"], ()))
        row["g"] = ", ".join(self._groups.get(row["n"], ()))[:200]
        self._tally(row, 1)
        self._rows.add(row, self._rows.count if seq is None else seq)

    def _id_json(self, rule_id: str) -> str:
        """A rule id as script-safe JSON, encoded once per fleet."""
        found = self._ids.get(rule_id)
        if found is None:
            if len(self._ids) >= 4096:  # ids are a catalogue's few; a hostile file's many
                self._ids.clear()
            found = self._ids[rule_id] = _script_safe(_ENCODER.encode(rule_id))
        return found

    def remove(self, seq: int) -> None:
        """Take out the rows of the ``seq``th file: it turned out to be part of a host of
        several files, which comes again (fleet_read.fill_fleet). Its section stays in the
        details, unreferenced."""
        for row in self._rows.remove(seq):
            self._tally(row, -1)

    def _tally(self, row: Mapping[str, Any], sign: int) -> None:
        """Count a compact row in (1) or out (-1) of the summary."""
        if "x" not in row:  # a host not scanned adds nothing to a rule's counts
            for place, code in enumerate(row["r"]):
                if code != "-":
                    self._counts[place][_COUNTED.get(code, 3)] += sign
        for name, counted in (("high_failing", row["f"][0]), ("unreachable", "x" in row),
                              ("from_oscap", row["s"] == "oscap"), ("regressed_hosts", row["w"]),
                              ("measured", row["m"] is not None), ("grouped", row["g"])):
            self._totals[name] += sign * bool(counted)

    def page(self) -> dict[str, Any]:
        """What the template needs: columns, counts, and the two JSON blocks. Hosts are
        ordered worst first (RowStore.worst_first)."""
        ids = sorted(self.columns)
        counts = {rule_id: dict(zip(("fail", "error", "pass", "other"),
                                    self._counts[self._seen[rule_id]])) for rule_id in ids}
        rules = [{"id": rule_id, "title": self.columns[rule_id][0],
                  "severity": self.columns[rule_id][1]} for rule_id in ids]
        totals = self._totals
        return {
            "rules": rules, "counts": counts, "host_count": self._rows.count,
            "high_failing": totals["high_failing"], "unreachable": totals["unreachable"],
            "from_oscap": totals["from_oscap"], "regressed_hosts": totals["regressed_hosts"],
            "measured": bool(totals["measured"]), "grouped": bool(totals["grouped"]),
            "index_json": self._index(rules, ids),
            "details_json": self._details(),
        }

    def _index(self, rules: list[dict[str, str]], ids: list[str]) -> Iterator[Markup]:
        """The page's index, {"rules": [...], "hosts": [...]}, read back from the row store
        worst first and written in pieces of about a megabyte: each row's verdicts in column
        order, the rules it regressed on as column numbers, and why --limit must not be
        given its name (failing.py: the rule view lists only names --limit reads as that
        one host)."""
        column_of = {rule_id: index for index, rule_id in enumerate(ids)}
        places = [self._seen[rule_id] for rule_id in ids]  # each column's letter in a row
        why_not = limit_judge(self._groups, self._rows.claims())
        pending = ['{"rules":' + _ENCODER.encode(rules) + ',"hosts":[']
        size, separator = 0, ""
        for row in self._rows.worst_first():
            letters = row["r"]
            row["r"] = "".join(letters[place] if place < len(letters) else "-"
                               for place in places)
            row["w"] = [column_of[r] for r in row["w"] if r in column_of]
            why = why_not(row["n"], row.pop("i", False))
            if why:
                row["nl"] = why
            text = _ENCODER.encode(row)
            pending.append(separator + text)
            separator = ","
            size += len(text)
            if size >= 1 << 20:
                yield Markup(_script_safe("".join(pending)))
                pending, size = [], 0
        pending.append("]}")
        yield Markup(_script_safe("".join(pending)))

    def _details(self) -> Iterator[Markup]:
        """The rule texts as JSON, then the hosts' sections, distinct results and images in
        chunks of about CHUNK_BYTES of JSON, each gzip-compressed and base64-encoded in an
        element of its own: the page opens a host by decoding only the chunks it needs,
        and the page is several times smaller (issue 52). Read back from the scratch files
        a chunk at a time; the scratch is removed once written."""
        try:
            yield Markup('<script type="application/json" id="fleet-rules">')
            yield from script_json(self._rule_texts)
            yield Markup("</script>\n")
            for part in ("hosts", "results", "images"):
                handle = self._files[part]
                handle.seek(0)
                first, items, size = 0, [], 0
                for line in handle:
                    items.append(line.rstrip("\n"))
                    size += len(line)
                    if size >= CHUNK_BYTES:
                        yield _chunk(part, first, items)
                        first, items, size = first + len(items), [], 0
                if items:
                    yield _chunk(part, first, items)
        finally:
            self.close()

    def close(self) -> None:
        self._scratch.close()
        self._rows.close()
