"""`gpu-infra schema`: the JSON Schema of a stack file, for editors (the repository keeps a
copy in schema/gpu-infra-stack.schema.json)."""

from __future__ import annotations

import argparse
import json

from gpu_infra.schema.editor import editor_schema
from gpu_infra_tools.cli.output import add_output_arguments, emit

EXAMPLES = (
    "gpu-infra schema > schema/gpu-infra-stack.schema.json",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser("schema", help="print the JSON Schema of a stack file")
    add_output_arguments(parser, ("json",), "the schema")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema as JSON."""
    return emit(args, json.dumps(editor_schema(), indent=2))
