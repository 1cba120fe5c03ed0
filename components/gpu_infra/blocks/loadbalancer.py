"""Load balancer building block: an NLB (or ALB) in front of an auto-scaling GPU fleet, with its own
security group so clients reach only the service ports and the fleet can trust the
load balancer's group instead of the world."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from ipaddress import IPv4Network
from typing import TypedDict

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.blocks.logs import LogTarget
from gpu_infra.blocks.security import NIC_TYPE, POLICY, PRIORITY, SECURITY_GROUP_TYPE, port_range
from gpu_infra.schema.loadbalancer import LoadBalancerConfig
from gpu_infra_facts.load_balancers import (
    ALB_TLS_PROTOCOL,
    NAME,
    NLB_TLS_PROTOCOL,
    ZONES_RANGE,
)
from gpu_infra_facts.serving import HEALTHY_HTTP_CODES, HTTP_CHECK_METHOD

ADDRESS_TYPES = ("Internet", "Intranet")
"""nlb.LoadBalancer address_type: public or VPC-only address."""
NLB_TYPE = "Network"
"""nlb.LoadBalancer load_balancer_type of an NLB."""
SERVER_GROUP_TYPES = ("Instance", "Ip")
SERVER_GROUP_TYPE = "Instance"
"""ECS instances (what a scaling group adds) are backends of an Instance server group."""
PROTOCOLS = ("TCP", "UDP", "TCPSSL")
PROTOCOL = "TCP"
"""Listener and server group protocol: plain TCP, the model server terminates HTTP."""
HEALTH_CHECK_TYPES = ("TCP", "HTTP")
"""NLB health_check_type; the ALB's health_check_protocol takes the same two words."""
HEALTH_CHECK_INTERVAL = 10
"""Seconds between health checks (the provider allows 5-50)."""
HEALTHY_THRESHOLD, UNHEALTHY_THRESHOLD = 2, 3
"""Consecutive results that flip a backend healthy or unhealthy (the provider allows 2-10)."""
HEALTH_CHECK_BACKEND_PORT = 0
"""health_check_connect_port 0: check each backend on the port it serves."""
HIGHEST_PORT = 65535
ATTACHMENT_TYPES = ("ALB", "NLB", "GWLB")
"""ess.ServerGroupAttachment type."""
WEIGHT = 100
"""ess.ServerGroupAttachment weight of each scaled instance (the provider allows 0-100)."""

WORLD = "0.0.0.0/0"
ALL_PORTS = "-1/-1"
DROP = "drop"
DENY_PRIORITY = 100
"""The lowest security group rule priority (1-100): the Deny of everyone else sits below
the Allows of the client CIDRs. An NLB's or ALB's security groups restrict nothing without a
Deny ("with only Allow rules, all traffic remains allowed": SLB docs "Use security groups as
blacklists or whitelists", NLB and ALB); at equal priority Drop wins over the managed
group's Allow-all at 100."""
ALB_EDITIONS = ("Basic", "Standard", "StandardWithWaf")
ALB_EDITION = "Standard"
"""alb.LoadBalancer load_balancer_edition of the ALB option."""
ALB_PAY_TYPE = "PayAsYouGo"
"""The only load_balancer_billing_config pay_type an ALB accepts."""
ALB_LISTENER_PROTOCOLS = ("HTTP", "HTTPS", "QUIC")
ALB_SERVER_GROUP_PROTOCOLS = ("HTTP", "HTTPS", "gRPC")
ALB_PROTOCOL = "HTTP"
"""ALB listener and backend protocol: plain HTTP to the model server."""
ALB_HEALTH_CHECK_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "gRPC")
ALB_ACTION = "ForwardGroup"
"""The alb.Listener default action: forward to a server group."""


class HealthCheck(TypedDict):
    """Health-check arguments the NLB and ALB server groups share."""

    health_check_enabled: bool
    health_check_connect_port: int
    health_check_interval: int
    healthy_threshold: int
    unhealthy_threshold: int


class ServiceLoadBalancer(pulumi.ComponentResource):
    """A load balancer in front of a scaling group, a Network Load Balancer (NLB,
    `config.kind` "nlb") or an Application Load Balancer (ALB, `config.kind` "alb"):

    - one zone mapping per entry of `vswitch_ids` (two to ten zones), intranet unless
      `config.internet_facing`;
    - per service port of `ports`: an Instance server group health-checked over TCP (with
      `config.health_check_path`: HTTP GET of that path, healthy on a 2xx answer) on the
      backend's port, and a listener
      forwarding to it (TCP for an NLB, HTTP for an ALB; TCPSSL or HTTPS with `config.tls`);
    - a dedicated security group on the load balancer whose only rules are ingress on the
      service ports from each of `client_cidrs`. A world-open CIDR (0.0.0.0/0) is only
      acceptable here, on a load balancer's public service ports, never on the fleet
      itself: let the fleet's group allow the service ports from `security_group_id`;
    - with `scaling_group_id` (or later through `attach`), one ESS server group attachment
      per port, so scaled instances join and leave the server groups by themselves.

    `ports` and `client_cidrs` are the security section's `service_ports` and
    `client_cidrs` (validated there). Health checks every 10 s, healthy after 2 and
    unhealthy after 3 results, weight 100, deletion protection as
    `conventions.deletion_protection`.

    Attributes: the raw children `load_balancer`, `server_groups` (port -> group),
    `listeners` (port -> listener), `security_group`, `rules` (name -> rule),
    `security_group_attachment` (ALB only, else None), `attachments` (port -> attachment,
    empty until attached); the flat ids `load_balancer_id`, `dns_name`, `server_group_ids`
    (port -> id), `security_group_id`.
    """

    TYPE = "gpu-infra:network:ServiceLoadBalancer"
    load_balancer: alicloud.nlb.LoadBalancer | alicloud.alb.LoadBalancer

    def __init__(self, name: str, *, config: LoadBalancerConfig, vpc_id: pulumi.Input[str],
                 vswitch_ids: Mapping[str, pulumi.Input[str]], ports: Sequence[int],
                 client_cidrs: Sequence[IPv4Network], conventions: Conventions,
                 scaling_group_id: pulumi.Input[str] | None = None,
                 access_log: LogTarget | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        _check(name, vswitch_ids)
        self._access_log = access_log
        self._name_prefix = name
        self._conventions = conventions
        self._kind = kind = config.kind
        self._tls = config.tls
        health_check_path = config.health_check_path
        self._create_security_group(vpc_id, ports, client_cidrs)
        address_type = ADDRESS_TYPES[0] if config.internet_facing else ADDRESS_TYPES[1]
        self.security_group_attachment: alicloud.alb.LoadBalancerSecurityGroupAttachment | None
        if kind == "nlb":
            self._create_nlb(vpc_id, vswitch_ids, address_type)
        else:
            self._create_alb(vpc_id, vswitch_ids, address_type)
        self.load_balancer_id: pulumi.Output[str] = self.load_balancer.id
        self.dns_name: pulumi.Output[str] = self.load_balancer.dns_name
        check = HealthCheck(health_check_enabled=True,
                            health_check_connect_port=HEALTH_CHECK_BACKEND_PORT,
                            health_check_interval=HEALTH_CHECK_INTERVAL,
                            healthy_threshold=HEALTHY_THRESHOLD,
                            unhealthy_threshold=UNHEALTHY_THRESHOLD)
        self.server_groups: dict[int, alicloud.nlb.ServerGroup | alicloud.alb.ServerGroup] = {}
        self.listeners: dict[int, alicloud.nlb.Listener | alicloud.alb.Listener] = {}
        check_type = HEALTH_CHECK_TYPES[1] if health_check_path else HEALTH_CHECK_TYPES[0]
        codes = list(HEALTHY_HTTP_CODES) if health_check_path else None
        method = HTTP_CHECK_METHOD if health_check_path else None
        for port in ports:
            if kind == "nlb":
                self._create_nlb_port(port, vpc_id, alicloud.nlb.ServerGroupHealthCheckArgs(
                    **check, health_check_url=health_check_path, health_check_type=check_type,
                    health_check_http_codes=codes, http_check_method=method))
            else:
                self._create_alb_port(port, vpc_id, alicloud.alb.ServerGroupHealthCheckConfigArgs(
                    **check, health_check_path=health_check_path,
                    health_check_protocol=check_type, health_check_codes=codes,
                    health_check_method=method))
        self.server_group_ids: dict[int, pulumi.Output[str]] = {
            port: group.id for port, group in self.server_groups.items()}
        self.attachments: dict[int, alicloud.ess.ServerGroupAttachment] = {}
        if scaling_group_id is not None:
            self.attach(scaling_group_id)
        self.register_outputs({
            "load_balancer_id": self.load_balancer_id, "dns_name": self.dns_name,
            "server_group_ids": {str(port): gid for port, gid in self.server_group_ids.items()},
            "security_group_id": self.security_group_id})

    def attach(self, scaling_group_id: pulumi.Input[str]
               ) -> dict[int, alicloud.ess.ServerGroupAttachment]:
        """Attach a scaling group to every server group, on the service port. For layouts
        that build the load balancer (and its security group) before the fleet."""
        if self.attachments:
            raise ValueError(f"{self._name_prefix}: a scaling group is already attached")
        attachment_type = ATTACHMENT_TYPES[1] if self._kind == "nlb" else ATTACHMENT_TYPES[0]
        for port, group in self.server_groups.items():
            self.attachments[port] = alicloud.ess.ServerGroupAttachment(
                child_name(self._name_prefix, f"attach-{port}"),
                scaling_group_id=scaling_group_id, server_group_id=group.id,
                type=attachment_type, port=port, weight=WEIGHT, force_attach=True,
                opts=pulumi.ResourceOptions(parent=self))
        return self.attachments

    def _child(self, suffix: str) -> tuple[str, dict[str, str]]:
        """A child's name and its tags."""
        name = child_name(self._name_prefix, suffix)
        return name, self._conventions.tags_for(name)

    def _create_security_group(self, vpc_id: pulumi.Input[str], ports: Sequence[int],
                               client_cidrs: Sequence[IPv4Network]) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        name, tags = self._child("sg")
        self.security_group = alicloud.ecs.SecurityGroup(
            name, security_group_name=name, vpc_id=vpc_id,
            security_group_type=SECURITY_GROUP_TYPE,
            description="Load balancer; service ports from client CIDRs only", tags=tags,
            opts=opts)
        self.security_group_id: pulumi.Output[str] = self.security_group.id
        self.rules: dict[str, alicloud.ecs.SecurityGroupRule] = {}
        for port in ports:
            for cidr in client_cidrs:
                rule_name = child_name(self._name_prefix,
                                       f"rule-{port}-{str(cidr).replace('/', '-')}")
                self.rules[rule_name] = alicloud.ecs.SecurityGroupRule(
                    rule_name, security_group_id=self.security_group_id, type="ingress",
                    ip_protocol="tcp", port_range=port_range(port), cidr_ip=str(cidr),
                    nic_type=NIC_TYPE, policy=POLICY, priority=PRIORITY,
                    description=f"service port {port} from a client CIDR", opts=opts)
        deny = child_name(self._name_prefix, "rule-deny-others")
        self.rules[deny] = alicloud.ecs.SecurityGroupRule(
            deny, security_group_id=self.security_group_id, type="ingress", ip_protocol="all",
            port_range=ALL_PORTS, cidr_ip=WORLD, nic_type=NIC_TYPE, policy=DROP,
            priority=DENY_PRIORITY, description="everyone else: a load balancer group "
            "admits only the client CIDRs with a Deny below its Allows", opts=opts)

    def _create_nlb(self, vpc_id: pulumi.Input[str],
                    vswitch_ids: Mapping[str, pulumi.Input[str]], address_type: str) -> None:
        name, tags = self._child("nlb")
        self.load_balancer = alicloud.nlb.LoadBalancer(
            name, load_balancer_name=name, load_balancer_type=NLB_TYPE,
            address_type=address_type, vpc_id=vpc_id, zone_mappings=[
                alicloud.nlb.LoadBalancerZoneMappingArgs(zone_id=zone, vswitch_id=vswitch_id)
                for zone, vswitch_id in vswitch_ids.items()],
            security_group_ids=[self.security_group_id],
            deletion_protection_enabled=self._conventions.deletion_protection,
            tags=tags, opts=pulumi.ResourceOptions(parent=self))
        self.security_group_attachment = None

    def _create_alb(self, vpc_id: pulumi.Input[str],
                    vswitch_ids: Mapping[str, pulumi.Input[str]], address_type: str) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        name, tags = self._child("alb")
        self.load_balancer = alicloud.alb.LoadBalancer(
            name, load_balancer_name=name, load_balancer_edition=ALB_EDITION,
            load_balancer_billing_config=alicloud.alb.LoadBalancerLoadBalancerBillingConfigArgs(
                pay_type=ALB_PAY_TYPE),
            address_type=address_type, vpc_id=vpc_id, zone_mappings=[
                alicloud.alb.LoadBalancerZoneMappingArgs(zone_id=zone, vswitch_id=vswitch_id)
                for zone, vswitch_id in vswitch_ids.items()],
            deletion_protection_enabled=self._conventions.deletion_protection,
            access_log_config=alicloud.alb.LoadBalancerAccessLogConfigArgs(
                log_project=self._access_log.project, log_store=self._access_log.store)
            if self._access_log else None,
            tags=tags, opts=opts)
        self.security_group_attachment = alicloud.alb.LoadBalancerSecurityGroupAttachment(
            child_name(self._name_prefix, "alb-sg"), load_balancer_id=self.load_balancer.id,
            security_group_id=self.security_group_id, opts=opts)

    def _create_nlb_port(self, port: int, vpc_id: pulumi.Input[str],
                         health_check: alicloud.nlb.ServerGroupHealthCheckArgs) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        name, tags = self._child(f"servers-{port}")
        self.server_groups[port] = alicloud.nlb.ServerGroup(
            name, server_group_name=name, server_group_type=SERVER_GROUP_TYPE,
            protocol=PROTOCOL, vpc_id=vpc_id, health_check=health_check, tags=tags, opts=opts)
        name, tags = self._child(f"listener-{port}")
        tls = self._tls
        self.listeners[port] = alicloud.nlb.Listener(
            name, load_balancer_id=self.load_balancer.id,
            listener_protocol=NLB_TLS_PROTOCOL if tls else PROTOCOL,
            certificate_ids=[tls.certificate_id] if tls else None,
            security_policy_id=tls.policy if tls else None,
            listener_port=port, server_group_id=self.server_groups[port].id,
            listener_description=name, tags=tags, opts=opts)

    def _create_alb_port(self, port: int, vpc_id: pulumi.Input[str],
                         health_check: alicloud.alb.ServerGroupHealthCheckConfigArgs) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        name, tags = self._child(f"servers-{port}")
        self.server_groups[port] = alicloud.alb.ServerGroup(
            name, server_group_name=name, server_group_type=SERVER_GROUP_TYPE,
            protocol=ALB_PROTOCOL, vpc_id=vpc_id, health_check_config=health_check,
            tags=tags, opts=opts)
        name, tags = self._child(f"listener-{port}")
        tls = self._tls
        self.listeners[port] = alicloud.alb.Listener(
            name, load_balancer_id=self.load_balancer.id,
            listener_protocol=ALB_TLS_PROTOCOL if tls else ALB_PROTOCOL,
            certificates=alicloud.alb.ListenerCertificatesArgs(
                certificate_id=tls.certificate_id) if tls else None,
            security_policy_id=tls.policy if tls else None,
            listener_port=port, listener_description=name, default_actions=[{
                "type": ALB_ACTION, "forward_group_config": {
                    "server_group_tuples": [{"server_group_id": self.server_groups[port].id}]}}],
            tags=tags, opts=opts)



def _check(name: str, vswitch_ids: Mapping[str, pulumi.Input[str]]) -> None:
    """Problems with the wiring, one `field: message` line each (ValueError)."""
    problems = []
    if not NAME.match(child_name(name, f"servers-{HIGHEST_PORT}")):
        problems.append(f"name: {name!r} must start with a letter and hold only letters, "
                        "digits, '.', '_' and '-' (at most 114 characters)")
    low, high = ZONES_RANGE
    if not low <= len(vswitch_ids) <= high:
        problems.append(f"vswitch_ids: a load balancer needs {low} to {high} zones, one "
                        f"vSwitch each; got {len(vswitch_ids)}")
    if problems:
        raise ValueError("\n".join(problems))


__all__ = ["HealthCheck", "ServiceLoadBalancer"]
