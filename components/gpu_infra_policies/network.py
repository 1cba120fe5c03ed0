"""Network exposure: who can reach the stack from the internet, from broad private ranges
or from other accounts, judged by address space (addresses.world_open) over every type that
admits traffic: security group rules (CIDRs, IPv6, prefix lists, any port spelling), load
balancer listeners and ACLs, NAT port forwarding, database whitelists, NAS access rules,
Kubernetes Services; and TLS on what faces the internet."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from ipaddress import collapse_addresses
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import (
    DEFAULT_WIDEST_PREFIX,
    exposure,
    parse_cidr,
    world_open,
)
from gpu_infra_policies.base import (
    PORT_SCHEMA,
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    port_range,
)
from gpu_infra_policies.exposure import (
    ACL_ENTRIES,
    WHITELISTS,
    kubernetes_services,
    nat_forwards,
    public_listeners,
    whitelist_entries,
    world_acls,
    world_whitelists,
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


def _accepting_ingress(props: Mapping[str, Any]) -> bool:
    """A security group rule of type ingress that accepts (policy accept: the default),
    whatever the case."""
    return str(props.get("type", "")).lower() == "ingress" and str(
        props.get("policy", "accept")).lower() == "accept"


def _sources(props: Mapping[str, Any], *keys: str) -> list[str]:
    return [props[key] for key in keys if parse_cidr(props.get(key)) is not None]


def _prefix_list_sources(rule: Resource, resources: Sequence[Resource]) -> list[str]:
    """The CIDRs of the ecs.EcsPrefixList a rule admits (prefixListId), if it is in the
    stack."""
    value = rule.props.get("prefixListId")
    if value in (None, ""):
        return []
    for prefix_list in (r for r in resources if r.type == t.PREFIX_LIST):
        if rule.refers_to(prefix_list, value):
            return [e["cidr"] for e in as_list(prefix_list.props.get("entries"))
                    if isinstance(e, Mapping) and parse_cidr(e.get("cidr")) is not None]
    return []


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
        if not _accepting_ingress(props):
            continue
        ports = port_range(props.get("portRange"))
        cidrs = _sources(props, "cidrIp", "ipv6CidrIp") + _prefix_list_sources(rule, resources)
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
    """Accepting ingress rules (type ingress, policy accept: the default) whose sources
    (cidrIp, ipv6CidrIp, the entries of a prefix list in the stack), alone or together on one
    security group, protocol and port, are world-open (more public space than a
    /`widestPublicPrefix`; 0.0.0.0/0 and its halves, a /1, ::/1, 2000::/3 ...), on any port
    however written ("22/22", "22", 22, absent = the provider default -1/-1, all ports),
    except on a load balancer's own security group for a port in `publicListenerPorts`.
    Beyond security groups (exposure.py): listeners of internet-facing load balancers on a
    port not in that list or forwarding to an admin port, unless a whitelist ACL limits
    them; SLB / ALB ACLs admitting the world (not used as blacklists); NAT DNAT entries;
    database, search and registry whitelists; Kubernetes LoadBalancer Services."""
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
    widest = cfg["widestPublicPrefix"]
    yield from public_listeners(resources, public_ports, widest)
    yield from world_acls(resources, widest)
    yield from nat_forwards(resources, public_ports)
    yield from world_whitelists(resources, widest)
    yield from kubernetes_services(resources, public_ports, widest)


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


def private_breadth(cidrs: Sequence[str]) -> int:
    """IPv4 addresses the CIDRs admit outside public space (RFC 1918, CGNAT, ...), each
    counted once."""
    networks = [n for n in (parse_cidr(c) for c in cidrs) if n is not None and n.version == 4]
    total = sum(n.num_addresses for n in collapse_addresses(networks))
    public = sum(e.public for e in exposure(networks) if e.version == 4)
    return total - public


def _source_sets(resources: Sequence[Resource]) -> Iterator[tuple[Resource, str, list[str]]]:
    """(resource, what it opens, its sources) of accepting ingress rules, NAS access rules
    and database whitelists."""
    for rule in (r for r in resources if r.type == t.SECURITY_GROUP_RULE):
        props = rule.props
        if _accepting_ingress(props):
            ports = port_range(props.get("portRange"))
            where = f"{_ports(*ports)} ({props.get('ipProtocol', ALL_PROTOCOLS)})" if ports \
                else "an unknown port"
            yield rule, f"ingress to {where}", _sources(props, "cidrIp") + \
                _prefix_list_sources(rule, resources)
    for rule in (r for r in resources if r.type == t.NAS_ACCESS_RULE):
        yield rule, "NAS access", _sources(rule.props, "sourceCidrIp")
    for resource in (r for r in resources if r.type in WHITELISTS):
        for key in WHITELISTS[resource.type]:
            yield resource, key, whitelist_entries(resource.props.get(key))


def broad_private(resources: Sequence[Resource], cfg: Mapping[str, Any],
                  _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Sources that admit more private IPv4 addresses than one /`widestPrivatePrefix`
    (default /16, a whole VPC): 10.0.0.0/8 or 172.16.0.0/12 lets every peered VPC, VPN and
    data centre on those ranges in (security group ingress, NAS access rules, database
    whitelists)."""
    limit = 2 ** (32 - int(cfg["widestPrivatePrefix"]))
    for resource, what, cidrs in _source_sets(resources):
        breadth = private_breadth(cidrs)
        if breadth > limit and world_open(cidrs) is None:  # world-open: no-world-ingress
            yield resource, (f"{what} from {', '.join(cidrs)} admits {breadth:,} private "
                             f"addresses, more than a /{int(cfg['widestPrivatePrefix'])}; "
                             "list the VPC's or the clients' CIDRs")


PEER_ACCOUNTS: dict[str, tuple[str, ...]] = {
    t.SECURITY_GROUP_RULE: ("sourceGroupOwnerAccount", "sourceGroupOwnerId"),
    t.PEER_CONNECTION: ("acceptingAliUid",),
    t.CEN_INSTANCE_GRANT: ("cenOwnerId",),
    t.CEN_INSTANCE_ATTACHMENT: ("childInstanceOwnerId", "cenOwnerId"),
}
"""Types that connect the stack's network with another account, and the inputs naming it."""
TRUSTED_ACCOUNTS_SCHEMA = {
    "type": "array", "items": {"type": "string"},
    "description": "Alibaba Cloud account ids (or names) the stack may share with. "
                   "Default none."}


def foreign_accounts(resource: Resource, keys: Sequence[str],
                     trusted: Sequence[str]) -> list[tuple[str, str]]:
    """(input, account) for each input of `keys` naming an account not in `trusted`."""
    found = []
    for key in keys:
        value = resource.props.get(key)
        if value not in (None, "") and not is_unknown(value) and str(value) not in trusted:
            found.append((key, str(value)))
    return found


def foreign_peers(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Security group rules admitting another account's group, VPC peering to another
    account, CEN grants to and attachments from another account: accounts not listed in
    `trustedAccounts`."""
    trusted = [str(a) for a in cfg["trustedAccounts"]]
    for key, account in foreign_accounts(resource, PEER_ACCOUNTS.get(resource.type, ()),
                                         trusted):
        yield (f"{key} {account} connects this network with another account; list it in "
               "trustedAccounts if you trust it (your own account id included)")


VPC_DATABASES = {t.MONGODB_INSTANCE: "networkType", t.RDS_INSTANCE: None,
                 t.KVSTORE_INSTANCE: None}
"""Databases that may still be created on the classic network, and the input naming the
network type, if they have one (else the vSwitch decides)."""


def databases_in_vpc(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Databases live in a VPC: networkType not Classic, and a vswitchId (without one,
    MongoDB, RDS and Redis are created on the classic network, shared by every tenant of
    the region)."""
    if resource.type not in VPC_DATABASES:
        return
    props = resource.props
    key = VPC_DATABASES[resource.type]
    kind = props.get(key) if key else None
    if isinstance(kind, str) and kind.lower() == "classic":
        yield (f"{key} is Classic: the database sits on the shared classic network; create "
               "it in a VPC (vswitchId)")
    elif kind is None and props.get("vswitchId") in (None, ""):
        yield ("no vswitchId: the database is created on the shared classic network; set a "
               "VPC vSwitch")


INSTANCE_HOPS = ("Instance", "NetworkInterface", "HaVip")
"""Route next-hop types that are a machine of the stack rather than a gateway."""


def routes_through_instances(resource: Resource, _: Mapping[str, Any],
                             __: Context) -> Iterator[str]:
    """Routes (vpc.RouteEntry) whose next hop is an instance, an ENI or a HaVip: that node
    sees, and can change, every packet of the destination range."""
    if resource.type != t.ROUTE_ENTRY:
        return
    hop = resource.props.get("nexthopType")
    if hop in INSTANCE_HOPS:
        destination = resource.props.get("destinationCidrblock", "?")
        yield (f"traffic to {destination} goes through {hop} {resource.props.get('nexthopId')}: "
               "that node sees all of it; use a NAT gateway, or harden and watch the node")


WORLD_INGRESS_TYPES = frozenset({
    t.SECURITY_GROUP_RULE, t.SECURITY_GROUP, t.PREFIX_LIST, *t.LOAD_BALANCERS,
    *t.LISTENER_PORT_KEYS, *ACL_ENTRIES, t.SLB_ACL_ENTRY, t.ALB_ACL_ENTRY,
    t.ALB_SECURITY_GROUP_ATTACHMENT, t.ALB_SERVER_GROUP, t.NLB_SERVER_GROUP,
    t.NLB_SERVER_ATTACHMENT, t.FORWARD_ENTRY, *WHITELISTS, t.K8S_SERVICE})
PUBLIC_PORTS_SCHEMA = {"type": "array", "items": PORT_SCHEMA,
                       "description": "Ports that may face the internet (load balancer "
                                      "listeners, DNAT, LoadBalancer Services). Default "
                                      "[80, 443]."}

def anonymous_triggers(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Function Compute triggers invoke nothing from the internet without authentication: an
    HTTP trigger (triggerType http) is not `authType: anonymous` in its triggerConfig (the
    default, function, requires a signature; FC 3.0 API HTTPTriggerConfig) unless it has no
    internet URL (disableURLInternet true). Timer, OSS, SLS and MNS triggers are fired by
    the cloud only."""
    if resource.type != t.FC_TRIGGER or str(resource.props.get("triggerType", "")) != "http":
        return
    raw = resource.props.get("triggerConfig")
    if is_unknown(raw):
        return
    try:
        config = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        config = {}
    config = config if isinstance(config, Mapping) else {}
    auth = str(config.get("authType") or "function").lower()
    if auth == "anonymous" and config.get("disableURLInternet") is not True:
        yield ("an HTTP trigger that anyone on the internet may call: set triggerConfig "
               "authType function (signed requests), or disableURLInternet true")


NETWORK_RULES: tuple[Rule, ...] = (
    StackRule("no-world-ingress", "No ingress from the whole internet (judged by address space) "
              "by any path: security groups, listeners and ACLs, DNAT, whitelists, Services",
              "security", "critical",
              "Restrict cidrIp / ipv6CidrIp, whitelists and ACLs to the admin and client CIDRs; "
              "put public services behind a load balancer listening on a port listed in "
              "publicListenerPorts.",
              world_ingress, concern="network exposure", reviews=WORLD_INGRESS_TYPES,
              schema={"publicListenerPorts": PUBLIC_PORTS_SCHEMA,
                      "widestPublicPrefix": WIDEST_PREFIX_SCHEMA},
              defaults={"publicListenerPorts": [80, 443],
                        "widestPublicPrefix": DEFAULT_WIDEST_PREFIX}),
    StackRule("nas-no-world-access", "NAS access rules never admit the whole internet (judged by "
              "address space)", "security", "critical",
              "Set sourceCidrIp to the VPC or vSwitch CIDRs.", nas_world_access,
              concern="network exposure",
              reviews=frozenset({t.NAS_ACCESS_RULE, t.NAS_ACCESS_GROUP}),
              schema={"widestPublicPrefix": WIDEST_PREFIX_SCHEMA},
              defaults={"widestPublicPrefix": DEFAULT_WIDEST_PREFIX}),
    ResourceRule("no-foreign-network-peers", "The network connects only with trusted accounts "
                 "(security group peers, VPC peering, CEN)", "security", "high",
                 "Peer with your own account's networks, or list the partner account in "
                 "trustedAccounts.", foreign_peers, concern="network exposure",
                 reviews=frozenset(PEER_ACCOUNTS),
                 schema={"trustedAccounts": TRUSTED_ACCOUNTS_SCHEMA},
                 defaults={"trustedAccounts": []}),
    ResourceRule("routes-through-instances", "Routes send no traffic through an instance",
                 "security", "medium", "Route through a NAT gateway, VPN gateway or CEN; if an "
                 "appliance must forward, harden it and alarm on it.", routes_through_instances,
                 concern="network exposure", reviews=frozenset({t.ROUTE_ENTRY}),
                 enforcement="advisory",
                 note="advisory: a firewall or NAT appliance as next hop is a design choice; "
                      "the stack cannot show whether that node is hardened"),
    StackRule("no-broad-private-ingress", "Ingress from private ranges no wider than a VPC",
              "security", "medium",
              "Admit the VPC's or vSwitches' CIDRs, or a source security group, instead of "
              "10.0.0.0/8 or 172.16.0.0/12.", broad_private, concern="network exposure",
              reviews=frozenset({t.SECURITY_GROUP_RULE, t.NAS_ACCESS_RULE, *WHITELISTS}),
              enforcement="advisory",
              note="advisory: a broad private source is only as open as what is routed to the "
                   "VPC (peering, VPN, CEN), which the stack does not show",
              schema={"widestPrivatePrefix": {
                  "type": "number", "minimum": 0, "maximum": 32,
                  "description": "Private sources may admit at most as many addresses as "
                                 "one /N holds. Default 16."}},
              defaults={"widestPrivatePrefix": 16}),
    ResourceRule("fc-triggers-authenticated", "Function triggers take no anonymous calls from "
                 "the internet", "security", "high", "Set triggerConfig authType function (the "
                 "default) on HTTP triggers, or disableURLInternet true.", anonymous_triggers,
                 concern="network exposure", reviews=frozenset({t.FC_TRIGGER})),
    ResourceRule("databases-in-vpc", "Databases live in a VPC, not the classic network",
                 "security", "high", "Create the database with a vswitchId (networkType VPC).",
                 databases_in_vpc, concern="network exposure", reviews=frozenset(VPC_DATABASES)),
)
