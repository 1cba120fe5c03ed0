"""A library user's program gets the verdicts of a stack-file user: the layouts judge their
config when constructed (ERROR: LayoutConfigError naming the field, nothing registered;
WARNING and INFO: Pulumi's log; `suppress:` honoured), and a bring-your-own VPC states its
CIDR, which the network block checks against the cloud's answer."""

from __future__ import annotations

import logging
from typing import Any

import pulumi
import pytest

from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.network import (
    ExistingNetworkError,
    ExistingVswitch,
    Network,
    existing_network_problems,
)
from gpu_infra.knowhow import Level
from gpu_infra.layouts import ImageBakery, LayoutConfigError, TrainingCluster, layout_class
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import ConfigError, NetworkConfig
from gpu_infra_tools.plan.engine import ProgramError, run_under_mocks

from .conftest import BASE_TRAINING, cluster_config, merged

UNKNOWN_TYPE = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn9x-c8g1.2xlarge",
                                            "nodes": 2})
NO_EGRESS = merged(BASE_TRAINING, network={"nat_gateway": False})
BYO = {"vpc_cidr": "10.1.0.0/16", "zones": ["cn-hangzhou-i"], "existing_vpc_id": "vpc-byo1",
       "existing_vswitch_ids": {"cn-hangzhou-i": "vsw-byo1"}}


def build(layout: type, cluster: dict[str, Any], answers: dict[str, Any] | None = None):
    """Construct `layout` from `cluster` under the mock engine (invokes answered from
    `answers`, default the cluster): the resources, and the exception it raised (or None)."""
    config = cluster_config(cluster)
    raised: list[Exception] = []

    def program() -> None:
        try:
            layout("c1", config=config, stack_name="dev", project="p")
        except Exception as error:  # noqa: BLE001 (the test looks at what it was)
            raised.append(error)

    resources, _ = run_under_mocks(cluster_config(answers or cluster), "dev", program)
    return resources, (raised[0] if raised else None)


def test_an_error_config_stops_the_layout_before_it_registers_anything():
    resources, error = build(TrainingCluster, UNKNOWN_TYPE)
    assert isinstance(error, LayoutConfigError) and isinstance(error, pulumi.RunError)
    assert [(f.validator, f.path) for f in error.findings] == [
        ("unknown-instance-type", "fleet.instance_type")]
    assert "ERROR unknown-instance-type: fleet.instance_type: ecs.gn9x-c8g1.2xlarge" in str(error)
    assert resources == []


def test_the_image_layout_refuses_its_errors_too():
    cluster = {"layout": "image", "name": "img", "network": {"zones": ["cn-hangzhou-i"]},
               "image": {"instance_type": "ecs.g7.2xlarge"}}
    assert any(f.level is Level.ERROR for f in judge_stack(cluster_config(cluster)))
    resources, error = build(ImageBakery, cluster)
    assert isinstance(error, LayoutConfigError)
    assert {f.path for f in error.findings} == {"image.instance_type"}
    assert resources == []


def test_warnings_reach_pulumis_log_and_suppress_silences_them(caplog):
    with caplog.at_level(logging.WARNING):
        _, error = build(TrainingCluster, NO_EGRESS)
    assert error is None
    assert "WARNING no-internet-egress: network.nat_gateway" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _, error = build(TrainingCluster, merged(NO_EGRESS, suppress=["no-internet-egress"]))
    assert error is None and "no-internet-egress" not in caplog.text


def test_a_misspelled_suppress_name_is_an_error_in_a_program_too():
    _, error = build(TrainingCluster, merged(NO_EGRESS, suppress=["no-internet-egres"]))
    assert isinstance(error, LayoutConfigError)
    assert [f.path for f in error.findings] == ["suppress[0]"]


def test_the_layout_keeps_the_findings_the_stack_file_path_reports():
    """The verdicts a library user gets are judge_stack's, which `validate` and `plan`
    print."""
    config = cluster_config(NO_EGRESS)
    kept: list[Any] = []
    run_under_mocks(config, "dev", lambda: kept.append(
        layout_class(config)("c1", config=config, stack_name="dev", project="p")))
    assert kept[0].findings == judge_stack(config) != []


def test_an_existing_vpc_needs_its_cidr_stated():
    network = {key: value for key, value in BYO.items() if key != "vpc_cidr"}
    with pytest.raises(ConfigError) as failure:
        cluster_config({**BASE_TRAINING, "network": network})
    assert [line for line in failure.value.problems if "vpc_cidr" in line] == [
        "gpu-infra:cluster.network.vpc_cidr: required with existing_vpc_id: state the "
        "existing VPC's CIDR block (it scopes the shared file system's and the cluster's "
        "rules); the default 10.0.0.0/16 is only for a VPC the stack creates"]
    with pytest.raises(ValueError, match="vpc_cidr: required with existing_vpc_id"):
        NetworkConfig(zones=["cn-hangzhou-i"], existing_vpc_id="vpc-byo1",
                      existing_vswitch_ids={"cn-hangzhou-i": "vsw-byo1"})


def _network_config(**network: Any) -> NetworkConfig:
    return NetworkConfig.model_validate({**BYO, **network})


def _switch(cidr: str = "10.1.64.0/21", vpc: str = "vpc-byo1",
            zone: str = "cn-hangzhou-i") -> dict[str, ExistingVswitch]:
    return {"vsw-byo1": ExistingVswitch(vpc, zone, cidr)}


@pytest.mark.parametrize(("network", "blocks", "vswitches", "expected"), [
    ({}, ["10.1.0.0/16"], _switch(), []),
    ({"vpc_cidr": "10.1.64.0/20"}, ["10.1.0.0/16"], _switch(), []),
    ({"vpc_cidr": "172.16.0.0/16"}, ["10.1.0.0/16", "172.16.0.0/16"],
     _switch("172.16.8.0/24"), []),
    ({"vpc_cidr": "10.0.0.0/12"}, ["10.1.0.0/16"], _switch(),
     ["network.vpc_cidr: 10.0.0.0/12 is not within vpc-byo1's CIDR blocks (10.1.0.0/16); "
      "state the VPC's CIDR block, or the part of it the stack's vSwitches are in"]),
    ({}, None, {}, ["network.existing_vpc_id: vpc-byo1 not found (the lookup in the stack's "
                    "region found no such VPC)"]),
    ({}, ["10.1.0.0/16"], {}, ["network.existing_vswitch_ids.cn-hangzhou-i: vsw-byo1 not "
                               "found (the lookup found no such vSwitch)"]),
    ({}, ["10.1.0.0/16"], _switch(vpc="vpc-other"),
     ["network.existing_vswitch_ids.cn-hangzhou-i: vsw-byo1 is in vpc-other, not in "
      "vpc-byo1"]),
    ({}, ["10.1.0.0/16"], _switch(zone="cn-hangzhou-j"),
     ["network.existing_vswitch_ids.cn-hangzhou-i: vsw-byo1 is in zone cn-hangzhou-j, not "
      "cn-hangzhou-i"]),
    ({"vpc_cidr": "10.1.0.0/20"}, ["10.1.0.0/16"], _switch(),
     ["network.existing_vswitch_ids.cn-hangzhou-i: vsw-byo1 (10.1.64.0/21) is outside "
      "vpc_cidr 10.1.0.0/20; state a vpc_cidr that holds it"]),
])
def test_the_cloud_answer_is_checked_against_the_network_section(network, blocks, vswitches,
                                                                  expected):
    assert existing_network_problems(_network_config(**network), blocks, vswitches) == expected


def test_a_misdescribed_vpc_stops_the_program_before_anything_uses_its_ids():
    """The cloud says the VPC is 10.1.0.0/16; the program says 10.9.0.0/16."""
    config = _network_config(vpc_cidr="10.9.0.0/16")
    conventions = Conventions(tags={"Project": "p"}, region="cn-hangzhou")
    created: list[Any] = []

    def program() -> None:
        network = Network("n1", config=config, conventions=conventions)
        created.append(pulumi.Output.from_input(network.vpc_id).apply(
            lambda vpc_id: pulumi.CustomResource("alicloud:ecs/securityGroup:SecurityGroup",
                                                 "sg", {"vpcId": vpc_id})))

    answers = merged(BASE_TRAINING, network=BYO)
    with pytest.raises(ProgramError) as failure:
        run_under_mocks(cluster_config(answers), "dev", program)
    message = str(failure.value)
    assert ExistingNetworkError.__name__ in message
    assert "network.vpc_cidr: 10.9.0.0/16 is not within vpc-byo1's CIDR blocks (10.1.0.0/16)" \
        in message
    assert "Traceback" not in message
    # what the failed program left pending does not fail the next one
    resources, _ = run_under_mocks(cluster_config(answers), "dev", lambda: Network(
        "n2", config=_network_config(), conventions=conventions))
    assert [r.type for r in resources] == ["gpu-infra:network:Network"]
