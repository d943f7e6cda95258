"""A fix that rewrites several files stays all or none when the process is killed between two replacements.

No order of the writes is safe in general: a table wrapped in one file and a parse it makes wrong deleted in
another each break the tool without the other. So before the first file is replaced, the original bytes of every
file (and a digest of what the fix writes there) are written to a journal in each project root the fix touches,
and the journal is removed once the last file is replaced. A journal left behind is the trace of a fix that was
killed: the next run of the project, holding the fix lock (so the fix that wrote it has ended), puts back every
file that still holds what that fix wrote, leaves alone a file edited since (and says so), and removes the journal.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Sequence

from dispatchlint.fix._errors import FixError

JOURNAL_NAME = ".dispatchlint-fix-journal.json"
_VERSION = 1


@dataclass(frozen=True)
class Journaled:
    """A file as the fix found it (``old``) and the digest of what the fix writes in its place."""

    path: Path
    old: bytes
    new_digest: str


@dataclass(frozen=True)
class Recovery:
    """What putting back an interrupted fix did: the files restored, and those edited since, left as they are."""

    journal: Path
    restored: List[Path]
    edited: List[Path]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def begin(folders: Sequence[Path], files: Sequence[Journaled]) -> List[Path]:
    """Write the journal of ``files`` into each folder (durably: on disk before any file is replaced)."""
    text = json.dumps(
        {
            "version": _VERSION,
            "files": [
                {"path": str(f.path), "old": base64.b64encode(f.old).decode("ascii"), "new": f.new_digest}
                for f in files
            ],
        }
    ).encode("ascii")
    written = []
    for folder in sorted(set(folders)):
        journal = folder / JOURNAL_NAME
        temporary = folder / f"{JOURNAL_NAME}.tmp"
        try:
            with open(temporary, "wb") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, journal)
            written.append(journal)
            _sync_folder(folder)
        except BaseException as error:  # an interrupt too: no file was replaced yet, so no journal may stay
            end(written)
            if temporary.exists():
                temporary.unlink()
            if isinstance(error, OSError):
                reason = error.strerror or error
                raise FixError(f"cannot write the fix journal {journal}: {reason}; no file was changed") from error
            raise
    return written


def end(journals: Sequence[Path]) -> None:
    """The fix is complete (or rolled back): its journals go."""
    for journal in journals:
        try:
            journal.unlink()
            _sync_folder(journal.parent)
        except FileNotFoundError:
            pass


def recover(folder: Path, replace: Callable[[Path, bytes], None]) -> List[Recovery]:
    """Put back the files of the interrupted fix whose journal ``folder`` holds (none: an empty list).

    The caller holds the fix lock of ``folder``, so no fix is writing there now. ``replace`` replaces a file
    atomically (as the fix writes them).
    """
    journal = folder / JOURNAL_NAME
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as error:
        reason = error.strerror or error
        raise FixError(f"cannot read the journal of an interrupted --fix, {journal}: {reason}") from error
    restored, edited = [], []
    for entry in _read(journal, data):
        try:
            current = entry.path.read_bytes()
            if current == entry.old:
                continue
            if digest(current) != entry.new_digest:
                edited.append(entry.path)
                continue
            replace(entry.path, entry.old)
        except FileNotFoundError:
            edited.append(entry.path)  # deleted since: nothing of the fix is left there
            continue
        except OSError as error:
            reason = error.strerror or error
            raise FixError(f"cannot restore {entry.path} after an interrupted --fix: {reason}") from error
        restored.append(entry.path)
    end([journal])
    return [Recovery(journal, restored, edited)]


def _read(journal: Path, data: bytes) -> List[Journaled]:
    def malformed() -> FixError:
        return FixError(
            f"{journal}: the journal of an interrupted --fix cannot be read; check the files it names, then remove it"
        )

    try:
        parsed: Any = json.loads(data)
        if not isinstance(parsed, dict) or parsed.get("version") != _VERSION:
            raise malformed()
        return [
            Journaled(Path(entry["path"]), base64.b64decode(entry["old"], validate=True), str(entry["new"]))
            for entry in parsed["files"]
        ]
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise malformed() from error


def _sync_folder(folder: Path) -> None:
    """Make a rename or an unlink in ``folder`` durable (where folders can be opened: not on Windows)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
