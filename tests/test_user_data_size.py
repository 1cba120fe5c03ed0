"""ECS's 32 KB user-data limit: every shipped ECS stack takes at most half of it (ROOM: the rest
is for what later releases add), the largest stacks the schema allows still fit, and a stack
that would not fit is one ERROR line naming the field, exit 2 from validate and plan, before
anything is built."""

from __future__ import annotations

import random
import string

from gpu_infra.blocks.bootstrap import user_data, user_data_size
from gpu_infra.nodeplan import judge_stack, node_plan
from gpu_infra.nodeplan.user_data import stand_in, worst_case_spec
from gpu_infra_facts.node_stack import USER_DATA_MAX_BYTES
from gpu_infra_tools.cli import main

from .conftest import BASE_RENDERING, BASE_TRAINING, cluster_config, merged, write_stack
from .test_bootstrap_scripts import user_data_of

ROOM = USER_DATA_MAX_BYTES // 2
"""The most user data a shipped or largest stack may take (the loader packs the node script:
blocks.bootstrap.packing)."""
LONGEST_NAME = "a" + stand_in(23, "name")
"""The longest cluster name the schema takes (24 characters; random ones, which gzip cannot
shrink: nodeplan.user_data.stand_in)."""
MOST_DISKS = [{"name": f"d{index:02d}-" + stand_in(27, f"disk{index}"), "size_gib": 100}
              for index in range(16)]
"""16 data disks (the schema's maximum) with 31-character names (its longest)."""
OSS_KEY_MAX_BYTES = 1023
"""An OSS object key is at most 1023 bytes (OSS "Object naming conventions")."""
CONTACTS = {"contacts": [{"name": "oncall", "email": "oncall@example.com"}]}
"""Contacts turn on the GPU health check, so the nodes fetch the node tools (their step)."""
VWS_TYPES = ["ecs.vgn7i-vws-m4.xlarge", "ecs.vgn7i-vws-m8.2xlarge", "ecs.vgn7i-vws-m12.3xlarge",
             "ecs.vgn7i-vws-m24.7xlarge"]

LARGEST_TRAINING = merged(
    BASE_TRAINING, name=LONGEST_NAME, monitoring=CONTACTS,
    fleet={"instance_type": "ecs.ebmgn7ex.32xlarge", "nodes": 2, "erdma": "on",
           "jumbo_frames": True},
    storage={"disks": MOST_DISKS, "shared_fs": {"enabled": True, "kind": "extreme",
                                                "capacity_gib": 100}})
"""Every step (node tools, disks, shared fs, driver, eRDMA, fabric manager, NCCL, cluster
wiring) with the longest names the schema allows."""
LARGEST_SPOT_TRAINING = merged(LARGEST_TRAINING, fleet={**LARGEST_TRAINING["fleet"],
                                                        "capacity": "spot",
                                                        "interruptible": True,
                                                        "jumbo_frames": False})
"""The same on spot capacity (no jumbo frames: ESS cannot enable them): the fixed node, and
the spot workers with the spot watcher and the scaling group's readiness answer."""
LARGEST_RENDERING = merged(
    BASE_RENDERING, name=LONGEST_NAME, monitoring=CONTACTS,
    fleet={"instance_types": VWS_TYPES,
           "driver": {"route": "grid", "version": "535.161.07",
                      "grid_package": f"oss://{LONGEST_NAME}-dev-datasets/"
                                      + stand_in(OSS_KEY_MAX_BYTES, "key"),
                      "grid_package_sha256": "0" * 64}},
    storage={"disks": MOST_DISKS, "shared_fs": {"enabled": True, "kind": "extreme",
                                                "capacity_gib": 100}})
"""A scaling fleet with the GRID route, the longest object key OSS takes and several types,
node logs and node tools on."""


def test_the_largest_stacks_fit_and_the_check_bounds_what_the_program_plans(plan_cluster):
    for cluster in (LARGEST_TRAINING, LARGEST_SPOT_TRAINING, LARGEST_RENDERING):
        planned = sorted(set(user_data_of(plan_cluster(cluster))), key=len)
        config = cluster_config(cluster)
        nodes = node_plan(config)
        assert nodes is not None
        checked = sorted(user_data_size(user_data(worst_case_spec(part)))
                         for part in nodes.parts())
        for text, bound in zip(planned, checked, strict=True):
            assert user_data_size(text) <= bound <= ROOM
        assert not [f for f in judge_stack(config) if f.validator == "user-data-too-large"]


SHIPPED_ECS_FLEETS = ("training-dev", "training-prod", "inference-prod", "rendering-batch")


def test_every_shipped_ecs_stack_fits_with_the_longest_values_the_cloud_may_assign():
    from gpu_infra.schema.loader import load_cluster_config

    from .conftest import STACKS_DIR

    for stack in SHIPPED_ECS_FLEETS:
        _, config = load_cluster_config(STACKS_DIR / f"Pulumi.{stack}.yaml")
        spec = worst_case_spec(node_plan(config))
        assert spec.node_tools is not None and "node_tools" in spec.node_steps(), stack
        assert user_data_size(user_data(spec)) <= ROOM, stack


def test_a_stack_over_the_limit_is_one_error_line_from_validate_and_plan(tmp_path, capsys):
    key = "".join(random.Random(0).choices(string.ascii_letters + string.digits,
                                            k=USER_DATA_MAX_BYTES))  # gzip cannot shrink it
    cluster = merged(LARGEST_RENDERING, fleet={
        "instance_types": VWS_TYPES,
        "driver": {"route": "grid", "version": "535.161.07",
                   "grid_package": f"oss://{LONGEST_NAME}-dev-datasets/{key}"}})
    path = write_stack(tmp_path, "huge", cluster)
    for command in ("validate", "plan"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "user-data-too-large" in line]
        assert len(lines) == 1, err
        assert lines[0].strip().startswith("ERROR user-data-too-large: fleet.driver.grid_package: "
                                   "the nodes' user data would be ")
        assert f"over ECS's limit of {USER_DATA_MAX_BYTES:,}" in lines[0]
        assert "Traceback" not in err


def test_node_logs_are_named_among_what_the_stack_adds(monkeypatch):
    import gpu_infra.nodeplan.user_data as check

    config = cluster_config(LARGEST_RENDERING)
    size = user_data_size(user_data(worst_case_spec(node_plan(config))))
    monkeypatch.setattr(check, "USER_DATA_MAX_BYTES", size - 1)
    [finding] = [f for f in judge_stack(config) if f.validator == "user-data-too-large"]
    assert "logs.enabled " in finding.message


def test_many_long_disks_are_named_when_they_tip_the_user_data_over(monkeypatch):
    import gpu_infra.nodeplan.user_data as check

    config = cluster_config(LARGEST_TRAINING)
    size = user_data_size(user_data(worst_case_spec(node_plan(config))))
    monkeypatch.setattr(check, "USER_DATA_MAX_BYTES", size - 1)
    [finding] = [f for f in judge_stack(config) if f.validator == "user-data-too-large"]
    assert finding.path == "storage.disks"
    assert f"would be {size:,} bytes, 1 over" in finding.message
