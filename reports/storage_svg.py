"""The storage stack of a SAS file system as a small inline SVG: file system -> LV ->
multipath -> disks, each box with its scheduler and read-ahead, coloured by verdict.
Every host value is escaped here; the SVG is built as text, no library, no network."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 170, 46, 40, 10, 8
COLOURS = {"fail": ("#fde2e1", "#c62828"), "error": ("#f3e5f5", "#8e24aa"),
           "pass": ("#e3f4e4", "#2e7d32"), "none": ("#f1f3f4", "#80868b")}


def device_verdicts(rules: list[Any]) -> dict[str, str]:
    """device -> worst verdict from the scheduler and read-ahead rules' evidence."""
    rank = {"fail": 3, "error": 2, "pass": 1}
    verdicts: dict[str, str] = {}
    for rule in rules:
        if rule.id not in ("io_scheduler", "read_ahead"):
            continue
        for item in rule.evidence:
            device = item.get("device")
            result = item.get("result", "")
            if device and rank.get(result, 0) > rank.get(verdicts.get(device, ""), 0):
                verdicts[device] = result
    return verdicts


def _text(x: float, y: float, content: str, size: int = 11, weight: str = "normal") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" '
            f'font-family="sans-serif">{escape(content)}</text>')


def _short(text: str, limit: int = 26) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def render(filesystem: Mapping[str, Any], verdicts: Mapping[str, str]) -> str:
    layers = list(filesystem.get("layers", []))
    columns: dict[int, list[Mapping[str, Any]]] = {}
    for layer in layers:
        columns.setdefault(int(layer.get("depth", 0)) + 1, []).append(layer)
    columns[0] = [{"device": filesystem.get("mountpoint", "?"), "fs": True}]
    positions: dict[str, tuple[float, float]] = {}
    height = max(len(v) for v in columns.values()) * (BOX_H + GAP_Y) + PAD * 2
    width = (max(columns) + 1) * (BOX_W + GAP_X) + PAD * 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="stack" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
             f"<title>{escape('Storage under ' + str(filesystem.get('mountpoint', '')))}</title>"]
    boxes: list[str] = []
    for column, items in sorted(columns.items()):
        for row, item in enumerate(items):
            x = PAD + column * (BOX_W + GAP_X)
            y = PAD + row * (BOX_H + GAP_Y)
            key = "fs" if item.get("fs") else str(item["device"])
            positions[key] = (x, y)
            if item.get("fs"):
                fill, stroke = "#e8f0fe", "#1a73e8"
                lines = [_short(str(item["device"])),
                         _short(f"{filesystem.get('fstype', '')} "
                                f"{'/'.join(filesystem.get('roles', []))}")]
            else:
                fill, stroke = COLOURS[verdicts.get(key, "none")
                                       if verdicts.get(key) in COLOURS else "none"]
                name = key + (f" ({item['dm_name']})" if item.get("dm_name") else "")
                scheduler = item.get("scheduler") or {}
                read_ahead = item.get("read_ahead_kb")
                lines = [_short(name),
                         _short(f"sched {scheduler.get('selected') or '-'}, "
                                f"ra {read_ahead if read_ahead is not None else '-'} KiB")]
            boxes.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" '
                         f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
            boxes.append(_text(x + 7, y + 18, lines[0], 12, "bold"))
            boxes.append(_text(x + 7, y + 35, lines[1]))
    for layer in layers:
        parent = "fs" if int(layer.get("depth", 0)) == 0 else str(layer.get("parent") or "")
        if parent in positions and str(layer["device"]) in positions:
            (x1, y1), (x2, y2) = positions[parent], positions[str(layer["device"])]
            parts.append(f'<line x1="{x1 + BOX_W}" y1="{y1 + BOX_H / 2}" x2="{x2}" '
                         f'y2="{y2 + BOX_H / 2}" stroke="#9aa0a6" stroke-width="1.2"/>')
    parts.extend(boxes)
    parts.append("</svg>")
    return "".join(parts)
