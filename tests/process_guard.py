"""The fast tier starts no process: a test not marked `slow` that starts one (subprocess,
asyncio subprocesses, os.system, fork, multiprocessing) fails, naming what it started.
Enforced in every run (`make test` too), so a new process-level test cannot slip into the
tier you run while editing."""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

STARTERS: tuple[tuple[Any, str], ...] = (
    (subprocess.Popen, "_execute_child"),  # subprocess.run/check_output, asyncio, os.popen
    (_posixsubprocess, "fork_exec"),  # multiprocessing's spawn and forkserver
    (os, "system"), (os, "fork"), (os, "forkpty"),
)
"""Every way the standard library starts a process, as (owner, attribute)."""


@contextmanager
def no_processes(test_id: str) -> Iterator[None]:
    """Within the block, starting a process fails the test `test_id`."""

    def refuse(name: str) -> Callable[..., Any]:
        def refused(*_args: Any, **_kwargs: Any) -> Any:
            pytest.fail(f"{test_id} starts a process ({name}): mark it @pytest.mark.slow "
                        "(the fast tier starts none) or test the code in-process",
                        pytrace=False)
        return refused

    saved = [(owner, name, getattr(owner, name)) for owner, name in STARTERS]
    for owner, name, _ in saved:
        setattr(owner, name, refuse(name))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def guarded(item: pytest.Item) -> bool:
    """Whether `item` must start no process (it is not marked slow)."""
    return item.get_closest_marker("slow") is None
