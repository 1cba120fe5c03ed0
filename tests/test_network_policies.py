"""The shipped ACK stacks enforce NetworkPolicy (Terway with its NetworkPolicy config on) and
deny every pod's traffic in the workload namespaces but what the workloads need: DNS, the
training operator's webhook and API calls, the training pods among themselves and the model
server's port from `security.client_cidrs`. The policies are read from the stacks' plans and
judged with Kubernetes' NetworkPolicy semantics (tests/network_policy_model.py)."""

from __future__ import annotations

import json

import pytest
import yaml

from gpu_infra_facts import jobs
from gpu_infra_facts import types as t
from gpu_infra_policies.base import Context, Resource
from gpu_infra_policies.kubernetes import network_policy_cni

from .kubernetes_objects import manifest
from .network_policy_model import External, Pod, connects, selects
from .shipped import shipped_plan

KUBE_DNS = Pod("kube-system", {"k8s-app": "kube-dns"}, "10.40.200.10")
INTERNET = External("47.95.1.1")
OTHER_POD = Pod("default", {"app": "anything"}, "10.40.201.7")


def policies(stack: str) -> list[dict]:
    plan = shipped_plan(stack)
    return [manifest(r.type, r.inputs) for r in plan.by_type(t.K8S_NETWORK_POLICY)]


def training_pods() -> list[Pod]:
    """Two pods of the shipped training job as the operator makes them: the template's labels
    and the job-name label."""
    (job,) = [d for d in yaml.safe_load_all(shipped_plan("training-ack").outputs["training_job"])
              if d["kind"] == "PyTorchJob"]
    pods = []
    for index, spec in enumerate(job["spec"]["pytorchReplicaSpecs"].values()):
        labels = {**spec["template"]["metadata"]["labels"],
                  jobs.JOB_NAME_LABEL: job["metadata"]["name"]}
        pods.append(Pod(job["metadata"]["namespace"], labels, f"10.40.130.{index + 5}"))
    return pods * 2 if len(pods) == 1 else pods


def operator_pod() -> Pod:
    plan = shipped_plan("training-ack")
    (deployment,) = [r for r in plan.by_type(t.K8S_DEPLOYMENT)
                     if r.inputs["metadata"]["namespace"] == jobs.OPERATOR_NAMESPACE]
    labels = deployment.inputs["spec"]["template"]["metadata"]["labels"]
    return Pod(jobs.OPERATOR_NAMESPACE, labels, "10.40.131.9")


def serving_pod() -> Pod:
    (deployment,) = shipped_plan("inference-ack").by_type(t.K8S_DEPLOYMENT)
    labels = deployment.inputs["spec"]["template"]["metadata"]["labels"]
    return Pod(deployment.inputs["metadata"]["namespace"], labels, "10.50.130.4",
               {"http": 8000})


@pytest.mark.parametrize("stack", ["training-ack", "inference-ack"])
def test_terway_enforces_network_policy(stack):
    plan = shipped_plan(stack)
    cluster = plan.one(t.MANAGED_KUBERNETES)
    addon_configs = [json.loads(a["config"]) for a in cluster.inputs["addons"]
                     if a["name"] == "terway-eniip"]
    addon_configs += [json.loads(r.inputs["config"]) for r in plan.by_type(t.KUBERNETES_ADDON)
                      if r.inputs["name"] == "terway-eniip"]
    assert len(addon_configs) == 2
    assert all(config["NetworkPolicy"] == "true" for config in addon_configs)
    for resource in [cluster, *plan.by_type(t.KUBERNETES_ADDON)]:
        found = Resource(resource.type, resource.inputs)
        assert list(network_policy_cni(found, {}, Context())) == []


def test_the_cni_rule_catches_network_policy_turned_off_in_every_spelling():
    for config in ('{"NetworkPolicy": "false"}', '{"NetworkPolicy": false}',
                   {"NetworkPolicy": "False"}):
        addon = Resource(t.KUBERNETES_ADDON, {"name": "terway-eniip", "config": config})
        assert len(list(network_policy_cni(addon, {}, Context()))) == 1
    for config in ('{"NetworkPolicy": "true"}', None, "", "{not json"):
        addon = Resource(t.KUBERNETES_ADDON, {"name": "terway-eniip", "config": config})
        assert list(network_policy_cni(addon, {}, Context())) == []
    other = Resource(t.KUBERNETES_ADDON, {"name": "csi-plugin",
                                          "config": '{"NetworkPolicy": "false"}'})
    assert list(network_policy_cni(other, {}, Context())) == []


@pytest.mark.parametrize("stack,namespaces", [("training-ack", {"gpu-jobs", "kubeflow"}),
                                              ("inference-ack", {"gpu-jobs"})])
def test_every_workload_namespace_denies_by_default(stack, namespaces):
    found = policies(stack)
    denying = {p["metadata"]["namespace"] for p in found
               if p["spec"]["podSelector"] == {} and p["metadata"]["name"] == "default-deny"
               and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"}
               and not p["spec"]["ingress"] and not p["spec"]["egress"]}
    assert denying == namespaces
    stranger = Pod("gpu-jobs", {"app": "stranger"}, "10.40.140.1")
    for namespace in namespaces:
        pod = Pod(namespace, {"app": "stranger"}, "10.40.140.2")
        assert not connects(OTHER_POD, pod, 8080, found)
        assert not connects(pod, INTERNET, 443, found)
        assert not connects(pod, stranger, 8080, found)
        assert connects(pod, KUBE_DNS, 53, found, "UDP")
        assert connects(pod, KUBE_DNS, 53, found, "TCP")
        assert not connects(pod, KUBE_DNS, 8080, found)
        impostor = Pod("default", dict(KUBE_DNS.labels), "10.40.201.8")
        assert not connects(pod, impostor, 53, found, "UDP")


def test_training_pods_reach_each_other_on_any_port_and_nothing_else():
    found = policies("training-ack")
    first, second = training_pods()[:2]
    for port in (jobs.RDZV_PORT, 23456, 45123):
        assert connects(first, second, port, found)
        assert connects(second, first, port, found)
    assert not connects(OTHER_POD, first, jobs.RDZV_PORT, found)
    assert not connects(first, OTHER_POD, 80, found)
    assert not connects(first, INTERNET, 443, found)
    assert not connects(first, External("10.40.0.1"), 6443, found)
    untrained = Pod("gpu-jobs", {"app.kubernetes.io/name": "notebook"}, "10.40.150.1")
    assert not connects(untrained, first, jobs.RDZV_PORT, found)


def test_the_operator_takes_admission_calls_and_reaches_only_the_api_server():
    found = policies("training-ack")
    operator = operator_pod()
    api_server = External("10.40.0.20")
    assert connects(INTERNET, operator, jobs.OPERATOR_WEBHOOK_PORT, found)
    assert not connects(INTERNET, operator, 8080, found)
    assert connects(External("10.40.44.9"), operator, jobs.OPERATOR_PROBE_PORT, found)
    assert not connects(INTERNET, operator, jobs.OPERATOR_PROBE_PORT, found)
    assert connects(operator, api_server, 6443, found)
    assert not connects(operator, INTERNET, 6443, found)
    assert not connects(operator, api_server, 22, found)
    assert not connects(operator, training_pods()[0], jobs.RDZV_PORT, found)
    assert connects(operator, KUBE_DNS, 53, found, "UDP")


def test_the_model_server_takes_its_port_from_the_clients_and_the_nodes_only():
    plan = shipped_plan("inference-ack")
    found = policies("inference-ack")
    server = serving_pod()
    clients = [str(c) for c in plan.cluster.security.client_cidrs]
    assert connects(External("172.16.3.4"), server, 8000, found)
    assert connects(External("10.50.33.7"), server, 8000, found)  # a node: kubelet, NLB
    assert not connects(External("172.17.0.1"), server, 8000, found)
    assert not connects(INTERNET, server, 8000, found)
    assert not connects(External("172.16.3.4"), server, 22, found)
    assert not connects(OTHER_POD, server, 8000, found)
    assert not connects(server, INTERNET, 443, found)
    (service,) = plan.by_type(t.K8S_SERVICE)
    assert service.inputs["spec"]["loadBalancerSourceRanges"] == clients


def test_the_model_agrees_with_kubernetes_on_isolation():
    """Sanity of the judge itself: an unselected pod takes everything; a policy selecting
    it for ingress only leaves its egress open; selectors match as the API defines."""
    pod = Pod("a", {"role": "x"}, "10.0.0.1")
    assert connects(INTERNET, pod, 1, [])
    ingress_only = {"metadata": {"namespace": "a"},
                    "spec": {"podSelector": {"matchLabels": {"role": "x"}},
                             "policyTypes": ["Ingress"], "ingress": []}}
    assert not connects(INTERNET, pod, 1, [ingress_only])
    assert connects(pod, INTERNET, 1, [ingress_only])
    assert selects({"matchExpressions": [{"key": "role", "operator": "NotIn",
                                          "values": ["y"]}]}, {"role": "x"})
    assert not selects({"matchExpressions": [{"key": "role", "operator": "DoesNotExist"}]},
                       {"role": "x"})
