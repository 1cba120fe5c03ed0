"""The model server on an ECS inference node: the model's fetch (gpu-infra-api model-get, as
the node tools install it) under each supported system's python3 against the stand-in OSS
(signed GetObject), and the serving step in the bootstrap sandbox (it starts the unit, waits
for the readiness path, fails at once on a model or image that cannot be had)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import (
    ServingUnit,
    node_files,
    node_tools_installer,
    serving_files,
    with_node_tools,
)
from gpu_infra_facts import serving

from .bootstrap_sandbox import Run, Sandbox, clear_calls
from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, python_of
from .test_bootstrap_run import SCALING, steps_started

pytestmark = pytest.mark.slow  # node programs under each system's python3 and bash

BUCKET, PREFIX = "chat-prod-models", "chat/v2"
FILES = {"config.json": b'{"architectures": ["LlamaForCausalLM"]}\n',
         "weights/model-00001-of-00002.safetensors": b"\x00\x01" * 4096,
         "weights/model-00002-of-00002.safetensors": b"\x02\x03" * 4096}
UNIT = ServingUnit(image="registry-vpc.cn-beijing.aliyuncs.com/ml/vllm-openai:v0.6.3",
                   command=("vllm", "serve", "/mnt/models/chat/v2", "--port", "8000"),
                   port=8000, readiness_path="/health", model=PREFIX, models_bucket=BUCKET,
                   model_cache="/mnt/scratch/models")
SYSTEMS = list(PYTHONS)


def manifest(files: dict[str, bytes]) -> bytes:
    """`sha256sum` output over `files` (as `cd model && sha256sum ./*` writes it)."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  ./{name}\n"
                   for name, data in files.items()).encode()


def upload(cloud: FakeNodeCloud, files: dict[str, bytes], listed: bytes | None = None) -> None:
    """The model's files and its manifest (`listed`, default: the files' own) in the bucket."""
    for name, data in files.items():
        cloud.state.objects[(BUCKET, f"{PREFIX}/{name}")] = (data, "Standard")
    cloud.state.objects[(BUCKET, f"{PREFIX}/{serving.MANIFEST}")] = (
        manifest(files) if listed is None else listed, "Standard")


def install(root: Path, cloud: FakeNodeCloud) -> Path:
    """gpu-infra-api and its model fetch as the node gets them, config.sh at the stand-in."""
    files = {**node_files(SCALING), **serving_files(UNIT)}
    for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_models.py"):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path][0])
    (root / "opt/gpu-infra/config.sh").write_text(
        f"REGION={SCALING.region}\nFLEET={SCALING.fleet}\nMODELS_BUCKET={BUCKET}\n" + "".join(
            f"{key}={value}\n" for key, value in cloud.settings("i-node0").items()))
    return root / "opt/gpu-infra/bin/gpu-infra-api"


def model_get(system: str, api: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python_of(system), str(api), "model-get", PREFIX, str(cache)],
                          capture_output=True, text=True, timeout=240, check=False,
                          env={"GPU_INFRA_ROOT": str(api.parents[3]), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_model_lands_checked_in_a_directory_named_by_its_manifest(tmp_path, system):
    cache = tmp_path / "cache"
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES)
        api = install(tmp_path / "root", cloud)
        (cache / ".partial-leftover").mkdir(parents=True)  # a download a crash cut short
        (cache / ("0" * 64)).mkdir()  # the model before this one
        first = model_get(system, api, cache)
        cloud.state.objects = {key: value for key, value in cloud.state.objects.items()
                               if key[1].endswith(serving.MANIFEST)}
        again = model_get(system, api, cache)  # the files are not fetched a second time
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    digest = hashlib.sha256(manifest(FILES)).hexdigest()
    assert first.stdout == again.stdout == f"{cache / digest}\n"
    assert {name: (cache / digest / name).read_bytes() for name in FILES} == FILES
    assert sorted(path.name for path in cache.iterdir()) == [digest]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_corrupt_object_is_refused_and_nothing_is_left_to_serve(tmp_path, system):
    cache = tmp_path / "cache"
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES)
        name = "weights/model-00002-of-00002.safetensors"
        cloud.state.objects[(BUCKET, f"{PREFIX}/{name}")] = (b"\x02\x03" * 4095, "Standard")
        fetched = model_get(system, install(tmp_path / "root", cloud), cache)
    assert fetched.returncode == 1 and fetched.stdout == ""
    assert fetched.stderr == (f"gpu-infra-api: oss://{BUCKET}/{PREFIX}/{name} does not match "
                              f"its sha256 in SHA256SUMS (corrupt, or replaced after the "
                              "manifest was made)\n")
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_missing_model_or_file_is_one_line_and_a_later_try(tmp_path, system):
    cache = tmp_path / "cache"
    with FakeNodeCloud(["i-node0"]) as cloud:
        api = install(tmp_path / "root", cloud)
        no_model = model_get(system, api, cache)
        upload(cloud, FILES)
        del cloud.state.objects[(BUCKET, f"{PREFIX}/config.json")]
        no_file = model_get(system, api, cache)
    assert no_model.returncode == no_file.returncode == 75  # not uploaded yet: try again
    assert no_model.stderr == (f"gpu-infra-api: oss GetObject /{BUCKET}/{PREFIX}/SHA256SUMS "
                               "failed: 404 NoSuchKey (no such object: upload it)\n")
    assert no_file.stderr == (f"gpu-infra-api: oss GetObject /{BUCKET}/{PREFIX}/config.json "
                              "failed: 404 NoSuchKey (no such object: upload it)\n")
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("line", ["abc  config.json", f"{'a' * 64}  ../../etc/shadow",
                                  f"{'a' * 64}  /etc/shadow", f"{'a' * 64}  w//x", ""])
def test_a_manifest_line_that_is_not_a_file_of_the_model_is_refused(tmp_path, line):
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES, listed=f"{line}\n".encode())
        fetched = model_get("ubuntu-22.04", install(tmp_path / "root", cloud), tmp_path / "c")
    where = f"oss://{BUCKET}/{PREFIX}/SHA256SUMS"
    expected = f"{where} lists no file" if not line else \
        f"{where} line 1: not `<sha256>  <relative path>`"
    assert (fetched.returncode, fetched.stderr) == (1, f"gpu-infra-api: {expected}\n")
    assert not (tmp_path / "shadow").exists() and list((tmp_path / "c").iterdir()) == []


# --- The serving step in the bootstrap ---------------------------------------------------------

SERVING_NODE = with_node_tools(dataclasses.replace(SCALING, serving=UNIT), "chat-checkpoints")


def boot_serving_node(tmp_path: Path, **knobs: str) -> tuple[Sandbox, Run]:
    """A scaling node with the model server, booted once; `knobs` default: the server
    refuses one poll, then answers."""
    sandbox = Sandbox(tmp_path)
    for name, value in (knobs or {"serving_polls": "1"}).items():
        sandbox.knob(name.replace("_", "-"), value)
    assert SERVING_NODE.node_tools is not None
    stored = sandbox.dir / "objects" / SERVING_NODE.node_tools.key
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(node_tools_installer(SERVING_NODE))
    assert sandbox.install(SERVING_NODE).code == 0
    return sandbox, sandbox.boot()


def test_the_node_reports_healthy_only_once_the_server_answers(tmp_path):
    sandbox, run = boot_serving_node(tmp_path)
    assert run.code == 0, run.output
    steps = steps_started(run.output)
    assert steps[-2:] == ["serving", "health"]
    calls = run.calls
    start = calls.index("systemctl restart gpu-infra-serving.service")
    polls = [i for i, call in enumerate(calls)
             if call.startswith("curl") and "http://127.0.0.1:8000/health" in call]
    answered = calls.index("gpu-infra-api answer-scale-out")
    assert calls.index("systemctl enable gpu-infra-serving.service") < start < polls[0]
    assert len(polls) == 2 and polls[-1] < answered  # one refused, one answered, then ready
    assert "the model server answers http://127.0.0.1:8000/health (10s)" in run.output


def test_a_reboot_starts_the_server_again_and_new_node_tools_restart_it(tmp_path):
    sandbox, first = boot_serving_node(tmp_path)
    assert first.code == 0, first.output
    clear_calls(sandbox)
    again = sandbox.boot()
    assert again.code == 0 and "systemctl start gpu-infra-serving.service" in again.calls
    assert "systemctl restart gpu-infra-serving.service" not in again.calls
    newer = with_node_tools(dataclasses.replace(
        SCALING, serving=dataclasses.replace(UNIT, image=UNIT.image.replace("v0.6.3", "v0.6.4"))),
        "chat-checkpoints")
    assert SERVING_NODE.node_tools is not None and newer.node_tools is not None
    stored = sandbox.dir / "objects" / newer.node_tools.key
    stored.write_text(node_tools_installer(newer))
    config = sandbox.root / "opt/gpu-infra/config.sh"
    config.write_text(config.read_text().replace(SERVING_NODE.node_tools.key,
                                                 newer.node_tools.key))
    clear_calls(sandbox)
    changed = sandbox.boot()
    assert changed.code == 0 and "systemctl restart gpu-infra-serving.service" in changed.calls
    assert "v0.6.4" in sandbox.root.joinpath("etc/gpu-infra/serving.env").read_text()


def test_a_model_that_cannot_be_had_fails_the_node_at_once(tmp_path):
    error = "model chat/v2: gpu-infra-api: oss://m/chat/v2/x does not match its sha256"
    sandbox, run = boot_serving_node(tmp_path, serving_fails=error)
    assert run.code != 0
    assert sandbox.root.joinpath("var/lib/gpu-infra/unhealthy").read_text() == "serving\n"
    assert f"ERROR: the model server cannot start: {error}" in run.output
    assert "gpu-infra-api answer-scale-out" in run.calls
    assert len([call for call in run.calls if call.startswith("curl")
                and "127.0.0.1" in call]) == 1  # no 30-minute wait


def test_a_server_that_never_answers_fails_after_its_start_allowance(tmp_path):
    sandbox, run = boot_serving_node(tmp_path, serving_polls="100000")
    assert run.code != 0
    assert re.search(r"did not answer http://127.0.0.1:8000/health in "
                     rf"{serving.START_SECONDS}s: journalctl -u gpu-infra-serving", run.output)
    polls = [call for call in run.calls if call.startswith("curl") and "127.0.0.1" in call]
    assert len(polls) == serving.START_SECONDS // serving.POLL_SECONDS + 1


def test_a_model_never_uploaded_is_named_when_the_allowance_ends(tmp_path):
    missing = ("model chat/v2: gpu-infra-api: oss GetObject /m/chat/v2/SHA256SUMS failed: 404 "
               "NoSuchKey (no such object: upload it)")
    sandbox, run = boot_serving_node(tmp_path, serving_polls="100000", serving_waits=missing)
    assert run.code != 0
    assert f"in {serving.START_SECONDS}s: {missing}" in run.output
    assert sandbox.root.joinpath("var/lib/gpu-infra/unhealthy").read_text() == "serving\n"
