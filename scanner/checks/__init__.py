"""Check kinds: one pure function per kind, from (params, facts, values) to an Outcome.

A check kind is the scanner's half of a rule template; its OVAL and
remediation halves live in content/ and remediations/.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..facts import Facts
from ..results import Outcome
from . import (
    boot,
    cpu,
    guests,
    io_boot,
    kernel,
    latency,
    limits,
    measured,
    multipath,
    paths,
    security,
    storage,
    striping,
    sysctl_boot,
    tuned,
)

Check = Callable[[Mapping[str, Any], Facts, Mapping[str, Any]], Outcome]

CHECKS: dict[str, Check] = {
    "thp_mode": kernel.thp_mode,
    "cpu_governor": kernel.cpu_governor,
    "sysctl_value": kernel.sysctl_value,
    "sysctl_fields": kernel.sysctl_fields,
    "sysctl_at_boot": sysctl_boot.sysctl_at_boot,
    "sysctl_fields_at_boot": sysctl_boot.sysctl_fields_at_boot,
    "account_limit": limits.account_limit,
    "selinux_not_enforcing": security.selinux_not_enforcing,
    "block_scheduler": storage.block_scheduler,
    "block_read_ahead": storage.block_read_ahead,
    "mount_option_forbidden": storage.mount_option_forbidden,
    "mount_option_required": storage.mount_option_required,
    "mount_options_at_boot": storage.mount_options_at_boot,
    "sas_dirs_separate": storage.sas_dirs_separate,
    "fs_type": storage.fs_type,
    "tuned_profile": tuned.tuned_profile,
    "thp_at_boot": boot.thp_at_boot,
    "io_tuning_at_boot": io_boot.io_tuning_at_boot,
    "numa_enabled": kernel.numa_enabled,
    "multipath_all_paths": multipath.multipath_all_paths_active,
    "tuned_cpu_latency": latency.tuned_cpu_latency,
    "volume_striped": striping.volume_striped,
    "bufsize_matches_stripe": striping.bufsize_matches_stripe,
    "kvm_guest_disks_direct": guests.kvm_guest_disks_direct,
    "throughput": measured.throughput,
    "paths_per_lun": paths.paths_per_lun,
    "turbo_and_smt": cpu.turbo_and_smt,
}
