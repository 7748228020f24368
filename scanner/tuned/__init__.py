"""tuned and ktune as each release runs them: which profile starts at boot and what it sets.

``active`` gathers the facts (installed, enabled, the active or recommended profile, the
merged units); ``chain`` loads and merges profiles as tuned's own loader does; ``layout``
reads where the installed tuned keeps its profiles (2.23 moved them; RHEL < 10 keeps the
old place); ``recommend`` follows profile_mode auto (2.9+); ``ppd`` the tuned-ppd switch
(2.22+); ``ktune`` RHEL 5's ktune and RHEL 6's tuned 0.2/1.0 scripts. Release differences
(booleans, modifiers, reapply_sysctl) are cited in each module, by tuned tag and file.
"""
