"""ClusterSecurity, KeyPair, InstanceRole and KmsKey on their own, under the mock engine."""

import json
from ipaddress import IPv4Network

import pytest

from gpu_infra.blocks import security
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.encryption import KmsKey
from gpu_infra.blocks.identity import KMS_ACTIONS, OSS_ACTIONS, InstanceRole
from gpu_infra.blocks.security import ClusterSecurity
from gpu_infra.schema.security import SecurityConfig

RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
GROUP = "alicloud:ecs/securityGroup:SecurityGroup"
KEY_PAIR = "alicloud:ecs/ecsKeyPair:EcsKeyPair"
ROLE = "alicloud:ram/role:Role"
POLICY = "alicloud:ram/policy:Policy"
ATTACHMENT = "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment"
KMS_KEY = "alicloud:kms/key:Key"
PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN me@host"


def of(resources, type_token):
    return [r for r in resources if r.type == type_token]


def build_security(record, service_source_group_ids=(), **config):
    return record(lambda: ClusterSecurity(
        "s1", config=SecurityConfig(**config), vpc_id="vpc-1", conventions=Conventions(),
        service_source_group_ids=service_source_group_ids))


def rule_summary(rule):
    """(type, protocol, ports, source) of one rule."""
    inputs = rule.inputs
    source = inputs.get("cidrIp") or f"group:{inputs.get('sourceSecurityGroupId')}"
    return inputs["type"], inputs["ipProtocol"], inputs["portRange"], source


def test_default_rules_only_members_and_egress(record):
    resources = build_security(record)
    [group] = of(resources, GROUP)
    assert (group.inputs["vpcId"], group.inputs["securityGroupType"]) == ("vpc-1", "normal")
    assert sorted(rule_summary(r) for r in of(resources, RULE)) == [
        ("egress", "all", "-1/-1", "0.0.0.0/0"),
        ("ingress", "all", "-1/-1", f"group:{group.id}")]
    assert not of(resources, KEY_PAIR)


def test_rules_exactly_as_configured(record):
    resources = build_security(
        record, admin_cidrs=[IPv4Network("192.168.1.0/24"), IPv4Network("10.9.0.0/16")],
        service_ports=[8000, 443], client_cidrs=[IPv4Network("172.16.0.0/12")],
        service_source_group_ids=["sg-lb1"])
    group_id = of(resources, GROUP)[0].id
    assert sorted(rule_summary(r) for r in of(resources, RULE)) == sorted([
        ("ingress", "all", "-1/-1", f"group:{group_id}"),
        ("ingress", "tcp", "22/22", "192.168.1.0/24"),
        ("ingress", "tcp", "22/22", "10.9.0.0/16"),
        ("ingress", "tcp", "8000/8000", "172.16.0.0/12"),
        ("ingress", "tcp", "443/443", "172.16.0.0/12"),
        ("ingress", "tcp", "8000/8000", "group:sg-lb1"),
        ("ingress", "tcp", "443/443", "group:sg-lb1"),
        ("egress", "all", "-1/-1", "0.0.0.0/0")])
    assert all(r.inputs["securityGroupId"] == group_id and r.name.startswith("s1-rule-")
               for r in of(resources, RULE))


def test_no_world_open_ingress_unless_configured(record):
    closed = build_security(record, service_ports=[8000])
    assert not [r for r in of(closed, RULE)
                if r.inputs["type"] == "ingress" and r.inputs.get("cidrIp") == "0.0.0.0/0"]
    opened = build_security(record, admin_cidrs=[IPv4Network("0.0.0.0/0")])
    assert [rule_summary(r) for r in of(opened, RULE) if r.inputs.get("cidrIp") == "0.0.0.0/0"
            and r.inputs["type"] == "ingress"] == [("ingress", "tcp", "22/22", "0.0.0.0/0")]


def port_range_ok(protocol: str, port_range: str) -> bool:
    low, _, high = port_range.partition("/")
    if protocol not in security.PORTED_PROTOCOLS:
        return port_range == security.ALL_PORTS
    return 1 <= int(low) <= int(high) <= 65535


def test_every_rule_uses_values_the_provider_accepts(record):
    resources = build_security(
        record, admin_cidrs=[IPv4Network("10.9.0.0/16")], service_ports=[1, 65535],
        client_cidrs=[IPv4Network("10.8.0.0/16")], service_source_group_ids=["sg-lb1"])
    rules = of(resources, RULE)
    assert len(rules) == 7
    for rule in rules:
        inputs = rule.inputs
        assert inputs["type"] in security.RULE_TYPES
        assert inputs["ipProtocol"] in security.IP_PROTOCOLS
        assert port_range_ok(inputs["ipProtocol"], inputs["portRange"]), inputs
        assert inputs["nicType"] in security.NIC_TYPES
        assert inputs["policy"] in security.POLICIES
        assert 1 <= inputs["priority"] <= 100  # provider: validation.IntBetween(1, 100)
        assert sum(field_key in inputs for field_key in (
            "cidrIp", "sourceSecurityGroupId", "prefixListId", "ipv6CidrIp")) == 1
        if "sourceSecurityGroupId" in inputs:
            assert inputs["nicType"] == "intranet"


@pytest.mark.parametrize("protocol,ports,ok", [
    ("tcp", "22/22", True), ("udp", "1/65535", True), ("tcp", "-1/-1", False),
    ("tcp", "0/22", False), ("all", "-1/-1", True), ("icmp", "22/22", False)])
def test_port_range_checker_itself(protocol, ports, ok):
    assert port_range_ok(protocol, ports) is ok


def test_key_pair_from_public_key_and_never_a_password(record):
    resources = build_security(record, public_key=PUBLIC_KEY)
    [key_pair] = of(resources, KEY_PAIR)
    assert key_pair.inputs["publicKey"] == PUBLIC_KEY
    assert key_pair.inputs["keyPairName"] == key_pair.name == "s1-login-key"
    assert key_pair.parent.endswith("gpu-infra:identity:KeyPair::s1-login")
    assert not [r for r in resources if any("password" in key.lower() for key in r.inputs)]


def test_role_trusted_by_ecs_with_oss_access_to_own_buckets_only(record):
    resources = record(lambda: InstanceRole("r1", bucket_names=["b-data", "b-ckpt"],
                                            conventions=Conventions()))
    [role] = of(resources, ROLE)
    assert role.inputs["roleName"] == "r1-role"
    assert json.loads(role.inputs["assumeRolePolicyDocument"]) == {
        "Version": "1", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow",
                                       "Principal": {"Service": ["ecs.aliyuncs.com"]}}]}
    [policy] = of(resources, POLICY)
    assert json.loads(policy.inputs["policyDocument"]) == {"Version": "1", "Statement": [{
        "Effect": "Allow", "Action": list(OSS_ACTIONS),
        "Resource": ["acs:oss:*:*:b-data", "acs:oss:*:*:b-data/*",
                     "acs:oss:*:*:b-ckpt", "acs:oss:*:*:b-ckpt/*"]}]}
    [attachment] = of(resources, ATTACHMENT)
    assert attachment.inputs == {"roleName": "r1-role", "policyName": "r1-policy",
                                 "policyType": "Custom"}


def test_role_may_use_the_kms_key(record):
    def build():
        key = KmsKey("k1", config=SecurityConfig(), conventions=Conventions())
        InstanceRole("r1", bucket_names=[], kms_key_arn=key.key_arn, conventions=Conventions())

    resources = record(build)
    [key] = of(resources, KMS_KEY)
    [policy] = of(resources, POLICY)
    assert json.loads(policy.inputs["policyDocument"])["Statement"] == [{
        "Effect": "Allow", "Action": list(KMS_ACTIONS),
        "Resource": [f"acs:kms:cn-hangzhou:1234567890123456:key/{key.id}"]}]


def test_role_without_grants_has_no_policy(record):
    resources = record(lambda: InstanceRole("r1", bucket_names=[], conventions=Conventions()))
    assert [r.type for r in resources if r.custom] == [ROLE]


@pytest.mark.parametrize("prod", [False, True])
def test_kms_key_rotates_and_is_protected_in_prod(record, prod):
    conventions = Conventions(protect_data=prod, deletion_protection=prod)
    resources = record(lambda: KmsKey("k1", config=SecurityConfig(kms_pending_window_days=14),
                                      conventions=conventions))
    [key] = of(resources, KMS_KEY)
    assert {k: key.inputs[k] for k in ("automaticRotation", "rotationInterval",
                                       "pendingWindowInDays", "deletionProtection", "keySpec",
                                       "protectionLevel")} == {
        "automaticRotation": "Enabled", "rotationInterval": "365d", "pendingWindowInDays": 14,
        "deletionProtection": "Enabled" if prod else "Disabled", "keySpec": "Aliyun_AES_256",
        "protectionLevel": "SOFTWARE"}
    assert "dkmsInstanceId" not in key.inputs
    assert key.protect is prod


def test_kms_key_in_an_instance_may_rotate_sooner(record):
    config = SecurityConfig(kms_rotation_days=90, kms_instance_id="kst-abc1")
    resources = record(lambda: KmsKey("k1", config=config, conventions=Conventions()))
    [key] = of(resources, KMS_KEY)
    assert (key.inputs["rotationInterval"], key.inputs["dkmsInstanceId"]) == ("90d", "kst-abc1")


def test_key_pair_needs_a_public_key():
    from gpu_infra.blocks.identity import KeyPair

    with pytest.raises(ValueError, match="^public_key: a key pair needs security.public_key$"):
        KeyPair("k1", config=SecurityConfig(), conventions=Conventions())
