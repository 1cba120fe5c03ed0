"""A full stdout, a closed pipe and a missing stdout, in-process, for each command and each
`python -m` generator: descriptor 1 really is /dev/full or a pipe without a reader while the
command runs (tests/hostile.py stdout_on), as in a process started so. What only a process
shows (descriptor 1 so from the start, the entry point, the flush at exit) is proven once
per behaviour in test_hostile_processes.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .hostile import (
    GENERATORS,
    PRINTING,
    Case,
    run_in_process,
    run_module_as_main,
    stdout_on,
)

FULL = "No space left on device"


@pytest.fixture
def dev_full() -> Iterator[int]:
    """A descriptor on /dev/full."""
    descriptor = os.open("/dev/full", os.O_WRONLY)
    yield descriptor
    os.close(descriptor)


@pytest.fixture
def readerless_pipe() -> Iterator[int]:
    """The write end of a pipe whose read end is closed (`| head` that has had enough)."""
    read, write = os.pipe()
    os.close(read)
    yield write
    os.close(write)


@pytest.mark.parametrize("argv", [("validate", "training-dev"), ("catalog",), ("schema",),
                                  ("plan", "training-dev"), ("plan", "training-dev", "--format",
                                                             "json"), ("cost", "training-dev")],
                         ids=" ".join)
def test_a_full_stdout_is_one_line_and_exit_2(argv: tuple[str, ...], dev_full: int,
                                              tmp_path: Path, capsys, monkeypatch):
    with stdout_on(dev_full):
        err = run_in_process(Case("io", "dev-full", argv,
                                  expect=f"gpu-infra: cannot write the output: {FULL}"),
                             tmp_path, capsys, monkeypatch)
    assert len(err.splitlines()) == 1


def test_plan_json_into_dev_full_writes_the_device_and_reports_it(tmp_path: Path, capsys,
                                                                  monkeypatch):
    """A target that is not a regular file is written directly (never replaced)."""
    run_in_process(Case("io", "json-dev-full", ("plan", "training-dev", "--json", "/dev/full"),
                        expect=f"--json: /dev/full: cannot write: {FULL}"),
                   tmp_path, capsys, monkeypatch)
    assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize("argv", [("--help",), ("plan", "--help"), ("catalog",),
                                  ("validate", "training-dev"),
                                  ("plan", "training-dev", "--format", "json")], ids=" ".join)
def test_output_into_a_closed_pipe_ends_quietly_with_141(argv: tuple[str, ...],
                                                         readerless_pipe: int, tmp_path: Path,
                                                         capsys, monkeypatch):
    """Its first write fails: no message, no traceback, 128 + SIGPIPE."""
    with stdout_on(readerless_pipe):
        err = run_in_process(Case("io", "closed-pipe", argv, code=141), tmp_path, capsys,
                             monkeypatch)
    assert err == ""


@pytest.mark.parametrize("module", PRINTING)
def test_a_generator_refuses_an_unknown_argument_and_a_missing_stdout(module: str, capsys,
                                                                      monkeypatch):
    """Before any work: an argument it does not take is usage and exit 2 (it was ignored);
    no sys.stdout (Python's when descriptor 1 is closed) is one line and exit 2 (it was a
    traceback, exit 1)."""
    assert {"gpu_infra_tools.reference.cli", "gpu_infra_provider.codegen"} <= set(GENERATORS)
    assert run_module_as_main(module, ["--no-such-option"], monkeypatch) == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdout", None)
    assert run_module_as_main(module, [], monkeypatch) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"python -m {module}: cannot write the output: standard output is closed"]


@pytest.mark.parametrize("module", ["gpu_infra_tools.reference.cli",
                                    "gpu_infra_tools.reference.stack_file",
                                    "gpu_infra_provider.schema"])
def test_a_generator_into_a_full_stdout_is_one_line_and_exit_2(module: str, dev_full: int,
                                                               capsys, monkeypatch):
    with stdout_on(dev_full):
        code = run_module_as_main(module, [], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.splitlines() == [f"python -m {module}: cannot write the output: {FULL}"]


def test_the_update_policies_outside_the_repository_is_one_line(tmp_path: Path, capsys,
                                                                 monkeypatch):
    output = os.open(tmp_path / "stdout", os.O_WRONLY | os.O_CREAT)
    monkeypatch.chdir(tmp_path)
    with stdout_on(output):
        code = run_module_as_main("gpu_infra_tools.review.update_policies", [], monkeypatch)
    os.close(output)
    assert (code, (tmp_path / "stdout").read_text()) == (2, "")
    assert capsys.readouterr().err.splitlines() == [
        "python -m gpu_infra_tools.review.update_policies: stacks: no shipped stacks here; "
        "run it in the repository's root"]


def test_refresh_prices_into_a_full_stdout_is_one_line(dev_full: int, tmp_path: Path, capsys,
                                                       monkeypatch):
    """It was a traceback; the prices are read, then their output fails."""
    from .alibaba_standin import KEY_ID, SECRET, Account, serving

    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ALIBABA_CLOUD_ECS_METADATA", raising=False)
    kind = "ecs.gn7i-c8g1.2xlarge"
    with serving(Account(prices={kind: 9.1})) as stand_in, stdout_on(dev_full):
        code = run_module_as_main("gpu_infra_tools.cli.refresh_prices",
                                  ["--region", "cn-beijing", "--type", kind, "--dry-run",
                                   "--endpoint", stand_in.url], monkeypatch)
        requests = len(stand_in.requests)
    assert (code, capsys.readouterr().err) == (
        2, f"gpu-infra: cannot write the output: {FULL}\n")
    assert requests > 0
