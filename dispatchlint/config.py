"""``[tool.dispatchlint]`` configuration, read once per run from the project's ``pyproject.toml``."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from dispatchlint._lines import split_lines
from dispatchlint.locations import Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib


class ConfigError(Exception):
    """The configuration cannot be used; the message names the file and the key."""


#: Where test code lives in most Python projects.
DEFAULT_TEST_PATHS = (
    "tests/",
    "test/",
    "testing/",
    "tests_*/",
    "*_tests/",
    "test_*.py",
    "*_test.py",
    "conftest.py",
)


#: No limit: every file is read and analysed (the largest alone, in a worker whose memory is bounded); a project
#: sets ``max-file-size`` to leave its generated modules out on purpose.
DEFAULT_MAX_FILE_SIZE = sys.maxsize


@dataclass(frozen=True)
class Origin:
    """Where settings are written: the file, relative to the project root ("": nowhere, the defaults), and the
    place of each ``gates`` entry in it, for a finding about a setting (DL003: a configured gate is gone)."""

    path: str = ""
    gates: Tuple[Tuple[str, Span], ...] = ()

    def place_of_gate(self, name: str) -> Span:
        return next((span for gate, span in self.gates if gate == name), _FIRST_LINE)


_FIRST_LINE = Span(1, 1, 1, 1)


@dataclass(frozen=True)
class Config:
    """What a project can tell dispatchlint. Every field mirrors a ``[tool.dispatchlint]`` key, but ``origin``."""

    #: Extra gate functions (dotted names); ``coerce_tool_args`` is always a gate.
    gates: Tuple[str, ...] = ()
    #: Functions that restore sanitized property names (``unrename_args``-like), dotted names.
    sanitizers: Tuple[str, ...] = ()
    #: Extra executor tables (dotted names) to treat as tool tables even without other evidence.
    tables: Tuple[str, ...] = ()
    #: Where the fix finds tool schemas when the project has no gate: ``"module:NAME"``.
    schemas: str = ""
    #: Gitignore-style patterns of files and folders not to analyse (``exclude``, then ``extend-exclude``), on
    #: top of the built-in ones (``.git``, ``.venv``, ``build``...).
    exclude: Tuple[str, ...] = ()
    #: Rule codes (or prefixes) to enable instead of the defaults.
    select: Tuple[str, ...] = ()
    #: Rule codes (or prefixes) to enable on top of ``select`` (or of the defaults).
    extend_select: Tuple[str, ...] = ()
    #: Rule codes (or prefixes) to disable.
    ignore: Tuple[str, ...] = ()
    #: Gitignore-style pattern -> rule codes ignored in matching files.
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = field(default=())
    #: More tool-object types that validate their own arguments (base classes, factories, decorators, dotted
    #: names or package prefixes), next to the built-in list of agent frameworks.
    tool_types: Tuple[str, ...] = ()
    #: Parameters that receive a tool call's arguments from code outside the project (a framework's callback):
    #: ``"package.module.function:parameter"``, next to the SDK models and what the project's gated path says.
    sources: Tuple[str, ...] = ()
    #: Attributes of tool objects that run the tool past its own validation (``raw_fn``), next to the built-in
    #: ones of agent frameworks (``_run``, ``func``, ``fn``...).
    sinks: Tuple[str, ...] = ()
    #: Gitignore-style patterns of test code: analysed (a test may be the only caller that links two modules)
    #: but never reported, and never the source of a gate or a sanitizer. ``test-paths = []`` reports them.
    test_paths: Tuple[str, ...] = DEFAULT_TEST_PATHS
    #: Files larger than this many bytes are skipped with a warning (generated or vendored code, data).
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: The oldest Python the project runs on (``target-version = "py312"``, else the lower bound of
    #: ``[project] requires-python``); None: not said. Syntax newer than the running interpreter's is then
    #: judged by the newest grammar, not by this interpreter's compiler.
    target_version: Optional[Tuple[int, int]] = None
    #: Where the keys are written (not a key itself; part of the results' cache key, as every field is).
    origin: Origin = Origin()

    def fingerprint(self) -> str:
        """A stable text that changes whenever the analysis could change (for the cache key)."""
        return repr(
            (self.gates, self.sanitizers, self.tables, self.schemas, self.tool_types, self.test_paths)
            + (self.sources, self.sinks, self.target_version)
        )


_LIST_KEYS = {
    "gates",
    "sanitizers",
    "tables",
    "exclude",
    "extend-exclude",
    "select",
    "extend-select",
    "ignore",
    "tool-types",
    "test-paths",
    "sources",
    "sinks",
}
_KNOWN_KEYS = _LIST_KEYS | {"schemas", "per-file-ignores", "max-file-size", "target-version"}
#: ``target-version`` as Ruff spells it.
_TARGET_VERSION = re.compile(r"py3(\d{1,2})")
#: A ``requires-python`` clause that bounds the version from below: ``>=3.12``, ``~=3.12``, ``==3.12.*``, ``>3.11``.
_LOWER_BOUND = re.compile(r"^\s*(>=|~=|==|>)\s*3\.(\d+)")


def load_config(path: Optional[Path], root: Path) -> Config:
    """Read the settings from ``path``: a ``pyproject.toml`` (its ``[tool.dispatchlint]`` table; no table:
    defaults) or, given with ``--config``, any TOML file holding either that table or the same keys at its top
    level. No file: defaults. ``root``: the project root the settings' ``origin`` is relative to."""
    if path is None or not path.is_file():
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    except RecursionError as error:
        raise _nested_too_deeply(path) from error
    tool = data.get("tool", {})
    if isinstance(tool, dict) and "dispatchlint" in tool:
        section = tool["dispatchlint"]
    elif path.name == "pyproject.toml":
        section = {}
    else:
        section = data
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.dispatchlint] must be a table")
    config = config_from_mapping(section, str(path))
    if config.target_version is None and path.name == "pyproject.toml":
        config = replace(config, target_version=_required_python(data.get("project"), path))
    if not config.gates:
        return config
    places = _places(split_lines(text), "gates", config.gates, section is not data)
    return replace(config, origin=Origin(Path(os.path.relpath(path, root)).as_posix(), places))


def _places(lines: Sequence[str], key: str, names: Sequence[str], in_table: bool) -> Tuple[Tuple[str, Span], ...]:
    """Where each of ``names`` is written as an entry of ``key`` (below ``[tool.dispatchlint]`` when
    ``in_table``): its quoted string, else the key's line, else the file's first line."""
    start = 0
    if in_table:
        header = re.compile(r"\s*\[\s*tool\s*\.\s*[\"']?dispatchlint[\"']?\s*\]")
        start = next((number for number, line in enumerate(lines) if header.match(line)), 0)
    assignment = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
    at = next((number for number in range(start, len(lines)) if assignment.match(lines[number])), None)
    if at is None:
        return tuple((name, _FIRST_LINE) for name in names)
    places = []
    for name in names:
        place = Span(at + 1, 1, at + 1, len(lines[at]) + 1)
        for number in range(at, len(lines)):
            found = [lines[number].find(quote + name + quote) for quote in "\"'"]
            column = min((index for index in found if index >= 0), default=-1)
            if column >= 0:
                place = Span(number + 1, column + 1, number + 1, column + len(name) + 3)
                break
        places.append((name, place))
    return tuple(places)


def declares_project(folder: Path) -> bool:
    """Whether ``folder`` is a project root of its own: its ``pyproject.toml`` has a ``[tool.dispatchlint]``
    table. A file that does not parse declares nothing here (it is reported if it becomes the root)."""
    pyproject = folder / "pyproject.toml"
    try:
        if not pyproject.is_file():
            return False
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # a folder that cannot be searched: it is said when it is walked
        return False
    if "dispatchlint" not in text:  # most pyproject files: no need to parse them
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    except RecursionError as error:  # whether it is a project of its own cannot be decided
        raise _nested_too_deeply(pyproject) from error
    tool = data.get("tool")
    return isinstance(tool, dict) and "dispatchlint" in tool


def _nested_too_deeply(path: Path) -> ConfigError:
    """A TOML file nested deeper than the parser's recursion bound (arrays or inline tables within each other)."""
    return ConfigError(f"{path}: nested too deeply to read (arrays or tables within each other)")


def config_from_mapping(section: Mapping[str, Any], origin: str) -> Config:
    unknown = sorted(set(section) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) in [tool.dispatchlint]: {', '.join(unknown)}")
    values: Dict[str, Any] = {}
    for key in _LIST_KEYS & set(section):
        values[key.replace("-", "_")] = _string_list(section[key], f"{origin}: [tool.dispatchlint] {key}")
    for source in values.get("sources", ()):
        function, _, parameter = source.partition(":")
        if not function or not parameter.isidentifier():
            raise ConfigError(f'{origin}: [tool.dispatchlint] sources entries are "module.function:parameter"')
    values["exclude"] = values.get("exclude", ()) + values.pop("extend_exclude", ())
    if "schemas" in section:
        schemas = section["schemas"]
        if not isinstance(schemas, str) or ":" not in schemas:
            raise ConfigError(f'{origin}: [tool.dispatchlint] schemas must be "module:NAME"')
        values["schemas"] = schemas
    if "max-file-size" in section:
        size = section["max-file-size"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigError(f"{origin}: [tool.dispatchlint] max-file-size must be a positive number of bytes")
        values["max_file_size"] = size
    if "target-version" in section:
        target = section["target-version"]
        match = _TARGET_VERSION.fullmatch(target) if isinstance(target, str) else None
        if match is None:
            raise ConfigError(f'{origin}: [tool.dispatchlint] target-version must be "py3N" (such as "py312")')
        values["target_version"] = (3, int(match.group(1)))
    if "per-file-ignores" in section:
        table = section["per-file-ignores"]
        if not isinstance(table, dict):
            raise ConfigError(f"{origin}: [tool.dispatchlint] per-file-ignores must be a table")
        values["per_file_ignores"] = tuple(
            (pattern, _string_list(codes, f"{origin}: per-file-ignores {pattern!r}"))
            for pattern, codes in sorted(table.items())
        )
    return Config(**values)


def _required_python(project: Any, path: Path) -> Optional[Tuple[int, int]]:
    """The oldest Python 3 minor version ``[project] requires-python`` admits, or None where it sets no lower
    bound (``>3.11`` admits 3.11.1, whose grammar is 3.11's)."""
    specifier = project.get("requires-python") if isinstance(project, dict) else None
    if specifier is None:
        return None
    if not isinstance(specifier, str):
        raise ConfigError(f"{path}: [project] requires-python must be a string")
    bounds = [_LOWER_BOUND.match(clause) for clause in specifier.split(",")]
    minors = [int(bound.group(2)) for bound in bounds if bound is not None]
    return (3, max(minors)) if minors else None


def _string_list(value: Any, where: str) -> Tuple[str, ...]:
    """A list key's strings. A bare string is refused, not read as a list of one: ``exclude = "a, b"`` would
    otherwise be one pattern that matches nothing, and the run would quietly check what it was told to leave."""
    if isinstance(value, str):
        raise ConfigError(f"{where} must be a list of strings, not a string (one item: [{json.dumps(value)}])")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)
