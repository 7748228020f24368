"""What the tests share: root and host builders, the verdict cases, and the runners of the
real consumers (oscap, bash fixes, ansible-playbook, Chromium). Samples of real files, each
with its origin, are in tests/data."""
