"""The stack schema: valid stacks load; each kind of invalid input gets its one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_infra.schema import ConfigError, TrainingConfig, load_cluster_config, parse_cluster_config
from gpu_infra.schema.loader import read_stack_file

from .conftest import BASE_TRAINING, STACKS_DIR, cluster_config, merged


def problems_of(cluster: dict, region: str = "cn-hangzhou") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_cluster_config({"alicloud:region": region, "gpu-infra:cluster": cluster})
    return caught.value.problems


@pytest.mark.parametrize("path", sorted(STACKS_DIR.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_every_shipped_stack_is_valid(path: Path):
    stack_file, stack = load_cluster_config(path)
    assert stack.name and stack_file.name == path.name[len("Pulumi."):-len(".yaml")]


def test_defaults_are_applied():
    stack = cluster_config(BASE_TRAINING)
    assert isinstance(stack, TrainingConfig)
    assert stack.environment == "dev" and stack.network.creates_nat is True
    assert stack.security.admin_cidrs == [] and stack.security.public_key is None
    assert stack.kms_encryption is False
    assert cluster_config(merged(BASE_TRAINING, environment="prod")).kms_encryption is True


def test_vswitch_layout_follows_zone_letters_so_adding_a_zone_renumbers_nothing():
    one = cluster_config(merged(BASE_TRAINING, network={"zones": ["cn-hangzhou-i"]}))
    two = cluster_config(merged(BASE_TRAINING,
                                network={"zones": ["cn-hangzhou-h", "cn-hangzhou-i"]}))
    assert str(one.network.vswitch_cidr("cn-hangzhou-i")) == "10.1.64.0/21"
    assert two.network.vswitch_cidr("cn-hangzhou-i") == one.network.vswitch_cidr("cn-hangzhou-i")
    assert str(two.network.vswitch_cidr("cn-hangzhou-h")) == "10.1.56.0/21"


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"fleet": {"instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": 0}},
     "gpu-infra:cluster.fleet.nodes: input should be greater than or equal to 1 (got 0)"),
    ({"fleet": {"instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": "many"}},
     "gpu-infra:cluster.fleet.nodes: input should be a valid integer (got 'many')"),
    ({"network": {"zones": ["cn-hangzhou-i"], "vpc_cidr": "10.0.0.1/16"}},
     "gpu-infra:cluster.network.vpc_cidr: input is not a valid IPv4 network (got '10.0.0.1/16')"),
    ({"network": {"zones": ["cn-beijing-a"]}},
     "gpu-infra:cluster.network.zones: cn-beijing-a is not a zone of region cn-hangzhou"),
    ({"network": {"zones": ["cn-hangzhou-i"], "vpc_cidr": "10.0.0.0/16",
                  "vswitch_cidrs": {"cn-hangzhou-i": "10.9.0.0/24"}}},
     "gpu-infra:cluster.network.vswitch_cidrs.cn-hangzhou-i: 10.9.0.0/24 is outside vpc_cidr "
     "10.0.0.0/16"),
    ({"network": {"zones": ["cn-hangzhou-a", "cn-hangzhou-b"], "vpc_cidr": "10.0.0.0/16",
                  "vswitch_cidrs": {"cn-hangzhou-b": "10.0.0.0/22"}}},
     "gpu-infra:cluster.network.vswitch_cidrs.cn-hangzhou-b: 10.0.0.0/22 overlaps 10.0.0.0/21 of "
     "cn-hangzhou-a"),
    ({"network": {"zones": ["cn-hangzhou-z"], "vswitch_prefix": 20}},
     "gpu-infra:cluster.network.zones: zone cn-hangzhou-z: letter slot 25 does not fit the 16 /20 "
     "slots of 10.1.0.0/16; set vswitch_cidrs for it or a longer vswitch_prefix"),
    ({"network": {"zones": ["cn-hangzhou-i"], "existing_vpc_id": "vpc-abc"}},
     "gpu-infra:cluster.network.existing_vswitch_ids: no vSwitch id for zone cn-hangzhou-i"),
    ({"environment": "prod", "security": {"admin_cidrs": ["0.0.0.0/0"]}},
     "gpu-infra:cluster.security.admin_cidrs: 0.0.0.0/0 covers all public IPv4 space: not "
     "allowed in prod; list the CIDRs that need access"),
    ({"environment": "qa"},
     "gpu-infra:cluster.environment: input should be 'dev', 'staging' or 'prod' (got 'qa')"),
    ({"name": "Train_1"},
     "gpu-infra:cluster.name: string should match pattern '^[a-z][a-z0-9-]{1,22}[a-z0-9]$' "
     "(got 'Train_1')"),
    ({"tags": {"aliyun:team": "x"}},
     "gpu-infra:cluster.tags: tag 'aliyun:team': tag keys starting with aliyun or acs: are "
     "reserved by Alibaba Cloud"),
])
def test_each_invalid_value_gets_one_line_with_path_and_allowed(overrides, expected):
    assert problems_of(merged(BASE_TRAINING, **overrides)) == [expected]


def test_unknown_keys_are_rejected_with_the_allowed_ones():
    cluster = merged(BASE_TRAINING, colour="blue",
                     network={"zones": ["cn-hangzhou-i"], "vpc": "10.0.0.0/16"})
    problems = problems_of(cluster)
    assert any(p.startswith("gpu-infra:cluster.colour: unknown key; allowed: name, environment, "
                            "tags, network, suppress, monthly_budget_cny, security")
               for p in problems)
    assert any(p.startswith("gpu-infra:cluster.network.vpc: unknown key; allowed: vpc_cidr, zones")
               for p in problems)
    assert len(problems) == 2


def test_layout_missing_or_wrong():
    without = {k: v for k, v in BASE_TRAINING.items() if k != "layout"}
    assert problems_of(without) == [
        "gpu-infra:cluster.layout: missing; allowed: training, inference, rendering, image"]
    assert problems_of(merged(BASE_TRAINING, layout="hpc")) == [
        "gpu-infra:cluster.layout: 'hpc' is not a layout; allowed: training, inference, rendering, "
        "image"]


def test_missing_required_fields_and_region():
    cluster = {k: v for k, v in BASE_TRAINING.items() if k != "fleet"}
    assert problems_of(cluster) == ["gpu-infra:cluster.fleet: missing (required)"]
    assert problems_of(BASE_TRAINING, region="mars-1")[0].startswith(
        "alicloud:region: unknown region 'mars-1'; allowed: ap-northeast-1,")
    with pytest.raises(ConfigError) as caught:
        parse_cluster_config({"gpu-infra:cluster": BASE_TRAINING, "gpu-infra:nodes": 3})
    assert caught.value.problems == [
        "gpu-infra:nodes: unknown key for project gpu-infra; allowed: gpu-infra:cluster",
        "alicloud:region: missing; set the Alibaba Cloud region, e.g. cn-hangzhou"]


def test_malformed_yaml_and_missing_file_are_one_line_errors(tmp_path: Path):
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-infra:cluster: {name: [\n")
    with pytest.raises(ConfigError) as caught:
        read_stack_file(bad)
    [line] = caught.value.problems
    assert line.startswith(f"{bad}:3:1: malformed YAML:")
    with pytest.raises(ConfigError) as caught:
        read_stack_file(tmp_path / "Pulumi.none.yaml")
    assert caught.value.problems == [f"{tmp_path / 'Pulumi.none.yaml'}: no such stack file; "
                                     "stacks in " f"{tmp_path}: bad"]


def test_secure_values_become_placeholders_and_are_listed(tmp_path: Path):
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text("config:\n  alicloud:region: cn-hangzhou\n  gpu-infra:token:\n"
                    "    secure: v1:abc\n  gpu-infra:cluster:\n    tags:\n      Owner:\n"
                    "        secure: v1:def\n")
    stack_file = read_stack_file(path)
    assert stack_file.secret_keys == ["gpu-infra:token", "gpu-infra:cluster.tags.Owner"]
    assert stack_file.config["gpu-infra:cluster"]["tags"]["Owner"] == "[secret]"
