"""Every command, enumerated from the parser (a new command is covered the day it lands):
each path argument refused when missing or of the wrong kind before any work starts, a full
disk behind each output argument, and closed or full standard streams. One line and exit 2
for each problem, never a traceback, nothing written. See tests/hostile.py for the checks
each case makes."""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_infra_tools.cli import build_parser, command_module
from gpu_infra_tools.cli.arguments import (
    InputDirectory,
    InputFile,
    OutputDirectory,
    OutputFile,
    PathArgument,
)

from .conftest import PROJECT_DIR
from .fake_cms import SECRET, serving
from .hostile import CASE_BOUND_S, Case, run_in_process

SAMPLES: dict[str, tuple[str, ...]] = {
    "clone": ("clone", "training-dev", "copy-x", "--dry-run"),
    "cost": ("cost", "training-dev"),
    "pr-comment": ("pr-comment", "--base", "HEAD", "--output", "{d}/comment.md"),
    "publish-queue-metric": ("publish-queue-metric", "--region", "cn-hangzhou", "--group-id",
                             "42", "--fleet", "f", "--metric", "m", "--value", "3",
                             "--endpoint", "{endpoint}"),
}
"""A command line that works, by command, where the command's first example writes into the
project or reaches a cloud; every other command runs its first `--help` example (a new
command's example may need what a test machine lacks, e.g. credentials: then it exits 2,
and its streams are still judged against that run)."""


OFFLINE = ("validate", "plan", "cost", "schema", "catalog", "job", "policy", "completion",
           "clone", "pr-comment")
"""The commands that work without a cloud (their samples succeed here)."""


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [commands] = [action for action in parser._actions
                  if isinstance(action, argparse._SubParsersAction)]
    return dict(commands.choices)


COMMANDS = _subparsers()


def sample(command: str) -> tuple[str, ...]:
    """A working command line of `command` ({d}: the case's directory)."""
    if command in SAMPLES:
        return SAMPLES[command]
    words = command_module(command).EXAMPLES[0].split()[1:]
    return tuple(words[:words.index(">")] if ">" in words else words)


def path_arguments() -> Iterator[tuple[str, str, PathArgument]]:
    """(command, option, its type) for every path option (each of its names) of every
    command."""
    for command, parser in COMMANDS.items():
        for action in parser._actions:
            if isinstance(action.type, PathArgument):
                for option in action.option_strings:
                    yield command, option, action.type


def names(command: str, option: str) -> list[str]:
    """Every name of `option` of `command`, the main one first."""
    [action] = [a for a in COMMANDS[command]._actions if option in a.option_strings]
    return action.option_strings


PATH_ARGUMENTS = list(path_arguments())


def test_the_path_arguments_are_found_and_typed():
    """The enumeration sees the path options a reader knows of (so an empty list cannot
    pass the tests below), each with the type of its kind."""
    found = {(command, option): type(kind) for command, option, kind in PATH_ARGUMENTS}
    assert found[("plan", "--json")] is OutputFile
    assert found[("plan", "--sarif")] is OutputFile
    assert found[("plan", "--acknowledgements")] is InputFile
    assert found[("plan", "--policy-config")] is InputFile
    assert found[("pr-comment", "--out")] is OutputFile  # its old name, still taken
    assert found[("validate", "--output")] is OutputFile
    assert found[("validate", "--environment-values")] is InputFile
    assert found[("pr-comment", "--sarif-dir")] is OutputDirectory
    assert found[("clone", "--stacks-dir")] is InputDirectory
    untyped = [(command, action.option_strings or action.dest)
               for command, parser in COMMANDS.items() for action in parser._actions
               if action.type is Path]
    assert untyped == []  # a bare Path argument would be checked by nobody


BAD_PATHS: dict[type[PathArgument], dict[str, tuple[str, str]]] = {
    InputFile: {"missing": ("{d}/nowhere.yaml", "cannot read: No such file or directory"),
                "directory": ("{d}/a-directory", "cannot read: Is a directory")},
    InputDirectory: {"missing": ("{d}/nowhere", "no such directory"),
                     "file": ("{d}/a-file", "is a file, not a directory")},
    OutputFile: {"in-missing-directory": ("{d}/nowhere/out", "the directory {d}/nowhere does "
                                                             "not exist"),
                 "directory": ("{d}/a-directory", "is a directory; give a file name")},
    OutputDirectory: {"below-a-file": ("{d}/a-file/sub", "cannot be created: {d}/a-file is "
                                                         "not a directory"),
                      "file": ("{d}/a-file", "is a file, not a directory")},
}
"""Per kind of path argument: bad paths and what stderr says about each."""


def _bad_path_cases() -> list[Case]:
    cases = []
    for command, option, kind in PATH_ARGUMENTS:
        for name, (path, expect) in BAD_PATHS[type(kind)].items():
            cases.append(Case(f"path-{name}", f"{command} {option}",
                              (*sample(command), option, path),
                              {"a-directory/keep": "", "a-file": "x"},
                              expect=f"argument {'/'.join(names(command, option))}: "
                                     f"{path}: {expect}"))
    return cases


BAD_PATH_CASES = _bad_path_cases()


@pytest.mark.parametrize("case", BAD_PATH_CASES, ids=[case.id for case in BAD_PATH_CASES])
def test_a_bad_path_argument_is_refused_before_work_starts(case: Case, tmp_path: Path,
                                                           capsys, monkeypatch):
    """Refused while parsing: the command's code never runs (a network or a plan would)."""
    monkeypatch.setattr(argparse.Namespace, "run", _never_run, raising=False)
    _run_case(case, tmp_path, capsys, monkeypatch)


def _never_run(*_args: object) -> int:
    raise AssertionError("the command ran after a bad path argument")


def _run_case(case: Case, tmp_path: Path, capsys, monkeypatch) -> None:
    directory = str(tmp_path)
    filled = Case(case.kind, case.name, tuple(arg.replace("{endpoint}", "http://127.0.0.1:9")
                                              for arg in case.argv),
                  case.files, case.code, case.expect.replace("{d}", directory), case.writes,
                  case.fault)
    run_in_process(filled, tmp_path, capsys, monkeypatch)


STACK_COMMANDS = [command for command, parser in COMMANDS.items()
                  if any(action.dest == "stack" for action in parser._actions)]


def _stack_cases() -> list[Case]:
    cases = []
    for command in STACK_COMMANDS:
        words = sample(command)
        for name, stack, expect in (
                ("missing", "{d}/Pulumi.nowhere.yaml", "{d}/Pulumi.nowhere.yaml: no such stack "
                                                       "file"),
                ("directory", "{d}/Pulumi.dir.yaml", "{d}/Pulumi.dir.yaml: not a regular file")):
            position = _stack_position(command, words)
            argv = (*words[:position], stack, *words[position + 1:])
            if position == len(words):  # an optional STACK (policy coverage)
                argv = (*words, stack)
            cases.append(Case(f"stack-{name}", command, argv, {"Pulumi.dir.yaml/keep": ""},
                              expect=expect))
        [stack] = [a for a in COMMANDS[command]._actions if a.dest == "stack"]
        position = _stack_position(command, words)
        cases.append(Case("stack-empty", command,
                          (*words[:position], "", *words[position + 1:]),
                          expect=f"argument {stack.metavar}: empty; give a value"))
    return cases


def _stack_position(command: str, words: tuple[str, ...]) -> int:
    """Where STACK is in the sample: the first word after the command (and its action)."""
    return 2 if command == "policy" else 1


STACK_CASES = _stack_cases()


@pytest.mark.parametrize("case", STACK_CASES, ids=[case.id for case in STACK_CASES])
def test_a_missing_or_wrong_kind_stack_is_one_line(case: Case, tmp_path: Path, capsys,
                                                   monkeypatch):
    assert set(STACK_COMMANDS) >= {"validate", "plan", "cost", "job", "clone", "policy"}
    _run_case(case, tmp_path, capsys, monkeypatch)


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file flushed to disk and every directory created fails with ENOSPC."""
    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", full)
    monkeypatch.setattr(os, "mkdir", full)


OUTPUTS = [(command, option, kind) for command, option, kind in PATH_ARGUMENTS
           if isinstance(kind, OutputFile | OutputDirectory) and option.startswith("--")
           and command in OFFLINE]
"""The outputs a test can fill: those of the commands that run without a cloud."""


FULL_DISK_TARGETS = {OutputFile: ("{d}/out", "cannot write"),
                     OutputDirectory: ("{d}/new/out", "cannot create")}
"""Per kind of output: a target that does not exist yet, and what fails on a full disk."""


def _full_disk_case(command: str, option: str, kind: PathArgument) -> pytest.param:
    target, failing = FULL_DISK_TARGETS[type(kind)]
    case = Case("full-disk", f"{command} {option}", (*sample(command), option, target),
                fault=_full_disk,
                expect=f"{names(command, option)[0]}: {target}: {failing}: No space left "
                       "on device")
    marks = [pytest.mark.slow] if command == "pr-comment" else []  # asks git for the diff
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_full_disk_case(*output) for output in OUTPUTS])
def test_a_full_disk_behind_an_output_leaves_nothing(case: Case, tmp_path: Path, capsys,
                                                     monkeypatch):
    """Exit 2, one line naming the option and file; no file, empty or not, left behind."""
    _run_case(case, tmp_path, capsys, monkeypatch)


STREAMS_RUNNER = """
import gc, json, os, re, sys
sys.path.insert(0, os.getcwd())
from gpu_infra_tools import cli
from tests.shipped import plan_shipped_once, shipped_plan
import pytest

cases = json.loads(sys.argv[1])
monkeypatch = pytest.MonkeyPatch()
plan_shipped_once(monkeypatch)  # a stack is planned once, in this parent, for every child
for stack in sorted({word for argv, _, _ in cases for word in argv
                     if os.path.isfile(f"stacks/Pulumi.{word}.yaml")}):
    shipped_plan(stack)
for module in cli.COMMANDS:
    cli.command_module(module)
gc.freeze()  # what is loaded stays out of the children's collections: no copy of its pages
results = []
for argv, setup, scratch in cases:
    pid = os.fork()
    if pid == 0:
        for descriptor, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(f"{scratch}.{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                    descriptor)
        for descriptor, stream, target in setup:
            if target == "closed":
                os.close(descriptor)
                setattr(sys, stream, None)  # as Python starts with the descriptor closed
            else:
                os.dup2(os.open(target, os.O_RDWR), descriptor)
        if sys.stdout is not None:
            sys.stdout = open(1, "w", closefd=False)
        if sys.stderr is not None:
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # line-buffered, as Python's
        try:
            code = cli.main(argv)
            if sys.stdout is not None:
                sys.stdout.flush()
        except SystemExit as exit_:
            code = exit_.code
        except BaseException:
            code = 99
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)
    results.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(results))
"""
"""Runs each (argv, stream setup, scratch) case in a child forked from a parent that loaded
every command and planned each stack once; a child's stdout and stderr go to scratch.out and
.err unless the setup closes the descriptor or points it at a device. Prints the exit codes.
The parent freezes what it loaded before forking (gc.freeze, as Python's documentation
advises before fork() and as the console script does for a command): a child's collections
no longer write into every inherited page, which took two thirds of the children's CPU."""

STREAM_SETUPS: dict[str, list[tuple[int, str, str]]] = {
    "normal": [],
    "stdin-closed": [(0, "stdin", "closed")],
    "stdout-closed": [(1, "stdout", "closed")],
    "stderr-closed": [(2, "stderr", "closed")],
    "stdout-full": [(1, "stdout", "/dev/full")],
    "stderr-full": [(2, "stderr", "/dev/full")],
    "stderr-full-bad-option": [(2, "stderr", "/dev/full")],
}
"""How each case's standard streams are set up (the last one also passes an unknown option:
a problem that cannot be reported)."""


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fake CloudMonitor on loopback, keys in the environment, and every HTTP client of a
    child pointed at a dead loopback proxy: no command reaches beyond this machine."""
    with serving() as cloud:
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI-test")
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
        for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            monkeypatch.setenv(proxy, "http://127.0.0.1:9")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        yield cloud.url


@pytest.mark.slow  # one process, forking a child per command and stream setup
def test_every_command_with_closed_or_full_standard_streams(tmp_path: Path, endpoint: str):
    """Per command: stdin or stderr closed, or stderr full, change neither the exit code nor
    stdout; stdout closed or full is one line and exit 2 (a command that printed nothing
    cannot notice a full stdout, and needs not); a bad option with stderr full still exits
    2; never a traceback."""
    cases, where = [], []
    for command in COMMANDS:
        for setup_name, setup in STREAM_SETUPS.items():
            scratch = tmp_path / f"{command}.{setup_name}"
            scratch.mkdir()
            argv = [arg.replace("{d}", str(scratch)).replace("{endpoint}", endpoint)
                    for arg in sample(command)]
            if setup_name.endswith("-bad-option"):
                argv.append("--no-such-option")
            cases.append((argv, setup, str(scratch / "streams")))
            where.append((command, setup_name, scratch))
    done = subprocess.run([sys.executable, "-c", STREAMS_RUNNER, json.dumps(cases)],
                          cwd=PROJECT_DIR, capture_output=True, text=True,
                          timeout=CASE_BOUND_S * len(cases))
    assert done.returncode == 0, done.stderr
    codes = dict(zip([(c, s) for c, s, _ in where], json.loads(done.stdout), strict=True))

    def output(command: str, setup: str, name: str) -> str:
        path = tmp_path / f"{command}.{setup}" / f"streams.{name}"
        text = path.read_text() if path.exists() else ""
        return re.sub(r"request=\S+", "request=*", text)

    for command in COMMANDS:
        reference, out = codes[(command, "normal")], output(command, "normal", "out")
        assert reference in (0, 1, 2), (command, output(command, "normal", "err"))
        assert command not in SAMPLES or reference in (0, 1), command  # the samples work
        for setup in STREAM_SETUPS:
            err = output(command, setup, "err")
            assert "Traceback" not in err, (command, setup, err)
            if setup == "stderr-full-bad-option":
                assert codes[(command, setup)] == 2, (command, setup)
            elif setup in ("stdin-closed", "stderr-closed", "stderr-full"):
                assert (codes[(command, setup)], output(command, setup, "out")) == (
                    reference, out), (command, setup, err)
            elif setup == "stdout-closed" or (setup == "stdout-full" and out):
                assert codes[(command, setup)] == 2, (command, setup, err)
                assert len(err.splitlines()) == 1 and "cannot write the output" in err, err
        assert not (tmp_path / f"{command}.stdout-closed" / "comment.md").exists()
