"""One bare resource: the SDK's cost of registering a type, none of gpu-infra's (this module
imports only the provider SDK, so the floor process can load it alone)."""

from __future__ import annotations

import importlib
import re

import pulumi_alicloud as alicloud


def resource_class(type_token: str) -> type:
    """The SDK class of `type_token`: pulumi-alicloud's, pulumi-kubernetes' for the
    Kubernetes objects and provider of ACK stacks, or another provider's index class
    (pulumi-tls's keys)."""
    package, module_path, class_name = type_token.split(":")
    if type_token == "pulumi:providers:kubernetes":
        return importlib.import_module("pulumi_kubernetes").Provider
    if package == "kubernetes":
        group, version = module_path.split("/")
        module = importlib.import_module(f"pulumi_kubernetes.{group.split('.')[0]}.{version}")
        return getattr(module, class_name)
    if package != "alicloud":  # tls:index/privateKey:PrivateKey and other providers' index
        return getattr(importlib.import_module(f"pulumi_{package}"), class_name)
    return getattr(getattr(alicloud, module_path.split("/")[0]), class_name)


def bare_resource(type_token: str, name: str) -> None:
    """Register one resource of `type_token` with no inputs but its required ones (set to
    a placeholder): the SDK's cost of the type, none of ours."""
    resource_class_ = resource_class(type_token)
    required: dict[str, str] = {}
    while True:
        try:
            resource_class_(name, **required)
            return
        except TypeError as error:
            missing = re.search(r"Missing required property '(\w+)'", str(error))
            if not missing:
                raise
            required[missing.group(1)] = "x"
