"""Who the nodes are: the login key pair, and the RAM role the instances assume."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.schema.security import SecurityConfig
from gpu_infra_facts.node_apis import actions
from gpu_infra_facts.types import KEY_PAIR, RAM_POLICY, RAM_ROLE

ECS_SERVICE = "ecs.aliyuncs.com"
"""The service principal that lets ECS instances assume the role."""
OSS_ACTIONS = ("oss:GetObject", "oss:PutObject", "oss:ListObjects", "oss:DeleteObject",
               "oss:AbortMultipartUpload", "oss:ListParts", "oss:GetBucketInfo")
"""What nodes may do in the stack's own buckets, and nothing more."""
KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
"""What nodes may do with the stack's KMS key (read and write encrypted data)."""
POLICY_TYPE_CUSTOM = "Custom"
"""ram.RolePolicyAttachment policy_type of a policy this stack creates."""
RAM_POLICY_VERSION = "1"
"""The `Version` of every RAM policy document."""


class KeyPair(pulumi.ComponentResource):
    """An ECS key pair from `config.public_key` (OpenSSH), for key-only login (no password
    ever). ValueError when the config has no public key.

    Attributes: `key_pair` (ecs.EcsKeyPair), `key_pair_name`.
    """

    TYPE = "gpu-infra:identity:KeyPair"

    def __init__(self, name: str, *, config: SecurityConfig, conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        if config.public_key is None:
            raise ValueError("public_key: a key pair needs security.public_key")
        super().__init__(self.TYPE, name, None, opts)
        key_name = child_name(name, "key")
        self.key_pair = alicloud.ecs.EcsKeyPair(
            key_name, key_pair_name=conventions.unique_name(KEY_PAIR, key_name),
            public_key=config.public_key,
            tags=conventions.tags_for(key_name),
            opts=fixed_name(self, replace_on_changes=["publicKey"]))
        self.key_pair_name: pulumi.Output[str] = self.key_pair.key_pair_name
        self.register_outputs({"key_pair_name": self.key_pair_name})


def trust_policy(service: str = ECS_SERVICE) -> str:
    """The RAM trust policy document that lets `service` assume a role."""
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": [
        {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": [service]}}]})


def access_policy(bucket_names: Sequence[str], kms_key_arn: str | None,
                  read_objects: Sequence[tuple[str, str]] = ()) -> str | None:
    """The RAM policy document granting OSS_ACTIONS on `bucket_names` (bucket and objects),
    the node's OSS read (gpu_infra_facts.node_apis: GetObject) on each (bucket, key) of
    `read_objects` (objects outside the stack's buckets, default none) and KMS_ACTIONS on
    `kms_key_arn`; None when there is nothing to grant."""
    statements: list[dict[str, Any]] = []
    if bucket_names:
        resources = [arn for bucket in bucket_names
                     for arn in (f"acs:oss:*:*:{bucket}", f"acs:oss:*:*:{bucket}/*")]
        statements.append({"Effect": "Allow", "Action": list(OSS_ACTIONS),
                           "Resource": resources})
    if read_objects:
        statements.append({"Effect": "Allow", "Action": list(actions("oss", "GetObject")),
                           "Resource": [f"acs:oss:*:*:{bucket}/{key}"
                                        for bucket, key in read_objects]})
    if kms_key_arn:
        statements.append({"Effect": "Allow", "Action": list(KMS_ACTIONS),
                           "Resource": [kms_key_arn]})
    if not statements:
        return None
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def role_policy(name: str, *, role_name: pulumi.Input[str], document: pulumi.Input[str],
                description: str, conventions: Conventions, parent: pulumi.Resource,
                ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment]:
    """A custom policy `<name>` with `document`, attached to `role_name` (`<name>-attachment`)."""
    child = pulumi.ResourceOptions(parent=parent)
    policy = alicloud.ram.Policy(
        name, policy_name=conventions.unique_name(RAM_POLICY, name), policy_document=document,
        description=description, tags=conventions.tags_for(name), opts=fixed_name(parent))
    attachment = alicloud.ram.RolePolicyAttachment(
        f"{name}-attachment", role_name=role_name, policy_name=policy.policy_name,
        policy_type=POLICY_TYPE_CUSTOM, opts=child)
    return policy, attachment


class InstanceRole(pulumi.ComponentResource):
    """A RAM role the cluster's instances assume (ecs.RamRoleAttachment for fixed nodes,
    ScalingConfiguration.role_name for scaling groups), with a least-privilege policy:
    read/write on `bucket_names` only and, with `kms_key_arn`, use of that key. With neither,
    the role has no policy at all.

    Attributes: `role`, `policy` and `attachment` (None without grants), `role_name`.
    """

    TYPE = "gpu-infra:identity:InstanceRole"

    def __init__(self, name: str, *, bucket_names: Sequence[str], conventions: Conventions,
                 kms_key_arn: pulumi.Input[str] | None = None,
                 read_objects: Sequence[tuple[str, str]] = (),
                 trust: pulumi.Input[str] | None = None,
                 description: str = "Assumed by the cluster's ECS instances",
                 opts: pulumi.ResourceOptions | None = None):
        """`read_objects`: (bucket, key) of objects outside the stack's buckets the
        instances read (default none); `trust`: the trust policy document (default: ECS
        instances, trust_policy())."""
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role_name = child_name(name, "role")
        self.role = alicloud.ram.Role(
            role_name, role_name=conventions.unique_name(RAM_ROLE, role_name),
            assume_role_policy_document=trust if trust is not None else trust_policy(),
            description=description,
            tags=conventions.tags_for(role_name), opts=fixed_name(self))
        self.role_name: pulumi.Output[str] = self.role.role_name
        self.policy: alicloud.ram.Policy | None = None
        self.attachment: alicloud.ram.RolePolicyAttachment | None = None
        if bucket_names or read_objects or kms_key_arn is not None:
            document = pulumi.Output.from_input(kms_key_arn).apply(
                lambda arn: access_policy(list(bucket_names), arn, read_objects))
            policy_name = child_name(name, "policy")
            self.policy = alicloud.ram.Policy(
                policy_name, policy_name=conventions.unique_name(RAM_POLICY, policy_name),
                policy_document=document,
                description="OSS access to the stack's own buckets and use of its KMS key",
                tags=conventions.tags_for(policy_name), opts=fixed_name(self))
            self.attachment = alicloud.ram.RolePolicyAttachment(
                child_name(name, "policy-attachment"), role_name=self.role.role_name,
                policy_name=self.policy.policy_name, policy_type=POLICY_TYPE_CUSTOM,
                opts=child)
        self.register_outputs({"role_name": self.role_name})


__all__ = ["InstanceRole", "KeyPair"]
