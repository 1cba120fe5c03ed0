"""The console script around the command line: Ctrl-C handler first, the cyclic collector
paused for the command and the objects frozen before the interpreter shuts down."""

from __future__ import annotations

import gc
import signal
from collections.abc import Iterator, Sequence

import pytest

from gpu_infra_tools import cli, console


@pytest.fixture
def collector_restored() -> Iterator[None]:
    yield
    gc.enable()


def test_a_command_runs_with_the_collector_paused_and_exits_with_its_objects_frozen(
        monkeypatch: pytest.MonkeyPatch, collector_restored: None) -> None:
    during: list[bool] = []
    frozen_after_command: list[bool] = []

    def command_line(argv: Sequence[str] | None) -> int:
        during.append(gc.isenabled())
        return 3

    monkeypatch.setattr(cli, "main", command_line)
    monkeypatch.setattr(gc, "freeze", lambda: frozen_after_command.append(bool(during)))
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # keep pytest's own handler
    with pytest.raises(SystemExit) as exited:
        console.main(["validate", "stacks/Pulumi.training-dev.yaml"])
    assert exited.value.code == 3
    assert during == [False]
    assert frozen_after_command == [True]
