"""Standard streams a command may find closed (`<&-`, `>&-`, `2>&-`) or full (`2>/dev/full`),
made safe before it runs. A closed descriptor 0, 1 or 2 is opened on /dev/null, so that no
file the command opens later takes its number (a stack file read by git as its stdin, an
output file receiving a warning meant for stderr). A closed stdin or stderr then behaves as
/dev/null (the command runs; its exit code tells the outcome); a closed stdout is reported
by main, since the command's output would be lost. Writes to stderr that fail (a full disk,
a closed pipe) are dropped (DiagnosticStream): the exit code still tells the outcome."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, TextIO

MODES = ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))
"""Each standard descriptor and the mode it is opened in on /dev/null."""


def _is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def fill_closed_streams() -> bool:
    """Open /dev/null on each closed standard descriptor, and give Python a /dev/null stream
    for stdin and stderr where it started without one. Return whether stdout was closed."""
    stdout_closed = sys.stdout is None or not _is_open(1)
    for descriptor, mode in MODES:
        if not _is_open(descriptor):
            opened = os.open(os.devnull, mode)
            if opened != descriptor:  # the lowest free number is taken: 0-2 come first
                os.dup2(opened, descriptor)
                os.close(opened)
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (lives as long as Python)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    return stdout_closed


class DiagnosticStream:
    """stderr whose writes never fail: a problem that cannot be reported must not turn into
    a traceback or hide the exit code of the problem itself."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text`, or drop it if the stream cannot take it."""
        try:
            return self.stream.write(text)
        except (OSError, ValueError):  # full, broken, or closed
            return len(text)

    def flush(self) -> None:
        """Flush, or drop what the stream cannot take."""
        with contextlib.suppress(OSError, ValueError):
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
