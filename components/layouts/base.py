"""What every layout shares: conventions from the stack, the network, outputs to export."""

from __future__ import annotations

import pulumi

from ..config import StackConfig
from ..conventions import Conventions, stack_tags
from ..network import Network


class LayoutBase(pulumi.ComponentResource):
    """Base of the three layouts. Subclasses set TYPE and build their blocks in `build`."""

    TYPE = "gpu-infra:layouts:Layout"
    network: Network
    exports: dict[str, pulumi.Input]
    """Stack outputs: what a user needs next."""

    def __init__(self, name: str, *, stack: StackConfig, stack_name: str, project: str,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self.stack = stack
        self.conventions = Conventions(
            tags=stack_tags(project=project, stack=stack_name, environment=stack.environment,
                            layout=stack.layout, user_tags=stack.tags),
            protect_data=stack.is_prod, deletion_protection=stack.is_prod)
        self.network = Network(
            f"{name}-net", vpc_cidr=stack.network.vpc_cidr,
            vswitch_cidrs={zone: stack.network.vswitch_cidr(zone) for zone in stack.network.zones},
            conventions=self.conventions, opts=pulumi.ResourceOptions(parent=self))
        self.exports = {"vpc_id": self.network.vpc_id,
                        "vswitch_ids": self.network.vswitch_ids}
        self.build()
        self.register_outputs(self.exports)

    def build(self) -> None:
        """Create the layout's own blocks and add to `exports`."""
