"""ECS's 32 KB user-data limit: every shipped ECS stack, and the largest stack of every shape
the schema allows (bench.user_data: the shapes are read from the layouts' models), takes at
most half of it (ROOM: the rest is for what later releases add) or is refused by an ERROR; a
stack that would not fit is one ERROR line naming the field, exit 2 from validate and plan,
before anything is built."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from bench.user_data import (
    LARGEST,
    ROOM,
    Shape,
    ecs_layouts,
    measure,
    measure_stack,
    shapes,
    shipped_ecs_stacks,
    shipped_size,
    with_changes,
)
from gpu_infra.blocks.bootstrap import BootstrapSpec, node_script, user_data, user_data_size
from gpu_infra.nodeplan import judge_stack, node_plan
from gpu_infra.nodeplan.user_data import worst_case_spec
from gpu_infra_facts.node_stack import DriverRoute
from gpu_infra_tools.cli import main

from .conftest import cluster_config, write_stack
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


def _strings(value: Any) -> set[str]:
    """Every string in `value`: the values and the mapping keys, at any depth."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {*value, *(text for item in value.values() for text in _strings(item))}
    if isinstance(value, list):
        return {text for item in value for text in _strings(item)}
    return set()


def _replaced(value: Any, old: str, new: str) -> Any:
    """`value` with every string (value or key) equal to `old` replaced by `new`."""
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, dict):
        return {_replaced(key, old, new): _replaced(item, old, new)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    return value


def _script_length(shape: Shape) -> int:
    return max(len(node_script(spec)) for spec in shape.specs)


@pytest.mark.slow
def test_each_string_the_user_data_carries_is_the_longest_the_stack_may_hold():
    """Lengthening any string of a largest stack, wherever it occurs (a declared type's
    name and the fleet's list of it), is refused by the schema or an ERROR, or leaves the
    nodes' script as long: so each largest stack is the largest, and a field the user data
    carries without a bound fails here."""
    for layout, stack in LARGEST.items():
        length = _script_length(measure(layout))
        for text in _strings(stack):
            longer = measure_stack(Shape(layout, ()), _replaced(stack, text, text + text[-1] * 64),
                                   judge_over=-1)
            if longer.specs and _script_length(longer) > length:
                longer = measure_stack(longer, _replaced(stack, text, text + text[-1] * 64))
                assert longer.refused, (layout, text[:80])


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


def test_a_stack_over_the_limit_is_one_error_line_from_validate_and_plan(tmp_path, capsys,
                                                                          monkeypatch):
    """No stack the schema takes reaches the limit now (each string it carries is bounded),
    so the check is run against a lower one."""
    import gpu_infra.nodeplan.user_data as check

    limit = ROOM // 2
    monkeypatch.setattr(check, "USER_DATA_MAX_BYTES", limit)
    path = write_stack(tmp_path, "huge", LARGEST["rendering"])
    for command in ("validate", "plan"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "user-data-too-large" in line]
        assert len(lines) == 1, err
        assert lines[0].strip().startswith("ERROR user-data-too-large: fleet.driver.grid_package: "
                                           "the nodes' user data would be ")
        assert f"over ECS's limit of {limit:,}" in lines[0]
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
