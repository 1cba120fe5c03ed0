"""The ALB option of ServiceLoadBalancer (`kind="alb"`), under the mock engine."""

from gpu_infra.blocks import loadbalancer as lb
from gpu_infra.blocks.conventions import Conventions

from .test_loadbalancer_block import ATTACHMENT, RULE, SECURITY_GROUP, TAGS, make, of

ALB = "alicloud:alb/loadBalancer:LoadBalancer"
SERVER_GROUP = "alicloud:alb/serverGroup:ServerGroup"
LISTENER = "alicloud:alb/listener:Listener"
SG_ATTACHMENT = ("alicloud:alb/loadBalancerSecurityGroupAttachment:"
                 "LoadBalancerSecurityGroupAttachment")


def build(record, **overrides):
    return record(lambda: make(kind="alb", **overrides))


def test_no_nlb_resources_for_an_alb(record):
    types = {r.type for r in build(record)}
    assert not {t for t in types if t.startswith("alicloud:nlb/")}
    assert {ALB, SERVER_GROUP, LISTENER, SG_ATTACHMENT} <= types


def test_alb_with_provider_values_and_one_zone_mapping_per_zone(record):
    [alb] = of(build(record, internet_facing=True), ALB)
    assert {k: alb.inputs[k] for k in ("addressType", "loadBalancerEdition",
                                       "loadBalancerBillingConfig", "vpcId", "zoneMappings",
                                       "deletionProtectionEnabled")} == {
        "addressType": "Internet", "loadBalancerEdition": "Standard",
        "loadBalancerBillingConfig": {"payType": "PayAsYouGo"}, "vpcId": "vpc-1",
        "zoneMappings": [{"zoneId": "cn-hangzhou-i", "vswitchId": "vsw-i"},
                         {"zoneId": "cn-hangzhou-j", "vswitchId": "vsw-j"}],
        "deletionProtectionEnabled": False}
    assert alb.inputs["loadBalancerEdition"] in lb.ALB_EDITIONS
    assert alb.inputs["addressType"] in lb.ADDRESS_TYPES


def test_alb_is_intranet_by_default(record):
    [alb] = of(build(record), ALB)
    assert alb.inputs["addressType"] == "Intranet"


def test_http_server_group_health_checked_on_the_path_and_http_listener(record):
    resources = build(record, health_check_path="/healthz")
    [alb] = of(resources, ALB)
    groups = {g.name: g for g in of(resources, SERVER_GROUP)}
    assert sorted(groups) == ["inf-lb-servers-8000", "inf-lb-servers-8001"]
    for group in groups.values():
        assert (group.inputs["protocol"], group.inputs["serverGroupType"],
                group.inputs["vpcId"]) == ("HTTP", "Instance", "vpc-1")
        assert group.inputs["protocol"] in lb.ALB_SERVER_GROUP_PROTOCOLS
        assert group.inputs["healthCheckConfig"] == {
            "healthCheckEnabled": True, "healthCheckProtocol": "HTTP",
            "healthCheckPath": "/healthz", "healthCheckConnectPort": 0,
            "healthCheckInterval": 10, "healthyThreshold": 2, "unhealthyThreshold": 3,
            "healthCheckCodes": ["http_2xx"], "healthCheckMethod": "GET"}
        assert group.inputs["healthCheckConfig"]["healthCheckProtocol"] in (
            lb.ALB_HEALTH_CHECK_PROTOCOLS)
    for listener in of(resources, LISTENER):
        port = int(listener.inputs["listenerPort"])
        assert listener.inputs["listenerProtocol"] == "HTTP"
        assert listener.inputs["listenerProtocol"] in lb.ALB_LISTENER_PROTOCOLS
        assert listener.inputs["loadBalancerId"] == alb.id
        assert listener.inputs["defaultActions"] == [{
            "type": "ForwardGroup", "forwardGroupConfig": {"serverGroupTuples": [
                {"serverGroupId": groups[f"inf-lb-servers-{port}"].id}]}}]


def test_tcp_health_check_without_a_path(record):
    groups = of(build(record), SERVER_GROUP)
    assert {g.inputs["healthCheckConfig"]["healthCheckProtocol"] for g in groups} == {"TCP"}
    assert all("healthCheckPath" not in g.inputs["healthCheckConfig"] for g in groups)


def test_security_group_attached_to_the_alb(record):
    resources = build(record)
    [group] = of(resources, SECURITY_GROUP)
    [attachment] = of(resources, SG_ATTACHMENT)
    assert attachment.inputs == {"loadBalancerId": of(resources, ALB)[0].id,
                                 "securityGroupId": group.id}
    assert {r.inputs["cidrIp"] for r in of(resources, RULE)
            if r.inputs["policy"] == "accept"} == {"10.8.0.0/16", "192.168.1.0/24"}
    assert [r.inputs["cidrIp"] for r in of(resources, RULE)
            if r.inputs["policy"] == "drop"] == ["0.0.0.0/0"]


def test_scaling_group_attached_as_alb(record):
    resources = build(record)
    attachments = of(resources, ATTACHMENT)
    assert sorted((a.inputs["type"], a.inputs["port"]) for a in attachments) == [
        ("ALB", 8000), ("ALB", 8001)]
    assert {a.inputs["serverGroupId"] for a in attachments} == {
        g.id for g in of(resources, SERVER_GROUP)}


def test_tags_and_prod_protection(record):
    resources = build(record, conventions=Conventions(tags=TAGS, deletion_protection=True))
    taggable = [r for r in resources if r.type in (ALB, SERVER_GROUP, LISTENER)]
    assert len(taggable) == 5
    assert all(r.inputs["tags"] == {**TAGS, "Name": r.name} for r in taggable)
    assert of(resources, ALB)[0].inputs["deletionProtectionEnabled"] is True

