"""`gpu-infra`: validate, plan and cost GPU clusters on Alibaba Cloud offline, clone stacks,
browse the GPU catalog.

Exit codes: 0 success; 1 the plan found mandatory policy violations or the program failed;
2 bad input (unreadable or invalid stack file, bad arguments, a missing or wrong-kind path)
or output that cannot be written (a full or read-only disk, a full or closed stdout; nothing
half-written is left behind); 70 an internal error (a bug: one line, please report it);
130 interrupted (Ctrl-C); 141 the reader of the output went away (`| head`), quietly.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from gpu_infra.schema.problems import shorten
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    stdout_failed,
    with_standard_streams,
)
from gpu_infra_tools.interrupt import exit_on_interrupt

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

COMMANDS = {"validate": "validate", "schema": "schema", "plan": "plan", "job": "job",
            "policy": "policy",
            "clone": "clone", "catalog": "catalog", "cost": "cost", "preflight": "preflight",
            "publish-queue-metric": "publish", "submit": "submit", "pr-comment": "pr_comment",
            "completion": "completion"}
"""Command name -> its module in this package; each module has `add_parser(subparsers)`,
`run(args) -> int`, a docstring (the description in `--help`) and EXAMPLES (command lines
shown under it). A run imports the module of its own command only (main): `validate`,
`schema` and `catalog` load no plan engine, no policy pack and no other command's code."""


def command_module(name: str) -> ModuleType:
    """The module of command `name`."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name]}")


def command_modules() -> list[ModuleType]:
    """Every command's module, in COMMANDS order."""
    return [command_module(name) for name in COMMANDS]


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
    """The installed gpu-infra version (gpu_infra.__version__: `unknown` when run from a
    bare checkout)."""
    import gpu_infra

    return gpu_infra.__version__


class _VersionAction(argparse.Action):
    """`--version`: print the version and exit (it is looked up only then)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        print(f"gpu-infra {package_version()}")
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every command, or with command `only` in full and the others
    by name (their modules not loaded)."""
    parser = _Parser(prog="gpu-infra", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog="`gpu-infra COMMAND --help` describes a command, with examples.")
    parser.add_argument("--version", action=_VersionAction)
    parser.set_defaults(build_parser=build_parser)  # for `completion`: the whole parser
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                       metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            command = command_module(name)
            command.add_parser(subparsers)
            _describe(list(subparsers.choices.values())[-1], command)
        else:
            subparsers.add_parser(name)
    return parser


@functools.cache
def _parser_for(only: str | None) -> argparse.ArgumentParser:
    """build_parser(only), built once per process: parse_args changes nothing in a parser (it
    fills a new Namespace; `append` copies its default list), so main reuses it."""
    return build_parser(only)


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option; the top-level options
    take no value), or None."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def _describe(parser: argparse.ArgumentParser, command: ModuleType) -> None:
    """`--help` of a command: its module docstring, then its examples."""
    parser.description = command.__doc__
    parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in command.EXAMPLES)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `gpu-infra` console script."""
    return with_standard_streams(lambda: _run(argv))


def _run(argv: Sequence[str] | None) -> int:
    """Parse `argv` and run its command: its exit code, every failure one line on stderr."""
    with exit_on_interrupt():
        try:
            try:
                words = sys.argv[1:] if argv is None else list(argv)
                args = _parser_for(chosen_command(words)).parse_args(words)
            except SystemExit:  # --help, --version, bad arguments: flushed here, not at exit
                sys.stdout.flush()
                raise
            code: int = args.run(args)
            sys.stdout.flush()  # a full disk behind stdout shows here, not at exit
        except OSError as error:
            if error.filename is not None:  # a file a command did not handle itself
                print(f"gpu-infra: {error.filename}: {error.strerror or error}",
                      file=sys.stderr)
                return EXIT_BAD_INPUT
            return stdout_failed(error)
        except Exception as error:  # noqa: BLE001 (a bug: one line instead of a traceback)
            return internal_error(error)
        return code


def internal_error(error: Exception) -> int:
    """Report an exception no command expected in one line (its type, message and the line
    of code it came from) and return EXIT_INTERNAL."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    message = shorten(f"{type(error).__name__}: {error}".splitlines()[0])
    print(f"gpu-infra: internal error{where}: {message} (a bug: please report it)",
          file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
