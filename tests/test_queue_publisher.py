"""The queue-metric publisher the stack deploys: its zip runs on its own (a fresh Python with
nothing but the zip on its path, as Function Compute runs it) against a fake CloudMonitor, and
the plans wire it to the fleet's job queue, metric group and period."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_infra.blocks.compute.queue_publisher import (
    HANDLER,
    SHIPPED_MODULES,
    function_zip,
    log_store_arn,
)
from gpu_infra.testing import ACCOUNT_ID
from gpu_infra_facts import types as t
from gpu_infra_facts.cloudmonitor import QUEUE_BACKLOG_METRICS

from .conftest import BASE_INFERENCE, BASE_RENDERING, merged
from .fake_cms import SECRET, FakeCloud, serving

VISIBLE, IN_FLIGHT, DELAYED = QUEUE_BACKLOG_METRICS
SETTINGS = {"GPU_INFRA_REGION": "cn-hangzhou", "GPU_INFRA_QUEUE": "r01-gpu-jobs-queue",
            "GPU_INFRA_GROUP_ID": "42", "GPU_INFRA_FLEET": "r01-gpu",
            "GPU_INFRA_METRIC": "job_queue_length"}


def _point(queue: str, value: float, region: str = "cn-hangzhou") -> dict[str, object]:
    return {"timestamp": 1700000000000, "userId": "1234567890123456", "region": region,
            "queue": queue, "Average": value, "Maximum": value}


def _invoke(code_dir: Path, endpoint: str, **settings: str) -> subprocess.CompletedProcess:
    """Call the handler the way Function Compute does, in an isolated interpreter that sees
    only the unpacked zip."""
    context = ("import types\nkeys = types.SimpleNamespace(access_key_id='STS.fn', "
               f"access_key_secret={SECRET!r}, security_token='fn-token')\n"
               "context = types.SimpleNamespace(credentials=keys)\n")
    module, function = HANDLER.split(".")
    script = (f"import sys\nsys.path[:0] = [{str(code_dir)!r}]\n{context}"
              f"from {module} import {function}\nprint({function}({{}}, context))\n")
    environment = {"PATH": os.environ.get("PATH", ""), "GPU_INFRA_CMS_ENDPOINT": endpoint,
                   **SETTINGS, **settings}
    return subprocess.run([sys.executable, "-I", "-S", "-c", script], env=environment,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def cloud() -> Iterator[FakeCloud]:
    with serving() as fake:
        yield fake


@pytest.fixture
def code_dir(tmp_path: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(function_zip())) as archive:
        archive.extractall(tmp_path / "code")
    return tmp_path / "code"


def test_the_zip_holds_the_shipped_modules_and_the_entry_point_only():
    with zipfile.ZipFile(io.BytesIO(function_zip())) as archive:
        assert sorted(archive.namelist()) == sorted([*SHIPPED_MODULES, "index.py"])


def test_the_same_source_gives_the_same_zip():
    assert function_zip() == function_zip()


@pytest.mark.slow  # the function in an isolated Python process
def test_the_function_puts_waiting_plus_running_plus_delayed(code_dir, cloud: FakeCloud):
    cloud.datapoints = {
        VISIBLE: [_point("other-queue", 100), _point("r01-gpu-jobs-queue", 5),
                  _point("r01-gpu-jobs-queue", 900, region="cn-beijing")],
        IN_FLIGHT: [_point("r01-gpu-jobs-queue", 3)],
        DELAYED: [_point("r01-gpu-jobs-queue", 1)]}
    run = _invoke(code_dir, cloud.url)
    assert run.returncode == 0, run.stderr
    [put] = cloud.metrics
    assert json.loads(put["MetricList.1.Values"]) == {"value": 9}
    assert json.loads(put["MetricList.1.Dimensions"]) == {"fleet": "r01-gpu"}
    assert (put["MetricList.1.GroupId"], put["MetricList.1.MetricName"]) == (
        "42", "job_queue_length")
    assert (put["AccessKeyId"], put["SecurityToken"]) == ("STS.fn", "fn-token")
    reads = [p for p in cloud.received if p["Action"] == "DescribeMetricLast"]
    assert {p["Namespace"] for p in reads} == {"acs_smq"}
    assert [p["MetricName"] for p in reads] == list(QUEUE_BACKLOG_METRICS)
    assert '"value": 9.0' in run.stdout


@pytest.mark.slow  # the function in an isolated Python process
def test_a_metric_without_a_point_counts_zero(code_dir, cloud: FakeCloud):
    cloud.datapoints = {VISIBLE: [_point("r01-gpu-jobs-queue", 2)]}
    assert _invoke(code_dir, cloud.url).returncode == 0
    assert json.loads(cloud.metrics[0]["MetricList.1.Values"]) == {"value": 2}


@pytest.mark.slow  # the function in an isolated Python process
def test_no_data_for_the_queue_puts_nothing_and_fails(code_dir, cloud: FakeCloud):
    cloud.datapoints = {VISIBLE: [_point("other-queue", 4)]}
    run = _invoke(code_dir, cloud.url)
    assert run.returncode != 0
    assert "no NumberOfMessagesVisible/NumberOfMessagesInvisible/NumberOfMessagesDelayed" \
        in run.stderr
    assert cloud.metrics == []


@pytest.mark.slow  # the function in an isolated Python process
def test_missing_settings_are_named(code_dir, cloud: FakeCloud):
    run = _invoke(code_dir, cloud.url, GPU_INFRA_QUEUE="", GPU_INFRA_GROUP_ID="")
    assert run.returncode != 0
    assert "missing settings: GPU_INFRA_QUEUE, GPU_INFRA_GROUP_ID" in run.stderr


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    from gpu_infra_tools.plan.engine import run_plan

    from .conftest import write_stack
    directory = tmp_path_factory.mktemp("farm")
    cluster = merged(BASE_RENDERING, fleet={**BASE_RENDERING["fleet"], "queue_scaling": {
        "period_seconds": 120, "job_timeout_seconds": 3600}})
    return run_plan(write_stack(directory, "farm", cluster))


def test_the_rendering_plan_runs_the_publisher_on_the_alarms_period(farm):
    function = farm.one(t.FC_FUNCTION)
    assert base64.b64decode(function.inputs["code"]["zipFile"]) == function_zip()
    assert function.inputs["handler"] == HANDLER
    environment = function.inputs["environmentVariables"]
    assert environment["GPU_INFRA_QUEUE"] == "r01-gpu-jobs-queue"
    assert environment["GPU_INFRA_FLEET"] == "r01-gpu"
    [group] = farm.by_type("alicloud:cms/monitorGroup:MonitorGroup")
    assert environment["GPU_INFRA_GROUP_ID"] == group.id == farm.outputs["metric_group_id"]
    trigger = farm.one(t.FC_TRIGGER)
    assert trigger.inputs["functionName"] == function.inputs["functionName"]
    assert json.loads(trigger.inputs["triggerConfig"])["cronExpression"] == "@every 2m"
    queues = {q.inputs["queueName"]: q.inputs for q in farm.by_type(t.MNS_QUEUE)}
    assert queues["r01-gpu-jobs-queue"]["visibilityTimeout"] == 3600
    assert farm.outputs["job_queue"] == "r01-gpu-jobs-queue"


def test_the_function_role_trusts_function_compute_and_only_reads_and_puts_metrics(farm):
    role = next(r for r in farm.by_type(t.RAM_ROLE) if "publisher" in r.name)
    trust = json.loads(role.inputs["assumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"] == {"Service": ["fc.aliyuncs.com"]}
    policy = next(p for p in farm.by_type(t.RAM_POLICY) if "publisher" in p.name)
    metrics, logs = json.loads(policy.inputs["policyDocument"])["Statement"]
    assert sorted(metrics["Action"]) == ["cms:DescribeMetricLast", "cms:PutCustomMetric"]
    assert logs["Action"] == ["log:PostLogStoreLogs"]
    assert logs["Resource"] == [log_store_arn("cn-hangzhou", ACCOUNT_ID, "r01-node-logs",
                                              "functions")]


def test_the_publishers_logs_go_to_the_stacks_project(farm):
    function = farm.one(t.FC_FUNCTION)
    project = farm.one(t.LOG_PROJECT).inputs["projectName"]
    stores = {s.inputs["logstoreName"]: s for s in farm.by_type(t.LOG_STORE)}
    assert function.inputs["logConfig"] == {
        "project": project, "logstore": "functions", "logBeginRule": "DefaultRegex",
        "enableRequestMetrics": True, "enableInstanceMetrics": False}
    assert stores["functions"].inputs["retentionPeriod"] == \
        stores["system"].inputs["retentionPeriod"]


def test_without_logs_the_publisher_writes_none(plan_cluster):
    cluster = merged(BASE_RENDERING, logs={"enabled": False}, fleet={
        **BASE_RENDERING["fleet"], "queue_scaling": {"period_seconds": 120}})
    plan = plan_cluster(cluster)
    assert "logConfig" not in plan.one(t.FC_FUNCTION).inputs
    policy = next(p for p in plan.by_type(t.RAM_POLICY) if "publisher" in p.name)
    assert len(json.loads(policy.inputs["policyDocument"])["Statement"]) == 1


def test_render_nodes_take_jobs_but_no_longer_put_the_metric(farm):
    policy = next(p for p in farm.by_type(t.RAM_POLICY) if p.name.endswith("fleet-policy"))
    statements = json.loads(policy.inputs["policyDocument"])["Statement"]
    actions = {action for s in statements for action in s["Action"]}
    assert "cms:PutCustomMetric" not in actions
    [jobs] = [s for s in statements
              if any("/queues/r01-gpu-jobs-queue/" in r for r in s["Resource"])]
    assert set(jobs["Action"]) == {"mns:ReceiveMessage", "mns:DeleteMessage",
                                   "mns:ChangeMessageVisibility"}


def test_inference_publishes_its_own_metric_by_default(plan_cluster):
    queue = {"metric_name": "pending_requests"}
    plan = plan_cluster(merged(BASE_INFERENCE, fleet={**BASE_INFERENCE["fleet"],
                                                      "queue_scaling": queue}))
    assert plan.by_type(t.FC_FUNCTION) == []
    stack = plan_cluster(merged(BASE_INFERENCE, fleet={
        **BASE_INFERENCE["fleet"], "queue_scaling": {**queue, "publisher": "stack"}}),
        name="stack")
    assert len(stack.by_type(t.FC_FUNCTION)) == 1
