"""The stack's registry on ECS stacks, as on ACK: the top-level `registry` section (with
`ack.registry` as its deprecated spelling), the ACR resources by edition, what the nodes are
told (address, instance, the mirrored check image), the node role's registry grant, and the
images the stack asks to have mirrored (a training stack's job runs the mirrored PyTorch image)."""

from __future__ import annotations

import json

import pytest

from gpu_infra.blocks.bootstrap import unpack_user_data
from gpu_infra.schema import ConfigError
from gpu_infra_facts import container_runtime, jobs

from .conftest import BASE_RENDERING, BASE_TRAINING, cluster_config, merged

ENTERPRISE = "alicloud:cr/registryEnterpriseInstance:RegistryEnterpriseInstance"
PERSONAL_NAMESPACE = "alicloud:cr/namespace:Namespace"
SCALING_CONFIG = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
POLICY = "alicloud:ram/policy:Policy"
ENTERPRISE_REPO = "alicloud:cs/registryEnterpriseRepo:RegistryEnterpriseRepo"
CHECK = container_runtime.CHECK_IMAGE
TRAINING = jobs.TRAINING_IMAGE


def config_lines(user_data: str) -> list[str]:
    script = unpack_user_data(user_data)
    assert script is not None
    return script.splitlines()


def test_a_prod_training_stack_pulls_from_its_enterprise_instance(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, environment="prod",
                               registry={"instance_type": "Basic"}))
    [instance] = plan.by_type(ENTERPRISE)
    assert instance.inputs["instanceType"] == "Basic" and instance.protect
    address = plan.outputs["registry_address"]
    assert address == "t01-registry-acr-registry-vpc.cn-hangzhou.cr.aliyuncs.com"
    lines = config_lines(plan.by_type("alicloud:ecs/instance:Instance")[0].inputs["userData"])
    assert f"REGISTRY_ENDPOINT={address}" in lines
    assert f"REGISTRY_INSTANCE_ID={instance.id}" in lines
    assert f"CHECK_IMAGE={address}/t01-mirror/{CHECK.mirror}" in lines
    assert "CR_ENDPOINT=cr.cn-hangzhou.aliyuncs.com" in lines
    check, pytorch = plan.outputs["images_to_mirror"]
    assert check == {"source": CHECK.source, "target": f"{address}/t01-mirror/{CHECK.mirror}",
                     "why": CHECK.why}
    assert pytorch == {"source": TRAINING.source, "why": TRAINING.why,
                       "target": f"{address}/t01-mirror/{TRAINING.mirror}"}
    for image in (check, pytorch):
        assert f"{image['source']}={image['target']}" in plan.outputs["mirror_command"]
    assert {repo.inputs["name"] for repo in plan.by_type(ENTERPRISE_REPO)
            if repo.inputs["namespace"].endswith("-mirror")} >= {"ubuntu", "pytorch"}
    # the job without --image runs the mirrored copy, by the pinned digest
    assert (f"JOB_IMAGE={pytorch['target']}@{jobs.TRAINING_IMAGE_DIGEST} \\\n"
            in plan.outputs["training_job"])
    statements = [statement for policy in plan.by_type(POLICY)
                  for statement in json.loads(policy.inputs["policyDocument"])["Statement"]]
    tagging = next(s for s in statements if "ecs:TagResources" in s["Action"])
    account = tagging["Resource"][0].split(":")[3]  # the account the mocks give
    assert {(action, tuple(statement["Resource"])) for statement in statements
            for action in statement["Action"] if action.startswith("cr:")} == {
        ("cr:GetAuthorizationToken", ("*",)),
        ("cr:PullRepository", tuple(f"acs:cr:cn-hangzhou:{account}:repository/{instance.id}/"
                                    f"{space}/*" for space in ("t01", "t01-mirror")))}
    for line in lines:
        assert "password" not in line.lower() and "AuthorizationToken" not in line


def test_a_dev_render_farm_gets_a_personal_namespace_and_logs_in_without_an_instance(
        plan_cluster):
    plan = plan_cluster(BASE_RENDERING)
    assert not plan.by_type(ENTERPRISE)
    spaces = {r.inputs["name"] for r in plan.by_type(PERSONAL_NAMESPACE)}
    assert spaces == {"r01", "r01-mirror"}
    lines = config_lines(plan.by_type(SCALING_CONFIG)[0].inputs["userData"])
    assert "REGISTRY_ENDPOINT=registry-vpc.cn-hangzhou.aliyuncs.com" in lines
    assert "REGISTRY_INSTANCE_ID=''" in lines
    assert f"CHECK_IMAGE=registry-vpc.cn-hangzhou.aliyuncs.com/r01-mirror/{CHECK.mirror}" in lines


def test_ack_registry_is_the_deprecated_spelling_of_registry():
    ack = {"kubernetes_version": "1.34.1-aliyun.1", "registry": {"namespace": "old"}}
    cluster = cluster_config(merged(BASE_TRAINING, platform="ack", ack=ack))
    assert cluster.registry_settings.namespace == "old"
    top = cluster_config(merged(BASE_TRAINING, registry={"namespace": "new"}))
    assert top.registry_settings.namespace == "new"
    with pytest.raises(ConfigError) as both:
        cluster_config(merged(BASE_TRAINING, platform="ack", ack=ack,
                              registry={"namespace": "new"}))
    assert "ack.registry: the deprecated spelling of registry, which is set too; keep only " \
        "registry" in str(both.value)
