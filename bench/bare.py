"""One bare resource: the SDK's cost of registering a type, none of gpu-infra's (this module
imports only the provider SDK, so the floor process can load it alone)."""

from __future__ import annotations

import re

import pulumi_alicloud as alicloud


def bare_resource(type_token: str, name: str) -> None:
    """Register one resource of `type_token` with no inputs but its required ones (set to
    a placeholder): the SDK's cost of the type, none of ours."""
    module, class_name = type_token.split(":")[1].split("/")[0], type_token.split(":")[2]
    resource_class = getattr(getattr(alicloud, module), class_name)
    required: dict[str, str] = {}
    while True:
        try:
            resource_class(name, **required)
            return
        except TypeError as error:
            missing = re.search(r"Missing required property '(\w+)'", str(error))
            if not missing:
                raise
            required[missing.group(1)] = "x"
