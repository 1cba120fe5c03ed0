"""Secret config values: only fields the schema marks MaybeSecure may be `secure:`, and each
reaches its resource input as a Pulumi secret when the engine marks the config secret (as
the real engine does: the whole `gpu-infra:cluster` key is secret once any leaf is)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpu_infra import program
from gpu_infra.schema import SECRET_PLACEHOLDER, ConfigError, load_cluster_config
from gpu_infra.schema.editor import editor_schema, secure_fields
from gpu_infra.schema.secrets import secure_field_paths
from gpu_infra.schema.stack import InferenceConfig, RenderingConfig, TrainingConfig
from gpu_infra_tools.plan.engine import ProgramError, run_under_mocks

from .conftest import BASE_TRAINING, cluster_config, merged

CONTACT_HOOK = "https://oapi.dingtalk.com/robot/send?access_token=contact-token-1234"
EVENT_HOOK = "https://hooks.example.com/ecs-events/event-token-5678"


def test_the_schema_names_the_fields_that_may_be_secure():
    for model in (TrainingConfig, InferenceConfig, RenderingConfig):
        assert sorted(secure_field_paths(model)) == [
            "monitoring.contacts[].dingtalk_webhook", "monitoring.webhook"]
    names = {path.split(".")[-1] for path in secure_field_paths(TrainingConfig)}
    assert {field.split(".")[-1] for field in secure_fields(editor_schema())} == names


def stack_file(tmp_path: Path, cluster_yaml: str) -> Path:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text("config:\n  alicloud:region: cn-hangzhou\n  alicloud:secretKey:\n"
                    "    secure: v1:xyz\n  gpu-infra:cluster:\n" + cluster_yaml)
    return path


BASE_YAML = ("    name: t01\n    layout: training\n    network: {zones: [cn-hangzhou-i]}\n"
             "    fleet: {instance_type: ecs.gn7i-c8g1.2xlarge, nodes: 2}\n")


@pytest.mark.parametrize("cluster_yaml, path", [
    (BASE_YAML + "    tags:\n      Owner:\n        secure: v1:abc\n", "tags.Owner"),
    (BASE_YAML + "    suppress:\n      - secure: v1:abc\n", "suppress[0]"),
    (BASE_YAML.replace("nodes: 2}", "nodes: 2, image: {name: {secure: v1:abc}}}"),
     "fleet.image.name"),
])
def test_secure_values_elsewhere_are_refused_with_their_path(tmp_path, cluster_yaml, path):
    with pytest.raises(ConfigError) as caught:
        load_cluster_config(stack_file(tmp_path, cluster_yaml))
    assert caught.value.problems == [
        f"gpu-infra:cluster.{path}: may not be a secure: value (it would reach resources and "
        "the state in clear); secure: values belong in monitoring.contacts[].dingtalk_webhook, "
        "monitoring.webhook"]


def test_secure_webhooks_and_provider_secrets_are_accepted(tmp_path):
    monitoring = ("    monitoring:\n      webhook:\n        secure: v1:abc\n      contacts:\n"
                  "        - name: robot\n          dingtalk_webhook:\n"
                  "            secure: v1:def\n")
    stack_file_, _ = load_cluster_config(stack_file(tmp_path, BASE_YAML + monitoring))
    assert stack_file_.secret_keys == [
        "alicloud:secretKey", "gpu-infra:cluster.monitoring.webhook",
        "gpu-infra:cluster.monitoring.contacts[0].dingtalk_webhook"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def test_secret_values_reach_resources_as_secrets_under_engine_marked_config():
    cluster = merged(BASE_TRAINING, monitoring={
        "webhook": EVENT_HOOK,
        "contacts": [{"name": "robot", "dingtalk_webhook": CONTACT_HOOK}]})
    resources, _ = run_under_mocks(
        cluster_config(cluster), "test", program.run,
        config={"gpu-infra:cluster": cluster, "alicloud:region": "cn-hangzhou"},
        secret_keys=["gpu-infra:cluster"])
    contact = next(r for r in resources if r.type == "alicloud:cms/alarmContact:AlarmContact")
    assert contact.inputs["channelsDingWebHook"] == SECRET_PLACEHOLDER
    rules = [r for r in resources if r.type == "alicloud:cms/eventRule:EventRule"]
    assert rules and all(r.inputs["webhookParameters"] == SECRET_PLACEHOLDER for r in rules)
    # the values themselves are in no input of any resource
    clear = [s for r in resources for s in _strings(r.inputs)]
    assert not [s for s in clear if "contact-token-1234" in s or "event-token-5678" in s]
    assert json.dumps(cluster).count("-token-") == 2  # the test's values did carry them


def test_the_program_stops_when_the_engine_marks_a_secret_no_field_may_hold():
    cluster = merged(BASE_TRAINING, tags={"Owner": "secret-owner"})
    with pytest.raises(ProgramError, match=(
            r"gpu-infra:cluster: holds a secure: value but none of the fields that may be "
            r"secure \(monitoring\.contacts\[\]\.dingtalk_webhook, monitoring\.webhook\) is "
            r"set")):
        run_under_mocks(cluster_config(cluster), "test", program.run,
                        config={"gpu-infra:cluster": cluster, "alicloud:region": "cn-hangzhou"},
                        secret_keys=["gpu-infra:cluster"])
    # the same config, not marked secret, plans
    resources, _ = run_under_mocks(
        cluster_config(cluster), "test", program.run,
        config={"gpu-infra:cluster": cluster, "alicloud:region": "cn-hangzhou"})
    assert resources
