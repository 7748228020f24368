"""sascheck iotest's measurements as an inline SVG: per file system, write and read MB/s per
physical core as bars against the target line. Built as text; every host value escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..scanner.checks.measured import throughput_target, too_short

WIDTH, LABEL_W, BAR_H, ROW_GAP, TOP = 640, 150, 16, 14, 24
PLOT_W = WIDTH - LABEL_W - 70
PASS, FAIL, NOT_JUDGED = "#2e7d32", "#c62828", "#9aa0a6"


def _text(x: float, y: float, content: str, anchor: str = "start", size: int = 11,
          colour: str = "#202124") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-family="sans-serif" '
            f'text-anchor="{anchor}" fill="{colour}">{escape(content)}</text>')


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else "\u2026" + text[-(limit - 1):]


def render(measurements: Sequence[Mapping[str, Any]], values: Mapping[str, Any]) -> str:
    rows = []
    for measured in measurements:
        cores = max(int(measured["cores"]), 1)
        target, _ = throughput_target(list(measured["roles"]), values)
        rows.append((measured, target, {rw: float(measured[rw]["mb_s"]) / cores
                                        for rw in ("write", "read")}))
    if not rows:
        return ""
    scale_max = max(max(max(rates.values()), target) for _, target, rates in rows) * 1.1 or 1.0

    def x(value: float) -> float:
        return LABEL_W + value / scale_max * PLOT_W

    row_h = 2 * BAR_H + ROW_GAP + 14
    height = TOP + len(rows) * row_h + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="throughput" width="{WIDTH}" '
             f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
             'aria-label="Measured MB/s per physical core against the target">',
             _text(LABEL_W, 14, "MB/s per physical core (dashed line: target)", size=11,
                   colour="#5f6368")]
    for index, (measured, target, rates) in enumerate(rows):
        top = TOP + index * row_h
        roles = "/".join(measured["roles"]) or "not a SAS directory"
        parts.append(_text(4, top + 11, _short(str(measured["mountpoint"]))))
        parts.append(_text(4, top + 25, roles, size=10, colour="#5f6368"))
        # A run too short to judge measured caches: grey, neither pass nor fail (as the rule)
        judged = not too_short(measured, int(values.get("iotest_min_seconds", 0)))
        for lane, rw in enumerate(("write", "read")):
            y = top + lane * (BAR_H + 2)
            rate = rates[rw]
            colour = NOT_JUDGED if not judged else PASS if rate >= target else FAIL
            parts.append(f'<rect class="bar bar-{rw}" data-mb-per-core="{rate:.1f}" '
                         f'x="{LABEL_W}" y="{y}" width="{max(x(rate) - LABEL_W, 1):.1f}" '
                         f'height="{BAR_H}" fill="{colour}" opacity="0.8"/>')
            parts.append(_text(x(rate) + 4, y + BAR_H - 4, f"{rw} {rate:.1f}"
                               + ("" if judged else " (too short to judge)"), size=10))
        line_x = x(target)
        parts.append(f'<line class="target" data-target="{target}" x1="{line_x:.1f}" '
                     f'y1="{top - 3}" x2="{line_x:.1f}" y2="{top + 2 * BAR_H + 5}" '
                     'stroke="#202124" stroke-width="1.5" stroke-dasharray="4 3"/>')
        parts.append(_text(line_x, top + 2 * BAR_H + 14, f"target {target}", anchor="middle",
                           size=9, colour="#5f6368"))
    parts.append("</svg>")
    return "".join(parts)
