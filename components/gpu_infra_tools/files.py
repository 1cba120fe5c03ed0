"""Writing output files so that a failure leaves nothing behind: the text goes to a temporary
file in the target's directory, is flushed to disk, and only then replaces the target. A full
or read-only disk therefore never leaves a half-written or empty file."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class OutputError(Exception):
    """An output file that cannot be written; the message is one line: the path, what
    failed, and why."""


def _default_mode() -> int:
    """0o666 minus the process umask: the mode `open()` would give a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def check_writable_target(path: Path) -> None:
    """Refuse a target that can never be written (its directory is missing, or it is a
    directory), before any work is done. Raises OutputError."""
    if path.is_dir():
        raise OutputError(f"{path}: is a directory; give a file name")
    if not path.parent.is_dir():
        raise OutputError(f"{path}: the directory {path.parent} does not exist")


def write_text_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Replace `path` with `text` (UTF-8) atomically; `mode` defaults to the existing file's
    mode, else what a new file gets. A target that exists but is not a regular file (a
    terminal, /dev/stdout, a pipe) is written directly. Raises OutputError."""
    check_writable_target(path)
    try:
        existing = path.stat()
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise OutputError(f"{path}: cannot write: {error.strerror}") from None
    try:
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with path.open("w", encoding="utf-8") as out:
                out.write(text)
            return
        _replace(path, text, mode if mode is not None else
                 stat.S_IMODE(existing.st_mode) if existing else _default_mode())
    except OSError as error:
        raise OutputError(f"{path}: cannot write: {error.strerror or error}") from None


def _replace(path: Path, text: str, mode: int) -> None:
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
