"""Errors shared by the codemod modules (kept free of heavy imports)."""


class EngineError(Exception):
    """A file could not be processed; the message is one line for the user."""
