"""The GPU catalog and the recommender."""

from __future__ import annotations

import pytest

from gpu_infra import catalog
from gpu_infra.catalog.recommend import Workload, recommend
from gpu_infra.schema import InferenceConfig, TrainingConfig

REQUIRED_FAMILIES = {"gn6i", "gn6v", "gn6e", "gn7", "gn7i", "gn7e", "gn7s", "gn8is", "gn8v",
                     "ebmgn7e", "ebmgn7ex", "ebmgn8v", "vgn7i-vws", "sgn7i-vws"}


def test_catalog_covers_the_required_families_and_no_price_is_zero():
    families = {entry.family for entry in catalog.entries()}
    assert families >= REQUIRED_FAMILIES
    priced = [entry for entry in catalog.entries() if entry.price]
    assert all(entry.price.cny_per_hour > 0 for entry in priced)
    assert {(e.price.date, e.price.source) for e in priced} == {("2024-12-31", "PRICE"),
                                                                 ("2024-10-09", "PRICESRV")}
    assert catalog.get("ecs.gn8v-8x.48xlarge").price is None  # unknown stays unknown


def test_a_size_price_names_its_own_source_date_and_region():
    v100 = catalog.get("ecs.gn6e-c12g1.3xlarge").price
    assert (v100.cny_per_hour, v100.region, v100.date, v100.source) == (
        19.739, "cn-hangzhou", "2024-10-09", "PRICESRV")
    a100 = catalog.get("ecs.gn7e-c16g1.4xlarge").price
    assert (a100.cny_per_hour, a100.date, a100.source) == (34.74, "2024-12-31", "PRICE")
    assert (catalog.get("ecs.ebmgn7ex.32xlarge").vcpu,
            catalog.get("ecs.ebmgn7ex.32xlarge").memory_gib) == (128, 1024)


def test_lookup_fields_and_vgpu_fractions():
    a10 = catalog.get("ecs.gn7i-c8g1.2xlarge")
    assert (a10.gpu_model, a10.gpu_count, a10.gpu_memory_gib, a10.vcpu) == (
        "NVIDIA A10", 1, 24, 8)
    assert a10.price.cny_per_hour == 9.53 and a10.price.region == "cn-hangzhou"
    slice_ = catalog.get("ecs.sgn7i-vws-m2.xlarge")
    assert slice_.gpu_count_label == "1/12" and slice_.gpu_memory_gib == 2
    assert catalog.get("ecs.gn8v-8x.48xlarge").is_unconfirmed("gpu_model")
    assert catalog.get("ecs.g7.xlarge") is None


def test_low_latency_and_erdma_families_follow_the_facts():
    low_latency = {e.family for e in catalog.entries() if e.low_latency}
    assert low_latency == {"gn8v", "ebmgn8v", "ebmgn7ex"}
    assert {e.family for e in catalog.entries() if e.erdma} == {
        "gn8is", "gn8v", "ebmgn7ex", "ebmgn8v", "ebmgn8is", "ebmgn8ia", "ebmgn9g", "ebmgn9ge",
        "ebmgn9gc"}


def test_filter_by_use_model_and_memory():
    found = catalog.filter(use="training", min_gpu_memory_gib=80)
    assert found and all("training" in e.uses and e.gpu_memory_gib >= 80 for e in found)
    assert {e.family for e in catalog.filter(gpu_model="t4")} == {"gn6i", "ebmgn6i"}
    # whole words: the A10 is not the A100, and every word must match
    assert {e.family for e in catalog.filter(gpu_model="A10")} == {
        "gn7i", "ebmgn7i", "vgn7i-vws", "sgn7i-vws"}
    assert {e.family for e in catalog.filter(gpu_model="a100 80gb")} == {
        "gn7e", "ebmgn7e", "ebmgn7ex"}
    assert catalog.family_of("ecs.vgn7i-vws-m4.xlarge") == "vgn7i-vws"


def test_recommend_multi_node_training_prefers_erdma_nvlink_then_price():
    ranked = recommend(TrainingConfig.workload, 80, 16, True, "cn-beijing")
    best = ranked[0]
    assert best.entry.type == "ecs.ebmgn7ex.32xlarge" and best.nodes == 2
    assert best.penalty == 0 and best.hourly_cny == pytest.approx(541.66)
    assert "eRDMA between nodes" in best.reasons
    # an 80 GiB type without eRDMA ranks below every full fit
    gn7e = next(r for r in ranked if r.entry.type == "ecs.gn7e-c16g1.32xlarge")
    assert gn7e.penalty > 0 and "no eRDMA: traffic between nodes uses TCP" in gn7e.reasons
    assert ranked.index(gn7e) > max(i for i, r in enumerate(ranked) if r.penalty == 0)


def test_recommend_single_node_inference_is_cheapest_fit_first():
    ranked = recommend(InferenceConfig.workload, 20, 1, False, "cn-hangzhou")
    assert ranked[0].entry.type == "ecs.gn7i-c8g1.2xlarge"
    assert ranked[0].hourly_cny == 9.53 and ranked[0].penalty == 0
    assert all(r.entry.gpu_count >= 1 and r.entry.gpu_memory_gib >= 20 for r in ranked)


def test_recommend_rejects_bad_input():
    with pytest.raises(ValueError, match="gpu memory must be above 0"):
        recommend(TrainingConfig.workload, 0, 8, False, "cn-beijing")


def test_nvlink_ranks_only_where_the_workloads_gpus_talk():
    types = ("ecs.gn7i-c32g1.32xlarge",)
    talking = Workload(uses=("inference",), gpus_talk=True)
    for workload, penalized in ((talking, True), (InferenceConfig.workload, False)):
        ranked = [r for r in recommend(workload, 20, 4, False, "cn-hangzhou")
                  if r.entry.type in types]
        assert ranked, "gn7i 4-GPU type should fit"
        assert ("no NVLink: GPUs talk over PCIe" in ranked[0].reasons) is penalized

