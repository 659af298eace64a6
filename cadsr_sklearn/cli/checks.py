"""Checks of the command's options before a search: each failure is a :class:`UsageError`.

A wrong operator, device or output path is reported before the search starts,
not after it has run for minutes.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..user_input import UsageError

__all__ = ["check_operators", "check_device", "check_writable", "check_plot_folder"]


def check_operators(binary, unary) -> None:
    """The library's check of the names given to --binary and --unary, as a usage error."""
    from ..expressions.library import DEFAULT_BINARY, DEFAULT_UNARY
    from ..expressions.library import check_operators as check

    try:
        check(DEFAULT_BINARY if binary is None else binary,
              DEFAULT_UNARY if unary is None else unary, labels=("--binary", "--unary"))
    except ValueError as err:
        raise UsageError(str(err).rstrip(".")) from None


def check_device(device: str) -> str:
    """The torch device that ``--device`` names, as text (``auto`` resolved)."""
    from ..search.devices import resolve_device

    try:
        return str(resolve_device(device))
    except ValueError as err:
        raise UsageError(str(err)) from None


def check_writable(path: str) -> None:
    """Fail before the search, not after it, unless ``path`` names a file in an existing folder.

    Write permission is left to the write itself.
    """
    if Path(path).is_dir() or path.endswith(("/", os.sep)):
        raise UsageError(f"{path}: is a folder; give a file name")
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{path}: the folder {parent} does not exist")


def check_plot_folder(path: str) -> None:
    """``--plots`` is a folder (created if missing), so an existing file is an error."""
    if Path(path).exists() and not Path(path).is_dir():
        raise UsageError(f"{path}: is a file; --plots takes a folder")
