"""Node rules: one rule per concern over every node-launching type (instances, ESS scaling
configurations, launch templates, ACK node pools) and both disk types."""

from __future__ import annotations

import inspect
import re

import pulumi_alicloud as alicloud
import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Context, Resource
from gpu_infra_policies.nodes import DISK_TYPES, NODE_SHAPES

from .rule_helpers import PROD, messages, stack_messages

NODE_TYPES = sorted(NODE_SHAPES)


def sdk_args(token: str) -> set[str]:
    """The camelCase input names of the SDK resource behind `token`."""
    _, path, name = token.split(":")
    cls = getattr(getattr(alicloud, path.partition("/")[0]), name)
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), arg)
            for arg in inspect.signature(cls._internal_init).parameters}


@pytest.mark.parametrize("token", NODE_TYPES)
def test_shape_inputs_exist_in_the_sdk(token):
    shape = NODE_SHAPES[token]
    top = {*shape.system_disk_encrypted[:1], *shape.system_disk_kms[:1], shape.data_disks,
           *shape.password_keys, *shape.user_data, "internetMaxBandwidthOut"}
    top |= {shape.password_inherit} if shape.password_inherit else set()
    top |= {shape.http_tokens[0]} if shape.http_tokens else set()
    assert top <= sdk_args(token)


@pytest.mark.parametrize("token", sorted(DISK_TYPES))
def test_disk_inputs_exist_in_the_sdk(token):
    assert set(DISK_TYPES[token]) <= sdk_args(token)


@pytest.mark.parametrize("token", NODE_TYPES)
def test_public_ip(token):
    assert messages("no-public-ip-on-nodes", Resource(token, {"internetMaxBandwidthOut": 10})) \
        == ["internetMaxBandwidthOut 10 gives the node a public IP; set 0 and reach nodes "
            "through a bastion, VPN or load balancer"]
    for props in ({}, {"internetMaxBandwidthOut": 0}, {"internetMaxBandwidthOut": UNKNOWN}):
        assert messages("no-public-ip-on-nodes", Resource(token, props)) == []


def test_eip_on_instance_by_dependency_and_by_id():
    node = Resource(t.INSTANCE, {}, "node-0", "urn:node", id="i-1")
    nat = Resource("alicloud:vpc/natGateway:NatGateway", {}, "nat", "urn:nat", id="ngw-1")
    by_dep = Resource(t.EIP_ASSOCIATION, {"instanceId": UNKNOWN}, "assoc", "urn:a",
                      dependencies=("urn:node",))
    by_id = Resource(t.EIP_ASSOCIATION, {"instanceId": "i-1"}, "assoc2", "urn:b")
    to_nat = Resource(t.EIP_ASSOCIATION, {"instanceId": "ngw-1", "instanceType": "Nat"},
                      "assoc3", "urn:c", dependencies=("urn:nat",))
    assert stack_messages("no-eip-on-nodes", [node, nat, by_dep, by_id, to_nat]) == [
        ("assoc", "an EIP is bound to instance node-0"),
        ("assoc2", "an EIP is bound to instance node-0")]
    assert stack_messages("no-eip-on-nodes", [node, nat, to_nat]) == []


ENCRYPTED = {
    t.INSTANCE: {"systemDiskEncrypted": True, "systemDiskKmsKeyId": "k"},
    t.SCALING_CONFIGURATION: {"systemDiskEncrypted": True, "systemDiskKmsKeyId": "k"},
    t.ECS_LAUNCH_TEMPLATE: {"systemDisk": {"encrypted": True, "kmsKeyId": "k"}},
    t.LAUNCH_TEMPLATE: {"systemDisk": {"encrypted": True, "kmsKeyId": "k"}},
    t.NODE_POOL: {"systemDiskEncrypted": True, "systemDiskKmsKey": "k"},
}
"""A system disk encrypted with a KMS key, as each node type spells it."""


@pytest.mark.parametrize("token", [t for t in NODE_TYPES if NODE_SHAPES[t].system_disk_encrypted])
def test_disk_encryption_on_every_node_type(token):
    bad = Resource(token, {"dataDisks": [{"size": 100}, {"encrypted": True}]})
    assert messages("disks-encrypted", bad) == ["system disk is not encrypted",
                                                "dataDisks[0] is not encrypted"]
    data = [{"encrypted": "true" if token == t.NODE_POOL else True, "kmsKeyId": "k"}]
    good = Resource(token, {**ENCRYPTED[token], "dataDisks": data, "tags": PROD})
    assert messages("disks-encrypted", good) == []
    unknown = Resource(token, {"systemDiskEncrypted": UNKNOWN, "systemDisk": UNKNOWN,
                               "dataDisks": UNKNOWN})
    assert messages("disks-encrypted", unknown) == []


def test_node_pool_booleans_are_strings():
    pool = Resource(t.NODE_POOL, {"systemDiskEncrypted": True,
                                  "dataDisks": [{"encrypted": "false"}]})
    assert messages("disks-encrypted", pool) == ["dataDisks[0] is not encrypted"]


@pytest.mark.parametrize("token", sorted(DISK_TYPES))
def test_disk_encryption_kms_in_prod(token):
    disk = {"encrypted": True}
    assert messages("disks-encrypted", Resource(token, disk)) == []
    prod_by_tag = Resource(token, {**disk, "tags": PROD})
    expected = ["disk is encrypted without a KMS key, required in prod"]
    assert messages("disks-encrypted", prod_by_tag) == expected
    assert messages("disks-encrypted", Resource(token, disk), Context("prod")) == expected
    assert messages("disks-encrypted", prod_by_tag, kmsInProd=False) == []
    with_key = Resource(token, {**disk, "kmsKeyId": UNKNOWN, "tags": PROD})
    assert messages("disks-encrypted", with_key) == []
    assert messages("disks-encrypted", Resource(token, {})) == ["disk is not encrypted"]


def test_scaling_configuration_kms_in_prod():
    config = Resource(t.SCALING_CONFIGURATION, {"systemDiskEncrypted": True,
                                                "dataDisks": [{"encrypted": True}]})
    assert messages("disks-encrypted", config, Context("prod")) == [
        "system disk is encrypted without a KMS key, required in prod",
        "dataDisks[0] is encrypted without a KMS key, required in prod"]


@pytest.mark.parametrize("token", [t.INSTANCE, t.SCALING_CONFIGURATION, t.NODE_POOL])
def test_password_login(token):
    expected = ["password is set; log in with a key pair and no password"]
    assert messages("no-password-login", Resource(token, {"password": "hunter2"})) == expected
    # a secret or unknown password is still a password
    assert messages("no-password-login", Resource(token, {"password": "[secret]"})) == expected
    assert messages("no-password-login", Resource(token, {"password": UNKNOWN})) == expected
    assert messages("no-password-login", Resource(token, {"keyName": "k"})) == []


@pytest.mark.parametrize("token", [t.INSTANCE, t.SCALING_CONFIGURATION,
                                   t.ECS_LAUNCH_TEMPLATE, t.LAUNCH_TEMPLATE])
def test_password_inherit(token):
    assert messages("no-password-login", Resource(token, {"passwordInherit": True})) == [
        "passwordInherit is true: the image's preset password logs in; use a key pair"]
    assert messages("no-password-login", Resource(token, {"passwordInherit": False})) == []


@pytest.mark.parametrize("token, props", [
    (t.INSTANCE, {}), (t.INSTANCE, {"httpTokens": "optional"}),
    (t.ECS_LAUNCH_TEMPLATE, {}), (t.NODE_POOL, {"instanceMetadataOptions": {}}),
    (t.NODE_POOL, {"instanceMetadataOptions": {"httpTokens": "optional"}}),
])
def test_metadata_hardened_fires(token, props):
    [found] = messages("metadata-hardened", Resource(token, props))
    assert found.endswith("; set required (hardened metadata access)")


@pytest.mark.parametrize("token, props", [
    (t.INSTANCE, {"httpTokens": "required"}), (t.INSTANCE, {"httpTokens": UNKNOWN}),
    (t.ECS_LAUNCH_TEMPLATE, {"httpTokens": "required"}),
    (t.NODE_POOL, {"instanceMetadataOptions": {"httpTokens": "required"}}),
    (t.NODE_POOL, {"instanceMetadataOptions": UNKNOWN}),
    (t.SCALING_CONFIGURATION, {}),  # the provider cannot set it: not judged
])
def test_metadata_hardened_quiet(token, props):
    assert messages("metadata-hardened", Resource(token, props)) == []


def test_prod_deletion_protection():
    expected = ["prod node without deletionProtection; turn it on"]
    assert messages("prod-deletion-protection", Resource(t.INSTANCE, {"tags": PROD})) == \
        expected
    assert messages("prod-deletion-protection", Resource(
        t.INSTANCE, {"deletionProtection": False}), Context("prod")) == expected
    for props in ({"deletionProtection": True, "tags": PROD},
                  {"spotStrategy": "SpotAsPriceGo", "tags": PROD},
                  {"deletionProtection": UNKNOWN, "tags": PROD}, {}):
        assert messages("prod-deletion-protection", Resource(t.INSTANCE, props)) == []
