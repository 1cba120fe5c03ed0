"""The fast tier starts no process (tests/process_guard.py): in a test not marked slow,
every way of starting one fails the test, and a slow test starts them freely."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
from typing import Any

import pytest


def _in_a_loop_of_its_own(coroutine: Any) -> Any:
    """Run `coroutine` in a new event loop, leaving the thread's current loop (the mock
    engine's) as it was."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.close()


STARTS = {
    "subprocess.run": lambda: subprocess.run(["true"], check=False),
    "os.system": lambda: os.system("true"),
    "os.fork": lambda: os.fork(),
    "asyncio": lambda: _in_a_loop_of_its_own(asyncio.create_subprocess_exec("true")),
    "multiprocessing spawn": lambda: multiprocessing.get_context("spawn").Process(
        target=print).start(),
}


@pytest.mark.parametrize("start", STARTS.values(), ids=STARTS.keys())
def test_a_test_not_marked_slow_cannot_start_a_process(start):
    with pytest.raises(pytest.fail.Exception, match="starts a process .* mark it"):
        start()


@pytest.mark.slow  # starts a process: the guard leaves slow tests alone
def test_a_slow_test_starts_processes():
    assert subprocess.run(["true"], check=False).returncode == 0
