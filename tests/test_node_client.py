"""The node's one cloud client (gpu-infra-api, as the nodes get it): each signature scheme
against its service's own documented example, and, under each supported system's python3
against the stand-in cloud (which checks signatures and plays the documented faults), a
transient failure costs a retry, slow metadata is waited for, and a refusal is one line
with the service's error code (an archived object says so)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, node_files, step_source
from gpu_infra.blocks.bootstrap.minify import strip_python
from gpu_infra_facts import node_stack

from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, at_once, python_of

SPEC = BootstrapSpec(fleet="t01-gpu", region="cn-beijing", gpu_counts={}, route="grid",
                     driver=node_stack.DEFAULT_DRIVER_STACK)
BUCKET, KEY = "t01-checkpoints", "gpu-infra/node-tools/abc.sh"


def client(tmp_path: Path) -> ModuleType:
    """gpu-infra-api as the nodes get it (stripped), loaded as a module."""
    path = tmp_path / "gpu-infra-api"
    path.write_text(strip_python(step_source("gpu-infra-api")))
    loader = importlib.machinery.SourceFileLoader("gpu_infra_api_under_test", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_rpc_signature_matches_the_documented_example(tmp_path):
    """Alibaba Cloud's RPC signature example (DescribeRegions, AccessKeySecret testsecret)."""
    params = {"Timestamp": "2016-02-23T12:46:24Z", "Format": "XML", "AccessKeyId": "testid",
              "Action": "DescribeRegions", "SignatureMethod": "HMAC-SHA1",
              "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
              "Version": "2014-05-26", "SignatureVersion": "1.0"}
    assert client(tmp_path).rpc_signature(params, "testsecret") == \
        "OLeaidS1JvxuMvnyHOwuJ+uX5qY="


def test_oss_signature_matches_the_documented_example(tmp_path):
    """OSS's V1 example (PUT /oss-example/nelson with two x-oss- headers), as the OSS Go
    SDK's own test checks it."""
    headers = {"Content-Md5": "ODBGOERFMDMzQTczRUY3NUE3NzA5QzdFNUYzMDQxNEM=",
               "Content-Type": "text/html", "Date": "Thu, 17 Nov 2005 18:49:58 GMT",
               "X-OSS-Meta-Author": "foo@bar.com", "X-OSS-Magic": "abracadabra",
               "Host": "oss-example.oss-cn-hangzhou.aliyuncs.com"}
    assert client(tmp_path).header_signature(
        "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV", "PUT", headers, "/oss-example/nelson",
        "x-oss-") == "26NBxoKdsyly4EDv6inkoDft/yA="


def test_mns_signature_matches_the_documented_example(tmp_path):
    """MNS's example (GET /MyQueue, TestAccessSecret): the page masks the last 4 characters
    of the signature "uwx3yeWoILzgmvesW0BQSgfM****"."""
    signature = client(tmp_path).header_signature(
        "TestAccessSecret", "GET", {"Date": "Thu, 09 Jul 2015 03:01:34 GMT",
                                    "x-mns-version": "2015-06-06"}, "/MyQueue", "x-mns-")
    assert signature.startswith("uwx3yeWoILzgmvesW0BQSgfM") and len(signature) == 28


def test_a_sent_content_type_is_signed(tmp_path):
    """MNS and OSS sign the Content-Type line: the signature over a request with one differs
    from the one without (case 5 signed none while urllib sent one)."""
    signature = client(tmp_path).header_signature
    bare = {"Date": "Thu, 09 Jul 2015 03:01:34 GMT"}
    assert signature("s", "PUT", bare, "/q", "x-mns-") != signature(
        "s", "PUT", {**bare, "Content-Type": "text/xml"}, "/q", "x-mns-")


def install(root: Path, cloud: FakeNodeCloud) -> Path:
    """gpu-infra-api under `root`, its config.sh at the stand-in; its path."""
    api = root / "opt/gpu-infra/bin/gpu-infra-api"
    api.parent.mkdir(parents=True)
    api.write_text(node_files(SPEC)["/opt/gpu-infra/bin/gpu-infra-api"][0])
    (root / "opt/gpu-infra/config.sh").write_text(
        f"REGION={SPEC.region}\nFLEET={SPEC.fleet}\n" + "".join(
            f"{key}={value}\n" for key, value in cloud.settings("i-node0").items()))
    return api


def run(system: str, api: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python_of(system), str(api), *args], capture_output=True,
                          text=True, timeout=240, check=False,
                          env={"GPU_INFRA_ROOT": str(api.parents[3]), "PATH": "/usr/bin:/bin"})


SYSTEMS = list(PYTHONS)
TAG_METADATA = ("token", "instance-id", "ram/security-credentials/",
                "ram/security-credentials/node-role")
"""The metadata items a tag asks for: the session token, the instance, the role, its
credentials."""


@pytest.mark.slow  # gpu-infra-api under each system's python3
def test_one_transient_failure_of_each_service_costs_a_retry_not_a_node(tmp_path):
    """One 503 from metadata, from OSS while fetching the node tools (case 6) and from ECS:
    each request is retried (with a fresh signature, 1 s later) and the node goes on. Each
    system's client against a stand-in of its own, all at once."""
    for system in SYSTEMS:
        python_of(system)  # skips loudly without one of the interpreters
    with ExitStack() as stack:
        clouds = {system: stack.enter_context(FakeNodeCloud(["i-node0"])) for system in SYSTEMS}
        for cloud in clouds.values():
            cloud.state.objects[(BUCKET, KEY)] = (b"#!/bin/bash\necho tools\n", "Standard")
            cloud.state.fail_once = {"metadata", "oss", "TagResources"}
        apis = {system: install(tmp_path / system, cloud) for system, cloud in clouds.items()}
        done = at_once(lambda system: (
            run(system, apis[system], "oss-get", BUCKET, KEY, str(tmp_path / system / "tools.sh")),
            run(system, apis[system], "tag", "GpuInfraHealth=healthy")), SYSTEMS)
    for system, (fetched, tagged) in done.items():
        assert fetched.returncode == 0 and tagged.returncode == 0, \
            (system, fetched.stderr + tagged.stderr)
        assert (tmp_path / system / "tools.sh").read_bytes() == b"#!/bin/bash\necho tools\n"
        assert sorted(clouds[system].state.failed) == ["TagResources", "metadata", "oss"], system
        assert clouds[system].state.health("i-node0") == "healthy", system


@pytest.mark.slow
def test_metadata_slower_than_five_seconds_is_waited_for(tmp_path):
    """Case 9: a metadata answer takes 6 s (more than the 5 s the client allowed). A tag
    asks for four items (TAG_METADATA) and waits for each one of them when it is the slow
    one: each system's client against a stand-in per slow item, all at once."""
    for system in SYSTEMS:
        python_of(system)  # skips loudly without one of the interpreters
    cases = [f"{system} {item}" for system in SYSTEMS for item in TAG_METADATA]
    with ExitStack() as stack:
        clouds = {case: stack.enter_context(FakeNodeCloud(["i-node0"])) for case in cases}
        for case, cloud in clouds.items():
            cloud.state.metadata_delay = {case.split(" ", 1)[1]: 6}
        apis = {case: install(tmp_path / str(number), cloud)
                for number, (case, cloud) in enumerate(clouds.items())}
        tagged = at_once(lambda case: run(case.split(" ", 1)[0], apis[case], "tag",
                                          "GpuInfraHealth=healthy"), cases)
    for case in cases:
        assert tagged[case].returncode == 0, (case, tagged[case].stderr)
        assert clouds[case].state.health("i-node0") == "healthy", case
        assert sorted(set(clouds[case].state.metadata_asked)) == sorted(TAG_METADATA), case


@pytest.mark.slow
@pytest.mark.parametrize("system", SYSTEMS)
def test_an_archived_object_and_a_refusal_are_one_line_each(tmp_path, system):
    """Case 10: OSS answers 403 InvalidObjectState for an object in Archive storage; RAM
    refuses a call outside the node's policy. Each is one line naming the operation, the
    status and the service's code, no traceback, and is not retried."""
    policy = ('{"Version": "1", "Statement": [{"Effect": "Allow", "Action": '
              '["oss:GetObject"], "Resource": ["acs:oss:*:*:*"]}]}')
    with FakeNodeCloud(["i-node0"], policy=policy) as cloud:
        cloud.state.objects[(BUCKET, KEY)] = (b"tools", "Archive")
        api = install(tmp_path, cloud)
        archived = run(system, api, "oss-get", BUCKET, KEY, str(tmp_path / "tools.sh"))
        refused = run(system, api, "tag", "GpuInfraHealth=healthy")
    assert archived.returncode == 1
    assert archived.stderr == (
        f"gpu-infra-api: oss GetObject /{BUCKET}/{KEY} failed: 403 InvalidObjectState "
        "(archived by a lifecycle rule: restore the object)\n")
    assert refused.returncode == 1
    assert refused.stderr == "gpu-infra-api: ecs TagResources failed: 403 Forbidden.RAM\n"
    assert len(cloud.state.denied) == 1  # asked once: a refusal is not retried
