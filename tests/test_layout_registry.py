"""One registry of layouts (schema.registry): every layout has its model's facts and exactly
one layout class, and a new layout needs nothing but its model, its class and one entry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from gpu_infra.layouts import LayoutBase, find_layout_classes, layout_class
from gpu_infra.nodeplan import node_plan
from gpu_infra.nodeplan.plans import AckNodes, NodePlan, SpotWorkers, TrainingNodes
from gpu_infra.schema import load_cluster_config
from gpu_infra.schema.base import field_descriptions
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra.schema.stack import ClusterBase, PlatformChoice
from gpu_infra.schema.storage import BucketsConfig

from .conftest import PROJECT_DIR, STACKS_DIR


def test_every_registered_layout_has_exactly_one_class_per_platform():
    """Every model has its ECS layout; the models with a `platform` choice also their ACK
    one."""
    found = find_layout_classes()
    expected = {(model, "ecs") for model in LAYOUT_MODELS.values()} | {
        (model, "ack") for model in LAYOUT_MODELS.values() if issubclass(model, PlatformChoice)}
    assert set(found) == expected
    assert {f"{model.__name__}/{platform}": len(classes)
            for (model, platform), classes in found.items() if len(classes) != 1} == {}


def test_every_layout_model_states_its_own_facts():
    """Not inherited from ClusterCommon/ClusterBase (which only declare them): each layout says
    its own workload, and each fleet layout its default buckets (the image layout has none)."""
    for name, model in LAYOUT_MODELS.items():
        own = vars(model)
        assert "workload" in own and model.workload.uses, name
        if issubclass(model, ClusterBase):
            assert "default_bucket_purposes" in own and model.default_bucket_purposes, name
        else:
            assert name == "image" and not hasattr(model, "default_bucket_purposes")


def test_the_purposes_field_states_each_layouts_default_buckets():
    """`storage.buckets.purposes`'s description (the editor's hover text) lists what the
    registry's models declare, layout by layout."""
    described = " ".join(field_descriptions(BucketsConfig)["purposes"].split())
    defaults = "; ".join(f"{name} {', '.join(model.default_bucket_purposes)}"
                         for name, model in LAYOUT_MODELS.items()
                         if issubclass(model, ClusterBase))
    assert f"`default_bucket_purposes` ({defaults})." in described


PROBE_MODEL = '''
from typing import Literal

from gpu_infra.catalog.recommend import Workload
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra.schema.stack import ClusterBase, PlatformChoice


class ProbeConfig(ClusterBase):
    """A throwaway layout for tests/test_layout_registry.py."""

    layout: Literal["probe"]
    workload = Workload(uses=("inference",), placement="together")
    default_bucket_purposes = ("models",)
    fleet: TrainingFleet
'''

PROBE_LAYOUT = '''
from gpu_infra.layouts.training import TrainingCluster
from gpu_infra.schema.probe import ProbeConfig


class ProbeCluster(TrainingCluster):
    TYPE = "gpu-infra:layouts:ProbeCluster"
    CONFIG = ProbeConfig
'''

PROBE_CHECKS = '''
import json, sys
from pathlib import Path

import gpu_infra
from gpu_infra.schema import ConfigError, parse_cluster_config
from gpu_infra.schema.editor import editor_schema
from gpu_infra.schema.registry import layout_placement, layouts_suited
from gpu_infra_tools.cli import build_parser
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review.policy import as_policy_resource
from gpu_infra_facts import types as t
from gpu_infra_policies.base import Context
from gpu_infra_policies.rules import evaluate

try:
    parse_cluster_config({"alicloud:region": "cn-hangzhou",
                          "gpu-infra:cluster": {"layout": "nope"}})
except ConfigError as error:
    refused = error.problems
layout = editor_schema()["properties"]["config"]["properties"]["gpu-infra:cluster"]
args = build_parser().parse_args(["catalog", "--recommend", "--layout", "probe",
                                  "--gpu-memory", "20"])
plan = run_plan(Path(sys.argv[1]))
unplaced = [as_policy_resource(r) for r in plan.resources
            if r.custom and r.type != t.DEPLOYMENT_SET]
print(json.dumps({
    "package": gpu_infra.__file__,
    "refused": refused,
    "editor_layouts": layout["properties"]["layout"]["enum"],
    "cli_layout": args.layout,
    "suits_probe": sorted(layouts_suited("ecs.gn6i-c4g1.xlarge") or ()),
    "types": sorted({r.type for r in plan.resources if not r.custom}),
    "buckets": sorted(r.name for r in plan.resources
                      if r.type == "alicloud:oss/bucket:Bucket"),
    "placement_verdicts": sorted({v.message for v in evaluate(
        unplaced, context=Context(placement=layout_placement))
        if v.rule == "training-low-latency"}),
}))
'''


@pytest.mark.slow  # a Python process that plans
def test_a_new_layout_needs_its_model_its_class_and_one_registry_entry(tmp_path):
    """Copy the package, add a layout exactly as the project layout page says (a model
    module, a layout module, its model in the ClusterConfig union), and nothing else: the
    loader, the editor schema, the CLI, the policy lookups and the plan all know it."""
    package = tmp_path / "components" / "gpu_infra"
    shutil.copytree(PROJECT_DIR / "components" / "gpu_infra", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (package / "schema" / "probe.py").write_text(PROBE_MODEL)
    (package / "layouts" / "probe.py").write_text(PROBE_LAYOUT)
    registry = package / "schema" / "registry.py"
    union = "TrainingConfig | InferenceConfig | RenderingConfig | ImageConfig,"
    text = registry.read_text()
    assert text.count(union) == 1
    registry.write_text(text.replace(union, "TrainingConfig | InferenceConfig | RenderingConfig"
                                            " | ImageConfig | ProbeConfig,")
                        .replace("\nfrom gpu_infra.schema.stack import",
                                 "\nfrom gpu_infra.schema.probe import ProbeConfig"
                                 "\nfrom gpu_infra.schema.stack import"))
    stack = tmp_path / "Pulumi.probe-dev.yaml"
    stack.write_text((STACKS_DIR / "Pulumi.training-dev.yaml").read_text()
                     .replace("layout: training", "layout: probe")
                     .replace("nodes: 1\n", "nodes: 2\n")
                     .replace("capacity: spot\n", "capacity: on_demand\n"))  # fixed nodes
    script = tmp_path / "checks.py"
    script.write_text(textwrap.dedent(PROBE_CHECKS))
    done = subprocess.run([sys.executable, str(script), str(stack)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path,
                          env={"PYTHONPATH": str(tmp_path / "components"), "PATH": ""})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["package"].startswith(str(package))
    assert seen["refused"] == ["gpu-infra:cluster.layout: 'nope' is not a layout; allowed: "
                               "training, inference, rendering, image, probe"]
    assert sorted(seen["editor_layouts"]) == ["image", "inference", "probe", "rendering",
                                              "training"]
    assert seen["cli_layout"] == "probe"
    assert "probe" in seen["suits_probe"]
    assert "gpu-infra:layouts:ProbeCluster" in seen["types"]
    assert seen["buckets"] == ["llm-train-models-bucket"]  # its default purposes only
    # its declared placement, not its name, puts its two nodes under training-low-latency
    assert seen["placement_verdicts"] == [
        "probe fleet llm-train-gpu: node is in no deployment set; use a LowLatency one"]


def test_each_shipped_fleet_gets_the_node_plan_of_its_kind():
    """Fixed ECS training nodes (a one-node spot fleet: a spot worker), ECS scaling fleets,
    ACK pools (no bootstrap), and no node
    plan for the image stack, which has no fleet: the plan validate judges is the one the
    layout builds from (LayoutBase.node_plan)."""
    expected = {"training-dev": SpotWorkers, "training-prod": TrainingNodes,
                "inference-prod": NodePlan, "rendering-batch": NodePlan,
                "training-ack": AckNodes, "inference-ack": AckNodes, "image-a100": None}
    found = {}
    for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml")):
        config = load_cluster_config(path)[1]
        plan = node_plan(config)
        found[path.name.removeprefix("Pulumi.").removesuffix(".yaml")] = \
            type(plan) if plan is not None else None
        assert (plan is not None) is issubclass(layout_class(config), LayoutBase), path.name
    assert found == expected
    kinds = (TrainingNodes, SpotWorkers, NodePlan, AckNodes)
    assert [(kind.FIXED_NODES, kind.BOOTSTRAPS) for kind in kinds] == [
        (True, True), (False, True), (False, True), (False, False)]
