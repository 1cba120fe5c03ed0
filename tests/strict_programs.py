"""The programs the tests type-check as a user's, outside the repository (the packages found
as installed, none of the repository's mypy settings): one importing every public name
(tests/test_public_api.py) and each Python example (tests/test_examples.py). One `mypy
--strict` run checks them all (the `strict_mypy` fixture, once per test process): run apart,
each checked the SDKs it imports (pulumi_alicloud's thousand modules) all over again.

The run keeps mypy's incremental cache in .mypy_cache/programs-outside (a directory of its
own: mypy drops a cache written with other plugins or options, and the repository's run uses
the pydantic plugin and settings a user outside does not have). A fresh clone pays the full
run (23 s of CPU); a run after it rechecks only what changed (half a second), in mypy's
incremental mode, the mode the repository's own run (`make test`) has always used."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

from .conftest import PROJECT_DIR

PUBLIC_API = "public_api.py"
"""The file name of the program importing every public name."""
CACHE = PROJECT_DIR / ".mypy_cache" / "programs-outside"
"""mypy's cache for these programs (`make clean` removes it; tools/land keeps .mypy_cache)."""


def example_file(name: str) -> str:
    """The file name examples/<name>/__main__.py is checked under (mypy needs each module
    name once: every example is a `__main__`)."""
    return "example_" + name.replace("-", "_") + ".py"


def programs() -> dict[str, str]:
    """Source text by file name: PUBLIC_API and example_file(name) for each example."""
    from .test_examples import EXAMPLES_DIR, PYTHON_EXAMPLES
    from .test_public_api import PUBLIC_MODULES, public_names

    imports = [f"from {module_name} import {name} as _{index}_{name}"
               for module_name in PUBLIC_MODULES
               for index, name in enumerate(public_names(importlib.import_module(module_name)))]
    texts = {PUBLIC_API: "\n".join(imports) + "\n"}
    for name in PYTHON_EXAMPLES:
        texts[example_file(name)] = (EXAMPLES_DIR / name / "__main__.py").read_text("utf-8")
    return texts


def type_check(directory: Path, cache: Path) -> dict[str, list[str]]:
    """`mypy --strict` over programs(), written into `directory` and run from it with its
    incremental cache in `cache`: its report lines (errors and their notes) by file name, an
    empty list for a clean program. A run that fails otherwise (a crash, an error in no
    program) is an AssertionError."""
    texts = programs()
    for file_name, text in texts.items():
        (directory / file_name).write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache),
                           *texts], cwd=directory, capture_output=True, text=True,
                          timeout=900, check=False)
    report: dict[str, list[str]] = {file_name: [] for file_name in texts}
    for line in done.stdout.splitlines():
        match = re.match(r"([^:\s]+\.py):\d+:", line)
        if match:
            assert match.group(1) in report, done.stdout + done.stderr
            report[match.group(1)].append(line)
    assert done.returncode == (1 if any(report.values()) else 0), done.stdout + done.stderr
    return report
