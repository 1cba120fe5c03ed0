"""The change report on edits of the ACK stacks (training-ack, inference-ack): one test per
kind of edit, each checking what the report says (replace, update in place, new nodes only,
nodes added or released, refused) and that it is what the provider's update semantics say
(gpu_infra_facts/update_semantics.json, read from the provider's Go source)."""

from __future__ import annotations

import copy

import pytest

from gpu_infra_facts import types as t
from gpu_infra_facts.update_preconditions import preconditions
from gpu_infra_facts.update_semantics import semantics
from gpu_infra_tools.review import review
from gpu_infra_tools.review.changes import ChangeReport, change_report
from gpu_infra_tools.review.field_edits import EDITS
from gpu_infra_tools.review.update_policies import edited_stack, policies_of

from .conftest import STACKS_DIR
from .golden import golden_record
from .shipped import planned_once
from .test_change_report import expect, report, rules

pytestmark = pytest.mark.slow  # plans an edited ACK stack per case

__all__ = ["report"]  # the fixture, shared with test_change_report

POOL = "llm-ack-gpu-pool"
SERVING_POOL = "chat-ack-gpu-pool"
SERVING_WORKLOAD = "chat-ack-workloads-gpu-jobs-chat-ack-serve"
"""The model server's Service and autoscaler (one name): pool bounds and zones reach them."""
ZONE_MAPS = "metadata.annotations.service.beta.kubernetes.io/alibaba-cloud-loadbalancer-zone-maps"
CLUSTER = "llm-ack-ack-k8s"
SERVING_CLUSTER = "chat-ack-ack-k8s"


def summary(result: ChangeReport) -> str:
    return "\n".join(result.summary_lines())


def reach(path: str) -> str | None:
    """How the provider applies a node pool's in-place change at `path` to its nodes."""
    rule = semantics(t.NODE_POOL).reaching_nodes(path)
    return rule.how if rule else None


@pytest.mark.parametrize(("edit", "pool", "because"), [
    ("ack-instance-type", POOL, ["instanceTypes"]),
    ("ack-instance-types", SERVING_POOL, ["instanceTypes"]),
    ("ack-disks", POOL, ["dataDisks.size"]),
    ("ack-spot-mix", SERVING_POOL, ["onDemandPercentageAboveBaseCapacity"]),
])
def test_pool_template_edits_reach_new_nodes_only(report, edit, pool, because):
    result = report(edit)
    expect(result, {pool: ("update", False, because)})
    assert all(semantics(t.NODE_POOL).replacing(p, {}) is None and reach(p) == "new-nodes"
               for p in because)
    assert result.impact.new_nodes_only == {pool: [because[0].split(".")[0]]}
    assert not result.impact.gpu_nodes
    assert rules(result) == {"nodes-keep-old-config": "WARNING"}
    assert "Running nodes keep the old settings" in summary(result)
    assert policies_of(result)[0] == "new nodes only"


def test_driver_pin_relabels_running_nodes_but_installs_on_new_ones_only(report):
    result = report("ack-driver")
    expect(result, {POOL: ("update", False, ["labels.value"])})
    assert reach("labels") == "running-nodes"
    assert result.impact.relabelled == {POOL: ["labels"]}
    assert result.impact.new_nodes_only[POOL] == [
        "label ack.aliyun.com/nvidia-driver-version (read when a node joins)"]
    assert not result.impact.gpu_nodes


def test_nodes_up_adds_nodes_to_the_running_pool(report):
    result = report("ack-nodes-up")
    expect(result, {POOL: ("update", False, ["desiredSize"])})
    assert reach("desiredSize") == "scale"
    assert result.impact.gpu_nodes == {"created": [POOL]}
    assert result.impact.pool_nodes == {POOL: 2}
    assert "GPU nodes created: 2 (llm-ack-gpu-pool (2 nodes))" in summary(result)
    assert not result.findings
    assert result.impact.cost_after > result.impact.cost_before


def test_nodes_down_releases_nodes_and_is_an_error_in_prod(report):
    result = report("ack-nodes-down")
    expect(result, {POOL: ("update", False, ["desiredSize"])})
    assert result.impact.gpu_nodes == {"deleted": [POOL]}
    assert result.impact.gpu_causes == {"desiredSize": 2}
    assert rules(result) == {"replaces-gpu-nodes": "ERROR"}
    assert "2 GPU node(s)" in result.findings[0].message


def test_a_fleet_past_one_deployment_set_adds_a_pool_and_keeps_the_first(report):
    """24 nodes: the first pool fills to 20 in place, a second pool in a second deployment
    set takes 4; no running node is released."""
    result = report("ack-new-pool")
    expect(result, {POOL: ("update", False, ["desiredSize"]),
                    f"{POOL}-001": ("create", False, []),
                    "llm-ack-gpu-ds-1": ("create", False, [])})
    assert result.impact.gpu_nodes == {"created": [POOL, f"{POOL}-001"]}
    assert result.impact.pool_nodes == {POOL: 16, f"{POOL}-001": 4}
    assert not result.blocked and "deleted" not in result.impact.gpu_nodes


def test_a_pool_removed_releases_its_nodes(tmp_path):
    """Back from 24 nodes to 4: the second pool is deleted with its nodes."""
    base = review(planned_once(edited_stack(EDITS["ack-new-pool"], tmp_path, STACKS_DIR))).to_json()
    result = change_report(review(planned_once(STACKS_DIR / "Pulumi.training-ack.yaml")), base,
                           "24 nodes")
    expect(result, {POOL: ("update", False, ["desiredSize"]),
                    f"{POOL}-001": ("delete", False, []),
                    "llm-ack-gpu-ds-1": ("delete", False, [])})
    assert result.impact.gpu_nodes == {"deleted": [POOL, f"{POOL}-001"]}
    assert result.impact.pool_nodes == {f"{POOL}-001": 4, POOL: 16}
    assert "GPU nodes deleted: 20" in summary(result)
    assert rules(result) == {"replaces-gpu-nodes": "ERROR"}


def test_autoscaler_limits_change_in_place_and_add_no_nodes(report):
    result = report("ack-scaling-limits")
    expect(result, {SERVING_POOL: ("update", False, ["scalingConfig.maxSize"]),
                    SERVING_WORKLOAD: ("update", False, ["spec.maxReplicas"])})
    assert reach("scalingConfig") == "pool"  # the autoscaler's bounds: no node touched now
    assert not result.impact.gpu_nodes and not result.findings


def test_autoscaler_owned_size_is_not_drift():
    """The provider reads desired_size back from the cloud (the autoscaler's count): an
    autoscaled pool ignores it, a fixed pool holds its stack value."""
    for stack, pool, drifts in (("inference-ack", SERVING_POOL, False),
                                ("training-ack", POOL, True)):
        base = copy.deepcopy(golden_record(stack))
        (record,) = [r for r in base["resources"] if r["name"] == pool]
        record["inputs"]["desiredSize"] = "7"
        result = change_report(review(planned_once(STACKS_DIR / f"Pulumi.{stack}.yaml")), base,
                               "the autoscaler moved it")
        changed = {c.name: c.change for c in result.changes if c.change != "same"}
        assert changed == ({pool: "update"} if drifts else {}), stack


def test_a_fixed_size_on_an_autoscaled_pool_warns_that_the_autoscaler_stays(report):
    result = report("ack-desired-size")
    expect(result, {SERVING_POOL: ("update", False, ["desiredSize"])})
    (change,) = [c for c in result.changes if c.name == SERVING_POOL]
    assert change.kept and all(p.startswith("scalingConfig.") for p in change.kept)
    assert semantics(t.NODE_POOL).kept_when_removed("scalingConfig.enable") is not None
    assert [(n, p) for n, p, _ in result.impact.ignored] == [
        (SERVING_POOL, "scalingConfig removed")]
    assert rules(result) == {"change-ignored": "WARNING"}


def test_kubernetes_version_upgrades_the_control_plane_in_place(report):
    result = report("ack-version")
    expect(result, {CLUSTER: ("update", False, ["version"])})
    assert semantics(t.MANAGED_KUBERNETES).replacing("version", {}) is None
    assert result.impact.upgraded == (CLUSTER, "1.34.1-aliyun.1", "1.35.0-aliyun.1")
    assert "node pools keep their kubelet version" in summary(result)
    assert not result.findings and not result.impact.gpu_nodes


def test_kubernetes_downgrade_is_refused(report):
    result = report("ack-version-down")
    assert preconditions(t.MANAGED_KUBERNETES)["version"].check == "kubernetes_upgrade"
    assert [name for name, _ in result.impact.refused] == [CLUSTER]
    assert "is a downgrade" in result.impact.refused[0][1]
    assert "never rolls an upgrade back" in result.impact.refused[0][1]
    assert rules(result) == {"refused-by-cloud": "ERROR"}
    assert result.impact.upgraded is None


def test_a_new_zone_adds_a_pod_vswitch_the_cluster_ignores(report):
    result = report("ack-pod-vswitch")
    expect(result, {"chat-ack-net-vsw-*cn-hangzhou-k": ("create", False, []),
                    "chat-ack-net-snat-*cn-hangzhou-k": ("create", False, []),
                    SERVING_CLUSTER: ("update", False, ["vswitchIds", "podVswitchIds"]),
                    "chat-ack-*-pool": ("update", False, ["vswitchIds"]),
                    SERVING_WORKLOAD: ("update", False, [ZONE_MAPS]),
                    "chat-ack-workloads-gpu-jobs-serving-clients":
                        ("update", False, ["spec.ingress.from.ipBlock.cidr"])})
    assert {c.name for c in result.changes if c.change == "create"} >= {
        "chat-ack-net-vsw-pods-cn-hangzhou-k", "chat-ack-net-snat-pods-cn-hangzhou-k"}
    assert semantics(t.MANAGED_KUBERNETES).ignoring("podVswitchIds", {}) is not None
    assert (SERVING_CLUSTER, "podVswitchIds") in {(n, p) for n, p, _ in
                                                  result.impact.ignored}
    assert result.impact.new_nodes_only == {SERVING_POOL: ["vswitchIds"]}
    assert reach("vswitchIds") == "new-nodes"


def test_a_public_api_endpoint_cannot_be_added_by_an_edit(report):
    result = report("ack-public-api")
    expect(result, {SERVING_CLUSTER: ("update", False, ["slbInternetEnabled"])})
    (change,) = [c for c in result.changes if c.name == SERVING_CLUSTER]
    assert change.ignored == ["slbInternetEnabled"]
    assert change.sources["slbInternetEnabled"].endswith(
        "resource_alicloud_cs_managed_kubernetes.go:356")
    assert rules(result) == {"change-ignored": "WARNING"}


def test_an_addon_version_upgrades_the_addon_in_place(report):
    result = report("ack-addon-version")
    expect(result, {"llm-ack-addons-ack-nvidia-device-plugin": ("update", False, ["version"])})
    assert semantics(t.KUBERNETES_ADDON).replacing("version", {}) is None
    assert not result.findings


def test_registry_edition_deletes_the_personal_repositories_with_their_images(report):
    result = report("ack-registry-edition")
    deleted = {c.name for c in result.changes if c.change == "delete"}
    assert {c.type for c in result.changes if c.change == "delete"} == {
        t.REGISTRY_NAMESPACE, t.REGISTRY_REPO}
    assert {name for _, name in result.impact.data["deleted"]} == {
        name for name in deleted if "-repo-" in name}
    assert result.impact.reserved == {"bought": ["chat-ack-registry-acr"]}
    assert semantics(t.REGISTRY_REPO).on_delete is not None
    assert rules(result) == {"replaces-data": "WARNING", "reserved-capacity": "WARNING"}


@pytest.mark.parametrize(("edit", "name", "because"), [
    ("ack-maintenance", CLUSTER, ["maintenanceWindow.maintenanceTime"]),
    ("ack-system-pool", "llm-ack-system-pool", ["desiredSize"]),
])
def test_cluster_and_system_pool_settings_change_in_place(report, edit, name, because):
    result = report(edit)
    expect(result, {name: ("update", False, because)})
    assert not result.findings and not result.impact.gpu_nodes
    assert policies_of(result) == ["in place"]


def test_a_volume_replaced_under_its_name_takes_its_claim(tmp_path):
    """A new NAS mount address (the file system or its mount target rebuilt) replaces the
    shared volume (spec.csi is ForceNew) under the same name: its claim, which names it, is
    replaced with it (replaceWith), since Kubernetes deletes no volume a claim binds."""
    base = copy.deepcopy(golden_record("training-ack"))
    [volume] = [r for r in base["resources"] if r["name"] == "llm-ack-kube-shared"]
    volume["inputs"]["spec"]["csi"]["volumeAttributes"]["server"] = "old.nas.aliyuncs.com"
    result = change_report(review(planned_once(STACKS_DIR / "Pulumi.training-ack.yaml")), base,
                           "an older mount address")
    expect(result, {"llm-ack-kube-shared": ("replace", False,
                                            ["spec.csi.volumeAttributes.server"]),
                    "llm-ack-kube-shared-claim": ("replace", False, ["replaceWith"])})
    assert result.impact.with_parent == [("llm-ack-kube-shared-claim", "llm-ack-kube-shared")]
