"""Where things are on a RHEL host, and how to recognise them: the one home of every path,
marker, vendor list and version cut-off the engines read, one module per subsystem as in
``scanner/`` (``system``, ``tuned``, ``boot``, ``storage``, ``sas``).

The scanner (``scanner/``) and the OVAL generator (``content/``) import these from here;
the bash remediation library and the standalone collector get them rendered as shell words
(``shell.shell_layout``), so no list is written twice. Add a fact to its subsystem's
module, then use it everywhere.
"""

from __future__ import annotations

from .boot import *  # noqa: F403  (one namespace for every fact, wherever it is kept)
from .limits import *  # noqa: F403
from .sas import *  # noqa: F403
from .shell import *  # noqa: F403
from .storage import *  # noqa: F403
from .system import *  # noqa: F403
from .tuned import *  # noqa: F403
