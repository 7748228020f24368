"""Remediations generated from the rules and a scan: bash, Ansible, a tuned profile, udev rules."""
