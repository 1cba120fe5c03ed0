"""The compute validators at each level, with suppression."""

from __future__ import annotations

import pytest

from gpu_infra import catalog
from gpu_infra.knowhow import Level, run_validators

from .conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config, merged


def findings(cluster, name, region="cn-hangzhou"):
    return [f for f in run_validators(cluster_config(cluster, region)) if f.validator == name]


def training(suppress=(), **fleet):
    """BASE_TRAINING with one node (and the shared file system its spot workers need)."""
    return merged(BASE_TRAINING, fleet={"nodes": 1, **fleet}, suppress=list(suppress),
                  storage={"shared_fs": {"enabled": True}})


def inference(**fleet):
    return merged(BASE_INFERENCE, fleet=fleet)


def test_unknown_or_non_gpu_instance_type_is_an_error():
    [finding] = findings(training(instance_type="ecs.g7.2xlarge"), "unknown-instance-type")
    assert finding.level is Level.ERROR and finding.path == "fleet.instance_type"
    assert finding.message.startswith("ecs.g7.2xlarge is not a GPU instance type in the "
                                      "catalog (family g7); GPU families: ebmgn6e,")
    [finding] = findings(inference(instance_types=["ecs.gn7i-c8g1.2xlarge", "ecs.c7.large"]),
                         "unknown-instance-type")
    assert finding.path == "fleet.instance_types[1]"
    assert findings(training(), "unknown-instance-type") == []


def test_erdma_on_a_family_without_it_is_an_error():
    [finding] = findings(training(erdma="on"), "erdma-unsupported")
    assert (finding.level, finding.path) == (Level.ERROR, "fleet.erdma")
    assert finding.message == ("family gn7i has no eRDMA; use auto or off, or a family with "
                               "eRDMA: ebmgn7ex, ebmgn8ia, ebmgn8is, ebmgn8v, ebmgn9g, "
                               "ebmgn9gc, ebmgn9ge, gn8is, gn8v")
    assert findings(training(instance_type="ecs.gn8v-8x.48xlarge", erdma="on"),
                    "erdma-unsupported") == []


def test_low_latency_on_an_unsupported_family_is_an_error_and_splits_are_info():
    [finding] = findings(training(placement="LowLatency"), "low-latency-placement")
    assert (finding.level, finding.path) == (Level.ERROR, "fleet.placement")
    assert "do not support family gn7i; supported: ebmgn7ex, ebmgn8v, gn8v" in finding.message
    [info] = findings(training(instance_type="ecs.gn8v-8x.48xlarge", nodes=45),
                      "low-latency-placement")
    assert (info.level, info.path) == (Level.INFO, "fleet.nodes")
    assert info.message.startswith("45 nodes are split over 3 LowLatency deployment sets")
    assert findings(training(instance_type="ecs.gn8v-8x.48xlarge", nodes=45,
                             suppress=["low-latency-placement"]),
                    "low-latency-placement") == []


def test_multi_node_without_interconnect_warns_and_can_be_suppressed():
    [finding] = findings(training(nodes=4), "multi-node-interconnect")
    assert (finding.level, finding.path) == (Level.WARNING, "fleet.instance_type")
    assert finding.message.startswith("4 nodes of gn7i have neither NVLink nor eRDMA")
    assert findings(training(nodes=4, suppress=["multi-node-interconnect"]),
                    "multi-node-interconnect") == []
    assert findings(training(nodes=4, instance_type="ecs.gn7e-c16g1.32xlarge"),
                    "multi-node-interconnect") == []


def test_few_vcpus_per_gpu_warns_and_can_be_suppressed(monkeypatch):
    cluster = training(instance_type="ecs.gn6i-c24g1.12xlarge")  # 48 vCPU, 2 GPUs: fine
    assert findings(cluster, "low-vcpu-per-gpu") == []
    cluster = inference(instance_types=["ecs.vgn7i-vws-m24.7xlarge", "ecs.gn7-c13g1.26xlarge"])
    assert findings(cluster, "low-vcpu-per-gpu") == []
    low = catalog.get("ecs.gn6v-c8g1.2xlarge").model_copy(update={"vcpu": 6, "gpu_count": 2})
    original = catalog.get
    monkeypatch.setattr(catalog, "get", lambda t: low if t == low.type else original(t))
    [finding] = findings(training(instance_type=low.type), "low-vcpu-per-gpu")
    assert (finding.level, finding.path) == (Level.WARNING, "fleet.instance_type")
    assert finding.message == ("ecs.gn6v-c8g1.2xlarge has 3 vCPUs per GPU (below 4): "
                               "data loading may starve the GPUs")
    assert findings(training(instance_type=low.type, suppress=["low-vcpu-per-gpu"]),
                    "low-vcpu-per-gpu") == []


def test_spot_for_a_non_interruptible_fleet_is_an_error_that_cannot_be_suppressed():
    [finding] = findings(training(capacity="spot", suppress=["spot-non-interruptible"]),
                         "spot-non-interruptible")
    assert (finding.level, finding.path) == (Level.ERROR, "fleet.capacity")
    assert findings(training(capacity="spot", interruptible=True),
                    "spot-non-interruptible") == []
    [finding] = findings(inference(interruptible=False, on_demand_percentage_above_base=30),
                         "spot-non-interruptible")
    assert finding.path == "fleet.on_demand_percentage_above_base"
    assert finding.message.startswith("70% spot above the base")
    assert findings(inference(interruptible=False), "spot-non-interruptible") == []


@pytest.fixture
def regional_gn7i(monkeypatch):
    entry = catalog.get("ecs.gn7i-c8g1.2xlarge").model_copy(update={"regions": ("cn-beijing",)})
    original = catalog.get
    monkeypatch.setattr(catalog, "get", lambda t: entry if t == entry.type else original(t))


def test_type_not_offered_in_region_warns_where_the_catalog_knows(regional_gn7i):
    [finding] = findings(training(), "not-offered-in-region")
    assert (finding.level, finding.path) == (Level.WARNING, "fleet.instance_type")
    assert finding.message == ("ecs.gn7i-c8g1.2xlarge is not offered in cn-hangzhou per the "
                               "catalog (offered in: cn-beijing)")
    assert findings(training(suppress=["not-offered-in-region"]), "not-offered-in-region") == []
    beijing = merged(training(), network={"zones": ["cn-beijing-h"]})
    assert findings(beijing, "not-offered-in-region", region="cn-beijing") == []


def test_unknown_regions_give_no_warning():
    assert catalog.get("ecs.gn7i-c8g1.2xlarge").regions is None
    assert findings(training(), "not-offered-in-region") == []


@pytest.mark.parametrize("instance_type, level, says", [
    ("ecs.gn8v-8x.48xlarge", "WARNING",
     "family gn8v is sold through Alibaba Cloud sales, in specific regions only"),
    ("ecs.gn7s-c8g1.2xlarge", "WARNING", "family gn7s is sold on application (submit a ticket)"),
    ("ecs.ebmgn9ge.64xlarge", "WARNING", "family ebmgn9ge is in invitational preview"),
    ("ecs.gn5-c8g1.2xlarge", "INFO", "Alibaba no longer recommends family gn5")])
def test_a_family_not_on_open_sale_or_no_longer_recommended_is_said(instance_type, level,
                                                                    says):
    found = findings(training(instance_type=instance_type), "restricted-family")
    assert [(f.level.value, f.path) for f in found if says in f.message] == [
        (level, "fleet.instance_type")]
    assert findings(training(), "restricted-family") == []   # gn7i: on open sale


def test_the_restricted_family_warning_can_be_suppressed():
    assert findings(training(instance_type="ecs.gn8v-8x.48xlarge",
                             suppress=["restricted-family"]), "restricted-family") == []
