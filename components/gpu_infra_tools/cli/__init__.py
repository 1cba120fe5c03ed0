"""`gpu-infra`: validate, plan and cost GPU clusters on Alibaba Cloud offline, clone stacks,
browse the GPU catalog.

Exit codes: 0 success; 1 the plan found mandatory policy violations or the program failed;
2 bad input (unreadable or invalid stack file, bad arguments) or output that cannot be
written (a full or read-only disk, a full stdout; nothing half-written is left behind);
130 interrupted (Ctrl-C); 141 the reader of the output went away (`| head`), quietly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from gpu_infra_tools.cli import (
    catalog,
    clone,
    completion,
    cost,
    plan,
    policy,
    pr_comment,
    publish,
    schema,
    validate,
)
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, stdout_failed
from gpu_infra_tools.interrupt import exit_on_interrupt

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

COMMANDS = (validate, schema, plan, policy, clone, catalog, cost, publish, pr_comment,
            completion)
"""Command modules; each has `add_parser(subparsers)`, `run(args) -> int`, a docstring (the
description in `--help`) and EXAMPLES (command lines shown under it)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 on bad arguments too
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """As argparse's, without swallowing OSError: `--help | head` ends like every
        other command into a closed pipe (main)."""
        if message:
            (file or sys.stderr).write(message)


def package_version() -> str:
    """The installed gpu-infra version (`unknown` when run from a bare checkout)."""
    try:
        return version("gpu-infra")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = _Parser(prog="gpu-infra", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog="`gpu-infra COMMAND --help` describes a command, with examples.")
    parser.add_argument("--version", action="version",
                        version=f"gpu-infra {package_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                       metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
        _describe(list(subparsers.choices.values())[-1], command)
    return parser


def _describe(parser: argparse.ArgumentParser, command: ModuleType) -> None:
    """`--help` of a command: its module docstring, then its examples."""
    parser.description = command.__doc__
    parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in command.EXAMPLES)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `gpu-infra` console script."""
    with exit_on_interrupt():
        try:
            try:
                args = build_parser().parse_args(argv)
            except SystemExit:  # --help, --version, bad arguments: flushed here, not at exit
                sys.stdout.flush()
                raise
            code: int = args.run(args)
            sys.stdout.flush()  # a full disk behind stdout shows here, not at exit
        except OSError as error:
            if error.filename is not None:  # a file a command did not handle itself
                raise
            return stdout_failed(error)
        return code


if __name__ == "__main__":
    sys.exit(main())
