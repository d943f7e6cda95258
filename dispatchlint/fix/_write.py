"""Write rewritten files all or none: each atomically, the whole set rolled back on any failure.

A file is replaced by writing a temporary file beside it (same folder, so the same file system), giving it the
original's permission bits and owner, and renaming it over the original (``os.replace``): a reader, or a run
killed at any moment, sees either the old file or the new one, never half of one. Immediately before each
replacement the file is compared with the bytes the fix was computed from; if an editor saved it meanwhile, or
the n-th replacement fails, the n-1 files already replaced get their original bytes back the same way, so a fix
that spans modules never leaves the project half-fixed.

What the project links stays linked: a symbolic link is written through, to the file it points to (once, however
many links name it); a file with hard links, or whose owner a new file could not be given, is rewritten in place
(the same inode, so every link and the owner stay), which is the one case a kill can leave half-written.

A read-only file is not rewritten: read-only says "do not edit" (generated code, a vendored copy, a checkout
that wants files opened for edit first), and since the fix is all or none, nothing is written at all. The
failure names the file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Tuple

from dispatchlint.fix._errors import FixError


@dataclass(frozen=True)
class _Target:
    """A file to rewrite: the path the fix names, the file it is (symbolic links resolved), the bytes the fix was
    computed from and the new ones."""

    named: Path
    real: Path
    old: bytes
    new: bytes


def write_all(changes: Mapping[Path, Tuple[bytes, bytes]]) -> None:
    """Replace every file with its new bytes, or leave every file as it was and raise :class:`FixError`."""
    targets = _targets(changes)
    for target in targets:
        _check_writable(target)
    done: List[_Target] = []
    for target in targets:
        try:
            _check_unchanged(target)
            replace_atomically(target.real, target.new)
        except (OSError, FixError) as error:
            failed = _rollback(done)
            detail = f"; could not restore {', '.join(str(t.named) for t in failed)}" if failed else ""
            if isinstance(error, FixError):
                raise FixError(f"{error}{detail or '; no file was changed'}") from error
            reason = error.strerror or str(error)
            raise FixError(f"cannot write {target.named}: {reason}{detail or '; no file was changed'}") from error
        done.append(target)


def _targets(changes: Mapping[Path, Tuple[bytes, bytes]]) -> List[_Target]:
    """One target per file, whatever number of symbolic links name it; the same file fixed two ways is refused."""
    by_file: Dict[Path, _Target] = {}
    for path, (old, new) in changes.items():
        real = Path(os.path.realpath(path))
        known = by_file.get(real)
        if known is None:
            by_file[real] = _Target(path, real, old, new)
        elif known.new != new:
            raise FixError(
                f"cannot fix {path}: it is the same file as {known.named} ({real}), which the fix would rewrite "
                "differently; no file was changed"
            )
    return list(by_file.values())


def replace_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` (a regular file, links resolved) by ``data``, keeping its mode, owner and hard links."""
    status = path.stat()
    if status.st_nlink > 1:
        _rewrite_in_place(path, data)
        return
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".dispatchlint", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        if not _same_owner(temporary, status):
            os.unlink(temporary)
            _rewrite_in_place(path, data)
            return
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _same_owner(temporary: str, status: os.stat_result) -> bool:
    """Whether the new file has (or could be given) the original's owner and group."""
    current = os.stat(temporary)
    if (current.st_uid, current.st_gid) == (status.st_uid, status.st_gid):
        return True
    try:
        os.chown(temporary, status.st_uid, status.st_gid)
    except (OSError, AttributeError):  # not ours to give away (or no owners on this platform)
        return False
    return True


def _rewrite_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as stream:
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


def _check_writable(target: _Target) -> None:
    """The file is a writable regular file (before anything is written)."""
    try:
        status = target.real.stat()
    except OSError as error:
        raise FixError(f"cannot fix {target.named}: {error.strerror or error}; no file was changed") from error
    if not stat.S_ISREG(status.st_mode):
        raise FixError(f"cannot fix {target.named}: not a regular file; no file was changed")
    if not status.st_mode & stat.S_IWUSR:
        raise FixError(f"cannot fix {target.named}: the file is read-only; no file was changed")
    try:
        _check_unchanged(target)
    except FixError as error:
        raise FixError(f"{error}; no file was changed") from error


def _check_unchanged(target: _Target) -> None:
    """The file still holds the bytes the fix was computed from (an editor may have saved it meanwhile)."""
    try:
        current = target.real.read_bytes()
    except OSError as error:
        raise FixError(f"cannot fix {target.named}: {error.strerror or error}") from error
    if current != target.old:
        raise FixError(f"cannot fix {target.named}: it changed while it was being fixed")


def _rollback(done: List[_Target]) -> List[_Target]:
    failed = []
    for target in reversed(done):
        try:
            replace_atomically(target.real, target.old)
        except OSError:
            failed.append(target)
    return failed
