"""`gpu-infra completion SHELL`: print the shell completion script (made by shtab from the
argument parser, so it knows every command and option).

Install it once, e.g. for bash `gpu-infra completion bash > ~/.local/share/bash-completion/
completions/gpu-infra`, for zsh into a directory on `$fpath` as `_gpu-infra`."""

from __future__ import annotations

import argparse

import shtab

from gpu_infra_tools.cli.output import add_output_arguments, emit

SHELLS = ("bash", "zsh", "tcsh")

EXAMPLES = (
    "gpu-infra completion bash > ~/.local/share/bash-completion/completions/gpu-infra",
    "gpu-infra completion zsh > ~/.zfunc/_gpu-infra",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser("completion", help="print a shell completion script")
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    add_output_arguments(parser, ("text",), "the script")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the script for `args.shell` (from the whole parser, `args.build_parser()`)."""
    return emit(args, shtab.complete(args.build_parser(), shell=args.shell))
