"""What a security reviewer tries against the pack: insecure resources a GPU stack could
plausibly contain, each written the way that slipped past spelling-based rules, with the
rule that must catch it (on the case's first resource). Used by the rule tests and by the
gRPC test (pack == plan)."""

from __future__ import annotations

import base64
import json

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource

from .rule_helpers import PROD, TAGS


def _doc(*statements: dict) -> str:
    return json.dumps({"Version": "1", "Statement": list(statements)})


def _sg_rule(name: str, group: str, **props) -> Resource:
    return Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp",
                                            "portRange": "22/22", "securityGroupId": group,
                                            **props}, name, f"urn:{name}")


def _policy(name: str, *statements: dict) -> Resource:
    return Resource(t.RAM_POLICY, {"policyDocument": _doc(*statements), "tags": TAGS}, name,
                    f"urn:{name}")


ALLOW_ALL = {"Effect": "Allow", "Action": "*", "Resource": "*"}
NESTED = ('{"Version":"1","Statement":[{"Effect":"Allow","Action":"*","Resource":"*",'
          '"Condition":{"StringEquals":{"x":' + "[" * 1500 + "]" * 1500 + "}}}]}")
ANYONE = {"Effect": "Allow", "Action": ["oss:GetObject"], "Principal": ["*"],
          "Resource": ["acs:oss:*:*:ckpt/*"]}
KEY_SCRIPT = base64.b64encode(b"#!/bin/sh\nexport AK=LTAI5tAbCdEfGhIjKlMnOpQr\n").decode()

BARE_BUCKET = Resource(t.BUCKET, {"bucket": "bare", "tags": PROD}, "bare", "urn:bare",
                       protect=True)
"""A prod bucket without encryption, public access block or access log."""

CASES: list[tuple[str, list[Resource]]] = [
    ("no-world-ingress", [_sg_rule("halves-a", "sg-1", cidrIp="0.0.0.0/1"),
                          _sg_rule("halves-b", "sg-1", cidrIp="128.0.0.0/1")]),
    ("no-world-ingress", [_sg_rule("slash-1", "sg-2", cidrIp="0.0.0.0/1")]),
    ("no-world-ingress", [_sg_rule("slash-4", "sg-3", cidrIp="0.0.0.0/4")]),
    ("no-world-ingress", [_sg_rule("v6-half", "sg-4", ipv6CidrIp="::/1")]),
    ("no-world-ingress", [_sg_rule("v6-unicast", "sg-5", ipv6CidrIp="2000::/3")]),
    ("no-world-ingress", [_sg_rule("int-port", "sg-6", cidrIp="0.0.0.0/0", portRange=22)]),
    ("no-world-ingress", [_sg_rule("no-port", "sg-7", cidrIp="0.0.0.0/0", portRange=None,
                                   ipProtocol="all")]),
    ("no-world-ingress", [
        Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp",
                                         "portRange": "22/22", "securityGroupId": "sg-8",
                                         "prefixListId": "pl-1"}, "via-prefix-list",
                 "urn:via-prefix-list", dependencies=("urn:world-list",)),
        Resource(t.PREFIX_LIST, {"entries": [{"cidr": "0.0.0.0/0"}]}, "world-list",
                 "urn:world-list", id="pl-1")]),
    ("no-world-ingress", [Resource(t.RDS_INSTANCE, {
        "engine": "PostgreSQL", "securityIps": ["10.0.0.0/16", "0.0.0.0"], "tags": TAGS},
        "mlflow-db", "urn:mlflow-db")]),
    ("no-world-ingress", [Resource(t.KVSTORE_INSTANCE, {
        "securityIps": "10.0.0.0/8,0.0.0.0/0", "tags": TAGS}, "redis", "urn:redis")]),
    ("no-world-ingress", [Resource(t.ALB_ACL, {"aclName": "open"}, "acl", "urn:acl",
                                   id="acl-1"),
                          Resource(t.ALB_ACL_ENTRY, {"aclId": "acl-1", "entry": "0.0.0.0/0"},
                                   "acl-entry", "urn:acl-entry", dependencies=("urn:acl",))]),
    ("no-world-ingress", [Resource(t.FORWARD_ENTRY, {
        "externalPort": "any", "internalIp": "10.0.0.5", "internalPort": "any",
        "ipProtocol": "any"}, "dnat", "urn:dnat")]),
    ("no-world-ingress", [Resource(t.K8S_SERVICE, {
        "metadata": {"name": "ray-dashboard"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 8265}]}}, "ray", "urn:ray")]),
    ("no-world-ingress", [Resource(t.SLB_LISTENER, {
        "frontendPort": 443, "protocol": "https", "backendPort": 8888,
        "tlsCipherPolicy": "tls_cipher_policy_1_2_strict"}, "jupyter", "urn:jupyter")]),
    ("no-foreign-network-peers", [Resource(t.PEER_CONNECTION, {
        "acceptingAliUid": "1234567890123456", "vpcId": "vpc-1", "acceptingVpcId": "vpc-2"},
        "peer", "urn:peer")]),
    ("no-foreign-network-peers", [_sg_rule("other-account", "sg-9",
                                           sourceSecurityGroupId="sg-theirs",
                                           sourceGroupOwnerAccount="1234567890123456")]),
    ("no-broad-private-ingress", [_sg_rule("ten-slash-8", "sg-10", cidrIp="10.0.0.0/8",
                                           portRange="-1/-1", ipProtocol="all")]),
    ("unreviewed-types", [Resource("alicloud:cdn/domainNew:DomainNew", {"domainName": "v"},
                                   "cdn", "urn:cdn")]),
    ("databases-in-vpc", [Resource(t.MONGODB_INSTANCE, {"engineVersion": "6.0", "tags": TAGS},
                                   "classic-mongo", "urn:classic-mongo")]),
    ("tls-modern-policies", [Resource(t.ALB_LISTENER, {
        "listenerPort": 443, "listenerProtocol": "HTTPS", "tags": TAGS}, "tls10", "urn:tls10")]),
    ("tls-modern-policies", [Resource(t.NLB_SECURITY_POLICY, {
        "tlsVersions": ["TLSv1.1", "TLSv1.2"], "ciphers": ["ECDHE-RSA-AES128-SHA"],
        "tags": TAGS}, "nlb-policy", "urn:nlb-policy")]),
    ("vpn-strong-ciphers", [Resource(t.VPN_CONNECTION, {
        "ikeConfig": {"ikeEncAlg": "aes256", "ikeAuthAlg": "sha256"},
        "ipsecConfig": {"ipsecEncAlg": "3des"}, "tags": TAGS}, "idc-vpn", "urn:idc-vpn")]),
    ("tls-to-databases", [Resource(t.KVSTORE_INSTANCE, {
        "vswitchId": "vsw-1", "securityIps": ["10.0.0.0/16"], "tags": TAGS},
        "plain-redis", "urn:plain-redis")]),
    ("no-plain-http-downloads", [Resource(t.NODE_POOL, {
        "preUserData": base64.b64encode(b"curl -fsSL http://get.example.com/a.sh | sh").decode(),
        "systemDiskEncrypted": True, "instanceMetadataOptions": {"httpTokens": "required"},
        "tags": TAGS}, "http-agent", "urn:http-agent")]),
    ("no-plaintext-secrets", [Resource(t.K8S_DEPLOYMENT, {
        "metadata": {"name": "trainer"}, "spec": {"template": {"spec": {"containers": [{
            "name": "t", "image": "r/t:1",
            "env": [{"name": "HF_TOKEN", "value": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"}]}]}}}},
        "hf-token", "urn:hf-token")]),
    ("ram-named-account-trust", [Resource(t.RAM_ROLE, {"assumeRolePolicyDocument": _doc({
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"RAM": ["acs:ram::1234567890123456:root"]}}), "tags": TAGS},
        "partner", "urn:partner")]),
    ("ram-trust-policy", [Resource(t.RAM_ROLE, {"assumeRolePolicyDocument": _doc({
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Federated": ["acs:ram::1234567890123456:oidc-provider/ack-rrsa-c1"]},
        "Condition": {"StringEquals": {"oidc:aud": "sts.aliyuncs.com"}}}), "tags": TAGS},
        "rrsa-any-sa", "urn:rrsa-any-sa")]),
    ("ram-no-privilege-escalation", [_policy("attach-any", {
        "Effect": "Allow", "Action": ["ram:AttachPolicyToRole"],
        "Resource": "acs:ram:*:*:role/*"})]),
    ("console-mfa", [Resource(t.RAM_LOGIN_PROFILE, {"userName": "alice", "password": "[secret]"},
                              "alice-console", "urn:alice-console")]),
    ("ram-password-policy", [Resource(t.RAM_PASSWORD_POLICY, {"maxLoginAttemps": 0},
                                      "pw-policy", "urn:pw-policy")]),
    ("ram-policies-on-groups", [Resource(t.RAM_POLICY_ATTACHMENTS[1], {
        "policyName": "read-ckpt", "policyType": "Custom", "userName": "alice"},
        "alice-policy", "urn:alice-policy")]),
    ("no-admin-policies", [Resource(t.RAM_POLICY_ATTACHMENTS[0], {
        "policyName": "AliyunECSFullAccess", "policyType": "System", "roleName": "node"},
        "ecs-full", "urn:ecs-full")]),
    ("actiontrail-complete", [Resource(t.ACTIONTRAIL_TRAIL, {
        "trailName": "audit", "ossBucketName": "audit-logs", "trailRegion": "All"},
        "trail", "urn:trail")]),
    ("log-audit-complete", [Resource(t.LOG_AUDIT, {
        "displayName": "audit", "aliuid": "1", "variableMap": {"actiontrail_enabled": "true"}},
        "log-audit", "urn:log-audit")]),
    ("prod-access-logs", [Resource(t.RDS_INSTANCE, {
        "engine": "PostgreSQL", "vswitchId": "vsw-1", "sslAction": "Open", "tdeStatus": "Enabled",
        "tags": PROD}, "tracker-db", "urn:tracker-db")]),
    ("prod-vpc-flow-logs", [Resource(t.VPC, {"cidrBlock": "10.9.0.0/16", "tags": PROD}, "vpc",
                                     "urn:vpc")]),
    ("ack-private-api-endpoint", [Resource(t.MANAGED_KUBERNETES, {
        "enableRrsa": True, "podVswitchIds": ["vsw-p"], "tags": TAGS}, "ack", "urn:ack")]),
    ("ack-rrsa", [Resource(t.MANAGED_KUBERNETES, {
        "slbInternetEnabled": False, "podVswitchIds": ["vsw-p"], "tags": TAGS}, "ack-norrsa",
        "urn:ack-norrsa")]),
    ("ack-network-policy-cni", [Resource(t.MANAGED_KUBERNETES, {
        "slbInternetEnabled": False, "enableRrsa": True, "podCidr": "172.20.0.0/16",
        "addons": [{"name": "flannel"}], "tags": TAGS}, "ack-flannel", "urn:ack-flannel")]),
    ("ack-addons-pinned", [Resource(t.KUBERNETES_ADDON, {
        "clusterId": "c", "name": "ack-node-problem-detector"}, "addon", "urn:addon")]),
    ("registry-private", [Resource(t.REGISTRY_EE_NAMESPACE, {
        "instanceId": "cri-1", "name": "models", "defaultVisibility": "PUBLIC",
        "autoCreate": True}, "ns", "urn:ns")]),
    ("k8s-pod-security", [Resource(t.K8S_DAEMON_SET, {
        "metadata": {"name": "debug", "namespace": "ml"}, "spec": {"template": {"spec": {
            "hostNetwork": True, "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "containers": [{"name": "d", "image": "busybox",
                            "securityContext": {"privileged": True}}]}}}}, "debug", "urn:debug")]),
    ("prod-customer-keys", [Resource(t.NAS_FILE_SYSTEM, {"fileSystemType": "extreme",
                                                      "encryptType": 1, "tags": PROD},
                                     "prod-fs", "urn:prod-fs", protect=True)]),
    ("prod-backup-vault-kms", [Resource(t.HBR_VAULT, {
        "vaultName": "v", "encryptType": "HBR_PRIVATE", "tags": PROD}, "prod-vault",
        "urn:prod-vault", protect=True)]),
    ("fc-triggers-authenticated", [Resource(t.FC_TRIGGER, {
        "functionName": "f", "triggerType": "http", "triggerName": "open",
        "triggerConfig": '{"authType": "anonymous"}'}, "open-trigger", "urn:open-trigger")]),
    ("no-foreign-data-sharing", [Resource(t.IMAGE_SHARE, {
        "imageId": "m-1", "accountId": "1234567890123456"}, "share", "urn:share")]),
    ("no-anonymous-resource-policies", [Resource(t.KMS_KEY, {
        "automaticRotation": "Enabled", "policy": _doc({
            "Effect": "Allow", "Action": ["kms:Decrypt"], "Principal": {"RAM": ["*"]},
            "Resource": ["*"]}), "tags": TAGS}, "open-key", "urn:open-key")]),
    ("routes-through-instances", [Resource(t.ROUTE_ENTRY, {
        "routeTableId": "vtb-1", "destinationCidrblock": "0.0.0.0/0", "nexthopType": "Instance",
        "nexthopId": "i-proxy"}, "via-proxy", "urn:via-proxy")]),
    ("k8s-rbac-least-privilege", [Resource(t.K8S_CLUSTER_ROLE_BINDING, {
        "metadata": {"name": "trainer-admin"}, "roleRef": {"kind": "ClusterRole",
                                                          "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "trainer", "namespace": "ml"}]},
        "trainer-admin", "urn:trainer-admin")]),
    ("k8s-pod-security", [Resource(t.K8S_PERSISTENT_VOLUME, {
        "metadata": {"name": "node-root"}, "spec": {"hostPath": {"path": "/"},
                                                    "capacity": {"storage": "1Ti"}}},
        "node-root", "urn:node-root")]),
    ("oss-browser-access", [Resource(t.BUCKET_CORS, {"bucket": "ckpt", "corsRules": [{
        "allowedOrigins": ["*"], "allowedMethods": ["GET", "PUT"]}]}, "cors", "urn:cors")]),
    ("oss-secure-transport", [Resource(t.BUCKET_POLICY, {"bucket": "ckpt", "policy": _doc({
        "Effect": "Allow", "Action": ["oss:GetObject"], "Principal": ["20214760404935xxxx"],
        "Resource": ["acs:oss:*:*:ckpt/*"]})}, "no-tls-policy", "urn:no-tls-policy")]),
    ("nas-no-world-access", [
        Resource(t.NAS_ACCESS_RULE, {"accessGroupName": "g", "sourceCidrIp": cidr,
                                     "rwAccessType": "RDWR", "userAccessType": "no_squash"},
                 f"nas-{i}", f"urn:nas-{i}") for i, cidr in enumerate(["0.0.0.0/1",
                                                                       "128.0.0.0/1"])]),
    ("tls-on-public-listeners", [Resource(t.ALB_LISTENER, {
        "listenerPort": 80, "listenerProtocol": "HTTP"}, "http", "urn:http")]),
    ("no-public-ip-on-nodes", [Resource(t.ECS_LAUNCH_TEMPLATE, {
        "internetMaxBandwidthOut": 100, "httpTokens": "required",
        "systemDisk": {"encrypted": True}, "tags": TAGS}, "template", "urn:template")]),
    ("no-public-ip-on-nodes", [Resource(t.NODE_POOL, {
        "internetMaxBandwidthOut": 10, "systemDiskEncrypted": True, "tags": TAGS,
        "instanceMetadataOptions": {"httpTokens": "required"}}, "pool", "urn:pool")]),
    ("no-password-login", [Resource(t.NODE_POOL, {
        "password": "[secret]", "systemDiskEncrypted": True, "tags": TAGS,
        "instanceMetadataOptions": {"httpTokens": "required"}}, "pool-pw", "urn:pool-pw")]),
    ("disks-encrypted", [Resource(t.NODE_POOL, {
        "dataDisks": [{"category": "cloud_essd", "encrypted": "false"}], "tags": TAGS,
        "systemDiskEncrypted": True, "instanceMetadataOptions": {"httpTokens": "required"}},
        "pool-disk", "urn:pool-disk")]),
    ("no-password-login", [Resource(t.INSTANCE, {
        "passwordInherit": True, "systemDiskEncrypted": True, "httpTokens": "required",
        "tags": TAGS}, "inherit", "urn:inherit")]),
    ("no-password-login", [Resource(t.SCALING_CONFIGURATION, {
        "passwordInherit": True, "systemDiskEncrypted": True, "tags": TAGS}, "sc-inherit",
        "urn:sc-inherit")]),
    ("no-plaintext-secrets", [Resource(t.INSTANCE, {
        "userData": KEY_SCRIPT, "systemDiskEncrypted": True, "httpTokens": "required",
        "tags": TAGS}, "key-in-user-data", "urn:key-in-user-data")]),
    ("metadata-hardened", [Resource(t.INSTANCE, {
        "systemDiskEncrypted": True, "tags": TAGS}, "imds-v1", "urn:imds-v1")]),
    ("disks-encrypted", [Resource(t.DISK, {"category": "cloud_essd", "tags": TAGS},
                                  "old-disk", "urn:old-disk")]),
    ("nas-encrypted", [Resource(t.NAS_FILE_SYSTEM, {"tags": TAGS}, "fs", "urn:fs")]),
    ("nas-unencryptable", [Resource(t.NAS_FILE_SYSTEM, {"fileSystemType": "cpfs",
                                                        "tags": TAGS}, "cpfs", "urn:cpfs")]),
    ("k8s-pod-security", [Resource("kubernetes:kubeflow.org/v1:PyTorchJob", {
        "metadata": {"name": "pt"}, "spec": {"pytorchReplicaSpecs": {"Worker": {"template": {
            "spec": {"containers": [{"name": "pytorch", "image": "train",
                                     "securityContext": {"privileged": "true"}}]}}}}}},
        "pt-job", "urn:pt-job")]),
    ("k8s-pod-security", [Resource(t.ECI_CONTAINER_GROUP, {"containers": [{
        "name": "c", "image": "nginx", "securityContexts": [{"capabilities": [
            {"adds": ["SYS_ADMIN"]}]}]}], "tags": TAGS}, "eci-caps", "urn:eci-caps")]),
    ("k8s-rbac-least-privilege", [Resource(t.K8S_CLUSTER_ROLE_BINDING, {
        "metadata": {"name": "all-view"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "system:authenticated"}]},
        "all-view", "urn:all-view")]),
    ("no-plaintext-secrets", [Resource(t.OOS_PARAMETER, {
        "parameterName": "ci-key", "value": "LTAI5tAbCdEfGhIjKlMnOpQr", "tags": TAGS},
        "oos-key", "urn:oos-key")]),
    ("kms-key-rotation", [Resource(t.KMS_KEY, {"automaticRotation": "Disabled",
                                               "tags": TAGS}, "key", "urn:key")]),
    ("prod-deletion-protection", [Resource(t.INSTANCE, {
        "systemDiskEncrypted": True, "systemDiskKmsKeyId": "k", "httpTokens": "required",
        "tags": PROD}, "unprotected", "urn:unprotected", protect=True)]),
    ("oss-bucket-private", [Resource(t.BUCKET_POLICY, {"bucket": "ckpt",
                                                       "policy": _doc(ANYONE)},
                                     "anonymous", "urn:anonymous")]),
    ("oss-bucket-private", [Resource(t.BUCKET_OBJECT, {"bucket": "ckpt", "key": "k",
                                                       "acl": "public-read"},
                                     "object", "urn:object")]),
    ("no-admin-policies", [_policy("ecs-star", {**ALLOW_ALL, "Action": "ecs:*"})]),
    ("no-admin-policies", [_policy("not-action", {"Effect": "Allow", "NotAction": "ram:*",
                                                  "Resource": "*"})]),
    ("no-admin-policies", [_policy("arn-star", {**ALLOW_ALL, "Resource": "acs:*:*:*:*"})]),
    ("ram-no-privilege-escalation", [_policy(
        "escalate", {**ALLOW_ALL, "Action": "ram:PassRole"},
        {**ALLOW_ALL, "Action": "ecs:RunInstances"})]),
    ("ram-trust-policy", [Resource(t.RAM_ROLE, {"assumeRolePolicyDocument": _doc({
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"RAM": ["acs:ram::*:root"]}}), "tags": TAGS}, "trust", "urn:trust")]),
    ("no-eip-on-nodes", [
        Resource(t.EIP_ASSOCIATION, {"instanceId": "i-1"}, "eip", "urn:eip",
                 dependencies=("urn:eip-node",)),
        Resource(t.INSTANCE, {"systemDiskEncrypted": True, "httpTokens": "required",
                              "tags": TAGS}, "eip-node", "urn:eip-node", id="i-1")]),
    ("oss-bucket-encrypted", [BARE_BUCKET]),
    ("oss-public-access-blocked", [BARE_BUCKET]),
    ("prod-bucket-logging", [BARE_BUCKET]),
    ("ram-no-access-keys", [Resource(t.RAM_ACCESS_KEY, {"userName": "ci"}, "ak", "urn:ak")]),
    ("policy-documents-readable", [Resource(t.RAM_POLICY, {"policyDocument": NESTED,
                                                           "tags": TAGS},
                                            "nested", "urn:nested")]),
]
"""(rule that must fire, the resources of one case)."""
NEEDS_STACK_ENVIRONMENT = {"prod-log-retention"}
"""Rules over types without tags, which learn their environment from the stack only (tested
with a stack environment in tests/test_policies_audit.py)."""


def all_resources() -> list[Resource]:
    """Every case's resources in one stack, each once."""
    unique = {r.urn: r for _, resources in CASES for r in resources}
    return list(unique.values())
