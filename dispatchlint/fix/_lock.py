"""One ``--fix`` at a time per project: an advisory lock on the project's root folder itself.

Two fixes of one project would each compute their rewrite from the files as they were, and the second to write
would find them changed and give up (or, worse, both would write). The second waits for the first instead, and
says so; the caller analyses the project only once it holds the lock (an analysis made before another fix wrote
is out of date, whether or not this run had to wait). The lock is taken on the folder (``flock`` on its
descriptor), so nothing is written into the project, and the system releases it when the process ends, however
it ends. Where ``flock`` does not exist (Windows) fixes are not serialised.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Sequence

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextmanager
def fix_lock(roots: Sequence[Path], waiting: Callable[[Path], None]) -> Iterator[None]:
    """Hold the fix lock of every root (in a stable order, so two runs cannot deadlock); ``waiting(root)`` is
    called before blocking on a root another fix holds."""
    descriptors: List[int] = []
    try:
        for root in sorted(set(roots)):
            if fcntl is None:
                break
            descriptor = os.open(root, os.O_RDONLY)
            descriptors.append(descriptor)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                waiting(root)
                fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        for descriptor in descriptors:
            os.close(descriptor)  # closing the descriptor releases its lock
