"""`gpu-infra` command line: validate, schema, plan (and more, one module per command).

Exit codes: 0 success; 1 the plan found mandatory policy violations or the program failed;
2 bad input (unreadable or invalid stack file, bad arguments).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gpu_infra.tools.cli import catalog, clone, cost, plan, publish, schema, validate
from gpu_infra.tools.cli.common import EXIT_BAD_INPUT

COMMANDS = (validate, schema, plan, clone, catalog, cost, publish)
"""Command modules; each has `add_parser(subparsers)` and `run(args) -> int`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on bad arguments too
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = _Parser(prog="gpu-infra", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `gpu-infra` console script."""
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
