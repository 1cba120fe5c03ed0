"""Kubernetes NetworkPolicy semantics, for tests: whether a connection passes a set of
policies, as kubernetes.io/docs/concepts/services-networking/network-policies defines it.

- A pod is isolated in a direction when some policy of its namespace selects it and lists
  that direction in policyTypes; an isolated pod takes (or sends) only what some rule of such a
  policy allows; a pod no policy selects takes and sends everything.
- A connection passes when the source's egress and the destination's ingress both allow it.
- A rule with no `from`/`to` matches every peer; with no `ports`, every port. A peer is a
  podSelector (pods of the policy's namespace), a namespaceSelector (every pod of the
  namespaces it selects), both (those pods of those namespaces) or an ipBlock (`cidr` less
  `except`). A port is a number or a container port's name, protocol TCP unless given,
  `endPort` widening it to a range.
- Selectors: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); {} selects
  everything. A namespace carries `kubernetes.io/metadata.name: <name>`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Manifest = Mapping[str, Any]


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: Mapping[str, str]
    ip: str
    named_ports: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class External:
    """An address outside the cluster's pods (a node, a client, the API server)."""

    ip: str


Endpoint = Pod | External


def selects(selector: Manifest | None, labels: Mapping[str, str]) -> bool:
    """Whether the label selector `selector` matches `labels`."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if not {"In": present and labels.get(key) in values,
                "NotIn": not present or labels.get(key) not in values,
                "Exists": present, "DoesNotExist": not present}[operator]:
            return False
    return True


def _in_block(ip: str, block: Manifest) -> bool:
    address = ipaddress.ip_address(ip)
    return address in ipaddress.ip_network(block["cidr"]) and not any(
        address in ipaddress.ip_network(cidr) for cidr in block.get("except") or [])


def _peer_matches(peer: Manifest, other: Endpoint, policy_namespace: str) -> bool:
    if "ipBlock" in peer:
        return _in_block(other.ip, peer["ipBlock"])
    if not isinstance(other, Pod):
        return False
    if "namespaceSelector" in peer:
        namespace_ok = selects(peer["namespaceSelector"],
                               {"kubernetes.io/metadata.name": other.namespace})
    else:
        namespace_ok = other.namespace == policy_namespace
    return namespace_ok and selects(peer.get("podSelector", {}), other.labels)


def _port_matches(rule_port: Manifest, port: int, protocol: str, target: Endpoint) -> bool:
    if rule_port.get("protocol", "TCP") != protocol:
        return False
    wanted = rule_port.get("port")
    if wanted is None:
        return True
    if isinstance(wanted, str):
        named = target.named_ports.get(wanted) if isinstance(target, Pod) else None
        return named == port
    return int(wanted) <= port <= int(rule_port.get("endPort", wanted))


def _allowed(pod: Pod, other: Endpoint, port: int, protocol: str, direction: str,
             policies: Sequence[Manifest], target: Endpoint) -> bool:
    """Whether `pod` lets the connection with `other` pass in `direction` (Ingress: `other`
    connects to it; Egress: it connects to `other`); `target` owns the port."""
    key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    applying = [p for p in policies if p["metadata"].get("namespace", "default") == pod.namespace
                and direction in p["spec"].get("policyTypes", ["Ingress"])
                and selects(p["spec"]["podSelector"], pod.labels)]
    if not applying:
        return True
    for policy in applying:
        for rule in policy["spec"].get(key) or []:
            peers = rule.get(peers_key)
            peer_ok = not peers or any(
                _peer_matches(peer, other, policy["metadata"].get("namespace", "default"))
                for peer in peers)
            rule_ports = rule.get("ports")
            port_ok = not rule_ports or any(_port_matches(p, port, protocol, target)
                                            for p in rule_ports)
            if peer_ok and port_ok:
                return True
    return False


def connects(source: Endpoint, target: Endpoint, port: int, policies: Sequence[Manifest],
             protocol: str = "TCP") -> bool:
    """Whether `source` reaches `target` on `port`/`protocol` through `policies`."""
    if isinstance(source, Pod) and not _allowed(source, target, port, protocol, "Egress",
                                                policies, target):
        return False
    return not isinstance(target, Pod) or _allowed(target, source, port, protocol, "Ingress",
                                                   policies, target)
