"""``--diff``: the fixes as a unified diff, one file after the other, paths relative to the working directory."""

from __future__ import annotations

import difflib
import io
import os
import re
import tokenize
from pathlib import Path
from typing import List, Mapping, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def render_diff(changes: Mapping[Path, Tuple[bytes, bytes]], cwd: Path) -> str:
    chunks: List[str] = []
    for path, (old, new) in sorted(changes.items()):
        name = Path(os.path.relpath(path, cwd)).as_posix()
        lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{name}", tofile=f"b/{name}")
        chunks.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return "".join(chunks)


def _lines(data: bytes) -> List[str]:
    """The file's lines, decoded as Python decodes the module (BOM and coding cookie), line endings kept."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return _LINE.findall(data.decode(encoding))
