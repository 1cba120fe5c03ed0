"""The `python -m` commands that print a generated file (CONTRIBUTING.md's table of generated
files: the CLI and stack-file references, the provider's schema, arguments and
declarations, the update pages) behave as the `gpu-infra` commands do: `--help`, an
unknown argument refused with exit 2, and output that cannot be written (standard output
closed or full, a file the generator needs missing) reported in one line with exit 2,
never a traceback; a reader that goes away (`| head`) ends it quietly with 141. Standard
library only, so every layer above may use it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

EXIT_BAD_OUTPUT = 2
"""Output that cannot be written, or an unknown argument (argparse's code)."""
EXIT_READER_GONE = 141
"""128 + SIGPIPE: what `cat` or `git log` exit with when the reader goes away."""


def _say(line: str) -> None:
    """`line` on stderr, or nowhere if stderr is closed or cannot take it."""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr)


def _stdout_is_open() -> bool:
    if sys.stdout is None:
        return False
    try:
        os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return True


def _silence_stdout() -> None:
    """Point descriptor 1 at /dev/null, so that the flush at exit of what could not be
    written fails no more (Python would print an ignored exception and exit 120)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)


def print_generated(render: Callable[[], str], module: str, description: str | None,
                    argv: Sequence[str] | None = None) -> int:
    """`python -m <module>`: parse `argv` (default sys.argv[1:]; only `--help`, showing
    `description`), print what `render` returns and return the exit code: 0, 2 (an unknown
    argument, a render that meets an OSError, an output that cannot be written) or 141 (the
    reader went away)."""
    prog = f"python -m {module}"
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if not _stdout_is_open():
        _say(f"{prog}: cannot write the output: standard output is closed")
        return EXIT_BAD_OUTPUT
    try:
        text = render()
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _say(f"{prog}: {where}{error.strerror or error}")
        return EXIT_BAD_OUTPUT
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_READER_GONE
    except OSError as error:
        _silence_stdout()
        _say(f"{prog}: cannot write the output: {error.strerror or error}")
        return EXIT_BAD_OUTPUT
    return 0


__all__ = ["print_generated"]
