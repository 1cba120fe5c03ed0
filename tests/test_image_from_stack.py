"""Baked images onto fleets (fleet.image.from_stack): the image stack's bake reaches the
fleet through a stack reference (offline: a placeholder named by the bake's digest), and the
change report says what a new bake does to each kind of fleet."""

from __future__ import annotations

import shutil

import pytest
import yaml

from gpu_infra.layouts.image import bake_digest
from gpu_infra.schema.problems import ConfigError
from gpu_infra_facts import types as t
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review import review
from gpu_infra_tools.review.changes import change_report

from .conftest import STACKS_DIR, cluster_config

pytestmark = pytest.mark.slow  # plans shipped-size stacks twice

IMAGE_STACK = "image-a100"


def _stacks(directory, fleet_stack: str, **fleet):
    """A stacks directory holding `fleet_stack` booting the image stack's bake, the image
    stack baking in the fleet's region (its first zone)."""
    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{fleet_stack}.yaml").read_text())
    cluster = document["config"]["gpu-infra:cluster"]
    image = yaml.safe_load((STACKS_DIR / f"Pulumi.{IMAGE_STACK}.yaml").read_text())
    image["config"]["alicloud:region"] = document["config"]["alicloud:region"]
    image["config"]["gpu-infra:cluster"]["network"]["zones"] = cluster["network"]["zones"][:1]
    (directory / f"Pulumi.{IMAGE_STACK}.yaml").write_text(yaml.safe_dump(image, sort_keys=False))
    cluster["fleet"].update(image={"from_stack": IMAGE_STACK},
                            driver={"route": "preinstalled"}, **fleet)
    path = directory / f"Pulumi.{fleet_stack}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _new_bake(directory) -> None:
    """The image stack with a new driver pin: a new bake."""
    path = directory / f"Pulumi.{IMAGE_STACK}.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["gpu-infra:cluster"]["image"]["driver"] = {"version": "550.144.03"}
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def _bake_id(directory) -> str:
    document = yaml.safe_load((directory / f"Pulumi.{IMAGE_STACK}.yaml").read_text())
    config = cluster_config(document["config"]["gpu-infra:cluster"],
                            region=document["config"]["alicloud:region"])
    return f"m-baked{bake_digest(config)}"


def test_a_scaling_fleet_boots_the_bake_and_a_new_bake_reaches_new_instances(tmp_path):
    fleet_file = _stacks(tmp_path, "inference-prod",
                         instance_types=["ecs.gn7e-c16g1.4xlarge"])
    before = run_plan(fleet_file)
    config = before.one(t.SCALING_CONFIGURATION)
    assert config.inputs["imageId"] == _bake_id(tmp_path)
    _new_bake(tmp_path)
    after = run_plan(fleet_file)
    assert after.one(t.SCALING_CONFIGURATION).inputs["imageId"] == _bake_id(tmp_path) \
        != config.inputs["imageId"]
    report = change_report(review(after), before.to_json(), "the old bake")
    assert report.impact.old_image
    assert any(line.startswith("Running instances keep the old image")
               for line in report.summary_lines())


def test_fixed_training_nodes_are_reimaged_by_a_new_bake(tmp_path):
    fleet_file = _stacks(tmp_path, "training-prod")
    before = run_plan(fleet_file)
    _new_bake(tmp_path)
    after = run_plan(fleet_file)
    report = change_report(review(after), before.to_json(), "the old bake")
    changed = {(c.name, c.change, c.restart, tuple(c.because))
               for c in report.changes if c.custom and c.change != "same"}
    assert changed == {(f"llm-pretrain-gpu-node-{i:03d}", "update", True, ("imageId",))
                       for i in range(8)}
    assert {f.rule for f in report.findings} == {"restarts-gpu-nodes", "nodes-keep-old-config"}
    assert "GPU nodes restarted in place: 8 because imageId changed" in " ".join(
        report.summary_lines())


def test_an_image_stack_in_another_region_or_missing_is_refused(tmp_path):
    fleet_file = _stacks(tmp_path, "inference-prod")
    document = yaml.safe_load(fleet_file.read_text())
    document["config"]["gpu-infra:cluster"]["fleet"]["image"] = {"from_stack": "image-h100"}
    fleet_file.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(ConfigError, match="gpu-infra:cluster.fleet.image.from_stack: no stack "
                                          "file Pulumi.image-h100.yaml beside this one"):
        run_plan(fleet_file)
    document["config"]["gpu-infra:cluster"]["fleet"]["image"] = {"from_stack": IMAGE_STACK}
    fleet_file.write_text(yaml.safe_dump(document, sort_keys=False))
    shutil.copy(STACKS_DIR / f"Pulumi.{IMAGE_STACK}.yaml", tmp_path)  # bakes in cn-beijing
    with pytest.raises(ConfigError, match="'image-a100' bakes in cn-beijing, this stack runs "
                                          "in cn-hangzhou"):
        run_plan(fleet_file)
