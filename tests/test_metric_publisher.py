"""The queue-metric publisher against a fake CloudMonitor (and metadata service) on localhost
(tests/fake_cms.py): the signature, the action, version and metric."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

from gpu_infra.blocks.functions.rpc import (
    Credentials,
    MetricPoint,
    PublishError,
    publish_queue_metric,
)
from gpu_infra_tools.cli import main

from .fake_cms import SECRET, FakeCloud, serving


@pytest.fixture
def cloud() -> Iterator[FakeCloud]:
    with serving() as fake:
        yield fake


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI-test")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)


def test_library_sends_a_signed_put_custom_metric(cloud: FakeCloud) -> None:
    point = MetricPoint(group_id="123456", metric_name="pending_requests", value=17,
                        fleet="chat-serve-gpu", timestamp_ms=1700000000000)
    request_id = publish_queue_metric(point, region="cn-hangzhou",
                                      credentials=Credentials("LTAI-test", SECRET),
                                      endpoint=cloud.url)
    assert request_id == "req-1"
    [sent] = cloud.metrics
    assert (sent["Version"], sent["Format"], sent["AccessKeyId"]) == (
        "2019-01-01", "JSON", "LTAI-test")
    assert sent["MetricList.1.GroupId"] == "123456"
    assert sent["MetricList.1.MetricName"] == "pending_requests"
    assert json.loads(sent["MetricList.1.Dimensions"]) == {"fleet": "chat-serve-gpu"}
    assert json.loads(sent["MetricList.1.Values"]) == {"value": 17}
    assert (sent["MetricList.1.Time"], sent["MetricList.1.Type"]) == ("1700000000000", "0")
    assert "SecurityToken" not in sent


def test_a_wrong_secret_is_refused_by_the_signature_check(cloud: FakeCloud) -> None:
    point = MetricPoint(group_id="1", metric_name="m", value=1, fleet="f")
    with pytest.raises(PublishError, match="SignatureDoesNotMatch"):
        publish_queue_metric(point, region="cn-hangzhou",
                             credentials=Credentials("LTAI-test", "wrong"), endpoint=cloud.url)


def test_role_credentials_come_from_the_metadata_service(cloud: FakeCloud) -> None:
    credentials = Credentials.resolve(environ={}, metadata_url=cloud.url)
    assert (credentials.access_key_id, credentials.security_token) == (
        "STS.role-key", "role-token")
    publish_queue_metric(MetricPoint(group_id="1", metric_name="m", value=0, fleet="f"),
                         region="cn-hangzhou", credentials=credentials, endpoint=cloud.url)
    assert cloud.metrics[0]["SecurityToken"] == "role-token"


def test_without_any_credentials_the_error_says_what_to_set() -> None:
    with pytest.raises(PublishError, match="ALIBABA_CLOUD_ACCESS_KEY_ID"):
        Credentials.resolve(environ={}, metadata_url="http://127.0.0.1:9")


def test_cli_one_value(cloud: FakeCloud, keys: None, capsys: pytest.CaptureFixture) -> None:
    code = main(["publish-queue-metric", "--region", "cn-hangzhou", "--group-id", "42",
                 "--fleet", "render-farm-gpu", "--metric", "job_queue_length", "--value", "3",
                 "--endpoint", cloud.url])
    assert code == 0
    assert "job_queue_length=3 fleet=render-farm-gpu group=42" in capsys.readouterr().out
    assert json.loads(cloud.metrics[0]["MetricList.1.Values"]) == {"value": 3}


def test_cli_refused_metric_exits_1(cloud: FakeCloud, keys: None,
                                    capsys: pytest.CaptureFixture) -> None:
    cloud.refuse_with = (400, {"Code": "InvalidParameter", "Message": "GroupId not found"})
    code = main(["publish-queue-metric", "--region", "cn-hangzhou", "--group-id", "42",
                 "--fleet", "f", "--metric", "m", "--value", "1", "--endpoint", cloud.url])
    assert code == 1
    assert "InvalidParameter: GroupId not found" in capsys.readouterr().err


@pytest.mark.slow  # runs the metric command as a process each round
def test_cli_loop_runs_the_command_each_round_and_survives_bad_output(
        cloud: FakeCloud, keys: None, tmp_path, capsys: pytest.CaptureFixture) -> None:
    counter = tmp_path / "queue"
    counter.write_text("")
    script = tmp_path / "queue.sh"
    # prints 5, then junk, then 7: the junk round is reported and skipped
    script.write_text(f"#!/bin/sh\nn=$(wc -c < {counter})\nprintf x >> {counter}\n"
                      "case $n in 0) echo 5;; 1) echo busy;; *) echo 7;; esac\n")
    script.chmod(0o755)
    code = main(["publish-queue-metric", "--region", "cn-hangzhou", "--group-id", "42",
                 "--fleet", "f", "--metric", "m", "--command", str(script), "--interval", "0",
                 "--count", "3", "--endpoint", cloud.url])
    assert code == 0
    assert [json.loads(p["MetricList.1.Values"])["value"] for p in cloud.metrics] == [5, 7]
    assert "printed 'busy', not a number" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--group-id", "abc", "--value", "1"], "not a CloudMonitor group id"),
    (["--group-id", "1", "--command", "true", "--count", "0"], "--count 1 or more"),
])
def test_cli_bad_arguments_exit_2(extra, message, capsys: pytest.CaptureFixture) -> None:
    code = main(["publish-queue-metric", "--region", "cn-hangzhou", "--fleet", "f",
                 "--metric", "m", *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_the_loop_runs_with_the_cyclic_collector_on(
        cloud: FakeCloud, keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script pauses the collector for a command; a loop that may run for days
    turns it back on."""
    from gpu_infra_tools.cli import publish

    collecting: list[bool] = []

    def measure(command: str) -> None:
        collecting.append(gc.isenabled())

    monkeypatch.setattr(publish, "_measure", measure)
    gc.disable()
    try:
        code = main(["publish-queue-metric", "--region", "cn-hangzhou", "--group-id", "42",
                     "--fleet", "f", "--metric", "m", "--command", "true", "--interval", "0",
                     "--count", "2", "--endpoint", cloud.url])
    finally:
        gc.enable()
    assert code == 0
    assert collecting == [True, True]
