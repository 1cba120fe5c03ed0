"""A progress line on stderr for a plan that takes a while: nothing for the first
PROGRESS_DELAY_SECONDS, then `planning <stack>: 5 s` updated every second and erased at the
end. Only when stderr is a terminal (never in pipes, CI logs or tests' captured output)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

PROGRESS_DELAY_SECONDS = 2.0
"""Plans quicker than this print nothing."""
ERASE_LINE = "\r\033[K"


@contextmanager
def progress_line(label: str, stream: TextIO | None = None,
                  delay: float = PROGRESS_DELAY_SECONDS, interval: float = 1.0
                  ) -> Iterator[None]:
    """Show `label: N s` on `stream` (default stderr) while the block runs, if it is a
    terminal and the block takes longer than `delay` seconds."""
    out = sys.stderr if stream is None else stream
    if not out.isatty():
        yield
        return
    done = threading.Event()
    start = time.monotonic()
    shown = False

    def show() -> None:
        nonlocal shown
        if done.wait(delay):
            return
        while not done.is_set():
            out.write(f"{ERASE_LINE}{label}: {time.monotonic() - start:.0f} s")
            out.flush()
            shown = True
            done.wait(interval)

    worker = threading.Thread(target=show, name="gpu-infra-progress", daemon=True)
    worker.start()
    try:
        yield
    finally:
        done.set()
        worker.join()
        if shown:
            out.write(ERASE_LINE)
            out.flush()
