"""The queue-metric publisher against a fake CloudMonitor (and metadata service) on localhost
(tests/fake_cms.py): the signature, the action, version and metric."""

from __future__ import annotations

import gc
import json
import subprocess
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
    assert code == 1  # a round failed
    assert [json.loads(p["MetricList.1.Values"])["value"] for p in cloud.metrics] == [5, 7]
    err = capsys.readouterr().err
    assert "printed 'busy', not a number" in err
    assert "1 of 3 round(s) failed" in err


def test_the_loop_runs_with_the_cyclic_collector_on(
        cloud: FakeCloud, keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script pauses the collector for a command; a loop that may run for days
    turns it back on."""
    from gpu_infra_tools.cli import publish

    collecting: list[bool] = []

    def measure(command: list[str]) -> float:
        collecting.append(gc.isenabled())
        return 1.0

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


PUBLISH = ("publish-queue-metric", "--region", "cn-hangzhou", "--group-id", "42", "--fleet",
           "f", "--metric", "m")
BAD_PUBLISH_ARGUMENTS = {
    "nan-value": (("--value", "nan"), "--value: 'nan': must be a finite number from 0"),
    "infinite-value": (("--value", "inf"), "--value: 'inf': must be a finite number"),
    "negative-value": (("--value=-1",), "--value: '-1': must be a finite number from 0"),
    "huge-value": (("--value", "1e300"), "--value: '1e300': must be a finite number"),
    "word-value": (("--value", "many"), "--value: 'many', not a number"),
    "endpoint-colons": (("--value", "1", "--endpoint", "::::"),
                        "--endpoint: '::::': not an https:// URL with a host"),
    "endpoint-file": (("--value", "1", "--endpoint", "file:///etc/passwd"),
                      "--endpoint: 'file:///etc/passwd': not an https:// URL"),
    "endpoint-plain-http": (("--value", "1", "--endpoint", "http://metrics.example.com/"),
                            "http only to a loopback address; use https"),
    "endpoint-credentials": (("--value", "1", "--endpoint", "https://u:p@example.com/"),
                             "give scheme, host, port and path only"),
    "endpoint-bad-port": (("--value", "1", "--endpoint", "https://example.com:99999/"),
                          "not a URL (Port out of range"),
    "region-host-injection": (("--value", "1", "--region", "evil.com/#"),
                              "--region: 'evil.com/#': unknown region"),
    "metric-spaces": (("--value", "1", "--metric", "queue length"),
                      "--metric: 'queue length': not a metric name"),
    "metric-digit-first": (("--value", "1", "--metric", "1queue"), "not a metric name"),
    "fleet-newline": (("--value", "1", "--fleet", "a\nb"), "--fleet: 'a\\nb': not a fleet name"),
    "group-letters": (("--value", "1", "--group-id", "abc"),
                      "--group-id: 'abc': not a CloudMonitor group id"),
    "interval-nan": (("--command", "true", "--interval", "nan"), "--interval: 'nan': must be"),
    "interval-year": (("--command", "true", "--interval", "31536000"),
                      "must be a finite number from 0 to 86400"),
    "count-zero": (("--command", "true", "--count", "0"), "--count: 0: must be 1 or more"),
    "command-empty": (("--command", "  "), "--command: empty"),
    "command-open-quote": (("--command", "llen 'jobs"), "--command: cannot be split"),
}
"""Arguments publish-queue-metric refuses before it looks for credentials: the option and
what stderr says."""


@pytest.mark.parametrize("name", BAD_PUBLISH_ARGUMENTS)
def test_bad_arguments_are_refused_before_credentials(name: str, capsys, monkeypatch):
    extra, message = BAD_PUBLISH_ARGUMENTS[name]

    def no_lookup(*_args: object, **_kwargs: object) -> Credentials:
        raise AssertionError("credentials looked up before the arguments were checked")

    monkeypatch.setattr(Credentials, "resolve", no_lookup)
    with pytest.raises(SystemExit) as refused:
        main([*PUBLISH, *extra])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and message in err, err
    assert len(err.splitlines()[-1]) < 300 and "Traceback" not in err


@pytest.mark.parametrize("printed", ["nan", "inf", "-3", "1e999", ""])
def test_a_round_printing_no_queue_length_sends_nothing_and_fails(
        printed: str, cloud: FakeCloud, keys: None, monkeypatch, capsys) -> None:
    from gpu_infra_tools.cli import publish

    def run(command, **_options):
        return subprocess.CompletedProcess(command, 0, f"{printed}\n", "")

    monkeypatch.setattr(publish.subprocess, "run", run)
    code = main([*PUBLISH, "--command", "llen jobs", "--interval", "0", "--count", "2",
                 "--endpoint", cloud.url])
    err = capsys.readouterr().err
    assert code == 1 and cloud.metrics == []
    assert "2 of 2 round(s) failed" in err and "Traceback" not in err


def test_a_round_whose_command_fails_is_a_failure(cloud: FakeCloud, keys: None, monkeypatch,
                                                  capsys) -> None:
    """A command that exits non-zero fails its round even if it printed a number; the
    rounds that worked are sent."""
    from gpu_infra_tools.cli import publish

    answers = iter([(0, "4"), (1, "5"), (0, "6")])

    def run(command, **_options):
        code, printed = next(answers)
        return subprocess.CompletedProcess(command, code, printed, "")

    monkeypatch.setattr(publish.subprocess, "run", run)
    code = main([*PUBLISH, "--command", "llen jobs", "--interval", "0", "--count", "3",
                 "--endpoint", cloud.url])
    err = capsys.readouterr().err
    assert code == 1
    assert [json.loads(p["MetricList.1.Values"])["value"] for p in cloud.metrics] == [4, 6]
    assert "'llen jobs' exited 1" in err and "1 of 3 round(s) failed" in err


def test_every_round_refused_by_cloudmonitor_exits_1(cloud: FakeCloud, keys: None,
                                                     monkeypatch, capsys) -> None:
    from gpu_infra_tools.cli import publish

    monkeypatch.setattr(publish, "_measure", lambda command: 2.0)
    cloud.refuse_with = (400, {"Code": "InvalidParameter", "Message": "GroupId not found"})
    code = main([*PUBLISH, "--command", "llen jobs", "--interval", "0", "--count", "2",
                 "--endpoint", cloud.url])
    assert code == 1 and "2 of 2 round(s) failed" in capsys.readouterr().err
