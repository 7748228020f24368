"""Load and validate the catalogue: rule files, site values and profiles.

Every problem is reported as ``file:line: field 'x': message`` so that a person
editing a rule can go straight to it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

from .check_kinds import KINDS, rule_values
from .errors import UserInputError
from .host_layout import KERNEL_SYSCTL_DEFAULTS
from .model import Catalogue, Impact, Profile, Reference, Rule, Severity, Source, Variable
from .values import SiteValueError, coerce
from .yamlsource import LocatedDocument, SourceError, load_located

RULES_DIR = Path(__file__).resolve().parent
RULE_ID = re.compile(r"^[a-z0-9_]+$")
SOURCE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
NON_RULE_FILES = {"variables.yml", "sources.yml"}
SOURCE_FIELDS = {"title": str, "publisher": str, "year": int}
SOURCE_LOCATIONS = ("file", "url")  # exactly one: a seed text or a public https page
STAMP_FILE = "validated.sha256"
# The parsed documents of the stamped catalogue, as JSON: a scan of the shipped rules then
# neither imports nor runs a YAML parser (scripts/update-rule-stamp writes it).
CACHE_FILE = "validated.cache"


def catalogue_digest(directory: Path) -> str:
    """A digest of every file the catalogue is made of (rules, profiles, schemas)."""
    digest = hashlib.sha256()
    files = [*directory.glob("*.yml"), *directory.glob("*.json"),
             *(directory / "profiles").glob("*.yml")]
    for file in sorted(files):
        digest.update(file.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def _already_validated(directory: Path) -> bool:
    """True when the files are byte for byte those the tests validated (the shipped
    catalogue): then the JSON Schema pass, and jsonschema's import, can be skipped, and
    the documents are read from the cache when it is of the same files."""
    stamp = directory / STAMP_FILE
    try:
        digest = catalogue_digest(directory)
        if stamp.read_text(encoding="utf-8").strip() != digest:
            return False
    except OSError:
        return False
    try:
        cache = json.loads((directory / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    if isinstance(cache, dict) and cache.get("digest") == digest:
        _CACHED.update({directory / name: data for name, data in cache["documents"].items()})
    return True


def cache_documents(directory: Path) -> str:
    """The cache file's text for the catalogue in ``directory`` as it is now."""
    files = [*directory.glob("*.yml"), *(directory / "profiles").glob("*.yml")]
    documents = {file.relative_to(directory).as_posix(): load_located(file).data
                 for file in sorted(files)}
    # Key order is kept: it is the order of site values, profiles and rules in reports.
    return json.dumps({"digest": catalogue_digest(directory), "documents": documents}) + "\n"


_CACHED: dict[Path, Any] = {}


def _read(file: Path) -> LocatedDocument:
    """A catalogue file's document: from the cache (no line numbers: it has no errors to
    report), else parsed."""
    if file in _CACHED:
        return LocatedDocument(file, _CACHED[file], {})
    return load_located(file)


class CatalogueError(UserInputError):
    """One or more problems in the catalogue's files."""

    def __init__(self, errors: list[SourceError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(error) for error in errors))


@lru_cache(maxsize=4)
def _validator(schema_file: Path) -> jsonschema.protocols.Validator:
    import jsonschema  # imported only when a catalogue is not known to be valid

    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _schema_errors(document: LocatedDocument, schema_file: Path) -> list[SourceError]:
    if _SKIP_SCHEMA.get(schema_file.parent):
        return []
    validator = _validator(schema_file)
    errors = sorted(validator.iter_errors(document.data), key=lambda e: list(e.absolute_path))
    found = []
    for error in errors:
        # For an if/then failure the useful message is the innermost one.
        leaf = min(error.context, key=lambda e: len(e.path), default=error) if error.context else error
        path = list(error.absolute_path) + [p for p in leaf.path if p not in error.absolute_path]
        found.append(document.error(path, _one_of_names(error) or leaf.message))
    return found


def _one_of_names(error: jsonschema.ValidationError) -> str:
    """For a `oneOf` of required fields (a sysctl rule's value_from or value), what to
    give, rather than jsonschema's "is valid under each of" or one alternative's
    "is a required property"."""
    for candidate in (error, *error.context):
        schema = candidate.schema
        alternatives = schema.get("oneOf") if candidate.validator == "oneOf" and isinstance(
            schema, dict) else None
        if isinstance(alternatives, list) and all(
                isinstance(a, dict) and set(a) == {"required"} for a in alternatives):
            names = " or ".join("+".join(a["required"]) for a in alternatives)
            return f"give exactly one of {names}"
    return ""


_SKIP_SCHEMA: dict[Path, bool] = {}


def _valid_document(file: Path, schema: Path, errors: list[SourceError]
                    ) -> LocatedDocument | None:
    """The parsed file, or None with its problems added to ``errors``."""
    try:
        document = _read(file)
    except SourceError as exc:
        errors.append(exc)
        return None
    problems = _schema_errors(document, schema)
    errors.extend(problems)
    return None if problems else document


def _load_variables(directory: Path) -> dict[str, Variable]:
    document = _read(directory / "variables.yml")
    if not isinstance(document.data, dict):
        raise CatalogueError([document.error([], "expected a mapping of site values")])
    variables: dict[str, Variable] = {}
    errors: list[SourceError] = []
    for name, spec in document.data.items():
        if not isinstance(spec, dict) or spec.get("type") not in ("paths", "strings", "integer",
                                                                   "boolean"):
            errors.append(document.error([name, "type"],
                                         "type must be paths, strings, integer or boolean"))
            continue
        variable = Variable(name=name, type=spec["type"], default=None,
                            description=str(spec.get("description", "")),
                            minimum=spec.get("minimum"), maximum=spec.get("maximum"),
                            pattern=spec.get("pattern"), min_items=int(spec.get("min_items", 0)))
        try:
            default = coerce(variable, spec.get("default"), f"{document.file} default")
        except SiteValueError as exc:
            errors.append(document.error([name, "default"], str(exc)))
            continue
        variables[name] = dataclasses.replace(variable, default=default)
    if errors:
        raise CatalogueError(errors)
    return variables


def _source_problems(spec: dict[str, Any]) -> list[tuple[list[str], str]]:
    """(field path, message) for each fault of one sources.yml entry."""
    problems: list[tuple[list[str], str]] = [
        ([name], f"needs a {kind.__name__}") for name, kind in SOURCE_FIELDS.items()
        if not isinstance(spec.get(name), kind) or isinstance(spec.get(name), bool)]
    located = [name for name in SOURCE_LOCATIONS if name in spec]
    if len(located) != 1:
        problems.append(([], "needs exactly one of file (a seed text) or url"))
    elif not isinstance(spec[located[0]], str) or (
            located[0] == "url" and not spec["url"].startswith("https://")):
        problems.append(([located[0]], "needs a string (an https:// address for url)"))
    problems += [([name], "unknown field") for name in sorted(
        set(spec) - set(SOURCE_FIELDS) - set(SOURCE_LOCATIONS))]
    return problems


def _load_sources(directory: Path) -> dict[str, Source]:
    document = _read(directory / "sources.yml")
    if not isinstance(document.data, dict):
        raise CatalogueError([document.error([], "expected a mapping of source ids")])
    sources: dict[str, Source] = {}
    errors: list[SourceError] = []
    for source_id, spec in document.data.items():
        if not isinstance(source_id, str) or not SOURCE_ID.match(source_id):
            errors.append(document.error([source_id], "source ids are [a-z0-9-]"))
            continue
        if not isinstance(spec, dict):
            errors.append(document.error([source_id], "expected file, title, publisher, year"))
            continue
        problems = _source_problems(spec)
        for path, message in problems:
            errors.append(document.error([source_id, *path], message))
        if not problems:
            sources[source_id] = Source(source_id, spec.get("file", ""),
                                        " ".join(spec["title"].split()), spec["publisher"],
                                        spec["year"], spec.get("url", ""))
    if errors:
        raise CatalogueError(errors)
    return sources


def _rule_from(document: LocatedDocument, variables: dict[str, Variable],
               sources: dict[str, Source]) -> Rule:
    rule_id = document.file.stem
    data = document.data
    check = dict(data["check"])
    kind = KINDS[check.pop("kind")]
    for param, wanted in kind.value_params.items():
        if param in check:
            variable = variables.get(check[param])
            if variable is None or variable.type != wanted:
                raise document.error(["check", param],
                                     f"'{check[param]}' is not a {wanted} site value")
    for param, wanted in kind.value_list_params.items():
        for number, name in enumerate(check.get(param, ())):
            variable = variables.get(name)
            if variable is None or variable.type != wanted:
                raise document.error(["check", param, number],
                                     f"'{name}' is not a {wanted} site value")
    if kind.boot_sysctl_key and check["key"] not in KERNEL_SYSCTL_DEFAULTS:
        # A boot that sets nothing leaves the kernel's default, which must be known: else
        # both engines would judge an unknown value.
        raise document.error(["check", "key"], f"the kernel's default for {check['key']} is "
                             "not known: add it, by release, to KERNEL_SYSCTL_DEFAULTS in "
                             "rules/host_layout/boot.py")
    manual_fix = " ".join(str(data.get("manual_fix", "")).split())
    if not kind.automatic_fix and not manual_fix:
        raise document.error(["manual_fix"], f"check kind '{kind.name}' has no automatic fix: "
                                             "say what to do by hand")
    return Rule(
        id=rule_id,
        title=data["title"].strip(),
        description=data["description"].strip(),
        rationale=data["rationale"].strip(),
        severity=Severity(data["severity"]),
        references=tuple(_reference(document, index, ref, sources)
                         for index, ref in enumerate(data["references"])),
        applies_to=tuple(data["applies_to"]),
        kind=kind.name,
        params=check,
        source=document.file,
        sas_filesystems=kind.sas_filesystems,
        values=rule_values(kind, check),
        needs=kind.needs,
        manual_fix=manual_fix,
        profiles=tuple(data.get("profiles", ())),
        impact=_impact(document, data.get("impact"), sources),
        at_boot_of=tuple(data.get("at_boot_of", ())),
        fix_step=data.get("fix_step") or ("project" if manual_fix else "runtime"),
        fix_step_why=" ".join(str(data.get("fix_step_why", "")).split()),
        tuned_sets=data.get("tuned_sets", ""),
    )


def _impact(document: LocatedDocument, data: dict[str, Any] | None,
            sources: dict[str, Source]) -> Impact | None:
    if data is None:
        return None
    source = sources.get(data["source"])
    if source is None:
        raise document.error(["impact", "source"],
                             f"unknown source '{data['source']}' (see sources.yml)")
    return Impact(" ".join(data["text"].split()), Reference(source, data["section"]),
                  data.get("percent"), data["metric"],
                  " ".join(str(data.get("measured_on", "")).split()))


def _reference(document: LocatedDocument, index: int, ref: dict[str, str],
               sources: dict[str, Source]) -> Reference:
    source = sources.get(ref["source"])
    if source is None:
        raise document.error(["references", index, "source"],
                             f"unknown source '{ref['source']}' (see sources.yml)")
    return Reference(source, ref["section"], ref.get("note", ""))


def _load_rules(directory: Path, variables: dict[str, Variable], sources: dict[str, Source],
                errors: list[SourceError]) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for file in sorted(directory.glob("*.yml")):
        if file.name in NON_RULE_FILES:
            continue
        if not RULE_ID.match(file.stem):
            errors.append(SourceError(file, "rule file names must be lower-case ids "
                                            "([a-z0-9_]) ending in .yml"))
            continue
        document = _valid_document(file, directory / "schema.json", errors)
        if document is None:
            continue
        try:
            rules[file.stem] = _rule_from(document, variables, sources)
        except SourceError as exc:
            errors.append(exc)
    for rule in rules.values():
        errors.extend(SourceError(rule.source, f"unknown rule '{name}'", field="at_boot_of")
                      for name in rule.at_boot_of if name not in rules)
    return rules


def _load_profiles(directory: Path, rules: dict[str, Rule], variables: dict[str, Variable],
                   errors: list[SourceError]) -> dict[str, Profile]:
    documents: dict[str, LocatedDocument] = {}
    for file in sorted((directory / "profiles").glob("*.yml")):
        document = _valid_document(file, directory / "profile-schema.json", errors)
        if document is not None:
            documents[file.stem] = document

    for rule in rules.values():
        errors.extend(SourceError(rule.source, f"unknown profile '{name}'", field="profiles")
                      for name in rule.profiles if name not in documents)
    profiles: dict[str, Profile] = {}

    def build(name: str, chain: tuple[str, ...]) -> Profile | None:
        if name in profiles:
            return profiles[name]
        document = documents[name]
        data: dict[str, Any] = document.data
        parent: Profile | None = None
        if "extends" in data:
            base = data["extends"]
            if base in chain or base not in documents:
                why = "extends itself through " + " -> ".join((*chain, base)) \
                    if base in chain else f"extends unknown profile '{base}'"
                errors.append(document.error(["extends"], why))
                return None
            parent = build(base, (*chain, base))
            if parent is None:
                return None
        # Without a list: the parent's rules (else the catalogue's), plus those that name
        # this profile; a rule naming profiles is left out of the others.
        rule_ids = tuple(data["rules"]) if "rules" in data else tuple(sorted(
            {*(parent.rule_ids if parent else
               (r for r in rules if not rules[r].profiles)),
             *(r for r in rules if name in rules[r].profiles)}))
        for index, rule_id in enumerate(rule_ids):
            if rule_id not in rules:
                errors.append(document.error(["rules", index], f"unknown rule '{rule_id}'"))
                return None
        values = dict(parent.values) if parent else {}
        for key, raw in (data.get("values") or {}).items():
            if key not in variables:
                errors.append(document.error(["values", key], f"unknown site value '{key}'"))
                return None
            try:
                values[key] = coerce(variables[key], raw, f"profile {name}")
            except SiteValueError as exc:
                errors.append(document.error(["values", key], str(exc)))
                return None
        pools = tuple(data.get("node_pools", parent.node_pools if parent else ()))
        profile = Profile(name, data["title"].strip(), data["description"].strip(), rule_ids,
                          values, document.file, pools)
        profiles[name] = profile
        return profile

    for name in documents:
        build(name, (name,))
    return profiles


def load_catalogue(directory: Path | None = None) -> Catalogue:
    """Load rules, site values and profiles from ``directory`` (default: the shipped ones)."""
    directory = directory or RULES_DIR
    _SKIP_SCHEMA[directory] = _already_validated(directory)
    try:
        variables = _load_variables(directory)
        sources = _load_sources(directory)
    except SourceError as exc:
        raise CatalogueError([exc]) from exc
    errors: list[SourceError] = []
    rules = _load_rules(directory, variables, sources, errors)
    profiles = _load_profiles(directory, rules, variables, errors)
    if errors:
        raise CatalogueError(errors)
    if "default" not in profiles:
        raise CatalogueError([SourceError(directory / "profiles", "no 'default' profile")])
    return Catalogue(rules=rules, variables=variables, profiles=profiles, directory=directory,
                     sources=sources)
