"""Render remediations with jinja2: one template per check kind and format.

Values that came from a host (mount points, device names, paths) are quoted for the
shell with ``sh`` and for YAML with ``yaml`` (a ``!unsafe`` JSON string, which Ansible
never templates), so a mount point named ``/x$(reboot)`` stays data.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from .. import __version__
from ..reports.escaping import for_terminal
from ..reports.resultfile import forced_role, scanned_image
from ..rules import Catalogue, Rule, parse_assignment, resolve_values
from ..rules.errors import UserInputError
from ..rules.host_layout import (
    FIX_TUNED_PROFILE,
    SAS_ROLE_VALUES,
    TUNED02_NOBARRIER_PROFILES,
    TUNED02_THROUGHPUT_PROFILES,
    TUNED_MODIFIERS_SINCE,
    TUNED_PROFILES_SUBDIR,
    TUNED_ROLE_PROFILES,
    TUNED_STOCK_READAHEAD_KIB,
    UDEV_RULES_DIRS,
    shell_layout,
)
from . import udev

TEMPLATES = Path(__file__).resolve().parent / "templates"
FORMATS = ("bash", "ansible", "tuned", "udev")
# The bash library, one file per concern, assembled in this order into every script
# (top-level statements run in it: core sets up the run, revert dispatches last).
BASH_LIBRARY = ("core", "files", "host", "mounts", "storage", "boot", "tuned", "revert")


def bash_library() -> str:
    return "\n".join((TEMPLATES / "bash" / "lib" / f"{part}.sh").read_text(encoding="utf-8")
                     .rstrip("\n") for part in BASH_LIBRARY)


TUNED_PROFILE_NAME = FIX_TUNED_PROFILE  # the profile the fixes write (bash: the same)


class FixError(UserInputError):
    """Nothing to generate, or an unusable input."""


def _sh(value: object) -> str:
    return shlex.quote(str(value))


def _comment(value: object) -> str:
    """Text for a comment line (bash, YAML, udev, tuned): one line, nothing that any of
    them reads as a line break (str.split knows NEL and U+2028 too), controls made visible."""
    return for_terminal(" ".join(str(value).split()))


def _yaml(value: object) -> str:
    """A YAML scalar Ansible will not template: !unsafe with a JSON string."""
    return "!unsafe " + json.dumps(str(value))


def _yaml_list(values: Iterable[object]) -> str:
    return "[" + ", ".join(_yaml(value) for value in values) + "]"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["sh"] = _sh
    env.filters["comment"] = _comment
    env.filters["yaml"] = _yaml
    env.filters["yaml_list"] = _yaml_list
    env.filters["json"] = json.dumps
    return env


@dataclass(frozen=True)
class FixInput:
    """What a remediation needs from a scan: the host, its role, values, failing rules."""
    host: str
    role: str
    profile: str
    kernel: str
    values: Mapping[str, Any]
    rule_ids: tuple[str, ...]
    storage: tuple[Mapping[str, Any], ...] = ()
    forced_role: str = ""  # --role given to sascheck fix
    # The tuned profiles the host has (results' host.tuned_profiles); None: not recorded.
    tuned_profiles: tuple[str, ...] | None = None
    tuned_new_layout: bool = False  # tuned >= 2.23: profiles under .../tuned/profiles
    tuned_legacy: bool = False  # tuned 0.2 (RHEL 5/6): loads no tuned 2 profile
    tuned_version: tuple[int, ...] | None = None  # (major, minor, patch); None: not known
    # The active profile when it is the site's own: sas-performance includes it (tuned 2),
    # or it stays active (tuned 0.2, which has no include).
    tuned_site_profile: str = ""
    # Who the fix is for, checked by the bash fix (and the playbook's planner) before it
    # changes anything: the scanned host's name and machine-id, and the directory root it
    # was scanned at ("" for a live host, a snapshot or a sosreport). Empty: not checked.
    target_hostname: str = ""
    target_machine_id: str = ""
    target_root: str = ""

    @property
    def tuned_user_dir(self) -> str:
        return f"/etc/tuned/{TUNED_PROFILES_SUBDIR}" if self.tuned_new_layout else "/etc/tuned"

    @property
    def sas_dirs(self) -> list[str]:
        return [*self.values["sas_data_dirs"], *self.values["sas_work_dirs"],
                *self.values["sas_utilloc_dirs"]]


def select_rules(result: Mapping[str, Any], catalogue: Catalogue, everything: bool,
                 only: Iterable[str] = ()) -> tuple[str, ...]:
    """The rules to remediate: those that failed (or all of the profile with --all). A rule
    this release does not know (results from another version) is passed over."""
    chosen = [rule["id"] for rule in result["rules"] if rule["id"] in catalogue.rules
              and (everything or rule["result"] in ("fail", "error"))]
    wanted = set(only)
    unknown = wanted - set(catalogue.rules)
    if unknown:
        raise FixError(f"unknown rule(s): {', '.join(sorted(unknown))}")
    return tuple(r for r in chosen if not wanted or r in wanted)


def tuned_include_candidates(role: str, allowed: Iterable[object], site: str = "") -> list[str]:
    """The profiles sas-performance may include, best first: the site's own active profile,
    so its tuning stays (a fix never replaces what it cannot judge), then tuned's own for
    the role (a guest, a KVM host), then the site's allowed ones."""
    return list(dict.fromkeys([*([site] if site else []),
                               *([TUNED_ROLE_PROFILES[role]] if role in TUNED_ROLE_PROFILES
                                 else []), *(str(name) for name in allowed)]))


def included_profile(fix: FixInput) -> str:
    """The profile sas-performance includes: the first candidate the host has. A scan records
    the host's profiles; a results file from before that is assumed to have
    throughput-performance, which every tuned 2 package ships (tuned.spec: the other
    candidates may live in subpackages such as tuned-profiles-compat)."""
    candidates = tuned_include_candidates(fix.role, fix.values["allowed_tuned_profiles"],
                                          fix.tuned_site_profile)
    if fix.tuned_site_profile:  # the scan found it active, loaded from /etc/tuned
        return fix.tuned_site_profile
    if fix.tuned_profiles is None:
        return next((name for name in candidates if name == "throughput-performance"),
                    candidates[0])
    found = next((name for name in candidates if name in fix.tuned_profiles), None)
    if found is None:
        raise FixError("the host has none of the tuned profiles sas-performance could include "
                       f"({', '.join(candidates)}): tuned refuses a profile whose include is "
                       "missing; install one (throughput-performance comes with tuned)")
    return found


def sysv_profile(fix: FixInput) -> str:
    """The tuned 0.2 profile tuned-adm activates on RHEL 5/6 (which cannot include one): the
    first allowed profile tuned 0.2 ships, passing over enterprise-storage, whose ktune
    remounts every file system nobarrier, unless the site declared its cache protected."""
    allowed = [str(name) for name in fix.values["allowed_tuned_profiles"]]
    shipped = [name for name in allowed if name in TUNED02_THROUGHPUT_PROFILES]
    safe = [name for name in shipped if fix.values["storage_cache_protected"]
            or name not in TUNED02_NOBARRIER_PROFILES]
    return (safe or shipped or allowed)[0]


def tuned_profile(fix: FixInput, env: jinja2.Environment | None = None, *,
                  role: str | None = None, include: str | None = None,
                  values: Mapping[str, str] | None = None) -> str:
    """The sas-performance profile: it includes a profile the host has and never asks for
    less read-ahead than that profile's own floor. ``values`` may hold placeholders (XCCDF
    subs, the bash script's run-time values)."""
    env = env or environment()
    include = include or included_profile(fix)
    shown = dict(values or {name: str(fix.values[name]) for name in ("read_ahead_min_kb",
                                                                       "dirty_ratio")})
    if not values:
        floor = TUNED_STOCK_READAHEAD_KIB.get(include, 0)
        shown["read_ahead_min_kb"] = str(max(int(shown["read_ahead_min_kb"]), floor))
    modifiers = fix.tuned_version is None or fix.tuned_version[:2] >= TUNED_MODIFIERS_SINCE
    return env.get_template("tuned/tuned.conf.j2").render(
        name=TUNED_PROFILE_NAME, version=__version__, profile=fix.profile, include=include,
        role=role or fix.role, user_dir=fix.tuned_user_dir, modifiers=modifiers,
        force_cpu_latency=bool(fix.values.get("force_cpu_latency")), **shown)


SUB = "\x00{}\x00"  # marks where an XCCDF <sub> for a site value goes


ENV_VALUES = {"read_ahead_min_kb": "SASCHECK_READ_AHEAD_MIN_KB",
              "dirty_ratio": "SASCHECK_DIRTY_RATIO",
              "storage_cache_protected": "SASCHECK_STORAGE_CACHE_PROTECTED",
              "allowed_schedulers": "SASCHECK_ALLOWED_SCHEDULERS",
              "allowed_tuned_profiles": "SASCHECK_ALLOWED_TUNED_PROFILES",
              "sas_dirs": "SASCHECK_SAS_DIRS"}


def _value_lines(fix: FixInput, mode: str) -> list[str]:
    """Shell assignments of the site values: literal ('bash'), from the environment the
    playbook sets from its variables ('env'), or XCCDF <sub> markers ('xccdf')."""
    if mode == "xccdf":
        def sub(name: str) -> str:
            return SUB.format(name)
        dirs = ",".join(sub(n) for n in ("sas_data_dirs", "sas_work_dirs", "sas_utilloc_dirs"))
        return [f"IFS=, read -r -a SAS_DIRS <<< '{dirs}'",
                f"IFS=, read -r -a ALLOWED_SCHEDULERS <<< '{sub('allowed_schedulers')}'",
                f"IFS=, read -r -a ALLOWED_TUNED_PROFILES <<< '{sub('allowed_tuned_profiles')}'",
                f"READ_AHEAD_MIN_KB='{sub('read_ahead_min_kb')}'",
                f"DIRTY_RATIO='{sub('dirty_ratio')}'",
                f"STORAGE_CACHE_PROTECTED='{sub('storage_cache_protected')}'"]
    if mode == "env":
        return [f'IFS=, read -r -a SAS_DIRS <<< "${{{ENV_VALUES["sas_dirs"]}:-}}"',
                f'IFS=, read -r -a ALLOWED_SCHEDULERS <<< "${ENV_VALUES["allowed_schedulers"]}"',
                f'IFS=, read -r -a ALLOWED_TUNED_PROFILES <<< "${{{ENV_VALUES["allowed_tuned_profiles"]}:-}}"',
                f'READ_AHEAD_MIN_KB="${ENV_VALUES["read_ahead_min_kb"]}"',
                f'DIRTY_RATIO="${ENV_VALUES["dirty_ratio"]}"',
                f'STORAGE_CACHE_PROTECTED="${ENV_VALUES["storage_cache_protected"]}"']
    values = fix.values
    return [f"SAS_DIRS=({' '.join(_sh(p) for p in fix.sas_dirs)})",
            f"ALLOWED_SCHEDULERS=({' '.join(_sh(n) for n in values['allowed_schedulers'])})",
            f"ALLOWED_TUNED_PROFILES=({' '.join(_sh(n) for n in values['allowed_tuned_profiles'])})",
            f"READ_AHEAD_MIN_KB={int(values['read_ahead_min_kb'])}",
            f"DIRTY_RATIO={int(values['dirty_ratio'])}",
            f"STORAGE_CACHE_PROTECTED={'true' if values['storage_cache_protected'] else 'false'}"]


def _rule_context(rule: Rule) -> dict[str, Any]:
    return {"rule": rule, "params": rule.params, "manual_reason": rule.manual_fix}


def _template_for(rule: Rule, fmt: str) -> str:
    extension = "sh" if fmt == "bash" else "yml"
    return f"{fmt}/manual.{extension}.j2" if rule.manual_fix else f"{fmt}/{rule.kind}.{extension}.j2"


def bash_script(catalogue: Catalogue, fix: FixInput, mode: str = "bash") -> str:
    env = environment()
    # The tuned profile takes its numbers from the shell variables at run time.
    shown = {"read_ahead_min_kb": "@READ_AHEAD_MIN_KB@", "dirty_ratio": "@DIRTY_RATIO@"}
    blocks = []
    for rule_id in fix.rule_ids:
        rule = catalogue.rules[rule_id]
        body = env.get_template(_template_for(rule, "bash")).render(**_rule_context(rule))
        blocks.append({"rule": rule, "body": body.rstrip("\n")})
    return env.get_template("bash/script.sh.j2").render(
        host=fix.host, profile=fix.profile, role=fix.role, version=__version__,
        forced_role=fix.forced_role, value_lines=_value_lines(fix, mode), blocks=blocks,
        library=bash_library(), udev_safe=udev.SAFE_VALUE, layout=shell_layout(),
        tuned_thp_off=tuned_profile(fix, env, role="bare_metal", include="@INCLUDE@",
                                    values=shown),
        tuned_kvm_host=tuned_profile(fix, env, role="kvm_host", include="@INCLUDE@",
                                     values=shown),
        tuned_sysv_profile=sysv_profile(fix), tuned_site_profile=fix.tuned_site_profile,
        target_hostname=fix.target_hostname, target_machine_id=fix.target_machine_id,
        target_root=fix.target_root)


def planner_name(output: str) -> str:
    """The planner script's name beside a playbook: fix.yml -> fix.planner.sh."""
    stem = Path(output).name
    for suffix in (".yml", ".yaml"):
        stem = stem.removesuffix(suffix)
    return f"{stem}.planner.sh"


def ansible_planner(catalogue: Catalogue, fix: FixInput) -> str:
    """The planner the playbook runs on each host: the bash fix, values from the environment."""
    return bash_script(catalogue, fix, "env")


def ansible_playbook(catalogue: Catalogue, fix: FixInput, planner: str = "sascheck-fix.planner.sh"
                     ) -> str:
    env = environment()
    return env.get_template("ansible/playbook.yml.j2").render(
        host=fix.host, profile=fix.profile, role=fix.role, version=__version__,
        planner_name=planner, values=fix.values,
        sas_dirs=fix.sas_dirs, env_values=ENV_VALUES, revertable=True,
        rules=[catalogue.rules[rule_id] for rule_id in fix.rule_ids])


def _scheduler_to_keep(scheduler: Mapping[str, Any], allowed: list[str]) -> str | None:
    """The scheduler a udev rule sets for a device: none when its scheduler is allowed and
    the kernel's default at boot is too (it is left as it is); the one it has where it is
    allowed but the boot default is not (cfq on RHEL 5 and 6); else the first allowed one it
    offers (bash's persist_sas_io_tuning decides alike)."""
    if scheduler["selected"] in allowed:
        return None if scheduler.get("boot_default") in allowed else scheduler["selected"]
    return next((name for name in allowed if name in scheduler["options"]), None)


def udev_rules(fix: FixInput) -> str:
    """Rules for the devices the scan found under the SAS file systems (the same ones the
    bash script's io_tuning_at_boot block writes at run time), matched only by names udev
    compares byte for byte (remediations.udev)."""
    allowed = list(fix.values["allowed_schedulers"])
    scheduler_rules: dict[str, str] = {}
    read_ahead_rules: dict[str, str] = {}
    notes: list[str] = []
    minimum = str(int(fix.values["read_ahead_min_kb"]))
    for filesystem in fix.storage:
        for layer in filesystem["layers"]:
            match = udev.match_for(layer)
            if match.note and match.note not in notes:
                notes.append(match.note)
            if match.keys is None:
                continue
            scheduler = layer.get("scheduler")
            # A multipath path's scheduler is passed over (its map's works): left alone.
            if scheduler and scheduler.get("selected") and not layer.get("scheduled_by"):
                wanted = _scheduler_to_keep(scheduler, allowed)
                if wanted:
                    scheduler_rules.setdefault(match.keys, wanted)
            if layer["device"] == filesystem.get("queue_device"):
                # Only ever raised: a device that reads ahead more keeps its value.
                current = layer.get("read_ahead_kb")
                value = max(int(minimum), current if isinstance(current, int) else 0)
                read_ahead_rules.setdefault(match.keys, str(value))
    if not scheduler_rules and not read_ahead_rules:
        reason = "; ".join(notes) if notes else (
            "name the SAS directories (--set sas_data_dirs=...) on a host whose storage the "
            "scan can see")
        raise FixError(f"no device under the SAS file systems can be matched: {reason}")
    return environment().get_template("udev/rules.j2").render(
        version=__version__, host=fix.host, notes=notes,
        scheduler_rules=[{"match": m, "value": v} for m, v in scheduler_rules.items()],
        read_ahead_rules=[{"match": m, "value": v} for m, v in read_ahead_rules.items()])


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


def xccdf_fixes(catalogue: Catalogue) -> dict[str, list[tuple[str, str]]]:
    """Each rule's bash and Ansible fix for the data stream: values come from XCCDF
    <sub> elements (marked with SUB), so `oscap xccdf generate fix` fills them in."""
    env = environment()
    defaults = {name: variable.default for name, variable in catalogue.variables.items()}
    fixes: dict[str, list[tuple[str, str]]] = {}
    for rule in catalogue.rules.values():
        fix = FixInput(host="the host being remediated", role="detected", profile="(XCCDF)",
                       kernel="", values=defaults, rule_ids=(rule.id,))
        tasks = env.get_template("ansible/rule_tasks.yml.j2").render(
            rule=rule, planner=bash_script(catalogue, fix, "env").rstrip("\n"),
            env_values=ENV_VALUES, sub=SUB, revertable=False)
        fixes[rule.id] = [("urn:xccdf:fix:script:sh", bash_script(catalogue, fix, "xccdf")),
                          ("urn:xccdf:fix:script:ansible", tasks.rstrip("\n") + "\n")]
    return fixes


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
        "udev": f"next: install -m 0644 {output} {UDEV_RULES_DIRS[0]}/99-sascheck-io.rules && "
                "udevadm control --reload && udevadm trigger --subsystem-match=block "
                "--action=change"}[fmt])
    return steps


def generate(fmt: str, catalogue: Catalogue, fix: FixInput) -> str:
    if fmt == "bash":
        return bash_script(catalogue, fix)
    if fmt == "ansible":
        return ansible_playbook(catalogue, fix).rstrip("\n") + "\n"
    if fmt == "tuned":
        if fix.tuned_legacy:
            raise FixError("this host runs tuned 0.2 (RHEL 5/6: /etc/tune-profiles), which "
                           "loads no tuned 2 profile: use --format bash or ansible, which "
                           "switch tuned 0.2 to its own throughput profile")
        return tuned_profile(fix)
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
    values = resolve_values(catalogue.variables, [
        ("results", recorded), ("--set", dict(parse_assignment(a) for a in assignments))])
    return FixInput(host=result["host"].get("hostname") or "this host",
                    role=role if role != "auto" else result["role"]["name"],
                    profile=profile_name, kernel=result["host"].get("kernel", ""),
                    values=values, rule_ids=select_rules(result, catalogue, everything, only),
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
                    target_hostname=str(result["host"].get("hostname", "")),
                    target_machine_id=str(result["host"].get("machine_id", "")),
                    target_root=scanned_image(result))
