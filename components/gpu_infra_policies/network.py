"""Network rules: who can reach the stack from the internet, judged by address space
(addresses.world_open), and TLS on what faces the internet."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import DEFAULT_WIDEST_PREFIX, parse_cidr, world_open
from gpu_infra_policies.base import (
    Context,
    Resource,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
    port_range,
)

ALL_PROTOCOLS = "all"
WIDEST_PREFIX_SCHEMA = {
    "type": "number", "minimum": 0,
    "description": "Sources on one group and port may admit at most as many public "
                   f"addresses as one /N holds. Default {DEFAULT_WIDEST_PREFIX}."}


def group_key(resource: Resource, value: Any, targets: Sequence[Resource], *keys: str) -> str:
    """What `value` (a reference input) points at: a target's URN when it resolves to one,
    else the value itself, else (unknown) the resource's own URN, so it stands alone."""
    for target in targets:
        if resource.refers_to(target, value, *keys):
            return target.urn or str(target.id)
    if value is None or is_unknown(value):
        return f"self:{resource.urn or id(resource)}"
    return f"value:{value}"


def _sources(props: Mapping[str, Any], *keys: str) -> list[str]:
    return [props[key] for key in keys if parse_cidr(props.get(key)) is not None]


def open_sets(members: Sequence[tuple[Resource, list[str]]],
              widest_prefix: float) -> Iterator[tuple[list[Resource], list[str], str]]:
    """(resources, their sources, why) for each resource whose sources alone are world-open,
    then, if none is, for the whole set if together they are."""
    alone = [(resource, cidrs, world_open(cidrs, widest_prefix))
             for resource, cidrs in members]
    flagged = [(resource, cidrs, why) for resource, cidrs, why in alone if why]
    for resource, cidrs, why in flagged:
        yield [resource], cidrs, why
    if not flagged:
        every = [cidr for _, cidrs in members for cidr in cidrs]
        together = world_open(every, widest_prefix)
        if together:
            yield [resource for resource, _ in members], every, together


def _segments(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The elementary port ranges the given (first, last) ranges cut 1-65535 into."""
    cuts = sorted({first for first, _ in ranges} | {last + 1 for _, last in ranges})
    return [(low, high - 1) for low, high in zip(cuts, cuts[1:], strict=False)]


def _ports(first: int, last: int) -> str:
    if (first, last) == (1, 65535):
        return "all ports"
    return f"port {first}" if first == last else f"ports {first}-{last}"


def _fronts_load_balancer(group: Resource, balancers: Sequence[Resource],
                          resources: Sequence[Resource]) -> bool:
    """A security group attached to a load balancer (NLB securityGroupIds, or an ALB
    security group attachment)."""
    for balancer in balancers:
        if any(balancer.refers_to(group, value)
               for value in as_list(balancer.props.get("securityGroupIds"))):
            return True
    return any(a.type == t.ALB_SECURITY_GROUP_ATTACHMENT
               and a.refers_to(group, a.props.get("securityGroupId")) for a in resources)


def _ingress_rules(resources: Sequence[Resource], public_ports: set[float]
                   ) -> dict[tuple[str, str], list[tuple[Resource, tuple[int, int], list[str]]]]:
    """Accepting ingress rules with a CIDR source, by (security group, protocol); rules on a
    load balancer's own group for a port in `public_ports` are left out."""
    groups = [r for r in resources if r.type == t.SECURITY_GROUP]
    balancers = [r for r in resources if r.type in t.LOAD_BALANCERS]
    lb_groups = [g for g in groups if _fronts_load_balancer(g, balancers, resources)]
    found: dict[tuple[str, str], list[tuple[Resource, tuple[int, int], list[str]]]] = {}
    for rule in (r for r in resources if r.type == t.SECURITY_GROUP_RULE):
        props = rule.props
        if props.get("type") != "ingress" or props.get("policy", "accept") != "accept":
            continue
        ports = port_range(props.get("portRange"))
        cidrs = _sources(props, "cidrIp", "ipv6CidrIp")
        if ports is None or not cidrs:
            continue
        group = props.get("securityGroupId")
        on_lb = any(rule.refers_to(g, group) for g in lb_groups)
        if on_lb and ports[0] == ports[1] and float(ports[0]) in public_ports:
            continue
        protocol = str(props.get("ipProtocol", ALL_PROTOCOLS)).lower()
        found.setdefault((group_key(rule, group, groups), protocol), []).append(
            (rule, ports, cidrs))
    return found


def world_ingress(resources: Sequence[Resource], cfg: Mapping[str, Any],
                  _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Accepting ingress rules (type ingress, policy accept: the default) whose sources, alone
    or together on one security group, protocol and port, are world-open (more public space
    than a /`widestPublicPrefix`; 0.0.0.0/0 and its halves, a /1, ::/1, 2000::/3 ...), except
    on a load balancer's own security group for a port in `publicListenerPorts`; listeners of
    internet-facing (or unknown) load balancers on a port not in that list."""
    public_ports = {float(port) for port in cfg["publicListenerPorts"]}
    by_group = _ingress_rules(resources, public_ports)
    reported: set[frozenset[int]] = set()
    for (group, protocol), rules in by_group.items():
        if protocol != ALL_PROTOCOLS:
            rules = rules + by_group.get((group, ALL_PROTOCOLS), [])
        ports_of = {id(rule): ports for rule, ports, _ in rules}
        for first, last in _segments(list(ports_of.values())):
            members = [(rule, cidrs) for rule, ports, cidrs in rules
                       if ports[0] <= first and last <= ports[1]]
            for offenders, cidrs, why in open_sets(members, cfg["widestPublicPrefix"]):
                key = frozenset(id(rule) for rule in offenders)
                if key in reported:
                    continue
                reported.add(key)
                ports = ports_of[id(offenders[0])] if len(offenders) == 1 else (first, last)
                others = "" if len(offenders) == 1 else (
                    " (rules " + ", ".join(r.name for r in offenders) + ")")
                yield offenders[0], (f"ingress to {_ports(*ports)} ({protocol}) from "
                                     f"{', '.join(cidrs)}{others}, which {why}; allow known "
                                     "CIDRs only")
    yield from _public_listeners(resources, public_ports)


def _balancer_of(listener: Resource, balancers: Sequence[Resource]) -> Resource | None:
    return next((b for b in balancers
                 if listener.refers_to(b, listener.props.get("loadBalancerId"))), None)


def internet_facing(listener: Resource, resources: Sequence[Resource]) -> bool:
    """True unless the listener's load balancer is known to be intranet."""
    balancer = _balancer_of(listener, [r for r in resources if r.type in t.LOAD_BALANCERS])
    address = balancer.props.get(t.LOAD_BALANCER_ADDRESS_KEYS[balancer.type]) \
        if balancer else None
    return not (isinstance(address, str) and address.lower() == "intranet")


def _public_listeners(resources: Sequence[Resource],
                      public_ports: set[float]) -> Iterator[tuple[Resource, str]]:
    for listener in (r for r in resources if r.type in t.LISTENER_PORT_KEYS):
        if not internet_facing(listener, resources):
            continue
        port = number(listener.props.get(t.LISTENER_PORT_KEYS[listener.type]))
        if port is not None and port not in public_ports:
            yield listener, (f"load balancer listener on port {int(port)} is reachable from "
                             f"anywhere; public ports allowed: "
                             f"{sorted(int(p) for p in public_ports)}")


def nas_world_access(resources: Sequence[Resource], cfg: Mapping[str, Any],
                     _: Context) -> Iterator[tuple[Resource | None, str]]:
    """NAS access rules whose sources, alone or together in one access group, are world-open
    (sourceCidrIp, ipv6SourceCidrIp)."""
    groups = [r for r in resources if r.type == t.NAS_ACCESS_GROUP]
    by_group: dict[str, list[tuple[Resource, list[str]]]] = {}
    for rule in (r for r in resources if r.type == t.NAS_ACCESS_RULE):
        cidrs = _sources(rule.props, "sourceCidrIp", "ipv6SourceCidrIp")
        if cidrs:
            key = group_key(rule, rule.props.get("accessGroupName"), groups, "accessGroupName")
            by_group.setdefault(key, []).append((rule, cidrs))
    for members in by_group.values():
        for offenders, cidrs, why in open_sets(members, cfg["widestPublicPrefix"]):
            access = offenders[0].props
            mode = (f"{access.get('rwAccessType', 'RDWR')}/"
                    f"{access.get('userAccessType', 'no_squash')}")
            who = ("NAS access rule allows" if len(offenders) == 1 else
                   "NAS access rules " + ", ".join(r.name for r in offenders) + " allow")
            yield offenders[0], (f"{who} {mode} from {', '.join(cidrs)}, which {why}; list "
                                 "the VPC's CIDRs")


TLS_PROTOCOLS = {t.ALB_LISTENER: ("listenerProtocol", ("HTTPS", "QUIC"), "HTTP"),
                 t.NLB_LISTENER: ("listenerProtocol", ("TCPSSL",), "TCP"),
                 t.SLB_LISTENER: ("protocol", ("https",), "http")}
"""Listener type -> (protocol input, protocols with TLS, provider default when absent)."""


def tls_listeners(resources: Sequence[Resource], cfg: Mapping[str, Any],
                  _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Listeners of internet-facing (or unknown) load balancers speak TLS (ALB HTTPS/QUIC,
    NLB TCPSSL, CLB https); plain HTTP/TCP only on a port in `plainListenerPorts` (the
    explicit exception, default none)."""
    allowed = {float(port) for port in cfg["plainListenerPorts"]}
    for listener in (r for r in resources if r.type in TLS_PROTOCOLS):
        key, secure, default = TLS_PROTOCOLS[listener.type]
        protocol = listener.props.get(key, default)
        port = number(listener.props.get(t.LISTENER_PORT_KEYS[listener.type]))
        if is_unknown(protocol) or protocol in secure or port in allowed:
            continue
        if internet_facing(listener, resources):
            where = f" on port {int(port)}" if port is not None else ""
            yield listener, (f"internet-facing listener{where} speaks {protocol} without TLS; "
                             f"use {' or '.join(secure)}")


NETWORK_RULES: tuple[Rule, ...] = (
    StackRule("no-world-ingress", "No ingress from the whole internet (judged by address space), "
              "except declared public load balancer ports", "security", "critical",
              "Restrict cidrIp / ipv6CidrIp to the admin and client CIDRs; put public services "
              "behind a load balancer listening on a port listed in publicListenerPorts.",
              world_ingress,
              schema={"publicListenerPorts": {"type": "array", "items": {"type": "number"},
                                              "description": "LB listener ports that may be "
                                                             "public. Default [80, 443]."},
                      "widestPublicPrefix": WIDEST_PREFIX_SCHEMA},
              defaults={"publicListenerPorts": [80, 443],
                        "widestPublicPrefix": DEFAULT_WIDEST_PREFIX}),
    StackRule("nas-no-world-access", "NAS access rules never admit the whole internet (judged by "
              "address space)", "security", "critical",
              "Set sourceCidrIp to the VPC or vSwitch CIDRs.", nas_world_access,
              schema={"widestPublicPrefix": WIDEST_PREFIX_SCHEMA},
              defaults={"widestPublicPrefix": DEFAULT_WIDEST_PREFIX}),
    StackRule("tls-on-public-listeners", "Internet-facing listeners use TLS", "security", "high",
              "Use an HTTPS (ALB), TCPSSL (NLB) or https (CLB) listener with a certificate, or "
              "list the port in plainListenerPorts (e.g. an HTTP listener that only redirects).",
              tls_listeners,
              schema={"plainListenerPorts": {"type": "array", "items": {"type": "number"},
                                             "description": "Ports where an internet-facing "
                                                            "listener may be plain. Default "
                                                            "none."}},
              defaults={"plainListenerPorts": []}),
)
