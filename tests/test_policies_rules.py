"""Every policy rule fires on a bad resource and stays quiet on a good one, including absent
(provider default) and unknown (preview) properties."""

from __future__ import annotations

from typing import Literal

import pytest

from gpu_infra.catalog.recommend import Workload
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra.schema.stack import TrainingConfig
from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Context, Resource
from gpu_infra_policies.rules import RULES, default_settings, evaluate

from .hostile_resources import CASES, NEEDS_STACK_ENVIRONMENT
from .rule_helpers import PROD, TAGS, bucket, messages, sg_rule, stack_messages, with_profile

# --- rule metadata --------------------------------------------------------------------

def test_rule_metadata_is_complete_and_levels_follow_category():
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        assert rule.description and rule.remediation
        assert rule.severity in ("low", "medium", "high", "critical")
        assert set(rule.defaults) <= set(rule.schema), rule.name
        assert rule.reviews or rule.name in ("monthly-budget", "unreviewed-types"), rule.name
    levels = {rule.name: rule.default_enforcement for rule in RULES}
    # the principle (policies/README.md, Levels): security rules block unless they say why not
    for rule in RULES:
        if rule.category == "security" and levels[rule.name] != "mandatory":
            assert levels[rule.name] == "advisory" and rule.note.startswith("advisory"), \
                rule.name
    assert levels["ram-no-access-keys"] == "advisory"
    # the budget rules need the offline plan's estimate; it turns them on for a budget
    assert levels["monthly-budget"] == levels["budget-unpriced-gpus"] == "disabled"
    # a non-refundable purchase the fleets cannot use is refused where it is made (issue 38)
    assert levels["reserved-capacity-excess"] == "mandatory"
    assert all(levels[r.name] == "advisory" for r in RULES if r.category != "security"
               and r.name not in ("monthly-budget", "budget-unpriced-gpus",
                                  "reserved-capacity-excess"))


def test_taggable_types_take_tags_in_the_sdk():
    import inspect

    import pulumi_alicloud as alicloud
    for token in t.TAGGABLE:
        module, rest = token.split(":")[1].split("/")
        cls = getattr(getattr(alicloud, module), token.split(":")[2])
        assert "tags" in inspect.signature(cls._internal_init).parameters, token


# --- reliability --------------------------------------------------------------------------

@pytest.mark.parametrize("token", sorted(t.DATA_TYPES))
def test_prod_data_protected(token):
    expected = ["prod data resource is not protected (ResourceOptions(protect=True))"]
    assert messages("prod-data-protected", Resource(token, {"tags": PROD})) == expected
    assert messages("prod-data-protected", Resource(token, {}), Context("prod")) == expected
    assert messages("prod-data-protected", Resource(token, {"tags": PROD}, protect=True)) == []
    assert messages("prod-data-protected", Resource(token, {"tags": TAGS})) == []


@pytest.mark.parametrize("token", sorted(t.DISKS))
def test_prod_scratch_disks_need_no_protection(token):
    """A disk released with its instance is scratch; one that outlives it holds data."""
    scratch = Resource(token, {"tags": PROD, "deleteWithInstance": True})
    kept = Resource(token, {"tags": PROD, "deleteWithInstance": False})
    assert messages("prod-data-protected", scratch) == []
    assert len(messages("prod-data-protected", kept)) == 1
    assert stack_messages("prod-data-versioned", [scratch], Context("prod")) == []
    assert len(stack_messages("prod-data-versioned", [kept], Context("prod"))) == 1


def test_prod_data_versioned():
    ctx = Context("prod")
    assert stack_messages("prod-data-versioned", [bucket()], ctx) == [
        ("ckpt", "prod bucket has no versioning (status Enabled)")]
    assert stack_messages("prod-data-versioned", [bucket()]) == []
    assert stack_messages("prod-data-versioned", [bucket(versioning={"status": "Enabled"})],
                          ctx) == []
    standalone = Resource(t.BUCKET_VERSIONING, {"bucket": "ckpt", "status": "Enabled"})
    assert stack_messages("prod-data-versioned", [bucket(), standalone], ctx) == []
    suspended = Resource(t.BUCKET_VERSIONING, {"bucket": "ckpt", "status": "Suspended"})
    assert len(stack_messages("prod-data-versioned", [bucket(), suspended], ctx)) == 1
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
        "ecs.gn6i-c4g1.xlarge is not meant for training (suits: inference)"]
    config = Resource(t.SCALING_CONFIGURATION, {
        "instanceTypes": ["ecs.gn8v-8x.48xlarge", "ecs.gn6i-c4g1.xlarge"],
        "tags": {"Layout": "inference"}})
    assert messages("gpu-type-in-catalog", config, ctx) == []
    pool = Resource(t.NODE_POOL, {"instanceTypes": ["ecs.gn9x-8x.huge"]})
    template = Resource(t.ECS_LAUNCH_TEMPLATE, {"instanceType": "ecs.gn9x-8x.huge"})
    for resource in (pool, template):
        assert messages("gpu-type-in-catalog", resource, ctx) == [
            "ecs.gn9x-8x.huge is not in the GPU catalog"]
    for props in ({"instanceType": "ecs.g7.large"}, {"instanceType": UNKNOWN}, {}):
        assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, props), ctx) == []
    # no catalog: the rule has nothing to judge by
    assert messages("gpu-type-in-catalog", Resource(t.INSTANCE, {
        "instanceType": "ecs.gn9x-8x.huge"})) == []


def test_layouts_suited_goes_through_each_layouts_workload():
    from gpu_infra.schema.registry import layouts_suited

    # a vGPU-and-rendering type suits the render farm only: the layout's workload lists
    # the vgpu use, no layout is named vgpu
    assert layouts_suited("ecs.vgn7i-vws-m4.xlarge") == frozenset({"rendering"})
    # a Tesla inference type also suits an image build (the image layout serves training
    # and inference families)
    assert layouts_suited("ecs.gn6i-c4g1.xlarge") == frozenset({"inference", "rendering", "image"})
    assert layouts_suited("ecs.gn0-none.xlarge") is None


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


def test_placement_rules_follow_the_placement_a_layout_declares(monkeypatch):
    """A new layout declaring a placement is checked without a rule edit, and a layout
    named training that declares none is not."""
    class BatchConfig(TrainingConfig):
        layout: Literal["batch"]  # type: ignore[assignment]
        workload = Workload(uses=("training",), placement="spread")

    class LooseTrainingConfig(TrainingConfig):
        workload = Workload(uses=("training",))

    monkeypatch.setitem(LAYOUT_MODELS, "batch", BatchConfig)
    monkeypatch.setitem(LAYOUT_MODELS, "training", LooseTrainingConfig)
    group = Resource(t.SCALING_GROUP, {"tags": {**TAGS, "Layout": "batch"},
                                       "vswitchIds": ["a"], "onDemandBaseCapacity": 1})
    assert messages("inference-multi-zone", group) == [
        "batch fleet spans 1 vSwitch(es); use at least 2 in different zones"]
    assert stack_messages("training-low-latency", [_training_node(i) for i in range(2)]) == []


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
        "SecurityGroupRule rule: ingress to port 22 (tcp) from 0.0.0.0/0, which covers all "
        "public IPv4 space; allow known CIDRs only")
    settings = default_settings()
    from gpu_infra_policies.rules import RuleSettings
    settings["no-world-ingress"] = RuleSettings("disabled", {})
    assert [v.rule for v in evaluate(resources, settings)] == ["required-tags"]


@pytest.mark.parametrize(("rule", "resources"), CASES,
                         ids=[f"{rule}-{resources[0].name}" for rule, resources in CASES])
def test_what_a_reviewer_tries_is_caught(rule, resources):
    verdicts = evaluate(resources, context=with_profile(None))
    assert rule in {v.rule for v in verdicts if v.resource_name == resources[0].name}


def test_reviewer_cases_cover_every_security_rule():
    assert {r.name for r in RULES if r.category == "security"} - NEEDS_STACK_ENVIRONMENT <= {
        rule for rule, _ in CASES}
