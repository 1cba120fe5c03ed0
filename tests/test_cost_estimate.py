"""The cost estimator on hand-built planned resources: one price model per resource kind."""

from __future__ import annotations

import pytest

from gpu_infra import catalog
from gpu_infra_facts.update_semantics import covered_types
from gpu_infra_tools.cost import Assumptions, compare, estimate, price_book
from gpu_infra_tools.plan.engine import PlannedResource

from .conftest import BASE_TRAINING, cluster_config, merged

H = 730  # hours per month
GN7I = "ecs.gn7i-c8g1.2xlarge"
GN7I_PRICE = 9.53  # catalog, cn-hangzhou
UNPRICED_TYPE = "ecs.gn8v-8x.48xlarge"
INSTANCE = "alicloud:ecs/instance:Instance"
BOOK = price_book()


def res(type_token: str, name: str, inputs: dict, rid: str | None = None,
        parent: str | None = None) -> PlannedResource:
    return PlannedResource(urn=f"urn:{name}", type=type_token, name=name, custom=True,
                           parent=parent, inputs=inputs, dependencies=[], id=rid)


def instance(name: str = "n0", **inputs) -> PlannedResource:
    return res(INSTANCE, name, {"instanceType": GN7I, "instanceChargeType": "PostPaid",
                                "systemDiskCategory": "cloud_essd", "systemDiskSize": 100,
                                **inputs})


def one(resources, **kwargs):
    result = estimate(resources, **kwargs)
    return result, result.resources[0]


def test_price_data_is_as_documented():
    assert BOOK.currency == "CNY" and BOOK.hours_per_month == H
    assert BOOK.discounts.spot_price_factor.value == 0.7
    assert catalog.get(GN7I).price.cny_per_hour == GN7I_PRICE
    assert catalog.get(UNPRICED_TYPE).price is None
    for key, price in BOOK.prices.items():
        assert price.source in BOOK.sources, key
        assert price.region.startswith("cn-") and price.date, key


def test_on_demand_instance_with_system_and_autopl_data_disk():
    disk = {"name": "scratch", "category": "cloud_auto", "size": 500, "provisionedIops": 10000}
    result, cost = one([instance(dataDisks=[disk])])
    names = [c.name for c in cost.components]
    assert names == [f"Compute (on-demand, {GN7I})", "System disk (cloud_essd PL1, 100 GiB)",
                     "Data disk scratch (cloud_auto, 500 GiB)",
                     "Data disk scratch provisioned IOPS (10000)"]
    monthly = [c.monthly_cost for c in cost.components]
    assert monthly == pytest.approx([GN7I_PRICE * H, 100 * 1.0, 500 * 1.0, 10000 * 0.0365])
    assert cost.monthly_cost == pytest.approx(sum(monthly))
    assert result.total_hourly_cost == pytest.approx(sum(monthly) / H)
    assert result.gpu_split()["on_demand"] == pytest.approx(GN7I_PRICE * H)
    assert result.gpu_split()["saving"] == pytest.approx(0)


def test_disk_defaults_and_performance_levels():
    result, cost = one([instance(systemDiskCategory=None, systemDiskSize=40, dataDisks=[
        {"category": "cloud_essd", "performanceLevel": "PL3", "size": 100}])])
    assert [c.monthly_cost for c in cost.components[1:]] == pytest.approx([40 * 0.35, 400])


@pytest.mark.parametrize(("inputs", "hourly"), [
    ({"spotStrategy": "SpotAsPriceGo"}, GN7I_PRICE * 0.7),
    ({"spotStrategy": "SpotWithPriceLimit", "spotPriceLimit": 3.0}, 3.0),
    ({"spotStrategy": "SpotWithPriceLimit", "spotPriceLimit": 50.0}, GN7I_PRICE * 0.7),
    ({"spotStrategy": "NoSpot"}, GN7I_PRICE),
    ({"instanceChargeType": "PrePaid", "period": 1, "periodUnit": "Month"}, GN7I_PRICE * 0.67),
    ({"instanceChargeType": "PrePaid", "period": 12, "periodUnit": "Month"}, GN7I_PRICE * 0.57),
])
def test_spot_and_prepaid_discounts(inputs, hourly):
    result, cost = one([instance(**inputs)])
    assert cost.components[0].hourly_cost == pytest.approx(hourly)
    split = result.gpu_split()
    assert split["all_on_demand"] == pytest.approx(GN7I_PRICE * H)
    assert split["saving"] == pytest.approx((GN7I_PRICE - hourly) * H)


def test_spot_factor_is_configurable():
    result, cost = one([instance(spotStrategy="SpotAsPriceGo")],
                       assumptions=Assumptions(spot_price_factor=0.4))
    assert cost.components[0].hourly_cost == pytest.approx(GN7I_PRICE * 0.4)
    assert result.details()["assumptions"]["spotPriceFactor"] == 0.4
    assert result.gpu_split()["spot"] == pytest.approx(GN7I_PRICE * 0.4 * H)


def switch(zone: str, rid: str) -> PlannedResource:
    return res("alicloud:vpc/switch:Switch", f"vsw-{zone}", {"zoneId": zone}, rid=rid)


def reservation(**inputs) -> PlannedResource:
    return res("alicloud:ecs/reservedInstance:ReservedInstance", "ri",
               {"instanceType": GN7I, "instanceAmount": 2, "offeringType": "No Upfront",
                "period": 1, "periodUnit": "Year", "scope": "Region", **inputs})


def test_reserved_instance_covers_matching_on_demand_instances():
    nodes = [instance(f"n{i}", vswitchId="vsw-a", systemDiskSize=0) for i in range(3)]
    result = estimate([switch("cn-hangzhou-i", "vsw-a"), reservation(), *nodes])
    by_name = {r.name: r for r in result.resources}
    fee = 2 * GN7I_PRICE * 0.65
    assert by_name["ri"].hourly_cost == pytest.approx(fee)
    assert [by_name[f"n{i}"].components[0].monthly_cost for i in range(3)] == \
        pytest.approx([0, 0, GN7I_PRICE * H])
    assert by_name["n0"].components[0].name == f"Compute (covered by reserved instance ri, {GN7I})"
    split = result.gpu_split()
    assert split["reserved"] == pytest.approx(fee * H)
    assert split["on_demand"] == pytest.approx(GN7I_PRICE * H)
    assert split["all_on_demand"] == pytest.approx(3 * GN7I_PRICE * H)
    assert split["saving"] == pytest.approx((3 * GN7I_PRICE - GN7I_PRICE - fee) * H)


def test_zonal_reserved_instance_covers_only_its_zone_and_never_spot():
    nodes = [instance("z-i", vswitchId="vsw-a"), instance("z-j", vswitchId="vsw-b"),
             instance("spot", vswitchId="vsw-a", spotStrategy="SpotAsPriceGo")]
    result = estimate([switch("cn-hangzhou-i", "vsw-a"), switch("cn-hangzhou-j", "vsw-b"),
                       reservation(scope="Zone", zoneId="cn-hangzhou-j"), *nodes])
    capacity = {r.name: r.gpu[0].capacity for r in result.resources if r.gpu}
    assert capacity == {"ri": "reserved", "z-i": "on_demand", "z-j": "reserved",
                        "spot": "spot"}


@pytest.mark.parametrize(("offering", "period", "unit", "factor"), [
    ("All Upfront", 3, "Year", 0.4), ("Partial Upfront", 1, "Year", 0.6),
    ("No Upfront", 1, "Month", 0.8)])
def test_reserved_factor_by_offering_and_term(offering, period, unit, factor):
    _, cost = one([reservation(offeringType=offering, period=period, periodUnit=unit,
                               instanceAmount=1)])
    assert cost.hourly_cost == pytest.approx(GN7I_PRICE * factor)


def scaling(group: dict, config: dict | None = None) -> list[PlannedResource]:
    return [res("alicloud:ess/scalingGroup:ScalingGroup", "asg",
                {"minSize": 0, "maxSize": 10, **group}, rid="asg-1"),
            res("alicloud:ess/scalingConfiguration:ScalingConfiguration", "asc",
                {"scalingGroupId": "asg-1", "instanceTypes": [GN7I, UNPRICED_TYPE],
                 "spotStrategy": "SpotAsPriceGo", "systemDiskCategory": "cloud_essd",
                 "systemDiskSize": 100, **(config or {})})]


def test_scaling_group_at_min_size_splits_on_demand_base_percentage_and_spot():
    result = estimate(scaling({"minSize": 5, "onDemandBaseCapacity": 1,
                               "onDemandPercentageAboveBaseCapacity": 25}))
    group = result.resources[0]
    assert [(c.name, c.quantity) for c in group.components] == [
        (f"Compute (on-demand, {GN7I})", 2), (f"Compute (spot, x0.7, {GN7I})", 3),
        ("System disk (cloud_essd PL1, 100 GiB)", 500)]
    assert group.monthly_cost == pytest.approx((2 + 3 * 0.7) * GN7I_PRICE * H + 500)
    assert group.note.startswith("at min size 5 (max 10)")
    assert result.resources[1].free  # the configuration's cost is the group's


def test_scaling_group_prefers_desired_capacity_and_without_spot_is_all_on_demand():
    result = estimate(scaling({"minSize": 1, "desiredCapacity": 4,
                               "onDemandPercentageAboveBaseCapacity": 0},
                              {"spotStrategy": "NoSpot"}))
    assert result.gpu_split()["on_demand"] == pytest.approx(4 * GN7I_PRICE * H)
    assert result.resources[0].note.startswith("at desired capacity 4")


def test_scaling_group_at_zero_costs_zero_even_when_unpriced():
    result = estimate(scaling({}, {"instanceTypes": [UNPRICED_TYPE]}))
    assert result.resources[0].monthly_cost == 0 and not result.unpriced


def test_unknown_prices_stay_null_and_are_counted():
    result = estimate([instance(instanceType=UNPRICED_TYPE, systemDiskSize=100),
                       res("alicloud:kms/key:Key", "key", {}),
                       res("alicloud:foo/bar:Bar", "mystery", {})])
    gpu, key, mystery = result.resources
    assert gpu.components[0].monthly_cost is None and gpu.monthly_cost == pytest.approx(100)
    assert key.monthly_cost is None and mystery.monthly_cost is None
    assert mystery.note == "no price model for this resource type"
    assert [r.name for r in result.unpriced] == ["n0", "key", "mystery"]
    assert result.total_monthly_cost == pytest.approx(100)
    assert result.summary() == ("≥ 100 CNY/month, 3 resource(s) unpriced; without a price: 1 "
                                f"on-demand instance(s) (8 GPUs) of {UNPRICED_TYPE} in n0")
    details = result.details()
    assert details["complete"] is False
    assert details["unpricedResources"] == ["n0", "key", "mystery"]
    assert details["gpuMonthlyCost"]["saving"] is None


def test_free_resources_cost_zero_and_are_not_unpriced():
    result = estimate([res("alicloud:vpc/network:Network", "vpc", {})])
    assert result.resources[0].free and result.resources[0].monthly_cost == 0
    assert result.summary() == "0 CNY/month" and not result.by_component()


def test_drain_queue_pays_its_daily_fee_and_ess_and_alarm_rules_are_free():
    result = estimate([res("alicloud:message/serviceQueue:ServiceQueue", "drain", {}),
                       res("alicloud:ess/notification:Notification", "notify", {}),
                       res("alicloud:cloudmonitor/serviceMetricAlarmRule:"
                           "ServiceMetricAlarmRule", "queue-missing", {})])
    queue, notification, alarm_rule = result.resources
    assert queue.monthly_cost == pytest.approx(17.3) and "20 million" in queue.note
    assert notification.free and alarm_rule.free and not result.unpriced


FUNCTION = "alicloud:fc/v3Function:V3Function"
TRIGGER = "alicloud:fc/v3Trigger:V3Trigger"
PUBLISHER = {"functionName": "fleet-publisher", "cpu": 0.05, "memorySize": 128,
             "diskSize": 512}


def timer(every: str, function: str = "fleet-publisher") -> PlannedResource:
    return res(TRIGGER, f"timer-{every}", {
        "functionName": function, "triggerType": "timer",
        "triggerConfig": f'{{"cronExpression":"{every}","payload":"","enable":true}}'})


def test_a_timer_function_pays_its_compute_units():
    result = estimate([res(FUNCTION, "publisher", PUBLISHER), timer("@every 2m")])
    function, trigger = result.resources
    runs = H * 60 / 2  # 21,900
    # 75 CU per 10,000 runs; 1 s each at 0.05 vCPU, 0.125 GB memory and 0.5 GB disk
    units = runs * 0.0075 + runs * (0.05 + 0.125 * 0.15 + 0.5 * 0.05)
    assert function.monthly_cost == pytest.approx(units * 0.00011)
    assert function.monthly_cost == pytest.approx(0.2439, abs=1e-4)
    assert "21,900 timer runs" in function.note and trigger.free
    assert BOOK.get("serverless.fc.cu").price == 0.00011


def test_a_function_without_a_timer_is_usage_based():
    result = estimate([res(FUNCTION, "publisher", PUBLISHER),
                       timer("@every 1m", function="another")])
    function = result.resources[0]
    assert function.monthly_cost is None and "usage-based" in function.note
    assert not function.unpriced


def test_every_type_the_program_creates_is_modelled_free_or_unpriced_with_a_reason():
    for token in covered_types():
        cost = estimate([res(token, "r", {})]).resources[0]
        assert cost.note != "no price model for this resource type", token
    capacity = estimate([res("alicloud:ecs/capacityReservation:CapacityReservation", "cr",
                             {})]).resources[0]
    assert capacity.unpriced and "pay-as-you-go" in capacity.note


def test_nat_eip_and_load_balancers():
    nat = res("alicloud:vpc/natGateway:NatGateway", "nat",
              {"natType": "Enhanced", "internetChargeType": "PayByLcu"}, rid="ngw-1")
    eip = res("alicloud:ecs/eipAddress:EipAddress", "eip",
              {"internetChargeType": "PayByTraffic", "paymentType": "PayAsYouGo"}, rid="eip-1")
    bound = res("alicloud:ecs/eipAssociation:EipAssociation", "bind",
                {"allocationId": "eip-1", "instanceId": "ngw-1", "instanceType": "Nat"})
    ecs_eip = res("alicloud:ecs/eipAddress:EipAddress", "eip2",
                  {"internetChargeType": "PayByTraffic"}, rid="eip-2")
    ecs_bound = res("alicloud:ecs/eipAssociation:EipAssociation", "bind2",
                    {"allocationId": "eip-2", "instanceType": "EcsInstance"})
    nlb = res("alicloud:nlb/loadBalancer:LoadBalancer", "nlb", {})
    alb = res("alicloud:alb/loadBalancer:LoadBalancer", "alb", {"loadBalancerEdition": "Basic"})
    result = estimate([nat, eip, bound, ecs_eip, ecs_bound, nlb, alb])
    cost = {r.name: r for r in result.resources}
    assert cost["nat"].monthly_cost == pytest.approx(0.24 * H)
    assert cost["eip"].monthly_cost == pytest.approx(0.02 * H)
    assert cost["eip2"].monthly_cost is None and not cost["eip2"].unpriced
    assert cost["nlb"].monthly_cost == pytest.approx(0.14 * H)
    assert cost["alb"].monthly_cost == pytest.approx(0.049 * H)
    assert sorted((r.name, c.name) for r, c in result.usage_based) == [
        ("alb", "Load balancer capacity units (LCU)"), ("eip", "Outbound data (per GB)"),
        ("eip2", "Outbound data (per GB)"), ("nat", "Capacity units (CU)"),
        ("nlb", "Load balancer capacity units (LCU)")]


def test_file_systems_by_kind():
    result = estimate([
        res("alicloud:nas/fileSystem:FileSystem", "xnas",
            {"fileSystemType": "extreme", "storageType": "standard", "capacity": 20480}),
        res("alicloud:nas/fileSystem:FileSystem", "nas",
            {"fileSystemType": "standard", "storageType": "Capacity"}),
        res("alicloud:nas/fileSystem:FileSystem", "cpfs",
            {"fileSystemType": "cpfs", "capacity": 3600})])
    xnas, nas, cpfs = result.resources
    assert xnas.monthly_cost == pytest.approx(20480 * 1.8)
    assert nas.monthly_cost is None and nas.components[0].usage_based and not nas.unpriced
    assert nas.components[0].price == 0.35
    assert cpfs.unpriced and [r.name for r in result.unpriced] == ["cpfs"]


def test_buckets_use_expected_sizes_from_the_config():
    cluster = cluster_config(merged(BASE_TRAINING, storage={"buckets": {"expected_gib": {
        "datasets": {"Standard": 1000, "IA": 500, "Archive": 1000}}}}))
    buckets = [res("alicloud:oss/bucket:Bucket", f"b-{p}", {"bucket": f"t01-dev-{p}"})
               for p in ("datasets", "models")]
    result = estimate(buckets, cluster=cluster)
    datasets, models = result.resources
    assert datasets.monthly_cost == pytest.approx(1000 * 0.12 + 500 * 0.08 + 1000 * 0.033)
    assert models.monthly_cost is None and models.components[0].usage_based
    assert models.note == "set storage.buckets.expected_gib to estimate storage"


def test_compare_pairs_resources_across_cluster_names():
    before = estimate([instance("a-n0"), instance("a-n1")])
    after = estimate([instance("b-n0", spotStrategy="SpotAsPriceGo"),
                      res("alicloud:kms/key:Key", "b-key", {})])
    diff = compare(before, after, "a", "b")
    rows = {d.name: (d.status, d.delta) for d in diff.resources}
    assert rows == {"b-n0": ("changed", pytest.approx(-GN7I_PRICE * 0.3 * H)),
                    "b-key": ("added", None),
                    "a-n1": ("removed", pytest.approx(-(GN7I_PRICE * H + 100)))}
    assert diff.delta_monthly == pytest.approx(after.total_monthly_cost
                                               - before.total_monthly_cost)
