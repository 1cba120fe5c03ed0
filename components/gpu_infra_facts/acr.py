"""Container Registry (ACR) facts: how the stack's registry and its namespaces are named and
addressed from the VPC."""

from __future__ import annotations

from gpu_infra_facts.naming import child_name


def mirror_namespace(namespace: str) -> str:
    """The namespace of the upstream images mirrored for the stack's `namespace`:
    `<namespace>-mirror`."""
    return f"{namespace}-mirror"


def registry_component_name(cluster_name: str) -> str:
    """The Pulumi name of a stack's registry component (its Enterprise instance is named from
    it: `<cluster>-registry-acr`)."""
    return f"{cluster_name}-registry"


def instance_name(cluster_name: str) -> str:
    """The name of the stack's ACR Enterprise instance."""
    return child_name(registry_component_name(cluster_name), "acr")


def registry_address(edition: str, *, instance_name: str, region: str) -> str:
    """The VPC address images are pulled from: `<instance>-registry-vpc.<region>.cr.aliyuncs
    .com` for an Enterprise instance, `registry-vpc.<region>.aliyuncs.com` for the personal
    edition (ACR "endpoints" pages; the Enterprise form is UNCONFIRMED against the
    instance's `instance_endpoints` output, which the plan cannot read)."""
    if edition == "enterprise":
        return f"{instance_name}-registry-vpc.{region}.cr.aliyuncs.com"
    return f"registry-vpc.{region}.aliyuncs.com"


__all__ = ["instance_name", "mirror_namespace", "registry_address", "registry_component_name"]
