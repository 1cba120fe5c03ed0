"""The cluster's security group: members reach each other, everything else only as listed."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.blocks.identity import KeyPair
from gpu_infra.schema.base import ANYWHERE
from gpu_infra.schema.security import SecurityConfig

RULE_TYPES = ("ingress", "egress")
IP_PROTOCOLS = ("tcp", "udp", "icmp", "icmpv6", "gre", "all")
PORTED_PROTOCOLS = ("tcp", "udp")
"""Protocols whose port_range is `from/to` within 1-65535; all others take ALL_PORTS."""
ALL_PORTS = "-1/-1"
NIC_TYPES = ("internet", "intranet")
NIC_TYPE = "intranet"
"""VPC security groups use intranet; a source security group requires it."""
POLICIES = ("accept", "drop")
POLICY = "accept"
PRIORITY = 1
"""Every rule accepts at the default (highest) priority; there are no drop rules."""
SSH_PORT = 22

SECURITY_GROUP_TYPE = "normal"


def port_range(port: int) -> str:
    """The port_range of one TCP/UDP port: `22/22`."""
    return f"{port}/{port}"


def _slug(cidr: IPv4Network | str) -> str:
    """A CIDR as part of a resource name: 10.0.0.0/8 -> 10.0.0.0-8."""
    return str(cidr).replace("/", "-")


class ClusterSecurity(pulumi.ComponentResource):
    """One security group for the cluster, with least-privilege rules:

    - ingress, all protocols, from the group itself (NCCL, eRDMA, NFS between members);
    - SSH (tcp 22) from each of `config.admin_cidrs` only;
    - each of `config.service_ports` (tcp) from each of `config.client_cidrs` and each of
      `service_source_group_ids` (e.g. a load balancer's security group; default none);
    - egress, all protocols, anywhere.

    With `config.public_key`, a key pair for key-only login (never a password).

    Attributes: `security_group`, `rules` (name -> rule), `key_pair` (KeyPair or None),
    `security_group_id`, `key_pair_name` (None without a key).
    """

    TYPE = "gpu-infra:security:ClusterSecurity"

    def __init__(self, name: str, *, config: SecurityConfig, vpc_id: pulumi.Input[str],
                 conventions: Conventions,
                 service_source_group_ids: Sequence[pulumi.Input[str]] = (),
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self._name_prefix = name
        group_name = child_name(name, "sg")
        self.security_group = alicloud.ecs.SecurityGroup(
            group_name, security_group_name=group_name, vpc_id=vpc_id,
            security_group_type=SECURITY_GROUP_TYPE,
            description="GPU cluster members; ingress only as configured",
            tags=conventions.tags_for(group_name), opts=pulumi.ResourceOptions(parent=self))
        self.security_group_id: pulumi.Output[str] = self.security_group.id
        self.rules: dict[str, alicloud.ecs.SecurityGroupRule] = {}
        self._rule("self", "ingress", "all", ALL_PORTS, "all traffic between members",
                   source_security_group_id=self.security_group_id)
        for cidr in config.admin_cidrs:
            self._rule(f"ssh-{_slug(cidr)}", "ingress", "tcp", port_range(SSH_PORT),
                       "SSH from an admin CIDR", cidr_ip=str(cidr))
        for port in config.service_ports:
            for cidr in config.client_cidrs:
                self._rule(f"svc-{port}-{_slug(cidr)}", "ingress", "tcp", port_range(port),
                           f"service port {port} from a client CIDR", cidr_ip=str(cidr))
            for index, group_id in enumerate(service_source_group_ids):
                self._rule(f"svc-{port}-group{index}", "ingress", "tcp", port_range(port),
                           f"service port {port} from a source security group",
                           source_security_group_id=group_id)
        self._rule("egress", "egress", "all", ALL_PORTS, "all outbound traffic",
                   cidr_ip=str(ANYWHERE))
        self.key_pair = KeyPair(
            child_name(name, "login"), config=config, conventions=conventions,
            opts=pulumi.ResourceOptions(parent=self)) if config.public_key else None
        self.key_pair_name: pulumi.Output[str] | None = (
            self.key_pair.key_pair_name if self.key_pair else None)
        self.register_outputs({"security_group_id": self.security_group_id,
                               "key_pair_name": self.key_pair_name})

    def _rule(self, suffix: str, direction: str, protocol: str, ports: str,
              description: str, **source: pulumi.Input[str]) -> None:
        """One accept rule with exactly one source (ingress) or destination (egress)."""
        name = child_name(self._name_prefix, f"rule-{suffix}")
        self.rules[name] = alicloud.ecs.SecurityGroupRule(
            name, security_group_id=self.security_group.id, type=direction,
            ip_protocol=protocol, port_range=ports, nic_type=NIC_TYPE, policy=POLICY,
            priority=PRIORITY, description=description, **source,
            opts=pulumi.ResourceOptions(parent=self))


__all__ = ["ClusterSecurity"]
