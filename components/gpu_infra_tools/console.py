"""The `gpu-infra` console script ([project.scripts] in pyproject.toml).

It installs the Ctrl-C handler (tools/interrupt.py) first and only then imports the command
line, which loads the module of the command it runs (a plan loads Pulumi with it: about a
second, and a Ctrl-C in that second used to end in a KeyboardInterrupt traceback). The late
import is for that order, not to dodge a circle (console is the top layer; it imports only
downwards).

A command is a short batch whose objects live until it ends, so the cyclic collector is
paused for it, as the plan engine already pauses it for the program (a command that runs on,
`publish-queue-metric --command`, turns it back on for its loop), and at the end every object
is moved out of its reach (gc.freeze) before the interpreter shuts down. On a plan of
training-prod (about 200,000 objects: the provider SDK's modules, the models, the plan) the
collections while the modules load took 0.2 s and those at shutdown 0.45 s, of 1.5 s. What
is left by then needs no collecting: the command has flushed its output and closed its
files, and exit handlers (temporary directories) still run.
"""

from __future__ import annotations

import gc
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from gpu_infra_tools.interrupt import exit_interrupted


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run `gpu-infra` with `argv` (default sys.argv[1:]) and exit with its code; Ctrl-C exits
    130 from the first instruction on."""
    signal.signal(signal.SIGINT, exit_interrupted)
    gc.disable()
    from gpu_infra_tools import cli

    code = cli.main(argv)
    gc.freeze()
    sys.exit(code)
