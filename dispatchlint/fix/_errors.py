"""The one error the fix stage raises: a fix cannot be made or written (no libcst here, so that a check that
never fixes never loads it)."""


class FixError(Exception):
    """A fix cannot be made or written; the message names the file and says why."""
