"""Every policy rule fires on a bad resource and stays quiet on a good one, including absent
(provider default) and unknown (preview) properties."""

from __future__ import annotations

import json

import pytest

from gpu_infra_policies import types as t
from gpu_infra_policies.base import UNKNOWN, Context, Resource
from gpu_infra_policies.rules import RULES, RULES_BY_NAME, default_settings, evaluate

TAGS = {"CostCenter": "cc", "Owner": "me", "Project": "gpu-infra", "Environment": "dev"}
PROD = {**TAGS, "Environment": "prod"}


def messages(rule_name: str, resource: Resource, ctx: Context | None = None,
             **thresholds) -> list[str]:
    rule = RULES_BY_NAME[rule_name]
    assert not rule.stack
    return list(rule.check(resource, {**rule.defaults, **thresholds}, ctx or Context()))


def stack_messages(rule_name: str, resources: list[Resource], ctx: Context | None = None,
                   **thresholds) -> list[tuple[str | None, str]]:
    rule = RULES_BY_NAME[rule_name]
    assert rule.stack
    return [(r.name if r else None, m) for r, m in
            rule.check(resources, {**rule.defaults, **thresholds}, ctx or Context())]


def sg_rule(**props) -> Resource:
    return Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp", **props},
                    "rule")


# --- rule metadata --------------------------------------------------------------------

def test_rule_metadata_is_complete_and_levels_follow_category():
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names)) == 20
    for rule in RULES:
        assert rule.description and rule.remediation
        assert rule.severity in ("low", "medium", "high", "critical")
        assert set(rule.defaults) <= set(rule.schema), rule.name
    levels = {rule.name: rule.default_enforcement for rule in RULES}
    assert all(levels[r.name] == "mandatory" for r in RULES if r.category == "security")
    assert levels["monthly-budget"] == "disabled"
    assert all(levels[r.name] == "advisory" for r in RULES
               if r.category != "security" and r.name != "monthly-budget")


def test_taggable_types_take_tags_in_the_sdk():
    import inspect

    import pulumi_alicloud as alicloud
    for token in t.TAGGABLE:
        module, rest = token.split(":")[1].split("/")
        cls = getattr(getattr(alicloud, module), token.split(":")[2])
        assert "tags" in inspect.signature(cls._internal_init).parameters, token


# --- security ---------------------------------------------------------------------------

@pytest.mark.parametrize("props, expected", [
    ({"cidrIp": "0.0.0.0/0", "portRange": "22/22"}, "ingress from 0.0.0.0/0 to port 22/22 (tcp)"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "3389/3389"}, "port 3389/3389"),
    ({"ipv6CidrIp": "::/0", "portRange": "443/443"}, "ingress from ::/0 to port 443/443"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "-1/-1", "ipProtocol": "all"}, "to all ports"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "1/65535"}, "to all ports"),
])
def test_world_ingress_fires(props, expected):
    found = stack_messages("no-world-ingress", [sg_rule(**props)])
    assert len(found) == 1 and expected in found[0][1]


@pytest.mark.parametrize("props", [
    {"cidrIp": "10.0.0.0/8", "portRange": "22/22"},
    {"cidrIp": "0.0.0.0/0", "portRange": "22/22", "policy": "drop"},
    {"cidrIp": "0.0.0.0/0", "portRange": "22/22", "type": "egress"},
    {"cidrIp": UNKNOWN, "portRange": "22/22"},
    {"sourceSecurityGroupId": UNKNOWN, "portRange": "-1/-1"},
])
def test_world_ingress_quiet(props):
    assert stack_messages("no-world-ingress", [sg_rule(**props)]) == []


@pytest.mark.parametrize("token, key", [(t.ALB_LISTENER, "listenerPort"),
                                        (t.NLB_LISTENER, "listenerPort"),
                                        (t.SLB_LISTENER, "frontendPort")])
def test_listener_ports(token, key):
    assert stack_messages("no-world-ingress", [Resource(token, {key: 443})]) == []
    assert stack_messages("no-world-ingress", [Resource(token, {key: UNKNOWN})]) == []
    assert stack_messages("no-world-ingress", [Resource(token, {key: 8000}, "l")]) == [
        ("l", "load balancer listener on port 8000 is reachable from anywhere; public ports "
              "allowed: [80, 443]")]
    assert stack_messages("no-world-ingress", [Resource(token, {key: 8000})],
                          publicListenerPorts=[8000.0]) == []


@pytest.mark.parametrize("address", ["Intranet", "intranet"])
def test_listener_of_intranet_load_balancer_is_not_public(address):
    balancer = Resource(t.LOAD_BALANCERS[1], {"addressType": address}, "lb", urn="urn:lb")
    listener = Resource(t.NLB_LISTENER, {"listenerPort": 8000}, "l",
                        dependencies=("urn:lb",))
    assert stack_messages("no-world-ingress", [balancer, listener]) == []
    internet = Resource(t.LOAD_BALANCERS[1], {"addressType": "Internet"}, "lb", urn="urn:lb")
    assert [m for _, m in stack_messages("no-world-ingress", [internet, listener])] == [
        "load balancer listener on port 8000 is reachable from anywhere; public ports "
        "allowed: [80, 443]"]


def test_world_open_public_port_allowed_only_on_a_load_balancer_group():
    group = Resource(t.SECURITY_GROUP, {}, "lb-sg", urn="urn:sg", id="sg-1")
    balancer = Resource(t.LOAD_BALANCERS[1], {"securityGroupIds": ["sg-1"],
                                              "addressType": "Internet"}, "lb")
    https = sg_rule(cidrIp="0.0.0.0/0", portRange="443/443", securityGroupId="sg-1")
    ssh = sg_rule(cidrIp="0.0.0.0/0", portRange="22/22", securityGroupId="sg-1")
    assert stack_messages("no-world-ingress", [group, balancer, https]) == []
    assert len(stack_messages("no-world-ingress", [group, balancer, ssh])) == 1
    assert len(stack_messages("no-world-ingress", [group, https])) == 1


@pytest.mark.parametrize("token", [t.INSTANCE, t.SCALING_CONFIGURATION])
def test_public_ip(token):
    assert messages("no-public-ip-on-nodes", Resource(token, {"internetMaxBandwidthOut": 10})) \
        == ["internetMaxBandwidthOut 10 gives the node a public IP; set 0 and reach nodes "
            "through a bastion, VPN or load balancer"]
    for props in ({}, {"internetMaxBandwidthOut": 0}, {"internetMaxBandwidthOut": UNKNOWN}):
        assert messages("no-public-ip-on-nodes", Resource(token, props)) == []


def test_eip_on_instance_by_dependency_and_by_id():
    node = Resource(t.INSTANCE, {}, "node-0", "urn:node", id="i-1")
    nat = Resource("alicloud:vpc/natGateway:NatGateway", {}, "nat", "urn:nat", id="ngw-1")
    by_dep = Resource(t.EIP_ASSOCIATION, {"instanceId": UNKNOWN}, "assoc", "urn:a",
                      dependencies=("urn:node",))
    by_id = Resource(t.EIP_ASSOCIATION, {"instanceId": "i-1"}, "assoc2", "urn:b")
    to_nat = Resource(t.EIP_ASSOCIATION, {"instanceId": "ngw-1", "instanceType": "Nat"},
                      "assoc3", "urn:c", dependencies=("urn:nat",))
    assert stack_messages("no-eip-on-nodes", [node, nat, by_dep, by_id, to_nat]) == [
        ("assoc", "an EIP is bound to instance node-0"),
        ("assoc2", "an EIP is bound to instance node-0")]
    assert stack_messages("no-eip-on-nodes", [node, nat, to_nat]) == []


def test_disk_encryption_instance():
    bad = Resource(t.INSTANCE, {"dataDisks": [{"size": 100}, {"encrypted": True}]})
    assert messages("disks-encrypted", bad) == ["system disk is not encrypted",
                                                "dataDisks[0] is not encrypted"]
    good = Resource(t.INSTANCE, {"systemDiskEncrypted": True, "dataDisks": [{"encrypted": True}]})
    assert messages("disks-encrypted", good) == []
    unknown = Resource(t.INSTANCE, {"systemDiskEncrypted": UNKNOWN, "dataDisks": UNKNOWN})
    assert messages("disks-encrypted", unknown) == []


def test_disk_encryption_kms_in_prod():
    disk = {"encrypted": True}
    assert messages("disks-encrypted", Resource(t.ECS_DISK, disk)) == []
    prod_by_tag = Resource(t.ECS_DISK, {**disk, "tags": PROD})
    expected = ["disk is encrypted without a KMS key (kmsKeyId), required in prod"]
    assert messages("disks-encrypted", prod_by_tag) == expected
    assert messages("disks-encrypted", Resource(t.ECS_DISK, disk), Context("prod")) == expected
    assert messages("disks-encrypted", prod_by_tag, kmsInProd=False) == []
    with_key = Resource(t.ECS_DISK, {**disk, "kmsKeyId": UNKNOWN, "tags": PROD})
    assert messages("disks-encrypted", with_key) == []
    config = Resource(t.SCALING_CONFIGURATION, {"systemDiskEncrypted": True,
                                                "dataDisks": [{"encrypted": True}]})
    assert messages("disks-encrypted", config, Context("prod")) == [
        "system disk is encrypted without a KMS key (kmsKeyId), required in prod",
        "dataDisks[0] is encrypted without a KMS key (kmsKeyId), required in prod"]
    assert messages("disks-encrypted", Resource(t.ECS_DISK, {})) == ["disk is not encrypted"]


def test_bucket_acl():
    assert messages("oss-bucket-private", Resource(t.BUCKET_ACL, {"acl": "public-read"})) == [
        "bucket ACL public-read makes objects public; use private"]
    assert messages("oss-bucket-private", Resource(t.BUCKET, {"acl": "public-read-write"}))
    for props in ({"acl": "private"}, {}, {"acl": UNKNOWN}):
        assert messages("oss-bucket-private", Resource(t.BUCKET_ACL, props)) == []


def _bucket(**props) -> Resource:
    return Resource(t.BUCKET, {"bucket": "ckpt", **props}, "ckpt", "urn:bucket", id="ckpt")


def test_bucket_encrypted():
    assert stack_messages("oss-bucket-encrypted", [_bucket()]) == [
        ("ckpt", "bucket has no server-side encryption (serverSideEncryptionRule or "
                 "oss.BucketServerSideEncryption)")]
    inline = _bucket(serverSideEncryptionRule={"sseAlgorithm": "KMS"})
    assert stack_messages("oss-bucket-encrypted", [inline]) == []
    by_name = Resource(t.BUCKET_ENCRYPTION, {"bucket": "ckpt", "sseAlgorithm": "AES256"})
    by_dep = Resource(t.BUCKET_ENCRYPTION, {"bucket": UNKNOWN}, dependencies=("urn:bucket",))
    assert stack_messages("oss-bucket-encrypted", [_bucket(), by_name]) == []
    assert stack_messages("oss-bucket-encrypted", [_bucket(), by_dep]) == []


def test_public_access_blocked():
    missing = "bucket has no oss.BucketPublicAccessBlock with blockPublicAccess true"
    assert stack_messages("oss-public-access-blocked", [_bucket()]) == [("ckpt", missing)]
    off = Resource(t.BUCKET_PUBLIC_ACCESS_BLOCK, {"bucket": "ckpt", "blockPublicAccess": False},
                   "pab")
    assert stack_messages("oss-public-access-blocked", [_bucket(), off]) == [
        ("pab", "blockPublicAccess is false"), ("ckpt", missing)]
    for value in (True, UNKNOWN):
        on = Resource(t.BUCKET_PUBLIC_ACCESS_BLOCK, {"bucket": "ckpt", "blockPublicAccess": value})
        assert stack_messages("oss-public-access-blocked", [_bucket(), on]) == []


def test_nas_world_access():
    assert messages("nas-no-world-access", Resource(t.NAS_ACCESS_RULE,
                                                    {"sourceCidrIp": "0.0.0.0/0"})) == [
        "NAS access rule allows 0.0.0.0/0; list the VPC's CIDRs"]
    for props in ({"sourceCidrIp": "10.0.0.0/16"}, {"sourceCidrIp": UNKNOWN}, {}):
        assert messages("nas-no-world-access", Resource(t.NAS_ACCESS_RULE, props)) == []


@pytest.mark.parametrize("token", [t.INSTANCE, t.SCALING_CONFIGURATION])
def test_password_login(token):
    expected = ["password is set; log in with a key pair and no password"]
    assert messages("no-password-login", Resource(token, {"password": "hunter2"})) == expected
    # a secret or unknown password is still a password
    assert messages("no-password-login", Resource(token, {"password": "[secret]"})) == expected
    assert messages("no-password-login", Resource(token, {"password": UNKNOWN})) == expected
    assert messages("no-password-login", Resource(token, {"keyName": "k"})) == []


def _policy(statement: dict) -> Resource:
    return Resource(t.RAM_POLICY, {"policyDocument": json.dumps(
        {"Version": "1", "Statement": [statement]})})


@pytest.mark.parametrize("action", ["*", "ram:*", "*:*", ["oss:GetObject", "*"]])
def test_admin_policy_fires(action):
    found = messages("no-admin-policies", _policy(
        {"Effect": "Allow", "Action": action, "Resource": "*"}))
    assert len(found) == 1 and found[0].startswith("policy allows [")


@pytest.mark.parametrize("statement", [
    {"Effect": "Allow", "Action": "oss:GetObject", "Resource": "*"},
    {"Effect": "Allow", "Action": "*", "Resource": "acs:oss:*:*:ckpt/*"},
    {"Effect": "Deny", "Action": "*", "Resource": "*"},
])
def test_admin_policy_quiet(statement):
    assert messages("no-admin-policies", _policy(statement)) == []
    assert messages("no-admin-policies", Resource(t.RAM_POLICY, {"policyDocument": UNKNOWN})) \
        == []


def test_admin_policy_deprecated_statements_and_attachments():
    old = Resource(t.RAM_POLICY, {"statements": [
        {"effect": "Allow", "actions": ["*"], "resources": ["*"]}]})
    assert messages("no-admin-policies", old) == ["policy allows ['*'] on every resource"]
    attach = Resource(t.RAM_ROLE_POLICY_ATTACHMENT, {"policyType": "System", "roleName": "r",
                                                     "policyName": "AdministratorAccess"})
    assert messages("no-admin-policies", attach) == [
        "role r gets the admin-level system policy AdministratorAccess"]
    custom = Resource(t.RAM_ROLE_POLICY_ATTACHMENT, {"policyType": "Custom", "roleName": "r",
                                                     "policyName": "AdministratorAccess"})
    assert messages("no-admin-policies", custom) == []


# --- reliability --------------------------------------------------------------------------

@pytest.mark.parametrize("token", sorted(t.DATA_TYPES))
def test_prod_data_protected(token):
    expected = ["prod data resource is not protected (ResourceOptions(protect=True))"]
    assert messages("prod-data-protected", Resource(token, {"tags": PROD})) == expected
    assert messages("prod-data-protected", Resource(token, {}), Context("prod")) == expected
    assert messages("prod-data-protected", Resource(token, {"tags": PROD}, protect=True)) == []
    assert messages("prod-data-protected", Resource(token, {"tags": TAGS})) == []


def test_prod_data_versioned():
    ctx = Context("prod")
    assert stack_messages("prod-data-versioned", [_bucket()], ctx) == [
        ("ckpt", "prod bucket has no versioning (status Enabled)")]
    assert stack_messages("prod-data-versioned", [_bucket()]) == []
    assert stack_messages("prod-data-versioned", [_bucket(versioning={"status": "Enabled"})],
                          ctx) == []
    standalone = Resource(t.BUCKET_VERSIONING, {"bucket": "ckpt", "status": "Enabled"})
    assert stack_messages("prod-data-versioned", [_bucket(), standalone], ctx) == []
    suspended = Resource(t.BUCKET_VERSIONING, {"bucket": "ckpt", "status": "Suspended"})
    assert len(stack_messages("prod-data-versioned", [_bucket(), suspended], ctx)) == 1
    disk = Resource(t.ECS_DISK, {}, "disk", "urn:disk", id="d-1")
    assert stack_messages("prod-data-versioned", [disk], ctx) == [
        ("disk", "prod disk has no automatic snapshot policy")]
    attached = Resource(t.SNAPSHOT_POLICY_ATTACHMENT, {"diskId": "d-1",
                                                       "autoSnapshotPolicyId": "sp-1"})
    assert stack_messages("prod-data-versioned", [disk, attached], ctx) == []
    node = Resource(t.INSTANCE, {"dataDisks": [
        {"autoSnapshotPolicyId": "sp", "deleteWithInstance": False},
        {"deleteWithInstance": False}, {"name": "scratch"}]}, "node")
    assert stack_messages("prod-data-versioned", [node], ctx) == [
        ("node", "prod dataDisks[1] has no automatic snapshot policy (autoSnapshotPolicyId)")]


def test_inference_multi_zone():
    tags = {**TAGS, "Layout": "inference"}
    bad = Resource(t.SCALING_GROUP, {"tags": tags, "vswitchIds": ["vsw-a"]})
    assert messages("inference-multi-zone", bad) == [
        "inference fleet spans 1 vSwitch(es); use at least 2 in different zones",
        "onDemandBaseCapacity 0 is below 1: spot reclaims can take the whole service down"]
    good = Resource(t.SCALING_GROUP, {"tags": tags, "vswitchIds": ["a", "b"],
                                      "onDemandBaseCapacity": 1})
    assert messages("inference-multi-zone", good) == []
    unknown = Resource(t.SCALING_GROUP, {"tags": tags, "vswitchIds": UNKNOWN,
                                         "onDemandBaseCapacity": UNKNOWN})
    assert messages("inference-multi-zone", unknown) == []
    render = Resource(t.SCALING_GROUP, {"tags": {**TAGS, "Layout": "rendering"},
                                        "vswitchIds": ["a"]})
    assert messages("inference-multi-zone", render) == []
    assert messages("inference-multi-zone", bad, minZones=1.0, minOnDemandBase=0.0) == []


# --- cost -------------------------------------------------------------------------------

def test_required_tags():
    vpc = "alicloud:vpc/network:Network"
    assert messages("required-tags", Resource(vpc, {"tags": {"Project": "p"}})) == [
        "missing tags: CostCenter, Owner, Environment"]
    assert messages("required-tags", Resource(vpc, {})) == [
        "missing tags: CostCenter, Owner, Project, Environment"]
    assert messages("required-tags", Resource(vpc, {"tags": TAGS})) == []
    assert messages("required-tags", Resource(vpc, {"tags": UNKNOWN})) == []
    assert messages("required-tags", Resource(t.SECURITY_GROUP_RULE, {})) == []
    assert messages("required-tags", Resource(vpc, {"tags": {}}), requiredTags=["Team"]) == [
        "missing tags: Team"]


def test_spot_price_cap():
    capped = "SpotWithPriceLimit"
    assert messages("spot-price-cap", Resource(t.INSTANCE, {"spotStrategy": capped})) == [
        "spotStrategy SpotWithPriceLimit without a spotPriceLimit above 0"]
    assert messages("spot-price-cap", Resource(t.INSTANCE, {"spotStrategy": capped,
                                                            "spotPriceLimit": 0}))
    for props in ({"spotStrategy": capped, "spotPriceLimit": 4.5},
                  {"spotStrategy": capped, "spotPriceLimit": UNKNOWN},
                  {"spotStrategy": "SpotAsPriceGo"}, {}):
        assert messages("spot-price-cap", Resource(t.INSTANCE, props)) == []
    config = Resource(t.SCALING_CONFIGURATION, {"spotStrategy": capped})
    assert messages("spot-price-cap", config) == [
        "spotStrategy SpotWithPriceLimit without spotPriceLimits above 0"]
    limits = [{"instanceType": "ecs.gn7i-c8g1.2xlarge", "priceLimit": 3.2}]
    assert messages("spot-price-cap", Resource(t.SCALING_CONFIGURATION, {
        "spotStrategy": capped, "spotPriceLimits": limits})) == []


def _fleet_node(fleet: str = "gpu", urn: str = "urn:n0", id_: str = "i-0") -> Resource:
    return Resource(t.INSTANCE, {"tags": {**TAGS, "GpuFleet": fleet}}, "node-0", urn, id=id_)


def test_gpu_idle_alarm_missing():
    other = Resource(t.CMS_ALARM, {"metric": "CPUUtilization"}, dependencies=("urn:n0",))
    assert stack_messages("gpu-idle-alarm", [_fleet_node(), other]) == [
        ("node-0", "GPU fleet gpu has no GPU-idle alarm "
                   "(gpu_gpu_usedutilization / gpu_usedutilization)")]
    assert stack_messages("gpu-idle-alarm", [Resource(t.INSTANCE, {"tags": TAGS})]) == []


@pytest.mark.parametrize("alarm", [
    Resource(t.CMS_ALARM, {"metric": "instance_gpu_gpu_usedutilization"},
             dependencies=("urn:n0",)),
    Resource(t.CMS_ALARM, {"metric": "gpu_gpu_usedutilization",
                           "metricDimensions": '[{"instanceId":"i-0"}]'}),
    Resource(t.CMS_GROUP_METRIC_RULE, {"metricName": "group_gpu_usedutilization",
                                       "tags": {"GpuFleet": "gpu"}}),
])
def test_gpu_idle_alarm_covered(alarm):
    assert stack_messages("gpu-idle-alarm", [_fleet_node(), alarm]) == []


def test_gpu_idle_alarm_tag_group_template():
    group = Resource(t.SCALING_GROUP, {"tags": {**TAGS, "GpuFleet": "gpu"}}, "asg", "urn:asg")
    template = Resource("alicloud:cms/metricRuleTemplate:MetricRuleTemplate", {
        "alertTemplates": [{"metricName": "instance_gpu_gpu_usedutilization"}]},
        "tpl", "urn:tpl", id="123")
    tag_group = Resource("alicloud:cms/dynamicTagGroup:DynamicTagGroup", {
        "tagKey": "GpuFleet", "matchExpresses": [{"tagValue": "gpu",
                                                   "tagValueMatchFunction": "equals"}],
        "templateIdLists": ["123"]}, "tg")
    assert stack_messages("gpu-idle-alarm", [group, template, tag_group]) == []
    other_fleet = Resource(t.SCALING_GROUP, {"tags": {"GpuFleet": "other"}}, "asg2")
    assert stack_messages("gpu-idle-alarm", [other_fleet, template, tag_group]) == [
        ("asg2", "GPU fleet other has no GPU-idle alarm "
                 "(gpu_gpu_usedutilization / gpu_usedutilization)")]


def test_monthly_budget_needs_an_estimate():
    assert stack_messages("monthly-budget", [], Context(monthly_cost=5000.0),
                          monthlyBudget=4000.0) == [
        (None, "estimated monthly cost 5,000 exceeds budget 4,000")]
    assert stack_messages("monthly-budget", [], Context(monthly_cost=3000.0),
                          monthlyBudget=4000.0) == []
    assert stack_messages("monthly-budget", [], Context(), monthlyBudget=4000.0) == []
    assert stack_messages("monthly-budget", [], Context(monthly_cost=5000.0)) == []


# --- GPU --------------------------------------------------------------------------------

CATALOG = {"ecs.gn8v-8x.48xlarge": frozenset({"training", "inference"}),
           "ecs.gn6i-c4g1.xlarge": frozenset({"inference"})}


def test_catalog_fit():
    ctx = Context(catalog=CATALOG.get)
    training = {**TAGS, "Layout": "training"}
    assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, {
        "instanceType": "ecs.gn9x-8x.huge", "tags": training}), ctx) == [
        "ecs.gn9x-8x.huge is not in the GPU catalog"]
    assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, {
        "instanceType": "ecs.gn6i-c4g1.xlarge", "tags": training}), ctx) == [
        "ecs.gn6i-c4g1.xlarge is not meant for training (catalog uses: inference)"]
    config = Resource(t.SCALING_CONFIGURATION, {
        "instanceTypes": ["ecs.gn8v-8x.48xlarge", "ecs.gn6i-c4g1.xlarge"],
        "tags": {"Layout": "inference"}})
    assert messages("gpu-type-in-catalog", config, ctx) == []
    for props in ({"instanceType": "ecs.g7.large"}, {"instanceType": UNKNOWN}, {}):
        assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, props), ctx) == []
    # no catalog: the rule has nothing to judge by
    assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, {
        "instanceType": "ecs.gn9x-8x.huge"})) == []


def test_catalog_layout_uses_reads_the_catalog():
    from gpu_infra import catalog

    entry = catalog.entries()[0]
    assert catalog.layout_uses(entry.type) == frozenset(entry.uses)
    assert catalog.layout_uses("ecs.gn0-none.xlarge") is None


def _training_node(index: int, **props) -> Resource:
    return Resource(t.INSTANCE, {"tags": {**TAGS, "Layout": "training", "GpuFleet": "g"},
                                 **props}, f"node-{index}", f"urn:n{index}")


def test_training_low_latency():
    low = Resource(t.DEPLOYMENT_SET, {"strategy": "LowLatency"}, "ds", "urn:ds", id="ds-1")
    spread = Resource(t.DEPLOYMENT_SET, {}, "ds2", "urn:ds2", id="ds-2")
    good = [_training_node(i, deploymentSetId="ds-1", availabilityZone="z1") for i in range(2)]
    assert stack_messages("training-low-latency", [low, *good]) == []
    unknown = [_training_node(i, deploymentSetId=UNKNOWN) for i in range(2)]
    assert stack_messages("training-low-latency", [low, *unknown]) == []
    none = [_training_node(i) for i in range(2)]
    assert stack_messages("training-low-latency", [low, *none]) == [
        ("node-0", "training fleet g: node is in no deployment set; use a LowLatency one"),
        ("node-1", "training fleet g: node is in no deployment set; use a LowLatency one")]
    wrong = [_training_node(0, deploymentSetId="ds-2")]
    wrong.append(_training_node(1, deploymentSetId="ds-2"))
    assert stack_messages("training-low-latency", [spread, *wrong])[0] == (
        "node-0", "training fleet g: deployment set strategy is Availability, not LowLatency")
    assert stack_messages("training-low-latency", [spread, wrong[0]]) == []  # one node


def test_training_one_zone_via_vswitches():
    low = Resource(t.DEPLOYMENT_SET, {"strategy": "LowLatency"}, "ds", "urn:ds", id="ds-1")
    vswitches = [Resource(t.VSWITCH, {"zoneId": zone}, f"vsw-{zone}", f"urn:{zone}",
                          id=f"vsw-{zone}") for zone in ("z1", "z2")]
    nodes = [_training_node(i, deploymentSetId="ds-1", vswitchId=f"vsw-z{i + 1}")
             for i in range(2)]
    assert stack_messages("training-low-latency", [low, *vswitches, *nodes]) == [
        ("node-0", "training fleet g spans zones z1, z2; use one zone")]


def test_scratch_disks():
    assert messages("scratch-disks-essd", Resource(t.ECS_DISK, {})) == [
        "disk category cloud_efficiency is too slow for GPU scratch; use cloud_auto or "
        "cloud_essd"]
    assert messages("scratch-disks-essd", Resource(t.ECS_DISK, {
        "category": "cloud_essd", "performanceLevel": "PL0"})) == [
        "disk is an ESSD PL0; use PL1 or above"]
    for props in ({"category": "cloud_auto"}, {"category": "cloud_essd"},
                  {"category": "cloud_essd", "performanceLevel": "PL2"},
                  {"category": UNKNOWN}):
        assert messages("scratch-disks-essd", Resource(t.ECS_DISK, props)) == []
    node = Resource(t.INSTANCE, {"dataDisks": [{"category": "cloud_essd"}, {"size": 100}]})
    assert messages("scratch-disks-essd", node) == [
        "dataDisks[1] category cloud_efficiency is too slow for GPU scratch; use cloud_auto "
        "or cloud_essd"]
    assert messages("scratch-disks-essd", Resource(t.ECS_DISK, {
        "category": "cloud_essd", "performanceLevel": "PL1"}), minPerformanceLevel="PL2")


# --- evaluate ---------------------------------------------------------------------------

def test_evaluate_levels_and_disabled_rules():
    resources = [sg_rule(cidrIp="0.0.0.0/0", portRange="22/22"),
                 Resource("alicloud:vpc/network:Network", {"tags": {}}, "vpc")]
    verdicts = evaluate(resources)
    assert [(v.rule, v.level) for v in verdicts] == [("no-world-ingress", "mandatory"),
                                                    ("required-tags", "advisory")]
    assert verdicts[0].line() == (
        "MANDATORY no-world-ingress (critical): alicloud:ecs/securityGroupRule:"
        "SecurityGroupRule rule: ingress from 0.0.0.0/0 to port 22/22 (tcp); allow known "
        "CIDRs only")
    settings = default_settings()
    from gpu_infra_policies.rules import RuleSettings
    settings["no-world-ingress"] = RuleSettings("disabled", {})
    assert [v.rule for v in evaluate(resources, settings)] == ["required-tags"]
