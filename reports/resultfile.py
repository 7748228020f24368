"""The result contract: reading a ``sascheck-result/1`` file someone handed us.

A results file is untrusted input (it may come from any host, or be written by hand), and
``fix --from`` turns it into code that runs as root. So it is read with a size cap, parsed
with the nesting Python's parser can take, validated against ``result-schema.json`` (types,
identifier patterns, known roles and results), and any lone surrogate a JSON escape made is
replaced, so that nothing downstream can fail to encode it. What the schema cannot know
(whether the profile exists, whether site values are well formed) the callers check with the
catalogue: ``fix --from`` re-validates every site value as ``--set`` does.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import fastjsonschema

from ..rules.errors import UserInputError
from .escaping import deep, for_utf8

SCHEMA_FILE = Path(__file__).resolve().parent / "result-schema.json"
SCHEMA_NAME = "sascheck-result/1"
MAX_RESULT_BYTES = 64 << 20
# Lists and objects a results file may open: a real host's file has a few thousand. Counted
# on the bytes before parsing, since 64 MiB of "[]," would parse to 22 million lists (1.6
# GB) before the schema could refuse them; brackets inside strings count too, harmlessly.
MAX_CONTAINERS = 250_000


class ResultFileError(UserInputError):
    """A results file that cannot be used, with the reason (one line)."""


@functools.lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The schema compiled to Python once: 0.5 ms a file where jsonschema takes 20, which a
    10,000-host fleet report needs (scripts/bench-fleet)."""
    return fastjsonschema.compile(_schema())


def read_bytes_capped(path: str, limit: int = MAX_RESULT_BYTES) -> bytes:
    """A file's bytes, refusing more than ``limit`` before reading them all."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ResultFileError(f"cannot read {path}: {exc.strerror}") from exc
    if len(data) > limit:
        raise ResultFileError(f"{path}: larger than {limit >> 20} MiB; not a sascheck result")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999 parses to infinity
        raise ValueError(f"{text[:40]} is out of range")
    return number


# A lone surrogate in decoded JSON can only come from a \uD800-\uDFFF escape (UTF-8 input
# holds none): where the raw text has no such escape, the decoded data needs no check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def decode_json(raw: bytes, path: str) -> Any:
    """The JSON of ``raw``, with any lone surrogate an escape made replaced (for_utf8)."""
    if raw.count(b"[") + raw.count(b"{") > MAX_CONTAINERS:
        raise ResultFileError(f"{path}: more than {MAX_CONTAINERS} lists and objects; "
                              "not a sascheck result")
    try:  # NaN and Infinity are Python's extension, not JSON: a measurement must be finite
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant,
                          parse_float=_finite)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ResultFileError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise ResultFileError(f"{path}: JSON nested too deeply") from None
    if _SURROGATE_ESCAPE.search(raw) and _lone_surrogates(data):
        return deep(data, for_utf8)
    return data


def parse_result(raw: bytes, path: str) -> dict[str, Any]:
    return validate_result(decode_json(raw, path), path, decoded=True)


def validate_result(data: Any, path: str, decoded: bool = False) -> dict[str, Any]:
    """``data`` if it is a well-formed result (surrogates replaced, unless ``decoded``:
    decode_json did), else ResultFileError."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_NAME:
        raise ResultFileError(f"{path}: not a {SCHEMA_NAME} file")
    missing = [key for key in _schema()["required"] if key not in data]
    if missing:
        raise ResultFileError(f"{path}: malformed sascheck results (missing "
                              f"{', '.join(missing)})")
    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        where = "/".join(str(part) for part in exc.path[1:]) or "(top)"
        message = exc.message if len(exc.message) <= 200 else exc.message[:200] + "..."
        raise ResultFileError(f"{path}: malformed sascheck results at {where}: {message}") \
            from None
    if decoded:
        return data
    return deep(data, for_utf8) if _lone_surrogates(data) else data


def _lone_surrogates(data: Any) -> bool:
    """Whether a JSON escape left a lone surrogate somewhere (rare: one pass in C tells)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_result(path: str) -> dict[str, Any]:
    return parse_result(read_bytes_capped(path), path)


def scanned_image(result: Mapping[str, Any]) -> str:
    """The directory root a scan read, when it was one (not this host, not a snapshot or
    sosreport, which name their archive there and say so in ``source``); else ""."""
    root = str(result["host"].get("root", "/"))
    return "" if root in ("/", "") or "source" in result else root


def scanned_archive(result: Mapping[str, Any]) -> tuple[str, str] | None:
    """("snapshot" or "sosreport", its path) where the scan read one; else None."""
    source = result.get("source")
    if isinstance(source, dict) and source.get("kind") in ("snapshot", "sosreport") \
            and isinstance(source.get("path"), str) and source["path"]:
        return str(source["kind"]), source["path"]
    return None


def forced_role(result: Mapping[str, Any]) -> str:
    """The role the scan was told (--role), which a fix of it must act as; else ""."""
    role = result.get("role", {})
    return str(role.get("name", "")) if role.get("source") == "--role" else ""
