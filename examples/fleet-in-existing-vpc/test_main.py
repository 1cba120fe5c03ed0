"""This program's unit tests: Pulumi's mock engine with gpu_infra.testing's answers to the
invokes gpu-infra makes. Run `python -m pytest` in this directory."""

from pathlib import Path

import pulumi

from gpu_infra.testing import GpuInfraMocks, run_program

mocks = GpuInfraMocks(region="cn-hangzhou")
program = run_program(Path(__file__).with_name("__main__.py"), mocks)


@pulumi.runtime.test
def test_the_fleet_spreads_over_the_programs_vswitches():
    def check(args):
        group_vswitches, *program_vswitches = args
        assert sorted(group_vswitches) == sorted(program_vswitches)

    return pulumi.Output.all(program["fleet"].group.vswitch_ids,
                             *[vswitch.id for vswitch in program["vswitches"]]).apply(check)


@pulumi.runtime.test
def test_gpu_infra_builds_no_network_of_its_own():
    def check(_):  # the security group exists: its component is registered
        assert not [r for r in mocks.resources if r.type.startswith("gpu-infra:network")]
        assert [r.name for r in mocks.resources
                if r.type == "gpu-infra:security:ClusterSecurity"] == ["chat"]

    return program["security"].security_group_id.apply(check)
