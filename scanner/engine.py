"""Evaluate a profile's rules on collected facts: applicability first, then the check kind."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..rules import Catalogue, Profile, Rule
from ..rules.host_layout import (
    LIBVIRT_DEFINED_DOMAINS,
    MULTIPATH_UUID_PREFIX,
    RHEL5_KERNEL_PREFIX,
    SAS_ROLE_VALUES,
    SAS_ROLES,
    VXVM_DEVICE_DIRS,
    XTREMIO_VENDOR,
)
from .checks import CHECKS
from .checks.guests import passed_through
from .facts import Facts
from .fix_order import fix_order, impact_of
from .parsers.selection import Selection
from .results import Outcome, RuleResult, Verdict
from .storage.blockdev import StackLayer, default_scheduler, multipath_paths
from .storage.filesystems import SasFilesystem
from .storage.sasdirs import HOW_TO_NAME_SAS_DIRS
from .unavailable import Unavailable

RESULT_SCHEMA = "sascheck-result/1"

@dataclass
class ScanResult:
    facts: Facts
    profile: Profile
    values: Mapping[str, Any]
    results: list[RuleResult]
    started: datetime
    catalogue: Catalogue | None = None  # for the fix order; None: none given

    @property
    def exit_status(self) -> int:
        bad = {Verdict.FAIL, Verdict.ERROR}
        return 2 if any(result.result in bad for result in self.results) else 0

    def counts(self) -> dict[str, int]:
        counts = {verdict.value: 0 for verdict in Verdict}
        for result in self.results:
            counts[result.result.value] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        facts = self.facts
        host = facts.host
        return {
            "schema": RESULT_SCHEMA,
            "generator": "sascheck",
            "scanned_at": self.started.isoformat(timespec="seconds"),
            "host": {
                "hostname": host.hostname or (socket.gethostname() if facts.root == "/" else ""),
                "root": facts.root,
                **({"machine_id": host.machine_id} if host.machine_id else {}),
                "kernel": host.kernel,
                "os": host.os,
                "cpus": host.cpus,
                "memory_kib": host.memory_kib,
                **_tuned_host(facts),
                # the accounts the account rules judged, for a fix to act on
                **({"sas_accounts": [a.name for a in facts.limits.accounts]}
                   if facts.limits.accounts else {}),
            },
            "role": {"name": facts.role.name, "source": facts.role.source,
                     "reasons": list(facts.role.reasons) + [
                         f"could not read: {problem}" for problem in facts.role.problems]},
            "profile": self.profile.name,
            "values": dict(self.values),
            "sas_dirs": [{"role": d.role, "path": d.path, "source": d.source}
                         for d in facts.discovery.dirs],
            "sas_discovery_notes": facts.discovery.notes + facts.discovery.problems,
            "problems": facts.problems + facts.mount_problems + facts.block.problems,
            "storage": storage(facts),
            "summary": self.counts(),
            "rules": [result.to_dict() for result in self.results],
            "fix_order": fix_order(self.results, self.catalogue,
                                   tuned_loads_profile=tuned_loads_profile(facts))
            if self.catalogue else [],
            **({"measurements": facts.measurements} if facts.measurements is not None else {}),
        }


def tuned_loads_profile(facts: Facts) -> bool:
    """Whether the tuned_profile fix writes sascheck's own profile and this host's tuned
    loads it: tuned 2 is installed (tuned 0.2 on RHEL 5/6 gets a shipped profile, whose ktune
    turns THP on; a host without tuned gets none unless the site asks to install it)."""
    tuned = facts.tuned
    return not isinstance(tuned, Unavailable) and tuned.installed and not tuned.legacy


def _tuned_host(facts: Facts) -> dict[str, Any]:
    """What a fix needs to write a tuned profile the host will load: its profiles, where
    they live, and the release (what its loader reads)."""
    tuned = facts.tuned
    if isinstance(tuned, Unavailable):
        return {}
    site = {"tuned_site_profile": tuned.site_profile} if tuned.site_profile else {}
    if isinstance(tuned.active, list) and tuned.active:  # what an admin reads on the page
        site["tuned_active"] = " ".join(tuned.active)[:256]
    if tuned.legacy:
        return {"tuned_legacy": True, **site}
    if tuned.available is None:
        return site
    version = {"tuned_version": tuned.release} if tuned.version else {}
    return {"tuned_profiles": list(tuned.available), "tuned_new_layout": tuned.new_layout,
            **version, **site}


def _layer(facts: Facts, layer: StackLayer, paths: dict[str, str]) -> dict[str, Any]:
    device = facts.block.devices[layer.device]
    scheduler = device.scheduler
    read_ahead = device.read_ahead_kb
    return {
        "device": device.name, "kind": device.kind, "dm_name": device.dm_name,
        "dm_uuid": device.dm_uuid, "wwid": device.wwid, "serial": device.serial,
        "depth": layer.depth, "relation": layer.relation, "parent": layer.parent,
        "scheduler": ({"options": list(scheduler.options), "selected": scheduler.selected,
                       "boot_default": (default[0] if (default := default_scheduler(
                           facts.host.kernel, device)) else None)}
                      if isinstance(scheduler, Selection) else None),
        "read_ahead_kb": read_ahead if isinstance(read_ahead, int) else None,
        "io_min": device.io_min, "io_opt": device.io_opt,
        # the request-based multipath map whose scheduler works for this path, or None
        "scheduled_by": paths.get(device.name),
    }


def _stack_kind(fs: SasFilesystem) -> str:
    return "nfs" if fs.bdi is not None else "veritas" if fs.veritas else "block"


def _bdi(fs: SasFilesystem) -> dict[str, Any] | None:
    if fs.bdi is None:
        return None
    value = fs.bdi.value
    return {"path": fs.bdi.path, "read_ahead_kb": value if isinstance(value, int) else None}


def storage(facts: Facts) -> list[dict[str, Any]]:
    """Each SAS file system and the devices below it, for reports and remediations."""
    if not isinstance(facts.sas_filesystems, list):
        return []
    paths = multipath_paths(facts.block)
    return [{
        "mountpoint": fs.mount.mountpoint, "device": fs.mount.device, "fstype": fs.mount.fstype,
        "options": list(fs.mount.options), "roles": sorted(fs.roles),
        "queue_device": (facts.block.queue_device(fs.device)
                         if isinstance(fs.device, str) else None),
        "stack": _stack_kind(fs), "bdi": _bdi(fs),
        "layers": [_layer(facts, layer, paths) for layer in fs.stack],
    } for fs in facts.sas_filesystems]


def _no_guest_host_storage(facts: Facts) -> str | None:
    """Why no defined guest's disk is judged (file-backed and network disks are listed,
    not judged), or None; an unreadable guest definition leaves it to the rule, which says
    error."""
    domains = facts.guests.values()
    if any(isinstance(domain, Unavailable) or any(passed_through(disk) for disk in domain.disks)
           for domain in domains):
        return None
    return ("no defined KVM guest is given the host's storage (a block device, a pool volume "
            "or a SCSI LUN)" + ("" if domains else ": no guest is defined in "
                                f"{LIBVIRT_DEFINED_DOMAINS}"))


# Why a rule that needs an applicability fact (rules/check_kinds.py) cannot apply, or None.
MISSING_FACT: dict[str, Callable[[Facts], str | None]] = {
    "thp_supported": lambda facts: None if facts.thp is not None else (
        "the kernel has no transparent_hugepage directory under /sys/kernel/mm"
        + (" (RHEL 5's 2.6.18 kernel predates THP, which came with RHEL 6)"
           if facts.host.kernel.startswith(RHEL5_KERNEL_PREFIX) else "")),
    "thp_kernel": lambda facts: (
        "RHEL 5's 2.6.18 kernel predates THP (RHEL 6 brought it): no boot setting applies"
        if facts.host.kernel.startswith(RHEL5_KERNEL_PREFIX) else None),
    "cpufreq": lambda facts: None if facts.governors else (
        "no CPU exposes cpufreq (common in virtual machines)"),
    "cpu_features": lambda facts: None if facts.cpu_features.exposed else (
        "the kernel exposes neither SMT control nor a turbo switch (a virtual machine, or a "
        "kernel before 4.19 without intel_pstate or cpufreq boost)"),
    "guest_host_storage": lambda facts: _no_guest_host_storage(facts),
    "xtremio_disks": lambda facts: None if XTREMIO_VENDOR in facts.disk_vendors else (
        f"no disk on this host reports SCSI vendor {XTREMIO_VENDOR}"),
    # Not one queue publishes an optimal I/O size: no volume, LUN or RAID set is striped (or
    # the kernel predates queue limits, as RHEL 5's does); a VxVM volume's stripe is unseen.
    "published_stripe": lambda facts: None if facts.stripe_published or (
        not isinstance(facts.mounts, Unavailable) and any(
            mount.device.startswith(VXVM_DEVICE_DIRS[0]) for mount in facts.mounts)) else (
        "no block device publishes a stripe (queue/optimal_io_size is 0 or absent on every "
        "one): there is no stripe unit to hold BUFSIZE against"),
    # Veritas DMP, PowerPath or plain disks: no dm-multipath map to judge.
    "dm_multipath": lambda facts: None if any(
        (device.dm_uuid or "").startswith(MULTIPATH_UUID_PREFIX)
        for device in facts.block.devices.values()) else (
        "no dm-multipath map on this host (Veritas DMP or other path managers are not judged)"),
}


def _gate(rule: Rule, facts: Facts, values: Mapping[str, Any]) -> Outcome | None:
    """An outcome that stops evaluation (another system, wrong role, no SAS directories),
    or None."""
    if facts.host.os_platform is None and not values.get("judge_any_os"):
        return Outcome(Verdict.NOTAPPLICABLE, "", "", message=(
            f"this host is {facts.host.os or 'another system'}: the guidance is for RHEL and its "
            "rebuilds (CentOS, Rocky Linux, AlmaLinux, Oracle Linux) 5 to 10; "
            "--set judge_any_os=true judges it anyway"))
    role = facts.role.name
    if facts.role.uncertain and len({r in rule.applies_to for r in facts.role.candidates}) > 1:
        reason = "; ".join(facts.role.problems)
        return Outcome(Verdict.ERROR, "", "role unknown", message=(
            f"cannot tell whether this host is {' or '.join(facts.role.candidates)}, and the rule "
            f"depends on it: {reason} (name the role with --role)"))
    if role not in rule.applies_to:
        return Outcome(Verdict.NOTAPPLICABLE, "", "",
                       message=f"applies to {', '.join(rule.applies_to)}; this host is {role}")
    for need in rule.needs:
        missing = MISSING_FACT[need](facts)
        if missing:
            return Outcome(Verdict.NOTAPPLICABLE, "", "", message=missing)
    if rule.sas_filesystems:
        found = {d.role for d in facts.discovery.dirs}
        unknown = [role for role in SAS_ROLES
                   if role in facts.discovery.unreadable_roles and role not in found]
        if unknown:  # found in what could not be read, perhaps
            return Outcome(Verdict.ERROR, "", "unreadable", message=(
                "SAS configuration could not be read: " + "; ".join(facts.discovery.problems)
                + f". SAS {' and '.join(unknown)} may be on file systems not judged: make it "
                "readable, or name them with --set "
                + " and ".join(f"{SAS_ROLE_VALUES[role]}=..." for role in unknown)))
        if isinstance(facts.sas_filesystems, list):
            if not facts.sas_filesystems and not facts.unplaced_dirs:
                if facts.discovery.problems:  # SAS configuration exists but is unreadable
                    return Outcome(Verdict.ERROR, "", "unreadable", message=(
                        "SAS configuration could not be read: "
                        + "; ".join(facts.discovery.problems)))
                return Outcome(Verdict.NOTCHECKED, "", "", message=HOW_TO_NAME_SAS_DIRS)
        else:
            return Outcome(Verdict.ERROR, "", "unreadable", message=facts.sas_filesystems.reason)
    return None


VERDICT_LOG = logging.getLogger("sascheck.rules")  # each rule's verdict, for scan -v


def evaluate_rule(rule: Rule, facts: Facts, values: Mapping[str, Any],
                  catalogue: Catalogue | None = None) -> RuleResult:
    outcome = _gate(rule, facts, values) or CHECKS[rule.kind](rule.params, facts, values)
    VERDICT_LOG.debug("%s: %s: %s", rule.id, outcome.result.value, outcome.actual)
    impact = impact_of(rule, catalogue) if catalogue and outcome.result == Verdict.FAIL else None
    return RuleResult(
        rule_id=rule.id,
        title=rule.title,
        severity=rule.severity.value,
        result=outcome.result,
        expected=outcome.expected,
        actual=outcome.actual,
        evidence=outcome.evidence,
        message=outcome.message,
        references=[reference.to_dict() for reference in rule.references],
        impact=impact,
    )


def evaluate(catalogue: Catalogue, profile: Profile, facts: Facts,
             values: Mapping[str, Any]) -> ScanResult:
    started = datetime.now(timezone.utc)
    results = [evaluate_rule(rule, facts, values, catalogue)
               for rule in catalogue.rules_of(profile)]
    return ScanResult(facts, profile, values, results, started, catalogue)
