"""`gpu-infra submit`: render jobs to a render farm's queue, one message per frame in the
format the nodes' worker takes (its own job_of judges them), sent with MNS SendMessage to the
stack's `job_queue` in the account of the credentials (STS GetCallerIdentity), against the
loopback stand-in; bad input is one line each and exit 2, a refused send exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpu_infra_tools.cli import main
from gpu_infra_tools.cli.submit import worker_module

from .alibaba_standin import KEY_ID, SECRET, Account, serving
from .conftest import STACKS_DIR
from .shipped import planned_once

pytestmark = pytest.mark.slow  # plans a render farm

WORKER = {"image": "registry-vpc.cn-hangzhou.aliyuncs.com/render-farm/blender:4.2.3",
          "command": ["blender"]}


@pytest.fixture
def stacks(tmp_path, monkeypatch) -> Path:
    """A stacks directory with the shipped render farm and a worker; credentials in the
    environment; plans made once."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALIBABA_CLOUD_ECS_METADATA",
                 "ALIBABA_CLOUD_SECURITY_TOKEN", "GPU_INFRA_ALIBABA_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
    monkeypatch.setattr("gpu_infra_tools.cli.planned.run_plan", planned_once)
    directory = tmp_path / "stacks"
    directory.mkdir()
    stack = yaml.safe_load((STACKS_DIR / "Pulumi.rendering-batch.yaml").read_text())
    stack["config"]["gpu-infra:cluster"].setdefault("worker", WORKER)
    (directory / "Pulumi.render.yaml").write_text(yaml.safe_dump(stack))
    return directory


def submit(stacks: Path, *words: str) -> int:
    return main(["submit", "render", "--stacks-dir", str(stacks), *words])


def test_a_dry_run_prints_one_job_per_frame_the_worker_takes(stacks, capsys):
    code = submit(stacks, "--frames", "1-5:2", "--env", "SHOT=s010", "--prefix",
                  "s010/{frame}/", "--dry-run", "--args", "-b /mnt/shared/s010.blend -f {frame}")
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    jobs = [json.loads(line) for line in out[:-1]]
    assert [job["args"][-1] for job in jobs] == ["1", "3", "5"]
    assert jobs[0] == {"args": ["-b", "/mnt/shared/s010.blend", "-f", "1"],
                       "env": {"SHOT": "s010"}, "output": "s010/1/"}
    assert out[-1] == "would send 3 job(s) to render-farm-gpu-jobs-queue"
    for line in out[:-1]:
        worker_module().job_of(line)


def test_jobs_reach_the_stacks_queue(stacks, capsys):
    account = Account(queues={"render-farm-gpu-jobs-queue": []})
    with serving(account) as stand_in:
        code = submit(stacks, "--frames", "41-42", "--endpoint", stand_in.url, "--format",
                      "json", "--args", "-f {frame}")
    assert code == 0, capsys.readouterr().err
    assert stand_in.actions() == ["GetCallerIdentity", "SendMessage", "SendMessage"]
    bodies = account.queues["render-farm-gpu-jobs-queue"]
    assert [json.loads(body)["args"] for body in bodies] == [["-f", "41"], ["-f", "42"]]
    assert json.loads(capsys.readouterr().out)["sent"] is True


def test_a_refused_send_says_how_many_went(stacks, capsys):
    with serving(Account()) as stand_in:
        code = submit(stacks, "--frames", "1-2", "--endpoint", stand_in.url, "--args",
                      "-f {frame}")
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().endswith("(sent 0 of 2 job(s) to render-farm-gpu-jobs-queue)")
    assert "QueueNotExist" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("words, line", [
    (("--frames", "9-1"), "--frames: LAST must not be below FIRST"),
    (("--frames", "a-b"), "--frames: not FIRST-LAST[:STEP]"),
    (("--env", "API_TOKEN=abcdef123456789xyz"), "--env API_TOKEN: holds a secret in clear"),
    (("--env", "1X=2"), "--env '1X': not NAME=VALUE"),
    (("--prefix", "../up/"), "the job is not one the worker takes: output:"),
    (("--args", "-f 'unclosed"), "--args: cannot be split into words")])
def test_bad_input_is_one_line_and_exit_2(stacks, capsys, words, line):
    code = submit(stacks, "--args", "-f 1", *words, "--dry-run")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and line in err[0], err
    assert "abcdef123" not in err[0]


def test_a_stack_without_a_worker_takes_no_jobs(stacks, capsys):
    code = main(["submit", "training-dev", "--dry-run", "--args", "x"])
    assert code == 2
    assert "runs no render worker" in capsys.readouterr().err
