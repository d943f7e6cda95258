"""``python -m dispatchlint``.

``python -m`` puts the working directory first on ``sys.path``: run from a project's root, that project's own
``typing.py`` or ``dispatchlint.py`` would be imported in place of the real ones. The folder is dropped before
anything else is imported (the ``dispatchlint`` console script never adds it).
"""

import os
import sys

if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.path.abspath(os.getcwd()):
    del sys.path[0]

from dispatchlint.cli import main  # noqa: E402 - only once the working directory is off the path

sys.exit(main())
