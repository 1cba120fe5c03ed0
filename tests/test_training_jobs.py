"""The ready training job: its NCCL settings are what the ECS bootstrap writes for the same
nodes (one source), the PyTorchJob and its pods validate against the vendored CRD and the
pinned Kubernetes schema, `gpu-infra job` prints what the plan exports, bad input is one line
per problem with exit 2, and spot fleets keep their rendezvous node on demand."""

from __future__ import annotations

import copy
import os
import shlex
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from gpu_infra.blocks.bootstrap import (
    launch_files,
    node_tools_installer,
    unpack_user_data,
    with_node_tools,
)
from gpu_infra.blocks.workloads.training_job import TrainingTarget, pod_env, pytorch_job
from gpu_infra.nodeplan.plans import SpotWorkers, TrainingNodes
from gpu_infra.schema import ConfigError
from gpu_infra_facts import jobs
from gpu_infra_facts.node_stack import erdma_devices, nccl_env
from gpu_infra_tools.cli import main

from .bootstrap_sandbox import Sandbox
from .conftest import BASE_TRAINING, STACKS_DIR, cluster_config, merged
from .k8s_schemas import problems
from .shipped import shipped_plan
from .spot_sandbox import install
from .test_bootstrap_run import TRAINING
from .test_bootstrap_scripts import SHELLCHECK
from .test_spot_reclaim import moved

TARGET = TrainingTarget(
    name="t01-train", instance_type="ecs.ebmgn8v.48xlarge", nodes=4, min_nodes=1,
    gpus_per_node=8, erdma=True, nccl_cidr="10.1.0.0/24",
    pool_selector=("gpu-infra/pool", "t01-gpu"), has_spot=True, shared_fs_claim="shared",
    checkpoints_claim="oss-checkpoints", image="registry-vpc.cn-beijing.aliyuncs.com/t01/train:1")
SPOT_TRAINING = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                             "nodes": 4, "capacity": "spot",
                                             "interruptible": True},
                       storage={"shared_fs": {"enabled": True}})


def sourced(text: str) -> dict[str, str]:
    """KEY=value lines as a shell sourcing them sees them (a later line of a key wins)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.mark.slow  # the bootstrap in a shell sandbox
def test_the_job_env_is_what_the_ecs_bootstrap_writes_for_the_same_nodes(tmp_path):
    sandbox = Sandbox(tmp_path)
    assert sandbox.install(TRAINING).code == 0
    run = sandbox.boot()
    assert run.code == 0, run.output
    written = sourced(run.file("/etc/gpu-infra/nccl.env"))
    two_nics = replace(TARGET, instance_type="ecs.ebmgn8v.48xlarge", nccl_cidr="10.1.0.0/24")
    assert erdma_devices(two_nics.instance_type) == ["erdma_0", "erdma_1"]
    expected = {key: value for key, value in pod_env(two_nics).items()
                if key.startswith("NCCL_")}
    assert written == expected == nccl_env(["erdma_0", "erdma_1"], "10.1.0.0/24")
    assert written["NCCL_IB_HCA"] == "erdma_0,erdma_1" and written["NCCL_IB_GID_INDEX"] == "-1"
    # one NIC: the PAI presets alone
    (tmp_path / "root/sys/class/infiniband/erdma_1").rename(tmp_path / "erdma_1.gone")
    again = sandbox.boot()
    assert again.code == 0, again.output
    one_nic = replace(TARGET, instance_type="ecs.gn8v-8x.48xlarge")
    assert sourced(again.file("/etc/gpu-infra/nccl.env")) == {
        key: value for key, value in pod_env(one_nic).items() if key.startswith("NCCL_")}


@pytest.mark.parametrize("target", [
    TARGET,
    replace(TARGET, has_spot=False, min_nodes=4),
    replace(TARGET, nodes=1, min_nodes=1, erdma=False, shared_fs_claim=None),
], ids=["spot-master", "on-demand-workers", "one-node"])
def test_every_job_object_validates_against_its_schema(target):
    objects = pytorch_job(target, ["/mnt/shared/train.py", "--epochs", "3"])
    assert [o["kind"] for o in objects] == ["ConfigMap", "PyTorchJob"]
    for manifest in objects:
        assert problems(manifest) == []


def test_the_schemas_refuse_what_the_api_server_would():
    _, job = pytorch_job(TARGET)
    broken = copy.deepcopy(job)
    broken["spec"]["elasticPolicy"]["maxRestarts"] = "three"
    broken["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "resourcez"] = {}
    found = problems(broken)
    assert any(line.startswith("spec.elasticPolicy.maxRestarts:") for line in found)
    assert any(line.startswith("Worker: ") and "resourcez" in line for line in found)


def test_the_job_places_one_pod_per_gpu_node_and_gangs_them():
    _, job = pytorch_job(TARGET)
    spec = job["spec"]
    assert spec["elasticPolicy"] == {"rdzvBackend": "c10d", "rdzvPort": 29400,
                                     "rdzvHost": "t01-train-master-0", "minReplicas": 1,
                                     "maxReplicas": 4, "maxRestarts": 3}
    assert spec["nprocPerNode"] == "8"
    replicas = spec["pytorchReplicaSpecs"]
    assert [replicas["Master"]["replicas"], replicas["Worker"]["replicas"]] == [1, 3]
    for role, replica in replicas.items():
        pod = replica["template"]
        assert pod["metadata"]["labels"][jobs.GANG_NAME_LABEL] == "t01-train"
        assert pod["metadata"]["labels"][jobs.GANG_MIN_LABEL] == "1"
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "aliyun/erdma": 1}
        assert pod["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists",
                                               "effect": "NoSchedule"}]
        selector = pod["spec"]["nodeSelector"]
        assert selector["gpu-infra/pool"] == "t01-gpu"
        assert (selector.get(jobs.SPOT_STRATEGY_LABEL) == "NoSpot") == (role == "Master")
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        assert mounts["/mnt/shared"] == "shared" and mounts["/mnt/checkpoints"] == "checkpoints"
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["GPU_INFRA_CHECKPOINT_DIR"] == "/mnt/checkpoints/t01-train"
        assert env["GPU_INFRA_SPOT_NOTICE"] == "/run/gpu-infra/spot/termination-time"
    on_demand = pytorch_job(replace(TARGET, has_spot=False))[1]["spec"]
    assert list(on_demand["pytorchReplicaSpecs"]) == ["Worker"]
    assert "rdzvHost" not in on_demand["elasticPolicy"]  # worker-0, the operator's default


@pytest.mark.slow  # dash parses the job script
@pytest.mark.parametrize("stack", ["training-dev", "training-prod"])
def test_the_job_command_prints_what_the_plan_exports(stack, capsys):
    assert main(["job", stack]) == 0
    printed = capsys.readouterr().out
    assert shipped_plan(stack).outputs["training_job"] == printed
    assert printed.startswith("#!/bin/sh\n")
    assert subprocess.run(["dash", "-n"], input=printed, text=True).returncode == 0
    assert f"/{jobs.TRAINING_IMAGE.mirror}@{jobs.TRAINING_IMAGE_DIGEST}." in printed


def run_job_script(root: Path, printed: str,
                   elastic: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The printed job script under dash, its node paths moved under `root`: node 0 of two
    (what gpu-infra-peers writes there), the fleet's elastic.env, SSH a stand-in."""
    etc, bin_dir = root / "etc/gpu-infra", root / "opt/gpu-infra/bin"
    etc.mkdir(parents=True)
    (etc / "torchrun.env").write_text("MASTER_ADDR=10.1.64.4\nMASTER_PORT=29500\nNNODES=2\n"
                                      "NPROC_PER_NODE=8\nNODE_RANK=0\n")
    (etc / "hostfile").write_text("10.1.64.4 slots=8\n10.1.64.5 slots=8\n")
    (etc / "elastic.env").write_text("".join(
        f"{key}={shlex.quote(moved(value, root))}\n"
        for key, value in elastic.items()))
    install(bin_dir, {"gpu-infra-peers": "#!/bin/sh\necho peers >> \"$SANDBOX/calls.log\"\n"})
    install(root / "stand-ins", {
        "ssh": '#!/bin/sh\necho "ssh $*" >> "$SANDBOX/calls.log"\ncat > /dev/null\n'})
    script = printed.replace("/etc/gpu-infra", str(etc)).replace(
        "/opt/gpu-infra", str(root / "opt/gpu-infra"))
    return subprocess.run(["dash", "-c", script], text=True, capture_output=True,
                          env={**os.environ, "SANDBOX": str(root),
                               "PATH": f"{root / 'stand-ins'}:{os.environ['PATH']}"})


@pytest.mark.slow  # dash runs the job script
@pytest.mark.parametrize("shared", [True, False])
def test_the_job_script_describes_the_job_every_node_runs(tmp_path, shared, capsys):
    """What the job unit of every node reads (steps/gpu-infra-job sources it): the image, the
    command's words, the restarts, the rendezvous on node 0 under a new id; copied to each
    node over SSH only without a shared file system."""
    assert main(["job", "training-prod", "--command", "/mnt/shared/t.py --lr '1e-4 x'",
                 "--max-restarts", "5", "--image", "registry-vpc.cn-beijing.aliyuncs.com/t/tr:1"]
                ) == 0
    cluster = cluster_config(SPOT_TRAINING if shared else BASE_TRAINING)  # spot needs one
    spec = TrainingNodes(cluster).bootstrap_spec(
        "t01-gpu", shared_fs_source="fs.example:/" if shared else None)
    assert spec.elastic is not None
    elastic = sourced(launch_files(spec.elastic, None)["/etc/gpu-infra/elastic.env"][0])
    done = run_job_script(tmp_path, capsys.readouterr().out, elastic)
    assert done.returncode == 0, done.stderr
    job_dir = Path(moved(elastic["GPU_INFRA_JOB_DIR"], tmp_path))
    assert elastic["GPU_INFRA_JOB_DIR"] == (jobs.JOB_DIR if shared else jobs.STATE_JOB_DIR)
    read = subprocess.run(
        ["dash", "-c", f'set -a; . {job_dir}/job.env; eval "set -- $JOB_COMMAND"; printf '
         '"%s\\n" "$JOB_IMAGE" "$RDZV_HOST" "$RDZV_ID" "$NNODES" "$MAX_RESTARTS" "$@"'],
        text=True, capture_output=True, check=True)
    image, host, rdzv_id, nnodes, restarts, *words = read.stdout.splitlines()
    assert (image, host, nnodes, restarts) == (
        "registry-vpc.cn-beijing.aliyuncs.com/t/tr:1", "10.1.64.4", "2", "5")
    assert rdzv_id.startswith("t01-gpu-") and words == ["/mnt/shared/t.py", "--lr", "1e-4 x"]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0] == "peers"
    copied = [call.split()[3] for call in calls[1:]]
    assert copied == ([] if shared else ["10.1.64.4", "10.1.64.5"])


def test_bad_job_input_is_one_line_per_problem_and_exit_2(capsys):
    assert main(["job", "training-dev", "--image", "Bad Image", "--command", "'open",
                 "--max-restarts", "-1"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("cannot make the job: ")
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "--command", "--image", "--max-restarts"]
    assert main(["job", "inference-prod"]) == 2
    assert "STACK: Pulumi.inference-prod.yaml has layout inference" in capsys.readouterr().err


def test_a_spot_fleet_keeps_node_0_on_demand_and_its_spot_workers_heal(plan_cluster):
    """Node 0 is a fixed on-demand instance; the three spot nodes are an ESS group that
    replaces a reclaimed one on its notice, compensates with on-demand instances, and boots
    the workers' bootstrap (no SSH wiring, the spot watcher, the readiness answer)."""
    plan = plan_cluster(SPOT_TRAINING)
    (node,) = plan.by_type("alicloud:ecs/instance:Instance")
    assert node.inputs["spotStrategy"] == "NoSpot"
    (group,) = plan.by_type("alicloud:ess/scalingGroup:ScalingGroup")
    assert {key: group.inputs[key] for key in (
        "minSize", "maxSize", "desiredCapacity", "onDemandBaseCapacity",
        "onDemandPercentageAboveBaseCapacity", "spotInstancePools", "spotInstanceRemedy",
        "compensateWithOnDemand", "multiAzPolicy", "healthCheckTypes")} == {
        "minSize": 3, "maxSize": 3, "desiredCapacity": 3, "onDemandBaseCapacity": 0,
        "onDemandPercentageAboveBaseCapacity": 0, "spotInstancePools": 1,
        "spotInstanceRemedy": True, "compensateWithOnDemand": True,
        "multiAzPolicy": "COST_OPTIMIZED", "healthCheckTypes": ["ECS"]}
    assert len(group.inputs["vswitchIds"]) == 1
    (config,) = plan.by_type("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    assert config.inputs["spotStrategy"] == "SpotAsPriceGo"
    assert config.inputs["instanceTypes"] == ["ecs.gn7i-c8g1.2xlarge"]
    assert config.inputs["tags"]["GpuFleet"] == node.inputs["tags"]["GpuFleet"]
    script = unpack_user_data(config.inputs["userData"]) or ""
    assert "cluster_ssh" not in script and "SCALING_GROUP_ID=" in script
    assert "spot_scaling_group_id" in plan.outputs and "restore_command" not in plan.outputs
    workers = SpotWorkers(cluster_config(SPOT_TRAINING)).bootstrap_spec("t01-gpu")
    assert workers.spot_watch is not None and workers.trust is None
    assert TrainingNodes(cluster_config(SPOT_TRAINING)).bootstrap_spec("t01-gpu").spot_watch \
        is None
    cluster = cluster_config(SPOT_TRAINING)
    spec = TrainingNodes(cluster).bootstrap_spec("t01-gpu")
    elastic = launch_files(spec.elastic, spec.spot_watch)["/etc/gpu-infra/elastic.env"][0]
    assert elastic.startswith("NNODES_MIN=1\nRDZV_PORT=29400\n")
    two = cluster_config(merged(SPOT_TRAINING, fleet={**SPOT_TRAINING["fleet"],
                                                      "on_demand_nodes": 2}))
    assert (two.fleet.on_demand_count, two.fleet.min_nodes) == (2, 2)
    on_demand = cluster_config(BASE_TRAINING)
    assert (on_demand.fleet.on_demand_count, on_demand.fleet.min_nodes) == (0, 2)
    assert "spot_watch" not in TrainingNodes(on_demand).launch_spec(
        "t01-gpu", shared_fs=False)


@pytest.mark.parametrize(("fleet", "message"), [
    ({"on_demand_nodes": 1}, "fleet.on_demand_nodes: only used with capacity spot"),
    ({"capacity": "spot", "interruptible": True, "on_demand_nodes": 3},
     "fleet.on_demand_nodes: 3 is above nodes (2)"),
])
def test_on_demand_nodes_is_checked_with_its_path(fleet, message):
    with pytest.raises(ConfigError) as raised:
        cluster_config(merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], **fleet}))
    assert any(line.startswith(f"gpu-infra:cluster.{message}") for line in raised.value.problems), \
        raised.value.problems


def _node_tools_node(tmp_path, tamper: bool = False):
    """A spot training node whose bootstrap fetches the node tools from the stack's bucket."""
    cluster = cluster_config(SPOT_TRAINING)
    launch = SpotWorkers(cluster).bootstrap_spec("t01-gpu", node_tools_bucket="t01-checkpoints")
    spec = with_node_tools(replace(TRAINING, elastic=launch.elastic,
                                   spot_watch=launch.spot_watch), "t01-checkpoints")
    assert spec.node_tools is not None
    sandbox = Sandbox(tmp_path)
    installer = node_tools_installer(spec)
    stored = tmp_path / "objects" / spec.node_tools.key
    stored.parent.mkdir(parents=True)
    stored.write_text(installer + ("echo tampered\n" if tamper else ""))
    assert sandbox.install(spec).code == 0
    return sandbox.boot()


@pytest.mark.slow  # a node boot in a shell sandbox
def test_the_bootstrap_installs_the_node_tools_from_the_bucket(tmp_path):
    run = _node_tools_node(tmp_path)
    assert run.code == 0, run.output
    assert any(call.startswith("gpu-infra-api oss-get t01-checkpoints gpu-infra/node-tools/")
               for call in run.calls)
    for path in ("/opt/gpu-infra/bin/gpu-infra-torchrun", "/opt/gpu-infra/bin/gpu-infra-resume",
                 "/opt/gpu-infra/bin/gpu-infra-spot-watch", "/etc/gpu-infra/elastic.env",
                 "/etc/gpu-infra/spot-watch.env"):
        assert run.exists(path), path
    assert "systemctl restart --no-block gpu-infra-spot-watch.service" in run.calls
    assert run.exists("/var/lib/gpu-infra/ready")
    installed = run.file("/opt/gpu-infra/bootstrap.sh")  # the fleet's, over the loader
    assert "run_steps" in installed and "step_cluster_peers" in installed


@pytest.mark.slow  # a node boot in a shell sandbox
def test_node_tools_that_do_not_match_their_digest_make_the_node_unhealthy(tmp_path):
    """The first boot runs the user data's loader: it stops before anything of the tools runs
    and reports the node unhealthy, as a failing step would."""
    run = _node_tools_node(tmp_path, tamper=True)
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "node_tools"
    assert not run.exists("/opt/gpu-infra/bin/gpu-infra-torchrun")
    assert "gpu-infra-api tag GpuInfraHealth=unhealthy" in run.calls
    assert "does not match its pinned sha256" in run.output


@pytest.mark.slow  # ShellCheck
def test_the_node_tools_pass_shellcheck_as_installed(tmp_path):
    cluster = cluster_config(SPOT_TRAINING)
    spec = SpotWorkers(cluster).bootstrap_spec("t01-gpu", node_tools_bucket="t01-checkpoints")
    installer = tmp_path / "node-tools.sh"
    installer.write_text(node_tools_installer(spec))
    scripts = []
    for path, (content, _) in launch_files(spec.elastic, spec.spot_watch).items():
        if "/bin/" in path:
            scripts.append(tmp_path / path.rsplit("/", 1)[1])
            scripts[-1].write_text(content)
    assert len(scripts) == 4
    for files, shell in (([installer], "bash"), (scripts, "sh")):
        done = subprocess.run([SHELLCHECK, "--severity=style", "-s", shell, *map(str, files)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout


def test_an_ack_training_stack_gets_its_pytorchjob_from_the_job_command(capsys):
    assert main(["job", "training-ack", "--command", "/mnt/shared/train.py --epochs 3"]) == 0
    printed = capsys.readouterr().out
    plan = shipped_plan("training-ack")
    objects = [o for o in yaml.safe_load_all(printed) if o]
    assert [o["kind"] for o in objects] == ["ConfigMap", "PyTorchJob"]
    for manifest in objects:
        assert problems(manifest) == []
    default = plan.outputs["training_job"]
    assert [o["kind"] for o in yaml.safe_load_all(default) if o] == ["ConfigMap", "PyTorchJob"]
    job = objects[1]
    assert job["metadata"]["namespace"] == plan.outputs["jobs_namespace"]
    (worker,) = job["spec"]["pytorchReplicaSpecs"].values()
    pod = worker["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu-infra/pool": "llm-ack-gpu"}
    assert pod["containers"][0]["image"] == plan.outputs["registry_repositories"]["train"] \
        + ":latest"
    claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
              if "persistentVolumeClaim" in v}
    assert claims == {plan.outputs["shared_volume_claim"],
                      plan.outputs["bucket_volume_claims"]["checkpoints"]}
    assert pod["containers"][0]["command"][-3:] == ["/mnt/shared/train.py", "--epochs", "3"]


def test_an_ack_stack_without_a_repository_needs_an_image(tmp_path, capsys):
    stack = yaml.safe_load((STACKS_DIR / "Pulumi.training-ack.yaml").read_text())
    stack["config"]["gpu-infra:cluster"]["registry"]["repositories"] = []
    path = tmp_path / "Pulumi.bare-ack.yaml"
    path.write_text(yaml.safe_dump(stack))
    assert main(["job", str(path)]) == 2
    assert "--image: missing; this stack's registry lists no repository" in \
        capsys.readouterr().err
    assert main(["job", str(path), "--image", "registry.example/train:1"]) == 0


def test_a_spot_ack_pool_keeps_an_on_demand_part_and_tells_skypilot_its_gpus(plan_cluster):
    stack = yaml.safe_load((STACKS_DIR / "Pulumi.training-ack.yaml").read_text())
    cluster = stack["config"]["gpu-infra:cluster"]
    cluster["fleet"].update(capacity="spot", interruptible=True)
    plan = plan_cluster(cluster, region=stack["config"]["alicloud:region"])
    (pool,) = [r for r in plan.resources if r.type == "alicloud:cs/nodePool:NodePool"
               and r.name.startswith("llm-ack-gpu")]
    assert {key: pool.inputs.get(key) for key in (
        "spotStrategy", "multiAzPolicy", "onDemandBaseCapacity",
        "onDemandPercentageAboveBaseCapacity", "spotInstanceRemedy")} == {
        "spotStrategy": "SpotAsPriceGo", "multiAzPolicy": "COST_OPTIMIZED",
        "onDemandBaseCapacity": "1", "onDemandPercentageAboveBaseCapacity": "0",
        "spotInstanceRemedy": True}
    labels = {label["key"]: label["value"] for label in pool.inputs["labels"]}
    assert labels["skypilot.co/accelerator"] == "h20"
    job = [o for o in yaml.safe_load_all(plan.outputs["training_job"]) if o][1]
    master = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert master["nodeSelector"]["node.alibabacloud.com/spot-strategy"] == "NoSpot"
