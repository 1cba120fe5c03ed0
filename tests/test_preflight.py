"""`gpu-infra preflight`: every check's success and failure against the loopback stand-in,
the report, the command's exit codes and outputs, and that nothing but loopback is reached."""

from __future__ import annotations

import json
import socket
from dataclasses import replace

import pytest

from gpu_infra import catalog
from gpu_infra.blocks.functions.rpc import Credentials
from gpu_infra_tools.alibaba.client import AlibabaClient
from gpu_infra_tools.cli import main
from gpu_infra_tools.preflight import run_preflight
from gpu_infra_tools.preflight.checks import check_kms
from gpu_infra_tools.preflight.demand import Named, read_demand

from .alibaba_standin import KEY_ID, SECRET, serving
from .conftest import BASE_INFERENCE, STACKS_DIR, merged
from .preflight_accounts import healthy_account
from .shipped import shipped_plan

SHIPPED = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def preflight(plan, account, only=()):
    with serving(account) as stand_in:
        client = AlibabaClient(Credentials(KEY_ID, SECRET), plan.cluster.region, stand_in.url)
        return run_preflight(plan, client, "test keys", only), stand_in


def levels(report, check):
    return [(r.level, r.path, r.message) for r in report.results if r.check == check]


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_shipped_stack_passes_against_a_healthy_account(stack):
    plan = shipped_plan(stack)
    report, stand_in = preflight(plan, healthy_account(plan))
    assert not report.failed, report.render_text()
    assert report.count("ok") > 0
    assert set(stand_in.actions()) >= {"DescribeAvailableResource", "GetBucketInfo"} or \
        not read_demand(plan).buckets


def test_stock_missing_in_the_zone_is_an_error_naming_where_it_is():
    plan = shipped_plan("training-prod")  # 8 fixed ebmgn7ex nodes in cn-beijing-l
    account = healthy_account(plan)
    account.stock = {"cn-beijing-l": {"ecs.ebmgn7e.32xlarge"},
                     "cn-beijing-k": {"ecs.ebmgn7ex.32xlarge"}}
    report, _ = preflight(plan, account, ("stock",))
    [(level, path, message)] = levels(report, "stock")
    assert level == "error" and path == "gpu-infra:cluster.fleet.instance_type"
    assert "no pay-as-you-go stock for ecs.ebmgn7ex.32xlarge in cn-beijing-l" in message
    assert "ecs.ebmgn7ex.32xlarge has stock in cn-beijing-k" in message
    like = catalog.get("ecs.ebmgn7e.32xlarge")
    if like and like.gpu_model == catalog.get("ecs.ebmgn7ex.32xlarge").gpu_model:
        assert "ecs.ebmgn7e.32xlarge" in message


def test_a_scaling_fleet_missing_some_pools_is_a_warning_and_none_an_error():
    plan = shipped_plan("inference-prod")  # 3 types over 2 zones, min 2: on-demand base + spot
    account = healthy_account(plan)
    account.spot_stock["cn-hangzhou-j"].discard("ecs.gn6i-c4g1.xlarge")
    report, _ = preflight(plan, account, ("stock",))
    spot, on_demand = levels(report, "stock")
    assert spot[:2] == ("warning", "gpu-infra:cluster.fleet.instance_types")
    assert "no spot stock for ecs.gn6i-c4g1.xlarge in cn-hangzhou-j" in spot[2]
    assert "other 5" in spot[2]
    assert on_demand[0] == "ok" and "(pay-as-you-go)" in on_demand[2]
    account.spot_stock = {}
    account.stock = {"cn-hangzhou-k": {"ecs.gn7i-c8g1.2xlarge"}}
    report, _ = preflight(plan, account, ("stock",))
    spot, on_demand = levels(report, "stock")
    assert spot[0] == on_demand[0] == "error" and report.failed
    assert "ecs.gn7i-c8g1.2xlarge has stock in cn-hangzhou-k" in on_demand[2]


def test_quota_below_the_nodes_of_pulumi_up_is_an_error_below_the_peak_a_warning():
    plan = shipped_plan("inference-prod")  # 2..16 nodes, largest type 16 vCPUs: 32 / 256
    account = healthy_account(plan)
    report, _ = preflight(plan, account, ("quota",))
    assert [r[0] for r in levels(report, "quota")] == ["ok"]
    assert "32 vCPUs at pulumi up, 256 at the fleets' peak" in levels(report, "quota")[0][2]
    account.quotas["max-spot-instance-vcpu-count"] = 100
    report, _ = preflight(plan, account, ("quota",))
    assert [r[0] for r in levels(report, "quota")] == ["warning"]
    account.quotas["max-spot-instance-vcpu-count"] = 16
    report, _ = preflight(plan, account, ("quota",))
    assert [r[0] for r in levels(report, "quota")] == ["error"]
    del account.quotas["max-spot-instance-vcpu-count"]
    report, _ = preflight(plan, account, ("quota",))
    assert "did not report" in levels(report, "quota")[0][2]


def test_spot_interruptions_and_a_price_above_the_limit_are_warnings(plan_cluster):
    plan = plan_cluster(merged(BASE_INFERENCE, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge"], "spot_strategy": "SpotWithPriceLimit",
        "on_demand_percentage_above_base": 0,
        "spot_price_limit": 2.0}))
    account = healthy_account(plan)
    report, stand_in = preflight(plan, account, ("spot",))
    assert {r[0] for r in levels(report, "spot")} == {"ok"}
    assert "spot 1/h (10% of on-demand 10)" in levels(report, "spot")[0][2]
    assert "DescribeSpotPriceHistory" in stand_in.actions()
    account.spot_prices[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou-i")] = (3.0, 10.0)
    account.interruptions[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou-j")] = 25.0
    del account.spot_prices[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou-j")]
    report, _ = preflight(plan, account, ("spot",))
    by_zone = {r[2].split(":")[0]: r for r in levels(report, "spot")}
    assert "above the price limit 2" in by_zone["ecs.gn7i-c8g1.2xlarge in cn-hangzhou-i"][2]
    interrupted = by_zone["ecs.gn7i-c8g1.2xlarge in cn-hangzhou-j"]
    assert interrupted[0] == "warning" and "20%+" in interrupted[2]
    assert "no spot price" in interrupted[2]
    assert not report.failed


def test_ack_version_and_add_ons_offered():
    plan = shipped_plan("training-ack")
    account = healthy_account(plan)
    report, _ = preflight(plan, account, ("ack",))
    assert {r[0] for r in levels(report, "ack")} == {"ok"}
    assert len(levels(report, "ack")) == 1 + len(read_demand(plan).addons)
    account.addons["ack-erdma-controller"] = "v9.9.9"
    del account.addons["csi-plugin"]
    report, _ = preflight(plan, account, ("ack",))
    found = {r[2].split()[1]: r for r in levels(report, "ack") if r[2].startswith("add-on")}
    assert found["csi-plugin"][0] == "error" and "not offered" in found["csi-plugin"][2]
    assert found["ack-erdma-controller"][0] == "warning"
    assert "offers v9.9.9" in found["ack-erdma-controller"][2]
    account.k8s_versions = {"1.33.3-aliyun.1": True, "1.34.1-aliyun.1": False}
    report, _ = preflight(plan, account, ("ack",))
    [(level, path, message)] = levels(report, "ack")
    assert level == "error" and path == "gpu-infra:cluster.ack.kubernetes_version"
    assert "no longer creatable; creatable: 1.33.3-aliyun.1" in message
    account.k8s_versions = {"1.33.3-aliyun.1": True}
    report, _ = preflight(plan, account, ("ack",))
    assert "is not offered in cn-beijing; offered: 1.33.3-aliyun.1" in levels(report, "ack")[0][2]


@pytest.mark.parametrize(("status", "level"), [("Available", "ok"), ("Deprecated", "warning"),
                                               ("UnAvailable", "error"), (None, "error")])
def test_images(status, level):
    plan = shipped_plan("training-dev")
    account = healthy_account(plan)
    [image] = read_demand(plan).images
    if status is None:
        account.images.clear()
    else:
        account.images[image.value] = status
    report, _ = preflight(plan, account, ("image",))
    assert [r[0] for r in levels(report, "image")] == [level]
    assert (status or "does not exist") in levels(report, "image")[0][2]


@pytest.mark.parametrize(("state", "level"), [("Enabled", "ok"), ("Disabled", "error"),
                                              ("PendingDeletion", "error"), (None, "error")])
def test_kms_keys_the_stack_uses_but_does_not_create(state, level):
    plan = shipped_plan("training-dev")
    demand = replace(read_demand(plan), kms_keys=(Named("key-existing", "gpu-infra:cluster.x"),))
    account = healthy_account(plan)
    if state:
        account.kms_keys["key-existing"] = state
    with serving(account) as stand_in:
        client = AlibabaClient(Credentials(KEY_ID, SECRET), "cn-hangzhou", stand_in.url)
        [result] = check_kms(client, demand, catalog.CATALOG_ONLY)
    assert (result.level, result.path) == (level, "gpu-infra:cluster.x")
    assert (state or "does not exist") in result.message


def test_keys_the_stack_creates_are_not_looked_up():
    plan = shipped_plan("training-prod")
    assert any(r.inputs.get("kmsKeyId") for r in plan.resources)
    assert read_demand(plan).kms_keys == ()


def test_bucket_names_free_taken_or_ours():
    plan = shipped_plan("inference-prod")
    account = healthy_account(plan)
    names = [b.value for b in read_demand(plan).buckets]
    report, _ = preflight(plan, account, ("bucket",))
    assert [r[0] for r in levels(report, "bucket")] == ["ok"] * len(names)
    account.buckets = {names[0]: "other", names[1]: "mine"}
    report, _ = preflight(plan, account, ("bucket",))
    results = levels(report, "bucket")
    assert results[0][0] == "error" and "taken by another account" in results[0][2]
    assert results[1][0] == "warning" and "exists in this account" in results[1][2]
    assert results[0][1].startswith("gpu-infra:cluster.storage.buckets")


def test_contacts_activated_pending_new_or_changed():
    plan = shipped_plan("inference-prod")
    account = healthy_account(plan)
    [contact] = read_demand(plan).contacts
    report, _ = preflight(plan, account, ("contact",))
    [(level, path, message)] = levels(report, "contact")
    assert level == "ok" and path == "gpu-infra:cluster.monitoring.contacts[0].email"
    for state, words in [((contact.detail, "PENDING"), "is PENDING activated"),
                         (("old@example.com", "OK"), "must be activated again"),
                         (None, "is new")]:
        if state is None:
            account.contacts.clear()
        else:
            account.contacts[contact.value] = state
        report, _ = preflight(plan, account, ("contact",))
        [(level, _, message)] = levels(report, "contact")
        assert level == "warning" and words in message


@pytest.mark.parametrize(("code", "level"), [("DryRunOperation", "ok"),
                                             ("InvalidVSwitchId.NotFound", "ok"),
                                             ("InvalidInstanceType.NotSupported", "error"),
                                             ("QuotaExceed.PostPaidInstance", "error")])
def test_dry_run_of_the_planned_instances(code, level):
    plan = shipped_plan("training-prod")
    account = healthy_account(plan)
    account.dry_run_code = code
    report, stand_in = preflight(plan, account, ("dryrun",))
    [(found, _, message)] = levels(report, "dryrun")
    assert found == level and "8 x ecs.ebmgn7ex.32xlarge in cn-beijing-l" in message
    [(_, sent)] = stand_in.requests
    assert sent["DryRun"] == "true" and sent["Amount"] == "8"
    assert sent["ImageId"] == "ubuntu_22_04_x64_20G_alibase_20250917.vhd"


def test_a_refused_api_is_not_checked_and_refused_keys_fail_everything():
    plan = shipped_plan("inference-prod")
    account = healthy_account(plan)
    account.refuse["DescribeSpotAdvice"] = (403, "Forbidden.RAM")
    report, _ = preflight(plan, account, ("spot", "image"))
    assert levels(report, "spot") == [("warning", "gpu-infra:cluster",
                                       "not checked: DescribeSpotAdvice: Forbidden.RAM: "
                                       "stand-in refuses DescribeSpotAdvice")]
    assert levels(report, "image")[0][0] == "ok"
    with serving(account) as stand_in:
        client = AlibabaClient(Credentials(KEY_ID, "wrong"), "cn-hangzhou", stand_in.url)
        report = run_preflight(plan, client, "bad keys", ("image",))
    assert levels(report, "image")[0][:2] == ("error", "gpu-infra:cluster")
    assert "refused the credentials" in levels(report, "image")[0][2]


# The command.

@pytest.fixture
def keys(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                 "ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALIBABA_CLOUD_ECS_METADATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
    monkeypatch.setattr("gpu_infra_tools.cli.planned.run_plan",
                        lambda path: shipped_plan(path.name[7:-5]))


def test_the_command_exits_0_with_warnings_and_2_on_an_error(keys, capsys):
    plan = shipped_plan("inference-prod")
    account = healthy_account(plan)
    with serving(account) as stand_in:
        assert main(["preflight", "inference-prod", "--endpoint", stand_in.url]) == 0
        out = capsys.readouterr().out
        assert out.startswith("preflight of inference-prod in cn-hangzhou (credentials: "
                              "environment (ALIBABA_CLOUD_ACCESS_KEY_ID))")
        assert SECRET not in out and "0 errors" in out
        account.buckets[read_demand(plan).buckets[0].value] = "other"
        assert main(["preflight", "inference-prod", "--endpoint", stand_in.url]) == 2
        out = capsys.readouterr().out
        assert out.splitlines()[1].startswith("ERROR   [bucket] gpu-infra:cluster.storage")


def test_json_to_a_file(keys, tmp_path, capsys):
    plan = shipped_plan("training-ack")
    target = tmp_path / "preflight.json"
    with serving(healthy_account(plan)) as stand_in:
        code = main(["preflight", "training-ack", "--endpoint", stand_in.url, "--format",
                     "json", "--output", str(target), "--check", "ack"])
    assert code == 0 and capsys.readouterr().out == ""
    document = json.loads(target.read_text())
    assert document["stack"] == "training-ack" and document["failed"] is False
    assert {r["check"] for r in document["results"]} == {"ack"}
    assert document["calls"] == ["DescribeKubernetesVersionMetadata", "ListAddons"]


def test_without_credentials_one_line_and_exit_2(keys, monkeypatch, capsys):
    monkeypatch.delenv("ALIBABA_CLOUD_ACCESS_KEY_ID")
    assert main(["preflight", "training-dev", "--endpoint", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no credentials" in err


def test_an_unwritable_output_is_refused_before_any_call(keys, tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:  # while parsing (cli/arguments.py)
        main(["preflight", "training-dev", "--output", str(tmp_path / "no" / "x.json"),
              "--endpoint", "http://127.0.0.1:9"])
    assert refused.value.code == 2
    assert "does not exist" in capsys.readouterr().err


def test_no_address_but_loopback_is_reached(keys, monkeypatch, capsys):
    """Every shipped stack, every check, through the command: each connection goes to
    127.0.0.1 and the metadata address is never asked (no role was named)."""
    reached: list[object] = []
    connect = socket.socket.connect

    def loopback_only(self, address):
        reached.append(address)
        if not str(address[0]).startswith("127."):
            pytest.fail(f"preflight reached {address}")
        return connect(self, address)
    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    for stack in SHIPPED:
        plan = shipped_plan(stack)
        with serving(healthy_account(plan)) as stand_in:
            assert main(["preflight", stack, "--endpoint", stand_in.url]) == 0, \
                capsys.readouterr().out
            assert stand_in.metadata_hits == 0
    assert reached and all(str(a[0]) == "127.0.0.1" for a in reached)  # type: ignore[index]


@pytest.mark.parametrize(("action", "answer"), [
    ("DescribeAvailableResource", ["not", "an", "object"]),
    ("DescribeSpotPriceHistory", {"SpotPrices": {"SpotPriceType": [{"SpotPrice": "cheap"}]}}),
    ("DescribeContactList", {"Contacts": {"Contact": [{"Name": "chat-serve-alerts-serving",
                                                       "Channels": "mail"}]}}),
    ("DescribeAccountAttributes", {"AccountAttributeItems": {"AccountAttributeItem": [
        {"AttributeName": "max-spot-instance-vcpu-count",
         "AttributeValues": {"ValueItem": [{"Value": None}, {"Value": "lots"}]}}]}}),
])
def test_an_answer_of_unexpected_shape_is_not_checked_never_a_traceback(action, answer):
    plan = shipped_plan("inference-prod")
    account = healthy_account(plan)
    account.garbage[action] = answer
    report, _ = preflight(plan, account)
    warned = [r for r in report.results if r.message.startswith("not checked")]
    assert len(warned) == 1 and warned[0].level == "warning"
    assert not report.failed


def test_quota_counts_types_the_catalog_lacks_from_describe_instance_types():
    plan = shipped_plan("inference-ack")  # system pool of 2 ecs.g7.xlarge-class nodes
    account = healthy_account(plan)
    account.vcpus.update({"ecs.g7.xlarge": 4, "ecs.g8i.xlarge": 4, "ecs.g6.xlarge": 4})
    report, stand_in = preflight(plan, account, ("quota",))
    system = next(r for r in levels(report, "quota") if "system_pool" in r[1])
    assert system[2].startswith("8 vCPUs at pulumi up, 8 at the fleets' peak")
    assert "DescribeInstanceTypes" in stand_in.actions()
    account.vcpus.clear()
    report, _ = preflight(plan, account, ("quota",))
    system = next(r for r in levels(report, "quota") if "system_pool" in r[1])
    assert "not counted, vCPUs unknown: ecs.g6.xlarge, ecs.g7.xlarge, ecs.g8i.xlarge" in system[2]
