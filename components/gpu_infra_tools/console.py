"""The `gpu-infra` console script ([project.scripts] in pyproject.toml).

It installs the Ctrl-C handler (tools/interrupt.py) first and only then imports the command
line, which loads the module of the command it runs (a plan loads Pulumi with it: about a
second, and a Ctrl-C in that second used to end in a KeyboardInterrupt traceback). The late
import is for that order, not to dodge a circle (console is the top layer; it imports only
downwards)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from gpu_infra_tools.interrupt import exit_interrupted


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run `gpu-infra` with `argv` (default sys.argv[1:]) and exit with its code; Ctrl-C exits
    130 from the first instruction on."""
    signal.signal(signal.SIGINT, exit_interrupted)
    from gpu_infra_tools import cli

    sys.exit(cli.main(argv))
