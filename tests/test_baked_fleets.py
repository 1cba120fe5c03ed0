"""Fleets that boot from a baked image (`fleet.image` id or exact name, route preinstalled):
they plan clean, their nodes install nothing but keep the health check and readiness hook;
the image only changes with the stack file. And the eRDMA jumbo-frame MTU option."""

from __future__ import annotations

import re

import pytest

from gpu_infra.knowhow import errors_in, run_validators
from gpu_infra_facts.node_stack import READINESS_TIMEOUT_SECONDS
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.plan.fake_cloud import FakeCloud

from .bootstrap_sandbox import Sandbox, planned_steps, script_of
from .conftest import (
    BASE_INFERENCE,
    BASE_RENDERING,
    BASE_TRAINING,
    cluster_config,
    merged,
    write_stack,
)

INSTANCE = "alicloud:ecs/instance:Instance"
SCALING_CONFIG = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
HOOK = "alicloud:ess/lifecycleHook:LifecycleHook"
BAKED_ID = "m-2ze0baked0a100"
BAKED = {"image": {"id": BAKED_ID}, "driver": {"route": "preinstalled"}}


def baked(base: dict, **fleet: object) -> dict:
    return merged(base, fleet={**base["fleet"], **BAKED, **fleet})


DERIVED = {"training": baked(BASE_TRAINING),
           "inference": baked(BASE_INFERENCE),
           "rendering": baked(BASE_RENDERING, driver={"route": "preinstalled",
                                                      "version": "535.161.07"})}


@pytest.mark.parametrize("layout", sorted(DERIVED))
def test_fleets_boot_the_baked_image_and_install_nothing(layout, tmp_path):
    plan = run_plan(write_stack(tmp_path, f"{layout}-baked", DERIVED[layout]))
    assert errors_in(plan.findings) == []
    nodes = plan.by_type(INSTANCE) + plan.by_type(SCALING_CONFIG)
    assert nodes
    for node in nodes:
        assert node.inputs.get("imageId") == BAKED_ID
        script = script_of(node.inputs["userData"])
        assert "\nINSTALL=0" in script and "\nDRIVER_ROUTE=preinstalled" in script
        assert "health" in planned_steps(script)
    if layout != "training":
        [hook] = [h for h in plan.by_type(HOOK) if h.inputs["lifecycleTransition"] == "SCALE_OUT"]
        assert hook.inputs["heartbeatTimeout"] == READINESS_TIMEOUT_SECONDS["preinstalled"]
        assert hook.inputs["defaultResult"] == "ABANDON"


@pytest.mark.slow  # runs the node bootstrap in a shell sandbox
def test_a_baked_node_checks_and_reports_without_downloading(tmp_path):
    plan = run_plan(write_stack(tmp_path, "inference-baked", DERIVED["inference"]))
    sandbox = Sandbox(tmp_path / "node", gpus=1)
    (sandbox.dir / "meta/instance/instance-type").write_text("ecs.gn7i-c8g1.2xlarge")
    sandbox.preinstalled("550.127.08")
    for tools in plan.by_type("alicloud:oss/bucketObject:BucketObject"):  # the loader's
        stored = sandbox.dir / "objects" / tools.inputs["key"]
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(tools.inputs["content"])
    assert sandbox.install_text(plan.by_type(SCALING_CONFIG)[0].inputs["userData"]).code == 0
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert not [c for c in run.calls if c.startswith("curl -fsS --retry 5 -o")]
    assert run.exists("/var/lib/gpu-infra/ready")
    assert "gpu-infra-api answer-scale-out" in run.api_calls()


def test_a_baked_image_by_exact_name_is_looked_up_once_per_run(tmp_path, monkeypatch):
    """By name, the node's image is the one image of that exact name: a newer build (a new
    name, since the prefix carries the content digest) never changes the plan."""
    cluster = merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], "driver": {
        "route": "preinstalled"}, "image": {"name": "gpu-a100-img-3624e95d_20261201"}})
    calls = []
    answer = FakeCloud.answer
    images = {"gpu-a100-img-3624e95d_20261201": "m-old",
              "gpu-a100-img-3624e95d_20261202": "m-newer"}  # a later build of one prefix

    def own_images(self, token, args):
        if token == "alicloud:ecs/getImages:getImages":
            calls.append(args)
            ids = [i for name, i in images.items() if re.search(args["nameRegex"], name)]
            return {"ids": ids, "images": []}
        return answer(self, token, args)

    monkeypatch.setattr(FakeCloud, "answer", own_images)
    plan = run_plan(write_stack(tmp_path, "named", cluster))
    assert {r.inputs["imageId"] for r in plan.by_type(INSTANCE)} == {"m-old"}
    assert calls and all(call.get("owners") == "self" for call in calls)


def test_preinstalled_on_the_default_public_image_is_an_error():
    stack = cluster_config(merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"],
                                                        "driver": {"route": "preinstalled"}}))
    [error] = errors_in(run_validators(stack))
    assert error.line().startswith("ERROR driver-route-missing: fleet.image: route "
                                   "preinstalled needs an image with the driver")


ERDMA_TRAINING = merged(BASE_TRAINING, network={"vpc_cidr": "10.1.0.0/16",
                                                "zones": ["cn-beijing-l"]},
                        fleet={"instance_type": "ecs.ebmgn7ex.32xlarge", "nodes": 2})


def test_jumbo_frames_enable_them_on_the_nodes_and_set_mtu_8500(tmp_path):
    cluster = merged(ERDMA_TRAINING, fleet={**ERDMA_TRAINING["fleet"], "jumbo_frames": True})
    plan = run_plan(write_stack(tmp_path, "jumbo", cluster, "cn-beijing"))
    assert errors_in(plan.findings) == []
    for node in plan.by_type(INSTANCE):
        assert node.inputs["enableJumboFrame"] is True
        assert "\nERDMA_MTU=8500" in script_of(node.inputs["userData"])
    plain = run_plan(write_stack(tmp_path, "plain", ERDMA_TRAINING, "cn-beijing"))
    for node in plain.by_type(INSTANCE):
        assert "enableJumboFrame" not in node.inputs
        assert "\nERDMA_MTU=1400" in script_of(node.inputs["userData"])


def test_jumbo_frames_without_erdma_are_an_error():
    stack = cluster_config(merged(ERDMA_TRAINING, fleet={
        **ERDMA_TRAINING["fleet"], "jumbo_frames": True, "erdma": "off"}), "cn-beijing")
    [error] = errors_in(run_validators(stack))
    assert error.line().startswith("ERROR jumbo-frames-without-erdma: fleet.jumbo_frames: "
                                   "jumbo frames set the eRDMA MTU (8500)")


def test_jumbo_frames_are_a_boolean_of_training_fleets_only():
    from gpu_infra.schema import ConfigError

    with pytest.raises(ConfigError, match="fleet.jumbo_frames"):
        cluster_config(merged(ERDMA_TRAINING, fleet={**ERDMA_TRAINING["fleet"],
                                                     "jumbo_frames": "yes"}), "cn-beijing")
    with pytest.raises(ConfigError, match="fleet.jumbo_frames: unknown key"):
        cluster_config(merged(BASE_INFERENCE, fleet={**BASE_INFERENCE["fleet"],
                                                     "jumbo_frames": True}))
