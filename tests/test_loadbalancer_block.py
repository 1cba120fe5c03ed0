"""The ServiceLoadBalancer block on its own, under the mock engine."""

from ipaddress import IPv4Network

import pulumi
import pytest

from gpu_infra.blocks import loadbalancer as lb
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.loadbalancer import ServiceLoadBalancer
from gpu_infra.schema import ConfigError
from gpu_infra.schema.loadbalancer import LoadBalancerConfig
from gpu_infra_tools.plan.engine import ProgramError, run_under_mocks

from .conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config, merged

NLB = "alicloud:nlb/loadBalancer:LoadBalancer"
SERVER_GROUP = "alicloud:nlb/serverGroup:ServerGroup"
LISTENER = "alicloud:nlb/listener:Listener"
SECURITY_GROUP = "alicloud:ecs/securityGroup:SecurityGroup"
RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
ATTACHMENT = "alicloud:ess/serverGroupAttachment:ServerGroupAttachment"
VSWITCHES = {"cn-hangzhou-i": "vsw-i", "cn-hangzhou-j": "vsw-j"}
CLIENTS = [IPv4Network("10.8.0.0/16"), IPv4Network("192.168.1.0/24")]
TAGS = {"Project": "p"}


def of(resources, type_token):
    return [r for r in resources if r.type == type_token]


def make(name="inf-lb", **overrides):
    """The block with LoadBalancerConfig fields and wiring arguments from `overrides`."""
    config = LoadBalancerConfig(**{key: overrides.pop(key) for key in list(overrides)
                                   if key in LoadBalancerConfig.model_fields})
    args = {"vpc_id": "vpc-1", "vswitch_ids": VSWITCHES, "ports": [8000, 8001],
            "client_cidrs": CLIENTS, "conventions": Conventions(tags=TAGS),
            "scaling_group_id": "asg-1", **overrides}
    return ServiceLoadBalancer(name, config=config, **args)


def build(record, **overrides):
    return record(lambda: make(**overrides))


def test_intranet_nlb_with_one_zone_mapping_per_zone(record):
    [nlb] = of(build(record), NLB)
    assert nlb.inputs["addressType"] == "Intranet" and nlb.inputs["addressType"] in (
        lb.ADDRESS_TYPES)
    assert nlb.inputs["loadBalancerType"] == lb.NLB_TYPE == "Network"
    assert nlb.inputs["vpcId"] == "vpc-1"
    assert nlb.inputs["zoneMappings"] == [
        {"zoneId": "cn-hangzhou-i", "vswitchId": "vsw-i"},
        {"zoneId": "cn-hangzhou-j", "vswitchId": "vsw-j"}]
    assert nlb.inputs["deletionProtectionEnabled"] is False


def test_internet_facing_only_when_asked(record):
    [nlb] = of(build(record, internet_facing=True), NLB)
    assert nlb.inputs["addressType"] == "Internet"


def test_prod_turns_on_deletion_protection(record):
    conventions = Conventions(tags=TAGS, deletion_protection=True)
    [nlb] = of(build(record, conventions=conventions), NLB)
    assert nlb.inputs["deletionProtectionEnabled"] is True


def test_one_tcp_server_group_and_listener_per_port(record):
    resources = build(record)
    [nlb] = of(resources, NLB)
    groups = {g.name: g for g in of(resources, SERVER_GROUP)}
    assert sorted(groups) == ["inf-lb-servers-8000", "inf-lb-servers-8001"]
    for group in groups.values():
        assert (group.inputs["serverGroupType"], group.inputs["protocol"],
                group.inputs["vpcId"]) == ("Instance", "TCP", "vpc-1")
        assert group.inputs["serverGroupType"] in lb.SERVER_GROUP_TYPES
        assert group.inputs["protocol"] in lb.PROTOCOLS
    listeners = {r.inputs["listenerPort"]: r for r in of(resources, LISTENER)}
    assert sorted(listeners) == [8000, 8001]
    for port, listener in listeners.items():
        assert listener.inputs["listenerProtocol"] == "TCP"
        assert listener.inputs["loadBalancerId"] == nlb.id
        assert listener.inputs["serverGroupId"] == groups[f"inf-lb-servers-{int(port)}"].id


def test_tcp_health_check_by_default(record):
    groups = of(build(record), SERVER_GROUP)
    assert all(g.inputs["healthCheck"] == {
        "healthCheckEnabled": True, "healthCheckType": "TCP", "healthCheckConnectPort": 0,
        "healthCheckInterval": 10, "healthyThreshold": 2, "unhealthyThreshold": 3}
        for g in groups)


def test_http_health_check_on_the_given_path(record):
    [group] = of(build(record, ports=[8000], health_check_path="/v1/health?ready=1"),
                 SERVER_GROUP)
    check = group.inputs["healthCheck"]
    assert check["healthCheckType"] == "HTTP" and check["healthCheckType"] in (
        lb.HEALTH_CHECK_TYPES)
    assert check["healthCheckUrl"] == "/v1/health?ready=1"


def test_scaling_group_attached_to_every_server_group_on_its_port(record):
    resources = build(record)
    groups = {g.name: g.id for g in of(resources, SERVER_GROUP)}
    attachments = {a.inputs["port"]: a.inputs for a in of(resources, ATTACHMENT)}
    assert attachments == {port: {
        "scalingGroupId": "asg-1", "serverGroupId": groups[f"inf-lb-servers-{port}"],
        "type": "NLB", "port": port, "weight": 100, "forceAttach": True}
        for port in (8000, 8001)}
    assert all(a["type"] in lb.ATTACHMENT_TYPES for a in attachments.values())


def test_no_attachment_without_a_scaling_group(record):
    assert not of(build(record, scaling_group_id=None), ATTACHMENT)


def test_attach_later_once(record):
    def build_then_attach():
        balancer = make(scaling_group_id=None)
        balancer.attach("asg-late")
        with pytest.raises(ValueError, match="^inf-lb: a scaling group is already attached$"):
            balancer.attach("asg-other")

    attachments = of(record(build_then_attach), ATTACHMENT)
    assert [a.inputs["scalingGroupId"] for a in attachments] == ["asg-late", "asg-late"]


def test_security_group_allows_only_service_ports_from_client_cidrs(record):
    resources = build(record)
    [group] = of(resources, SECURITY_GROUP)
    [nlb] = of(resources, NLB)
    assert group.inputs["vpcId"] == "vpc-1"
    assert nlb.inputs["securityGroupIds"] == [group.id]
    rules = [r for r in of(resources, RULE) if r.inputs["policy"] == "accept"]
    assert sorted((r.inputs["portRange"], r.inputs["cidrIp"]) for r in rules) == [
        ("8000/8000", "10.8.0.0/16"), ("8000/8000", "192.168.1.0/24"),
        ("8001/8001", "10.8.0.0/16"), ("8001/8001", "192.168.1.0/24")]
    (deny,) = [r for r in of(resources, RULE) if r.inputs["policy"] == "drop"]
    assert {k: deny.inputs[k] for k in ("type", "ipProtocol", "portRange", "cidrIp")} == {
        "type": "ingress", "ipProtocol": "all", "portRange": "-1/-1", "cidrIp": "0.0.0.0/0"}
    assert deny.inputs["priority"] > max(r.inputs["priority"] for r in rules)
    for rule in rules:
        assert {k: rule.inputs[k] for k in ("securityGroupId", "type", "ipProtocol",
                                            "nicType", "policy")} == {
            "securityGroupId": group.id, "type": "ingress", "ipProtocol": "tcp",
            "nicType": "intranet", "policy": "accept"}
        assert "sourceSecurityGroupId" not in rule.inputs


def test_tags_on_every_taggable_child(record):
    resources = build(record)
    taggable = [r for r in resources
                if r.type in (NLB, SERVER_GROUP, LISTENER, SECURITY_GROUP)]
    assert len(taggable) == 1 + 2 + 2 + 1
    assert all(r.name.startswith("inf-lb-") and r.inputs["tags"] == {**TAGS, "Name": r.name}
               for r in taggable)
    assert all(r.name.startswith("inf-lb-") for r in resources if r.custom)
    component = next(r for r in resources if r.type == ServiceLoadBalancer.TYPE)
    assert all(r.parent == component.urn for r in resources if r.custom)


def test_outputs_dns_name_and_ids():
    stack = cluster_config(BASE_TRAINING)

    def program():
        balancer = make()
        pulumi.export("dns_name", balancer.dns_name)
        pulumi.export("security_group_id", balancer.security_group_id)
        pulumi.export("server_group_ids", {str(p): i for p, i in balancer.server_group_ids.items()})

    resources, outputs = run_under_mocks(stack, "test", program)
    [nlb] = of(resources, NLB)
    assert outputs["dns_name"] == f"{nlb.id}.cn-hangzhou.nlb.aliyuncs.com"
    assert outputs["security_group_id"] == of(resources, SECURITY_GROUP)[0].id
    assert outputs["server_group_ids"] == {
        g.name.rsplit("-", 1)[1]: g.id for g in of(resources, SERVER_GROUP)}


def failure(**overrides) -> str:
    with pytest.raises(ProgramError) as error:
        run_under_mocks(cluster_config(BASE_TRAINING), "test", lambda: make(**overrides))
    return str(error.value)


def test_fewer_than_two_zones_is_an_error():
    message = failure(vswitch_ids={"cn-hangzhou-i": "vsw-i"})
    assert "vswitch_ids: a load balancer needs 2 to 10 zones, one vSwitch each; got 1" in message


def test_more_than_ten_zones_is_an_error():
    message = failure(vswitch_ids={f"zone-{i}": f"vsw-{i}" for i in range(11)})
    assert "vswitch_ids: a load balancer needs 2 to 10 zones, one vSwitch each; got 11" in message


def schema_problems(**load_balancer) -> list[str]:
    """The problems the schema reports for an inference stack with this load_balancer."""
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_INFERENCE, load_balancer=load_balancer))
    return error.value.problems


@pytest.mark.parametrize("path", ["health", "/" + "a" * 80, "/bad<char>"])
def test_health_check_path_the_provider_refuses_is_a_schema_error(path):
    [problem] = schema_problems(health_check_path=path)
    assert problem.startswith("gpu-infra:cluster.load_balancer.health_check_path: ")


def test_health_check_path_the_provider_accepts():
    for path in ("/v2/health/ready", "/" + "a" * 79, "/h?x=1&y=[2]"):
        assert cluster_config(merged(BASE_INFERENCE, load_balancer={
            "health_check_path": path})).load_balancer.health_check_path == path


def test_inference_without_clients_is_a_schema_error():
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_INFERENCE, security={"client_cidrs": []}))
    assert error.value.problems == [
        "gpu-infra:cluster.security.client_cidrs: missing; list the CIDRs that may reach the "
        "service through the load balancer"]


def test_name_must_start_with_a_letter():
    with pytest.raises(ProgramError, match="name: '1lb' must start with a letter"):
        run_under_mocks(cluster_config(BASE_TRAINING), "test", lambda: make(name="1lb"))
