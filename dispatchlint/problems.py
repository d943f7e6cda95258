"""What goes wrong in a run without stopping it (an unreadable file, a file that does not parse): plain data that
the engine collects and every output format reports, so that machine readers see it, not only stderr."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum


class ProblemKind(Enum):
    #: The file could not be read: the run fails (exit 2), the other files are still checked.
    UNREADABLE = "unreadable-file"
    #: The analyzer failed on the file (a bug of ours): the run fails, the other files are still checked.
    INTERNAL = "internal-error"
    #: The file does not parse (also reported as DL001): the rest of the project is still checked.
    PARSE_ERROR = "parse-error"
    #: The file is larger than the ``max-file-size`` the project set and was not read (a warning, as asked):
    #: the rest is still checked.
    SKIPPED = "skipped-file"
    #: The file is too large or complex to analyse within the memory a file is given: the run fails (exit 2),
    #: the other files are still checked.
    TOO_LARGE = "too-large-file"
    #: The file would take longer to analyse than a file is given, or nests deeper than its analysis can follow
    #: (a construct libcst parses in exponential time, thousands of chained operands): the run fails (exit 2),
    #: the other files are still checked.
    TOO_COMPLEX = "too-complex-file"
    #: The process indexing the file died on each try (the system killed it, or the parser crashed): the run
    #: fails (exit 2), the other files are still checked.
    WORKER_DIED = "worker-died"

    @property
    def fails_run(self) -> bool:
        """Whether the run cannot be trusted to be complete (exit 2)."""
        return self not in (ProblemKind.PARSE_ERROR, ProblemKind.SKIPPED)


@dataclass(frozen=True)
class Problem:
    #: The file, relative to the project root (to the working directory once the engine is done).
    path: str
    kind: ProblemKind
    message: str
    #: Where in the file, when known (a syntax error's position).
    line: int = 0
    column: int = 0

    def moved(self, path: str) -> "Problem":
        return replace(self, path=path)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.column}" if self.line else self.path
        return f"{where}: {self.message}"
