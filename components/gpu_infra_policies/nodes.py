"""Node rules: one rule per concern (public IP, login, disk encryption, metadata hardening,
deletion protection) across every type that launches a node, through one table of where
each type keeps the setting (NODE_SHAPES)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.allowed import SPOT_STRATEGIES
from gpu_infra_facts.update_preconditions import protection
from gpu_infra_policies.base import (
    UNKNOWN,
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
)

Path = tuple[str, ...]
"""Keys into wire-form properties, e.g. ("systemDisk", "encrypted")."""


@dataclass(frozen=True)
class NodeShape:
    """Where one node-launching type keeps each setting (empty: the type has none)."""

    system_disk_encrypted: Path
    system_disk_kms: Path
    data_disks: str = "dataDisks"
    password_keys: tuple[str, ...] = ("password", "kmsEncryptedPassword")
    password_inherit: str = ""
    """Input that logs in with the image's preset password when true."""
    http_tokens: Path = ()
    """Instance metadata access mode; "required" is hardened (IMDSv2 tokens only)."""
    user_data: tuple[str, ...] = ("userData",)


LAUNCH_TEMPLATE = NodeShape(("systemDisk", "encrypted"), ("systemDisk", "kmsKeyId"),
                            password_keys=(), password_inherit="passwordInherit",
                            http_tokens=("httpTokens",))
NODE_SHAPES: dict[str, NodeShape] = {
    t.INSTANCE: NodeShape(("systemDiskEncrypted",), ("systemDiskKmsKeyId",),
                          password_inherit="passwordInherit", http_tokens=("httpTokens",)),
    # pulumi-alicloud 4.0 (and the upstream provider, 2026-08) has no http_tokens on
    # ess.ScalingConfiguration: its metadata mode cannot be set, so it is not judged.
    t.SCALING_CONFIGURATION: NodeShape(("systemDiskEncrypted",), ("systemDiskKmsKeyId",),
                                       password_inherit="passwordInherit"),
    t.ECS_LAUNCH_TEMPLATE: LAUNCH_TEMPLATE,
    t.LAUNCH_TEMPLATE: LAUNCH_TEMPLATE,
    t.NODE_POOL: NodeShape(("systemDiskEncrypted",), ("systemDiskKmsKey",),
                           http_tokens=("instanceMetadataOptions", "httpTokens"),
                           user_data=("userData", "preUserData")),
    # ecs.EcsInstanceSet has no system disk encryption or metadata input of its own: only a
    # launch template (launchTemplateId / launchTemplateName) can set them.
    t.ECS_INSTANCE_SET: NodeShape((), (), password_keys=("password",),
                                  password_inherit="passwordInherit", user_data=()),
}
"""Every type that launches ECS nodes: instances, ESS scaling configurations, launch
templates (ecs.EcsLaunchTemplate and the older ecs.LaunchTemplate) and ACK node pools."""
DISK_TYPES = {t.ECS_DISK: ("encrypted", "kmsKeyId"), t.DISK: ("encrypted", "kmsKeyId")}
"""Stand-alone disks: ecs.EcsDisk and the older ecs.Disk."""


def get_path(props: Mapping[str, Any], path: Path) -> Any:
    """The value at `path` (None if absent; an unknown parent gives the unknown)."""
    value: Any = props
    for key in path:
        if is_unknown(value):
            return value
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _is_true(value: Any) -> bool:
    """True for true and "true" (ACK node pools take booleans as strings)."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


PUBLIC_IP_TYPES = frozenset({*NODE_SHAPES, t.IMAGE_PIPELINE})
"""Every type that starts a node with internetMaxBandwidthOut: the node types and the
image pipeline's build instance."""


def public_ip(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Nodes with public bandwidth (internetMaxBandwidthOut, default 0) get a public IP; so
    do ECI container groups with autoCreateEip or an eipInstanceId."""
    if resource.type == t.ECI_CONTAINER_GROUP:
        props = resource.props
        if _is_true(props.get("autoCreateEip")) or props.get("eipInstanceId") not in (None, ""):
            yield ("the container group gets a public EIP (autoCreateEip / eipInstanceId); "
                   "reach it through a load balancer or the VPC")
        return
    if resource.type in PUBLIC_IP_TYPES:
        bandwidth = number(resource.props.get("internetMaxBandwidthOut"))
        if bandwidth is not None and bandwidth > 0:
            yield (f"internetMaxBandwidthOut {bandwidth:g} gives the node a public IP; "
                   "set 0 and reach nodes through a bastion, VPN or load balancer")


NODE_ADDRESS_TARGETS = ("NetworkInterface", "HaVip")
"""EIP association targets that put a public address on a node (besides EcsInstance)."""


def eip_on_instance(resources: Sequence[Resource], _: Mapping[str, Any],
                    __: Context) -> Iterator[tuple[Resource | None, str]]:
    """EIP associations whose target is an ecs.Instance of this stack, or any network
    interface or HaVip (the node behind it gets the public address)."""
    instances = [r for r in resources if r.type == t.INSTANCE]
    for association in (r for r in resources if r.type == t.EIP_ASSOCIATION):
        kind = association.props.get("instanceType", "EcsInstance")
        if kind in NODE_ADDRESS_TARGETS:
            yield association, (f"an EIP is bound to {kind} "
                                f"{association.props.get('instanceId')}: the node behind it "
                                "gets a public address")
            continue
        if kind not in ("EcsInstance", None) and not is_unknown(kind):
            continue
        target = association.props.get("instanceId")
        for instance in instances:
            if association.refers_to(instance, target):
                yield association, f"an EIP is bound to instance {instance.name}"


def _disk_problem(where: str, encrypted: Any, kms_key: Any,
                  key_required_in: str | None) -> str | None:
    if is_unknown(encrypted):
        return None
    if not _is_true(encrypted):
        return f"{where} is not encrypted"
    if key_required_in and kms_key in (None, ""):
        return f"{where} is encrypted without a KMS key, required in {key_required_in}"
    return None


def _disks(resource: Resource) -> Iterator[tuple[str, Any, Any]]:
    """(where, encrypted, KMS key) of every disk the resource creates."""
    props = resource.props
    if resource.type in DISK_TYPES:
        encrypted, kms = DISK_TYPES[resource.type]
        yield "disk", props.get(encrypted), props.get(kms)
        return
    shape = NODE_SHAPES.get(resource.type)
    if shape is None:
        return
    if not shape.system_disk_encrypted:
        templated = props.get("launchTemplateId") or props.get("launchTemplateName")
        yield ("system disk (no input: launch it from a launch template that encrypts it)",
               UNKNOWN if templated else False, None)
    else:
        yield ("system disk", get_path(props, shape.system_disk_encrypted),
               get_path(props, shape.system_disk_kms))
    for index, disk in enumerate(as_list(props.get(shape.data_disks))):
        if isinstance(disk, Mapping):
            yield f"dataDisks[{index}]", disk.get("encrypted"), disk.get("kmsKeyId")


def disk_encryption(resource: Resource, cfg: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Every disk encrypted (provider default: not encrypted), with a KMS key where the
    environment demands one (prod) unless `kmsInProd` is off: system and data disks of every
    node type, ecs.EcsDisk and ecs.Disk."""
    key_required_in = ctx.demanded_by(resource, "kms_key") if cfg["kmsInProd"] else None
    for where, encrypted, kms_key in _disks(resource):
        problem = _disk_problem(where, encrypted, kms_key, key_required_in)
        if problem:
            yield problem


def password_login(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """No password on any node type, and no image preset password (passwordInherit): key
    pairs only. A password that is set but secret or unknown still counts as set."""
    shape = NODE_SHAPES.get(resource.type)
    if shape is None:
        return
    for key in shape.password_keys:
        if resource.props.get(key) not in (None, ""):
            yield f"{key} is set; log in with a key pair and no password"
    if shape.password_inherit and _is_true(resource.props.get(shape.password_inherit)):
        yield (f"{shape.password_inherit} is true: the image's preset password logs in; "
               "use a key pair")


def metadata_hardened(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Instance metadata only in hardened mode (http tokens "required", IMDSv2; the provider
    default is "optional", which lets any SSRF read the node's RAM role credentials)."""
    shape = NODE_SHAPES.get(resource.type)
    if shape is None or not shape.http_tokens:
        return
    tokens = get_path(resource.props, shape.http_tokens)
    if not is_unknown(tokens) and tokens != "required":
        yield (f"{'.'.join(shape.http_tokens)} is {tokens or 'optional (the default)'}; set "
               "required (hardened metadata access)")


PROTECTED_IN_PROD = frozenset({
    t.INSTANCE, t.ECS_INSTANCE_SET, t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.ACK_SERVERLESS,
    t.RDS_INSTANCE, t.POLARDB_CLUSTER, t.KVSTORE_INSTANCE, t.MONGODB_INSTANCE,
    t.ALB_LOAD_BALANCER, t.NLB_LOAD_BALANCER, t.SLB_LOAD_BALANCER, t.KMS_KEY})
"""Types that refuse deletion in prod: nodes, ACK clusters, databases, load balancers and KMS
keys. How each type spells its protection (inputs, protecting values, provider source) is
gpu_infra_facts.update_preconditions.protection; every one defaults to unprotected."""


def _protected(props: Mapping[str, Any], inputs: Mapping[str, tuple[Any, ...]]) -> bool:
    """True if any spelling protects, or one is unknown (it may); "true" spells true."""
    for path, values in inputs.items():
        value = get_path(props, tuple(path.split(".")))
        if is_unknown(value) or value in values or (
                _is_true(value) and any(v is True for v in values)):
            return True
    return False


def deletion_protection(resource: Resource, _: Mapping[str, Any],
                        ctx: Context) -> Iterator[str]:
    """Where the environment demands it (prod; provider default off): instances (not spot:
    the provider cannot protect them), ACK clusters, databases, load balancers and KMS keys
    refuse deletion."""
    if resource.type not in PROTECTED_IN_PROD:
        return
    environment = ctx.demanded_by(resource, "deletion_protection")
    if not environment:
        return
    props = resource.props
    node = resource.type in NODE_SHAPES
    if node and (props.get("spotStrategy") in SPOT_STRATEGIES
                 or is_unknown(props.get("spotStrategy"))):
        return
    inputs = protection(resource.type).inputs
    if not _protected(props, inputs):
        kind = "node" if node else resource.type.split(":")[-1]
        yield f"{environment} {kind} without {next(iter(inputs))}; turn it on"


NODE_RULES: tuple[Rule, ...] = (
    ResourceRule("no-public-ip-on-nodes", "GPU nodes get no public IP (internet bandwidth 0)",
                 "security", "high", "Set internetMaxBandwidthOut to 0 (the default); use NAT for "
                 "egress and a bastion or VPN for access.", public_ip, concern="network exposure",
                 reviews=frozenset({*PUBLIC_IP_TYPES, t.ECI_CONTAINER_GROUP})),
    StackRule("no-eip-on-nodes", "No EIP bound to an instance of the stack", "security", "high",
              "Remove the EIP association; reach nodes privately, egress through NAT.",
              eip_on_instance, concern="network exposure",
                 reviews=frozenset({t.EIP_ASSOCIATION, t.INSTANCE})),
    ResourceRule("disks-encrypted", "Every disk is encrypted, with a KMS key in prod", "security",
                 "high", "Set encrypted / systemDiskEncrypted true on every disk, and the KMS key "
                 "in prod (security.kms_encryption).", disk_encryption, concern="data",
                 reviews=frozenset({*NODE_SHAPES, *DISK_TYPES}),
                 schema={"kmsInProd": {"type": "boolean",
                                       "description": "Require a KMS key on prod disks. "
                                                      "Default true."}},
                 defaults={"kmsInProd": True}),
    ResourceRule("no-password-login", "No password login on nodes", "security", "high",
                 "Remove password and passwordInherit; set a key pair (security.public_key).",
                 password_login, concern="nodes",
                 reviews=frozenset(NODE_SHAPES)),
    ResourceRule("metadata-hardened", "Nodes reach instance metadata in hardened mode only",
                 "security", "high", "Set httpTokens required "
                 "(instanceMetadataOptions.httpTokens on ACK node pools).", metadata_hardened,
                 concern="nodes",
                 reviews=frozenset(NODE_SHAPES)),
    ResourceRule("prod-deletion-protection", "Prod instances, clusters, databases, load "
                 "balancers and keys refuse deletion", "reliability", "medium",
                 "Set deletionProtection (or the type's equivalent) on (Conventions."
                 "deletion_protection, on in prod).", deletion_protection,
                 concern="reliability", reviews=PROTECTED_IN_PROD),
)
