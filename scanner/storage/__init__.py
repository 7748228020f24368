"""The SAS file systems and what lies below them.

``sasdirs`` finds the SAS DATA, WORK and UTILLOC directories (site values, then sasv9.cfg
and its usermods); ``filesystems`` the mounts that hold them; ``blockdev`` the stack of
devices under each (LVM, dm, md, multipath, partitions) with their schedulers and
read-ahead; ``udev_devices`` which udev rules match them; ``multipath``,
``multipath_hwtable`` and ``multipath_runtime`` multipath.conf, the host's built-in hardware
table and the running maps, as the installed multipath-tools reads them.
"""
