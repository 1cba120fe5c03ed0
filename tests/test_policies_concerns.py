"""The rules added by concern (issue 25): for each, violating and compliant cases over several
types and spellings, including the provider defaults a field left out falls back to."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from gpu_infra_facts import types as t
from gpu_infra_facts.update_preconditions import protection
from gpu_infra_policies.base import UNKNOWN, Context, Resource
from gpu_infra_policies.nodes import PROTECTED_IN_PROD

from .rule_helpers import PROD, TAGS, messages, stack_messages

PROD_CTX = Context("prod")


def doc(*statements) -> str:
    return json.dumps({"Version": "1", "Statement": list(statements)})


# --- transport -----------------------------------------------------------------------------

@pytest.mark.parametrize("token, props", [
    (t.ALB_LISTENER, {"listenerProtocol": "HTTPS"}),
    (t.ALB_LISTENER, {"listenerProtocol": "QUIC", "securityPolicyId": "tls_cipher_policy_1_1"}),
    (t.NLB_LISTENER, {"listenerProtocol": "TCPSSL"}),
    (t.SLB_LISTENER, {"protocol": "https", "tlsCipherPolicy": "tls_cipher_policy_1_0"}),
])
def test_tls_listeners_on_old_or_default_policies(token, props):
    [(_, message)] = stack_messages("tls-modern-policies", [Resource(token, props, "l")])
    assert "allows TLS 1.0 / 1.1" in message


@pytest.mark.parametrize("token, props", [
    (t.ALB_LISTENER, {"listenerProtocol": "HTTPS", "securityPolicyId": "tls_cipher_policy_1_2"}),
    (t.NLB_LISTENER, {"listenerProtocol": "TCPSSL", "securityPolicyId": UNKNOWN}),
    (t.SLB_LISTENER, {"protocol": "https",
                      "tlsCipherPolicy": "tls_cipher_policy_1_2_strict_with_1_3"}),
    (t.SLB_LISTENER, {"protocol": "http"}),  # no TLS: tls-on-public-listeners' case
    (t.ALB_LISTENER, {"listenerProtocol": "HTTPS", "securityPolicyId": "spy-custom"}),
])
def test_tls_listeners_on_modern_or_custom_policies(token, props):
    assert stack_messages("tls-modern-policies", [Resource(token, props, "l")]) == []


@pytest.mark.parametrize("token, props, fires", [
    (t.ALB_SECURITY_POLICY, {"tlsVersions": ["TLSv1.0", "TLSv1.2"]}, True),
    (t.NLB_SECURITY_POLICY, {"tlsVersions": ["TLSv1.2"], "ciphers": ["DES-CBC3-SHA"]}, True),
    (t.SLB_TLS_POLICY, {"tlsVersions": ["TLSv1.2", "TLSv1.3"],
                        "ciphers": ["ECDHE-RSA-AES128-GCM-SHA256"]}, False),
    (t.BUCKET_HTTPS_CONFIG, {"enable": True, "tlsVersions": ["TLSv1.1", "TLSv1.2"]}, True),
    (t.BUCKET_HTTPS_CONFIG, {"enable": False, "tlsVersions": ["TLSv1.1"]}, False),
])
def test_custom_tls_policies(token, props, fires):
    assert bool(stack_messages("tls-modern-policies", [Resource(token, props, "p")])) is fires


@pytest.mark.parametrize("props, fires", [
    ({"listenerProtocol": "HTTP", "listenerPort": 80, "defaultActions": [
        {"type": "Redirect", "redirectConfig": {"protocol": "HTTPS", "port": "443"}}]}, False),
    ({"listenerProtocol": "HTTP", "listenerPort": 80, "defaultActions": [
        {"type": "ForwardGroup", "forwardGroupConfig": {}}]}, True),
])
def test_redirect_only_http_listener_is_fine(props, fires):
    assert bool(stack_messages("tls-on-public-listeners",
                               [Resource(t.ALB_LISTENER, props, "l")])) is fires
    clb = Resource(t.SLB_LISTENER, {"protocol": "http", "frontendPort": 80,
                                    "listenerForward": "on", "forwardPort": 443}, "c")
    assert stack_messages("tls-on-public-listeners", [clb]) == []


@pytest.mark.parametrize("props, fires", [
    ({}, True),  # every algorithm left to the API: MD5 and group 2
    ({"ikeConfig": {"ikeAuthAlg": "sha256", "ikePfs": "group14"},
      "ipsecConfig": {"ipsecAuthAlg": "sha256", "ipsecPfs": "group14"}}, False),
    ({"ikeConfig": [{"ikeAuthAlg": "sha256", "ikePfs": "group14", "ikeEncAlg": "DES"}],
      "ipsecConfig": {"ipsecAuthAlg": "sha256", "ipsecPfs": "group14"}}, True),
    ({"ikeConfig": {"ikeAuthAlg": "sha256", "ikePfs": "group14"},
      "ipsecConfig": {"ipsecAuthAlg": "sha256", "ipsecPfs": "disabled"}}, True),
    ({"ikeConfig": UNKNOWN, "ipsecConfig": UNKNOWN}, False),
    ({"ikeConfig": {"ikeAuthAlg": "sha256", "ikePfs": "group14"},
      "ipsecConfig": {"ipsecAuthAlg": "sha256", "ipsecPfs": "group14"},
      "tunnelOptionsSpecifications": [{"tunnelIkeConfig": {"ikeAuthAlg": "md5"}}]}, True),
])
def test_vpn_ciphers(props, fires):
    assert bool(messages("vpn-strong-ciphers", Resource(t.VPN_CONNECTION, props))) is fires


def test_ssl_vpn_cipher():
    assert messages("vpn-strong-ciphers", Resource(t.SSL_VPN_SERVER, {"cipher": "none"}))
    assert messages("vpn-strong-ciphers", Resource(t.SSL_VPN_SERVER,
                                                   {"cipher": "AES-256-CBC"})) == []


@pytest.mark.parametrize("token, props, fires", [
    (t.RDS_INSTANCE, {}, True), (t.RDS_INSTANCE, {"sslAction": "Open"}, False),
    (t.MONGODB_INSTANCE, {"sslAction": "Close"}, True),
    (t.MONGODB_INSTANCE, {"sslAction": "Update"}, False),
    (t.KVSTORE_INSTANCE, {}, True), (t.KVSTORE_INSTANCE, {"sslEnable": "Enable"}, False),
    (t.POLARDB_ENDPOINT, {"sslEnabled": "Disable"}, True),
    (t.POLARDB_ENDPOINT, {"sslEnabled": UNKNOWN}, False),
])
def test_tls_to_databases(token, props, fires):
    assert bool(messages("tls-to-databases", Resource(token, props))) is fires


def gz(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


@pytest.mark.parametrize("token, key, text, fires", [
    (t.INSTANCE, "userData", "curl http://example.com/x.sh | bash", True),
    (t.SCALING_CONFIGURATION, "userData", gz("wget -qO- http://47.96.1.9/get"), True),
    (t.IMAGE_COMPONENT, "content", "RUN curl -o a http://download.example.org/a", True),
    (t.ECS_COMMAND, "commandContent",
     base64.b64encode(b"pip install --index-url http://pypi.example.com/simple x").decode(), True),
    (t.IMAGE_PIPELINE, "buildContent", "RUN wget http://get.example.com/y", True),
    (t.INSTANCE, "userData", "curl http://100.100.100.200/latest/meta-data/instance-id", False),
    (t.INSTANCE, "userData", "curl -O http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh",
     False),
    (t.INSTANCE, "userData",
     "curl http://b.oss-cn-hangzhou-internal.aliyuncs.com/k http://10.0.0.5:8080/x", False),
    (t.INSTANCE, "userData", "curl https://example.com/x.sh | bash", False),
])
def test_plain_http_downloads(token, key, text, fires):
    assert bool(messages("no-plain-http-downloads", Resource(token, {key: text}))) is fires


def test_plain_http_in_kubernetes_containers():
    pod = Resource(t.K8S_JOB, {"spec": {"template": {"spec": {"containers": [{
        "name": "c", "command": ["sh", "-c", "curl http://example.com/data | tar x"]}]}}}})
    assert messages("no-plain-http-downloads", pod)


# --- secrets -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, what", [
    ("export GITHUB_TOKEN=ghp_" + "a" * 36, "a GitHub token"),
    ("HF_TOKEN=hf_" + "B" * 34, "a Hugging Face token"),
    ("AWS_ACCESS_KEY_ID=AKIA" + "ABCDEFGHIJKLMNOP", "an AWS access key"),
    ("OPENAI_API_KEY=sk-" + "x1" * 20, "an OpenAI-style API key"),
    ("WANDB_API_KEY=" + "0123456789abcdef" * 2 + "01234567", "a Weights & Biases key"),
    ("export MLFLOW_TRACKING_PASSWORD=Tr4ck1ngPassw0rd", "a password or token"),
    ("docker login -u me -p s3cretpass registry.cn-hangzhou.aliyuncs.com",
     "a registry password"),
    ("export ALIBABA_CLOUD_SECURITY_TOKEN=STS." + "N" * 30, "an STS token"),
])
def test_tokens_of_common_services_anywhere(text, what):
    for resource in (Resource(t.INSTANCE, {"userData": text}),
                     Resource(t.NODE_POOL, {"preUserData": base64.b64encode(
                         text.encode()).decode()}),
                     Resource(t.K8S_CONFIG_MAP, {"data": {"run.sh": text}}),
                     Resource(t.FC_FUNCTION, {"environmentVariables": {"SETUP": text}}),
                     Resource("alicloud:vpc/network:Network", {"tags": {"Note": text}})):
        found = messages("no-plaintext-secrets", resource)
        assert found and what in found[0], (resource.type, found)


@pytest.mark.parametrize("text", [
    "TOKEN=$(curl -s -X PUT http://100.100.100.200/latest/api/token)",
    "readonly METADATA_TOKEN_URL=http://100.100.100.200/latest/api/token",
    "password_file=/etc/secret", "export HF_TOKEN=${HF_TOKEN}", "token = response.read()",
])
def test_references_are_not_secrets(text):
    assert messages("no-plaintext-secrets", Resource(t.INSTANCE, {"userData": text})) == []


def test_kubernetes_env_values_are_read():
    deployment = Resource(t.K8S_STATEFUL_SET, {"spec": {"template": {"spec": {"containers": [{
        "name": "db", "env": [{"name": "POSTGRES_PASSWORD", "value": "Sup3rS3cretValue"},
                              {"name": "REF", "valueFrom": {"secretKeyRef": {"name": "s"}}}]
    }]}}}})
    [found] = messages("no-plaintext-secrets", deployment)
    assert found.startswith("spec.template.spec.containers[0].env.POSTGRES_PASSWORD holds")


# --- identity ------------------------------------------------------------------------------

@pytest.mark.parametrize("resource, fires", [
    ("acs:ecs:*:*:instance/*", True), ("acs:oss:*:*:*/*", True), ("ACS:ECS:*:*:*", True),
    ("acs:ram:*:123:role/*", True), ("acs:oss:*:*:ckpt/*", False),
    ("acs:ecs:cn-hangzhou:123:instance/i-1", False),
])
def test_service_wildcards_on_every_resource_spelling(resource, fires):
    policy = Resource(t.RAM_POLICY, {"policyDocument": doc(
        {"Effect": "Allow", "Action": "ecs:*" if "ecs" in resource.lower() or "ram" in resource
         else "oss:*", "Resource": resource})})
    assert bool(messages("no-admin-policies", policy)) is fires


@pytest.mark.parametrize("name, fires", [("AdministratorAccess", True),
                                         ("AliyunOSSFullAccess", True),
                                         ("AliyunECSReadOnlyAccess", False)])
def test_full_access_system_policies(name, fires):
    for token, who in zip(t.RAM_POLICY_ATTACHMENTS, ("roleName", "userName", "groupName"),
                          strict=True):
        attach = Resource(token, {"policyName": name, "policyType": "System", who: "x"})
        assert bool(messages("no-admin-policies", attach)) is fires


@pytest.mark.parametrize("action, resource, fires", [
    ("ram:AttachPolicyToUser", "*", True), ("ram:CreateAccessKey", "acs:ram:*:*:user/*", True),
    ("ram:Create*", "*", True), ("ecs:RunCommand", "acs:ecs:*:*:instance/*", True),
    ("sts:AssumeRole", "*", True),
    ("ram:AttachPolicyToRole", "acs:ram:*:123:role/gpu-node", False),
    ("sts:AssumeRole", "acs:ram::123:role/reader", False),
])
def test_self_escalation(action, resource, fires):
    policy = Resource(t.RAM_POLICY, {"policyDocument": doc(
        {"Effect": "Allow", "Action": action, "Resource": resource})})
    assert bool(messages("ram-no-privilege-escalation", policy)) is fires


def role(statement: dict) -> Resource:
    return Resource(t.RAM_ROLE, {"assumeRolePolicyDocument": doc(
        {"Effect": "Allow", "Action": "sts:AssumeRole", **statement})}, "role")


OIDC = {"Federated": ["acs:ram::123:oidc-provider/ack-rrsa-c1"]}


@pytest.mark.parametrize("condition, fires", [
    (None, True), ({"StringEquals": {"oidc:aud": "sts.aliyuncs.com"}}, True),
    ({"StringEquals": {"oidc:aud": "sts.aliyuncs.com",
                       "oidc:sub": "system:serviceaccount:ml:trainer"}}, False),
    ({"StringLike": {"oidc:sub": "system:serviceaccount:ml:*"},
      "StringEquals": {"oidc:aud": "sts.aliyuncs.com"}}, False),
])
def test_oidc_trust_needs_conditions(condition, fires):
    statement = {"Principal": OIDC, **({"Condition": condition} if condition else {})}
    found = stack_messages("ram-trust-policy", [role(statement)])
    assert bool(found) is fires


@pytest.mark.parametrize("principal, fires", [
    ({"RAM": ["acs:ram::1234567890:root"]}, True), ({"RAM": "1234567890"}, True),
    ({"RAM": ["acs:ram::5555:root"]}, False), ({"Service": ["ecs.aliyuncs.com"]}, False),
])
def test_named_account_trust(principal, fires):
    found = messages("ram-named-account-trust", role({"Principal": principal}),
                     trustedAccounts=["5555"])
    assert bool(found) is fires


@pytest.mark.parametrize("token, props, fires", [
    (t.RAM_LOGIN_PROFILE, {"userName": "a", "password": "[secret]"}, True),
    (t.RAM_LOGIN_PROFILE, {"userName": "a", "mfaBindRequired": True}, False),
    (t.RAM_SECURITY_PREFERENCE, {}, True),
    (t.RAM_SECURITY_PREFERENCE, {"enforceMfaForLogin": True}, False),
])
def test_console_mfa(token, props, fires):
    assert bool(messages("console-mfa", Resource(token, props))) is fires


STRONG = {"minimumPasswordLength": 14, "maxPasswordAge": 90, "passwordReusePrevention": 24,
          "maxLoginAttempts": 5}


@pytest.mark.parametrize("token, props, fires", [
    (sorted(t.RAM_PASSWORD_POLICIES)[0], {}, True),  # provider defaults: 12, no expiry
    (sorted(t.RAM_PASSWORD_POLICIES)[0], STRONG, False),
    (sorted(t.RAM_PASSWORD_POLICIES)[0], {**STRONG, "requireSymbols": False}, True),
    (t.RAM_PASSWORD_POLICY, {**STRONG, "maxLoginAttempts": None, "maxLoginAttemps": 9}, True),
    (t.RAM_PASSWORD_POLICY, {k: v for k, v in STRONG.items() if k != "maxLoginAttempts"}
     | {"maxLoginAttemps": 3}, False),
])
def test_password_policy(token, props, fires):
    props = {k: v for k, v in props.items() if v is not None}
    assert bool(messages("ram-password-policy", Resource(token, props))) is fires


# --- data ----------------------------------------------------------------------------------

@pytest.mark.parametrize("resource, fires", [
    (Resource(t.BUCKET, {"serverSideEncryptionRule": {"sseAlgorithm": "AES256"}}), True),
    (Resource(t.BUCKET, {"serverSideEncryptionRule": {"sseAlgorithm": "KMS",
                                                      "kmsMasterKeyId": "k"}}), False),
    (Resource(t.NAS_FILE_SYSTEM, {"fileSystemType": "extreme", "encryptType": 1}), True),
    (Resource(t.NAS_FILE_SYSTEM, {"fileSystemType": "standard", "encryptType": 1}), False),
    (Resource(t.RDS_INSTANCE, {}), True), (Resource(t.RDS_INSTANCE, {"encryptionKey": "k"}), False),
    (Resource(t.MONGODB_INSTANCE, {"tdeStatus": "enabled"}), False),
    (Resource(t.POLARDB_CLUSTER, {"tdeStatus": "Disabled"}), True),
    (Resource(t.KVSTORE_INSTANCE, {}), False),
    (Resource(t.MANAGED_KUBERNETES, {}), True),
    (Resource(t.ACK_SERVERLESS, {"encryptionProviderKey": "k"}), False),
    (Resource(t.LOG_STORE, {}), True),
    (Resource(t.LOG_STORE, {"encryptConf": {"enable": True, "encryptType": "default"}}), False),
])
def test_prod_customer_keys_across_types(resource, fires):
    assert bool(stack_messages("prod-customer-keys", [resource], PROD_CTX)) is fires
    assert stack_messages("prod-customer-keys", [resource], Context("dev")) == []


@pytest.mark.parametrize("props, fires", [
    ({"vaultName": "v"}, True), ({"encryptType": "HBR_PRIVATE"}, True),
    ({"encryptType": "KMS"}, True), ({"encryptType": "KMS", "kmsKeyId": "k"}, False)])
def test_prod_backup_vaults_encrypt_with_a_kms_key(props, fires):
    vault = Resource(t.HBR_VAULT, props)
    assert bool(messages("prod-backup-vault-kms", vault, PROD_CTX)) is fires
    assert messages("prod-backup-vault-kms", vault, Context("dev")) == []


def test_bucket_customer_key_through_a_companion():
    bucket = Resource(t.BUCKET, {"bucket": "b"}, "b", "urn:b", id="b")
    sse = Resource(t.BUCKET_ENCRYPTION, {"bucket": "b", "sseAlgorithm": "KMS",
                                         "kmsMasterKeyId": "k"}, "sse")
    assert stack_messages("prod-customer-keys", [bucket, sse], PROD_CTX) == []
    aes = Resource(t.BUCKET_ENCRYPTION, {"bucket": "b", "sseAlgorithm": "AES256"}, "sse")
    assert stack_messages("prod-customer-keys", [bucket, aes], PROD_CTX)


def test_account_public_access_block_covers_every_bucket():
    bucket = Resource(t.BUCKET, {"bucket": "b"}, "b", "urn:b")
    assert stack_messages("oss-public-access-blocked", [bucket])
    account = Resource(t.ACCOUNT_PUBLIC_ACCESS_BLOCK, {"blockPublicAccess": True}, "acct")
    assert stack_messages("oss-public-access-blocked", [bucket, account]) == []
    off = Resource(t.ACCOUNT_PUBLIC_ACCESS_BLOCK, {"blockPublicAccess": False}, "acct")
    assert ("acct", "blockPublicAccess is false") in stack_messages(
        "oss-public-access-blocked", [bucket, off])


@pytest.mark.parametrize("token, props, fires", [
    (t.IMAGE_SHARE, {"accountId": "999"}, True), (t.IMAGE_SHARE, {"accountId": "5555"}, False),
    (t.IMAGE_PIPELINE, {"addAccounts": ["5555", "999"]}, True),
    (t.IMAGE_PIPELINE, {"addAccounts": [UNKNOWN]}, False),
])
def test_image_sharing(token, props, fires):
    found = messages("no-foreign-data-sharing", Resource(token, props), trustedAccounts=["5555"])
    assert bool(found) is fires


@pytest.mark.parametrize("token", [t.KMS_KEY, t.KMS_SECRET, t.LOG_PROJECT])
def test_resource_policies_of_keys_secrets_and_projects(token):
    open_to_all = Resource(token, {"policy": doc({"Effect": "Allow", "Action": ["kms:Decrypt"],
                                                  "Principal": {"RAM": ["acs:ram::*:root"]},
                                                  "Resource": ["*"]})})
    assert messages("no-anonymous-resource-policies", open_to_all)
    named = Resource(token, {"policy": doc({"Effect": "Allow", "Action": ["kms:Decrypt"],
                                            "Principal": {"RAM": ["acs:ram::123:root"]},
                                            "Resource": ["*"]})})
    assert messages("no-anonymous-resource-policies", named) == []


@pytest.mark.parametrize("props, fires", [
    ({"automaticRotation": "Enabled", "rotationInterval": "31536000s"}, False),
    ({"automaticRotation": "Enabled", "rotationInterval": "400d"}, True),
    ({"automaticRotation": "Enabled", "rotationInterval": 31536001}, True),
    ({"automaticRotation": "Enabled", "rotationInterval": UNKNOWN}, False),
])
def test_rotation_interval_at_most_a_year(props, fires):
    assert bool(messages("kms-key-rotation", Resource(t.KMS_KEY, props))) is fires


@pytest.mark.parametrize("props, fires", [({}, False), ({"isEnabled": False}, True),
                                          ({"status": "PendingDeletion"}, True),
                                          ({"keyState": "Disabled"}, True)])
def test_key_usable(props, fires):
    assert bool(messages("kms-key-usable", Resource(t.KMS_KEY, props))) is fires


def test_website_and_cors():
    assert messages("oss-browser-access", Resource(t.BUCKET_WEBSITE, {"bucket": "b"}))
    assert messages("oss-browser-access", Resource(t.BUCKET, {"website": {"indexDocument": "i"}}))
    cors = [{"allowedOrigins": ["https://app.example.com"], "allowedMethods": ["GET"]}]
    assert messages("oss-browser-access", Resource(t.BUCKET_CORS, {"corsRules": cors})) == []


# --- audit and logs ------------------------------------------------------------------------

@pytest.mark.parametrize("props, fires", [
    ({"eventRw": "All", "trailRegion": "All", "ossBucketName": "b"}, False),
    ({"trailRegion": "All", "ossBucketName": "b"}, True),  # eventRw defaults to Write
    ({"eventRw": "All", "trailRegion": "All"}, True),  # writes nowhere
    ({"eventRw": "All", "trailRegion": "All", "slsProjectArn": "acs:log:...",
      "status": "Disable"}, True),
])
def test_trails(props, fires):
    assert bool(stack_messages("actiontrail-complete",
                               [Resource(t.ACTIONTRAIL_TRAIL, props, "trail")])) is fires


def test_trail_to_a_public_bucket_through_a_bucket_acl():
    trail = Resource(t.ACTIONTRAIL_TRAIL, {"eventRw": "All", "trailRegion": "All",
                                           "ossBucketName": "logs"}, "trail")
    bucket = Resource(t.BUCKET, {"bucket": "logs"}, "logs", "urn:logs", id="logs")
    acl = Resource(t.BUCKET_ACL, {"bucket": "logs", "acl": "public-read"}, "acl")
    assert [n for n, _ in stack_messages("actiontrail-complete", [trail, bucket, acl])] == [
        "trail"]
    assert stack_messages("actiontrail-complete", [trail, bucket]) == []


@pytest.mark.parametrize("props, environment, fires", [
    ({}, "prod", True), ({"retentionPeriod": 90}, "prod", False),
    ({"retentionPeriod": 30}, "dev", False), ({"retentionPeriod": UNKNOWN}, "prod", False),
])
def test_prod_log_retention(props, environment, fires):
    found = messages("prod-log-retention", Resource(t.LOG_STORE, props), Context(environment))
    assert bool(found) is fires


@pytest.mark.parametrize("resource, fires", [
    (Resource(t.ALB_LOAD_BALANCER, {"tags": PROD}), True),
    (Resource(t.ALB_LOAD_BALANCER, {"tags": PROD, "accessLogConfig": {
        "logProject": "p", "logStore": "s"}}), False),
    (Resource(t.RDS_INSTANCE, {"tags": PROD, "engine": "MySQL", "sqlCollectorStatus": "Enabled",
                               "sqlCollectorConfigValue": 365}), False),
    (Resource(t.RDS_INSTANCE, {"tags": PROD, "engine": "PostgreSQL",
                               "sqlCollectorStatus": "Enabled",
                               "sqlCollectorConfigValue": 365}), True),
    (Resource(t.MANAGED_KUBERNETES, {"tags": PROD}), True),
    (Resource(t.MANAGED_KUBERNETES, {"tags": PROD, "controlPlaneLogComponents": ["apiserver"]}),
     False),
    (Resource(t.ALB_LOAD_BALANCER, {"tags": TAGS}), False),
])
def test_prod_access_logs(resource, fires):
    assert bool(messages("prod-access-logs", resource)) is fires


def test_log_audit_and_flow_logs():
    assert messages("log-audit-complete", Resource(t.LOG_AUDIT, {"variableMap": {}}))
    vpc = Resource(t.VPC, {"tags": PROD}, "vpc", "urn:vpc", id="vpc-1")
    assert stack_messages("prod-vpc-flow-logs", [vpc])
    flow = Resource(t.FLOW_LOG, {"resourceId": "vpc-1", "resourceType": "VPC"}, "flow")
    assert stack_messages("prod-vpc-flow-logs", [vpc, flow]) == []


# --- Kubernetes and registries -------------------------------------------------------------

@pytest.mark.parametrize("token, props, fires", [
    (t.MANAGED_KUBERNETES, {}, True), (t.ACK_DEDICATED, {"slbInternetEnabled": True}, True),
    (t.MANAGED_KUBERNETES, {"slbInternetEnabled": False}, False),
    (t.ACK_SERVERLESS, {}, False), (t.ACK_SERVERLESS, {"endpointPublicAccessEnabled": True}, True),
])
def test_ack_api_endpoint(token, props, fires):
    assert bool(messages("ack-private-api-endpoint", Resource(token, props))) is fires


@pytest.mark.parametrize("token, props, fires", [
    (t.MANAGED_KUBERNETES, {}, True), (t.MANAGED_KUBERNETES, {"enableRrsa": True}, False),
    (t.ACK_SERVERLESS, {"enableRrsa": False}, True), (t.MANAGED_KUBERNETES, {"enableRrsa": UNKNOWN},
                                                      False),
])
def test_ack_rrsa(token, props, fires):
    assert bool(messages("ack-rrsa", Resource(token, props))) is fires


@pytest.mark.parametrize("props, fires", [
    ({"addons": [{"name": "terway-eniip"}]}, False), ({"podVswitchIds": ["vsw-p"]}, False),
    ({"podCidr": "172.20.0.0/16", "addons": [{"name": "flannel"}]}, True), ({}, True),
    ({"podVswitchIds": ["vsw-p"], "addons": [
        {"name": "terway-eniip", "config": '{"IPVlan": "false", "NetworkPolicy": "false"}'}]},
     True),
    ({"addons": [{"name": "terway-eniip", "config": '{"NetworkPolicy": "true"}'}]}, False),
])
def test_network_policy_cni(props, fires):
    assert bool(messages("ack-network-policy-cni", Resource(t.MANAGED_KUBERNETES, props))) is fires


def test_pinned_addons():
    assert messages("ack-addons-pinned", Resource(t.KUBERNETES_ADDON, {"name": "x"}))
    pinned = Resource(t.KUBERNETES_ADDON, {"name": "x", "version": "1"})
    assert messages("ack-addons-pinned", pinned) == []
    cluster = Resource(t.MANAGED_KUBERNETES, {"addons": [{"name": "a", "version": "1.0"},
                                                  {"name": "b"}, {"name": "c", "disabled": True}]})
    assert messages("ack-addons-pinned", cluster) == ["addons: b has no version; pin one"]


@pytest.mark.parametrize("token, props, fires", [
    (t.REGISTRY_NAMESPACE, {"defaultVisibility": "PUBLIC"}, True),
    (t.REGISTRY_NAMESPACE, {"defaultVisibility": "PRIVATE"}, False),
    (t.REGISTRY_REPO, {"repoType": "PUBLIC"}, True),
    (t.REGISTRY_EE_REPO, {"repoType": "public"}, True),
    (t.REGISTRY_EE_NAMESPACE, {}, False), (t.CR_CHART_REPOSITORY, {"repoType": "PUBLIC"}, True),
    (t.CR_CHART_NAMESPACE, {"defaultRepoType": "PRIVATE"}, False),
])
def test_private_registries(token, props, fires):
    assert bool(messages("registry-private", Resource(token, props))) is fires


def pod(spec: dict, namespace: str = "ml") -> Resource:
    return Resource(t.K8S_POD, {"metadata": {"name": "p", "namespace": namespace},
                                "spec": spec})


@pytest.mark.parametrize("spec, fires", [
    ({"containers": [{"name": "c", "securityContext": {"privileged": True}}]}, True),
    ({"hostNetwork": True, "containers": [{"name": "c"}]}, True),
    ({"hostPID": True, "containers": [{"name": "c"}]}, True),
    ({"volumes": [{"name": "v", "hostPath": {"path": "/var/run/docker.sock"}}],
      "containers": [{"name": "c"}]}, True),
    ({"containers": [{"name": "c", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]},
     True),
    ({"containers": [{"name": "c", "ports": [{"containerPort": 22, "hostPort": 22}]}]}, True),
    ({"initContainers": [{"name": "i", "securityContext": {"allowPrivilegeEscalation": True}}],
      "containers": [{"name": "c"}]}, True),
    ({"containers": [{"name": "c", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}}]},
     False),
    ({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}, False),
])
def test_pod_baseline(spec, fires):
    assert bool(messages("k8s-pod-security", pod(spec))) is fires
    assert messages("k8s-pod-security", pod(spec, "kube-system")) == []


@pytest.mark.parametrize("token, spec", [
    (t.K8S_DEPLOYMENT, {"template": {"spec": {"hostNetwork": True}}}),
    (t.K8S_DAEMON_SET, {"template": {"spec": {"hostNetwork": True}}}),
    (t.K8S_CRON_JOB, {"jobTemplate": {"spec": {"template": {"spec": {"hostNetwork": True}}}}}),
])
def test_pod_baseline_reads_every_controller(token, spec):
    [found] = messages("k8s-pod-security", Resource(token, {"metadata": {}, "spec": spec}))
    assert "hostNetwork true" in found


def test_node_pool_auto_repair():
    assert messages("node-pool-auto-repair", Resource(t.NODE_POOL, {}))
    assert messages("node-pool-auto-repair", Resource(t.NODE_POOL, {
        "management": {"enable": True, "autoRepair": True}})) == []


PROTECTION_CASES = {
    # token: (what the message calls it, the input it names, protected, unprotected)
    t.INSTANCE: ("node", "deletionProtection", [{"deletionProtection": True}],
                 [{"deletionProtection": False}]),
    t.ECS_INSTANCE_SET: ("node", "deletionProtection", [{"deletionProtection": "true"}],
                         [{"deletionProtection": False}]),
    t.MANAGED_KUBERNETES: ("ManagedKubernetes", "deletionProtection",
                           [{"deletionProtection": True}], [{"deletionProtection": False}]),
    t.ACK_DEDICATED: ("Kubernetes", "deletionProtection", [{"deletionProtection": True}],
                      [{"deletionProtection": False}]),
    t.ACK_SERVERLESS: ("ServerlessKubernetes", "deletionProtection",
                       [{"deletionProtection": True}], [{"deletionProtection": False}]),
    t.RDS_INSTANCE: ("Instance", "deletionProtection", [{"deletionProtection": True}],
                     [{"deletionProtection": False}]),
    t.POLARDB_CLUSTER: ("Cluster", "deletionLock", [{"deletionLock": 1}, {"deletionLock": 1.0}],
                        [{"deletionLock": 0}, {"deletionLock": "true"}]),
    t.KVSTORE_INSTANCE: ("Instance", "instanceReleaseProtection",
                         [{"instanceReleaseProtection": True}],
                         [{"instanceReleaseProtection": False}]),
    t.MONGODB_INSTANCE: ("Instance", "dbInstanceReleaseProtection",
                         [{"dbInstanceReleaseProtection": True}],
                         [{"dbInstanceReleaseProtection": False}]),
    t.ALB_LOAD_BALANCER: ("LoadBalancer", "deletionProtectionEnabled",
                          [{"deletionProtectionEnabled": True},
                           {"deletionProtectionConfig": {"enabled": True}}],
                          [{"deletionProtectionConfig": {"enabled": False}}]),
    t.NLB_LOAD_BALANCER: ("LoadBalancer", "deletionProtectionEnabled",
                          [{"deletionProtectionEnabled": True},
                           {"deletionProtectionConfig": {"enabled": True}}],
                          [{"deletionProtectionEnabled": False}]),
    t.SLB_LOAD_BALANCER: ("LoadBalancer", "deleteProtection", [{"deleteProtection": "on"}],
                          [{"deleteProtection": "off"}]),
    t.KMS_KEY: ("Key", "deletionProtection", [{"deletionProtection": "Enabled"}],
                [{"deletionProtection": "Disabled"}, {"deletionProtection": True}]),
}
"""Per type the prod rule protects: hostile inputs it catches and protected ones it passes."""


def test_protection_cases_cover_every_protected_type():
    assert set(PROTECTION_CASES) == PROTECTED_IN_PROD


@pytest.mark.parametrize("token", sorted(PROTECTION_CASES))
def test_prod_deletion_protection_catches_each_type_unprotected(token):
    kind, key, _, unprotected = PROTECTION_CASES[token]
    for props in [{}, *unprotected]:
        assert messages("prod-deletion-protection", Resource(token, {**props, "tags": PROD})) \
            == [f"prod {kind} without {key}; turn it on"], props


@pytest.mark.parametrize("token", sorted(PROTECTION_CASES))
def test_prod_deletion_protection_passes_each_type_protected(token):
    _, key, protected, _ = PROTECTION_CASES[token]
    for props in [*protected, {key: UNKNOWN}]:
        assert messages("prod-deletion-protection",
                        Resource(token, {**props, "tags": PROD})) == [], props
    assert messages("prod-deletion-protection", Resource(token, {"tags": TAGS})) == []


@pytest.mark.parametrize("token", [t.NAT_GATEWAY, t.SCALING_GROUP, t.EIP_ADDRESS])
def test_prod_deletion_protection_leaves_other_protectable_types_alone(token):
    assert protection(token).inputs  # they can refuse deletion; the rule does not demand it
    assert messages("prod-deletion-protection", Resource(token, {"tags": PROD})) == []


@pytest.mark.parametrize("token, props, fires", [
    (t.MONGODB_INSTANCE, {}, True), (t.MONGODB_INSTANCE, {"networkType": "Classic"}, True),
    (t.MONGODB_INSTANCE, {"vswitchId": "vsw-1"}, False), (t.RDS_INSTANCE, {}, True),
    (t.KVSTORE_INSTANCE, {"vswitchId": "vsw-1"}, False),
])
def test_databases_in_vpc(token, props, fires):
    assert bool(messages("databases-in-vpc", Resource(token, props))) is fires


@pytest.mark.parametrize("token, props, fires", [
    (t.K8S_CLUSTER_ROLE, {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]},
     True),
    (t.K8S_ROLE, {"rules": [{"resources": ["roles"], "verbs": ["bind", "get"]}]}, True),
    (t.K8S_ROLE, {"rules": [{"resources": ["pods"], "verbs": ["get", "list"]}]}, False),
    (t.K8S_CLUSTER_ROLE_BINDING, {"roleRef": {"name": "cluster-admin"}, "subjects": [
        {"kind": "ServiceAccount", "name": "trainer", "namespace": "ml"}]}, True),
    (t.K8S_CLUSTER_ROLE_BINDING, {"roleRef": {"name": "cluster-admin"}, "subjects": [
        {"kind": "Group", "name": "system:masters"}]}, False),
    (t.K8S_ROLE_BINDING, {"roleRef": {"name": "view"}, "subjects": [{"name": "alice"}]}, False),
])
def test_rbac(token, props, fires):
    assert bool(messages("k8s-rbac-least-privilege", Resource(token, props))) is fires


@pytest.mark.parametrize("props, fires", [
    ({"destinationCidrblock": "0.0.0.0/0", "nexthopType": "Instance", "nexthopId": "i-1"}, True),
    ({"destinationCidrblock": "10.8.0.0/16", "nexthopType": "HaVip", "nexthopId": "havip-1"},
     True),
    ({"destinationCidrblock": "0.0.0.0/0", "nexthopType": "NatGateway", "nexthopId": "ngw-1"},
     False),
    ({"destinationCidrblock": "172.16.0.0/12", "nexthopType": "VpnGateway"}, False),
])
def test_routes_through_instances(props, fires):
    assert bool(messages("routes-through-instances", Resource(t.ROUTE_ENTRY, props))) is fires


def test_eci_container_groups():
    group = Resource(t.ECI_CONTAINER_GROUP, {"autoCreateEip": True, "containers": [{
        "name": "infer", "image": "r/i:1", "commands": ["sh", "-c", "curl http://x.example/m"],
        "environmentVars": [{"key": "HF_TOKEN", "value": "hf_" + "c" * 34}]}],
        "plainHttpRegistry": "registry.example.com"})
    assert messages("no-public-ip-on-nodes", group)
    assert len(messages("no-plain-http-downloads", group)) == 2
    assert "a Hugging Face token" in messages("no-plaintext-secrets", group)[0]
    private = Resource(t.ECI_CONTAINER_GROUP, {"containers": [{"name": "c", "image": "r/i:1"}]})
    for rule in ("no-public-ip-on-nodes", "no-plain-http-downloads", "no-plaintext-secrets"):
        assert messages(rule, private) == []


@pytest.mark.parametrize("props, fires", [
    ({"dataDisks": [{"diskSize": 100, "encrypted": True}]}, True),  # system disk: no input
    ({"launchTemplateId": "lt-1", "dataDisks": [{"diskSize": 100, "encrypted": True}]}, False),
    ({"launchTemplateId": "lt-1", "dataDisks": [{"diskSize": 100}]}, True),
])
def test_instance_sets_disks(props, fires):
    assert bool(messages("disks-encrypted", Resource(t.ECS_INSTANCE_SET, props))) is fires
    assert messages("no-public-ip-on-nodes", Resource(t.ECS_INSTANCE_SET, {
        "internetMaxBandwidthOut": 10}))


@pytest.mark.parametrize("kind, fires", [("NetworkInterface", True), ("HaVip", True),
                                         ("Nat", False), ("SlbInstance", False)])
def test_eip_on_interfaces(kind, fires):
    association = Resource(t.EIP_ASSOCIATION, {"instanceId": "x-1", "instanceType": kind}, "eip")
    assert bool(stack_messages("no-eip-on-nodes", [association])) is fires


@pytest.mark.parametrize("action", ["fc:CreateFunction", "eci:CreateContainerGroup",
                                    "oos:StartExecution", "cs:CreateCluster"])
def test_pass_role_with_any_compute(action):
    policy = Resource(t.RAM_POLICY, {"policyDocument": doc(
        {"Effect": "Allow", "Action": ["ram:PassRole", action], "Resource": "*"})})
    assert any(m.startswith("policy allows ram:PassRole on any role together with")
               for m in messages("ram-no-privilege-escalation", policy))


def test_secrets_in_descriptions_and_aws_secret_keys():
    user = Resource("alicloud:ram/user:User", {"name": "ci", "comments": "password=Sup3rS3cret99"})
    assert messages("no-plaintext-secrets", user)
    aws = "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    assert "an AccessKey secret" in messages("no-plaintext-secrets", Resource(
        t.K8S_CONFIG_MAP, {"data": {"credentials": aws}}))[0]


def test_rule_type_and_policy_in_any_case():
    rule = Resource(t.SECURITY_GROUP_RULE, {"type": "Ingress", "policy": "Accept",
                                            "ipProtocol": "tcp", "portRange": "22/22",
                                            "cidrIp": "0.0.0.0/0"}, "r")
    assert stack_messages("no-world-ingress", [rule])


@pytest.mark.parametrize("props, fires", [
    ({"triggerType": "http", "triggerConfig": json.dumps({"authType": "anonymous"})}, True),
    ({"triggerType": "http", "triggerConfig": json.dumps({"methods": ["GET"]})}, False),
    ({"triggerType": "http", "triggerConfig": json.dumps({"authType": "function"})}, False),
    ({"triggerType": "http", "triggerConfig": json.dumps(
        {"authType": "anonymous", "disableURLInternet": True})}, False),
    ({"triggerType": "timer", "triggerConfig": json.dumps({"cronExpression": "@every 1m"})},
     False)])
def test_function_triggers_take_no_anonymous_internet_calls(props, fires):
    assert bool(messages("fc-triggers-authenticated", Resource(t.FC_TRIGGER, props))) is fires
