"""Issue 34: the collectors run as root on every scanned host, so nothing a host holds may
steer them. Each test performs an attack against both collectors (collect.sh under sh, and
`sascheck collect`), as root in a private mount namespace (tests/support/collector_attacks.py), and
shows it inert: nothing written outside the private stage, nothing secret in the archive,
every hang bounded."""

from __future__ import annotations

import os
import stat

import pytest

from .support.collector_attacks import COLLECTORS, PRECIOUS, SECRET, attack, image, sas_tree

both = pytest.mark.parametrize("collector", COLLECTORS)


@both
def test_a_mountinfo_device_field_with_dot_dots_writes_nothing_outside(tmp_path, collector):
    """An NFS mount whose major:minor is 'L/../../…/mnt/cron.d', with the image's
    sys/class/bdi/L a link deep into the image: collect.sh used to copy the image's payload to
    the host's /mnt/cron.d (the stage path climbed out by string concatenation)."""
    root = image(tmp_path)
    deep = root / "deep"
    leaf = deep.joinpath(*["d"] * 30)
    leaf.mkdir(parents=True)
    (root / "sys/class/bdi/L").symlink_to(leaf)  # absolute: the image as mounted here
    (deep / "mnt/cron.d").mkdir(parents=True)
    (deep / "mnt/cron.d/read_ahead_kb").write_text("* * * * * root touch /PWNED\n")
    number = "L/" + "../" * 30 + "mnt/cron.d"
    (root / "proc/self/mountinfo").write_text(
        f"1 0 8:1 / / rw - xfs /dev/sda1 rw\n40 1 {number} / /sasdata rw - nfs srv:/x rw\n")
    outcome = attack(tmp_path, collector, root)
    assert outcome.returncode == 0, outcome.stderr
    outcome.assert_host_untouched()


@both
def test_an_image_directory_linked_to_the_hosts_is_never_written_through(tmp_path, collector):
    """The image's /etc is a link to the host's own directory (absolute): the old stage kept
    the link verbatim, and the placeholder written for a unit that exists (`: > dst`) then
    truncated the host's own unit file through it."""
    root = image(tmp_path)
    (root / "etc/fstab").unlink()
    (root / "etc").rmdir()
    (root / "etc").symlink_to("/mnt/hostetc")
    outcome = attack(tmp_path, collector, root)
    assert outcome.returncode == 0, outcome.stderr
    outcome.assert_host_untouched()
    assert PRECIOUS.encode() not in outcome.archive.get("root/etc/hostname", b"")


@both
def test_a_config_include_that_climbs_out_truncates_nothing(tmp_path, collector):
    """`-CONFIG /x/../../…/mnt/victim.cfg` in the image's sasv9.cfg: read and written by
    concatenation, the source and the target were the same host file, truncated."""
    root = image(tmp_path)
    (root / "x").mkdir()
    base = root / "opt/sas/SASHome/SASFoundation/9.4"
    base.mkdir(parents=True)
    (base / "sasv9.cfg").write_text("-CONFIG /x" + "/.." * 30 + "/mnt/victim.cfg\n")
    outcome = attack(tmp_path, collector, root)
    assert outcome.returncode == 0, outcome.stderr
    outcome.assert_host_untouched()
    assert not outcome.leaked()


@both
def test_a_mount_point_with_dot_dots_makes_no_directory_outside(tmp_path, collector):
    root = image(tmp_path)
    (root / "proc/mounts").write_text(
        "/dev/sda1 / xfs rw 0 0\ntmpfs /" + "../" * 30 + "mnt/nologin tmpfs rw 0 0\n")
    outcome = attack(tmp_path, collector, root)
    assert outcome.returncode == 0, outcome.stderr
    outcome.assert_host_untouched()


@both
def test_an_image_proc_file_linked_to_a_host_secret_is_not_read(tmp_path, collector):
    root = image(tmp_path)
    (root / "proc/cpuinfo").unlink()
    (root / "proc/cpuinfo").symlink_to("/mnt/secret")
    outcome = attack(tmp_path, collector, root)
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()


@both
def test_the_sas_accounts_include_of_a_root_only_file_is_named_not_copied(tmp_path, collector):
    """On the live host the SAS account writes its own sasv9.cfg: `-CONFIG /mnt/secret`, and
    `-CONFIG /tmp/../mnt/secret` (read as /mnt/secret, once written to /tmp/mnt/secret)."""
    outcome = attack(tmp_path, collector, live_setup=sas_tree(
        "-CONFIG /mnt/secret\n-CONFIG /tmp/../mnt/secret\n-WORK /saswork"))
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    outcome.assert_host_untouched()
    if collector == "collect.sh":  # the Python collector says it in the scan's notes
        assert "outside the SAS installation" in outcome.manifest
    assert outcome.leftovers == []  # the stage is gone, and nothing was written beside it


@both
def test_a_sas_directory_turned_into_a_link_to_a_secret_is_not_copied(tmp_path, collector):
    live = sas_tree("-WORK /opt/sas/work") + "\nln -s /mnt/secret /opt/sas/data"
    outcome = attack(tmp_path, collector, live_setup=live,
                     sets=["sas_data_dirs=/opt/sas/data"])
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    assert outcome.archive.get("root/opt/sas/data") == b"-> /mnt/secret"  # named, as a link


@both
def test_a_hard_link_to_a_secret_in_the_sas_installation_is_not_copied(tmp_path, collector):
    """Without fs.protected_hardlinks (RHEL 6) the SAS account can hard-link a root-only file
    into a directory it owns (here the SAS installation shares the secret's file system);
    an include of it is refused."""
    base = "/opt/sas/SASHome/SASFoundation/9.4"
    live = "\n".join([
        f"mkdir -p /mnt/sas{base.removeprefix('/opt/sas')}",
        f"echo '-CONFIG /opt/sas/SASHome/inc.cfg' > /mnt/sas{base.removeprefix('/opt/sas')}/sasv9.cfg",
        "ln /mnt/secret /mnt/sas/SASHome/inc.cfg",
        "mount -t tmpfs sascheck-opt /opt", "mkdir /opt/sas", "mount --bind /mnt/sas /opt/sas"])
    outcome = attack(tmp_path, collector, live_setup=live)
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    assert outcome.host["/mnt/secret"] == SECRET


def test_a_planted_link_at_the_predictable_archive_name_is_replaced(tmp_path):
    """The default name (sascheck-HOST-STAMP.tar.gz) is predictable: links planted at the next
    seconds' names in the shared working directory must not be written through."""
    root = image(tmp_path)
    plant = ("stamp=$(date +%s); for s in 0 1 2 3 4 5 6 7 8 9; do "
             "name=sascheck-image-$(date -d @$((stamp + s)) +%Y%m%d%H%M%S).tar.gz; "
             "ln -s /mnt/victim.cfg \"$name\"; ln -s /mnt/victim.cfg \"${name%.tar.gz}.tgz\"; done")
    outcome = attack(tmp_path, "collect.sh", root, output="", before=plant)
    assert outcome.returncode == 0, outcome.stderr
    outcome.assert_host_untouched()
    written = [p for p in (tmp_path / "work").iterdir() if not p.is_symlink()]
    assert len(written) == 1 and stat.S_IMODE(written[0].stat().st_mode) == 0o600


@both
def test_a_fifo_in_the_image_does_not_hang_the_collection(tmp_path, collector):
    root = image(tmp_path)
    for name in ("proc/meminfo", "etc/fstab"):
        (root / name).unlink()
        os.mkfifo(root / name)
    outcome = attack(tmp_path, collector, root, timeout=90)
    assert outcome.returncode == 0, outcome.stderr


FLIPPED = ("etc/fstab", "etc/hostname", "etc/os-release", "etc/redhat-release",
           "etc/default/grub", "usr/sbin/tuned", "usr/bin/tuned-adm")


@both
def test_files_flipped_to_links_while_collected_never_yield_the_secret(tmp_path, collector):
    """A race: files the collectors read or only probe flip between a regular file and a
    link to the secret while the collector runs (several runs, so that the window is hit)."""
    root = image(tmp_path)
    flips = []
    for name in FLIPPED:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        flips.append(f"ln -sfn /mnt/secret {path}.l; mv -T {path}.l {path}; "
                     f"printf 'x\\n' > {path}.f; mv -T {path}.f {path}")
    for _ in range(5):
        outcome = attack(tmp_path, collector, root,
                         during="while :; do " + "; ".join(flips) + "; done")
        assert not outcome.leaked()


@both
def test_the_archive_is_the_owners_alone(tmp_path, collector):
    outcome = attack(tmp_path, collector, image(tmp_path))
    assert outcome.returncode == 0, outcome.stderr
    mode = stat.S_IMODE((tmp_path / "work/snapshot.tar.gz").stat().st_mode)
    assert mode == 0o600
    assert SECRET not in outcome.manifest



CAS_INSTANCE = "/opt/sas/viya/config/etc/cas/default"


def _cas_tree(*commands: str) -> str:
    """live_setup: a tmpfs /opt holding a SAS Viya 3.5 CAS instance's configuration, which
    the CAS account owns (casconfig.lua as the deployment writes it)."""
    return "\n".join([
        "mount -t tmpfs sascheck-opt /opt", f"mkdir -p {CAS_INSTANCE}",
        f"echo \"env.CAS_DISK_CACHE = '/cascache'\" > {CAS_INSTANCE}/casconfig.lua",
        *commands])


@both
def test_a_cas_file_linked_to_a_root_only_file_is_kept_as_a_link(tmp_path, collector):
    """Issue 63: the CAS account makes casconfig_usermods.lua a link to a file only root may
    read. The snapshot keeps the link as a link, names it, and never the file's bytes."""
    outcome = attack(tmp_path, collector, live_setup=_cas_tree(
        f"ln -s /mnt/secret {CAS_INSTANCE}/casconfig_usermods.lua",
        f"ln -s ../../../../../../../mnt/secret {CAS_INSTANCE}/cas_usermods.settings"))
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    outcome.assert_host_untouched()
    member = f"root{CAS_INSTANCE}"
    assert outcome.archive[f"{member}/casconfig_usermods.lua"] == b"-> /mnt/secret"
    # the shell settings: copied by collect.sh as what they are; the Python collector keeps
    # only what the scan read, and the scan reads them only where no Lua file sets the cache
    assert outcome.archive.get(f"{member}/cas_usermods.settings",
                               b"-> ../../../../../../../mnt/secret") == (
        b"-> ../../../../../../../mnt/secret")
    assert b"/cascache" in outcome.archive[f"{member}/casconfig.lua"]  # its own files copied
    assert "casconfig_usermods.lua" in outcome.manifest  # named, with why
    assert "out of the CAS configuration" in outcome.manifest


@both
def test_a_hard_link_to_a_secret_in_the_cas_configuration_is_not_copied(tmp_path, collector):
    """Without fs.protected_hardlinks (RHEL 6) the CAS account can hard-link a root-only file
    into its configuration (sharing the secret's file system)."""
    outcome = attack(tmp_path, collector, live_setup="\n".join([
        f"mkdir -p /mnt/cas{CAS_INSTANCE}",
        f"echo \"env.CAS_DISK_CACHE = '/cascache'\" > /mnt/cas{CAS_INSTANCE}/casconfig.lua",
        f"ln /mnt/secret /mnt/cas{CAS_INSTANCE}/casconfig_usermods.lua",
        "mount -t tmpfs sascheck-opt /opt", "mkdir /opt/sas",
        "mount --bind /mnt/cas/opt/sas /opt/sas"]))
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    assert outcome.host["/mnt/secret"] == SECRET
    assert "hard link" in outcome.manifest


@both
def test_the_sas_accounts_sasv9_cfg_linked_to_a_root_only_file_is_kept_as_a_link(tmp_path,
                                                                                collector):
    """The SAS installer account owns SASHome: sasv9_local.cfg made a link to a root-only
    file is the CAS attack in SAS 9.4's tree, and gets the same rule."""
    base = "/opt/sas/SASHome/SASFoundation/9.4"
    outcome = attack(tmp_path, collector, live_setup=sas_tree("-WORK /saswork") + "\n"
                     f"ln -s /mnt/secret {base}/sasv9_local.cfg")
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.leaked()
    assert outcome.archive[f"root{base}/sasv9_local.cfg"] == b"-> /mnt/secret"
    assert b"-WORK /saswork" in outcome.archive[f"root{base}/sasv9.cfg"]
