"""`gpu-infra clone SOURCE NEW` end to end: the file it writes, what it prints, what it refuses."""

import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

from gpu_infra.schema import load_cluster_config
from gpu_infra_facts.naming import auto_suffix
from gpu_infra_tools.cli import main
from gpu_infra_tools.clone import drop_secrets
from gpu_infra_tools.clone.paths import remove_key
from gpu_infra_tools.plan.engine import run_plan

from .conftest import BASE_TRAINING, PROJECT_DIR, STACKS_DIR, merged, write_stack

SOURCE_TEXT = """\
# Training cluster A: the team's main cluster.
encryptionsalt: v1:abcdefgh:v1:ijklmnop:qrstuvwx
config:
  alicloud:region: cn-hangzhou
  alicloud:secretKey:
    secure: v1:AAAABBBBCCCC
  gpu-infra:cluster:
    name: train-a   # prefixes every resource name
    layout: training
    environment: dev
    tags:
      CostCenter: ml-research
    # One zone keeps the nodes close together.
    network:
      vpc_cidr: 10.10.0.0/16
      zones:
        - cn-hangzhou-i
      vswitch_cidrs:
        cn-hangzhou-i: 10.10.64.0/20   # carved by hand
    fleet:
      instance_type: ecs.gn7i-c8g1.2xlarge
      nodes: 2
    monitoring:
      webhook:
        secure: v1:DDDDEEEEFFFF
"""


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    """A stacks directory holding train-a (SOURCE_TEXT)."""
    (tmp_path / "Pulumi.train-a.yaml").write_text(SOURCE_TEXT)
    return tmp_path


def clone(stacks: Path, *args: str) -> int:
    return main(["clone", "train-a", *args, "--stacks-dir", str(stacks)])


def written(stacks: Path, name: str) -> dict:
    return yaml.safe_load((stacks / f"Pulumi.{name}.yaml").read_text())


def test_clone_writes_a_valid_stack_with_a_new_name_and_the_first_free_cidr(stacks, capsys):
    for i, cidr in enumerate(["10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/15", "10.5.0.0/24"]):
        write_stack(stacks, f"other-{i}", merged(BASE_TRAINING, name=f"other-{i}",
                                                 network={"vpc_cidr": cidr}))
    assert clone(stacks, "train-b") == 0
    cluster = written(stacks, "train-b")["config"]["gpu-infra:cluster"]
    assert cluster["name"] == "train-b"
    assert cluster["network"]["vpc_cidr"] == "10.4.0.0/16"
    assert cluster["network"]["vswitch_cidrs"] == {"cn-hangzhou-i": "10.4.64.0/20"}
    _, stack = load_cluster_config(stacks / "Pulumi.train-b.yaml")
    assert (stack.name, str(stack.network.vpc_cidr)) == ("train-b", "10.4.0.0/16")
    out = capsys.readouterr().out
    assert f"wrote {stacks}/Pulumi.train-b.yaml: cluster 'train-b', VPC 10.4.0.0/16" in out


def test_clone_of_a_clone_avoids_both(stacks):
    assert clone(stacks, "train-b") == 0
    assert clone(stacks, "train-c") == 0
    assert written(stacks, "train-b")["config"]["gpu-infra:cluster"]["network"][
        "vpc_cidr"] == "10.0.0.0/16"
    assert written(stacks, "train-c")["config"]["gpu-infra:cluster"]["network"][
        "vpc_cidr"] == "10.1.0.0/16"


def test_exhausted_pool_exits_2_and_writes_nothing(stacks, capsys):
    assert clone(stacks, "train-b", "--pool", "10.10.0.0/17") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"clone failed: {stacks}/Pulumi.train-b.yaml",
        "  gpu-infra:cluster.network.vpc_cidr: a /16 does not fit in the pool 10.10.0.0/17; "
        "pass another --pool",
    ]
    assert clone(stacks, "train-b", "--pool", "10.10.0.0/16") == 2
    assert capsys.readouterr().err.splitlines()[1] == (
        "  gpu-infra:cluster.network.vpc_cidr: no free /16 left in the pool 10.10.0.0/16; "
        "taken: 10.10.0.0/16 (train-a); pass another --pool")
    assert sorted(p.name for p in stacks.iterdir()) == ["Pulumi.train-a.yaml"]


def test_secrets_and_encryption_keys_are_dropped_and_listed(stacks, capsys):
    assert clone(stacks, "train-b") == 0
    text = (stacks / "Pulumi.train-b.yaml").read_text()
    assert "secure" not in text and "encryptionsalt" not in text
    document = yaml.safe_load(text)
    assert "alicloud:secretKey" not in document["config"]
    assert document["config"]["gpu-infra:cluster"]["tags"] == {"CostCenter": "ml-research"}
    out = capsys.readouterr().out.splitlines()
    assert "  note: dropped encryptionsalt: they belong to the source stack's secrets " \
           "provider; `pulumi stack init` sets the new stack's own" in out
    assert out[-4:] == [
        "  pulumi stack init train-b",
        "  pulumi config set --secret 'alicloud:secretKey' VALUE -s train-b",
        "  pulumi config set --path --secret 'gpu-infra:cluster.monitoring.webhook' VALUE "
        "-s train-b",
        "  gpu-infra plan train-b",
    ]


def test_secrets_provider_is_carried_to_stack_init(stacks, capsys):
    source = stacks / "Pulumi.train-a.yaml"
    source.write_text("secretsprovider: hashivault://gpu\n" + SOURCE_TEXT)
    assert clone(stacks, "train-b") == 0
    assert "secretsprovider" not in written(stacks, "train-b")
    assert "  pulumi stack init train-b --secrets-provider hashivault://gpu" in (
        capsys.readouterr().out.splitlines())


def test_comments_and_key_order_are_kept(stacks):
    assert clone(stacks, "train-b", "--set", "fleet.nodes=4") == 0
    text = (stacks / "Pulumi.train-b.yaml").read_text()
    for comment in ["# Training cluster A: the team's main cluster.",
                    "name: train-b   # prefixes every resource name",
                    "    # One zone keeps the nodes close together.",
                    "      zones:\n        - cn-hangzhou-i\n"]:
        assert comment in text
    assert re.search(r"\n        cn-hangzhou-i: 10\.0\.64\.0/20 +# carved by hand\n", text)
    keys = list(written(stacks, "train-b")["config"]["gpu-infra:cluster"])
    assert keys == ["name", "layout", "environment", "tags", "network", "fleet", "monitoring",
                    "naming"]
    assert text.startswith("# Cloned from stack train-a by `gpu-infra clone`")


@pytest.mark.parametrize("source_naming", [None, "{global_suffix: acme01}"])
def test_a_clone_gets_the_auto_global_suffix(stacks, source_naming):
    source = stacks / "Pulumi.train-a.yaml"
    if source_naming:
        source.write_text(SOURCE_TEXT + f"    naming: {source_naming}\n")
    assert clone(stacks, "train-b") == 0
    assert written(stacks, "train-b")["config"]["gpu-infra:cluster"]["naming"] == {
        "global_suffix": "auto"}


def test_a_global_suffix_override_wins_over_auto(stacks):
    assert clone(stacks, "train-b", "--set", "naming.global_suffix=none") == 0
    assert written(stacks, "train-b")["config"]["gpu-infra:cluster"]["naming"] == {
        "global_suffix": "none"}


def test_overrides_are_applied_and_validated(stacks):
    assert clone(stacks, "train-b", "--set", "fleet.nodes=16", "--set", "environment=staging",
                 "--set", "alicloud:region=cn-beijing",
                 "--set", "network.zones=[cn-beijing-a]",
                 "--set", "network.vswitch_cidrs=null") == 0
    config = written(stacks, "train-b")["config"]
    assert config["alicloud:region"] == "cn-beijing"
    cluster = config["gpu-infra:cluster"]
    assert (cluster["fleet"]["nodes"], cluster["environment"]) == (16, "staging")
    assert cluster["network"] == {"vpc_cidr": "10.0.0.0/16", "zones": ["cn-beijing-a"]}
    assert "zones: [cn-beijing-a]" in (stacks / "Pulumi.train-b.yaml").read_text()


@pytest.mark.parametrize(("overrides", "problems"), [
    (["fleet.nodez=3"], ["gpu-infra:cluster.fleet.nodez: unknown key; allowed: "]),
    (["fleet.nodes=0", "environment=qa"],
     ["gpu-infra:cluster.environment: input should be 'dev', 'staging' or 'prod' (got 'qa')",
      "gpu-infra:cluster.fleet.nodes: input should be greater than or equal to 1 (got 0)"]),
    (["alicloud:region=cn-beijing"],
     ["gpu-infra:cluster.network.zones: cn-hangzhou-i is not a zone of region cn-beijing"]),
    (["name.first=x"],
     ["--set name.first=x: gpu-infra:cluster.name: is a str, not a mapping; cannot set "
      "'first' in it"]),
    (["monitoring.webhook=https://example.com/hook"],
     ["--set monitoring.webhook=https://example.com/hook: gpu-infra:cluster.monitoring.webhook "
      "is a secret; set it after "
      "cloning with `pulumi config set --path --secret`"]),
    (["environment=prod", "security.admin_cidrs=[0.0.0.0/1, 128.0.0.0/1]"],
     ["gpu-infra:cluster.security.admin_cidrs: 0.0.0.0/1, 128.0.0.0/1 covers all public IPv4 "
      "space: not allowed in prod; list the CIDRs that need access"]),
    (["network.vpc_cidr=10.10.128.0/17"],
     ["gpu-infra:cluster.network.vpc_cidr: 10.10.128.0/17 overlaps 10.10.0.0/16 of stack "
      "train-a"]),
])
def test_bad_overrides_exit_2_with_one_line_each_and_write_nothing(stacks, capsys, overrides,
                                                                   problems):
    args = [item for override in overrides for item in ("--set", override)]
    assert clone(stacks, "train-b", *args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"clone failed: {stacks}/Pulumi.train-b.yaml"
    for line, problem in zip(sorted(err[1:]), sorted(problems), strict=True):
        assert line.startswith(f"  {problem}")  # some lines go on with the allowed keys
    assert not (stacks / "Pulumi.train-b.yaml").exists()


def test_unparsable_override_exits_2(stacks, capsys):
    assert clone(stacks, "train-b", "--set", "fleet.nodes") == 2
    assert capsys.readouterr().err == (
        "clone failed: --set fleet.nodes: expected PATH=VALUE, e.g. fleet.nodes=16\n")


def test_explicit_vpc_cidr_override_drops_vswitch_cidrs_that_do_not_fit(stacks, capsys):
    assert clone(stacks, "train-b", "--set", "network.vpc_cidr=10.20.0.0/18") == 0
    network = written(stacks, "train-b")["config"]["gpu-infra:cluster"]["network"]
    assert network == {"vpc_cidr": "10.20.0.0/18", "zones": ["cn-hangzhou-i"]}
    assert ("  note: dropped network.vswitch_cidrs.cn-hangzhou-i (10.10.64.0/20): it does not "
            "fit 10.20.0.0/18 at the same offset; the zone's derived slot is used") in (
        capsys.readouterr().out.splitlines())


def test_existing_target_is_refused_unless_forced(stacks, capsys):
    target = stacks / "Pulumi.train-b.yaml"
    target.write_text("# keep me\n")
    assert clone(stacks, "train-b") == 2
    assert capsys.readouterr().err.splitlines()[1] == (
        f"  {target}: exists; pass --force to overwrite it")
    assert target.read_text() == "# keep me\n"
    assert clone(stacks, "train-b", "--force") == 0
    assert written(stacks, "train-b")["config"]["gpu-infra:cluster"]["name"] == "train-b"


def test_cluster_name_from_option_and_collisions(stacks, capsys):
    assert clone(stacks, "train-b", "--name", "train-a") == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        "  gpu-infra:cluster.name: 'train-a' is already the cluster name of stack train-a; "
        "resource and bucket names would collide (pass --name)"]
    assert main(["clone", "train-a", "x", "--stacks-dir", str(stacks)]) == 2
    assert "cannot make a cluster name" in capsys.readouterr().err
    assert main(["clone", "train-a", "x", "--name", "train-x", "--stacks-dir",
                 str(stacks)]) == 0
    assert written(stacks, "x")["config"]["gpu-infra:cluster"]["name"] == "train-x"


def test_bring_your_own_network_ids_are_dropped(tmp_path, capsys):
    write_stack(tmp_path, "train-a", merged(BASE_TRAINING, name="train-a", network={
        "existing_vpc_id": "vpc-src1", "existing_vswitch_ids": {"cn-hangzhou-i": "vsw-src1"}}))
    assert main(["clone", "train-a", "train-b", "--stacks-dir", str(tmp_path)]) == 0
    network = written(tmp_path, "train-b")["config"]["gpu-infra:cluster"]["network"]
    assert network == {"vpc_cidr": "10.0.0.0/16", "zones": ["cn-hangzhou-i"]}
    assert "note: dropped network.existing_vpc_id and network.existing_vswitch_ids" in (
        capsys.readouterr().out)


def test_bring_your_own_network_can_be_set_again(tmp_path):
    write_stack(tmp_path, "train-a", merged(BASE_TRAINING, name="train-a"))
    assert main(["clone", "train-a", "train-b", "--stacks-dir", str(tmp_path),
                 "--set", "network.existing_vpc_id=vpc-shared",
                 "--set", "network.existing_vswitch_ids={cn-hangzhou-i: vsw-shared}"]) == 0
    network = written(tmp_path, "train-b")["config"]["gpu-infra:cluster"]["network"]
    assert network["vpc_cidr"] == "10.1.0.0/16"  # the existing VPC's, kept
    assert network["existing_vpc_id"] == "vpc-shared"


def test_dry_run_prints_and_writes_nothing(stacks, capsys):
    assert clone(stacks, "train-b", "--dry-run") == 0
    out = capsys.readouterr().out
    assert yaml.safe_load(out)["config"]["gpu-infra:cluster"]["name"] == "train-b"
    assert not (stacks / "Pulumi.train-b.yaml").exists()


def test_invalid_source_is_reported_as_such(stacks, capsys):
    (stacks / "Pulumi.train-a.yaml").write_text(SOURCE_TEXT.replace("nodes: 2", "nodes: -1"))
    assert clone(stacks, "train-b") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"clone failed: {stacks}/Pulumi.train-a.yaml",
        "  gpu-infra:cluster.fleet.nodes: input should be greater than or equal to 1 (got -1)",
    ]


def test_the_clone_plans_with_its_own_names_and_cidr(stacks):
    assert clone(stacks, "train-b") == 0
    plan = run_plan(stacks / "Pulumi.train-b.yaml")
    vpc = plan.one("alicloud:vpc/network:Network")
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    assert plan.one("alicloud:vpc/switch:Switch").inputs["cidrBlock"] == "10.0.64.0/20"
    custom = [r for r in plan.resources if r.custom]
    assert custom and all(r.name.startswith("train-b") for r in custom)
    assert plan.secret_keys == []


def test_an_unreadable_stack_stops_the_clone(stacks, capsys):
    (stacks / "Pulumi.broken.yaml").write_text("config: [unclosed\n")
    assert clone(stacks, "train-b") == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"  {stacks}/Pulumi.broken.yaml: cannot read the cluster name and VPC CIDR the clone "
        "must avoid (line 2:1: malformed YAML: expected ',' or ']', but got '<stream end>'); fix "
        "the file or move it out of the stacks directory"]
    assert not (stacks / "Pulumi.train-b.yaml").exists()


def test_a_secret_inside_a_list_is_refused(stacks, capsys):
    text = SOURCE_TEXT.replace("    fleet:\n", "    suppress:\n      - secure: v1:GGGG\n"
                               "    fleet:\n")
    (stacks / "Pulumi.train-a.yaml").write_text(text)
    assert clone(stacks, "train-b") == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        "  gpu-infra:cluster.suppress[0]: may not be a secure: value (it would reach resources "
        "and the state in clear); secure: values belong in "
        "monitoring.contacts[].dingtalk_webhook, monitoring.webhook"]
    assert not (stacks / "Pulumi.train-b.yaml").exists()


def test_removing_a_key_keeps_the_comment_below_it():
    yaml_rt = YAML()
    document = yaml_rt.load("a: 1\nb:\n  c: 2  # on c\n# about d\nd: 3\n")
    remove_key(document, "b")
    out = io.StringIO()
    yaml_rt.dump(document, out)
    assert out.getvalue() == "a: 1\n# about d\nd: 3\n"


def test_secrets_inside_list_items_are_dropped_and_listed_with_their_index(stacks, capsys):
    contacts = ("    monitoring:\n      contacts:\n        - name: oncall\n"
                "          email: oncall@example.com\n"
                "        - name: robot\n          dingtalk_webhook:\n"
                "            secure: v1:HHHH\n")
    (stacks / "Pulumi.train-a.yaml").write_text(
        SOURCE_TEXT.replace("    monitoring:\n", contacts))
    assert clone(stacks, "train-b") == 0
    cluster = written(stacks, "train-b")["config"]["gpu-infra:cluster"]
    assert cluster["monitoring"]["contacts"] == [
        {"name": "oncall", "email": "oncall@example.com"}, {"name": "robot"}]
    out = capsys.readouterr().out.splitlines()
    assert ("  pulumi config set --path --secret "
            "'gpu-infra:cluster.monitoring.contacts[1].dingtalk_webhook' VALUE -s train-b") in out
    assert ("  note: until the secrets are set the stack does not validate: "
            "gpu-infra:cluster.monitoring.contacts[1].email: a contact needs an email or a "
            "dingtalk_webhook") in out


def test_drop_secrets_walks_mappings_and_lists():
    config = YAML().load("a:secret:\n  secure: x\np:cluster:\n  list:\n    - k: 1\n"
                         "      s: {secure: y}\n    - {secure: z}\n  m: {n: {secure: w}}\n")
    secrets, problems = drop_secrets(config)
    assert [s.pulumi() for s in secrets] == ["a:secret", "p:cluster.list[0].s",
                                             "p:cluster.m.n"]
    assert problems == ["p:cluster.list[1]: a list item that is a secret cannot be cloned; "
                        "make it a mapping key or drop it from the source"]
    assert config == {"p:cluster": {"list": [{"k": 1}, {"secure": "z"}], "m": {}}}


def test_the_readme_quick_start_clone_runs_and_its_clone_plans(tmp_path, capsys):
    """`gpu-infra clone training-prod training-prod-b --set fleet.nodes=16` (Getting
    started): the clone's derived contact names (`training-prod-b-alerts-ml-oncall` and the
    auto suffix, past CloudMonitor's 40 characters) are shortened, not refused."""
    page = (PROJECT_DIR / "docs" / "getting-started.md").read_text()
    line = next(line for line in page.splitlines() if line.startswith(".venv/bin/gpu-infra clone "))
    argv = line.split("#")[0].split()[1:]
    for stack in STACKS_DIR.glob("Pulumi.*.yaml"):
        shutil.copy(stack, tmp_path)
    assert main([*argv, "--stacks-dir", str(tmp_path)]) == 0
    clone = tmp_path / f"Pulumi.{argv[2]}.yaml"
    assert main(["plan", str(clone), "--json", str(tmp_path / "plan.json")]) == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    contacts = [r["inputs"]["alarmContactName"] for r in plan["resources"]
                if r["type"] == "alicloud:cms/alarmContact:AlarmContact"]
    assert len(contacts) == 2 and all(len(name) <= 40 for name in contacts)
    assert "Traceback" not in capsys.readouterr().err


def _render_farm(directory: Path, driver: dict) -> None:
    """rendering-batch as stack `render-a` in `directory`, with `driver` over its GRID
    route."""
    document = yaml.safe_load((STACKS_DIR / "Pulumi.rendering-batch.yaml").read_text())
    fleet = document["config"]["gpu-infra:cluster"]["fleet"]
    fleet["driver"] = {**fleet["driver"], **driver}
    (directory / "Pulumi.render-a.yaml").write_text(yaml.safe_dump(document))


@pytest.mark.parametrize("suffix", ["none", "auto"])
def test_a_grid_package_in_the_sources_bucket_moves_to_the_clones(tmp_path, capsys, suffix):
    """The clone's nodes read only the clone's buckets: the package's URL names the clone's
    bucket of the same purpose, the note says to upload it, and the clone validates."""
    _render_farm(tmp_path, {})
    source = tmp_path / "Pulumi.render-a.yaml"
    document = yaml.safe_load(source.read_text())
    document["config"]["gpu-infra:cluster"]["naming"] = {"global_suffix": suffix}
    if suffix == "auto":  # the source's own bucket, as the source names it
        hashed = auto_suffix(stack_name="render-a", region="cn-hangzhou", cluster="render-farm")
        document["config"]["gpu-infra:cluster"]["fleet"]["driver"]["grid_package"] = \
            f"oss://render-farm-prod-datasets-{hashed}/drivers/grid.run"
    source.write_text(yaml.safe_dump(document))
    assert main(["clone", "render-a", "render-b", "--stacks-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    _, cloned = load_cluster_config(tmp_path / "Pulumi.render-b.yaml")
    own = cloned.bucket_names(cloned.resolved_suffix("render-b"))["datasets"]
    assert cloned.fleet.driver.grid_package.startswith(f"oss://{own}/")
    assert f"note: fleet.driver.grid_package: oss://{own}/" in out
    assert "upload the package there" in out


def test_a_granted_grid_package_outside_the_source_stays(tmp_path, capsys):
    _render_farm(tmp_path, {"grid_package": "oss://acme-drivers/grid.run",
                            "grid_package_grant": True})
    assert main(["clone", "render-a", "render-b", "--stacks-dir", str(tmp_path)]) == 0
    assert "fleet.driver.grid_package" not in capsys.readouterr().out
    fleet = written(tmp_path, "render-b")["config"]["gpu-infra:cluster"]["fleet"]
    assert fleet["driver"]["grid_package"] == "oss://acme-drivers/grid.run"
