"""Ctrl-C: the command ends at once with exit code 130 (128 + SIGINT, the shell convention)
and one line on stderr, never a traceback or a hang. Standard library only, so the console
script (tools/console.py) installs it before anything heavy is imported.

At once, from the signal handler, rather than by a KeyboardInterrupt: raised inside the
mock engine's event loop, a KeyboardInterrupt is swallowed by the SDK and the plan then
waits forever. Output already printed is flushed first; files are only ever written
atomically (tools/files.py), so nothing is left half-written.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType

EXIT_INTERRUPTED = 130


@contextmanager
def exit_on_interrupt() -> Iterator[None]:
    """While the block runs, SIGINT ends the process with EXIT_INTERRUPTED. A no-op outside
    the main thread (only it can take signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, exit_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def exit_interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT handler: flush what was printed, say `interrupted`, exit EXIT_INTERRUPTED."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, RuntimeError, ValueError):  # closed, or interrupted mid-write
            stream.flush()
    try:
        os.write(2, b"\ninterrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)
