"""Building blocks of the hostile-input suite (test_hostile_*.py): cases, the in-process and
subprocess runners, and the checks every case makes.

Each case asserts the exit code, that no traceback was printed, that stderr names the field
path (or file) of the problem, that the output stays short, that the command ends within a
wall-clock bound (an alarm in-process, a subprocess timeout otherwise: both catch hangs and
never time speed), and that no file was written or changed where none should be.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import runpy
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gpu_infra_tools.cli import main

from .conftest import PROJECT_DIR, STACKS_DIR
from .shipped import plan_shipped_once

CASE_BOUND_S = 30
"""Wall-clock bound of one case: a hang fails the case instead of the whole run."""
MAX_STDERR_LINE = 600
"""No problem line may be longer (values are cut, never echoed whole)."""
MAX_STDERR_BYTES = 20_000

GENERATORS = sorted(set(re.findall(r"python -m ([a-z_.]+)",
                                   (PROJECT_DIR / "CONTRIBUTING.md").read_text())) - {"pytest"})
"""The `python -m` commands the contributing guide names (generated files, price refresh)."""
PRINTING = [module for module in GENERATORS if module.split(".")[-1] != "refresh_prices"]
"""Those that print a generated file (refresh_prices is a command of its own, with options)."""

TRAINING = (STACKS_DIR / "Pulumi.training-dev.yaml").read_text(encoding="utf-8")
INFERENCE = (STACKS_DIR / "Pulumi.inference-prod.yaml").read_text(encoding="utf-8")


def billion_laughs(levels: int = 9) -> str:
    """A 1.5 kB document whose aliases expand to 9**levels strings."""
    text = 'config:\n  alicloud:region: cn-hangzhou\n  l0: &l0 ["lol","lol","lol","lol","lol",' \
           '"lol","lol","lol","lol"]\n'
    for level in range(1, levels):
        text += f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]\n"
    return text


def nested(levels: int = 600) -> str:
    """A document nested `levels` lists deep under the cluster's tags."""
    return TRAINING.replace("    tags:\n", "    tags_deep: " + "[" * levels + "]" * levels
                            + "\n    tags:\n")


def replaced(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced once (which must be there)."""
    assert old in text, old
    return text.replace(old, new, 1)


@dataclass(frozen=True)
class Case:
    """One hostile invocation. `argv` and `files` may use {d} for the case's directory."""

    kind: str
    name: str
    argv: tuple[str, ...]
    files: dict[str, str | bytes] = field(default_factory=dict)
    code: int = 2
    expect: str = ""
    """Text stderr must contain: the field path or file of the problem."""
    writes: frozenset[str] = frozenset()
    """Files (relative to {d}) the command may create or change."""
    fault: Callable[[pytest.MonkeyPatch], None] | None = None
    """Injects a fault (read-only disk, full disk) before the command runs."""

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


def setup_case(case: Case, directory: Path) -> list[str]:
    """Write the case's files; return argv with {d} filled in."""
    for relative, content in case.files.items():
        path = directory / relative.replace("{d}", str(directory))
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return [arg.replace("{d}", str(directory)) for arg in case.argv]


def snapshot(directory: Path) -> dict[str, str]:
    """Every file below `directory` (hidden ones too) -> a digest of its content."""
    return {str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def changed_files(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


class Hung(Exception):
    """The case ran past its wall-clock bound."""


@contextlib.contextmanager
def wall_clock_bound(seconds: float) -> Iterator[None]:
    """Raise Hung in the main thread if the block runs longer than `seconds`."""
    def expire(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_output(case: Case, code: int, out: str, err: str) -> None:
    """The checks every case makes on what the command printed."""
    assert "Traceback" not in out + err, err
    assert code == case.code, f"exit {code}, expected {case.code}; stderr: {err[:2000]}"
    assert case.expect in err, f"{case.expect!r} not in stderr: {err[:2000]}"
    assert len(err.encode()) <= MAX_STDERR_BYTES, f"{len(err)} bytes on stderr"
    assert max(map(len, err.splitlines()), default=0) <= MAX_STDERR_LINE


def run_in_process(case: Case, directory: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> str:
    """Run `case` through the CLI's main() and make every check (a stack planned before in
    this process, e.g. the shipped training-dev, is not planned again: tests/shipped.py);
    return what it printed on stderr."""
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)
    argv = setup_case(case, directory)
    before = snapshot(directory)
    if case.fault:
        case.fault(monkeypatch)
    with wall_clock_bound(CASE_BOUND_S):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse
            code = exit_.code
    out, err = capsys.readouterr()
    monkeypatch.undo()
    check_output(case, code, out, err)
    assert changed_files(before, snapshot(directory)) <= case.writes
    return err


@contextlib.contextmanager
def stdout_on(target: int) -> Iterator[None]:
    """Descriptor 1 pointed at the descriptor `target` and sys.stdout a new stream on it, as
    Python makes it for a process started so (block-buffered, not a terminal's), for the
    block; both restored after it. The stream is closed before descriptor 1 comes back, so
    what is still buffered is flushed where a process flushes it at exit (an OSError there,
    "Exception ignored" and exit 120 in a process, fails the test)."""
    saved = os.dup(1)
    previous = sys.stdout
    try:
        os.dup2(target, 1)
        stream = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (closed below)
        sys.stdout = stream
        try:
            yield
        finally:
            sys.stdout = previous
            stream.close()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def run_module_as_main(module: str, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """`python -m <module> ARGV` in this process: the module's `__main__` block run as `-m`
    runs it (runpy); its exit code."""
    monkeypatch.setattr(sys, "argv", [module, *argv])
    with warnings.catch_warnings():  # the module is imported already, as -m would not find it
        warnings.filterwarnings("ignore", "'.*' found in sys.modules", RuntimeWarning)
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        except SystemExit as exit_:
            return int(exit_.code or 0)
    raise AssertionError(f"python -m {module} did not exit")


def cli_command(*args: str) -> list[str]:
    """The installed CLI as a subprocess command line."""
    return [sys.executable, "-c", "import sys; from gpu_infra_tools.cli import main; "
            "sys.exit(main())", *args]


def run_subprocess(case: Case, directory: Path, **options) -> subprocess.CompletedProcess:
    """Run `case` as a real process (bounded by a timeout) and make every check."""
    argv = setup_case(case, directory)
    before = snapshot(directory)
    result = subprocess.run(cli_command(*argv), cwd=PROJECT_DIR, capture_output=True,
                            text=True, timeout=CASE_BOUND_S, **options)
    check_output(case, result.returncode, result.stdout or "", result.stderr)
    assert changed_files(before, snapshot(directory)) <= case.writes
    return result
