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

Across files, a kill between two replacements is covered by a journal (``_journal``): the original bytes are on
disk before the first file is replaced, and the next run puts them back. An interrupt (Ctrl-C, or a SIGTERM or
SIGHUP, which raise one while the files are written) rolls back at once, like a failed replacement.

A read-only file is not rewritten: read-only says "do not edit" (generated code, a vendored copy, a checkout
that wants files opened for edit first), and since the fix is all or none, nothing is written at all. The
failure names the file.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from dispatchlint.fix import _journal
from dispatchlint.fix._errors import FixError


@dataclass(frozen=True)
class _Target:
    """A file to rewrite: the path the fix names, the file it is (symbolic links resolved), the bytes the fix was
    computed from and the new ones."""

    named: Path
    real: Path
    old: bytes
    new: bytes


def write_all(changes: Mapping[Path, Tuple[bytes, bytes]], journal_folders: Sequence[Path] = ()) -> None:
    """Replace every file with its new bytes, or leave every file as it was and raise :class:`FixError`.

    ``journal_folders``: the roots of the projects fixed, where the journal that makes a killed fix recoverable
    is kept while the files are written (none: a kill between two replacements leaves the first replaced).
    """
    targets = _targets(changes)
    for target in targets:
        _check_writable(target)
    journaled = [_journal.Journaled(t.real, t.old, _journal.digest(t.new)) for t in targets]
    done: List[_Target] = []
    with _INTERRUPTS.writing():
        journals = _journal.begin(journal_folders, journaled) if len(targets) > 1 else []
        try:
            for target in targets:
                _INTERRUPTS.check()
                _check_unchanged(target)
                replace_atomically(target.real, target.new)
                done.append(target)
        except (OSError, FixError, KeyboardInterrupt) as error:
            failed = _rollback(done)
            if not failed:  # else the journal stays, for the next run to put back what could not be
                _journal.end(journals)
            if isinstance(error, KeyboardInterrupt):
                raise
            raise _failed(target, error, failed) from error
    _journal.end(journals)


def recover_interrupted(folder: Path) -> List[_journal.Recovery]:
    """Put back the files of a fix that was killed while it wrote them (see ``_journal``); hold the fix lock."""
    return _journal.recover(folder, replace_atomically)


def _failed(target: _Target, error: Union[OSError, FixError], failed: List[_Target]) -> FixError:
    detail = f"; could not restore {', '.join(str(t.named) for t in failed)}" if failed else "; no file was changed"
    if isinstance(error, FixError):
        return FixError(f"{error}{detail}")
    return FixError(f"cannot write {target.named}: {error.strerror or error}{detail}")


class _Interrupts:
    """Interrupts of the command while it writes, between the main thread, where Python runs signal handlers,
    and the thread the command runs on (``dispatchlint._process.on_deep_stack``), where the files are written."""

    def __init__(self) -> None:
        self._requested = threading.Event()
        self._idle = threading.Condition()
        self._writing = False

    def request(self) -> None:
        """Stop the writes (before the next file, rolling back those done), and wait until they have stopped; the
        command is stopping, so none start after this."""
        self._requested.set()
        with self._idle:
            self._idle.wait_for(lambda: not self._writing)

    def reset(self) -> None:
        """A new command starts: what stopped the one before does not stop it."""
        self._requested.clear()

    def writing_now(self) -> bool:
        with self._idle:
            return self._writing

    def check(self) -> None:
        if self._requested.is_set():
            raise KeyboardInterrupt

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._idle:
            self.check()
            self._writing = True
        try:
            yield
        finally:
            with self._idle:
                self._writing = False
                self._idle.notify_all()


_INTERRUPTS = _Interrupts()


@contextmanager
def stopping_rolls_back() -> Iterator[None]:
    """Around a command run on another thread, from the main thread: Ctrl-C, SIGTERM and SIGHUP while files are
    being written let the writes roll back, then stop the command as Ctrl-C does (``KeyboardInterrupt``); at any
    other moment SIGTERM and SIGHUP do what they did before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _INTERRUPTS.reset()
    previous: Dict[int, Any] = {}

    def stop(number: int, frame: Optional[FrameType]) -> None:
        writing = _INTERRUPTS.writing_now()
        _INTERRUPTS.request()
        if number == signal.SIGINT or writing:
            raise KeyboardInterrupt
        before = previous[number]
        if callable(before):
            before(number, frame)
            return
        signal.signal(number, before)
        os.kill(os.getpid(), number)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) in (signal.default_int_handler, signal.SIG_DFL):
            previous[number] = signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


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
