"""The pack judges by concern wherever the concern appears (issue 40): one pod-security
judgement over every pod any object describes, one binding judgement over who a role binding
grants to, one secret-placement judgement over every place a value is handed out in clear;
a resource without tags takes the stack's environment; every type a stack can create is
reviewed. Cases in several spellings, as a reviewer writes them."""

from __future__ import annotations

import json

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Context, Resource
from gpu_infra_policies.coverage import type_coverage
from gpu_infra_policies.rules import JUDGING_RULES, evaluate

from .golden import GOLDEN_DIR, golden_record
from .rule_helpers import PROD, TAGS, messages, with_profile

PYTORCH_JOB = "kubernetes:kubeflow.org/v1:PyTorchJob"
RAY_CLUSTER = "kubernetes:ray.io/v1:RayCluster"
JOB_SET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
WORKFLOW = "kubernetes:argoproj.io/v1alpha1:Workflow"
KSERVE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
UNLISTED_KIND = "kubernetes:example.com/v1:GpuBatch"


def k8s(token: str, spec: dict, namespace: str | None = "ml") -> Resource:
    metadata = {"name": "x", **({"namespace": namespace} if namespace is not None else {})}
    return Resource(token, {"metadata": metadata, "spec": spec}, "x")


def template(pod: dict) -> dict:
    return {"template": {"metadata": {"labels": {"a": "b"}}, "spec": pod}}


def container(**fields) -> dict:
    return {"name": "c", "image": "registry.example.com/ml/train:1", **fields}


def privileged_pod() -> dict:
    return {"containers": [container(securityContext={"privileged": "true"})]}


# --- one pod-security judgement ------------------------------------------------------------

POD_HOLDERS_UNSAFE = [
    ("Pod, privileged as a string", k8s(t.K8S_POD, privileged_pod()), "privileged"),
    ("Pod, snake_case host network", k8s(t.K8S_POD, {
        "host_network": True, "containers": [container()]}), "hostNetwork true"),
    ("Deployment, one capability as a lower-case string", k8s(t.K8S_DEPLOYMENT, template({
        "containers": [container(securityContext={"capabilities": {"add": "sys_admin"}})]})),
     "adds SYS_ADMIN"),
    ("StatefulSet, CAP_ prefix", k8s(t.K8S_STATEFUL_SET, template({
        "containers": [container(securityContext={"capabilities": {"add": ["CAP_NET_ADMIN"]}})]
    })), "adds NET_ADMIN"),
    ("CronJob, host port as a string", k8s(t.K8S_CRON_JOB, {"jobTemplate": {"spec": template({
        "containers": [container(ports=[{"containerPort": 22, "hostPort": "2222"}])]})}}),
     "hostPort 2222"),
    ("PyTorchJob worker replica", k8s(PYTORCH_JOB, {"pytorchReplicaSpecs": {
        "Worker": {"replicas": 4, **template(privileged_pod())}}}),
     "spec.pytorchReplicaSpecs.Worker.template.spec"),
    ("RayCluster worker group", k8s(RAY_CLUSTER, {
        "headGroupSpec": template({"containers": [container()]}),
        "workerGroupSpecs": [{"groupName": "gpu", **template({
            "hostPID": True, "containers": [container()]})}]}),
     "spec.workerGroupSpecs[0].template.spec: hostPID true"),
    ("JobSet nested job template", k8s(JOB_SET, {"replicatedJobs": [{"name": "w", "template": {
        "spec": template({"hostIPC": True, "containers": [container()]})}}]}),
     "hostIPC true"),
    ("an operator kind the pack does not list", k8s(UNLISTED_KIND, template({
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [container()]})), "hostPath volume /"),
    ("Argo template's lone container", k8s(WORKFLOW, {"templates": [{"name": "t", "container": {
        "image": "alpine", "securityContext": {"privileged": True}}}]}),
     "spec.templates[0].container privileged"),
    ("KServe predictor, Unconfined seccomp", k8s(KSERVE, {"predictor": {"containers": [
        container(securityContext={"seccompProfile": {"type": "Unconfined"}})]}}),
     "seccompProfile Unconfined"),
    ("Job, unsafe sysctl", k8s(t.K8S_JOB, template({
        "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]},
        "containers": [container()]})), "sysctls kernel.msgmax"),
    ("PodTemplate, escalation", Resource(t.K8S_POD_TEMPLATE, {
        "metadata": {"name": "p"}, **template({"containers": [
            container(securityContext={"allowPrivilegeEscalation": "True"})]})}, "p"),
     "allowPrivilegeEscalation true"),
    ("Pod without a namespace is in default", k8s(t.K8S_POD, privileged_pod(), None),
     "privileged"),
    ("Pod with an empty namespace is in default", k8s(t.K8S_POD, privileged_pod(), ""),
     "privileged"),
    ("ECI container group, privileged", Resource(t.ECI_CONTAINER_GROUP, {"containers": [{
        "name": "c", "image": "nginx", "securityContexts": [{"privileged": True}]}]}, "eci"),
     "containers[0] privileged"),
    ("ECI container group, init container capability", Resource(t.ECI_CONTAINER_GROUP, {
        "containers": [{"name": "c", "image": "nginx"}],
        "initContainers": [{"name": "i", "image": "busybox", "securityContexts": [
            {"capabilities": [{"adds": ["SYS_PTRACE"]}]}]}]}, "eci"),
     "initContainers[0] adds SYS_PTRACE"),
    ("ECI container group, one context written as an object", Resource(
        t.ECI_CONTAINER_GROUP, {"containers": [{"name": "c", "image": "nginx",
                                                "securityContexts": {"capabilities": {
                                                    "adds": "NET_RAW"}}}]}, "eci"),
     "adds NET_RAW"),
    ("ESS ECI configuration, flat capability spelling", Resource(
        t.ESS_ECI_SCALING_CONFIGURATION, {"containers": [{
            "name": "c", "image": "nginx", "securityContextCapabilityAdds": ["NET_ADMIN"]}]},
        "ess-eci"), "adds NET_ADMIN"),
    ("ESS ECI configuration, host path volume", Resource(
        t.ESS_ECI_SCALING_CONFIGURATION, {"volumes": [{
            "name": "host", "type": "HostPathVolume", "hostPathVolumePath": "/var/run"}],
            "containers": [{"name": "c", "image": "nginx"}]}, "ess-eci"),
     "hostPath volume /var/run"),
]


@pytest.mark.parametrize("case, resource, expected", POD_HOLDERS_UNSAFE,
                         ids=[case for case, _, _ in POD_HOLDERS_UNSAFE])
def test_pod_security_judges_every_pod_wherever_it_is(case, resource, expected):
    found = messages("k8s-pod-security", resource)
    assert len(found) == 1 and expected in found[0], found
    listed = "k8s-pod-security" in type_coverage(resource.type, JUDGING_RULES).rules
    assert listed is (resource.type != UNLISTED_KIND)


POD_HOLDERS_SAFE = [
    ("GPU pod with IPC_LOCK (allowed for RDMA)", k8s(t.K8S_POD, {"containers": [container(
        securityContext={"capabilities": {"add": ["IPC_LOCK"]}},
        resources={"limits": {"nvidia.com/gpu": 8}})]})),
    ("a baseline capability", k8s(t.K8S_DEPLOYMENT, template({"containers": [container(
        securityContext={"capabilities": {"add": ["net_bind_service"], "drop": ["ALL"]}})]}))),
    ("flags false in both spellings", k8s(t.K8S_POD, {
        "hostNetwork": False, "host_pid": "false", "containers": [container(
            securityContext={"privileged": False, "allowPrivilegeEscalation": "false"})]})),
    ("ports without host ports, or host port 0", k8s(t.K8S_POD, {"containers": [container(
        ports=[{"containerPort": 8000}, {"containerPort": 9000, "hostPort": 0}])]})),
    ("empty capability list and RuntimeDefault seccomp", k8s(t.K8S_JOB, template({
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"},
                            "sysctls": [{"name": "net.ipv4.ip_local_port_range",
                                         "value": "1024 65000"}]},
        "containers": [container(securityContext={"capabilities": {"add": []}})]}))),
    ("a PyTorchJob of the shipped kind", k8s(PYTORCH_JOB, {"pytorchReplicaSpecs": {
        "Worker": {"replicas": 2, **template({"containers": [container(
            securityContext={"capabilities": {"add": ["IPC_LOCK"]}})],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]})}}})),
    ("node agent in the exempt namespace", k8s(t.K8S_DAEMON_SET, template({
        "hostNetwork": True, "containers": [container()]}), "kube-system")),
    ("a CRD's schema names containers but holds no pod", Resource(t.K8S_CRD, {
        "metadata": {"name": "pytorchjobs.kubeflow.org"}, "spec": {"versions": [{"schema": {
            "openAPIV3Schema": {"properties": {"template": {"properties": {"spec": {
                "properties": {"containers": {"type": "array"},
                               "hostNetwork": {"type": "boolean"}}}}}}}}}]}}, "crd")),
    ("ECI group with no security context", Resource(t.ECI_CONTAINER_GROUP, {"containers": [{
        "name": "c", "image": "nginx", "securityContexts": []}]}, "eci")),
    ("ESS ECI configuration with an empty-dir volume", Resource(
        t.ESS_ECI_SCALING_CONFIGURATION, {"volumes": [{"name": "tmp", "type": "EmptyDirVolume"}],
                                          "containers": [{"name": "c", "image": "nginx",
                                                          "securityContextCapabilityAdds": []}]},
        "ess-eci")),
]


@pytest.mark.parametrize("case, resource", POD_HOLDERS_SAFE,
                         ids=[case for case, _ in POD_HOLDERS_SAFE])
def test_pod_security_passes_safe_pods(case, resource):
    assert messages("k8s-pod-security", resource) == []


def test_custom_kinds_and_eci_are_listed_as_reviewed_for_pods():
    for token in (PYTORCH_JOB, RAY_CLUSTER, JOB_SET, t.ECI_CONTAINER_GROUP,
                  t.ESS_ECI_SCALING_CONFIGURATION, t.K8S_POD_TEMPLATE):
        rules = type_coverage(token, JUDGING_RULES).rules
        assert {"k8s-pod-security", "no-plaintext-secrets", "no-plain-http-downloads"} <= set(
            rules), token


def test_the_exempt_namespaces_are_configurable_and_eci_has_none():
    daemon = k8s(t.K8S_DAEMON_SET, template({"hostNetwork": True, "containers": [container()]}),
                 "gpu-agents")
    assert messages("k8s-pod-security", daemon)
    assert messages("k8s-pod-security", daemon, exemptNamespaces=["gpu-agents"]) == []
    eci = next(resource for case, resource, _ in POD_HOLDERS_UNSAFE if "ECI" in case)
    assert messages("k8s-pod-security", eci, exemptNamespaces=["default", "kube-system"])


# --- one binding judgement ------------------------------------------------------------------

def binding(token: str, role: str, *subjects: dict) -> Resource:
    return Resource(token, {"metadata": {"name": "b", "namespace": "ml"},
                            "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                        "kind": "ClusterRole", "name": role},
                            "subjects": list(subjects)}, "b")


CRB, RB = t.K8S_CLUSTER_ROLE_BINDING, t.K8S_ROLE_BINDING
GROUP, USER, SA = "Group", "User", "ServiceAccount"

BROAD_BINDINGS = [
    (CRB, "view", {"kind": GROUP, "name": "system:authenticated"}, "every identity"),
    (RB, "edit", {"kind": "group", "name": "system:serviceaccounts:ml"}, "every identity"),
    (CRB, "view", {"kind": GROUP, "name": "system:serviceaccounts"}, "every identity"),
    (RB, "view", {"kind": USER, "name": "system:anonymous"}, "anyone"),
    (CRB, "system:basic-user", {"kind": GROUP, "name": "system:unauthenticated"}, "anyone"),
    (RB, "view", {"kind": SA, "name": "default", "namespace": "ml"}, "default service account"),
    (RB, "gpu-job-runner", {"kind": USER, "name": "system:serviceaccount:ml:default"},
     "default service account"),
    (CRB, "cluster-admin", {"kind": USER, "name": "system:serviceaccount:ml:trainer"},
     "binds cluster-admin to serviceaccount trainer in ml"),
    (CRB, "cluster-admin", {"kind": SA, "name": "trainer", "namespace": "ml"},
     "binds cluster-admin"),
    (RB, "admin", {"kind": USER, "name": "alice"}, "binds admin to user alice"),
    (CRB, "edit", {"kind": SA, "name": "pipeline", "namespace": "ci"}, "binds edit"),
]


@pytest.mark.parametrize("token, role, subject, expected", BROAD_BINDINGS)
def test_bindings_to_broad_or_default_subjects_and_admin_grants(token, role, subject,
                                                                   expected):
    found = messages("k8s-rbac-least-privilege", binding(token, role, subject))
    assert len(found) == 1 and expected in found[0], found


SAFE_BINDINGS = [
    (CRB, "system:basic-user", {"kind": GROUP, "name": "system:authenticated"}),
    (CRB, "system:public-info-viewer", {"kind": GROUP, "name": "system:unauthenticated"}),
    (CRB, "cluster-admin", {"kind": SA, "name": "addon-manager", "namespace": "kube-system"}),
    (CRB, "cluster-admin", {"kind": GROUP, "name": "system:masters"}),
    (RB, "edit", {"kind": SA, "name": "trainer", "namespace": "ml"}),
    (CRB, "training-operator", {"kind": SA, "name": "training-operator",
                                "namespace": "kubeflow"}),
    (RB, "view", {"kind": USER, "name": "alice"}),
]


@pytest.mark.parametrize("token, role, subject", SAFE_BINDINGS)
def test_bindings_to_named_subjects_pass(token, role, subject):
    assert messages("k8s-rbac-least-privilege", binding(token, role, subject)) == []


def test_a_binding_reports_each_broad_subject():
    found = messages("k8s-rbac-least-privilege", binding(
        CRB, "view", {"kind": GROUP, "name": "system:authenticated"},
        {"kind": SA, "name": "reader", "namespace": "ml"},
        {"kind": USER, "name": "system:anonymous"}))
    assert len(found) == 2


# --- one secret-placement judgement ---------------------------------------------------------

AK = "LTAI5tAbCdEfGhIjKlMnOpQr"

SECRETS_IN_PLACE = [
    ("plain OOS parameter holding a key", Resource(t.OOS_PARAMETER, {
        "parameterName": "ci-key", "type": "String", "value": AK}, "p"), "value holds"),
    ("plain OOS parameter named for a password", Resource(t.OOS_PARAMETER, {
        "parameter_name": "db", "parameterName": "db_password", "value": "Xk9rT2mQ7vLp4w"},
        "p"), "a password or token"),
    ("ECI registry password", Resource(t.ECI_CONTAINER_GROUP, {
        "containers": [{"name": "c", "image": "nginx"}], "imageRegistryCredentials": [
            {"server": "registry.example.com", "userName": "bot",
             "password": "R3gistryPassw0rd"}]}, "eci"), "imageRegistryCredentials[0].password"),
    ("ESS ECI registry password", Resource(t.ESS_ECI_SCALING_CONFIGURATION, {
        "containers": [{"name": "c", "image": "nginx"}], "imageRegistryCredentials": [
            {"server": "registry.example.com", "username": "bot",
             "password": "R3gistryPassw0rd"}]}, "ess-eci"), "password"),
    ("API key on a PyTorchJob's command line", k8s(PYTORCH_JOB, {"pytorchReplicaSpecs": {
        "Worker": template({"containers": [container(
            command=["python", "train.py"], args=["--wandb-api-key", "a1b2c3d4e5f6a7b8"])]})}}),
     "a credential on a command line"),
    ("token in a RayCluster's environment", k8s(RAY_CLUSTER, {"headGroupSpec": template({
        "containers": [container(env=[{"name": "HF_TOKEN",
                                       "value": "hf_abcdefghijklmnopqrstuvwxyz0123456789"}])]
    })}), "a Hugging Face token"),
    ("password inside an image reference", k8s(t.K8S_DEPLOYMENT, template({"containers": [
        container(image="bot:S3cretPw@registry.example.com/ml/serve:1")]})),
     "a password in an image reference"),
    ("credentials in a download URL", k8s(t.K8S_CRON_JOB, {"jobTemplate": {"spec": template({
        "containers": [container(command=["sh", "-c",
                                          "curl -O https://bot:tok3nvalue@data.example.com/x"])]
    })}}), "credentials in a URL"),
    ("ECI command line", Resource(t.ECI_CONTAINER_GROUP, {"containers": [{
        "name": "c", "image": "vllm", "commands": ["vllm", "serve"],
        "args": ["--api-key", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"]}]}, "eci"),
     "OpenAI-style API key"),
    ("add-on config with a key", Resource(t.KUBERNETES_ADDON, {
        "name": "logtail-ds", "config": json.dumps({"AccessKeyId": AK})}, "addon"),
     "config holds an AccessKey id"),
    ("cluster add-on config with a key", Resource(t.MANAGED_KUBERNETES, {"addons": [
        {"name": "logtail-ds", "config": json.dumps({"AccessKeyId": AK})}]}, "k8s"),
     "addons[0].config holds"),
]


@pytest.mark.parametrize("case, resource, expected", SECRETS_IN_PLACE,
                         ids=[case for case, _, _ in SECRETS_IN_PLACE])
def test_secrets_are_found_wherever_they_are_handed_out(case, resource, expected):
    found = messages("no-plaintext-secrets", resource)
    assert found and any(expected in message for message in found), found


NO_SECRETS = [
    ("plain OOS parameter with a plain value", Resource(t.OOS_PARAMETER, {
        "parameterName": "gpu-type", "value": "ecs.gn7i-c8g1.2xlarge"}, "p")),
    ("registry password a Pulumi secret or unknown", Resource(t.ECI_CONTAINER_GROUP, {
        "containers": [{"name": "c", "image": "nginx"}], "imageRegistryCredentials": [
            {"server": "r", "userName": "bot", "password": "[secret]"},
            {"server": "r", "userName": "bot", "password": UNKNOWN}]}, "eci")),
    ("flags that name no credential or take a reference", k8s(t.K8S_DEPLOYMENT, template({
        "containers": [container(command=["vllm", "serve", "/m", "--max-tokens", "4096",
                                          "--tokenizer", "meta-llama/Llama-3-8B",
                                          "--api-key", "$API_KEY", "--token-file",
                                          "/var/run/secrets/token"],
                                 env=[{"name": "API_KEY", "valueFrom": {"secretKeyRef": {
                                     "name": "serve", "key": "api-key"}}}])]}))),
    ("digest-pinned image and a URL without credentials", k8s(t.K8S_JOB, template({
        "containers": [container(image="registry.example.com/ml/img@sha256:" + "a" * 64,
                                 command=["curl", "-O", "https://data.example.com:8443/x"])]
    }))),
]


@pytest.mark.parametrize("case, resource", NO_SECRETS, ids=[case for case, _ in NO_SECRETS])
def test_plain_configuration_passes(case, resource):
    assert messages("no-plaintext-secrets", resource) == []


# --- a load balancer restricted by its own security groups -----------------------------------

def balancer_stack(kind: str, *rules: dict) -> list[Resource]:
    """An internet-facing NLB or ALB with a listener on 8000 and security group `sg` holding
    `rules`."""
    group = Resource(t.SECURITY_GROUP, {"vpcId": "vpc-1"}, "sg", "urn:sg", id="sg-1")
    found = [group] + [Resource(t.SECURITY_GROUP_RULE, {
        "type": "ingress", "securityGroupId": "sg-1", **rule}, f"rule-{i}", f"urn:rule-{i}")
        for i, rule in enumerate(rules)]
    if kind == "nlb":
        balancer = Resource(t.NLB_LOAD_BALANCER, {"addressType": "Internet",
                                                  "securityGroupIds": ["sg-1"]},
                            "lb", "urn:lb", id="nlb-1")
        listener = Resource(t.NLB_LISTENER, {"loadBalancerId": "nlb-1",
                                             "listenerProtocol": "TCPSSL",
                                             "listenerPort": "8000"}, "l", "urn:l")
        return [*found, balancer, listener]
    balancer = Resource(t.ALB_LOAD_BALANCER, {"addressType": "Internet"}, "lb", "urn:lb",
                        id="alb-1")
    attachment = Resource(t.ALB_SECURITY_GROUP_ATTACHMENT, {
        "loadBalancerId": "alb-1", "securityGroupId": "sg-1"}, "att", "urn:att",
        dependencies=("urn:lb", "urn:sg"))
    listener = Resource(t.ALB_LISTENER, {"loadBalancerId": "alb-1", "listenerProtocol": "HTTPS",
                                         "listenerPort": 8000}, "l", "urn:l")
    return [*found, balancer, attachment, listener]


CLIENTS = {"ipProtocol": "tcp", "portRange": "8000/8000", "cidrIp": "10.8.0.0/16"}
DENY_ALL = {"ipProtocol": "all", "portRange": "-1/-1", "cidrIp": "0.0.0.0/0", "policy": "Drop",
            "priority": 100}


@pytest.mark.parametrize("kind", ["nlb", "alb"])
@pytest.mark.parametrize("rules, open_", [
    ((CLIENTS,), True),             # Allow rules only: every request is accepted
    ((CLIENTS, DENY_ALL), False),   # Allow the clients, Deny everyone else
    ((DENY_ALL,), False),           # nobody
    (({**CLIENTS, "cidrIp": "0.0.0.0/1"}, {**CLIENTS, "cidrIp": "128.0.0.0/1"}, DENY_ALL),
     True),
    ((CLIENTS, {**DENY_ALL, "portRange": "22/22"}), True),   # the Deny misses the port
])
def test_internet_listeners_are_judged_with_their_balancers_groups(kind, rules, open_):
    found = [v for v in evaluate(balancer_stack(kind, *rules)) if v.rule == "no-world-ingress"
             and v.resource_type in (t.NLB_LISTENER, t.ALB_LISTENER)]
    assert bool(found) is open_


# --- the environment of a resource without tags ---------------------------------------------

def log_store(name: str) -> Resource:
    return Resource(t.LOG_STORE, {"name": name, "retentionPeriod": 30}, name, f"urn:{name}")


def test_a_resource_without_tags_takes_the_environment_its_stack_agrees_on():
    tagged = Resource(t.VPC, {"cidrBlock": "10.0.0.0/16", "tags": PROD}, "vpc", "urn:vpc")
    profile = with_profile(None)
    found = [v for v in evaluate([tagged, log_store("nodes")], context=profile)
             if v.rule == "prod-log-retention"]
    assert [v.resource_name for v in found] == ["nodes"]
    dev = Resource(t.VPC, {"cidrBlock": "10.1.0.0/16", "tags": TAGS}, "dev", "urn:dev")
    mixed = evaluate([tagged, dev, log_store("nodes")], context=profile)
    assert not [v for v in mixed if v.rule == "prod-log-retention"]
    alone = evaluate([log_store("nodes")], context=profile)
    assert not [v for v in alone if v.rule == "prod-log-retention"]
    named = evaluate([tagged, log_store("nodes")], context=with_profile(Context("dev")))
    assert not [v for v in named if v.rule == "prod-log-retention"]


# --- every type a stack can create is reviewed -----------------------------------------------

@pytest.mark.slow
def test_every_type_a_stack_can_create_is_reviewed(tmp_path):
    from .conftest import write_stack
    from .shipped import planned_once
    from .test_update_semantics import OPTIONAL_FEATURES

    types = {r["type"] for path in sorted(GOLDEN_DIR.glob("*.json"))
             for r in golden_record(path.stem)["resources"] if r["custom"]}
    for name, cluster in OPTIONAL_FEATURES.items():
        types |= {r.type for r in planned_once(write_stack(tmp_path, name, cluster)).resources
                  if r.custom}
    cloud = {token for token in types if not token.startswith("pulumi:")}
    assert len(cloud) > 60
    unreviewed = sorted(token for token in cloud
                        if not type_coverage(token, JUDGING_RULES).reviewed)
    assert unreviewed == []
