"""Network, security, identity and KMS through the real program (plan under mocks)."""

import pytest

from gpu_infra.blocks.conventions import REQUIRED_TAG_KEYS

from .conftest import BASE_TRAINING, merged, takes_tags

PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN me@host"
FULL = merged(BASE_TRAINING, security={
    "public_key": PUBLIC_KEY, "admin_cidrs": ["192.168.100.0/24"], "service_ports": [8000],
    "client_cidrs": ["10.20.0.0/16"], "kms_encryption": True})


def test_tag_check_knows_which_types_take_tags():
    assert takes_tags("alicloud:vpc/switch:Switch") and takes_tags("alicloud:ram/role:Role")
    assert not takes_tags("alicloud:vpc/snatEntry:SnatEntry")
    assert not takes_tags("alicloud:ecs/securityGroupRule:SecurityGroupRule")


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_every_taggable_resource_carries_stack_and_user_tags(plan_cluster, environment):
    plan = plan_cluster(merged(FULL, environment=environment), name="tagged")
    taggable = [r for r in plan.resources if r.custom and takes_tags(r.type)]
    assert {r.type.split(":")[-1] for r in taggable} >= {
        "Network", "Switch", "NatGateway", "EipAddress", "SecurityGroup", "EcsKeyPair",
        "Role", "Policy", "Key"}
    for resource in taggable:
        tags = resource.inputs.get("tags", {})
        assert set(REQUIRED_TAG_KEYS) <= set(tags), resource.name
        assert (tags["Stack"], tags["Environment"], tags["Layout"], tags["ManagedBy"],
                tags["CostCenter"], tags["Owner"], tags["Name"]) == (
            "tagged", environment, "training", "pulumi", "cc-1", "team-a",
            resource.inputs.get("bucket", resource.name))  # a bucket is named by its bucket


def test_exports_what_users_need_next(plan_cluster):
    plan = plan_cluster(FULL)
    expected = {
        "vpc_id": plan.one("alicloud:vpc/network:Network").id,
        "vswitch_ids": {"cn-hangzhou-i": plan.one("alicloud:vpc/switch:Switch").id},
        "security_group_id": plan.one("alicloud:ecs/securityGroup:SecurityGroup").id,
        "role_name": "t01-node-role",
        "nat_eip": plan.one("alicloud:vpc/snatEntry:SnatEntry").inputs["snatIp"],
        "key_pair_name": "t01-sec-login-key",
        "kms_key_id": plan.one("alicloud:kms/key:Key").id}
    assert {key: plan.outputs.get(key) for key in expected} == expected


def test_configured_rules_reach_the_cluster_security_group(plan_cluster):
    plan = plan_cluster(FULL)
    rules = {(r.inputs["portRange"], r.inputs.get("cidrIp")) for r in
             plan.by_type("alicloud:ecs/securityGroupRule:SecurityGroupRule")
             if r.inputs["type"] == "ingress" and "cidrIp" in r.inputs}
    assert rules == {("22/22", "192.168.100.0/24"), ("8000/8000", "10.20.0.0/16")}


@pytest.mark.parametrize("environment,kms,expected", [
    ("dev", None, 0), ("dev", True, 1), ("prod", None, 1), ("staging", False, 0)])
def test_kms_key_only_when_enabled(plan_cluster, environment, kms, expected):
    security = {} if kms is None else {"kms_encryption": kms}
    cluster = merged(BASE_TRAINING, environment=environment, security=security,
                     suppress=["prod-without-kms"])
    plan = plan_cluster(cluster)
    keys = plan.by_type("alicloud:kms/key:Key")
    assert len(keys) == expected
    assert ("kms_key_id" in plan.outputs) is bool(expected)
    [policy] = [p for p in plan.by_type("alicloud:ram/policy:Policy")  # the buckets' grant
                if p.name.endswith("-node-policy")]
    assert ("kms:Decrypt" in policy.inputs["policyDocument"]) is bool(expected)


def test_no_nat_means_no_egress_resources_and_no_eip_export(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, network={"nat_gateway": False}))
    assert not [r for r in plan.resources if r.type.split(":")[-1] in {
        "NatGateway", "EipAddress", "EipAssociation", "SnatEntry"}]
    assert "nat_eip" not in plan.outputs


def test_bring_your_own_network_plan_creates_no_vpc(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, network={
        "existing_vpc_id": "vpc-byo1", "existing_vswitch_ids": {"cn-hangzhou-i": "vsw-byo1"}}))
    assert not plan.by_type("alicloud:vpc/network:Network")
    assert not plan.by_type("alicloud:vpc/switch:Switch")
    assert plan.one("alicloud:ecs/securityGroup:SecurityGroup").inputs["vpcId"] == "vpc-byo1"
    assert plan.outputs["vpc_id"] == "vpc-byo1"
    assert plan.outputs["vswitch_ids"] == {"cn-hangzhou-i": "vsw-byo1"}


def test_kms_instance_and_rotation_reach_the_key(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, security={
        "kms_encryption": True, "kms_instance_id": "kst-abc1", "kms_rotation_days": 30,
        "kms_pending_window_days": 7}))
    inputs = plan.one("alicloud:kms/key:Key").inputs
    assert (inputs["dkmsInstanceId"], inputs["rotationInterval"],
            inputs["pendingWindowInDays"]) == ("kst-abc1", "30d", 7)
