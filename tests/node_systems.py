"""The supported node systems and their own interpreters and shells, found on this machine:
the node code is run under each (not only under the test runner's Python and bash).

| system | python3 | /bin/sh | bash |
|---|---|---|---|
| Alibaba Cloud Linux 3 | 3.6 | bash | 4.4 |
| Ubuntu 22.04 | 3.10 | dash | 5.1 |
| Ubuntu 24.04 | 3.12 | dash | 5.2 |

Pythons come from PATH (python3.X) or pyenv (PYENV_ROOT, else ~/.pyenv, versions/3.X.*);
dash from PATH (`.ci/run` installs it with apt-get when it is missing). A missing one skips
its tests with a reason naming what to install."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest

PYTHONS = {"alinux-3": "3.6", "ubuntu-22.04": "3.10", "ubuntu-24.04": "3.12"}
"""Each supported system's python3 version."""

T = TypeVar("T")


@functools.cache
def find_python(version: str) -> str | None:
    """A python<version> that runs: under pyenv's versions, else on PATH (a pyenv shim on
    PATH fails unless that version is selected, so each candidate is tried); found once per
    test process."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [str(path) for path in sorted(root.glob(f"versions/{version}.*/bin/"
                                                         f"python{version}"))]
    candidates += [found] if (found := shutil.which(f"python{version}")) else []
    for candidate in candidates:
        done = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() == str(
                tuple(int(part) for part in version.split("."))):
            return candidate
    return None


def python_of(system: str) -> str:
    """The interpreter standing in for `system`'s python3; skips the test loudly if absent."""
    version = PYTHONS[system]
    found = find_python(version)
    if found is None:
        pytest.skip(f"NODE SYSTEM NOT TESTED: no python{version} ({system}'s python3) on PATH "
                    f"or under pyenv; install it (pyenv install {version}) to test {system}")
    return found


def dash() -> str:
    """dash, Ubuntu's /bin/sh (Cloud Assistant runs image-build tasks with `sh -c`)."""
    found = shutil.which("dash")
    if found is None:
        pytest.skip("NODE SYSTEM NOT TESTED: no dash (Ubuntu's /bin/sh); apt-get install dash")
    return found


def at_once(work: Callable[[str], T], keys: list[str]) -> dict[str, T]:
    """`work(key)` for every key (a system, or a case of one), each in a thread of its own:
    runs that wait (a timeout, a retry's backoff) overlap instead of adding up."""
    with ThreadPoolExecutor(len(keys)) as pool:
        return dict(zip(keys, pool.map(work, keys), strict=True))
