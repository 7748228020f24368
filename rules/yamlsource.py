"""YAML loading that remembers where every value came from.

Errors about rule files must name the file, the line and the field, so the
loader keeps a map from each value's path (``("check", "kind")``) to its line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

PathKey = tuple[Any, ...]


class SourceError(Exception):
    """A problem in a source file, located as precisely as we can."""

    def __init__(self, file: Path | str, message: str, line: int | None = None,
                 field: str | None = None) -> None:
        self.file = str(file)
        self.line = line
        self.field = field
        self.message = message
        where = self.file if line is None else f"{self.file}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


class LocatedDocument:
    """A parsed YAML document plus the line of each value in it."""

    def __init__(self, file: Path, data: Any, lines: dict[PathKey, int]) -> None:
        self.file = file
        self.data = data
        self._lines = lines

    def line_of(self, path: Sequence[Any]) -> int | None:
        """The line of the value at ``path``, or of its nearest located parent."""
        key = tuple(path)
        while key:
            if key in self._lines:
                return self._lines[key]
            key = key[:-1]
        return self._lines.get((), None)

    def error(self, path: Sequence[Any], message: str) -> SourceError:
        field = ".".join(str(p) for p in path) or None
        return SourceError(self.file, message, self.line_of(path), field)


def _index_lines(node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> None:
    import yaml

    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            lines[(*path, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_lines(item, (*path, index), lines)


def load_located(file: Path) -> LocatedDocument:
    """Parse one YAML file; raise SourceError with the line for syntax errors."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(file, f"cannot read: {exc}") from exc
    import yaml  # only when a file is really parsed (see loader.STAMP_FILE)

    try:
        # One parse: compose (for line numbers), then construct from the same node.
        # libyaml's loader when PyYAML was built with it (the wheels are).
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise SourceError(file, f"invalid YAML: {exc.problem or exc}", line) from exc
    except yaml.YAMLError as exc:
        raise SourceError(file, f"invalid YAML: {exc}") from exc
    lines: dict[PathKey, int] = {}
    if node is not None:
        _index_lines(node, (), lines)
    return LocatedDocument(file, data, lines)
