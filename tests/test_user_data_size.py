"""ECS's 32 KB user-data limit: every shipped ECS stack, and the largest stack of every shape
the schema allows (bench.user_data: the shapes are read from the layouts' models), takes at
most half of it (ROOM: the rest is for what later releases add) or is refused by an ERROR; a
stack that would not fit is one ERROR line naming the field, exit 2 from validate and plan,
before anything is built."""

from __future__ import annotations

import dataclasses
import random
import string
import typing

import pytest

from bench.user_data import (
    LARGEST,
    LONGEST_NAME,
    ROOM,
    VWS_TYPES,
    Shape,
    ecs_layouts,
    measure,
    shapes,
    shipped_ecs_stacks,
    shipped_size,
    with_changes,
)
from gpu_infra.blocks.bootstrap import BootstrapSpec, user_data, user_data_size
from gpu_infra.nodeplan import judge_stack, node_plan
from gpu_infra.nodeplan.user_data import worst_case_spec
from gpu_infra_facts.node_stack import USER_DATA_MAX_BYTES, DriverRoute
from gpu_infra_tools.cli import main

from .conftest import cluster_config, merged, write_stack
from .test_bootstrap_scripts import user_data_of

IMAGE_BUILD_ONLY = frozenset({"log_collector"})
"""BootstrapSpec fields only an image build sets (its nodes' user data is their fleet's)."""
SPOT_WORKERS = ((("fleet", "capacity"), "spot"), (("fleet", "jumbo_frames"), False))
"""The largest training stack on spot capacity: fixed nodes and an ESS group of workers
(which cannot enable jumbo frames)."""


@pytest.fixture(scope="module")
def measured() -> list[Shape]:
    """Every shape of every ECS layout, measured once (judged where over ROOM)."""
    return [shape for layout in ecs_layouts() for shape in shapes(layout, judge_over=ROOM)]


def test_every_ecs_layout_has_a_largest_stack_the_validators_accept():
    assert sorted(LARGEST) == sorted(ecs_layouts())
    for layout in LARGEST:
        largest = measure(layout)
        assert largest.refused is None, largest.refused


@pytest.mark.slow  # a few hundred stacks validated and rendered
def test_every_shape_fits_in_half_the_limit_or_is_refused(measured):
    over = [f"{shape.label}: {shape.size:,} bytes" for shape in measured
            if shape.refused is None and (shape.size or 0) > ROOM]
    assert not over, over
    assert all(shape.refused or shape.size for shape in measured)


@pytest.mark.slow
def test_the_shapes_reach_every_part_of_the_nodes_bootstrap(measured):
    """Each optional part of a node's bootstrap (a field of BootstrapSpec: a step, a
    workload, its settings) is in some accepted shape, and each driver route: a part a
    release adds is measured once a largest stack turns it on, and this test fails until
    one does."""
    accepted = [spec for shape in measured if shape.refused is None for spec in shape.specs]
    for field in dataclasses.fields(BootstrapSpec):
        if field.name in IMAGE_BUILD_ONLY or field.default is dataclasses.MISSING:
            continue
        assert any(getattr(spec, field.name) != field.default for spec in accepted), field.name
    assert {spec.route for spec in accepted} == set(typing.get_args(DriverRoute))


@pytest.mark.slow
def test_a_stack_without_buckets_would_not_leave_room_and_is_refused(measured):
    """Its nodes could fetch no node tools, so the user data would carry the whole
    bootstrap: over ROOM, and refused in every environment."""
    without = [shape for shape in measured
               if (("storage", "buckets", "purposes"), []) in shape.changes and shape.size]
    assert without and all((shape.size or 0) > ROOM and shape.refused for shape in without)
    alone = [shape for shape in without if len(shape.changes) == 1]
    assert alone and all(shape.refused.startswith("ERROR node-tools-without-bucket: ")
                         for shape in alone if shape.refused)


def test_the_largest_stacks_fit_and_the_check_bounds_what_the_program_plans(plan_cluster):
    """Each kind of node of each largest stack (a spot training fleet's fixed nodes and
    workers): the user data the program plans is at most what the size check renders."""
    for layout, cluster in LARGEST.items():
        for changes in ((), SPOT_WORKERS) if layout == "training" else ((),):
            stack = with_changes(cluster, changes)
            planned = sorted(set(user_data_of(plan_cluster(stack))), key=len)
            config = cluster_config(stack)
            nodes = node_plan(config)
            assert nodes is not None
            checked = sorted(user_data_size(user_data(worst_case_spec(part)))
                             for part in nodes.parts())
            for text, bound in zip(planned, checked, strict=True):
                assert user_data_size(text) <= bound <= ROOM, (layout, changes)
            assert not [f for f in judge_stack(config) if f.validator == "user-data-too-large"]


def test_every_shipped_ecs_stack_fits_with_the_longest_values_the_cloud_may_assign():
    shipped = shipped_ecs_stacks()
    assert {"training-prod", "inference-prod", "rendering-batch"} <= set(shipped)
    for stack, config in shipped.items():
        nodes = node_plan(config)
        assert nodes is not None
        for spec in map(worst_case_spec, nodes.parts()):
            assert spec.node_tools is not None and "node_tools" in spec.node_steps(), stack
        assert shipped_size(config) <= ROOM, stack


def test_a_stack_over_the_limit_is_one_error_line_from_validate_and_plan(tmp_path, capsys):
    key = "".join(random.Random(0).choices(string.ascii_letters + string.digits,
                                            k=USER_DATA_MAX_BYTES))  # gzip cannot shrink it
    cluster = merged(LARGEST["rendering"], fleet={
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

    config = cluster_config(LARGEST["rendering"])
    size = user_data_size(user_data(worst_case_spec(node_plan(config))))
    monkeypatch.setattr(check, "USER_DATA_MAX_BYTES", size - 1)
    [finding] = [f for f in judge_stack(config) if f.validator == "user-data-too-large"]
    assert "logs.enabled " in finding.message


def test_many_long_disks_are_named_when_they_tip_the_user_data_over(monkeypatch):
    import gpu_infra.nodeplan.user_data as check

    config = cluster_config(LARGEST["training"])
    size = user_data_size(user_data(worst_case_spec(node_plan(config))))
    monkeypatch.setattr(check, "USER_DATA_MAX_BYTES", size - 1)
    [finding] = [f for f in judge_stack(config) if f.validator == "user-data-too-large"]
    assert finding.path == "storage.disks"
    assert f"would be {size:,} bytes, 1 over" in finding.message
