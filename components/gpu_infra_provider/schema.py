"""The provider's Pulumi package schema, as the SDK's component provider host infers it from
components.py and args.py. `python -m gpu_infra_provider.schema > provider/schema.json`
regenerates the checked-in copy (tests/test_component_provider.py keeps it current and
asks the running plugin for it over gRPC)."""

import json
import sys
from importlib.metadata import version
from typing import Any

from pulumi.provider.experimental.component import ComponentProvider

from gpu_infra_provider.components import COMPONENTS, PACKAGE


def provider_version() -> str:
    """The plugin's version: the installed gpu-infra distribution's."""
    return version("gpu-infra")


def component_provider() -> ComponentProvider:
    """The provider the plugin serves."""
    return ComponentProvider(COMPONENTS, PACKAGE, None, provider_version())


def provider_schema() -> dict[str, Any]:
    """The package schema as JSON data."""
    text = component_provider().schema
    assert text is not None, "the component provider infers its schema when constructed"
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_text() -> str:
    """provider/schema.json: the schema, keys sorted, one-space indent, final newline."""
    return json.dumps(provider_schema(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
