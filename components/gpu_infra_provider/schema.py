"""The provider's Pulumi package schema: what the SDK's component provider host infers from
components.py and args.py, plus the package metadata pulumi-eks's schema carries
(description, keywords, homepage, repository, license, and per-language sections for the SDK
generators), read from the installed distribution's metadata (pyproject.toml: one source).
`python -m gpu_infra_provider.schema > provider/schema.json` regenerates the checked-in copy
(tests/test_component_provider.py keeps it current and asks the running plugin for it over
gRPC)."""

import json
import re
import sys
from importlib.metadata import metadata
from typing import Any

from pulumi.provider.experimental.component import ComponentProvider

import gpu_infra
from gpu_infra.generated import print_generated
from gpu_infra_provider.components import COMPONENTS, PACKAGE

SDK_REQUIRES = ("pulumi",)
"""What a generated Python SDK needs (the components run in the plugin, not in it)."""


def provider_version() -> str:
    """The plugin's version: the installed gpu-infra distribution's (gpu_infra.__version__)."""
    return gpu_infra.__version__


def package_metadata() -> dict[str, Any]:
    """The schema's package metadata, from the distribution's metadata."""
    meta = metadata(gpu_infra.DISTRIBUTION)
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    repository = urls["Repository"]
    requires = {}
    for requirement in meta.get_all("Requires-Dist") or []:
        name, constraint = re.split(r"(?=[<>=!~;\s])", requirement, maxsplit=1)
        if name in SDK_REQUIRES:
            requires[name] = constraint.strip()
    return {
        "description": meta["Summary"],
        "keywords": meta["Keywords"].split(","),
        "homepage": urls["Homepage"],
        "repository": repository,
        "license": meta["License-Expression"],
        "language": {
            "python": {"requires": requires, "readme": meta["Summary"],
                       "pyproject": {"enabled": True}},
            "nodejs": {"dependencies": {"@pulumi/pulumi": "^3.0.0"}},
            "go": {"importBasePath": repository.removeprefix("https://") + "/sdk/go/gpuinfra",
                   "generateResourceContainerTypes": True},
            "csharp": {"rootNamespace": "GpuInfra",
                       "packageReferences": {"Pulumi": "3.*"}},
            "java": {"basePackage": "com.gpuinfra"},
        },
    }


class GpuInfraProvider(ComponentProvider):
    """The component provider the plugin serves: COMPONENTS under `gpu-infra:index:`, its
    inferred schema carrying the package metadata."""

    def __init__(self) -> None:
        super().__init__(COMPONENTS, PACKAGE, None, provider_version())
        assert self.schema is not None, "the component provider infers its schema"
        inferred: dict[str, Any] = json.loads(self.schema)
        extra = package_metadata()
        languages = {language: {**inferred.get("language", {}).get(language, {}), **section}
                     for language, section in extra.pop("language").items()}
        self.schema = json.dumps({**inferred, **extra, "language": languages})


def provider_schema() -> dict[str, Any]:
    """The package schema as JSON data."""
    text = GpuInfraProvider().schema
    assert text is not None
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_text() -> str:
    """provider/schema.json: the schema, keys sorted, one-space indent, final newline."""
    return json.dumps(provider_schema(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.exit(print_generated(schema_text, "gpu_infra_provider.schema", __doc__))
