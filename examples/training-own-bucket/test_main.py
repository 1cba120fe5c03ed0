"""Tests of the training program without a cloud (`python -m pytest` here): gpu_infra.testing
answers the lookups the components make."""

import json
from pathlib import Path

import pulumi

from gpu_infra.testing import GpuInfraMocks, run_program

mocks = GpuInfraMocks(region="cn-hangzhou")
program = run_program(Path(__file__).with_name("__main__.py"), mocks)


@pulumi.runtime.test
def test_four_nodes_in_the_vpc_each_with_its_own_address():
    def check(ips):
        assert len(set(ips)) == 4
        assert all(ip.startswith("10.30.") for ip in ips)

    return pulumi.Output.all(*program["nodes"].private_ips).apply(check)


@pulumi.runtime.test
def test_the_role_reads_only_the_programs_bucket():
    def check(document):
        granted = {arn for statement in json.loads(document)["Statement"]
                   for arn in statement["Resource"]}
        assert granted == {"acs:oss:*:*:acme-llm-datasets",
                           "acs:oss:*:*:acme-llm-datasets/*"}

    return program["role"].policy.policy_document.apply(check)
