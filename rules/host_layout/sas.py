"""Where SAS keeps its installation and configuration, and the site values naming SAS
directories (scanner/storage/sasdirs.py)."""

from __future__ import annotations

# -- SAS ----------------------------------------------------------------------------------
# SAS 9.3 and 9.4 install under a SASHome; SAS 9.2's default was /usr/local/SAS.
SAS_HOMES = ("/opt/sas/SASHome", "/usr/local/SASHome", "/opt/SASHome", "/sas/SASHome",
             "/usr/local/SAS", "/opt/SAS")
SAS_FOUNDATIONS = ("SASFoundation/9.4", "SASFoundation/9.3", "SASFoundation/9.2")
# SAS 9.4 configuration directories: server contexts at <dir>/Lev<N>/<context>/sasv9.cfg
# (SASApp's is what workspace and batch servers start with), site changes in the context's
# sasv9_usermods.cfg.
SAS_CONFIG_DIRS = ("/opt/sas/config", "/sas/config", "/opt/sas/sasconfig", "/sasconfig")
SAS_USERMODS = "sasv9_usermods.cfg"
# SAS Viya 3.x: the SAS Programming Run-time Environment's configuration.
SAS_VIYA_SPRE_CONFIG = "/opt/sas/viya/config/etc/spre/default"
SAS_VIYA_SASROOT = "/opt/sas/spre/home/SASFoundation"
# SAS Viya 3.x's CAS: each instance's configuration directory below this
# (scanner/storage/cas_cache.py), the Lua files in the order CAS reads them, the shell
# settings sourced before it starts, and where the cache is when none sets it.
SAS_VIYA_CAS_CONFIG = "/opt/sas/viya/config/etc/cas"
CAS_LUA_FILES = ("casconfig.lua", "casconfig_deployment.lua", "casconfig_usermods.lua")
CAS_SHELL_FILES = ("cas.settings", "cas_usermods.settings")
CAS_DEFAULT_DISK_CACHE = "/tmp"
CAS_ROLE = "CAS_DISK_CACHE"
# Where SAS keeps its own configuration: a -CONFIG include is read only inside these, the
# SAS directories and the files the site names (sas_config_files), so that a sasv9.cfg the
# SAS account writes cannot make a collector running as root copy another file.
SAS_INSTALL_DIRS = (*SAS_HOMES, *SAS_CONFIG_DIRS, "/opt/sas/viya", "/opt/sas/spre")
# SAS directory role -> the site value that names its directories.
SAS_ROLE_VALUES = {"DATA": "sas_data_dirs", "WORK": "sas_work_dirs",
                   "UTILLOC": "sas_utilloc_dirs", CAS_ROLE: "cas_disk_cache_dirs"}
SAS_ROLES = tuple(SAS_ROLE_VALUES)
# The site values that name SAS directories or configuration files: a collection follows
# them (collect.sh --set), since the scan elsewhere will read what they name (scratch_dirs:
# where the barrier rules let WORK or the CAS cache go without barriers).
SAS_PATH_VALUES = (*SAS_ROLE_VALUES.values(), "scratch_dirs", "sas_config_files")
