"""Write rewritten files all or none: each atomically, the whole set rolled back on any failure.

A file is replaced by writing a temporary file beside it (same folder, so the same file system), giving it the
original's permission bits, and renaming it over the original (``os.replace``): a reader never sees half a file.
When the n-th replacement fails, the n-1 files already replaced get their original bytes back the same way, so a
fix that spans modules never leaves the project half-fixed.

A read-only file is not rewritten: read-only says "do not edit" (generated code, a vendored copy, a checkout
that wants files opened for edit first), and since the fix is all or none, nothing is written at all. The
failure names the file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import List, Mapping, Tuple

from dispatchlint.fix._source import FixError


def write_all(changes: Mapping[Path, Tuple[bytes, bytes]]) -> None:
    """Replace every file with its new bytes, or leave every file as it was and raise :class:`FixError`."""
    for path, (old, _) in changes.items():
        _check_writable(path, old)
    done: List[Path] = []
    try:
        for path, (_, new) in changes.items():
            replace_atomically(path, new)
            done.append(path)
    except OSError as error:
        failed = _rollback(done, changes)
        detail = f"; could not restore {', '.join(map(str, failed))}" if failed else "; no file was changed"
        raise FixError(f"cannot write {path}: {error.strerror or error}{detail}") from error


def replace_atomically(path: Path, data: bytes) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".dispatchlint", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _check_writable(path: Path, analysed: bytes) -> None:
    """The file is writable and still holds what was analysed (an editor may have saved it meanwhile)."""
    try:
        mode = path.stat().st_mode
        current = path.read_bytes()
    except OSError as error:
        raise FixError(f"cannot fix {path}: {error.strerror or error}; no file was changed") from error
    if not mode & stat.S_IWUSR:
        raise FixError(f"cannot fix {path}: the file is read-only; no file was changed")
    if current != analysed:
        raise FixError(f"cannot fix {path}: it changed while it was being fixed; no file was changed")


def _rollback(done: List[Path], changes: Mapping[Path, Tuple[bytes, bytes]]) -> List[Path]:
    failed = []
    for path in reversed(done):
        try:
            replace_atomically(path, changes[path][0])
        except OSError:
            failed.append(path)
    return failed
