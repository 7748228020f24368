"""Verdict cases (test_verdicts.CASES) for what the next boot does: THP, I/O tuning,
vm.dirty_ratio and mount options as the boot loader, tuned, ktune, udev, sysctl, tmpfiles and
units set them. Each is (name, rule, host changes, --set values, expected result)."""

from __future__ import annotations

from .boot_samples import (
    ENTERPRISE_STORAGE_KTUNE_SYSCONFIG,
    ENTERPRISE_STORAGE_SYSCTL_KTUNE,
    KTUNE_ENTERPRISE_STORAGE,
    KTUNE_SAS_XTREMIO,
    KTUNE_SYSCONFIG_1_0,
    RHEL5_KTUNE_FILES,
    RHEL5_KTUNE_ON,
    RHEL6_GRUB_CONF,
    RHEL7_GRUB_CFG,
    RHEL7_GRUBENV,
    lvm_backup,
    rhel6_ktune,
    rhel7_grub_cfg,
    rhel8_bls_grub_cfg,
    tuned_version_file,
)
from .cases import VerdictCase, cases
from .hosts import (
    NO_THP_ON_CMDLINE,
    RHEL6_INITTAB,
    RHEL6_RC_LOCAL,
    RHEL9_STOCK,
    SAS_PROFILE,
    SAS_TARGET,
    THP_TMPFILES,
    THROUGHPUT_PERFORMANCE_2_21,
    THUNDERX2_CPUINFO,
)
from .verdict_hosts import (
    KTUNE_FILES,
    KTUNE_LINKS,
    MULTI_USER_WANTS,
    OLD_BLS,
    OLD_BLS_ID,
    OLD_BLS_TEXT,
    RA_BY_UDEV_1024,
    RA_BY_UDEV_4096,
    RA_IN_RC_LOCAL,
    RHEL5,
    RHEL6_DEFRAG_RC,
    RHEL6_KTUNE,
    RHEL6_NEVER,
    RHEL7_NO_BLS,
    RHEL7_QUEUES,
    SASDATA_UNIT,
    THP_UNIT,
    THP_UNIT_TEXT,
    data_fs,
    fstab_data,
    udev_block,
)

BOOT_CASES: list[VerdictCase] = cases([
    ("thp boot: tuned only", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "grub_cmdline": ""}, [], "pass"),
    ("thp boot: nothing", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "grub_cmdline": "", "tuned_active": "balanced"}, [],
     "fail"),
    ("thp boot: tuned turns it on", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "tuned_active": "throughput-performance"}, [], "fail"),
    ("thp boot: cmdline wins over tuned", "thp_disabled_at_boot",
     {"tuned_active": "throughput-performance"}, [], "pass"),
    ("thp boot: grub defaults only (no BLS)", "thp_disabled_at_boot",
     {"bls_options": None, "tuned_active": "balanced"}, [], "pass"),
    ("thp boot: BLS entry lacks it though grub defaults have it", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro", "tuned_active": "balanced"}, [], "fail"),
    ("thp boot: BLS via grubenv kernelopts", "thp_disabled_at_boot",
     {"bls_options": "$kernelopts", "tuned_active": "balanced", "grub_cmdline": "",
      "extra_files": {"/boot/grub2/grubenv": "# GRUB Environment Block\nkernelopts=root=/dev/sda"
                                             " ro transparent_hugepage=never\n" + "#" * 900}},
     [], "pass"),
    # RHEL 8: grubenv without kernelopts (a fresh install before grub2-editenv wrote it, or
    # one that lost it): GRUB takes grub.cfg's fallback (10_linux's "if [ -z ${kernelopts} ]").
    ("thp boot: BLS $kernelopts from grub.cfg's fallback", "thp_disabled_at_boot",
     {"bls_options": "$kernelopts", "tuned_active": "balanced", "grub_cmdline": "",
      "extra_files": {"/boot/grub2/grubenv": "# GRUB Environment Block\n" + "#" * 1000,
                      "/boot/grub2/grub.cfg": rhel8_bls_grub_cfg(
                          "root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet "
                          "transparent_hugepage=never")}},
     [], "pass"),
    ("thp boot: BLS $kernelopts fallback without it", "thp_disabled_at_boot",
     {"bls_options": "$kernelopts", "tuned_active": "balanced", "grub_cmdline": "",
      "extra_files": {"/boot/grub2/grubenv": "# GRUB Environment Block\n" + "#" * 1000,
                      "/boot/grub2/grub.cfg": rhel8_bls_grub_cfg(
                          "root=/dev/mapper/rhel-root ro crashkernel=auto rhgb quiet")}},
     [], "fail"),
    ("thp boot: rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/sh\necho never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "pass"),
    ("thp boot: rc.local not executable (as RHEL 7 ships it)", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced", "executables": (),
      "extra_links": {"/etc/rc.local": "rc.d/rc.local"},  # as RHEL ships the pair
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/bash\ntouch /var/lock/subsys/local\n"
                                            "echo never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "fail"),
    ("io boot: blockdev in an rc.local that does not run", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": "[main]\nsummary=scheduler only\n\n[disk]\n"
                                          "elevator=mq-deadline\n"},
      "executables": (),
      "extra_files": {"/etc/rc.d/rc.local": "blockdev --setra 8192 /dev/sdb\n"}}, [], "fail"),
    ("thp boot: executable rc.local reached through /etc/rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_links": {"/etc/rc.local": "rc.d/rc.local"},
      "extra_files": {"/etc/rc.d/rc.local": "#!/bin/bash\necho never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "pass"),
    ("thp boot: commented rc.local", "thp_disabled_at_boot",
     {"bls_options": "ro", "tuned_active": "balanced",
      "extra_files": {"/etc/rc.d/rc.local": "#echo never > "
                                            "/sys/kernel/mm/transparent_hugepage/enabled\n"}},
     [], "fail"),
    ("io boot: balanced profile", "io_tuning_at_boot", {"tuned_active": "balanced"}, [], "fail"),
    ("io boot: tuned readahead too small", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", ">1024")}}, [], "fail"),
    ("io boot: readahead in sectors", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "4096 s")}}, [], "pass"),
    ("io boot: sectors below site minimum", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "4096 s")}},
     ["read_ahead_min_kb=4096"], "fail"),
    ("io boot: udev rule instead of tuned", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/udev/rules.d/99-sas.rules":
             'ACTION=="add|change", SUBSYSTEM=="block", ENV{ID_VENDOR}=="XtremIO", '
             'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"\n'}}, [], "pass"),
    # blk-mq (block/elevator.c elevator_change) has no noop: the write fails with EINVAL and
    # the device keeps its default (mq-deadline here); deadline is mq-deadline's alias.
    ("io boot: udev noop on a blk-mq kernel sets nothing", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
         'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=noop,none"], "fail"),
    ("io boot: udev noop on a RHEL 7 kernel", "io_tuning_at_boot",
     {"tuned_active": "balanced", "kernel": "3.10.0-1160.el7.x86_64", **RHEL7_QUEUES,
      "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
          'ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=noop,none"], "pass"),
    ("io boot: tuned elevator=deadline on blk-mq is mq-deadline", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace("[disk]", "[disk]\nelevator=deadline")}},
     ["allowed_schedulers=mq-deadline"], "pass"),
    ("io boot: udev deadline on blk-mq is mq-deadline", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/99-sas.rules": udev_block(
         'ATTR{queue/scheduler}="deadline", ATTR{bdi/read_ahead_kb}="16384"')}},
     ["allowed_schedulers=mq-deadline"], "pass"),
    # Read-ahead LVM keeps in its metadata (lvchange -r) is set at every activation.
    ("io boot: LVM metadata keeps read_ahead for every SAS LV", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/lvm/backup/sasvg": lvm_backup(
         "sasvg", {"sasdata": 8192, "saswork": 8192, "sasutil": 4096})}}, [], "pass"),
    ("io boot: LVM read_ahead of one LV below the minimum, over udev", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/lvm/backup/sasvg": lvm_backup("sasvg", {"sasdata": 256, "saswork": None,
                                                       "sasutil": None}),
         "/etc/udev/rules.d/99-sas.rules": 'ACTION=="add|change", SUBSYSTEM=="block", '
                                           'ATTR{bdi/read_ahead_kb}="16384"\n'}}, [], "fail"),
    # udev rules as udev runs them: a GOTO guard makes the block match, a KERNEL glob of
    # disks needs no SUBSYSTEM, a glob of partitions reaches no queue/.
    ("io boot: udev rules behind GOTO guards", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules": (
         'ACTION!="add|change", GOTO="sas_end"\nSUBSYSTEM!="block", GOTO="sas_end"\n'
         'KERNEL!="sd*|dm-*", GOTO="sas_end"\n'
         'ATTR{queue/scheduler}="mq-deadline", ATTR{queue/read_ahead_kb}="4096"\n'
         'LABEL="sas_end"\n')}}, [], "pass"),
    ("io boot: udev KERNEL glob of disks, no SUBSYSTEM", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules":
         'ACTION=="add|change", KERNEL=="sd[a-z]", ATTR{queue/read_ahead_kb}="4096"\n'}},
     [], "pass"),
    ("io boot: udev KERNEL glob of partitions only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {"/etc/udev/rules.d/60-sas.rules":
         'ACTION=="add|change", KERNEL=="sd*[0-9]", ATTR{queue/read_ahead_kb}="4096"\n'}},
     [], "fail"),
    ("io boot: udev rule for another subsystem", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": {
         "/etc/udev/rules.d/99-x.rules":
             'SUBSYSTEM=="net", ATTR{queue/scheduler}="noop", ATTR{bdi/read_ahead_kb}="16384"'
             '\n# block\n'}}, [], "fail"),
    ("io boot: rhel6 elevator= and blockdev in rc.local", "io_tuning_at_boot",
     {"kernel": "2.6.32-754.el6.x86_64", "tuned_active": "balanced", "bls_options": None,
      "grub_cmdline": None, "extra_files": {
          "/boot/grub/grub.conf": "title RHEL\n\tkernel /vmlinuz ro root=/dev/sda2 "
                                  "elevator=deadline\n",
          "/etc/rc.d/rc.local": "blockdev --setra 4096 /dev/mapper/sasvg-saswork\n"}}, [],
     "pass"),
    # The kernel command line that boots (scanner.bootloader): on RHEL 7 the GRUB 2 menu,
    # not /etc/default/grub; on RHEL 6 grub.conf's default title.
    ("thp boot: RHEL 7 grubby added it to the menu", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg(
         "crashkernel=auto rhgb quiet transparent_hugepage=never"),
         "/boot/grub2/grubenv": RHEL7_GRUBENV}}, [], "pass"),
    ("thp boot: RHEL 7 /etc/default/grub edited, grub2-mkconfig not run",
     "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "grub_cmdline": "crashkernel=auto rhgb quiet transparent_hugepage=never",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG,
                      "/boot/grub2/grubenv": RHEL7_GRUBENV}}, [], "fail"),
    ("thp boot: RHEL 7 default entry 1 lacks it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg(
         "rhgb quiet transparent_hugepage=never", rescue_args="rhgb quiet").replace(
         'set default="${saved_entry}"', 'set default="1"')}}, [], "fail"),
    ("thp boot: RHEL 6 default=1 boots the kernel without it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF}}, [], "fail"),
    ("thp boot: RHEL 6 default=0 boots the kernel with it", "thp_disabled_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF.replace("default=1",
                                                                       "default=0")}}, [],
     "pass"),
    ("io boot: RHEL 7 elevator= only in /etc/default/grub", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "grub_cmdline": "rhgb quiet elevator=noop", "tuned_active": "balanced",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}},
     ["allowed_schedulers=noop"], "fail"),
    ("io boot: RHEL 7 elevator= in the menu", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "tuned_active": "balanced",
      "extra_files": {"/boot/grub2/grub.cfg": rhel7_grub_cfg("rhgb quiet elevator=noop"),
                      **RA_IN_RC_LOCAL}}, ["allowed_schedulers=noop"], "pass"),
    # With nothing configuring it, the kernel's default scheduler is what every boot gets
    # (scanner.blockdev.default_scheduler).
    ("io boot: RHEL 7 SAN LUNs get deadline by default", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, **RHEL7_QUEUES,
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}}, [], "pass"),
    # Bio-based maps (queue_mode bio, no scheduler) leave scheduling to their SATA paths.
    ("io boot: RHEL 7 SATA disks keep cfq", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "mpath_scheduler": "none", "path_scheduler": "noop deadline [cfq]",
      "path_vendor": "ATA",
      "extra_files": {"/boot/grub2/grub.cfg": RHEL7_GRUB_CFG, **RA_IN_RC_LOCAL}}, [], "fail"),
    ("io boot: RHEL 6 default cfq", "io_tuning_at_boot",
     {**RHEL7_NO_BLS, "kernel": "2.6.32-754.35.1.el6.x86_64",
      "path_scheduler": "noop anticipatory deadline [cfq]",
      "mpath_scheduler": "noop anticipatory deadline [cfq]",
      "extra_files": {"/boot/grub/grub.conf": RHEL6_GRUB_CONF, **RA_IN_RC_LOCAL}}, [], "fail"),
    ("io boot: RHEL 8 stock: mq-deadline by default", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": RA_IN_RC_LOCAL}, [], "pass"),
    ("io boot: RHEL 8 default mq-deadline, site allows none only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "extra_files": RA_IN_RC_LOCAL},
     ["allowed_schedulers=none"], "fail"),
    ("io boot: several hardware queues default to none", "io_tuning_at_boot",
     {"tuned_active": "balanced", "path_hw_queues": 4, "mpath_scheduler": "none",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=none"], "pass"),
    ("io boot: several hardware queues, site allows mq-deadline only", "io_tuning_at_boot",
     {"tuned_active": "balanced", "path_hw_queues": 4, "mpath_scheduler": "none",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=mq-deadline"], "fail"),
    # RHEL 6: ktune turns THP back on at every boot, whatever the command line says.
    ("thp boot: RHEL 6 enterprise-storage ktune over the command line", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER}},
     [], "fail"),
    ("thp boot: RHEL 6 ktune, then rc.local writes never", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER,
                                     "/etc/rc.d/rc.local": RHEL6_RC_LOCAL}}, [], "pass"),
    ("thp boot: RHEL 6 ktune that leaves THP alone", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("\tenable_transparent_hugepages\n",
                                                        ""))[0],
         "/boot/grub/grub.conf": RHEL6_NEVER, **RHEL6_DEFRAG_RC}}, [], "pass"),
    # ktune.init (tuned branch 1.0, ktune/ktune.init lines 57-67, 128-143) runs X.sh only
    # beside a readable X.conf in /etc/ktune.d, and only when X.sh is executable.
    *[(f"thp boot: RHEL 6 ktune.d site script {how}", "thp_disabled_at_boot",
       {**RHEL6_KTUNE, "executables": executables, "extra_files": {
           **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("\tenable_transparent_hugepages\n",
                                                          ""))[0],
           "/boot/grub/grub.conf": RHEL6_NEVER, **RHEL6_DEFRAG_RC, **conf,
           "/etc/ktune.d/site.sh": "#!/bin/sh\n. /etc/tune-profiles/functions\n"
                                   "start() {\n\tenable_transparent_hugepages\n}\n"
                                   "process $@\n"}}, [], verdict)
      for how, executables, conf, verdict in (
          ("without a site.conf never runs", ("/etc/ktune.d/site.sh",), {}, "pass"),
          ("not executable never runs", (), {"/etc/ktune.d/site.conf": ""}, "pass"),
          ("beside site.conf, executable, enables THP", ("/etc/ktune.d/site.sh",),
           {"/etc/ktune.d/site.conf": ""}, "fail"))],
    # A link's own mode does not count: ktune.init's [ -x ] follows it.
    ("thp boot: RHEL 6 ktune.d link to a script that is not executable", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_links": {**KTUNE_LINKS, "/etc/ktune.d/site.sh": "/etc/site-ktune"},
      "extra_files": {
          **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("\tenable_transparent_hugepages\n",
                                                         ""))[0],
          "/boot/grub/grub.conf": RHEL6_NEVER, **RHEL6_DEFRAG_RC, "/etc/ktune.d/site.conf": "",
          "/etc/site-ktune": "#!/bin/sh\n. /etc/tune-profiles/functions\n"
                             "start() {\n\tenable_transparent_hugepages\n}\nprocess $@\n"}},
     [], "pass"),
    # A site's ktune.sh start() (seed 003's custom profile) runs line by line after the
    # command line: its echo never counts, and a later enable_transparent_hugepages undoes it.
    ("thp boot: RHEL 6 ktune start() echoes never (seed 003)", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO)[0]}}, [], "pass"),
    ("thp boot: RHEL 6 ktune echoes never, then enables THP", "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO.replace(
         "\treturn 0\n}\n\nstop", "\tenable_transparent_hugepages\n\treturn 0\n}\n\nstop"))[0]}},
     [], "fail"),
    # tuned 0.2's functions (v0.2.5 to v0.2.22) define no set_transparent_hugepages.
    ("thp boot: RHEL 6 ktune calls an undefined set_transparent_hugepages",
     "thp_disabled_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**rhel6_ktune(KTUNE_SAS_XTREMIO.replace(
         "echo never > /sys/kernel/mm/redhat_transparent_hugepage/enabled",
         "set_transparent_hugepages never"))[0]}}, [], "fail"),
    # tuned applies a unit only where its uname_regex and cpuinfo_regex match (tuned 2.x
    # units/manager.py): RHEL 9's stock profile sets THP never on ThunderX alone.
    ("thp boot: RHEL 9 throughput-performance on x86_64", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "5.14.0-362.8.1.el9_3.x86_64",
      "extra_files": {RHEL9_STOCK: THROUGHPUT_PERFORMANCE_2_21}}, [], "fail"),
    ("thp boot: RHEL 9 throughput-performance on ThunderX2", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "5.14.0-362.8.1.el9_3.aarch64",
      "extra_files": {RHEL9_STOCK: THROUGHPUT_PERFORMANCE_2_21,
                      "/proc/cpuinfo": THUNDERX2_CPUINFO}}, [], "pass"),
    ("thp boot: a unit disabled with enabled=false", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "tuned_active": "sas-performance", "tuned_custom": {
         "sas-performance": SAS_PROFILE.replace("[vm]", "[vm]\nenabled=false")}}, [], "fail"),
    # Issue 50: tuned/profiles/unit.py takes enabled= as true only for the texts it lists,
    # per release (tests/test_tuned_loader_exact.py): "True" from 2.13, never "yes".
    ("thp boot: RHEL 7.9's tuned 2.11 reads [vm] enabled=True as false", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "3.10.0-1160.el7.x86_64", "tuned_active": "sas-performance",
      "tuned_custom": {"sas-performance": SAS_PROFILE.replace("[vm]", "[vm]\nenabled=True")},
      "extra_files": tuned_version_file((2, 11, 0), "python2.7")}, [], "fail"),
    ("thp boot: tuned 2.25 reads [vm] enabled=True as true", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "kernel": "5.14.0-570.12.1.el9_6.x86_64",
      "tuned_active": "sas-performance",
      "tuned_custom": {"sas-performance": SAS_PROFILE.replace("[vm]", "[vm]\nenabled=True")},
      "extra_files": tuned_version_file((2, 25, 1), "python3.9")}, [], "pass"),
    ("thp boot: [vm] enabled=yes is false in every tuned", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "tuned_active": "sas-performance", "tuned_custom": {
         "sas-performance": SAS_PROFILE.replace("[vm]", "[vm]\nenabled=yes")},
      "extra_files": tuned_version_file((2, 22, 1), "python3.6")}, [], "fail"),
    # BLS: the entry that boots is grubenv's saved_entry, else the newest (rpmvercmp).
    ("thp boot: BLS newest entry has it, an older kernel's lacks it", "thp_disabled_at_boot",
     {"tuned_active": "balanced", "extra_files": {OLD_BLS: OLD_BLS_TEXT}}, [], "pass"),
    ("thp boot: BLS saved_entry boots the older kernel that lacks it", "thp_disabled_at_boot",
     {"tuned_active": "balanced", "extra_files": {OLD_BLS: OLD_BLS_TEXT, "/boot/grub2/grubenv":
                      f"# GRUB Environment Block\nsaved_entry={OLD_BLS_ID}\n" + "#" * 900}},
     [], "fail"),
    # What THP holds after boot (scanner.checks.boot.thp_after_boot): the command line,
    # then systemd-tmpfiles, then tuned (silent on enabled when the command line sets it),
    # then init scripts and systemd units; defrag must end at never too.
    ("thp boot: command line always, tuned never ignored", "thp_disabled_at_boot",
     {"bls_options": "root=/dev/sda ro transparent_hugepage=always"}, [], "fail"),
    ("thp boot: tmpfiles.d writes enabled never", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "tuned_active": "balanced",
      "extra_files": {"/etc/tmpfiles.d/thp.conf": THP_TMPFILES.format(file="enabled")}},
     [], "pass"),
    ("thp boot: tuned after tmpfiles.d turns it on", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE,
      "extra_files": {"/etc/tmpfiles.d/thp.conf": THP_TMPFILES.format(file="enabled")}},
     [], "fail"),
    ("thp boot: an enabled systemd unit writes never", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "defrag_tmpfiles": False, "extra_files": {THP_UNIT: THP_UNIT_TEXT},
      "extra_links": {f"{MULTI_USER_WANTS}/disable-thp.service": THP_UNIT}}, [], "pass"),
    ("thp boot: a systemd unit that is not enabled", "thp_disabled_at_boot",
     {**NO_THP_ON_CMDLINE, "extra_files": {THP_UNIT: THP_UNIT_TEXT}}, [], "fail"),
    # Issue 50: a unit counts only where the boot target pulls its target in; graphical
    # requires multi-user, not the reverse (systemd's units/graphical.target), so a RHEL 9.6
    # server (default.target -> multi-user.target) never starts graphical.target's wants.
    *[(f"thp boot: a unit only graphical.target wants, {name}", "thp_disabled_at_boot",
       {**NO_THP_ON_CMDLINE, "defrag_tmpfiles": False, "extra_files": {THP_UNIT: THP_UNIT_TEXT},
        **({"bls_options": "root=/dev/mapper/rhel-root ro " + args} if args else {}),
        "extra_links": {"/etc/systemd/system/graphical.target.wants/disable-thp.service":
                        THP_UNIT, "/etc/systemd/system/default.target":
                        f"/usr/lib/systemd/system/{default}"}}, [], verdict)
      for name, default, args, verdict in (
          ("a server boots multi-user", "multi-user.target", "", "fail"),
          ("a workstation boots graphical", "graphical.target", "", "pass"),
          ("systemd.unit=graphical.target on the kernel line", "multi-user.target",
           "systemd.unit=graphical.target", "pass"))],
    # A site's own default target (systemd follows its Requires=) starts its .wants, and
    # what multi-user.target pulls in.
    *[(f"thp boot: a site's default target, {name}", "thp_disabled_at_boot",
       {**NO_THP_ON_CMDLINE, "defrag_tmpfiles": False,
        "extra_files": {THP_UNIT: THP_UNIT_TEXT, "/etc/systemd/system/sas.target": target},
        "extra_links": {"/etc/systemd/system/sas.target.wants/disable-thp.service": THP_UNIT,
                        "/etc/systemd/system/default.target": "/etc/systemd/system/sas.target"}},
       [], verdict)
      for name, target, verdict in (
          ("requiring multi-user, wants the unit", SAS_TARGET, "pass"),)],
    # tuned itself: enabled only in graphical.target.wants, a server never starts it, so
    # its profile's THP never is not applied at boot.
    *[(f"thp boot: tuned.service only in graphical.target.wants, {name}", "thp_disabled_at_boot",
       {**NO_THP_ON_CMDLINE, "tuned_active": "sas-performance", "tuned_enabled": False,
        "extra_links": {"/etc/systemd/system/graphical.target.wants/tuned.service":
                        "/usr/lib/systemd/system/tuned.service",
                        "/etc/systemd/system/default.target": f"/usr/lib/systemd/system/{default}"}},
       [], verdict)
      for name, default, verdict in (("a server", "multi-user.target", "fail"),
                                     ("a workstation", "graphical.target", "pass"))],
    # RHEL 6: ktune and rc.local run from the run level upstart enters (/etc/inittab's
    # initdefault, rcS.conf): ktune linked only in rc5.d does not run on a level-3 boot.
    *[(f"thp boot: RHEL 6 ktune only in run level 5, {name}", "thp_disabled_at_boot",
       {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER,
                                       **inittab},
        "extra_links": {link.replace("/rc3.d/", "/rc5.d/"): target
                        for link, target in KTUNE_LINKS.items()}}, [], verdict)
      for name, inittab, verdict in (
          ("inittab boots 3", {"/etc/inittab": RHEL6_INITTAB.format(level=3)}, "pass"),
          ("inittab boots 5", {"/etc/inittab": RHEL6_INITTAB.format(level=5)}, "fail"),
          ("no inittab: every run level counts", {}, "fail"))],
    *[(f"thp boot: RHEL 6 rc.local writes never, {name}", "thp_disabled_at_boot",
       {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, "/boot/grub/grub.conf": RHEL6_NEVER,
                                       "/etc/rc.d/rc.local": RHEL6_RC_LOCAL,
                                       "/etc/inittab": RHEL6_INITTAB.format(level=3)},
        "without_files": without}, [], verdict)
      for name, without, verdict in (
          ("S99local in run level 3 (initscripts' links)", (), "pass"),
          ("its S99local link removed from run level 3", ("/etc/rc.d/rc3.d/S99local",),
           "fail"))],
    # With enabled never no huge page is allocated: defrag is reported, not judged (seed
    # 000 and Red Hat's transparent_hugepage=never set enabled alone).
    ("thp boot: defrag not kept at never, moot with enabled never", "thp_disabled_at_boot",
     {"defrag_tmpfiles": False, "tuned_custom": {"sas-performance": SAS_PROFILE.replace(
         "transparent_hugepage.defrag=never\n", "")}}, [], "pass"),
    ("thp boot: defrag from the tuned profile (tuned 2.11+)", "thp_disabled_at_boot",
     {"defrag_tmpfiles": False}, [], "pass"),
    ("thp boot: tuned sets defrag madvise after tmpfiles.d, moot", "thp_disabled_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(
         "transparent_hugepage.defrag=never", "transparent_hugepage.defrag=madvise")}},
     [], "pass"),
    # What mounts each SAS file system at boot (scanner.boot_mounts): fstab, or a mount unit.
    ("boot mounts: fstab lacks noatime (remounted by hand)", "mount_options_at_boot",
     {**fstab_data("defaults")}, [], "fail"),
    ("boot mounts: fstab turns barriers off", "mount_options_at_boot",
     {**fstab_data("defaults,noatime,nobarrier")}, [], "fail"),
    ("boot mounts: barriers off with a protected cache", "mount_options_at_boot",
     {**fstab_data("defaults,noatime,nobarrier"), "kernel": "3.10.0-1160.el7.x86_64"},
     ["storage_cache_protected=true"], "pass"),
    # XFS has no barrier options from Linux 4.19 and RHEL 8's 4.18 (commit 1c02d502c208;
    # tests/test_xfs_barrier.py mounts one on this machine's kernel): the entry fails to
    # mount, whatever the cache. ext4 still takes nobarrier.
    ("boot mounts: XFS nobarrier on RHEL 8, protected cache", "mount_options_at_boot",
     {**fstab_data("defaults,noatime,nobarrier")},
     ["storage_cache_protected=true"], "fail"),
    ("boot mounts: ext4 nobarrier on RHEL 9, protected cache", "mount_options_at_boot",
     {"filesystems": data_fs("ext4", "rw,noatime", "defaults,noatime,nobarrier"),
      "kernel": "5.14.0-427.el9.x86_64"}, ["storage_cache_protected=true"], "pass"),
    ("boot mounts: no fstab line (a cluster resource)", "mount_options_at_boot",
     {**fstab_data(None)}, [], "notchecked"),
    ("boot mounts: noauto", "mount_options_at_boot",
     {**fstab_data("noauto,noatime")}, [], "notchecked"),
    ("boot mounts: a mount unit overrides fstab's line", "mount_options_at_boot",
     {**fstab_data("defaults"),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT}}, [], "pass"),
    ("boot mounts: an enabled mount unit without an fstab line", "mount_options_at_boot",
     {**fstab_data(None),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT},
      "extra_links": {"/etc/systemd/system/local-fs.target.wants/sasdata.mount":
                      "/etc/systemd/system/sasdata.mount"}}, [], "pass"),
    ("boot mounts: a mount unit no target wants", "mount_options_at_boot",
     {**fstab_data(None),
      "extra_files": {"/etc/systemd/system/sasdata.mount": SASDATA_UNIT}}, [], "notchecked"),
    # RHEL 6 enterprise-storage: ktune sets ELEVATOR on every disk and remounts nobarrier.
    ("io boot: RHEL 6 ktune ELEVATOR=deadline", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, **RA_IN_RC_LOCAL,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    # ktune.init applies ELEVATOR only when the booting command line lacks "elevator=".
    ("io boot: RHEL 6 ktune ELEVATOR=cfq, the command line's elevator=deadline wins",
     "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **KTUNE_FILES, **RA_IN_RC_LOCAL, "/boot/grub/grub.conf": RHEL6_NEVER.replace(
             "transparent_hugepage=never", "transparent_hugepage=never elevator=deadline"),
         "/etc/sysconfig/ktune":
             ENTERPRISE_STORAGE_KTUNE_SYSCONFIG.replace('"deadline"', '"cfq"')}}, [], "pass"),
    ("io boot: RHEL 6 ktune ELEVATOR=cfq", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **KTUNE_FILES, **RA_IN_RC_LOCAL, "/etc/sysconfig/ktune":
             ENTERPRISE_STORAGE_KTUNE_SYSCONFIG.replace('"deadline"', '"cfq"')}}, [], "fail"),
    # ... nor anything at boot: 2.6.18 predates THP, whatever a boot file says.
    ("thp boot: RHEL 5 has none", "thp_disabled_at_boot",
     {**RHEL5, "extra_files": RHEL5_KTUNE_FILES, "extra_links": RHEL5_KTUNE_ON}, [],
     "notapplicable"),
    # ktune's multiply_disk_readahead 4 (start(); stop() has 0.25) runs after udev, before
    # rc.local: the kernel's 128 KiB becomes 512, a udev rule's 1024 becomes 4096.
    ("io boot: RHEL 6 ktune multiplies the kernel's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "fail"),
    ("io boot: RHEL 6 ktune multiplies udev's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES, **RA_BY_UDEV_1024,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    ("io boot: RHEL 6 ktune divides udev's read-ahead", "io_tuning_at_boot",
     {**RHEL6_KTUNE, "extra_files": {
         **rhel6_ktune(KTUNE_ENTERPRISE_STORAGE.replace("readahead 4\n", "readahead 0.25\n"))[0],
         **RA_BY_UDEV_4096, "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "fail"),
    ("boot mounts: RHEL 6 ktune remounts nobarrier", "mount_options_at_boot",
     {**RHEL6_KTUNE, "extra_files": KTUNE_FILES}, [], "fail"),
    ("boot mounts: RHEL 6 ktune nobarrier, protected cache", "mount_options_at_boot",
     {**RHEL6_KTUNE, "extra_files": KTUNE_FILES}, ["storage_cache_protected=true"], "pass"),
    # vm.dirty_ratio after boot (scanner.sysctl_boot): systemd-sysctl, ktune, tuned, then
    # tuned's reapply_sysctl putting /etc and /run back.
    ("dirty boot: sysctl.conf put back over tuned's 40", "dirty_ratio_at_boot",
     {"extra_files": {"/etc/sysctl.conf": "# System default settings\nvm.dirty_ratio = 20\n"}},
     [], "fail"),
    ("dirty boot: reapply_sysctl off, tuned's 40 wins", "dirty_ratio_at_boot",
     {"extra_files": {"/etc/sysctl.conf": "vm.dirty_ratio = 20\n",
                      "/etc/tuned/tuned-main.conf": "daemon = 1\nreapply_sysctl = 0\n"}},
     [], "pass"),
    # tuned's get_bool (tuned/utils/commands.py): only 1, y, yes, t, true are true, so "on"
    # turns reapply_sysctl off and tuned's 40 stays
    ("dirty boot: reapply_sysctl = on is off to tuned, tuned's 40 wins", "dirty_ratio_at_boot",
     {"extra_files": {"/etc/sysctl.conf": "vm.dirty_ratio = 20\n",
                      "/etc/tuned/tuned-main.conf": "daemon = 1\nreapply_sysctl = on\n"}},
     [], "pass"),
    # tuned's reapply_sysctl parses each line as its release does (plugin_sysctl.py): from
    # 2.11 it writes /proc/sys/KEY itself, so systemd-sysctl's "-" names no file; from 2.22
    # it swaps dots and slashes, so vm/dirty_ratio names none either; from 2.27
    # reapply_sysctl_exclude keeps keys back. What it skips leaves the profile's 40.
    *[(f"dirty boot: tuned {'.'.join(map(str, version))} re-applies {text.split(' =')[0]!r}",
       "dirty_ratio_at_boot",
       {"extra_files": {"/etc/sysctl.d/90-site.conf": text, **main,
                        **tuned_version_file(version, "python3.6")}}, [], verdict)
      for text, main, version, verdict in (
          ("vm/dirty_ratio = 20\n", {}, (2, 21, 1), "fail"),
          ("vm/dirty_ratio = 20\n", {}, (2, 22, 1), "pass"),
          ("-vm.dirty_ratio = 20\n", {}, (2, 22, 1), "pass"),
          ("vm.dirty_ratio = 20\n", {"/etc/tuned/tuned-main.conf":
                                      "daemon = 1\nreapply_sysctl_exclude = vm.dirty_*, kernel.sem\n"},
           (2, 27, 0), "pass"),
          ("vm.dirty_ratio = 20\n", {"/etc/tuned/tuned-main.conf":
                                      "daemon = 1\nreapply_sysctl_exclude = vm.dirty_*\n"},
           (2, 25, 1), "fail"))],
    # vm.swappiness and vm.dirty_background_ratio at boot, as the dirty ratio: tuned's
    # throughput-performance (10 each), then reapply_sysctl puts /etc's files back.
    *[(f"swappiness boot: {name}", "swappiness_at_boot", changes, [], verdict)
      for name, changes, verdict in (
          ("throughput-performance's 10", {}, "pass"),
          ("a site's sysctl.d 1, put back over tuned's 10",
           {"extra_files": {"/etc/sysctl.d/90-sas.conf": "vm.swappiness = 1\n"}}, "pass"),
          ("a sysctl.d 30, put back over tuned's 10",
           {"extra_files": {"/etc/sysctl.d/90-site.conf": "vm.swappiness = 30\n"}}, "fail"),
          ("virtual-guest's 30", {"tuned_active": "virtual-guest"}, "fail"),
          ("nothing sets it: the kernel's 60", {"tuned_active": "balanced"}, "fail"),
          ("RHEL 6 ktune sets none: the kernel's 60",
           {**RHEL6_KTUNE, "extra_files": KTUNE_FILES}, "fail"))],
    *[(f"dirty background boot: {name}", "dirty_background_ratio_at_boot", changes, [], verdict)
      for name, changes, verdict in (
          ("throughput-performance's 10", {}, "pass"),
          ("nothing sets it: the kernel's 10", {"tuned_active": "balanced"}, "pass"),
          ("sysctl.conf 5, put back over tuned's 10",
           {"extra_files": {"/etc/sysctl.conf": "vm.dirty_background_ratio = 5\n"}}, "fail"),
          ("a sysctl.d file sets dirty_background_bytes",
           {"tuned_active": "balanced", "extra_files": {
               "/etc/sysctl.d/90-site.conf": "vm.dirty_background_bytes = 268435456\n"}},
           "pass"),
          ("tuned 2.24 ignores [vm] dirty_background_ratio = 5",
           {"tuned_active": "sas-site", "tuned_custom": {"sas-site": (
               "[main]\ninclude=throughput-performance\n[vm]\ndirty_background_ratio = 5\n")},
            "extra_files": tuned_version_file((2, 24, 0), "python3.9")}, "pass"),
          ("tuned 2.25 applies [vm] dirty_background_ratio = 5 before [sysctl]'s 10",
           {"tuned_active": "sas-site", "tuned_custom": {"sas-site": (
               "[main]\ninclude=throughput-performance\n[vm]\ndirty_background_ratio = 5\n")},
            "extra_files": tuned_version_file((2, 25, 1), "python3.9")}, "pass"))],
    ("dirty boot: a later sysctl.d file wins (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/10-sas.conf": "vm.dirty_ratio = 40\n",
                      "/usr/lib/sysctl.d/50-vendor.conf": "vm/dirty_ratio=20\n"}}, [], "fail"),
    ("dirty boot: /etc hides its /usr/lib namesake (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/50-vendor.conf": "vm.dirty_ratio = 40\n",
                      "/usr/lib/sysctl.d/50-vendor.conf": "vm.dirty_ratio = 20\n"}}, [],
     "pass"),
    ("dirty boot: nothing sets it", "dirty_ratio_at_boot", {"tuned_active": "balanced"}, [],
     "fail"),
    # The kernel's own sysctl.KEY=VALUE boot parameters (fs/proc/proc_sysctl.c
    # do_sysctl_args, Linux 5.8): applied before systemd-sysctl, ktune and tuned.
    ("dirty boot: RHEL 9.6 kernel line sysctl.vm.dirty_ratio=40", "dirty_ratio_at_boot",
     {"tuned_active": "balanced", "kernel": "5.14.0-570.12.1.el9_6.x86_64",
      "bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never "
                     "sysctl.vm.dirty_ratio=40"}, [], "pass"),
    ("dirty boot: RHEL 9.6 kernel line 40, a sysctl.d file 20 after it", "dirty_ratio_at_boot",
     {"tuned_active": "balanced", "kernel": "5.14.0-570.12.1.el9_6.x86_64",
      "bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never "
                     "sysctl/vm/dirty_ratio=40",
      "extra_files": {"/etc/sysctl.d/90-site.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    ("dirty boot: RHEL 8's kernel line sysctl.vm.dirty_ratio=40, untold", "dirty_ratio_at_boot",
     {"tuned_active": "balanced",
      "bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never "
                     "sysctl.vm.dirty_ratio=40"}, [], "notchecked"),
    ("dirty boot: RHEL 7's 3.10 ignores sysctl.vm.dirty_ratio=40", "dirty_ratio_at_boot",
     {"tuned_active": "balanced", "kernel": "3.10.0-1160.el7.x86_64",
      "bls_options": "root=/dev/mapper/rhel-root ro transparent_hugepage=never "
                     "sysctl.vm.dirty_ratio=40"}, [], "fail"),
    # replace=yes is false in every tuned: the site's [sysctl] merges with the parent's 40
    ("dirty boot: RHEL 8.10 site [sysctl] replace=yes merges", "dirty_ratio_at_boot",
     {"tuned_active": "sas-site", "tuned_custom": {"sas-site": (
         "[main]\ninclude=throughput-performance\n[sysctl]\nreplace=yes\nvm.swappiness=10\n")},
      "extra_files": tuned_version_file((2, 22, 1), "python3.6")}, [], "pass"),
    ("dirty boot: a site [sysctl] replace=true drops the parent's 40", "dirty_ratio_at_boot",
     {"tuned_active": "sas-site", "tuned_custom": {"sas-site": (
         "[main]\ninclude=throughput-performance\n[sysctl]\nreplace=true\nvm.swappiness=10\n")},
      "extra_files": tuned_version_file((2, 22, 1), "python3.6")}, [], "fail"),
    ("dirty boot: a sysctl.d file sets dirty_bytes (tuned off)", "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/90-sas.conf": "vm.dirty_bytes = 4294967296\n"}}, [],
     "pass"),
    ("dirty boot: dirty_bytes set, then sysctl.conf sets the ratio 20 (tuned off)",
     "dirty_ratio_at_boot",
     {"tuned_enabled": False,
      "extra_files": {"/etc/sysctl.d/90-sas.conf": "vm.dirty_bytes = 4294967296\n",
                      "/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    ("dirty boot: RHEL 6 ktune's sysctl.ktune", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG}},
     [], "pass"),
    ("dirty boot: RHEL 6 ktune, then SYSCTL_POST sysctl.conf", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": ENTERPRISE_STORAGE_KTUNE_SYSCONFIG,
                                     "/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    # RHEL 6's ktune.sysconfig (the 1.0 branch): SYSCTL_POST is words with globs, each
    # file applied after ktune's own, so a 20 left in sysctl.conf or sysctl.d wins.
    ("dirty boot: RHEL 6 SYSCTL_POST's sysctl.conf", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": KTUNE_SYSCONFIG_1_0,
                                     "/etc/sysctl.conf": "vm.dirty_ratio = 20\n"}}, [], "fail"),
    ("dirty boot: RHEL 6 SYSCTL_POST's sysctl.d glob", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": KTUNE_SYSCONFIG_1_0,
                                     "/etc/sysctl.d/50-old.conf": "vm.dirty_ratio = 20\n"}},
     [], "fail"),
    ("dirty boot: RHEL 6 SYSCTL_POST, nothing overrides", "dirty_ratio_at_boot",
     {**RHEL6_KTUNE, "extra_files": {**KTUNE_FILES,
                                     "/etc/sysctl.ktune": ENTERPRISE_STORAGE_SYSCTL_KTUNE,
                                     "/etc/sysconfig/ktune": KTUNE_SYSCONFIG_1_0}}, [], "pass"),
    # readahead as tuned's disk plugin parses it: ">N s" and "Ns" are rejected, set nothing.
    ("io boot: readahead >N s is rejected by tuned", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", ">8192 s")}}, [], "fail"),
    ("io boot: readahead Ns is rejected by tuned", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "8192s")}}, [], "fail"),
    ("io boot: readahead N sectors", "io_tuning_at_boot",
     {"tuned_custom": {"sas-performance": SAS_PROFILE.replace(">4096", "8192 sectors")}}, [],
     "pass"),
    ("io boot: elevator= ignored on blk-mq kernels", "io_tuning_at_boot",
     {"tuned_active": "balanced", "bls_options": "ro elevator=deadline",
      "extra_files": RA_IN_RC_LOCAL}, ["allowed_schedulers=deadline"], "fail"),
])
