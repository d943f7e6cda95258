"""Indexing, the second stage: each module parsed once and read into frozen facts (tables, dispatch sites,
gates, schemas, imports, the shapes a fix would edit), in worker processes, through the facts cache.

Nothing here looks at another module: what crosses modules is the linker's (``dispatchlint.linking``).
"""
