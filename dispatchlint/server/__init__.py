"""``dispatchlint server``: a language server that answers from the whole project (``docs/editors.md``).

It needs the ``server`` extra (pygls and lsprotocol); the linter itself depends on libcst and click only, so this
package imports nothing of pygls until the server starts.
"""

from __future__ import annotations

import multiprocessing
import sys

from dispatchlint.plan import UsageError

#: The distributions the server needs, as the ``server`` extra installs them.
_EXTRA = ("pygls", "lsprotocol")


def serve() -> None:
    """Serve the Language Server Protocol on standard input and output until the client says exit.

    Standard output carries the protocol alone: anything else printed while the server runs goes to standard
    error."""
    try:
        from dispatchlint.server._server import build_server
    except ImportError as error:
        if error.name is None or error.name.split(".")[0] not in _EXTRA:
            raise
        raise UsageError(
            "`dispatchlint server` needs the server extra: pip install 'dispatchlint[server]' "
            f"({error.name.split('.')[0]} is not installed)"
        ) from error
    _start_workers_afresh()
    given = sys.stdout
    sys.stdout = sys.stderr
    try:
        build_server().start_io(sys.stdin.buffer, given.buffer)
    finally:
        sys.stdout = given


def _start_workers_afresh() -> None:
    """Indexing workers start from a process of their own (a fork server), never forked from the server.

    The server has threads, one of them blocked reading standard input: a worker forked then inherits the lock of
    ``sys.stdin`` held, and hangs when it closes its standard input before it runs anything, so the analysis never
    ends. The fork server loads the indexer once, so each worker starts with it.
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        multiprocessing.set_start_method("forkserver", force=True)
        multiprocessing.set_forkserver_preload(["dispatchlint.indexing.project", "dispatchlint.indexing.indexer"])
    else:
        multiprocessing.set_start_method("spawn", force=True)


__all__ = ["serve"]
