"""The storage stack of a SAS file system as a small inline SVG: file system -> LV ->
multipath -> disks (an NFS mount -> its bdi; a VxVM volume -> the array LUNs), each box with
its scheduler, read-ahead and stripe, coloured by verdict.
Every host value is escaped here; the SVG is built as text, no library, no network."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 170, 46, 40, 10, 8  # BOX_W: the narrowest box
# Boxes grow to their text: sans-serif glyphs are at most this wide per character, bold 12 px
# and regular 11 px (a conservative bound; the Chromium test measures the real lengths).
CHAR_W = {12: 8.5, 11: 7.2}  # DejaVu Sans Bold digits: 0.696 em; Regular: 0.636 em
TEXT_X = 7  # left margin inside a box
MAX_LINE = 64  # longer values wrap onto further lines rather than being cut
LINE_H = 17
BDI_PREFIX = "/sys/class/bdi/"  # an NFS mount's read-ahead evidence names its bdi file
COLOURS = {"fail": ("#fde2e1", "#c62828"), "error": ("#f3e5f5", "#8e24aa"),
           "pass": ("#e3f4e4", "#2e7d32"), "none": ("#f1f3f4", "#80868b")}


def device_verdicts(rules: list[Any]) -> dict[str, str]:
    """device (or an NFS mount's bdi path) -> worst verdict from the scheduler, read-ahead
    and striping rules' evidence."""
    rank = {"fail": 3, "error": 2, "pass": 1}
    verdicts: dict[str, str] = {}
    for rule in rules:
        if rule.id not in ("io_scheduler", "read_ahead", "sas_volume_striped"):
            continue
        for item in rule.evidence:
            source = str(item.get("source", ""))
            device = item.get("device") or (source if source.startswith(BDI_PREFIX) else "")
            result = item.get("result", "")
            if device and rank.get(result, 0) > rank.get(verdicts.get(device, ""), 0):
                verdicts[device] = result
    return verdicts


def _stripe(item: Mapping[str, Any]) -> str:
    """' 2x64K' where a dm or md device's queue limits publish a stripe."""
    io_min, io_opt = item.get("io_min"), item.get("io_opt")
    if isinstance(io_min, int) and isinstance(io_opt, int) and io_min > 0 \
            and io_opt % io_min == 0 and io_opt // io_min > 1 and item.get("kind") in ("dm", "md"):
        return f" {io_opt // io_min}x{io_min // 1024}K"
    return ""


def _shared(layers: list[dict[str, Any]], drawn: Mapping[str, str]) -> list[dict[str, Any]]:
    """Layers below the mounted device that an earlier diagram of the host already drew
    (the multipath maps and paths three LVs share) become one box naming that diagram; what
    lies below them is not drawn again."""
    kept: list[dict[str, Any]] = []
    hidden: set[str] = set()
    for layer in layers:
        device = str(layer.get("device", ""))
        if layer.get("parent") in hidden:
            hidden.add(device)
        elif int(layer.get("depth", 0)) > 0 and device in drawn:
            hidden.add(device)
            kept.append({**layer, "kind": "ref", "label": drawn[device]})
        else:
            kept.append(layer)
    return kept


def _columns(filesystem: Mapping[str, Any], drawn: Mapping[str, str] | None = None
             ) -> tuple[dict[int, list[Mapping[str, Any]]], list[dict[str, Any]]]:
    """Boxes per column, left to right, and the layers with the parent each is drawn from.
    NFS gets a box for its bdi; a VxVM volume a box of its own above the array LUNs."""
    columns: dict[int, list[Mapping[str, Any]]] = {
        0: [{"device": filesystem.get("mountpoint", "?"), "fs": True}]}
    layers: list[dict[str, Any]] = _shared(
        [dict(layer) for layer in filesystem.get("layers", [])], drawn or {})
    bdi = filesystem.get("bdi")
    if filesystem.get("stack") == "nfs" and isinstance(bdi, Mapping):
        box = {"device": str(bdi.get("path", "")), "kind": "bdi", "depth": 0,
               "label": str(filesystem.get("device", "")),
               "read_ahead_kb": bdi.get("read_ahead_kb")}
        layers = [box]
    elif filesystem.get("stack") == "veritas":
        volume = {"device": "vxvm", "kind": "vxvm", "depth": 0,
                  "label": str(filesystem.get("device", ""))}
        for layer in layers:
            layer["depth"], layer["parent"] = 1, "vxvm"
        layers = [volume, *layers]
    for layer in layers:
        columns.setdefault(int(layer.get("depth", 0)) + 1, []).append(layer)
    return columns, layers


def _text(x: float, y: float, content: str, size: int = 11, weight: str = "normal") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" '
            f'font-family="sans-serif">{escape(content)}</text>')


def _wrap(text: str, limit: int = MAX_LINE) -> list[str]:
    """The text in lines of at most ``limit`` characters, broken after a space, a comma or
    a dash where there is one: a value is shown whole, never cut."""
    lines = []
    while len(text) > limit:
        cut = max(text.rfind(" ", 0, limit), text.rfind(",", 0, limit),
                  text.rfind("-", 0, limit)) + 1 or limit
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return [*lines, text]


def _box_width(lines: list[tuple[str, int]]) -> int:
    return max(BOX_W, *(int(len(text) * CHAR_W[size]) + 2 * TEXT_X + 2 for text, size in lines))


def _box_lines(item: Mapping[str, Any], key: str, filesystem: Mapping[str, Any],
               verdict: str) -> tuple[str, str, list[tuple[str, int]]]:
    """(fill, stroke, [(line, font size)]) of one box: its name in bold, then its values."""
    if item.get("fs"):
        head, rest = str(item["device"]), (f"{filesystem.get('fstype', '')} "
                                          f"{'/'.join(filesystem.get('roles', []))}")
        fill, stroke = "#e8f0fe", "#1a73e8"
    else:
        read_ahead = item.get("read_ahead_kb")
        shown_ra = f"ra {read_ahead if read_ahead is not None else '-'} KiB"
        if item.get("kind") == "bdi":
            head, rest = f"NFS {item.get('label', '')}", f"bdi, {shown_ra}"
        elif item.get("kind") == "vxvm":
            head, rest = f"VxVM {item.get('label', '')}", "array LUNs below"
        elif item.get("kind") == "ref":
            head = key + (f" ({item['dm_name']})" if item.get("dm_name") else "")
            rest = f"and what lies below: drawn under {item.get('label', '')}"
        else:
            head = key + (f" ({item['dm_name']})" if item.get("dm_name") else "")
            scheduler = item.get("scheduler") or {}
            # A bio-based volume has no scheduler: show its stripe there instead.
            queue = (f"sched {scheduler['selected']}" if scheduler.get("selected")
                     else f"stripe{_stripe(item)}" if _stripe(item) else "sched -")
            rest = f"{queue}, {shown_ra}"
        fill, stroke = COLOURS[verdict if verdict in COLOURS else "none"]
    return fill, stroke, [(line, 12) for line in _wrap(head)] + [(line, 11)
                                                                  for line in _wrap(rest)]


def render_all(storage: Sequence[Mapping[str, Any]], verdicts: Mapping[str, str]) -> list[str]:
    """A host's diagrams, one per SAS file system, each device below a mounted one drawn
    once: a later diagram refers to the earlier one instead."""
    drawn: dict[str, str] = {}
    diagrams = []
    for filesystem in storage:
        diagrams.append(render(filesystem, verdicts, drawn))
        for layer in filesystem.get("layers", []):
            if int(layer.get("depth", 0)) > 0:
                drawn.setdefault(str(layer.get("device", "")),
                                 str(filesystem.get("mountpoint", "")))
    return diagrams


def render(filesystem: Mapping[str, Any], verdicts: Mapping[str, str],
           shared: Mapping[str, str] | None = None) -> str:
    """One file system's diagram; ``shared``: devices an earlier diagram drew, and where."""
    columns, layers = _columns(filesystem, shared)
    drawn: dict[int, list[tuple[str, str, str, list[tuple[str, int]]]]] = {}
    for column, items in sorted(columns.items()):
        for item in items:
            key = "fs" if item.get("fs") else str(item["device"])
            fill, stroke, lines = _box_lines(item, key, filesystem, verdicts.get(key, "none"))
            drawn.setdefault(column, []).append((key, fill, stroke, lines))
    widths = {column: max(_box_width(lines) for *_, lines in boxes)
              for column, boxes in drawn.items()}
    box_h = max(BOX_H, max(len(lines) for boxes in drawn.values() for *_, lines in boxes)
                * LINE_H + 12)
    lefts, right = {}, PAD
    for column in sorted(widths):
        lefts[column], right = right, right + widths[column] + GAP_X
    height = max(len(v) for v in drawn.values()) * (box_h + GAP_Y) + PAD * 2
    width = right - GAP_X + PAD
    positions: dict[str, tuple[float, float, int]] = {}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="stack" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f"<title>{escape('Storage under ' + str(filesystem.get('mountpoint', '')))}</title>"]
    boxes: list[str] = []
    for column, column_boxes in sorted(drawn.items()):
        for row, (key, fill, stroke, box_lines) in enumerate(column_boxes):
            x, y, w = lefts[column], PAD + row * (box_h + GAP_Y), widths[column]
            positions[key] = (x, y, w)
            boxes.append(f'<rect x="{x}" y="{y}" width="{w}" height="{box_h}" rx="5" '
                         f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
            boxes.extend(_text(x + TEXT_X, y + 18 + index * LINE_H, text, size,
                               "bold" if size == 12 else "normal")
                         for index, (text, size) in enumerate(box_lines))
    for layer in layers:
        parent = "fs" if int(layer.get("depth", 0)) == 0 else str(layer.get("parent") or "")
        if parent in positions and str(layer["device"]) in positions:
            (x1, y1, w1), (x2, y2, _) = positions[parent], positions[str(layer["device"])]
            parts.append(f'<line x1="{x1 + w1}" y1="{y1 + box_h / 2}" x2="{x2}" '
                         f'y2="{y2 + box_h / 2}" stroke="#9aa0a6" stroke-width="1.2"/>')
    parts.extend(boxes)
    parts.append("</svg>")
    return "".join(parts)
