"""TypeScript declarations of the provider's schema, in the shape of the SDK `pulumi package
add` generates (classes with camelCase args and `pulumi.Output` properties), so the
TypeScript example type-checks offline with `tsc` against them (tests/test_component_provider.py).
`python -m gpu_infra_provider.typescript > examples/typescript/sdk/index.d.ts` regenerates it.
"""

import json
import sys
from collections.abc import Mapping
from typing import Any

from gpu_infra.generated import print_generated
from gpu_infra_provider.schema import schema_text

PRIMITIVES = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}
HEADER = """\
// TypeScript declarations of the gpu-infra component provider (GENERATED from its schema by
// gpu_infra_provider.typescript; do not edit): what `pulumi package add` gives a program.
import * as pulumi from "@pulumi/pulumi";
"""


def _local_name(token: str) -> str:
    return token.rsplit(":", 1)[-1]


def type_text(prop: Mapping[str, Any], output: bool = False) -> str:
    """The TypeScript type of a schema property: pulumi.Input<...> unless plain (an input)
    or part of an output (`output`)."""
    if "$ref" in prop:
        ref = prop["$ref"]
        text = "any" if ref == "pulumi.json#/Any" else _local_name(ref.rsplit("/", 1)[-1])
    elif prop.get("type") == "array":
        text = f"{type_text(prop['items'], output)}[]"
    elif prop.get("type") == "object":
        text = f"{{[key: string]: {type_text(prop.get('additionalProperties', {}), output)}}}"
    else:
        text = PRIMITIVES.get(prop.get("type", ""), "any")
    return text if output or prop.get("plain") else f"pulumi.Input<{text}>"


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = [line.strip() for line in text.strip().splitlines()]
    return [f"{indent}/**", *[f"{indent} * {line}".rstrip() for line in lines], f"{indent} */"]


def _members(properties: Mapping[str, Any], required: list[str], indent: str,
             output: bool = False) -> list[str]:
    lines: list[str] = []
    for name, prop in properties.items():
        lines += _doc(prop.get("description"), indent)
        if output:
            lines.append(f"{indent}readonly {name}: pulumi.Output<{type_text(prop, True)}>;")
        else:
            mark = "" if name in required else "?"
            lines.append(f"{indent}{name}{mark}: {type_text(prop)};")
    return lines


def render(schema: Mapping[str, Any]) -> str:
    """The declaration file of `schema`."""
    out = [HEADER]
    for token, spec in sorted(schema.get("types", {}).items()):
        out += _doc(spec.get("description"), "")
        out += [f"export interface {_local_name(token)} {{",
                *_members(spec.get("properties", {}), spec.get("required", []), "    "),
                "}", ""]
    for token, spec in sorted(schema["resources"].items()):
        name = _local_name(token)
        out += [f"export interface {name}Args {{",
                *_members(spec.get("inputProperties", {}), spec.get("requiredInputs", []),
                          "    "), "}", ""]
        out += _doc(spec.get("description"), "")
        out += [f"export declare class {name} extends pulumi.ComponentResource {{",
                *_members(spec.get("properties", {}), [], "    ", output=True),
                f"    constructor(name: string, args: {name}Args, "
                "opts?: pulumi.ComponentResourceOptions);", "}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.exit(print_generated(lambda: render(json.loads(schema_text())),
                             "gpu_infra_provider.typescript", __doc__))
