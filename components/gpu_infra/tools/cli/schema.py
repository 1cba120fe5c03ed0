"""`gpu-infra schema`: the JSON Schema of a stack file, for editors."""

from __future__ import annotations

import argparse
import json

from gpu_infra.limits.regions import REGIONS
from gpu_infra.schema import CLUSTER_ADAPTER, CLUSTER_KEY, REGION_KEY
from gpu_infra.tools.cli.common import EXIT_OK


def stack_file_schema() -> dict:
    """JSON Schema of a whole `Pulumi.<stack>.yaml` (the cluster key plus the region)."""
    cluster = CLUSTER_ADAPTER.json_schema()
    definitions = cluster.pop("$defs", {})
    for model in definitions.values():  # region is read from alicloud:region, not the cluster
        model.get("properties", {}).pop("region", None)
        if "region" in model.get("required", []):
            model["required"].remove("region")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpu-infra stack file",
        "type": "object",
        "required": ["config"],
        "properties": {
            "config": {
                "type": "object",
                "required": [REGION_KEY, CLUSTER_KEY],
                "properties": {
                    REGION_KEY: {"type": "string", "enum": sorted(REGIONS),
                                 "description": "Alibaba Cloud region of the stack."},
                    CLUSTER_KEY: cluster,
                },
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
        },
        "$defs": definitions,
    }


def add_parser(subparsers) -> None:
    """Register the command."""
    parser = subparsers.add_parser("schema", help="print the JSON Schema of a stack file")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema as JSON."""
    print(json.dumps(stack_file_schema(), indent=2))
    return EXIT_OK
