"""The dependency a fix creates: code that now imports ``dispatchlint.runtime`` needs the runtime installed.

The fix declares it where the project declares its dependencies: ``[project].dependencies`` of the project's
``pyproject.toml``, else Poetry's ``[tool.poetry.dependencies]``, else ``requirements.txt``; with none of them it
says where to add it. It asks for ``dispatchlint-runtime``, the standard-library-only distribution of the runtime
(an agent in production needs neither libcst nor click), at the version whose API the generated code calls.

The file is edited as text, one line or one array item added and every other byte kept; the edit is kept only when
the edited file, read as TOML, is the original plus that one dependency (else the fix says where to add it).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from dispatchlint import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the backport, on older Pythons
    import tomli as tomllib

RUNTIME_DISTRIBUTION = "dispatchlint-runtime"
#: Distributions that install ``dispatchlint.runtime`` (the linter ships it too).
_PROVIDERS = {"dispatchlint-runtime", "dispatchlint"}
_REQUIREMENT = f"{RUNTIME_DISTRIBUTION}>={__version__}"
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
#: Where a project declares its dependencies, in the order the fix looks (under the project root): what the fix
#: edits when code it generates imports the runtime, so the stored fix edits depend on them.
DECLARATION_FILES = ("pyproject.toml", "requirements.txt")


@dataclass(frozen=True)
class DependencyEdit:
    """What declaring the runtime changes: ``path`` from ``old`` to ``new``, or (``path`` None) where to add it."""

    path: Optional[Path]
    old: bytes
    new: bytes
    note: str


@dataclass(frozen=True)
class _Added:
    """A file with the requirement added, and where in it."""

    text: str
    where: str


#: What a file says: None, the runtime is declared already; an edit; a reason the edit cannot be made; or ''
#: when the file declares no dependencies (the next file is tried).
_Outcome = Union[None, _Added, str]


def runtime_dependency(root: Path, contents: Mapping[Path, bytes]) -> Optional[DependencyEdit]:
    """Declare ``dispatchlint-runtime`` for the project under ``root`` (None: it is declared already).
    ``contents`` stands in for files an earlier pass of the fix changed."""
    editors: Tuple[Callable[[str], _Outcome], ...] = (_edit_pyproject, _edit_requirements)
    for name, edit in zip(DECLARATION_FILES, editors):
        path = root / name
        data = contents.get(path)
        if data is None and path.is_file():
            try:
                data = path.read_bytes()
            except OSError as error:
                return _by_hand(f"{name} cannot be read: {error.strerror or error}")
        if data is None:
            continue
        try:
            outcome = edit(data.decode("utf-8"))
        except UnicodeDecodeError:
            outcome = "it is not UTF-8"
        if outcome is None:
            return None
        if isinstance(outcome, _Added):
            note = f"add `{_REQUIREMENT}` to {outcome.where}: the fixed code imports `dispatchlint.runtime`"
            return DependencyEdit(path, data, outcome.text.encode("utf-8"), note)
        if outcome:
            return _by_hand(f"{name}: {outcome}")
    return _by_hand("no pyproject.toml with a [project] table or Poetry dependencies, and no requirements.txt")


def _by_hand(why: str) -> DependencyEdit:
    note = f"the fixed code imports `dispatchlint.runtime`: add `{_REQUIREMENT}` to the project's dependencies ({why})"
    return DependencyEdit(None, b"", b"", note)


def _edit_pyproject(text: str) -> _Outcome:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "it does not parse as TOML"
    newline = "\r\n" if "\r\n" in text else "\n"
    project = document.get("project")
    tool = document.get("tool")
    poetry = tool.get("poetry", {}).get("dependencies") if isinstance(tool, dict) else None
    if isinstance(project, dict):
        if "dependencies" in project.get("dynamic", []):
            return "its [project].dependencies are dynamic, set by the build backend"
        declared = project.get("dependencies", [])
        if not isinstance(declared, list):
            return "its [project].dependencies is not an array"
        if any(isinstance(item, str) and _provides(item) for item in declared):
            return None
        if "dependencies" in project:
            edited = _array_item_added(text, "project", newline)
        else:
            edited = _line_added(text, "project", f'dependencies = ["{_REQUIREMENT}"]', newline)
        expected = dict(project, dependencies=[*declared, _REQUIREMENT])
        return _checked(text, edited, ("project",), expected, "[project].dependencies")
    if isinstance(poetry, dict):
        if any(_normalized(name) in _PROVIDERS for name in poetry):
            return None
        line = f'{RUNTIME_DISTRIBUTION} = ">={__version__}"'
        edited = _line_added(text, "tool.poetry.dependencies", line, newline)
        expected = dict(poetry, **{RUNTIME_DISTRIBUTION: f">={__version__}"})
        return _checked(text, edited, ("tool", "poetry", "dependencies"), expected, "[tool.poetry.dependencies]")
    return ""


def _checked(text: str, edited: Optional[str], keys: Tuple[str, ...], expected: Dict[str, Any], where: str) -> _Outcome:
    """The edit, when the edited file reads as the original with the table at ``keys`` now ``expected``."""
    if edited is None:
        return f"its {where} is not written where the fix can add to it"
    try:
        wanted, found = tomllib.loads(text), tomllib.loads(edited)
    except tomllib.TOMLDecodeError:
        return f"its {where} could not be added to"
    table = wanted
    for key in keys[:-1]:
        table = table[key]
    table[keys[-1]] = expected
    if found != wanted:
        return f"its {where} could not be added to without changing something else"
    return _Added(edited, f"{where} in pyproject.toml")


def _edit_requirements(text: str) -> _Outcome:
    if any(_provides(line) for line in text.splitlines() if not line.lstrip().startswith(("#", "-"))):
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    separator = "" if not text or text.endswith(("\n", "\r")) else newline
    return _Added(text + separator + _REQUIREMENT + newline, "requirements.txt")


def _provides(requirement: str) -> bool:
    match = _NAME.match(requirement)
    return match is not None and _normalized(match.group(1)) in _PROVIDERS


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------------------------------------- text edits


def _table_body(text: str, header: str) -> Optional[Tuple[int, int]]:
    """Where the table ``[header]`` holds its keys: from after its header line to the next header (or the end)."""
    found = re.search(rf"(?m)^[ \t]*\[{re.escape(header)}\][ \t]*(?:#[^\r\n]*)?(?:\r?\n|$)", text)
    if found is None:
        return None
    following = re.compile(r"(?m)^[ \t]*\[")
    start = found.end()
    position = start
    while True:
        header_found = following.search(text, position)
        if header_found is None:
            return start, len(text)
        if _inside_value(text, start, header_found.start()):
            position = header_found.end()  # a line of a multi-line array that starts with ``[``
            continue
        return start, header_found.start()


def _line_added(text: str, header: str, line: str, newline: str) -> Optional[str]:
    """``line`` added after the last key of table ``[header]``."""
    body = _table_body(text, header)
    if body is None:
        return None
    start, end = body
    lines = text[start:end].splitlines(keepends=True)
    keep = len(lines)
    while keep and (not lines[keep - 1].strip() or lines[keep - 1].lstrip().startswith("#")):
        keep -= 1
    at = start + sum(len(item) for item in lines[:keep])
    before = text[:at]
    if before and not before.endswith(("\n", "\r")):
        before += newline
    return before + line + newline + text[at:]


def _array_item_added(text: str, header: str, newline: str) -> Optional[str]:
    """The requirement added as the last item of the ``dependencies`` array of table ``[header]``: on the line of
    the other items when the array is written on one line, else on a line of its own before the ``]``, indented as
    the last item is."""
    body = _table_body(text, header)
    if body is None:
        return None
    key = re.compile(r"(?m)^[ \t]*dependencies[ \t]*=[ \t]*\[").search(text, body[0], body[1])
    scanned = _array_end(text, key.end()) if key is not None else None
    if key is None or scanned is None:
        return None
    close, last = scanned
    item = f'"{_REQUIREMENT}"'
    comma = "" if text[last] in "[," else ","
    head, tail = text[: last + 1] + comma, text[last + 1 :]
    line_start = text.rfind("\n", 0, close) + 1
    if line_start <= key.end() or text[line_start:close].strip():  # ``[... "b"]``: one line
        return head + ("" if text[last] == "[" else " ") + item + tail
    last_line = text[text.rfind("\n", 0, last) + 1 :]
    indent = last_line[: len(last_line) - len(last_line.lstrip(" \t"))] or "    "
    return head + text[last + 1 : line_start] + indent + item + "," + newline + text[line_start:]


def _array_end(text: str, start: int) -> Optional[Tuple[int, int]]:
    """For an array whose ``[`` ends at ``start``: the index of its ``]`` and of the last character before it that
    is not space or comment (the ``[`` itself when it is empty)."""
    depth = 1
    last = start - 1
    index = start
    while index < len(text):
        char = text[index]
        if char == "#":
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
            continue
        if char in "\"'":
            closed = _string_end(text, index)
            if closed is None:
                return None
            last, index = closed - 1, closed
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index, last
        if not char.isspace():
            last = index
        index += 1
    return None


def _string_end(text: str, start: int) -> Optional[int]:
    """The index just past the TOML string that starts at ``start``."""
    quote = text[start]
    triple = text.startswith(quote * 3, start)
    delimiter = quote * 3 if triple else quote
    index = start + len(delimiter)
    while index < len(text):
        if quote == '"' and text[index] == "\\":
            index += 2
            continue
        if text.startswith(delimiter, index):
            return index + len(delimiter)
        if not triple and text[index] in "\r\n":
            return None
        index += 1
    return None


def _inside_value(text: str, start: int, position: int) -> bool:
    """Whether ``position`` is inside an array or a string opened after ``start`` (so not a table header)."""
    depth = 0
    index = start
    while index < position:
        char = text[index]
        if char == "#":
            end = text.find("\n", index)
            index = position if end < 0 else end
            continue
        if char in "\"'":
            closed = _string_end(text, index)
            if closed is None or closed > position:
                return True
            index = closed
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        index += 1
    return depth > 0
