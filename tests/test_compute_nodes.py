"""GpuNodes under the mock engine: instances, deployment sets, roles, capacity mixes."""

from __future__ import annotations

import re

import pytest

from gpu_infra.blocks.compute.nodes import GpuNodes
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions
from gpu_infra.blocks.storage.disks import NodeDisk
from gpu_infra.catalog import CATALOG_ONLY
from gpu_infra.knowhow.placement import erdma_for, placement_for
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra_tools.plan.fake_cloud import FakeCloud

INSTANCE = "alicloud:ecs/instance:Instance"
DEPLOYMENT_SET = "alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet"
ROLE = "alicloud:ecs/ramRoleAttachment:RamRoleAttachment"


def fleet(**kwargs) -> TrainingFleet:
    return TrainingFleet(**{"instance_type": "ecs.gn8v-8x.48xlarge", "nodes": 4, **kwargs})


def build(record, nodes=2, protection=True, fleet_args=None, **kwargs):
    args = {"config": fleet(nodes=nodes, **(fleet_args or {})), "vswitch_id": "vsw-1",
            "security_group_ids": ["sg-1"], "image_id": "m-gpu",
            "conventions": Conventions(tags={"Project": "p"},
                                       deletion_protection=protection), **kwargs}
    resources = record(lambda: GpuNodes("gpu", **args))
    return ([r for r in resources if r.type == INSTANCE],
            [r for r in resources if r.type == DEPLOYMENT_SET],
            [r for r in resources if r.type == ROLE], resources)


def test_nodes_inputs(record):
    instances, sets, roles, resources = build(
        record, fleet_args={"system_disk_gib": 300}, role_name="gpu-role", key_name="k",
        user_data="#!/bin/sh")
    component = next(r for r in resources if r.type == "gpu-infra:compute:GpuNodes")
    first = instances[0].inputs
    assert [i.name for i in instances] == ["gpu-node-000", "gpu-node-001"]
    assert first["instanceType"] == "ecs.gn8v-8x.48xlarge" and first["imageId"] == "m-gpu"
    assert first["vswitchId"] == "vsw-1" and first["securityGroups"] == ["sg-1"]
    assert first["internetMaxBandwidthOut"] == 0 and first["keyName"] == "k"
    assert first["systemDiskCategory"] == "cloud_essd" and first["systemDiskSize"] == 300
    assert first["systemDiskPerformanceLevel"] == "PL1" and first["userData"] == "#!/bin/sh"
    assert first["networkInterfaceTrafficMode"] == "HighPerformance"
    assert first["deletionProtection"] is True and "roleName" not in first
    assert first["tags"][FLEET_TAG_KEY] == "gpu" and first["tags"]["Project"] == "p"
    assert first["deploymentSetId"] == sets[0].id and sets[0].inputs["strategy"] == "LowLatency"
    assert [r.inputs["ramRoleName"] for r in roles] == ["gpu-role", "gpu-role"]
    assert roles[0].inputs["instanceId"] == instances[0].id
    assert all(r.parent == component.urn for r in [*instances, *sets, *roles])


def test_more_than_twenty_nodes_split_over_deployment_sets(record):
    instances, sets, _, _ = build(record, nodes=45)
    assert len(sets) == 3
    by_set = [sum(1 for i in instances if i.inputs["deploymentSetId"] == s.id) for s in sets]
    assert by_set == [20, 20, 5]


def test_availability_set_no_role_standard_network_without_erdma(record):
    instances, sets, roles, _ = build(record, fleet_args={"erdma": "off",
                                                          "placement": "Availability"})
    assert roles == [] and sets[0].inputs["strategy"] == "Availability"
    assert instances[0].inputs["networkInterfaceTrafficMode"] == "Standard"


@pytest.mark.parametrize("capacity, expected, protected", [
    ({}, {"instanceChargeType": "PostPaid", "spotStrategy": "NoSpot"}, True),
    ({"capacity": "spot", "interruptible": True},
     {"instanceChargeType": "PostPaid", "spotStrategy": "SpotAsPriceGo"}, False),
    ({"capacity": "spot", "interruptible": True, "spot_strategy": "SpotWithPriceLimit",
      "spot_price_limit": 12.34},
     {"instanceChargeType": "PostPaid", "spotStrategy": "SpotWithPriceLimit",
      "spotPriceLimit": 12.34}, False),
    ({"capacity": "prepaid", "prepaid_period": 3},
     {"instanceChargeType": "PrePaid", "period": 3, "periodUnit": "Month",
      "renewalStatus": "AutoRenewal", "autoRenewPeriod": 1, "forceDelete": True}, True),
])
def test_capacity_mixes(record, capacity, expected, protected):
    instances, _, _, _ = build(record, fleet_args=capacity)
    inputs = instances[-1].inputs  # node 0 of a spot fleet stays on demand (on_demand_nodes)
    keys = ("instanceChargeType", "spotStrategy", "spotPriceLimit", "period", "periodUnit",
            "renewalStatus", "autoRenewPeriod", "forceDelete")
    assert {k: inputs[k] for k in keys if k in inputs} == expected
    assert inputs["deletionProtection"] is protected


def test_no_deletion_protection_outside_prod(record):
    instances, _, _, _ = build(record, protection=False)
    assert instances[0].inputs["deletionProtection"] is False


def test_placement_and_erdma_from_the_catalog():
    assert placement_for(fleet(), CATALOG_ONLY) == "LowLatency"
    assert placement_for(fleet(nodes=1), CATALOG_ONLY) == "Availability"
    assert placement_for(fleet(instance_type="ecs.gn7e-c16g1.32xlarge"),
                         CATALOG_ONLY) == "Availability"
    assert placement_for(fleet(placement="Availability"), CATALOG_ONLY) == "Availability"
    assert erdma_for(fleet(), CATALOG_ONLY) is True
    assert erdma_for(fleet(erdma="off"), CATALOG_ONLY) is False
    assert erdma_for(fleet(instance_type="ecs.gn7e-c16g1.32xlarge"), CATALOG_ONLY) is False


def test_image_by_name_is_looked_up_exactly(record, monkeypatch):
    """The lookup asks for the account's own images whose whole name is the given one and
    takes the one id the cloud answers (the fake cloud's canned answer is replaced by one
    that follows the request)."""
    from gpu_infra.blocks.compute.images import image_id_for
    from gpu_infra.schema.node import ImageChoice

    asked: list[dict] = []

    def images(self, token, args):
        asked.append(args)
        custom = {"gpu-baked": "m-baked1", "gpu-baked-old": "m-baked0"}
        ids = [image for name, image in custom.items()
               if args.get("owners") == "self" and re.fullmatch(args["nameRegex"], name)]
        return {"id": "images", "ids": ids, "images": []}

    monkeypatch.setattr(FakeCloud, "answer", images)
    resources = record(lambda: GpuNodes(
        "gpu", config=fleet(nodes=1), vswitch_id="vsw-1", security_group_ids=["sg-1"],
        image_id=image_id_for(ImageChoice(name="gpu-baked")), conventions=Conventions()))
    assert [r.inputs["imageId"] for r in resources if r.type == INSTANCE] == ["m-baked1"]
    assert asked == [{"nameRegex": "^gpu\\-baked$", "owners": "self"}]
    assert image_id_for(ImageChoice(id="m-abc")) == "m-abc"


def test_attached_disks_are_separate_children_of_each_node(record):
    """Each node gets its own disk in the nodes' zone, attached to it (delete-first); a kept
    disk outlives the node (delete_with_instance false) and is protected with the data."""
    disks = (NodeDisk("scratch", 500, provisioned_iops=1000),
             NodeDisk("ckpt", 100, keep=True, snapshot_policy_id="sp-1"))
    instances, _, _, resources = build(
        record, attached_disks=disks, zone_id="cn-beijing-l",
        conventions=Conventions(tags={"Project": "p"}, protect_data=True))
    by_name = {r.name: r for r in resources}
    scratch, kept = by_name["gpu-node-001-scratch"], by_name["gpu-node-001-ckpt"]
    assert (scratch.inputs["diskName"], scratch.inputs["zoneId"], scratch.inputs["size"],
            scratch.inputs["provisionedIops"], scratch.inputs["deleteWithInstance"]) == (
        "scratch", "cn-beijing-l", 500, 1000, True)
    assert not scratch.protect and kept.protect and kept.inputs["deleteWithInstance"] is False
    attachment = by_name["gpu-node-001-ckpt-attachment"]
    assert attachment.inputs == {"diskId": kept.id, "instanceId": instances[1].id,
                                 "deleteWithInstance": False}
    assert attachment.delete_before_replace
    assert by_name["gpu-node-001-ckpt-snapshots"].inputs["autoSnapshotPolicyId"] == "sp-1"
    assert "gpu-node-001-scratch-snapshots" not in by_name
    assert all("dataDisks" not in i.inputs and "dataDisks" not in i.ignore_changes
               for i in instances)


def test_attached_disks_need_the_zone_and_no_inline_disks(record):
    with pytest.raises(ValueError, match="attached_disks: need zone_id"):
        GpuNodes("gpu", config=fleet(), vswitch_id="vsw-1", security_group_ids=[],
                 image_id="m", conventions=Conventions(),
                 attached_disks=(NodeDisk("scratch", 500),))
