"""`gpu-infra clone` of an ACK stack: the clone gets its own cluster, VPC and pod vSwitch
CIDRs (moved, never overlapping), names derived from its own cluster name (Kubernetes
cluster, node pools, ACR namespace), and nothing cluster-specific of the source."""

from __future__ import annotations

import shutil
from ipaddress import IPv4Network
from pathlib import Path

import pytest
import yaml

from gpu_infra.schema import load_cluster_config
from gpu_infra_facts import types as t
from gpu_infra_tools.cli import main
from gpu_infra_tools.plan.engine import Plan, run_plan

from .conftest import STACKS_DIR

pytestmark = pytest.mark.slow  # plans the source and the clone

POD_CIDRS = {"cn-hangzhou-i": "10.50.160.0/19", "cn-hangzhou-j": "10.50.192.0/19"}
"""Explicit Terway pod vSwitches of the source (the upper half of its 10.50.0.0/16)."""


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    """A stacks directory with inference-ack, its pod vSwitches and ACR namespace explicit,
    and training-ack beside it."""
    for stack in ("inference-ack", "training-ack"):
        shutil.copy(STACKS_DIR / f"Pulumi.{stack}.yaml", tmp_path)
    path = tmp_path / "Pulumi.inference-ack.yaml"
    data = yaml.safe_load(path.read_text())
    cluster = data["config"]["gpu-infra:cluster"]
    cluster["network"]["pod_vswitch_cidrs"] = POD_CIDRS
    cluster["registry"]["namespace"] = "chat-images"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


def clone(stacks: Path, *args: str) -> int:
    return main(["clone", "inference-ack", *args, "--stacks-dir", str(stacks)])


SCOPED = (t.KUBERNETES_ADDON, *t.REGISTRY_REPOS, "alicloud:log/machineGroup:MachineGroup")
"""Names that are ACK's (add-ons) or scoped by a parent the clone names anew (repositories
by their namespace, machine groups by their SLS project)."""


def names_and_ids(plan: Plan) -> tuple[set[str], set[str]]:
    """Cloud-side names (`name`, `nodePoolName`, `instanceName`; a repository as
    `namespace/name`) and resource ids."""
    names = {str(r.inputs[key]) for r in plan.resources if r.custom and r.type not in SCOPED
             for key in ("name", "nodePoolName", "instanceName") if key in r.inputs}
    names |= {f"{r.inputs['namespace']}/{r.inputs['name']}" for r in plan.resources
              if r.type in t.REGISTRY_REPOS}
    return names, {str(r.id) for r in plan.resources if r.custom and r.id}


def strings(plan: Plan) -> set[str]:
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for resource in plan.resources:
        walk(resource.inputs)
    return found


def test_ack_clone_moves_the_pod_vswitches_with_the_vpc_and_overlaps_nothing(stacks, capsys):
    assert clone(stacks, "chat-ack-2") == 0
    _, cluster = load_cluster_config(stacks / "Pulumi.chat-ack-2.yaml")
    network = cluster.network
    taken = [IPv4Network("10.50.0.0/16"), IPv4Network("10.40.0.0/16")]
    assert not any(network.vpc_cidr.overlaps(cidr) for cidr in taken)
    assert network.vpc_cidr.prefixlen == 16
    moved = {zone: str(cidr) for zone, cidr in network.pod_vswitch_cidrs.items()}
    offset = str(network.vpc_cidr.network_address).split(".")[:2]
    assert moved == {zone: ".".join([*offset, *cidr.split(".")[2:]])
                     for zone, cidr in POD_CIDRS.items()}
    subnets = [network.vswitch_cidr(z) for z in network.zones] + [
        network.pod_vswitch_cidr(z) for z in network.zones]
    assert all(cidr.subnet_of(network.vpc_cidr) for cidr in subnets)
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])
    assert not network.vpc_cidr.overlaps(cluster.ack_settings.service_cidr)


def test_ack_clone_derives_every_name_and_copies_no_id_of_the_source(stacks, capsys):
    assert clone(stacks, "chat-ack-2") == 0
    notes = capsys.readouterr().out
    assert "dropped registry.namespace (chat-images)" in notes
    cloned = yaml.safe_load((stacks / "Pulumi.chat-ack-2.yaml").read_text())
    assert "namespace" not in cloned["config"]["gpu-infra:cluster"]["registry"]
    source_plan = run_plan(stacks / "Pulumi.inference-ack.yaml")
    clone_plan = run_plan(stacks / "Pulumi.chat-ack-2.yaml")
    source_names, source_ids = names_and_ids(source_plan)
    clone_names, _ = names_and_ids(clone_plan)
    assert not source_names & clone_names
    assert not source_ids & strings(clone_plan)
    (k8s,) = clone_plan.by_type(t.MANAGED_KUBERNETES)
    assert k8s.inputs["name"] == "chat-ack-2-ack-k8s"
    assert {r.inputs["name"] for r in clone_plan.by_type(t.REGISTRY_NAMESPACE)} == {
        "chat-ack-2", "chat-ack-2-mirror"}
    assert {p.inputs["nodePoolName"] for p in clone_plan.by_type(t.NODE_POOL)} == {
        "chat-ack-2-gpu-pool", "chat-ack-2-system-pool"}


def test_ack_clone_avoids_the_service_cidr(stacks):
    """The first /16 of the pool holds the clone's service CIDR: the VPC goes around it."""
    assert clone(stacks, "chat-ack-2", "--pool", "172.16.0.0/12",
                 "--set", "ack.service_cidr=172.16.0.0/20") == 0
    _, cluster = load_cluster_config(stacks / "Pulumi.chat-ack-2.yaml")
    assert str(cluster.ack_settings.service_cidr) == "172.16.0.0/20"
    assert str(cluster.network.vpc_cidr) == "172.17.0.0/16"


def test_ack_clone_of_a_pool_holding_only_the_service_cidr_is_refused(stacks, capsys):
    assert clone(stacks, "chat-ack-2", "--pool", "172.21.0.0/16") == 2
    err = capsys.readouterr().err
    assert "no free /16 left in the pool 172.21.0.0/16; taken: 172.21.0.0/20 (the clone's " \
           "gpu-infra:cluster.ack.service_cidr)" in err
    assert not (stacks / "Pulumi.chat-ack-2.yaml").exists()
