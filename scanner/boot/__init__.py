"""What the next boot does, beside tuned: the kernel command line and the units and files
that write settings at boot.

``loader`` reads the boot loader the host boots with (GRUB legacy, GRUB 2, BLS entries and
grubenv); ``sysctl`` the order systemd-sysctl and the kernel's ``sysctl.`` parameters apply;
``mounts`` /etc/fstab and mount units; ``writers`` the units, tmpfiles and rc scripts that
write sysfs at boot; ``target`` which of them the default target starts; ``services`` the
SysV start links of RHEL 5 and 6; ``dropins`` the configuration directories of udev,
systemd-sysctl and systemd-tmpfiles, a file hiding its namesake in a later directory.
"""
