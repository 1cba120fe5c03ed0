"""What every layout shares: conventions from the stack, the network, the security group and
key pair, the instance role, the KMS key, and the outputs to export."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from ..config import StackConfig
from ..conventions import Conventions, stack_tags
from ..encryption import KmsKey
from ..identity import InstanceRole
from ..network import Network
from ..security import ClusterSecurity


class LayoutBase(pulumi.ComponentResource):
    """Base of the three layouts. Subclasses set TYPE and build their blocks in `build`.

    `bucket_names`: the stack's OSS buckets the instance role may read and write (default
    none). Attributes: `network`, `security` (security_group_id, key_pair_name or None),
    `role` (role_name), `kms_key` (key_id; None unless the stack's kms_encryption is on).
    """

    TYPE = "gpu-infra:layouts:Layout"
    network: Network
    security: ClusterSecurity
    role: InstanceRole
    kms_key: KmsKey | None
    exports: dict[str, pulumi.Input]
    """Stack outputs: what a user needs next."""

    def __init__(self, name: str, *, stack: StackConfig, stack_name: str, project: str,
                 bucket_names: Sequence[str] = (),
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self.stack = stack
        self.conventions = Conventions(
            tags=stack_tags(project=project, stack=stack_name, environment=stack.environment,
                            layout=stack.layout, user_tags=stack.tags),
            protect_data=stack.is_prod, deletion_protection=stack.is_prod)
        child = pulumi.ResourceOptions(parent=self)
        self.network = Network(f"{name}-net", config=stack.network,
                               conventions=self.conventions, opts=child)
        security = stack.security
        self.security = ClusterSecurity(
            f"{name}-sec", vpc_id=self.network.vpc_id, admin_cidrs=security.admin_cidrs,
            service_ports=security.service_ports, client_cidrs=security.client_cidrs,
            service_source_group_ids=self.service_source_group_ids(),
            public_key=security.public_key, conventions=self.conventions, opts=child)
        self.kms_key = KmsKey(
            f"{name}-kms", rotation_days=security.kms_rotation_days,
            pending_window_days=security.kms_pending_window_days,
            kms_instance_id=security.kms_instance_id, conventions=self.conventions,
            opts=child) if stack.kms_encryption else None
        self.role = InstanceRole(
            f"{name}-node", bucket_names=bucket_names,
            kms_key_arn=self.kms_key.key_arn if self.kms_key else None,
            conventions=self.conventions, opts=child)
        self.exports = {"vpc_id": self.network.vpc_id,
                        "vswitch_ids": self.network.vswitch_ids,
                        "security_group_id": self.security.security_group_id,
                        "role_name": self.role.role_name}
        optional = {"nat_eip": self.network.nat_eip,
                    "key_pair_name": self.security.key_pair_name,
                    "kms_key_id": self.kms_key.key_id if self.kms_key else None}
        self.exports.update({key: value for key, value in optional.items() if value is not None})
        self.build()
        self.register_outputs(self.exports)

    def service_source_group_ids(self) -> Sequence[pulumi.Input[str]]:
        """Security groups (e.g. a load balancer's) that may reach the service ports, besides
        the client CIDRs. Called before `build`; layouts with a load balancer override it.
        Default none."""
        return ()

    def build(self) -> None:
        """Create the layout's own blocks and add to `exports`."""
