"""The network and security sections: defaults, and one clear line per invalid value."""

import pytest

from gpu_infra.knowhow import run_validators
from gpu_infra.schema import ConfigError, environment
from gpu_infra.schema.environment import PROFILES, RELAXED

from .conftest import BASE_TRAINING, cluster_config, merged

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyq me@host"


def problems_of(**sections) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        cluster_config(merged(BASE_TRAINING, **sections))
    return caught.value.problems


def test_defaults():
    stack = cluster_config(BASE_TRAINING)
    assert (stack.network.creates_nat, stack.network.nat_bandwidth_mbps) == (True, 200)
    security = stack.security
    assert (security.public_key, security.admin_cidrs, security.client_cidrs,
            security.service_ports) == (None, [], [], [])
    assert (security.kms_rotation_days, security.kms_pending_window_days) == (365, 30)
    assert stack.kms_encryption is False
    assert cluster_config(merged(BASE_TRAINING, environment="prod")).kms_encryption is True


def test_valid_public_key_is_kept():
    assert cluster_config(merged(BASE_TRAINING, security={"public_key": KEY})
                          ).security.public_key == KEY


@pytest.mark.parametrize("sections,expected", [
    ({"network": {"vpc_cidr": "10.1.0.1/16"}},
     ["gpu-infra:cluster.network.vpc_cidr: input is not a valid IPv4 network "
      "(got '10.1.0.1/16')"]),
    ({"network": {"zones": ["cn-hangzhou-i", "cn-beijing-a"]}},
     ["gpu-infra:cluster.network.zones: cn-beijing-a is not a zone of region cn-hangzhou"]),
    ({"network": {"zones": ["cn-hangzhou-i", "cn-hangzhou-j"],
                  "vswitch_cidrs": {"cn-hangzhou-j": "10.1.64.0/22"}}},
     ["gpu-infra:cluster.network.vswitch_cidrs.cn-hangzhou-j: 10.1.64.0/22 overlaps "
      "10.1.64.0/21 of cn-hangzhou-i"]),
    ({"network": {"nat_bandwidth_mbps": 201}},
     ["gpu-infra:cluster.network.nat_bandwidth_mbps: input should be less than or equal to "
      "200 (got 201)"]),
    ({"network": {"existing_vpc_id": "vpc-a", "existing_vswitch_ids": {"cn-hangzhou-i": "sw-1"}}},
     ["gpu-infra:cluster.network.existing_vswitch_ids.cn-hangzhou-i: string should match "
      "pattern '^vsw-[a-z0-9]+$' (got 'sw-1')"]),
    ({"network": {"existing_vpc_id": "vpc-a", "existing_vswitch_ids": {
        "cn-hangzhou-i": "vsw-1", "cn-hangzhou-k": "vsw-2"}}},
     ["gpu-infra:cluster.network.existing_vswitch_ids.cn-hangzhou-k: cn-hangzhou-k is not "
      "in zones"]),
    ({"network": {"existing_vswitch_ids": {"cn-hangzhou-i": "vsw-1"}}},
     ["gpu-infra:cluster.network.existing_vswitch_ids: needs existing_vpc_id"]),
    ({"environment": "prod", "security": {"admin_cidrs": ["0.0.0.0/0"],
                                          "client_cidrs": ["0.0.0.0/0"]}},
     ["gpu-infra:cluster.security.admin_cidrs: 0.0.0.0/0 covers all public IPv4 space: not "
      "allowed in prod; list the CIDRs that need access",
      "gpu-infra:cluster.security.client_cidrs: 0.0.0.0/0 covers all public IPv4 space: not "
      "allowed in prod; list the CIDRs that need access"]),
    ({"security": {"admin_cidrs": ["10.0.0.0/8", "10.0.0.0/8"], "service_ports": [80, 80],
                   "client_cidrs": ["1.2.3.0/24"] * 3}},
     ["gpu-infra:cluster.security.admin_cidrs: 10.0.0.0/8 is listed 2 times; list it once",
      "gpu-infra:cluster.security.service_ports: 80 is listed 2 times; list it once",
      "gpu-infra:cluster.security.client_cidrs: 1.2.3.0/24 is listed 3 times; list it once"]),
    ({"security": {"admin_cidrs": ["10.0.0.0/33"]}},
     ["gpu-infra:cluster.security.admin_cidrs[0]: input is not a valid IPv4 network "
      "(got '10.0.0.0/33')"]),
    ({"security": {"service_ports": [0]}},
     ["gpu-infra:cluster.security.service_ports[0]: input should be greater than or equal to "
      "1 (got 0)"]),
    ({"security": {"public_key": "hunter2"}},
     ["gpu-infra:cluster.security.public_key: not an OpenSSH public key; expected "
      "`<type> <base64> [comment]` with type one of ssh-ed25519, ssh-rsa, "
      "ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521"]),
    ({"security": {"public_key": "ssh-rsa not*base64"}},
     ["gpu-infra:cluster.security.public_key: the key body after the type is not base64"]),
    ({"security": {"kms_rotation_days": 400, "kms_pending_window_days": 3}},
     ["gpu-infra:cluster.security.kms_rotation_days: input should be less than or equal to "
      "365 (got 400)",
      "gpu-infra:cluster.security.kms_pending_window_days: input should be greater than or "
      "equal to 7 (got 3)"]),
    ({"security": {"kms_rotation_days": 90}},
     ["gpu-infra:cluster.security.kms_rotation_days: 90 needs kms_instance_id; a default KMS "
      "key rotates every 365 days only"]),
    ({"security": {"kms_instance_id": "kms-1"}},
     ["gpu-infra:cluster.security.kms_instance_id: string should match pattern "
      "'^kst-[a-z0-9]+$' (got 'kms-1')"]),
    ({"security": {"password": "x"}},
     ["gpu-infra:cluster.security.password: unknown key; allowed: public_key, admin_cidrs, "
      "service_ports, client_cidrs, kms_encryption, kms_instance_id, kms_rotation_days, "
      "kms_pending_window_days"]),
])
def test_invalid_values_get_one_line_each(sections, expected):
    assert problems_of(**sections) == expected


def test_kms_instance_allows_shorter_rotation():
    security = cluster_config(merged(BASE_TRAINING, security={
        "kms_instance_id": "kst-abc1", "kms_rotation_days": 30})).security
    assert (security.kms_instance_id, security.kms_rotation_days) == ("kst-abc1", 30)


def test_world_open_cidrs_are_allowed_outside_prod_with_a_warning(monkeypatch):
    stack = cluster_config(merged(BASE_TRAINING, security={
        "admin_cidrs": ["0.0.0.0/1", "128.0.0.0/1"], "client_cidrs": ["10.0.0.0/8"]}))
    assert [str(c) for c in stack.security.admin_cidrs] == ["0.0.0.0/1", "128.0.0.0/1"]
    assert [f.line() for f in run_validators(stack) if f.validator == "world-open-cidrs"] == [
        "WARNING world-open-cidrs: security.admin_cidrs: 0.0.0.0/1, 128.0.0.0/1 covers all "
        "public IPv4 space: anyone on the internet can connect; list the CIDRs that need "
        "access (refused in prod)"]
    # the warning says what the profile does, not what it did when written
    monkeypatch.setitem(PROFILES, "staging", PROFILES["prod"])
    assert [f.message for f in run_validators(stack) if f.validator == "world-open-cidrs"][0] \
        .endswith("need access (refused in staging and prod)")
    monkeypatch.setattr(environment, "PROFILES", {"dev": RELAXED})
    assert [f.message for f in run_validators(stack) if f.validator == "world-open-cidrs"][0] \
        .endswith("list the CIDRs that need access")
    suppressed = cluster_config(merged(BASE_TRAINING, suppress=["world-open-cidrs"], security={
        "admin_cidrs": ["0.0.0.0/0"]}))
    assert run_validators(suppressed) == [f for f in run_validators(suppressed)
                                          if f.validator != "world-open-cidrs"]


@pytest.mark.parametrize("cidrs, reason", [
    (["0.0.0.0/0"], "covers all public IPv4 space"),
    (["0.0.0.0/1", "128.0.0.0/1"], "covers all public IPv4 space"),
    (["0.0.0.0/1"], "covers 56.5% of public IPv4 space, more than a /8"),
    (["0.0.0.0/4"], "covers 6.34% of public IPv4 space, more than a /8"),
    (["11.0.0.0/8", "12.0.0.0/8"], "covers 0.906% of public IPv4 space, more than a /8"),
])
@pytest.mark.parametrize("field", ["admin_cidrs", "client_cidrs"])
def test_prod_refuses_world_open_cidrs_in_every_spelling(field, cidrs, reason):
    assert problems_of(environment="prod", security={field: cidrs}) == [
        f"gpu-infra:cluster.security.{field}: {', '.join(cidrs)} {reason}: not allowed in "
        "prod; list the CIDRs that need access"]


@pytest.mark.parametrize("cidrs", [["10.0.0.0/8"], ["47.0.0.0/8"], ["203.0.113.0/24"],
                                   ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]])
def test_prod_accepts_narrow_cidrs(cidrs):
    stack = cluster_config(merged(BASE_TRAINING, environment="prod",
                                  security={"admin_cidrs": cidrs, "client_cidrs": cidrs}))
    assert [str(c) for c in stack.security.admin_cidrs] == cidrs
