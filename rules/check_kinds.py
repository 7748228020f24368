"""The check kinds: what each one takes, reads and fixes, declared once.

A rule file names a kind and gives its parameters. Everything else follows from this table:
the rule schema's ``check`` part (``rules/schema.json`` is generated from it by
``scripts/update-generated``), the site values a rule depends on (XCCDF exports, reports,
remediations), the facts without which a rule is ``notapplicable``, and whether a fix can be
automatic. Each kind is implemented once per engine, under its own name:

- ``scanner/checks``: the Python evaluator (``CHECKS``)
- ``content/checks/``: the OVAL generator (``GENERATORS``)
- ``remediations/templates/bash/<kind>.sh.j2``: the bash fix, which the Ansible tasks also
  run in plan mode (only for kinds whose fix is automatic)

``tests/test_check_kinds.py`` fails when one of them is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .host_layout import SAS_ROLE_VALUES, SYSCTL_BYTES_TWINS

STRING_LIST: Mapping[str, Any] = {"type": "array", "minItems": 1,
                                  "items": {"type": "string", "minLength": 1}}
# Facts that make a rule applicable at all, beyond its roles (scanner/engine.py and
# content/platforms.py each implement every one).
APPLICABILITY_FACTS = ("thp_supported", "cpufreq", "thp_kernel", "dm_multipath",
                       "cpu_features", "guest_host_storage", "published_stripe",
                       "xtremio_disks")


# A sysctl rule's key, and how its value is held against the site value (equal unless it says).
SYSCTL_COMPARES = ("equal", "at_most", "at_least")
SYSCTL_PARAMS: Mapping[str, Any] = {
    "key": {"type": "string", "pattern": r"^[a-z0-9_]+(\.[a-z0-9_]+)+$"},
    "compare": {"enum": list(SYSCTL_COMPARES),
                "description": "equal (the default), at_most or at_least the site value"}}
# A one-value sysctl rule names a site value (value_from), or states a constant no site
# changes (value: vm.zone_reclaim_mode = 0), never both.
SYSCTL_ONE_VALUE: Mapping[str, Any] = {
    **SYSCTL_PARAMS, "value": {"type": "integer", "minimum": 0,
                               "description": "the value itself, where no site value sets it"}}
SYSCTL_WANTED = (("value_from",), ("value",))


def sysctl_wanted(params: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    """A one-value sysctl rule's wanted value: its constant, else its site value's."""
    return int(params["value"]) if "value" in params else int(values[params["value_from"]])


@dataclass(frozen=True)
class CheckKind:
    name: str
    summary: str
    # JSON Schema properties of the parameters (the rule file's ``check`` block, less kind).
    params: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    # Site values the kind always reads.
    values: tuple[str, ...] = ()
    # Parameters whose value names a site value, with the type that value must have.
    value_params: Mapping[str, str] = field(default_factory=dict)
    # Exactly one of these sets of parameters is given (JSON Schema oneOf).
    one_of: tuple[tuple[str, ...], ...] = ()
    # Parameters whose value is a list of site value names, each of this type.
    value_list_params: Mapping[str, str] = field(default_factory=dict)
    # Its ``key`` parameter is a /proc/sys key read running: the scan and collect.sh read it.
    proc_sys_key: bool = False
    # Its ``key`` is judged after boot: where nothing sets it the kernel's default holds, so
    # the loader asks for that default (KERNEL_SYSCTL_DEFAULTS).
    boot_sysctl_key: bool = False
    # Judges the file systems holding SAS directories: notchecked while none is known, and
    # the SAS directory values are among what it reads.
    sas_filesystems: bool = False
    needs: tuple[str, ...] = ()  # APPLICABILITY_FACTS that must hold
    automatic_fix: bool = True  # False: the rule file says what to do by hand (manual_fix)
    # Judged by a measurement (sascheck iotest), not by reading the host: a scan says
    # notchecked, and the XCCDF rule has no check (oscap says notchecked too).
    measured: bool = False
    # False: OVAL cannot express the check (it cannot count one map's paths); the XCCDF rule
    # has no check and oscap says notchecked, while the scanner judges it.
    oval: bool = True

    @property
    def has_oval(self) -> bool:
        return self.oval and not self.measured

    def schema(self) -> dict[str, Any]:
        """The JSON Schema ``then`` clause for a rule's ``check`` block of this kind."""
        properties: dict[str, Any] = {"kind": True, **self.params}
        for param in self.value_params:
            properties[param] = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$",
                                 "description": f"names a {self.value_params[param]} site value"}
        for param, wanted in self.value_list_params.items():
            properties[param] = {"type": "array", "minItems": 1, "items": {
                "type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
                "description": f"names {wanted} site values, in order"}
        clause: dict[str, Any] = {"additionalProperties": False, "properties": properties}
        if self.required:
            clause["required"] = ["kind", *self.required]
        if self.one_of:
            clause["oneOf"] = [{"required": list(names)} for names in self.one_of]
        return clause


SAS_DIR_VALUES = tuple(SAS_ROLE_VALUES.values())

KINDS: dict[str, CheckKind] = {kind.name: kind for kind in (
    CheckKind("thp_mode", "the running kernel's THP setting (enabled or defrag) selects an "
                          "allowed mode",
              params={"setting": {"enum": ["enabled", "defrag"]}, "allowed": STRING_LIST},
              required=("setting", "allowed"), needs=("thp_supported",)),
    CheckKind("cpu_governor", "every CPU with cpufreq uses one governor",
              params={"governor": {"type": "string", "minLength": 1}}, required=("governor",),
              needs=("cpufreq",)),
    CheckKind("sysctl_value", "a /proc/sys value equals an integer site value (or is at most "
                              "or at least it: compare)",
              params=SYSCTL_ONE_VALUE, required=("key",), one_of=SYSCTL_WANTED,
              value_params={"value_from": "integer"}, proc_sys_key=True),
    CheckKind("sysctl_fields", "each field of a /proc/sys value of several numbers "
                               "(kernel.sem) is at least its site value",
              params={"key": SYSCTL_PARAMS["key"]}, required=("key", "fields_from"),
              value_list_params={"fields_from": "integer"}, proc_sys_key=True),
    CheckKind("sysctl_at_boot", "the value a /proc/sys key ends with after boot (sysctl.d, "
                                "ktune, tuned and its reapply_sysctl) equals an integer site "
                                "value (or is at most or at least it: compare)",
              params=SYSCTL_ONE_VALUE, required=("key",), one_of=SYSCTL_WANTED,
              value_params={"value_from": "integer"}, boot_sysctl_key=True),
    CheckKind("sysctl_fields_at_boot", "each field of the value a /proc/sys key of several "
                                       "numbers (kernel.sem) ends with after boot is at least "
                                       "its site value",
              params={"key": SYSCTL_PARAMS["key"]}, required=("key", "fields_from"),
              value_list_params={"fields_from": "integer"}, boot_sysctl_key=True),
    CheckKind("account_limit", "the SAS accounts' soft limit of a resource (nofile, nproc, "
                               "stack) is at least a site value in their PAM sessions, their "
                               "systemd services and their running processes",
              params={"item": {"enum": ["nofile", "nproc", "stack"]}},
              required=("item", "value_from"), values=("sas_accounts",),
              value_params={"value_from": "integer"}, oval=False),
    CheckKind("selinux_not_enforcing", "SELinux is not enforcing, now or from the next boot, "
                                       "unless a boolean site value says the deployment's "
                                       "SELinux configuration is done",
              values=("selinux_configured",), automatic_fix=False),
    CheckKind("block_scheduler", "the devices under SAS file systems use an allowed scheduler",
              values=("allowed_schedulers",), sas_filesystems=True),
    CheckKind("block_read_ahead", "the devices SAS file systems mount read ahead at least the "
                                  "minimum",
              values=("read_ahead_min_kb",), sas_filesystems=True),
    CheckKind("mount_option_forbidden", "SAS file systems are not mounted with these options, "
                                        "unless a boolean site value allows them or the file "
                                        "system is throw-away scratch (scratch_dirs)",
              params={"options": STRING_LIST}, required=("options",),
              values=("scratch_dirs",), value_params={"allowed_when": "boolean"},
              sas_filesystems=True),
    CheckKind("mount_option_required", "SAS file systems are mounted with this option",
              params={"option": {"type": "string", "minLength": 1}}, required=("option",),
              sas_filesystems=True),
    CheckKind("mount_options_at_boot", "what mounts each SAS file system at boot (fstab, a "
                                       "mount unit) gives it these options and not those "
                                       "(those allowed on scratch_dirs' file systems)",
              params={"required": STRING_LIST, "forbidden": STRING_LIST},
              required=("required",), values=("scratch_dirs",),
              value_params={"allowed_when": "boolean"}, sas_filesystems=True),
    CheckKind("sas_dirs_separate", "SAS DATA, WORK, UTILLOC and the CAS disk cache are on file systems of their own",
              values=("sas_shared_roles",), sas_filesystems=True, automatic_fix=False),
    CheckKind("fs_type", "SAS file systems are of an allowed type",
              values=("allowed_fs_types", "allowed_shared_data_fs_types",
                      "allowed_work_fs_types"),
              sas_filesystems=True, automatic_fix=False),
    # A site's own profile counts where the boot gives what the throughput profiles give.
    CheckKind("tuned_profile", "tuned is installed, enabled at boot, and its active profile is "
                               "or includes an allowed one, or gives what they give",
              values=("allowed_tuned_profiles", "dirty_ratio", "read_ahead_min_kb",
                      "allowed_schedulers", *SAS_DIR_VALUES)),
    CheckKind("thp_at_boot", "something re-establishes THP never at every boot",
              needs=("thp_kernel",)),
    # The SAS directories name the devices whose kernel default scheduler counts.
    CheckKind("io_tuning_at_boot", "something sets the scheduler and read-ahead at every boot",
              values=("read_ahead_min_kb", "allowed_schedulers", *SAS_DIR_VALUES)),
    CheckKind("numa_enabled", "no numa=off on the running or the next boot's command line, "
                              "and a multi-socket host has more than one NUMA node online"),
    CheckKind("tuned_cpu_latency", "tuned is enabled and its active profile chain sets [cpu] "
                                   "force_latency to at most max_us microseconds",
              # The fix's tuned profile reads force_cpu_latency; the check reads no site value.
              params={"max_us": {"type": "integer", "minimum": 0}}, required=("max_us",)),
    CheckKind("multipath_all_paths", "each multipath map under the SAS file systems groups "
                                     "all its paths together (multipath.conf's precedence)",
              sas_filesystems=True, automatic_fix=False, needs=("dm_multipath",)),
    CheckKind("volume_striped", "each SAS file system's volume stripes over several LUNs "
                                "(dm-stripe or md queue limits)",
              sas_filesystems=True, automatic_fix=False),
    CheckKind("bufsize_matches_stripe", "the SAS BUFSIZE in effect is a whole multiple of the "
                                        "stripe unit of each striped SAS volume",
              values=("sas_bufsize_bytes",), sas_filesystems=True, automatic_fix=False,
              needs=("published_stripe",)),
    CheckKind("kvm_guest_disks_direct", "every block-device disk of a defined KVM guest uses "
                                        "virtio and cache='none'", automatic_fix=False,
              needs=("guest_host_storage",)),
    CheckKind("turbo_and_smt", "Hyper-Threading (SMT) and Turbo Boost are on now and nothing "
                               "turns them off at the next boot",
              automatic_fix=False, needs=("cpu_features",)),
    CheckKind("paths_per_lun", "each XtremIO LUN under the SAS file systems is reached by at "
                               "most xtremio_max_paths paths",
              values=("xtremio_max_paths",), sas_filesystems=True, automatic_fix=False,
              needs=("xtremio_disks",), oval=False),
    CheckKind("throughput", "measured sequential MB/s per physical core of each SAS file "
                            "system reach the site's targets (sascheck iotest)",
              values=("io_mb_per_core_work", "io_mb_per_core_data", "iotest_min_seconds"),
              automatic_fix=False,
              measured=True),
)}


# How the data stream groups its rules (XCCDF Group, as SSG groups by subsystem): each kind
# belongs to exactly one (tests/test_check_kinds.py holds it). tuned comes first: the script
# `oscap xccdf generate fix` assembles runs the fixes in this order, and the sysctl fixes
# keep their values in the tuned profile where tuned is started (the fix order's steps).
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "tuned": ("tuned: the throughput profile that holds the tuning at boot", ("tuned_profile",)),
    "memory": ("Memory and kernel limits: THP, dirty pages, swapping, maps, semaphores",
               ("thp_mode", "thp_at_boot", "sysctl_value", "sysctl_at_boot", "sysctl_fields",
                "sysctl_fields_at_boot")),
    "storage": ("Storage below the SAS file systems: schedulers, read-ahead, paths, stripes",
                ("block_scheduler", "block_read_ahead", "io_tuning_at_boot", "multipath_all_paths",
                 "paths_per_lun", "volume_striped", "bufsize_matches_stripe")),
    "filesystems": ("SAS file systems: type, layout, mount options and throughput",
                    ("fs_type", "sas_dirs_separate", "mount_option_required",
                     "mount_option_forbidden", "mount_options_at_boot", "throughput")),
    "cpu": ("CPU: governor, Turbo Boost and SMT, NUMA, wake-up latency",
            ("cpu_governor", "turbo_and_smt", "numa_enabled", "tuned_cpu_latency")),
    "virtualisation": ("Virtualisation: KVM guests' disks", ("kvm_guest_disks_direct",)),
    "accounts": ("The SAS accounts: open files, processes and stack", ("account_limit",)),
    "security": ("SELinux, as SAS Viya's deployment expects it", ("selinux_not_enforcing",)),
}


@dataclass(frozen=True)
class FixTraits:
    """What a kind's fix does to a host, as XCCDF's fix attributes say it and SSG states it
    per remediation (and as tags on each Ansible task, as SSG tags them)."""
    complexity: str = "low"
    disruption: str = "low"
    reboot: bool = False
    strategy: str = "configure"

    def xccdf(self) -> dict[str, str]:
        return {"complexity": self.complexity, "disruption": self.disruption,
                "reboot": "true" if self.reboot else "false", "strategy": self.strategy}

    def tags(self) -> list[str]:
        return [f"{self.complexity}_complexity", f"{self.disruption}_disruption",
                "reboot_required" if self.reboot else "no_reboot_needed",
                f"{self.strategy}_strategy"]


# A boot-loader change takes effect at the next reboot; a remount or a switch of tuned
# profile disturbs what runs; a sysctl, a scheduler or a limit for new sessions hardly does.
# Kinds not listed: FixTraits().
FIX_TRAITS: Mapping[str, FixTraits] = {
    "thp_at_boot": FixTraits(disruption="medium", reboot=True),  # grubby: the next boot's line
    "numa_enabled": FixTraits(disruption="medium", reboot=True, strategy="enable"),  # numa=off
    "mount_option_forbidden": FixTraits(disruption="high"),  # remount, fstab
    "mount_option_required": FixTraits(disruption="high"),
    "mount_options_at_boot": FixTraits(disruption="medium"),  # fstab, for the next mount
    "tuned_profile": FixTraits(complexity="medium", disruption="medium"),  # a profile switch
    "tuned_cpu_latency": FixTraits(disruption="medium"),
    "thp_mode": FixTraits(disruption="medium", strategy="disable"),  # new allocations only
    "io_tuning_at_boot": FixTraits(complexity="medium"),  # udev rules and tuned
}


def fix_traits(kind: str) -> FixTraits:
    return FIX_TRAITS.get(kind, FixTraits())


def rule_values(kind: CheckKind, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The site values a rule of this kind with these parameters depends on, in a stable
    order: the kind's own, those its parameters name, then the SAS directories."""
    names = [*kind.values, *(params[p] for p in kind.value_params if p in params),
             *(name for p in kind.value_list_params for name in params.get(p, ()))]
    if kind.sas_filesystems:
        names += SAS_DIR_VALUES
    return tuple(dict.fromkeys(names))


def proc_sys_keys(checks: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The /proc/sys keys read running by checks given as (kind, params), with the byte twin
    of each ratio (the kernel keeps one of the two): what a scan and a snapshot collect."""
    keys = {str(params["key"]) for kind, params in checks if KINDS[kind].proc_sys_key}
    return sorted(keys | {SYSCTL_BYTES_TWINS[key] for key in keys if key in SYSCTL_BYTES_TWINS})


def check_schema() -> dict[str, Any]:
    """The rule schema's ``check`` property."""
    return {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(KINDS)}},
        "allOf": [{"if": {"properties": {"kind": {"const": kind.name}}}, "then": kind.schema()}
                  for kind in KINDS.values()],
    }


def schema_with_current_kinds(text: str) -> str:
    """The rule schema's JSON text with its ``check`` property rendered from KINDS."""
    import json

    schema = json.loads(text)
    schema["properties"]["check"] = check_schema()
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
