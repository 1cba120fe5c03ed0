"""The pieces of `gpu-infra clone`: CIDR allocation, config paths, overrides, name derivation."""

from ipaddress import IPv4Network as Net

import pytest
from ruamel.yaml import YAML

from gpu_infra_tools.clone import (
    ConfigPath,
    PathError,
    PoolExhausted,
    allocate,
    config_path,
    derive_cluster_name,
    parse_override,
    parse_path,
    translate,
)
from gpu_infra_tools.clone.paths import apply

POOL = Net("10.0.0.0/8")


def test_allocate_returns_the_first_block_of_an_empty_pool():
    assert allocate(POOL, 16, {}) == Net("10.0.0.0/16")


def test_allocate_skips_every_taken_block_and_takes_the_lowest_gap():
    taken = {f"s{i}": Net(f"10.{i}.0.0/16") for i in (0, 1, 2, 3, 4, 5, 7, 8)}
    assert allocate(POOL, 16, taken) == Net("10.6.0.0/16")


def test_allocate_jumps_past_larger_and_smaller_blocks_to_a_block_boundary():
    taken = {"big": Net("10.0.0.0/12"), "small": Net("10.16.5.0/24"),
             "other-pool": Net("172.16.0.0/16")}
    assert allocate(POOL, 16, taken) == Net("10.17.0.0/16")
    assert allocate(POOL, 24, taken) == Net("10.16.0.0/24")


def test_allocate_honours_a_smaller_pool_and_prefix():
    taken = {"a": Net("192.168.0.0/20")}
    assert allocate(Net("192.168.0.0/16"), 20, taken) == Net("192.168.16.0/20")


def test_allocate_reports_an_exhausted_pool_with_its_owners():
    taken = {f"s{i}": Net(f"10.{i}.0.0/16") for i in range(4)}
    with pytest.raises(PoolExhausted) as error:
        allocate(Net("10.0.0.0/14"), 16, taken)
    assert str(error.value) == (
        "no free /16 left in the pool 10.0.0.0/14; taken: 10.0.0.0/16 (s0), 10.1.0.0/16 (s1), "
        "10.2.0.0/16 (s2), 10.3.0.0/16 (s3)")


def test_allocate_refuses_a_block_larger_than_the_pool():
    with pytest.raises(PoolExhausted, match=r"a /8 does not fit in the pool 10.0.0.0/16"):
        allocate(Net("10.0.0.0/16"), 8, {})


def test_translate_keeps_the_offset_inside_the_new_vpc():
    assert translate(Net("10.10.64.0/20"), Net("10.10.0.0/16"),
                     Net("10.3.0.0/16")) == Net("10.3.64.0/20")


def test_translate_gives_none_when_the_block_does_not_fit():
    assert translate(Net("10.10.64.0/20"), Net("10.10.0.0/16"), Net("10.3.0.0/18")) is None
    assert translate(Net("10.10.0.0/20"), Net("10.10.0.0/16"), Net("10.3.0.0/24")) is None
    assert translate(Net("10.99.0.0/20"), Net("10.10.0.0/16"), Net("10.3.0.0/16")) is None


@pytest.mark.parametrize(("text", "parts"), [
    ("fleet.nodes", ("fleet", "nodes")),
    ("network.zones[0]", ("network", "zones", 0)),
    ('tags["app.kubernetes.io/name"]', ("tags", "app.kubernetes.io/name")),
    ('tags["a.b"].x[2]', ("tags", "a.b", "x", 2)),
    ("network.vswitch_cidrs.cn-hangzhou-i", ("network", "vswitch_cidrs", "cn-hangzhou-i")),
])
def test_parse_path(text, parts):
    assert parse_path(text) == parts


@pytest.mark.parametrize(("text", "message"), [
    ("[0].a", "bad path '[0].a': it must start with a key"),
    ("a..b", "bad path 'a..b': cannot read '.b'"),
    ("a[x]", "bad path 'a[x]': cannot read '[x]'"),
    ("", "bad path '': it must start with a key"),
])
def test_parse_path_rejects_bad_paths(text, message):
    with pytest.raises(PathError) as error:
        parse_path(text)
    assert str(error.value) == message


def test_pulumi_path_quotes_keys_with_dots_and_writes_indexes():
    path = ConfigPath("gpu-infra:cluster", ("tags", "a.b", "list", 0))
    assert path.pulumi() == 'gpu-infra:cluster.tags["a.b"].list[0]'


def test_secret_commands_use_path_only_for_nested_keys():
    nested = ConfigPath("gpu-infra:cluster", ("monitoring", "webhook"))
    assert nested.set_secret_command("train-b") == (
        "pulumi config set --path --secret 'gpu-infra:cluster.monitoring.webhook' VALUE "
        "-s train-b")
    assert ConfigPath("alicloud:secretKey").set_secret_command("train-b") == (
        "pulumi config set --secret 'alicloud:secretKey' VALUE -s train-b")


def test_config_path_is_under_the_cluster_unless_namespaced():
    assert config_path("fleet.nodes") == ConfigPath("gpu-infra:cluster", ("fleet", "nodes"))
    assert config_path("gpu-infra:cluster.name") == ConfigPath("gpu-infra:cluster", ("name",))
    assert config_path("alicloud:region") == ConfigPath("alicloud:region")
    with pytest.raises(PathError, match=r"^aws:region: only gpu-infra:cluster paths and "
                                        r"alicloud:\* keys can be set$"):
        config_path("aws:region")


def test_parse_override_reads_yaml_values():
    assert parse_override("fleet.nodes=16").value == 16
    assert list(parse_override("network.zones=[cn-hangzhou-i, cn-hangzhou-j]").value) == [
        "cn-hangzhou-i", "cn-hangzhou-j"]
    assert parse_override("network.vpc_cidr=10.9.0.0/16").value == "10.9.0.0/16"
    assert parse_override("network.existing_vpc_id=null").value is None
    assert parse_override("environment=~").value is None
    assert parse_override("tags.Owner=''").value == ""


@pytest.mark.parametrize(("text", "message"), [
    ("fleet.nodes", "--set fleet.nodes: expected PATH=VALUE, e.g. fleet.nodes=16"),
    ("=3", "--set =3: expected PATH=VALUE, e.g. fleet.nodes=16"),
    ("network.zones=[a, b", "--set network.zones=[a, b: VALUE:1:6: malformed YAML: "),
    ("fleet..nodes=1", "--set fleet..nodes=1: bad path 'fleet..nodes': cannot read '.nodes'"),
    ("fleet.nodes=", "--set fleet.nodes=: no VALUE; write null to remove the key"),
    ("fleet.nodes= ", "--set fleet.nodes= : no VALUE; write null to remove the key"),
    ("tags={a: 1, a: 2}", "--set tags={a: 1, a: 2}: VALUE:1: tags.a: duplicate key"),
    ("fleet.nodes=!!binary aGk=", "--set fleet.nodes=!!binary aGk=: VALUE:1: fleet.nodes: tag "
                                  "!!binary is not allowed"),
    ("tags=" + "[" * 40 + "]" * 40, "--set tags=" + "[" * 40 + "]" * 32 + "...: VALUE:1: tags: "
                                    "brackets nested more than 32 levels deep"),
])
def test_parse_override_errors(text, message):
    with pytest.raises(PathError) as error:
        parse_override(text)
    assert str(error.value).startswith(message)


def load(text):
    return YAML(typ="rt").load(text)


def test_apply_sets_creates_appends_and_removes():
    config = load("gpu-infra:cluster:\n  fleet: {nodes: 1}\n  network:\n    zones: [a]\n"
                  "    existing_vpc_id: vpc-1\n")
    apply(config, config_path("fleet.nodes"), 8)
    apply(config, config_path("storage.bucket.versioning"), True)
    apply(config, config_path("network.zones[1]"), "b")
    apply(config, config_path("network.existing_vpc_id"), None)
    apply(config, config_path("alicloud:region"), "cn-beijing")
    cluster = config["gpu-infra:cluster"]
    assert cluster["fleet"]["nodes"] == 8
    assert cluster["storage"] == {"bucket": {"versioning": True}}
    assert list(cluster["network"]["zones"]) == ["a", "b"]
    assert "existing_vpc_id" not in cluster["network"]
    assert config["alicloud:region"] == "cn-beijing"


@pytest.mark.parametrize(("path", "message"), [
    ("name.first", "gpu-infra:cluster.name: is a str, not a mapping; cannot set 'first' in it"),
    ("network.zones[5]", "gpu-infra:cluster.network.zones: has 1 item(s); [5] is out of range"),
    ("fleet[0]", "gpu-infra:cluster.fleet: is not a list, cannot index it with [0]"),
])
def test_apply_refuses_paths_through_the_wrong_kind_of_value(path, message):
    config = load("gpu-infra:cluster:\n  name: x\n  fleet: {nodes: 1}\n  network:\n"
                  "    zones: [a]\n")
    with pytest.raises(PathError) as error:
        apply(config, config_path(path), 1)
    assert str(error.value) == message


@pytest.mark.parametrize(("stack", "name"), [
    ("training-b", "training-b"),
    ("Train_Prod.2", "train-prod-2"),
    ("2024-inference-eu", "inference-eu"),
    ("a-very-long-stack-name-for-a-cluster", "a-very-long-stack-name-f"),
    ("x", None),
    ("123", None),
])
def test_derive_cluster_name(stack, name):
    assert derive_cluster_name(stack) == name
