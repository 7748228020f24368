"""What the Kubernetes API server says of an object, judged by a CRD as an operator's
repository ships it: each openAPIV3Schema error (with jsonschema) and each field it would
prune."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import yaml


def served_schema(crd_file: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The CRD, and the openAPIV3Schema of its one served version."""
    crd = yaml.safe_load(crd_file.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["served"]]
    return crd, version["schema"]["openAPIV3Schema"]


def pruned(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """The fields the API server would drop from ``value`` (a structural schema with
    preserveUnknownFields false prunes a field it does not name, not refuses it, so a
    misspelt field would vanish silently). metadata is the API server's ObjectMeta."""
    if isinstance(value, dict) and schema.get("type") == "object":
        if schema.get("x-kubernetes-preserve-unknown-fields") or path == ".metadata":
            return []
        known = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        found = [f"{path}.{key}" for key in value if key not in known and extra is None]
        for key, item in value.items():
            if key in known:
                found += pruned(known[key], item, f"{path}.{key}")
            elif isinstance(extra, dict):
                found += pruned(extra, item, f"{path}.{key}")
        return found
    if isinstance(value, list) and schema.get("type") == "array":
        return [f for index, item in enumerate(value)
                for f in pruned(schema["items"], item, f"{path}[{index}]")]
    return []


def refusals(schema: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    """What the API server would say of ``obj``: each schema error, and each pruned field."""
    errors = [error.message for error in jsonschema.Draft7Validator(schema).iter_errors(obj)]
    return errors + [f"pruned: {field}" for field in pruned(schema, obj)]
