"""One output convention for every command that prints a document: `--format` picks what
is printed (from the formats the command has, the first one the default) and `--output
FILE` writes it to FILE instead of stdout (atomically: a failure leaves no file behind;
`-` is stdout). A renamed flag stays for one release as a deprecated alias that says what
replaces it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from gpu_infra_tools.cli.arguments import OutputFile, is_stdout
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, EXIT_OK
from gpu_infra_tools.files import OutputError, write_text_atomically

FORMATS = ("text", "json", "markdown", "mermaid", "sarif")
"""Every format a command may offer, in this order in `--help`."""


def add_output_arguments(parser: argparse.ArgumentParser, formats: Sequence[str],
                         what: str) -> None:
    """`--format` (one of `formats`, default the first) and `--output FILE`; `what` says
    what is printed."""
    assert set(formats) <= set(FORMATS), formats
    if len(formats) > 1:
        parser.add_argument("--format", choices=list(formats), default=formats[0],
                            help=f"how to print {what} (default: {formats[0]})")
    else:
        parser.set_defaults(format=formats[0])
    parser.add_argument("--output", "-o", type=OutputFile(), metavar="FILE", default=None,
                        help=f"write {what} to FILE instead of stdout ('-' = stdout); "
                             "nothing is written if the command fails")


def emit(args: argparse.Namespace, text: str) -> int:
    """Print `text` (a trailing newline added) to `--output` or stdout; EXIT_OK, or
    EXIT_BAD_INPUT with one line when the file cannot be written."""
    document = text if text.endswith("\n") else text + "\n"
    target = getattr(args, "output", None)
    if target is None or is_stdout(target):
        sys.stdout.write(document)
        return EXIT_OK
    try:
        write_text_atomically(target, document)
    except OutputError as error:
        print(f"--output: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


class DeprecatedAlias(argparse.Action):
    """An old flag kept for one release: it sets `dest` as before and says on stderr what
    replaces it."""

    def __init__(self, option_strings: list[str], dest: str, replacement: str,
                 **kwargs: Any):
        self.replacement = replacement
        help_text = kwargs.pop("help", None)
        super().__init__(option_strings, dest,
                         help=f"{help_text}; deprecated, use {replacement}"
                         if help_text else argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"gpu-infra: {option_string} is deprecated and goes in the next release; use "
              f"{self.replacement}", file=sys.stderr)
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)
