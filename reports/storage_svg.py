"""The storage stack of a SAS file system as a small inline SVG: file system -> LV ->
multipath -> disks (an NFS mount -> its bdi; a VxVM volume -> the array LUNs), each box with
its scheduler, read-ahead and stripe, coloured by verdict.
Every host value is escaped here; the SVG is built as text, no library, no network."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 170, 46, 40, 10, 8
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


def _columns(filesystem: Mapping[str, Any]) -> tuple[dict[int, list[Mapping[str, Any]]],
                                                      list[dict[str, Any]]]:
    """Boxes per column, left to right, and the layers with the parent each is drawn from.
    NFS gets a box for its bdi; a VxVM volume a box of its own above the array LUNs."""
    columns: dict[int, list[Mapping[str, Any]]] = {
        0: [{"device": filesystem.get("mountpoint", "?"), "fs": True}]}
    layers: list[dict[str, Any]] = [dict(layer) for layer in filesystem.get("layers", [])]
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


def _short(text: str, limit: int = 26) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def render(filesystem: Mapping[str, Any], verdicts: Mapping[str, str]) -> str:
    columns, layers = _columns(filesystem)
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
                read_ahead = item.get("read_ahead_kb")
                shown_ra = f"ra {read_ahead if read_ahead is not None else '-'} KiB"
                if item.get("kind") == "bdi":
                    lines = [_short(f"NFS {item.get('label', '')}"), _short(f"bdi, {shown_ra}")]
                elif item.get("kind") == "vxvm":
                    lines = [_short(f"VxVM {item.get('label', '')}"), "array LUNs below"]
                else:
                    name = key + (f" ({item['dm_name']})" if item.get("dm_name") else "")
                    scheduler = item.get("scheduler") or {}
                    # A bio-based volume has no scheduler: show its stripe there instead.
                    queue = (f"sched {scheduler['selected']}" if scheduler.get("selected")
                             else f"stripe{_stripe(item)}" if _stripe(item) else "sched -")
                    lines = [_short(name), _short(f"{queue}, {shown_ra}")]
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
