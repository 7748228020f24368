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
from pathlib import Path
from typing import Any

import jsonschema

from ..rules.errors import UserInputError
from .escaping import deep, for_utf8

SCHEMA_FILE = Path(__file__).resolve().parent / "result-schema.json"
SCHEMA_NAME = "sascheck-result/1"
MAX_RESULT_BYTES = 64 << 20


class ResultFileError(UserInputError):
    """A results file that cannot be used, with the reason (one line)."""


@functools.lru_cache(maxsize=1)
def _validator() -> Any:  # a jsonschema validator class instance, schema loaded once
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


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


def decode_json(raw: bytes, path: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ResultFileError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise ResultFileError(f"{path}: JSON nested too deeply") from None


def parse_result(raw: bytes, path: str) -> dict[str, Any]:
    return validate_result(decode_json(raw, path), path)


def validate_result(data: Any, path: str) -> dict[str, Any]:
    """``data`` if it is a well-formed result (surrogates replaced), else ResultFileError."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_NAME:
        raise ResultFileError(f"{path}: not a {SCHEMA_NAME} file")
    validator = _validator()
    missing = [key for key in validator.schema["required"] if key not in data]
    if missing:
        raise ResultFileError(f"{path}: malformed sascheck results (missing "
                              f"{', '.join(missing)})")
    errors = validator.iter_errors(data)
    error = jsonschema.exceptions.best_match(errors)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        raise ResultFileError(f"{path}: malformed sascheck results at {where}: {message}")
    return deep(data, for_utf8)  # type: ignore[no-any-return]


def read_result(path: str) -> dict[str, Any]:
    return parse_result(read_bytes_capped(path), path)
