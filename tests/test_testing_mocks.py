"""gpu_infra.testing: its mocks answer every invoke gpu-infra makes (found in the source and
made by the shipped stacks' programs), each answer fits the SDK's typed result, a user's
program tests under them in a few lines, and wrong use fails with a clear message."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_alicloud as alicloud
import pytest

from gpu_infra.layouts import TrainingCluster
from gpu_infra.testing import (
    ACCOUNT_ID,
    GpuInfraMocks,
    MockSetupError,
    Vswitch,
    answer_problems,
)
from gpu_infra_facts import types as t
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.plan.fake_cloud import FakeCloud

from .conftest import BASE_TRAINING, PROJECT_DIR, STACKS_DIR, cluster_config, merged, write_stack
from .sources import nodes

LIBRARY = PROJECT_DIR / "components" / "gpu_infra"
BYO_NETWORK = {"vpc_cidr": "10.1.0.0/16", "zones": ["cn-hangzhou-i"],
               "existing_vpc_id": "vpc-byo1", "existing_vswitch_ids": {"cn-hangzhou-i": "vsw-byo1"}}


def _token(module: str, function: str) -> str:
    """alicloud.vpc.get_switches(_output) -> alicloud:vpc/getSwitches:getSwitches."""
    name = re.sub(r"_output$", "", function)
    camel = name.split("_")[0] + "".join(part.title() for part in name.split("_")[1:])
    return f"alicloud:{module or 'index'}/{camel}:{camel}"


def invokes_in_the_library() -> set[str]:
    """Every alicloud data source the library calls (`alicloud.<module>.get_<x>(_output)`)."""
    found = set()
    for path in LIBRARY.rglob("*.py"):
        for node in nodes(path):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr.startswith("get_"):
                chain = ast.unparse(node.func.value).split(".")
                if chain[0] == "alicloud":
                    found.add(_token(".".join(chain[1:]), node.func.attr))
    return found


def test_every_invoke_in_the_library_is_answered():
    found = invokes_in_the_library()
    assert {t.GET_NETWORKS, t.GET_SWITCHES, t.GET_IMAGES, t.GET_CALLER_IDENTITY} <= found
    assert found - GpuInfraMocks.ANSWERED == set()


SDK_CALLS: dict[str, Callable[[], Any]] = {
    t.GET_ZONES: lambda: alicloud.get_zones().zones[0].id,
    t.GET_REGIONS: lambda: alicloud.get_regions().regions[0].id,
    t.GET_CALLER_IDENTITY: lambda: alicloud.get_caller_identity().account_id,
    t.GET_NETWORKS: lambda: alicloud.vpc.get_networks(ids=["vpc-byo1"]).vpcs[0].cidr_block,
    t.GET_SWITCHES: lambda: alicloud.vpc.get_switches(ids=["vsw-byo1"]).vswitches[0].cidr_block,
    t.GET_IMAGES: lambda: alicloud.ecs.get_images(owners="self").images[0].id,
    t.GET_CLUSTER_CREDENTIAL: lambda: alicloud.cs.get_cluster_credential(
        cluster_id="c1").kube_config.split("\n")[0],
    t.GET_KUBERNETES_ADDONS: lambda: len(alicloud.cs.get_kubernetes_addons(
        cluster_id="c1").addons) > 0,
}
"""Each answered invoke, through pulumi-alicloud's own function (its typed result)."""


@pytest.mark.parametrize("token", sorted(GpuInfraMocks.ANSWERED))
def test_every_answer_has_every_field_the_sdks_result_requires(token):
    mocks = GpuInfraMocks("cn-hangzhou", vpcs={"vpc-byo1": ["10.1.0.0/16"]},
                          vswitches={"vsw-byo1": Vswitch("vpc-byo1", "cn-hangzhou-i",
                                                         "10.1.64.0/21")})
    answer = mocks.answer(token, {"ids": ["vpc-byo1", "vsw-byo1"], "clusterId": "c1"})
    assert answer_problems(token, answer) == []


def test_a_partial_answer_of_a_subclass_is_named_not_a_raw_type_error():
    class Partial(GpuInfraMocks):
        def answer(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
            found = super().answer(token, args)
            if token == t.GET_NETWORKS:
                found["vpcs"] = [{"id": "vpc-byo1"}]
            return found

    pulumi.runtime.set_mocks(Partial(vpcs={"vpc-byo1": ["10.1.0.0/16"]}), preview=False)
    with pytest.raises(Exception) as failure:
        alicloud.vpc.get_networks(ids=["vpc-byo1"])
    message = str(failure.value)
    assert "the answer to alicloud:vpc/getNetworks:getNetworks lacks" in message
    assert "vpcs[0]: lacks cidrBlock" in message


def test_every_answer_fits_the_sdks_typed_result():
    assert set(SDK_CALLS) == GpuInfraMocks.ANSWERED
    pulumi.runtime.set_mocks(GpuInfraMocks(
        "cn-hangzhou", vpcs={"vpc-byo1": ["10.1.0.0/16", "172.16.0.0/16"]},
        vswitches={"vsw-byo1": Vswitch("vpc-byo1", "cn-hangzhou-i", "10.1.64.0/21")}),
        preview=False)
    answers = {token: call() for token, call in SDK_CALLS.items()}
    assert answers[t.GET_CALLER_IDENTITY] == ACCOUNT_ID
    assert answers[t.GET_NETWORKS] == "10.1.0.0/16"
    assert answers[t.GET_SWITCHES] == "10.1.64.0/21"
    assert answers[t.GET_REGIONS] == "cn-hangzhou"
    assert answers[t.GET_ZONES].startswith("cn-hangzhou-")
    assert answers[t.GET_CLUSTER_CREDENTIAL] == "apiVersion: v1"
    assert answers[t.GET_KUBERNETES_ADDONS] is True


@pytest.mark.slow  # plans every shipped stack afresh
def test_every_invoke_the_shipped_stacks_make_is_answered(tmp_path, monkeypatch):
    made: set[str] = set()
    answer = FakeCloud.answer

    def recorded(self: FakeCloud, token: str, args: dict[str, Any]) -> dict[str, Any]:
        made.add(token)
        return answer(self, token, args)

    monkeypatch.setattr(FakeCloud, "answer", recorded)
    for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml")):
        run_plan(path)
    run_plan(write_stack(tmp_path, "byo", merged(BASE_TRAINING, network=BYO_NETWORK)))
    assert {t.GET_NETWORKS, t.GET_SWITCHES, t.GET_CALLER_IDENTITY} <= made
    assert made - GpuInfraMocks.ANSWERED == set()


def test_a_users_program_builds_a_layout_in_an_existing_vpc_under_the_mocks():
    """The five lines: set_mocks(GpuInfraMocks(...)), build, check the outputs."""
    mocks = GpuInfraMocks("cn-hangzhou", vpcs={"vpc-byo1": ["10.1.0.0/16"]},
                          vswitches={"vsw-byo1": Vswitch("vpc-byo1", "cn-hangzhou-i",
                                                         "10.1.64.0/21")})
    pulumi.runtime.set_mocks(mocks, preview=False)

    @pulumi.runtime.test
    def builds() -> pulumi.Output[None]:
        config = cluster_config(merged(BASE_TRAINING, network=BYO_NETWORK))
        cluster = TrainingCluster("t1", config=config, stack_name="dev", project="p")

        def check(values: list[Any]) -> None:
            ips, vpc_id = values
            assert vpc_id == "vpc-byo1"
            assert len(ips) == 2 and all(ip.startswith("10.1.64.") for ip in ips)

        return pulumi.Output.all(cluster.nodes.private_ips,
                                 cluster.exports["vpc_id"]).apply(check)

    builds()
    assert any(r.type == "alicloud:ecs/instance:Instance" for r in mocks.resources)


def test_an_invoke_without_an_answer_is_named():
    with pytest.raises(LookupError, match=r"no answer for invoke alicloud:oss/getBuckets"):
        GpuInfraMocks().answer("alicloud:oss/getBuckets:getBuckets", {})


def test_contradictory_facts_are_refused_one_line_each():
    with pytest.raises(MockSetupError) as failure:
        GpuInfraMocks("cn-nowhere", zones=["cn-beijing-a"], vpcs={"vpc-1": ["10.1.0.0/33"]},
                      vswitches={"vsw-1": Vswitch("vpc-2", "cn-beijing-a", "nope")})
    assert str(failure.value).splitlines() == [
        "region: 'cn-nowhere' is not an Alibaba Cloud region gpu-infra knows",
        "zones: cn-beijing-a is not a zone of cn-nowhere",
        "vpcs.vpc-1: '10.1.0.0/33' is not an IPv4 CIDR block",
        "vswitches.vsw-1: its VPC vpc-2 is not in vpcs",
        "vswitches.vsw-1: 'nope' is not an IPv4 CIDR block"]


@pytest.mark.slow  # a pytest process per example
@pytest.mark.parametrize("name", sorted(path.parent.name for path in
                                        (PROJECT_DIR / "examples").glob("*/test_main.py")))
def test_the_examples_own_tests_pass_under_the_mocks(name):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=",
                           "-p", "no:cacheprovider", "test_main.py"],
                          cwd=PROJECT_DIR / "examples" / name, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b2 passed\b", done.stdout), done.stdout
