"""Kubernetes NetworkPolicies for the namespaces gpu-infra's workloads run in: each namespace
denies every ingress and egress of its pods (`default-deny`) except DNS to the cluster's
CoreDNS (`allow-dns`); then each workload opens what it needs and nothing more:

- training (`training-peers`): the pods of a PyTorchJob (every pod the operator labels with
  the job's name) reach each other on any port: torchrun's c10d rendezvous, the master port
  and NCCL's sockets, whose ports are chosen at run time;
- the training operator (`training-operator`): its webhook port from the API server (the
  managed control plane's address is not in the stack, so from any source, on that port
  only), its probe port from the nodes, and egress to the API server (TCP 6443, ACK's API
  port) in the stack's VPC;
- the model server (`serving-clients`): its port from `security.client_cidrs` (the NLB keeps
  the client's address) and from the nodes' vSwitches (kubelet probes and the NLB's own
  addresses, which ACK takes from the vSwitches of `zone-maps`).

Terway enforces them where its `NetworkPolicy` config is on (gpu_infra_facts.ack). Policies
add up: a job that needs more (a dataset download from the internet, a metrics scraper)
gets its own NetworkPolicy beside these. UNCONFIRMED: that the managed API server's intranet
endpoint lies in the cluster's VPC (the ACK console shows it as an address of the cluster's
vSwitch) and that kubelet probes pass Terway's policies as node traffic (they are allowed
from the node vSwitches either way).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from gpu_infra_facts import jobs

Manifest = dict[str, Any]

DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
"""CoreDNS pods (ACK's `coredns` Deployment keeps the upstream kube-dns label)."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Label the API server puts on every namespace: its name (Kubernetes 1.22+)."""
API_SERVER_PORT = 6443


def network_policy(name: str, namespace: str, pods: Manifest, *,
                   ingress: Sequence[Manifest] | None = None,
                   egress: Sequence[Manifest] | None = None) -> Manifest:
    """A NetworkPolicy selecting `pods` (a label selector; {} is every pod): the directions
    given (a list, possibly empty: deny all of it) become its policyTypes."""
    spec: Manifest = {"podSelector": pods, "policyTypes": []}
    for direction, rules in (("Ingress", ingress), ("Egress", egress)):
        if rules is not None:
            spec["policyTypes"].append(direction)
            spec[direction.lower()] = list(rules)
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "gpu-infra"}},
            "spec": spec}


def ports(protocol: str, *numbers: int) -> list[Manifest]:
    """The `ports` of a rule: `numbers` over `protocol`."""
    return [{"protocol": protocol, "port": number} for number in numbers]


def cidr_peers(cidrs: Sequence[pulumi.Input[str]]) -> list[Manifest]:
    """One ipBlock peer per CIDR."""
    return [{"ipBlock": {"cidr": cidr}} for cidr in cidrs]


def namespace_baseline(namespace: str) -> list[Manifest]:
    """`default-deny` (every pod, both directions) and `allow-dns` (egress to CoreDNS on
    port 53, UDP and TCP) for `namespace`."""
    dns = {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: DNS_NAMESPACE}},
           "podSelector": {"matchLabels": dict(DNS_POD_LABELS)}}
    return [network_policy("default-deny", namespace, {}, ingress=[], egress=[]),
            network_policy("allow-dns", namespace, {}, egress=[
                {"to": [dns], "ports": ports("UDP", 53) + ports("TCP", 53)}])]


def training_peers(namespace: str) -> Manifest:
    """`training-peers`: the pods of training jobs (JOB_NAME_LABEL present) reach each other
    on every port and protocol."""
    pods = {"matchExpressions": [{"key": jobs.JOB_NAME_LABEL, "operator": "Exists"}]}
    return network_policy("training-peers", namespace, pods,
                          ingress=[{"from": [{"podSelector": pods}]}],
                          egress=[{"to": [{"podSelector": pods}]}])


def operator_policy(namespace: str, selector: Mapping[str, str],
                    node_cidrs: Sequence[pulumi.Input[str]],
                    vpc_cidr: pulumi.Input[str]) -> Manifest:
    """`training-operator`: the operator pods (`selector`) take admission calls on the
    webhook port from anywhere and probes from `node_cidrs`, and reach the API server in
    `vpc_cidr`."""
    return network_policy(
        "training-operator", namespace, {"matchLabels": dict(selector)},
        ingress=[{"ports": ports("TCP", jobs.OPERATOR_WEBHOOK_PORT)},
                 {"from": cidr_peers(node_cidrs), "ports": ports("TCP", jobs.OPERATOR_PROBE_PORT)}],
        egress=[{"to": cidr_peers([vpc_cidr]), "ports": ports("TCP", API_SERVER_PORT)}])


def serving_policy(namespace: str, selector: Mapping[str, str], port: int,
                   client_cidrs: Sequence[str],
                   node_cidrs: Sequence[pulumi.Input[str]]) -> Manifest:
    """`serving-clients`: the model server pods (`selector`) take TCP `port` from
    `client_cidrs` and `node_cidrs`."""
    return network_policy(
        "serving-clients", namespace, {"matchLabels": dict(selector)},
        ingress=[{"from": cidr_peers([*client_cidrs, *node_cidrs]),
                  "ports": ports("TCP", port)}])


__all__ = ["namespace_baseline", "network_policy", "operator_policy", "serving_policy",
           "training_peers"]
