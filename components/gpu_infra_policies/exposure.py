"""Network exposure outside security groups: every other way a GPU stack lets the internet
in (load balancer listeners and their ACLs, NAT port forwarding, database and search
whitelists, registry endpoint ACLs, Kubernetes LoadBalancer Services), each judged by the
same address-space test (addresses.world_open) as security group rules."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import parse_cidr, world_open
from gpu_infra_policies.base import (
    Resource,
    as_list,
    contains_unknown,
    is_unknown,
    number,
    port_range,
)

ADMIN_PORTS = {
    22: "SSH", 23: "Telnet", 2375: "Docker API", 2376: "Docker API (TLS)", 2379: "etcd",
    2380: "etcd peers", 3000: "Grafana", 3306: "MySQL", 3389: "RDP", 4040: "Spark UI",
    5000: "MLflow", 5432: "PostgreSQL", 5601: "Kibana", 5900: "VNC", 6006: "TensorBoard",
    6379: "Redis", 6443: "Kubernetes API", 7077: "Spark master", 8265: "Ray dashboard",
    8786: "Dask scheduler", 8787: "Dask dashboard", 8888: "Jupyter", 9090: "Prometheus",
    9200: "Elasticsearch", 10001: "Ray client", 10250: "kubelet", 11211: "memcached",
    27017: "MongoDB", 50070: "HDFS NameNode UI",
}
"""Ports of admin consoles, dashboards and data services a GPU platform runs: never
reachable from the internet, not even behind a load balancer on 443."""

WHOLE_WORLD = "0.0.0.0"
"""In Alibaba Cloud whitelists (RDS, Redis, MongoDB, PolarDB) a bare 0.0.0.0 admits every
address, as 0.0.0.0/0 does (the reading Checkov CKV_ALI_9 / CKV_ALI_43 and KICS 1b4565c0
apply)."""


def whitelist_entries(value: Any) -> list[str]:
    """Entries of a whitelist input: a list of strings or a comma-separated string; a bare
    0.0.0.0 read as 0.0.0.0/0."""
    items = value.split(",") if isinstance(value, str) else [
        v for v in as_list(value) if isinstance(v, str)]
    entries = [i.strip() for i in items if i.strip() and not is_unknown(i.strip())]
    return [f"{WHOLE_WORLD}/0" if entry == WHOLE_WORLD else entry for entry in entries]


WHITELISTS: dict[str, tuple[str, ...]] = {
    t.RDS_INSTANCE: ("securityIps",),
    t.POLARDB_CLUSTER: ("securityIps",),
    t.KVSTORE_INSTANCE: ("securityIps",),
    t.MONGODB_INSTANCE: ("securityIpLists",),
    t.MONGODB_SHARDING: ("securityIpLists",),
    t.ELASTICSEARCH: ("publicWhitelists", "kibanaWhitelists"),
    t.CR_ENDPOINT_ACL: ("entry",),
}
"""Types that admit clients by a list of addresses, and those inputs (PolarDB's
dbClusterIpArrays are read as well)."""


def _whitelists(resource: Resource) -> Iterator[tuple[str, list[str]]]:
    for key in WHITELISTS.get(resource.type, ()):
        entries = whitelist_entries(resource.props.get(key))
        if entries:
            yield key, entries
    if resource.type == t.POLARDB_CLUSTER:
        for index, array in enumerate(as_list(resource.props.get("dbClusterIpArrays"))):
            if isinstance(array, Mapping):
                entries = whitelist_entries(array.get("securityIps"))
                if entries:
                    yield f"dbClusterIpArrays[{index}].securityIps", entries


def world_whitelists(resources: Sequence[Resource], widest: float
                     ) -> Iterator[tuple[Resource, str]]:
    """Database, search and registry whitelists that admit the world."""
    for resource in (r for r in resources if r.type in WHITELISTS):
        for key, entries in _whitelists(resource):
            why = world_open(entries, widest)
            if why:
                yield resource, (f"{key} admits {', '.join(entries)}, which {why}; list the "
                                 "VPC's or the clients' CIDRs")


ACL_ENTRIES = {t.SLB_ACL: ("entryLists", "entry"), t.ALB_ACL: ("aclEntries", "entry")}
"""ACL type -> (list input, key of each entry's CIDR)."""
ACL_ATTACHMENTS = {t.SLB_ACL_ENTRY: t.SLB_ACL, t.ALB_ACL_ENTRY: t.ALB_ACL}


def acl_cidrs(acl: Resource, resources: Sequence[Resource]) -> list[str]:
    """Every CIDR of an ACL: its inline entries and the entry attachments pointing at it."""
    list_key, entry_key = ACL_ENTRIES[acl.type]
    cidrs = [e.get(entry_key) for e in as_list(acl.props.get(list_key))
             if isinstance(e, Mapping)]
    for entry in (r for r in resources if ACL_ATTACHMENTS.get(r.type) == acl.type):
        if entry.refers_to(acl, entry.props.get("aclId")):
            cidrs += [entry.props.get("entry"), *(
                e.get("entry") for e in as_list(entry.props.get("entries"))
                if isinstance(e, Mapping))]
    return [c for c in cidrs if isinstance(c, str) and parse_cidr(c) is not None]


def _listener_acls(listener: Resource) -> tuple[str | None, list[Any]]:
    """(ACL mode lower-case "white" / "black" or None when off, the ACL id values)."""
    props = listener.props
    if listener.type == t.SLB_LISTENER:
        if props.get("aclStatus", "off") != "on":
            return None, []
        return str(props.get("aclType", "")).lower() or None, [
            props.get("aclId"), *as_list(props.get("aclIds"))]
    config = props.get("aclConfig")
    if listener.type == t.ALB_LISTENER and isinstance(config, Mapping):
        return str(config.get("aclType", "")).lower() or None, [
            r.get("aclId") for r in as_list(config.get("aclRelations")) if isinstance(r, Mapping)]
    return None, []


def _acls_of(listener: Resource, resources: Sequence[Resource]) -> list[Resource]:
    _, ids = _listener_acls(listener)
    return [acl for acl in resources if acl.type in ACL_ENTRIES
            and any(listener.refers_to(acl, value) for value in ids if value is not None)]


def blacklist_acls(resources: Sequence[Resource]) -> set[str]:
    """URNs of ACLs some listener uses as a blacklist (their entries deny, so a 0.0.0.0/0
    entry restricts rather than opens)."""
    return {acl.urn for listener in resources if listener.type in t.LISTENER_PORT_KEYS
            and _listener_acls(listener)[0] == "black" for acl in _acls_of(listener, resources)}


def world_acls(resources: Sequence[Resource], widest: float) -> Iterator[tuple[Resource, str]]:
    """SLB and ALB ACLs whose entries admit the world, unless every listener using them
    uses them as a blacklist."""
    black = blacklist_acls(resources)
    for acl in (r for r in resources if r.type in ACL_ENTRIES and r.urn not in black):
        cidrs = acl_cidrs(acl, resources)
        why = world_open(cidrs, widest)
        if why:
            yield acl, (f"access control list admits {', '.join(cidrs)}, which {why}; a "
                        "whitelist lists the clients' CIDRs")


def _whitelisted(listener: Resource, resources: Sequence[Resource], widest: float) -> bool:
    """True if the listener admits only the CIDRs of a whitelist ACL that is not world-open
    (or not known yet)."""
    mode, _ = _listener_acls(listener)
    acls = _acls_of(listener, resources)
    return mode == "white" and bool(acls) and all(
        world_open(acl_cidrs(acl, resources), widest) is None for acl in acls)


def balancer_of(listener: Resource, resources: Sequence[Resource]) -> Resource | None:
    """The load balancer a listener belongs to, if it is in the stack."""
    return next((b for b in resources if b.type in t.LOAD_BALANCERS
                 and listener.refers_to(b, listener.props.get("loadBalancerId"))), None)


def internet_facing(listener: Resource, resources: Sequence[Resource]) -> bool:
    """True unless the listener's load balancer is known to be intranet (addressType
    Intranet / intranet; the ALB, NLB and CLB default is Internet)."""
    balancer = balancer_of(listener, resources)
    address = balancer.props.get(t.LOAD_BALANCER_ADDRESS_KEYS[balancer.type]) \
        if balancer else None
    return not (isinstance(address, str) and address.lower() == "intranet")


def _listener_ports(listener: Resource) -> tuple[int, int] | None:
    props = listener.props
    port = number(props.get(t.LISTENER_PORT_KEYS[listener.type]))
    if listener.type == t.NLB_LISTENER and not port:
        first, last = number(props.get("startPort")), number(props.get("endPort"))
        if first is not None and last is not None:
            return int(first), int(last)
    return (int(port), int(port)) if port is not None else None


def _describe(ports: tuple[int, int]) -> str:
    first, last = ports
    return f"port {first}" if first == last else f"ports {first}-{last}"


def _backend_ports(listener: Resource, resources: Sequence[Resource]) -> list[int]:
    """Ports the listener forwards to: CLB backendPort, the ports of ALB server groups'
    servers and of NLB server group attachments."""
    props = listener.props
    ports = [number(props.get("backendPort"))] if listener.type == t.SLB_LISTENER else []
    group_ids = [props.get("serverGroupId")]
    for action in as_list(props.get("defaultActions")):
        forward = action.get("forwardGroupConfig") if isinstance(action, Mapping) else None
        if isinstance(forward, Mapping):
            group_ids += [g.get("serverGroupId") for g in as_list(
                forward.get("serverGroupTuples")) if isinstance(g, Mapping)]
    for group in (r for r in resources if r.type in (t.ALB_SERVER_GROUP, t.NLB_SERVER_GROUP)):
        if not any(listener.refers_to(group, value) for value in group_ids if value):
            continue
        ports += [number(s.get("port")) for s in as_list(group.props.get("servers"))
                  if isinstance(s, Mapping)]
        ports += [number(a.props.get("port")) for a in resources
                  if a.type == t.NLB_SERVER_ATTACHMENT
                  and a.refers_to(group, a.props.get("serverGroupId"))]
    return sorted({int(p) for p in ports if p is not None})


def balancer_groups(balancer: Resource, resources: Sequence[Resource]) -> list[Resource]:
    """The security groups of the stack a load balancer sits in: NLB securityGroupIds, ALB
    security group attachments."""
    links = [(balancer, value) for value in as_list(balancer.props.get("securityGroupIds"))]
    links += [(a, a.props.get("securityGroupId")) for a in resources
              if a.type == t.ALB_SECURITY_GROUP_ATTACHMENT
              and a.refers_to(balancer, a.props.get("loadBalancerId"))]
    return [g for g in resources if g.type == t.SECURITY_GROUP
            and any(holder.refers_to(g, value) for holder, value in links)]


def _covers(rule: Mapping[str, Any], port: int) -> bool:
    ports = port_range(rule.get("portRange"))
    protocol = str(rule.get("ipProtocol", "all")).lower()
    return ports is not None and ports[0] <= port <= ports[1] and protocol in ("tcp", "all")


def _group_restricted(listener: Resource, port: int, resources: Sequence[Resource],
                      widest: float) -> bool:
    """True if the listener's load balancer sits in security groups that drop every source
    on `port` and accept only sources that are not world-open there: an NLB's or ALB's
    security groups restrict nothing without a Deny rule (Alibaba Cloud SLB "Use security
    groups as blacklists or whitelists" for NLB and ALB: with Allow rules only, every request
    is accepted)."""
    balancer = balancer_of(listener, resources)
    groups = balancer_groups(balancer, resources) if balancer else []
    rules = [r.props for r in resources if r.type == t.SECURITY_GROUP_RULE
             and str(r.props.get("type", "")).lower() == "ingress"
             and any(r.refers_to(g, r.props.get("securityGroupId")) for g in groups)
             and _covers(r.props, port)]
    policy = {id(rule): str(rule.get("policy", "accept")).lower() for rule in rules}
    dropped = [str(rule.get("cidrIp")) for rule in rules if policy[id(rule)] == "drop"]
    accepted = [str(rule.get(key)) for rule in rules if policy[id(rule)] == "accept"
                for key in ("cidrIp", "ipv6CidrIp") if rule.get(key)]
    return world_open(dropped, widest) is not None and (
        not accepted or world_open(accepted, widest) is None)


def public_listeners(resources: Sequence[Resource], public_ports: set[float],
                     widest: float) -> Iterator[tuple[Resource, str]]:
    """Listeners of internet-facing (or unknown) load balancers, unless a whitelist ACL or
    the load balancer's own security groups (a Deny of the world below Allows of narrower
    sources) limit them: on a port not in `public_ports`, or forwarding to an admin port."""
    for listener in (r for r in resources if r.type in t.LISTENER_PORT_KEYS):
        ports = _listener_ports(listener)
        if not internet_facing(listener, resources) or _whitelisted(listener, resources,
                                                                     widest) or (
                ports is not None and ports[0] == ports[1]
                and _group_restricted(listener, ports[0], resources, widest)):
            continue
        if ports is not None and not (ports[0] == ports[1] and ports[0] in public_ports):
            yield listener, (f"load balancer listener on {_describe(ports)} is reachable "
                             "from anywhere; public ports allowed: "
                             f"{sorted(int(p) for p in public_ports)} (or add a whitelist ACL)")
        admin = [p for p in _backend_ports(listener, resources) if p in ADMIN_PORTS]
        if admin:
            names = ", ".join(f"{p} ({ADMIN_PORTS[p]})" for p in admin)
            yield listener, (f"internet-facing listener forwards to {names}: an admin or "
                             "data port reachable from anywhere; keep it private or add a "
                             "whitelist ACL")


def nat_forwards(resources: Sequence[Resource],
                 public_ports: set[float]) -> Iterator[tuple[Resource, str]]:
    """NAT gateway DNAT entries (vpc.ForwardEntry) that forward a port other than the public
    ones, or every port (externalPort any), from the internet to an instance."""
    for entry in (r for r in resources if r.type == t.FORWARD_ENTRY):
        external = entry.props.get("externalPort")
        if is_unknown(external):
            continue
        target = f"{entry.props.get('internalIp', '?')}:{entry.props.get('internalPort', '?')}"
        if str(external).lower() == "any":
            yield entry, (f"NAT gateway forwards every port from the internet to {target}; "
                          "forward one public port, or use a load balancer")
            continue
        port = number(str(external).partition("/")[0])
        if port is not None and port not in public_ports:
            yield entry, (f"NAT gateway forwards port {external} from the internet to "
                          f"{target}; public ports allowed: "
                          f"{sorted(int(p) for p in public_ports)}")


ADDRESS_TYPE_ANNOTATION = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type"
ACL_STATUS_ANNOTATION = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-acl-status"
ACL_TYPE_ANNOTATION = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-acl-type"


def kubernetes_services(resources: Sequence[Resource], public_ports: set[float],
                        widest: float) -> Iterator[tuple[Resource, str]]:
    """Kubernetes Services of type LoadBalancer that ACK's cloud controller puts on the
    internet (address type internet: the default) without a source restriction
    (loadBalancerSourceRanges not world-open, or a whitelist ACL annotation), on a port not
    in `public_ports`."""
    for service in (r for r in resources if r.type == t.K8S_SERVICE):
        spec = service.props.get("spec")
        metadata = service.props.get("metadata")
        if not isinstance(spec, Mapping) or spec.get("type") != "LoadBalancer":
            continue
        annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
        annotations = annotations if isinstance(annotations, Mapping) else {}
        if str(annotations.get(ADDRESS_TYPE_ANNOTATION, "internet")).lower() == "intranet" \
                or contains_unknown(annotations):
            continue
        if annotations.get(ACL_STATUS_ANNOTATION) == "on" and \
                str(annotations.get(ACL_TYPE_ANNOTATION, "")).lower() == "white":
            continue
        ranges = [r for r in as_list(spec.get("loadBalancerSourceRanges")) if isinstance(r, str)]
        if ranges and world_open(ranges, widest) is None:
            continue
        ports = [number(p.get("port")) for p in as_list(spec.get("ports"))
                 if isinstance(p, Mapping)]
        exposed = sorted({int(p) for p in ports if p is not None and p not in public_ports})
        if exposed:
            yield service, (f"LoadBalancer Service puts port(s) {exposed} on the internet for "
                            "anyone; annotate it intranet, set loadBalancerSourceRanges, or "
                            f"serve only on {sorted(int(p) for p in public_ports)}")
