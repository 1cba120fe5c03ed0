"""The node tools of one ECS fleet in the cloud: their installer (blocks.bootstrap
node_tools_installer) as an object of one of the stack's buckets, which the nodes' node_tools
step fetches at every boot and checks against the sha256 its key names."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import BootstrapSpec, node_tools_installer
from gpu_infra.blocks.storage.buckets import Bucket


def node_tools_object(name: str, *, spec: BootstrapSpec,
                      home: Bucket) -> alicloud.oss.BucketObject:
    """`<name>` in bucket `home`: the installer of `spec`'s node tools (`spec` from
    with_node_tools). Its key is its digest, so an edit that changes it creates a new object;
    the old one is kept (retain_on_delete), since running nodes keep the user data they were
    created with and fetch its version at every boot. Create the nodes after it (their user
    data waits for its id)."""
    if spec.node_tools is None:
        raise ValueError(f"{name}: the spec has no node tools (with_node_tools)")
    return alicloud.oss.BucketObject(
        name, bucket=home.bucket_name, key=spec.node_tools.key,
        content=node_tools_installer(spec), content_type="text/x-shellscript",
        opts=pulumi.ResourceOptions(parent=home, retain_on_delete=True))


__all__ = ["node_tools_object"]
