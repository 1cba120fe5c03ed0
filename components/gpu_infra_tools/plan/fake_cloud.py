"""What the offline plan answers in place of Alibaba Cloud: gpu_infra.testing's mocks, told
the stack's region, zones and bring-your-own network (so nothing resolves to None), with the
image stacks a fleet boots from read from their stack files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu_infra.schema import ClusterConfig
from gpu_infra.testing import GpuInfraMocks, Vswitch
from gpu_infra_tools.plan.stack_refs import stack_reference_outputs


class FakeCloud(GpuInfraMocks):
    """Deterministic ids, outputs and invoke answers for one plan of `cluster`."""

    def __init__(self, cluster: ClusterConfig, stacks_dir: Path | None = None):
        """`stacks_dir`: where the stack files of stack references are (the planned stack's
        directory); None: stack references answer no outputs."""
        network = cluster.network
        vpc_id = network.existing_vpc_id
        super().__init__(
            cluster.region, zones=network.zones,
            vpcs={vpc_id: [str(network.vpc_cidr)]} if vpc_id else {},
            vswitches={vsw_id: Vswitch(vpc_id, zone, str(network.vswitch_cidr(zone)))
                       for zone, vsw_id in network.existing_vswitch_ids.items()}
            if vpc_id else {})
        self.cluster = cluster
        self.stacks_dir = stacks_dir

    def stack_reference(self, name: str) -> dict[str, Any]:
        """An image stack's outputs, from its stack file beside the planned one."""
        return stack_reference_outputs(name, self.stacks_dir)
