"""Shared pieces of the stack schema: the strict base model and common field types."""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import sys
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

Port = Annotated[int, Field(ge=1, le=65535)]
"""A TCP/UDP port number."""

OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
CIDR_PATTERN = rf"^({OCTET}\.){{3}}{OCTET}(/(3[0-2]|[12]?[0-9]))?$"
"""An IPv4 network as the editor schema checks it: dotted quad, optional /0-32 prefix (host
bits left set, e.g. 10.0.0.1/16, only `validate` refuses)."""
Cidr = Annotated[IPv4Network, Field(strict=False),
                 WithJsonSchema({"type": "string", "format": "ipv4network",
                                 "pattern": CIDR_PATTERN})]
"""An IPv4 CIDR block such as 10.0.0.0/16 (host bits must be zero), written as a string."""

ANYWHERE = IPv4Network("0.0.0.0/0")
"""The whole IPv4 internet: the destination of egress rules. Sources are judged by
gpu_infra_facts.addresses.world_open (never world-open in prod, never a NAS client)."""

SECRET_PLACEHOLDER = "[secret]"
"""What a `secure:` value becomes when the stack is read offline (it cannot be decrypted)."""

SECURE_MARK = "x-gpu-infra-may-be-secure"
"""JSON Schema keyword on a field that may hold a `secure:` (encrypted) value; the editor
schema accepts `{secure: ...}` exactly there."""

MaybeSecure = Field(json_schema_extra={SECURE_MARK: True})
"""Annotated[...] metadata of a field that may be set with `pulumi config set --secret
--path` (a webhook URL, a token)."""


class StrictModel(BaseModel):
    """Base of every schema model: unknown keys are rejected, instances are immutable, and
    values must have their field's JSON type (strict: `"8"` is not 8, `"yes"` and 1 are not
    true; an integer is a number), numbers are finite (no .nan or .inf).

    Strict types match what Pulumi hands the program: `pulumi.Config.get_object` returns
    the stack file's JSON types, and `pulumi config set --path` stores true/false as
    booleans and integers as integers (pulumi/sdk go/common/resource/config/map.go,
    adjustObjectValue).

    A field is documented by the docstring under it (field_descriptions)."""

    # Not use_attribute_docstrings: pydantic would parse each class's source as the class is
    # made, a third of the time the schema takes to load; field_descriptions reads each
    # module once, when the editor schema or a reference is made.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def field_descriptions(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> description of `model`'s documented fields: the field's own
    `description=`, else the docstring under its annotation in the class that declares it
    (the nearest in the method resolution order)."""
    descriptions: dict[str, str] = {}
    for name, info in model.model_fields.items():
        text = info.description
        declaring = next((cls for cls in model.__mro__
                          if name in cls.__dict__.get("__annotations__", {})), None)
        if not text and declaring is not None:
            text = _attribute_docstrings(declaring.__module__).get(
                declaring.__qualname__, {}).get(name)
        if text:
            descriptions[name] = text
    return descriptions


@functools.cache
def _attribute_docstrings(module_name: str) -> dict[str, dict[str, str]]:
    """Class name -> {attribute -> docstring} for the top-level classes of a module, from
    one parse of its source; {} where the source cannot be read."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module_name]))
    except (KeyError, OSError, TypeError):
        return {}
    classes: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        documented = classes.setdefault(node.name, {})
        for annotated, following in itertools.pairwise(node.body):
            if (isinstance(annotated, ast.AnnAssign) and isinstance(annotated.target, ast.Name)
                    and isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                documented[annotated.target.id] = inspect.cleandoc(following.value.value)
    return classes
