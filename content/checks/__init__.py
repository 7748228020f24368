"""The OVAL half of each check kind: the same semantics as scanner/checks, as criteria.

Where OVAL cannot say exactly what the scanner says, the README lists the difference
and tests/test_parity.py asserts it. One module per group, mirroring scanner/checks/.
"""

from __future__ import annotations

from . import (
    boot,
    cpu,
    guests,
    kernel,
    latency,
    multipath,
    security,
    storage,
    striping,
    sysctl_boot,
)
from .common import Generator

GENERATORS: dict[str, Generator] = {
    "thp_mode": kernel.thp_mode,
    "cpu_governor": kernel.cpu_governor,
    "sysctl_value": kernel.sysctl_value,
    "sysctl_fields": kernel.sysctl_fields,
    "sysctl_at_boot": sysctl_boot.sysctl_at_boot,
    "sysctl_fields_at_boot": sysctl_boot.sysctl_fields_at_boot,
    "block_scheduler": storage.block_scheduler,
    "block_read_ahead": storage.block_read_ahead,
    "mount_option_forbidden": storage.mount_option_forbidden,
    "mount_option_required": storage.mount_option_required,
    "mount_options_at_boot": storage.mount_options_at_boot,
    "sas_dirs_separate": storage.sas_dirs_separate,
    "fs_type": storage.fs_type,
    "tuned_profile": boot.tuned_profile,
    "thp_at_boot": boot.thp_at_boot,
    "io_tuning_at_boot": boot.io_tuning_at_boot,
    "numa_enabled": kernel.numa_enabled,
    "multipath_all_paths": multipath.multipath_all_paths,
    "tuned_cpu_latency": latency.tuned_cpu_latency,
    "kvm_guest_disks_direct": guests.kvm_guest_disks_direct,
    "volume_striped": striping.volume_striped,
    "bufsize_matches_stripe": striping.bufsize_matches_stripe,
    "turbo_and_smt": cpu.turbo_and_smt,
    "selinux_not_enforcing": security.selinux_not_enforcing,
}
