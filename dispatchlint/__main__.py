"""``python -m dispatchlint``."""

import sys

from dispatchlint.cli import main

sys.exit(main())
