"""How a host's files are reached: the one way every other module reads a host.

``hostroot.HostRoot`` reads a live host (``/``) or a directory holding another system's
root, confined to that root and bounded in size; ``snapshot`` opens the archive that
``sascheck collect`` or the standalone ``collect.sh`` writes (``collect_script`` keeps that
script's generated layout block current) and ``sosreport`` a sosreport, both as a
``HostRoot`` over a private copy (``tree_copy``, ``tree_remove``). Nothing here judges.
"""
