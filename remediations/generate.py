"""Render remediations with jinja2: one template per check kind and format.

Values that came from a host (mount points, device names, paths) are quoted for the
shell with ``sh`` and for YAML with ``yaml`` (a ``!unsafe`` JSON string, which Ansible
never templates), so a mount point named ``/x$(reboot)`` stays data.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..reports.failing import LIMIT_SAFE
from ..reports.resultfile import forced_role, scanned_image
from ..rules import Catalogue, Rule, parse_assignment, resolve_values
from ..rules.check_kinds import fix_traits, sysctl_wanted
from ..rules.host_layout import (
    SAS_ROLE_VALUES,
    SYSCTL_BYTES_TWINS,
    UDEV_RULES_DIRS,
    shell_layout,
)
from ..scanner.fix_order import catalogue_ranks
from . import udev
from .bash_library import (
    LAYOUT_PIECE,
    SHARED,
    STATEMENTS_PIECE,
    TUNED_PROFILES_PIECE,
    layout_for,
    library_for,
    library_parts,
    shared_functions,
)
from .inventory_vars import check_task
from .profile_files import (
    TUNED_TEMPLATE_SYSCTL,
    sysv_profile,
    tuned_profile,
    udev_rules,
)
from .rendering import (
    TUNED_PROFILE_NAME,
    FixError,
    FixInput,
    environment,
)
from .site_values import (
    SAS_DATA_DIRS_ENV,
    SAS_DIRS_ENV,
    FixValue,
    boolean_words,
    fix_values,
    sas_dirs_line,
    site_lines,
)
from .tuned_cr import revert_command as tuned_cr_revert
from .tuned_cr import tuned_cr

FORMATS = ("bash", "ansible", "tuned", "tuned-cr", "udev")


def select_rules(result: Mapping[str, Any], catalogue: Catalogue, everything: bool,
                 only: Iterable[str] = ()) -> tuple[str, ...]:
    """The rules to remediate: those that failed (or all of the profile with --all), in the
    fix order's steps (the tuned profile before what it carries, so a sysctl fix finds tuned
    started and puts its value in that profile alone). A rule this release does not know
    (results from another version) is passed over."""
    chosen = [rule["id"] for rule in result["rules"] if rule["id"] in catalogue.rules
              and (everything or rule["result"] in ("fail", "error"))]
    wanted = set(only)
    unknown = wanted - set(catalogue.rules)
    if unknown:
        raise FixError(f"unknown rule(s): {', '.join(sorted(unknown))}")
    selected = [r for r in chosen if not wanted or r in wanted]
    ranks = catalogue_ranks(catalogue, selected)
    return tuple(sorted(selected, key=ranks.__getitem__))


# The kinds whose value a tuned profile's [sysctl] line can hold (kernel.sem's fields are
# raised one by one, keeping a higher one: only the bash and Ansible fixes do that).
TUNED_SYSCTL_KINDS = ("sysctl_value", "sysctl_at_boot")


def failing_sysctl(catalogue: Catalogue, result: Mapping[str, Any],
                   values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(key, site value) of each sysctl the scan failed, for the tuned format's [sysctl]; a
    passing one stays as the site has it (at most 10 may be 5), even with --all."""
    found: dict[str, str] = {}
    for verdict in result["rules"]:
        rule = catalogue.rules.get(verdict["id"])
        if (rule is None or verdict["result"] != "fail" or rule.kind not in TUNED_SYSCTL_KINDS
                or rule.params["key"] == TUNED_TEMPLATE_SYSCTL):
            continue
        # a bound as tuned's modifier: applied only where the key boots further from it
        bound = {"at_least": ">", "at_most": "<"}.get(rule.params.get("compare", ""), "")
        found.setdefault(str(rule.params["key"]),
                         bound + str(sysctl_wanted(rule.params, values)))
    return tuple(found.items())


def _value_lines(fix: FixInput, mode: str, values: list[FixValue]) -> list[str]:
    """Shell assignments of the site values: literal ('bash'), from the environment the
    playbook sets from its variables ('env'), or XCCDF <sub> markers ('xccdf')."""
    return [sas_dirs_line(mode, fix.sas_dirs, fix.values["sas_data_dirs"]),
            *(value.assignment(mode, fix.values) for value in values)]


def _rule_context(rule: Rule) -> dict[str, Any]:
    # a ratio's byte twin (vm.dirty_ratio's vm.dirty_bytes): the fix leaves a site's bytes
    return {"rule": rule, "params": rule.params, "manual_reason": rule.manual_fix,
            "bytes_twin": SYSCTL_BYTES_TWINS.get(str(rule.params.get("key", "")), "")}


def _template_for(rule: Rule, fmt: str) -> str:
    extension = "sh" if fmt == "bash" else "yml"
    return f"{fmt}/manual.{extension}.j2" if rule.manual_fix else f"{fmt}/{rule.kind}.{extension}.j2"


def tuned_profile_assignments(fix: FixInput, env: Any) -> str:
    """The script's two tuned profiles (THP off, and a KVM host's), as shell assignments.
    A KVM host keeps THP on (seed 000, 6.8). Their include (@INCLUDE@) is chosen at run time
    among the profiles the host has (tuned_include), their numbers from the site values."""
    shown = {"read_ahead_min_kb": "@READ_AHEAD_MIN_KB@", "dirty_ratio": "@DIRTY_RATIO@"}
    profiles = {name: tuned_profile(fix, env, role=role, include="@INCLUDE@", values=shown)
                for name, role in (("THP_OFF", "bare_metal"), ("KVM_HOST", "kvm_host"))}
    return "\n".join(f"TUNED_PROFILE_{name}={shlex.quote(text)}"
                     for name, text in profiles.items())


def bash_script(catalogue: Catalogue, fix: FixInput, mode: str = "bash",
                common: frozenset[str] | None = None) -> str:
    """The script for `fix`. With ``common`` (the functions every fix calls), the library,
    the host layout and the tuned profiles are marks naming their shared pieces
    (bash_library.SHARED), as the data stream's fixes hold them."""
    env = environment()
    # A script oscap assembles runs its set-up once, in the first block: a rule's own values
    # are set and checked in its block; otherwise all are set and checked up front.
    snippet = mode == "xccdf"
    header_values = fix_values(catalogue, () if snippet else fix.rule_ids)
    blocks = []
    for rule_id in fix.rule_ids:
        rule = catalogue.rules[rule_id]
        body = env.get_template(_template_for(rule, "bash")).render(**_rule_context(rule))
        own = fix_values(catalogue, (rule_id,), library=False) if snippet else []
        blocks.append({"rule": rule, "body": body.rstrip("\n"),
                       "value_lines": [value.assignment(mode, fix.values) for value in own],
                       "value_checks": [value.check() for value in own]})
    script = env.get_template("bash/script.sh.j2").render(
        # XCCDF: one block of the script oscap assembles, safe to concatenate
        snippet=snippet, library=_LIBRARY, library_functions=_LIBRARY_FUNCTIONS,
        shared=common is not None,
        host=fix.host, profile=fix.profile, role=fix.role, version=__version__,
        forced_role=fix.forced_role, blocks=blocks,
        value_lines=_value_lines(fix, mode, header_values),
        value_checks=[value.check() for value in header_values],
        udev_safe=udev.SAFE_VALUE, layout=_LAYOUT,
        tuned_profiles=(SHARED.format(TUNED_PROFILES_PIECE) if common is not None
                        else tuned_profile_assignments(fix, env)),
        tuned_sysv_profile=sysv_profile(fix), tuned_site_profile=fix.tuned_site_profile,
        tuned_template_sysctl=TUNED_TEMPLATE_SYSCTL,
        target_hostname=fix.target_hostname, target_machine_id=fix.target_machine_id,
        target_root=fix.target_root,
        failed_when_scanned=" " + " ".join(fix.failed_rules) + " " if fix.failed_rules else "")
    return _with_library(script, snippet, common)


# Where the library goes: filled in once the rest of the script says which functions it calls.
_LIBRARY = "@SASCHECK_LIBRARY@"
_LIBRARY_FUNCTIONS = "@SASCHECK_LIBRARY_FUNCTIONS@"


_LAYOUT = "@SASCHECK_LAYOUT@"


def _with_library(script: str, snippet: bool, common: frozenset[str] | None) -> str:
    own = script.replace(_LIBRARY, "").replace(_LIBRARY_FUNCTIONS, "").replace(_LAYOUT, "")
    if common is not None:  # functions before the statements: all are defined before any runs
        functions = shared_functions(own, common)
        statements = SHARED.format(STATEMENTS_PIECE)
        if snippet:
            script = script.replace(_LIBRARY_FUNCTIONS, functions).replace(_LIBRARY, statements)
        else:
            script = script.replace(_LIBRARY, f"{functions}\n{statements}")
        return script.replace(_LAYOUT, SHARED.format(LAYOUT_PIECE))
    if snippet:
        functions, statements = library_parts(own)
        script = script.replace(_LIBRARY_FUNCTIONS, functions).replace(_LIBRARY, statements)
    else:
        script = script.replace(_LIBRARY, library_for(own))
    return script.replace(_LAYOUT, layout_for(shell_layout(), script.replace(_LAYOUT, "")))


def task_tags(rule: Rule) -> list[str]:
    """A rule's Ansible tags, as SSG tags its tasks: the rule (for --tags RULE_ID), its
    severity, what its fix does to a host, and each document it cites."""
    return [rule.id, f"{rule.severity.value}_severity", *fix_traits(rule.kind).tags(),
            *dict.fromkeys(f"source_{reference.source.id}" for reference in rule.references)]


def planner_name(output: str) -> str:
    """The planner script's name beside a playbook: fix.yml -> fix.planner.sh."""
    stem = Path(output).name
    for suffix in (".yml", ".yaml"):
        stem = stem.removesuffix(suffix)
    return f"{stem}.planner.sh"


def ansible_planner(catalogue: Catalogue, fix: FixInput) -> str:
    """The planner the playbook runs on each host: the bash fix, values from the environment."""
    return bash_script(catalogue, fix, "env")


def _playbook(catalogue: Catalogue, chosen: Sequence[str], **context: Any) -> str:
    """The playbook, for one host's fix or (``fleet``) for every host of a fleet's."""
    return environment().get_template("ansible/playbook.yml.j2").render(
        version=__version__, sas_dirs_env=SAS_DIRS_ENV, sas_data_dirs_env=SAS_DATA_DIRS_ENV,
        revertable=True,
        site_values=fix_values(catalogue, chosen), boolean_words=boolean_words(),
        check_task=check_task(catalogue.variables), **{"fleet": None, **context},
        rules=[catalogue.rules[rule_id] for rule_id in chosen],
        rule_tags={rule_id: task_tags(catalogue.rules[rule_id]) for rule_id in chosen}
    ).rstrip("\n") + "\n"


def ansible_playbook(catalogue: Catalogue, fix: FixInput, planner: str = "sascheck-fix.planner.sh"
                     ) -> str:
    return _playbook(catalogue, fix.rule_ids, host=fix.host, profile=fix.profile,
                     role=fix.role, planner_name=planner,
                     site=site_lines(catalogue, fix.values, fix.rule_ids))


def fleet_playbook(catalogue: Catalogue, hosts: Iterable[tuple[str, str, FixInput]],
                   refused: Iterable[tuple[str, str]], profile: str) -> str:
    """One playbook for a fleet: for each (inventory name, planner path, fix input) the
    host's planner and site values; the refused hosts with why. Names are keys of the play's
    variables, so only plain ones are written: any other is refused there by default."""
    planned = list(hosts)
    if any(not LIMIT_SAFE.fullmatch(name) for name, _, _ in planned):
        raise FixError("a fleet fix plans only hosts with plain inventory names")
    refused = [(name, why) for name, why in refused if LIMIT_SAFE.fullmatch(name)]
    failing = {rule_id for _, _, fix in planned for rule_id in fix.rule_ids}
    every_rule = [rule_id for rule_id in catalogue.rules if rule_id in failing]
    return _playbook(
        catalogue, every_rule, host=f"{len(planned)} hosts of a fleet", profile=profile,
        role="each host's own", refused=list(refused),
        fleet=[{"name": name, "planner": planner,
                "site": site_lines(catalogue, fix.values, every_rule)}
               for name, planner, fix in planned])


def rule_snippets(catalogue: Catalogue) -> dict[str, dict[str, str]]:
    """Per rule, what a report shows: the bash block and how to run the Ansible fix."""
    env = environment()
    snippets = {}
    for rule in catalogue.rules.values():
        if rule.manual_fix:  # work for a person: shown as text, nothing to copy and run
            snippets[rule.id] = {"manual": rule.manual_fix}
            continue
        body = env.get_template(_template_for(rule, "bash")).render(**_rule_context(rule))
        snippets[rule.id] = {
            "bash": f"# sascheck fix --format bash --rule {rule.id} -o fix.sh writes the whole "
                    f"script;\n# its block for this rule:\n{body.rstrip()}",
            "ansible": f"sascheck fix --format ansible --rule {rule.id} -o sascheck-fix.yml\n"
                       f"ansible-playbook -i HOST, sascheck-fix.yml --tags {rule.id} --check\n"
                       f"ansible-playbook -i HOST, sascheck-fix.yml --tags {rule.id}"}
    return snippets


def _shown_target(fix: FixInput) -> str:
    """The target a printed next step names: the image, else the scanned host's name when
    plainly a name (a results file is untrusted), else HOST."""
    if fix.target_root:
        return fix.target_root
    name = fix.target_hostname
    return name if re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name) else "HOST"


def next_steps(fmt: str, output: str, fix: FixInput) -> list[str]:
    """What to do with a fix once written, for the person who asked for it; first, a
    warning where installing it would replace a site's own file."""
    steps = []
    if fmt == "tuned" and fix.tuned_profiles and TUNED_PROFILE_NAME in fix.tuned_profiles:
        steps.append(f"warning: the host already has a tuned profile named "
                     f"{TUNED_PROFILE_NAME}; installing this replaces it (compare them first)")
    script, target = shlex.quote(output), _shown_target(fix)
    run = (f"SASCHECK_ROOT={shlex.quote(fix.target_root)} bash {script}" if fix.target_root
           else f"bash {script}")
    inventory = ("-i localhost, -c local -e "
                 + shlex.quote(json.dumps({"sascheck_root": fix.target_root}))
                 if fix.target_root else f"-i {shlex.quote(target)},")
    steps.append({
        "bash": f"next (on {target}): {run} --dry-run, then {run} (as root)",
        "ansible": f"next: ansible-playbook {inventory} {script} --check, then without --check"
                   f" ({shlex.quote(planner_name(output))} beside it is the planner it runs)",
        "tuned": f"next: install -D -m 0644 {output} {fix.tuned_user_dir}/"
                 f"{TUNED_PROFILE_NAME}/tuned.conf && tuned-adm profile {TUNED_PROFILE_NAME}",
        "tuned-cr": f"next (on the cluster, as a cluster administrator): oc apply -f {script}; "
                    f"undo: {tuned_cr_revert()} (sascheck fix --format tuned-cr --revert)",
        "udev": f"next: install -m 0644 {output} {UDEV_RULES_DIRS[0]}/99-sascheck-io.rules && "
                "udevadm control --reload && udevadm trigger --subsystem-match=block "
                "--action=change"}[fmt])
    return steps


def generate(fmt: str, catalogue: Catalogue, fix: FixInput) -> str:
    if fmt == "bash":
        return bash_script(catalogue, fix)
    if fmt == "ansible":
        return ansible_playbook(catalogue, fix)
    if fmt == "tuned":
        if fix.tuned_legacy:
            raise FixError("this host runs tuned 0.2 (RHEL 5/6: /etc/tune-profiles), which "
                           "loads no tuned 2 profile: use --format bash or ansible, which "
                           "switch tuned 0.2 to its own throughput profile")
        return tuned_profile(fix)
    if fmt == "tuned-cr":
        return tuned_cr(catalogue, fix)
    if fmt == "udev":
        return udev_rules(fix)
    raise FixError(f"format {fmt!r} is not available yet")


def _release(text: object) -> tuple[int, ...] | None:
    """A results file's tuned_version ("2.21.0"), or None where absent or not a release."""
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,4}){2}", text):
        return None
    return tuple(int(part) for part in text.split("."))


def fix_input_from_result(catalogue: Catalogue, result: Mapping[str, Any], *,
                          profile: str | None, assignments: Iterable[str], role: str,
                          everything: bool, only: Iterable[str]) -> FixInput:
    """What a remediation needs, from a validated results file (reports.resultfile): the
    profile must be one sascheck knows, and every recorded site value is re-validated as
    ``--set`` would be, so nothing the file says reaches a template unchecked."""
    profile_name = catalogue.profile(profile or result["profile"]).name
    recorded = {**result["values"], **{
        SAS_ROLE_VALUES[sas_role]: [d["path"] for d in result["sas_dirs"]
                                   if d["role"] == sas_role]
        for sas_role in SAS_ROLE_VALUES}}
    if not recorded.get("sas_accounts"):  # the accounts the scan found, as it judged them
        recorded["sas_accounts"] = list(result["host"].get("sas_accounts", []))
    values = resolve_values(catalogue.variables, [
        ("results", recorded), ("--set", dict(parse_assignment(a) for a in assignments))])
    return FixInput(host=result["host"].get("hostname") or "this host",
                    role=role if role != "auto" else result["role"]["name"],
                    profile=profile_name, kernel=result["host"].get("kernel", ""),
                    values=values, rule_ids=select_rules(result, catalogue, everything, only),
                    failed_rules=tuple(str(rule["id"]) for rule in result["rules"]
                                       if rule["result"] == "fail"),
                    storage=tuple(result.get("storage", [])),
                    # sascheck fix --role, else the scan's own --role (a fix that detected
                    # the role again could act as another)
                    forced_role=role if role != "auto" else forced_role(result),
                    tuned_profiles=(tuple(result["host"]["tuned_profiles"])
                                    if "tuned_profiles" in result["host"] else None),
                    tuned_new_layout=bool(result["host"].get("tuned_new_layout")),
                    tuned_legacy=bool(result["host"].get("tuned_legacy")),
                    tuned_version=_release(result["host"].get("tuned_version")),
                    tuned_site_profile=str(result["host"].get("tuned_site_profile", "")),
                    tuned_sysctl=failing_sysctl(catalogue, result, values),
                    target_hostname=str(result["host"].get("hostname", "")),
                    target_machine_id=str(result["host"].get("machine_id", "")),
                    target_root=scanned_image(result))
