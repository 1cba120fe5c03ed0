"""Security rules: mandatory by default."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_policies import types as t
from gpu_infra_policies.base import Context, Resource, Rule, as_list, is_unknown, number, port_range

WORLD = frozenset({"0.0.0.0/0", "::/0"})
PASSWORD_KEYS = ("password", "kmsEncryptedPassword")
ADMIN_ACTIONS = frozenset({"*", "*:*", "ram:*"})


def world_ingress(resources: Sequence[Resource], cfg: Mapping[str, Any],
                  _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Security group rules open to 0.0.0.0/0 or ::/0 (type ingress, policy accept: the
    default), except on a load balancer's own security group for a port listed in
    `publicListenerPorts`; listeners of internet-facing (or unknown) load balancers on a
    port not in that list. Listeners of intranet load balancers are not public."""
    public_ports = {float(port) for port in cfg["publicListenerPorts"]}
    balancers = [r for r in resources if r.type in t.LOAD_BALANCERS]
    lb_groups = [group for group in resources if group.type == t.SECURITY_GROUP
                 and _fronts_load_balancer(group, balancers, resources)]
    for resource in resources:
        if resource.type == t.SECURITY_GROUP_RULE:
            on_lb = any(resource.refers_to(group, resource.props.get("securityGroupId"))
                        for group in lb_groups)
            for message in _world_rule(resource.props, public_ports if on_lb else set()):
                yield resource, message
        elif resource.type in t.LISTENER_PORT_KEYS:
            balancer = next((b for b in balancers if resource.refers_to(
                b, resource.props.get("loadBalancerId"))), None)
            address = balancer.props.get(t.LOAD_BALANCER_ADDRESS_KEYS[balancer.type]) \
                if balancer else None
            if isinstance(address, str) and address.lower() == "intranet":
                continue
            port = number(resource.props.get(t.LISTENER_PORT_KEYS[resource.type]))
            if port is not None and port not in public_ports:
                yield resource, (f"load balancer listener on port {int(port)} is reachable "
                                 "from anywhere; public ports allowed: "
                                 f"{sorted(int(p) for p in public_ports)}")


def _world_rule(props: Mapping[str, Any], public_ports: set[float]) -> Iterator[str]:
    if props.get("type") != "ingress" or props.get("policy", "accept") != "accept":
        return
    ports = port_range(props.get("portRange"))
    if ports and ports[0] == ports[1] and float(ports[0]) in public_ports:
        return
    for key in ("cidrIp", "ipv6CidrIp"):
        if props.get(key) in WORLD:
            what = ("all ports" if ports == (1, 65535)
                    else f"port {props.get('portRange')} ({props.get('ipProtocol')})")
            yield f"ingress from {props[key]} to {what}; allow known CIDRs only"


def _fronts_load_balancer(group: Resource, balancers: Sequence[Resource],
                          resources: Sequence[Resource]) -> bool:
    """A security group attached to a load balancer (NLB securityGroupIds, or an ALB
    security group attachment)."""
    for balancer in balancers:
        if any(balancer.refers_to(group, value)
               for value in as_list(balancer.props.get("securityGroupIds"))):
            return True
    return any(a.type == t.ALB_SECURITY_GROUP_ATTACHMENT
               and a.refers_to(group, a.props.get("securityGroupId")) for a in resources)


def public_ip(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Instances (and scaling configurations) with public bandwidth: default 0."""
    if resource.type in (t.INSTANCE, t.SCALING_CONFIGURATION):
        bandwidth = number(resource.props.get("internetMaxBandwidthOut"))
        if bandwidth is not None and bandwidth > 0:
            yield (f"internetMaxBandwidthOut {bandwidth:g} gives the node a public IP; "
                   "set 0 and reach nodes through a bastion, VPN or load balancer")


def eip_on_instance(resources: Sequence[Resource], _: Mapping[str, Any],
                    __: Context) -> Iterator[tuple[Resource | None, str]]:
    """EIP associations whose target is an ecs.Instance of this stack."""
    instances = [r for r in resources if r.type == t.INSTANCE]
    for association in (r for r in resources if r.type == t.EIP_ASSOCIATION):
        kind = association.props.get("instanceType", "EcsInstance")
        if kind not in ("EcsInstance", None) and not is_unknown(kind):
            continue
        target = association.props.get("instanceId")
        for instance in instances:
            if association.refers_to(instance, target):
                yield association, f"an EIP is bound to instance {instance.name}"


def _disk_problems(where: str, disk: Mapping[str, Any], encrypted_key: str, kms_key: str,
                   prod: bool) -> Iterator[str]:
    encrypted = disk.get(encrypted_key, False)
    if is_unknown(encrypted):
        return
    if encrypted is not True:
        yield f"{where} is not encrypted"
    elif prod and (disk.get(kms_key) in (None, "")):
        yield f"{where} is encrypted without a KMS key (kmsKeyId), required in prod"


def disk_encryption(resource: Resource, cfg: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Every disk encrypted (provider default: not encrypted); with a KMS key in prod."""
    prod = ctx.is_prod(resource) and cfg["kmsInProd"]
    props = resource.props
    if resource.type == t.ECS_DISK:
        yield from _disk_problems("disk", props, "encrypted", "kmsKeyId", prod)
    elif resource.type in (t.INSTANCE, t.SCALING_CONFIGURATION):
        yield from _disk_problems("system disk", props, "systemDiskEncrypted",
                                  "systemDiskKmsKeyId", prod)
        for index, disk in enumerate(as_list(props.get("dataDisks"))):
            if isinstance(disk, Mapping):
                yield from _disk_problems(f"dataDisks[{index}]", disk, "encrypted",
                                          "kmsKeyId", prod)


def bucket_acl(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """oss.BucketAcl (and the deprecated oss.Bucket acl) must be private (OSS default)."""
    if resource.type in (t.BUCKET_ACL, t.BUCKET):
        acl = resource.props.get("acl")
        if acl is not None and not is_unknown(acl) and acl != "private":
            yield f"bucket ACL {acl} makes objects public; use private"


def _buckets_with(resources: Sequence[Resource], companion_type: str,
                  accept: str | None = None, value: Any = None) -> set[str]:
    """URNs of buckets that a companion resource of `companion_type` points at (optionally
    only companions whose `accept` input is `value` or unknown)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    found: set[str] = set()
    for companion in (r for r in resources if r.type == companion_type):
        if accept is not None:
            setting = companion.props.get(accept)
            if not is_unknown(setting) and setting != value:
                continue
        for bucket in buckets:
            if companion.refers_to(bucket, companion.props.get("bucket"), "bucket"):
                found.add(bucket.urn)
    return found


def bucket_encrypted(resources: Sequence[Resource], _: Mapping[str, Any],
                     __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has serverSideEncryptionRule or an oss.BucketServerSideEncryption."""
    covered = _buckets_with(resources, t.BUCKET_ENCRYPTION)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered and bucket.props.get("serverSideEncryptionRule") is None:
            yield bucket, ("bucket has no server-side encryption (serverSideEncryptionRule "
                           "or oss.BucketServerSideEncryption)")


def public_access_blocked(resources: Sequence[Resource], _: Mapping[str, Any],
                          __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has an oss.BucketPublicAccessBlock with blockPublicAccess true."""
    for block in (r for r in resources if r.type == t.BUCKET_PUBLIC_ACCESS_BLOCK):
        if block.props.get("blockPublicAccess") is False:
            yield block, "blockPublicAccess is false"
    covered = _buckets_with(resources, t.BUCKET_PUBLIC_ACCESS_BLOCK, "blockPublicAccess", True)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered:
            yield bucket, "bucket has no oss.BucketPublicAccessBlock with blockPublicAccess true"


def nas_world_access(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """NAS access rules never open to 0.0.0.0/0 or ::/0."""
    if resource.type == t.NAS_ACCESS_RULE:
        for key in ("sourceCidrIp", "ipv6SourceCidrIp"):
            if resource.props.get(key) in WORLD:
                yield f"NAS access rule allows {resource.props[key]}; list the VPC's CIDRs"


def password_login(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """No password on instances or scaling configurations: key pairs only. A password that
    is set but secret or unknown still counts as set."""
    if resource.type in (t.INSTANCE, t.SCALING_CONFIGURATION):
        for key in PASSWORD_KEYS:
            if resource.props.get(key) not in (None, ""):
                yield f"{key} is set; log in with a key pair and no password"


def _statements(document: Any) -> list[Mapping[str, Any]]:
    if isinstance(document, str) and not is_unknown(document):
        try:
            document = json.loads(document)
        except ValueError:
            return []
    if not isinstance(document, Mapping):
        return []
    return [s for s in as_list(document.get("Statement")) if isinstance(s, Mapping)]


def _as_strings(value: Any) -> set[str]:
    return {value} if isinstance(value, str) else {v for v in as_list(value)
                                                   if isinstance(v, str)}


def admin_policies(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """RAM policies granting every action (or all of RAM) on every resource; attachments of
    admin-level system policies."""
    props = resource.props
    if resource.type == t.RAM_POLICY:
        statements = _statements(props.get("policyDocument") or props.get("document"))
        statements += [{"Effect": s.get("effect"), "Action": s.get("actions"),
                        "Resource": s.get("resources")}
                       for s in as_list(props.get("statements")) if isinstance(s, Mapping)]
        for statement in statements:
            actions = _as_strings(statement.get("Action")) & ADMIN_ACTIONS
            if (statement.get("Effect") == "Allow" and actions
                    and "*" in _as_strings(statement.get("Resource"))):
                yield f"policy allows {sorted(actions)} on every resource"
    elif resource.type == t.RAM_ROLE_POLICY_ATTACHMENT:
        policy = props.get("policyName")
        if props.get("policyType") == "System" and policy in cfg["forbiddenSystemPolicies"]:
            yield f"role {props.get('roleName')} gets the admin-level system policy {policy}"


SECURITY_RULES: tuple[Rule, ...] = (
    Rule("no-world-ingress", "No ingress from 0.0.0.0/0 or ::/0, except declared public "
         "load balancer ports", "security", "critical",
         "Restrict cidrIp to the admin and client CIDRs; put public services behind a load "
         "balancer listening on a port listed in publicListenerPorts.", world_ingress,
         stack=True,
         schema={"publicListenerPorts": {"type": "array", "items": {"type": "number"},
                                         "description": "LB listener ports that may be "
                                                        "public. Default [80, 443]."}},
         defaults={"publicListenerPorts": [80, 443]}),
    Rule("no-public-ip-on-nodes", "GPU nodes get no public IP (internet bandwidth 0)",
         "security", "high", "Set internetMaxBandwidthOut to 0 (the default); use NAT for "
         "egress and a bastion or VPN for access.", public_ip),
    Rule("no-eip-on-nodes", "No EIP bound to an instance of the stack", "security", "high",
         "Remove the EIP association; reach nodes privately, egress through NAT.",
         eip_on_instance, stack=True),
    Rule("disks-encrypted", "Every disk is encrypted, with a KMS key in prod", "security",
         "high", "Set encrypted / systemDiskEncrypted true on every disk, and kmsKeyId in "
         "prod (security.kms_encryption).", disk_encryption,
         schema={"kmsInProd": {"type": "boolean", "description": "Require kmsKeyId on prod "
                                                                  "disks. Default true."}},
         defaults={"kmsInProd": True}),
    Rule("oss-bucket-private", "OSS bucket ACLs are private", "security", "critical",
         "Set oss.BucketAcl acl to private (the OSS default); share data with signed URLs "
         "or RAM policies.", bucket_acl),
    Rule("oss-bucket-encrypted", "Every OSS bucket has server-side encryption", "security",
         "high", "Add serverSideEncryptionRule (KMS in prod) or an "
         "oss.BucketServerSideEncryption for the bucket.", bucket_encrypted, stack=True),
    Rule("oss-public-access-blocked", "Every OSS bucket blocks public access", "security",
         "high", "Add an oss.BucketPublicAccessBlock with blockPublicAccess true for the "
         "bucket.", public_access_blocked, stack=True),
    Rule("nas-no-world-access", "NAS access rules never open to 0.0.0.0/0", "security",
         "critical", "Set sourceCidrIp to the VPC or vSwitch CIDRs.", nas_world_access),
    Rule("no-password-login", "No password login on nodes", "security", "high",
         "Remove password; set a key pair (security.public_key).", password_login),
    Rule("no-admin-policies", "Roles get no admin-level RAM policies", "security",
         "critical", "Grant only the actions and resources the nodes need (e.g. read one "
         "OSS bucket).", admin_policies,
         schema={"forbiddenSystemPolicies": {
             "type": "array", "items": {"type": "string"},
             "description": "System policies never attached to a role. Default "
                            "AdministratorAccess, AliyunRAMFullAccess."}},
         defaults={"forbiddenSystemPolicies": ["AdministratorAccess", "AliyunRAMFullAccess"]}),
)
