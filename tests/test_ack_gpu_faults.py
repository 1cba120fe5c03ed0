"""GPU faults on ACK page the stack's contacts: the node problem detector's fault events in
the stack's SLS project, imported into CloudMonitor and alarmed on (blocks/ack/gpu_faults)."""

from __future__ import annotations

import re

import pytest

from gpu_infra.blocks.ack.gpu_faults import SLS_GROUP_NAME_LENGTH, sls_group_name
from gpu_infra.blocks.bootstrap.steps.gpu_infra_health import CRITICAL_XIDS
from gpu_infra_facts import types as t
from gpu_infra_facts.ack import (
    ADDONS,
    EVENT_REASON_KEY,
    EVENT_STORE,
    NPD_FAULT_XIDS,
    NPD_FENCING_SINCE,
    NPD_GPU_FAULT_REASONS,
)
from gpu_infra_facts.hybrid_monitoring import (
    HYBRID_NAMESPACE_SPECIFICATIONS,
    PROMETHEUS_ALARM_NAMESPACE,
)

from .conftest import merged
from .shipped import shipped_plan
from .test_ack import ACK_TRAINING


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("."))


@pytest.mark.parametrize("stack", ["training-ack", "inference-ack"])
def test_gpu_fault_events_page_the_stacks_contact_group(stack):
    plan = shipped_plan(stack)
    (alarm,) = [r for r in plan.by_type(t.CMS_ALARM) if r.name.endswith("-gpu-health-faults")]
    (contacts,) = plan.by_type(t.ALARM_CONTACT_GROUP)
    assert alarm.inputs["contactGroups"] == [contacts.inputs["alarmContactGroupName"]]
    assert alarm.inputs["project"] == PROMETHEUS_ALARM_NAMESPACE
    namespace = plan.one(t.CMS_NAMESPACE)
    assert alarm.inputs["metric"] == namespace.inputs["namespace"]
    assert namespace.inputs["specification"] in HYBRID_NAMESPACE_SPECIFICATIONS
    (rule,) = alarm.inputs["prometheuses"]
    assert rule["level"] == "Critical" and rule["times"] == 1
    assert re.fullmatch(r"sum by \(node\) \(gpu_faults_events\) >= 1", rule["promQl"])

    (source,) = plan.one(t.CMS_SLS_GROUP).inputs["slsGroupConfigs"]
    assert source["slsProject"] == plan.one(t.LOG_PROJECT).inputs["projectName"]
    assert source["slsLogstore"] == EVENT_STORE
    task = plan.one(t.CMS_HYBRID_SLS_TASK)
    assert task.inputs["collectTargetType"] == plan.one(t.CMS_SLS_GROUP).inputs["slsGroupName"]
    assert task.inputs["namespace"] == namespace.inputs["namespace"]
    config = task.inputs["slsProcessConfig"]
    assert config["filter"]["relation"] == "or"
    assert {(f["slsKeyName"], f["operator"], f["value"]) for f in config["filter"]["filters"]} \
        == {(EVENT_REASON_KEY, "=", reason) for reason in NPD_GPU_FAULT_REASONS}
    assert plan.outputs["gpu_fault_alarm_id"]


def test_the_events_come_from_a_problem_detector_that_fences_the_gpu():
    plan = shipped_plan("training-ack")
    (npd,) = [a for a in plan.by_type(t.KUBERNETES_ADDON)
              if a.inputs["name"] == "ack-node-problem-detector"]
    assert version(npd.inputs["version"]) >= version(NPD_FENCING_SINCE)
    assert version(ADDONS["ack-nvidia-device-plugin"].version) >= (0, 17, 0)
    assert '"sls_project_name"' in npd.inputs["config"]


def test_the_faults_are_the_node_checks_faults():
    assert set(NPD_FAULT_XIDS) == CRITICAL_XIDS
    assert "NvidiaXID79Error" in NPD_GPU_FAULT_REASONS
    assert "NvidiaXID13Error" not in NPD_GPU_FAULT_REASONS


WITH_CONTACT = merged(ACK_TRAINING, monitoring={
    "contacts": [{"name": "oncall", "email": "oncall@example.com"}]})
"""An ACK training cluster with a contact: its GPU-fault alarm is on (events and logs)."""


def test_a_cluster_with_a_contact_gets_the_alarm(plan_cluster):
    """The baseline of the test below: the same cluster with its switch and its logs on."""
    assert plan_cluster(WITH_CONTACT, name="with").by_type(t.CMS_HYBRID_SLS_TASK)


@pytest.mark.parametrize("change", [
    {"monitoring": {"contacts": [{"name": "oncall", "email": "oncall@example.com"}],
                    "events": {"gpu_health": False}}},
    {"logs": {"enabled": False}},
])
def test_no_alarm_without_its_switch_or_its_logs(plan_cluster, change):
    without = plan_cluster(merged(WITH_CONTACT, **change), name="without")
    assert not without.by_type(t.CMS_HYBRID_SLS_TASK) and not without.by_type(t.CMS_NAMESPACE)


@pytest.mark.parametrize("namespace", ["llm-ack-gpu-health", "a" * 40 + "-gpu-health-1a2b3c4d"])
def test_sls_group_names_meet_the_providers_rule(namespace):
    name = sls_group_name(namespace)
    assert re.fullmatch(r"[a-zA-Z][A-Za-z0-9_]{1,31}", name)
    assert len(name) <= SLS_GROUP_NAME_LENGTH and name.endswith(namespace[-6:].replace("-", "_"))
