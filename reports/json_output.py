"""Result JSON (``sascheck-result/1``) as text; sascheck.outputs decides where it goes."""

from __future__ import annotations

import json
from typing import Any


def dumps(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
