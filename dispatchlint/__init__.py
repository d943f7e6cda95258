"""dispatchlint: find agent tool calls that bypass the argument-coercion gate."""

__version__ = "0.1.0"

__all__ = ["__version__"]
