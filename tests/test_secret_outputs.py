"""No secret the user did not mark reaches an output (issue 40.3). Secrets are planted in a
stack where a user may keep them (secure: values, a webhook in a field that may be secure,
written in clear, and the resolved values of an ESC environment); every command,
enumerated from the parser, runs on it (every plan format, the extra JSON and SARIF files,
clone's dry run and its written file), and stdout, stderr and every file written are
scanned; so is the state each component of the component provider returns over gRPC.
Credentials written where no secret may be (commands, image references, tags, provider
keys) are refused by validate, plan and clone with their path, and the refusal never
repeats the value."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml

from gpu_infra_tools.cli import main

from .conftest import PROJECT_DIR, STACKS_DIR
from .fake_cms import SECRET as CMS_SECRET
from .fake_cms import serving
from .hostile import snapshot
from .shipped import plan_shipped_once
from .test_cli_every_command import (
    COMMANDS,
    OFFLINE,
    SAMPLES,
    STACK_COMMANDS,
    _stack_position,
    sample,
)

CIPHERTEXT = "v1:CIPHERTEXTpLaNtEd0123456789abcdef"
WEBHOOK_TOKEN = "PLANTEDwebhookTOKEN0123456789abcdef"
ESC_ACCESS_KEY = "LTAI5tPLANTEDescKEY0123"
PLANTED = (CIPHERTEXT, WEBHOOK_TOKEN, ESC_ACCESS_KEY, CMS_SECRET)
"""The ciphertext of a secure: value, a webhook token in clear in a field that may be
secret, a provider key pair from an ESC environment (its secret also the one
publish-queue-metric signs with). A webhook from ESC: tests/test_cli_outputs.py."""


def _planted_stack(directory: Path) -> tuple[Path, Path]:
    """training-dev with a secure: webhook, a webhook in clear in a field that may be
    secure, and an ESC environment whose resolved values hold a webhook and a provider key;
    (the stack file, the values file)."""
    document = yaml.safe_load((STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    cluster = document["config"]["gpu-infra:cluster"]
    cluster["monitoring"] = {
        "contacts": [{"name": "oncall", "email": "oncall@example.com",
                      "dingtalk_webhook": "https://oapi.dingtalk.com/robot/send?access_token="
                                          + WEBHOOK_TOKEN}],
        "webhook": {"secure": CIPHERTEXT}}
    document["environment"] = ["ml-platform/gpu/dev"]
    stack = directory / "Pulumi.planted.yaml"
    stack.write_text(yaml.safe_dump(document))
    values = directory / "esc-open.json"
    values.write_text(json.dumps({"pulumiConfig": {
        "alicloud:accessKey": ESC_ACCESS_KEY, "alicloud:secretKey": CMS_SECRET}}))
    return stack, values


EXTRA = {"plan": [["--format", fmt] for fmt in ("text", "markdown", "mermaid", "json",
                                                "sarif")]
         + [["--json", "{d}/plan.json", "--sarif", "{d}/plan.sarif"]],
         "validate": [["--format", "json"], []],
         "clone": [[], ["--stacks-dir", "{d}/clones"]]}
"""Per command, the variants run (default: its sample as it is)."""


def _variants(command: str, stack: Path, values: Path, directory: Path,
              endpoint: str) -> list[list[str]]:
    words = [w.replace("{d}", str(directory)).replace("{endpoint}", endpoint)
             for w in sample(command)]
    if command in STACK_COMMANDS:
        position = _stack_position(command, tuple(words))
        words = [*words[:position], str(stack), *words[position + 1:]]
        if command == "clone":
            words = [w for w in words if w != "--dry-run"]
        if any("--environment-values" in action.option_strings
               for action in COMMANDS[command]._actions):
            words += ["--environment-values", str(values)]
    variants = EXTRA.get(command, [[]])
    return [[*words, *(w.replace("{d}", str(directory)) for w in extra)]
            for extra in variants]


@pytest.mark.slow  # a pr-comment asks git; about a dozen plans of the planted stack
def test_no_output_of_any_command_carries_a_planted_secret(tmp_path: Path, capsys,
                                                           monkeypatch):
    stack, values = _planted_stack(tmp_path)
    (tmp_path / "clones").mkdir()
    monkeypatch.chdir(PROJECT_DIR)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI-test")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", CMS_SECRET)
    plan_shipped_once(monkeypatch)
    scanned, ran = [], []
    with serving() as cloud:
        for command in COMMANDS:
            for argv in _variants(command, stack, values, tmp_path, cloud.url):
                if command == "clone" and "--stacks-dir" not in argv:
                    argv += ["--dry-run"]
                before = snapshot(tmp_path)
                try:
                    code = main(argv)
                except SystemExit as exit_:
                    code = exit_.code
                out, err = capsys.readouterr()
                ran.append((argv, code))
                known = command in OFFLINE or command in SAMPLES
                assert code in ((0, 1) if known else (0, 1, 2)), (argv, err)
                written = [tmp_path / name for name, digest in snapshot(tmp_path).items()
                           if before.get(name) != digest]
                scanned += [(argv, "stdout", out), (argv, "stderr", err)]
                scanned += [(argv, str(path), path.read_text()) for path in written]
    leaks = [(argv, where, secret) for argv, where, text in scanned for secret in PLANTED
             if secret in text]
    assert leaks == []
    assert {argv[0] for argv, _ in ran} == set(COMMANDS)
    assert any("plan.sarif" in where for _, where, _ in scanned)
    assert any("Pulumi.copy-x.yaml" in where for _, where, _ in scanned)


HOSTILE_CREDENTIALS = {
    "serving-command-flag": (
        "inference-ack", ("serving", "command"),
        ["vllm", "serve", "/m", "--api-key=Zq8vPLANTED42xY"],
        "gpu-infra:cluster.serving.command[3]: holds a credential on a command line"),
    "serving-command-split": (
        "inference-ack", ("serving", "command"), ["vllm", "serve", "--api-key",
                                                  "Zq8vPLANTED42xY"],
        "gpu-infra:cluster.serving.command: holds a credential on a command line"),
    "serving-command-openai": (
        "inference-ack", ("serving", "command"),
        ["vllm", "serve", "sk-proj-PLANTED0123456789abcdefghijklmnop"],
        "gpu-infra:cluster.serving.command[2]: holds an OpenAI-style API key"),
    "tag-access-key": ("training-dev", ("tags", "Note"), "LTAI5tPLANTEDabcdef1234",
                       "gpu-infra:cluster.tags.Note: holds an AccessKey id"),
    "contact-name-token": ("training-dev", ("monitoring", "contacts", 0, "name"),
                           "ghp_PLANTED0123456789abcdefghijklmnopqrstu",
                           "gpu-infra:cluster.monitoring.contacts[0].name: holds a GitHub "
                           "token"),
}
"""Credentials where no secret may be: stack, path, value, what the problem line says."""


def _with(stack: str, path: tuple, value: object, directory: Path) -> Path:
    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    node = document["config"]["gpu-infra:cluster"]
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    target = directory / "Pulumi.hostile.yaml"
    target.write_text(yaml.safe_dump(document))
    return target


@pytest.mark.parametrize("name", HOSTILE_CREDENTIALS)
@pytest.mark.parametrize("command", ["validate", "plan", "clone"])
def test_a_credential_in_clear_is_refused_with_its_path_never_its_value(
        name: str, command: str, tmp_path: Path, capsys, monkeypatch):
    stack, path, value, expect = HOSTILE_CREDENTIALS[name]
    target = _with(stack, path, value, tmp_path)
    monkeypatch.chdir(PROJECT_DIR)
    argv = {"validate": ["validate", str(target)], "plan": ["plan", str(target)],
            "clone": ["clone", str(target), "copy", "--stacks-dir", str(tmp_path),
                      "--name", "copy-one"]}[command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert expect in err, err
    secret = value if isinstance(value, str) else value[-1]
    assert secret.split("=")[-1] not in out + err
    assert not (tmp_path / "Pulumi.copy.yaml").exists()


def test_a_provider_key_in_clear_is_refused_and_points_to_the_fix(tmp_path: Path, capsys):
    document = yaml.safe_load((STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    document["config"]["alicloud:secretKey"] = "PLANTEDsecretKEY0123456789abcd"
    stack = tmp_path / "Pulumi.keys.yaml"
    stack.write_text(yaml.safe_dump(document))
    assert main(["validate", str(stack)]) == 2
    err = capsys.readouterr().err
    assert "alicloud:secretKey: a credential in clear in the stack file" in err
    assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in err
    assert "pulumi config set --secret alicloud:secretKey" in err
    assert "PLANTEDsecretKEY" not in err


def test_clone_drops_plain_secrets_says_so_and_prints_how_to_set_them(tmp_path: Path,
                                                                      capsys):
    document = yaml.safe_load((STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    document["config"]["alicloud:accessKey"] = ESC_ACCESS_KEY
    document["config"]["gpu-infra:cluster"]["monitoring"]["webhook"] = \
        "https://hooks.example.com/" + WEBHOOK_TOKEN
    (tmp_path / "Pulumi.source.yaml").write_text(yaml.safe_dump(document))
    assert main(["clone", "source", "copy", "--stacks-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    written = (tmp_path / "Pulumi.copy.yaml").read_text()
    for secret in (ESC_ACCESS_KEY, WEBHOOK_TOKEN):
        assert secret not in written + out
    assert "dropped alicloud:accessKey: a secret written in clear" in out
    assert "pulumi config set --secret 'alicloud:accessKey' VALUE -s copy" in out
    assert ("pulumi config set --path --secret 'gpu-infra:cluster.monitoring.webhook' VALUE "
            "-s copy") in out


KUBECONFIG_KEY = "PLANTEDclientKEYdata0123456789abcdef"
USER_DATA_TOKEN = "PLANTEDuserDATAtoken0123456789abcdef"
PROVIDER_PLANTED = (WEBHOOK_TOKEN, KUBECONFIG_KEY, USER_DATA_TOKEN)
"""What a program in another language hands the component provider, or the cloud answers
it: a webhook token in clear in a field that may be secret, the client key of an ACK
cluster's kubeconfig, a token inside a fleet block's user data."""


@functools.cache
def _provider():
    """The component provider, made once (as the plugin makes one for every Construct it
    serves): inferring its schema costs about 0.4 s of CPU."""
    from gpu_infra_provider.schema import GpuInfraProvider

    return GpuInfraProvider()


def _provider_state(component: str, inputs: dict, cluster, monkeypatch) -> dict:
    """The state the plugin's Construct returns for `component` built from the wire-form
    `inputs` (GpuInfraProvider.construct, then rpc.serialize_properties, as the plugin's
    gRPC server does), as plain JSON: a secret-marked value is SECRET_PLACEHOLDER."""
    from google.protobuf.json_format import MessageToDict
    from pulumi.runtime import rpc

    from gpu_infra.testing import GpuInfraMocks
    from gpu_infra_provider.components import token
    from gpu_infra_tools.plan.engine import run_under_mocks

    answer = GpuInfraMocks._credential

    def credential(self, args):
        found = answer(self, args)
        found["kubeConfig"] += (f"users:\n- name: admin\n  user: {{client-key-data: "
                                f"{KUBECONFIG_KEY}}}\n")
        return found
    monkeypatch.setattr(GpuInfraMocks, "_credential", credential)
    provider = _provider()

    async def serialized(state: dict) -> dict:
        struct = await rpc.serialize_properties(state, {})
        return MessageToDict(struct)

    def program() -> None:
        import pulumi

        result = provider.construct("c1", token(component), inputs, None)
        pulumi.export("state", pulumi.Output.from_input(serialized(result.state)))

    _, exports = run_under_mocks(cluster, "provider", program)
    return exports["state"]


def _layout_inputs(path: Path) -> tuple[str, dict, dict]:
    """(component, wire-form inputs, cluster) of a shipped stack, with the webhook token
    planted in clear in both fields that may hold a secret."""
    from pulumi.provider.experimental.util import camel_case

    from gpu_infra_provider.components import token

    from .test_component_provider import LAYOUT_COMPONENTS, SCHEMA, to_wire

    config = yaml.safe_load(path.read_text())["config"]
    cluster = dict(config["gpu-infra:cluster"])
    if cluster["layout"] != "image":
        cluster["monitoring"] = {**cluster.get("monitoring", {}),
                                 "webhook": "https://hooks.example.com/" + WEBHOOK_TOKEN,
                                 "contacts": [{"name": "oncall", "dingtalk_webhook":
                                               "https://oapi.dingtalk.com/robot/send?"
                                               "access_token=" + WEBHOOK_TOKEN}]}
    component = LAYOUT_COMPONENTS[cluster["layout"]]
    properties = SCHEMA["resources"][token(component)]["inputProperties"]
    inputs = {camel_case(k): to_wire(v, properties.get(camel_case(k), {}))
              for k, v in cluster.items() if k != "layout"}
    return component, {**inputs, "region": config["alicloud:region"]}, cluster


PROVIDER_STACKS = sorted(path for path in STACKS_DIR.glob("Pulumi.*.yaml")
                         if path.stem.removeprefix("Pulumi.") in (
                             "training-dev", "inference-prod", "rendering-batch",
                             "training-ack", "inference-ack", "image-a100"))


@pytest.mark.slow  # six layouts and two blocks built under the mock engine
def test_no_output_of_the_component_provider_carries_a_planted_secret(monkeypatch):
    """Every component the plugin hosts: the state its Construct returns over gRPC (what
    the calling program and Pulumi's state get) holds a planted secret only marked secret."""
    from .conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config

    assert {path.stem for path in PROVIDER_STACKS} >= {
        "Pulumi.training-ack", "Pulumi.inference-ack", "Pulumi.image-a100"}
    states = {}
    for path in PROVIDER_STACKS:
        component, inputs, cluster = _layout_inputs(path)
        region = inputs["region"]
        states[path.stem] = _provider_state(component, inputs,
                                            cluster_config(cluster, region), monkeypatch)
    wiring = {"region": "cn-hangzhou", "securityGroupIds": ["sg-c3"], "imageId": "m-d4",
              "userData": f"#!/bin/sh\nexport TOKEN={USER_DATA_TOKEN}\n"}
    states["GpuNodes"] = _provider_state("GpuNodes", {
        **wiring, "vswitchId": "vsw-a1",
        "fleet": {"instanceType": "ecs.gn7i-c8g1.2xlarge", "nodes": 2}},
        cluster_config(BASE_TRAINING), monkeypatch)
    states["GpuScalingGroup"] = _provider_state("GpuScalingGroup", {
        **wiring, "vswitchIds": ["vsw-a1", "vsw-b2"],
        "fleet": {"instanceTypes": ["ecs.gn7i-c8g1.2xlarge"]}},
        cluster_config(BASE_INFERENCE), monkeypatch)
    assert all(states.values()), states  # every component returned outputs
    assert states["Pulumi.training-ack"].get("kubeconfigCommand")
    leaks = [(name, secret) for name, state in states.items() for secret in PROVIDER_PLANTED
             if secret in json.dumps(state)]
    assert leaks == []
