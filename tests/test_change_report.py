"""The change report on real edits of the shipped stacks (gpu_infra_tools/review/
field_edits.py), against the recorded plan of each stack (tests/golden, kept equal to the
program by test_golden_plans): change, restart and causes per resource, the impact, the
guard rails."""

from __future__ import annotations

import copy
from fnmatch import fnmatchcase

import pytest
import yaml

from gpu_infra_tools.review import review
from gpu_infra_tools.review.acknowledgements import Acknowledgements
from gpu_infra_tools.review.changes import ChangeReport, change_report
from gpu_infra_tools.review.field_edits import EDITS
from gpu_infra_tools.review.update_policies import edited_stack, render

from .conftest import PROJECT_DIR, STACKS_DIR
from .golden import golden_record
from .shipped import planned_once

pytestmark = pytest.mark.slow  # plans an edited training-prod (86 resources) per case

def base_record(stack: str) -> dict:
    return golden_record(stack)


DOCS = PROJECT_DIR / "docs" / "update-policies.md"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """report(edit, acknowledgements=None) -> ChangeReport; each edit is planned once (in a
    test process: tests/shipped.py)."""
    directory = tmp_path_factory.mktemp("edits")
    reviews: dict[str, object] = {}

    def _report(edit: str, acknowledgements: Acknowledgements | None = None) -> ChangeReport:
        if edit not in reviews:
            stack_file = edited_stack(EDITS[edit], directory / edit, STACKS_DIR)
            reviews[edit] = review(planned_once(stack_file))
        return change_report(reviews[edit], base_record(EDITS[edit].stack_name), "golden",
                             acknowledgements)

    return _report


def changed(report: ChangeReport) -> dict[str, tuple[str, bool, list[str]]]:
    """name -> (change, restart, because) of every resource that is not `same`."""
    return {c.name: (c.change, c.restart, c.because)
            for c in report.changes if c.custom and c.change != "same"}


CHANNEL = ("*-gpu-config", "*-gpu-config-run")
"""The fixed fleet's configuration channel (Cloud Assistant command and invocation): checked
by the channel tests below, left out of `expect` unless listed."""


def expect(report: ChangeReport, expected: dict[str, tuple[str, bool, list[str]]]) -> None:
    """Every changed resource matches exactly one pattern of `expected`, with that change,
    restart flag and causes (the configuration channel only when listed); every pattern
    matches something."""
    actual = {name: outcome for name, outcome in changed(report).items()
              if any(fnmatchcase(name, p) for p in expected)
              or not any(fnmatchcase(name, p) for p in CHANNEL)}
    unmatched = set(expected)
    for name, outcome in actual.items():
        patterns = [p for p in expected if fnmatchcase(name, p)]
        assert patterns, f"{name} unexpectedly {outcome}"
        assert outcome == expected[patterns[0]], f"{name}: {outcome}"
        unmatched.discard(patterns[0])
    assert not unmatched, f"nothing matched {sorted(unmatched)}"


def rules(report: ChangeReport) -> dict[str, str]:
    return {f.rule: f.level.value for f in report.findings}


NODES = "llm-pretrain-gpu-node-00?"
ROLES = "llm-pretrain-gpu-node-00?-role"
ALARMS = "llm-pretrain-alarms-[!n]*"
ALARM_UPDATE = ("update", False, ["metricDimensions"])
MEMBERS = "llm-pretrain-alarms-node-group-members"
"""The nodes' CloudMonitor group (the scope of their event rules) follows the nodes."""
MEMBERS_RESIZED = ("update", False, ["instances.instanceId", "instances.instanceName",
                                     "instances.regionId", "instances.category"])
MEMBERS_RENEWED = ("update", False, ["instances.instanceId"])
NODE_LIST = "*-gpu-nodes-1"
"""The fleet's node list (blocks.compute.trust): the peers the nodes trust follow the nodes."""
NODE_LIST_UPDATE = ("update", False, ["value"])
DISKS = "llm-pretrain-gpu-node-00?-scratch"
REATTACHED = ("replace", False, ["instanceId"])
"""A replaced node's disk is detached and attached to the new node (the disk stays)."""


def test_nodes_up_creates_only_the_new_nodes(report):
    result = report("nodes-up")
    expect(result, {"llm-pretrain-gpu-node-00[89]": ("create", False, []),
                    "llm-pretrain-gpu-node-00[89]-role": ("create", False, []),
                    "llm-pretrain-gpu-node-00[89]-scratch*": ("create", False, []),
                    ALARMS: ALARM_UPDATE, MEMBERS: MEMBERS_RESIZED,
                    NODE_LIST: NODE_LIST_UPDATE})
    assert result.impact.gpu_nodes == {"created": ["llm-pretrain-gpu-node-008",
                                                   "llm-pretrain-gpu-node-009"]}
    assert result.impact.cost_after > result.impact.cost_before
    assert not result.blocked


def test_nodes_down_in_prod_names_the_nodes_and_is_blocked(report):
    result = report("nodes-down")
    expect(result, {"llm-pretrain-gpu-node-00[67]": ("delete", False, []),
                    "llm-pretrain-gpu-node-00[67]-role": ("delete", False, []),
                    "llm-pretrain-gpu-node-00[67]-scratch*": ("delete", False, []),
                    ALARMS: ALARM_UPDATE, MEMBERS: MEMBERS_RESIZED,
                    NODE_LIST: NODE_LIST_UPDATE})
    assert result.impact.gpu_nodes["deleted"] == ["llm-pretrain-gpu-node-006",
                                                  "llm-pretrain-gpu-node-007"]
    assert rules(result) == {"replaces-gpu-nodes": "ERROR", "blocked-by-protection": "ERROR"}
    assert "deletion protection" in result.impact.blocked[0][1]


def test_instance_type_restarts_nodes_and_rebuys_the_reservation(report):
    result = report("instance-type")
    expect(result, {NODES: ("update", True, ["instanceType"]),
                    "llm-pretrain-reserved-ri": ("replace", False, ["instanceType"])})
    assert result.impact.reserved == {"bought": ["llm-pretrain-reserved-ri"],
                                      "left_billing": ["llm-pretrain-reserved-ri"]}
    assert rules(result) == {"reserved-capacity": "ERROR", "blocked-by-protection": "ERROR",
                             "restarts-gpu-nodes": "WARNING"}


def test_reserved_count_would_buy_a_second_reservation_so_protection_refuses(report):
    result = report("reserved-count")
    expect(result, {"llm-pretrain-reserved-ri": ("replace", False, ["instanceAmount"])})
    assert rules(result) == {"reserved-capacity": "ERROR", "blocked-by-protection": "ERROR"}
    assert result.impact.blocked == [("llm-pretrain-reserved-ri",
                                      "Pulumi-protected: `pulumi up` refuses to delete it")]
    assert any("non-refundable" in line for line in result.summary_lines())


def test_spot_strategy_reaches_new_spot_workers_only(report):
    """training-dev's node is a spot worker: the strategy is the scaling configuration's,
    updated in place for the instances ESS launches next; nothing is replaced."""
    result = report("spot-strategy")
    expect(result, {"llm-train-gpu-config": (
        "update", False, ["spotStrategy", "spotPriceLimits.priceLimit",
                          "spotPriceLimits.instanceType"])})
    assert "replaces-gpu-nodes" not in rules(result)
    assert not result.blocked


def test_erdma_off_replaces_every_node(report):
    result = report("erdma-off")
    expect(result, {NODES: ("replace", False, ["networkInterfaceTrafficMode"]),
                    ROLES: ("replace", False, ["instanceId"]), ALARMS: ALARM_UPDATE,
                    f"{DISKS}-attachment": REATTACHED,
                    MEMBERS: MEMBERS_RENEWED,
                    NODE_LIST: NODE_LIST_UPDATE,
                    # the node tools bring the bootstrap, which loses its eRDMA steps
                    "llm-pretrain-checkpoints-node-tools": ("replace", False, ["key"])})
    assert result.impact.gpu_causes == {"networkInterfaceTrafficMode": 8}


def test_multi_az_policy_releases_the_whole_scaling_group(report):
    result = report("multi-az-policy")
    group = next(c for c in result.changes if c.name == "chat-serve-gpu-asg")
    assert (group.change, group.because) == ("replace", ["multiAzPolicy"])
    dependants = {c.name for c in result.changes if "scalingGroupId" in c.unknown}
    assert "chat-serve-gpu-config" in dependants
    assert result.impact.gpu_nodes["replaced"] == ["chat-serve-gpu-asg"]
    assert rules(result)["replaces-gpu-nodes"] == "ERROR"
    assert any("deletion protection" in why for _, why in result.impact.blocked)  # group's


@pytest.mark.parametrize(("edit", "cause"), [("disk-size", "size"),
                                             ("disk-iops", "provisionedIops")])
def test_disk_size_and_iops_change_the_disks_in_place_not_the_nodes(report, edit, cause):
    result = report(edit)
    expect(result, {DISKS: ("update", False, [cause])})
    assert not result.impact.gpu_nodes
    assert not result.findings


def test_keep_changes_the_disks_in_place_and_snapshots_them(report):
    """keep is the disk's deleteWithInstance (ModifyDiskAttribute); the attachment's copy is
    never updated by the provider, which the report says."""
    result = report("disk-keep")
    expect(result, {DISKS: ("update", False, ["deleteWithInstance"]),
                    f"{DISKS}-attachment": ("update", False, ["deleteWithInstance"]),
                    f"{DISKS}-snapshots": ("create", False, []),
                    "llm-pretrain-disks-snapshots": ("create", False, [])})
    assert not result.impact.gpu_nodes
    assert rules(result) == {"change-ignored": "WARNING"}
    disk = next(c for c in result.changes if c.name == "llm-pretrain-gpu-node-000-scratch")
    assert disk.new["protect"] is True  # a kept disk is protected in prod, the node is not
    node = next(c for c in result.changes if c.name == "llm-pretrain-gpu-node-000")
    assert not node.new["protect"]


def test_disk_shrink_is_refused(report):
    result = report("disk-shrink")
    expect(result, {DISKS: ("update", False, ["size"])})
    assert len(result.impact.refused) == 8  # one disk per node
    why = dict(result.impact.refused)["llm-pretrain-gpu-node-000-scratch"]
    assert "size 4000 -> 3200: ResizeDisk refuses a smaller size" in why
    assert "instead: a disk only grows" in why and "resource_alicloud_ecs_disk.go:495" in why
    assert rules(result) == {"refused-by-cloud": "ERROR"}


def test_attachments_are_replaced_delete_first(report):
    """A disk is attached to one instance at a time: the attachment to a replacement node
    can only be made once the old one is detached."""
    attachment = next(c for c in report("erdma-off").changes
                      if c.name == "llm-pretrain-gpu-node-000-scratch-attachment")
    assert attachment.new["deleteBeforeReplace"] is True


@pytest.fixture(scope="module")
def inline_plan(tmp_path_factory):
    """training-prod as a stack deployed with inline data disks keeps planning it."""
    data = yaml.safe_load((STACKS_DIR / "Pulumi.training-prod.yaml").read_text())
    data["config"]["gpu-infra:cluster"]["storage"]["inline_disks"] = True
    stack = tmp_path_factory.mktemp("inline") / "Pulumi.training-prod.yaml"
    stack.write_text(yaml.safe_dump(data))
    return stack, review(planned_once(stack))


def test_dropping_inline_disks_replaces_the_nodes_and_says_so_first(report, inline_plan):
    """A stack whose nodes carry inline disks, planned with separate disks: the provider
    replaces every node (data_disks is ForceNew), and the report says why before anything."""
    _, inline = inline_plan
    base = {"resources": [r.to_json() for r in inline.plan.resources]}
    result = change_report(review(planned_once(STACKS_DIR / "Pulumi.training-prod.yaml")), base,
                           "inline")
    nodes = {c.name: c for c in result.changes if fnmatchcase(c.name, NODES)}
    assert {c.change for c in nodes.values()} == {"replace"}
    assert "dataDisks.size" in nodes["llm-pretrain-gpu-node-000"].because
    assert len(result.impact.inline_disks_removed) == 8
    assert result.summary_lines()[0].startswith("Inline data disks removed from 8 node(s)")
    assert "storage.inline_disks: true" in result.summary_lines()[0]
    assert rules(result)["replaces-gpu-nodes"] == "ERROR"


def test_inline_disks_keep_running_nodes_as_they_are(inline_plan, tmp_path):
    """With storage.inline_disks the nodes keep their inline disks, and a disk edit reaches
    new nodes only (ignoreChanges), instead of replacing the running ones."""
    stack, inline = inline_plan
    node = next(r for r in inline.plan.resources if r.name == "llm-pretrain-gpu-node-000")
    assert node.inputs["dataDisks"][0]["size"] == 4000
    assert "dataDisks" in node.ignore_changes and node.protect is False
    assert not [r for r in inline.plan.resources if r.type.endswith("ecsDisk:EcsDisk")]
    data = yaml.safe_load(stack.read_text())
    data["config"]["gpu-infra:cluster"]["storage"]["disks"][0]["size_gib"] = 600
    edited = tmp_path / "Pulumi.training-prod.yaml"
    edited.write_text(yaml.safe_dump(data))
    base = {"resources": [r.to_json() for r in inline.plan.resources]}
    result = change_report(review(planned_once(edited)), base, "inline")
    assert not [c for c in result.changes if c.custom and c.change != "same"]


def test_image_change_restarts_nodes(report):
    result = report("image")
    expect(result, {NODES: ("update", True, ["imageId"])})
    assert rules(result) == {"restarts-gpu-nodes": "WARNING", "nodes-keep-old-config": "WARNING"}


def test_new_public_key_is_refused_while_nodes_use_the_key_pair(report):
    """The program replaces the key pair on a new public_key (delete first: the name is
    unique), and ECS refuses to delete a key pair bound to instances: the provider retries
    KeypairAlreadyAttachedInstance until it times out, so `pulumi up` fails."""
    result = report("public-key")
    expect(result, {"llm-pretrain-sec-login-key": ("replace", False, ["publicKey"])})
    pair = next(c for c in result.changes if c.name == "llm-pretrain-sec-login-key")
    assert pair.new["deleteBeforeReplace"] is True
    assert rules(result) == {"refused-by-cloud": "ERROR"}
    assert "KeypairAlreadyAttachedInstance" in result.impact.refused[0][1]


def test_instance_type_of_spot_workers_reaches_new_workers_without_a_refusal(report):
    """The type of a spot instance cannot change (ModifyInstanceSpec), but a spot worker's
    type is its scaling configuration's: an update for the instances ESS launches next."""
    result = report("instance-type-spot")
    expect(result, {"llm-train-gpu-config": ("update", False, ["userData", "instanceTypes"])})
    assert not result.impact.refused and "refused-by-cloud" not in rules(result)


def test_a_re_image_leaves_the_nodes_their_first_boot_config(report):
    result = report("image")
    assert len(result.impact.first_boot_config) == 8
    assert not result.impact.reconfigured  # config.sh is the same: the channel stays
    assert rules(result)["nodes-keep-old-config"] == "WARNING"
    assert any(line.startswith("Restarted nodes keep their first-boot configuration")
               for line in result.summary_lines())


@pytest.mark.parametrize(("edit", "because"), [
    ("instance-type", ["commandId"]), ("shared-fs-off", ["commandId"]),
    ("nodes-up", ["instanceIds"])])
def test_config_edits_reach_running_nodes_by_cloud_assistant(report, edit, because):
    """The nodes' config.sh (step list, GPU counts, shared file system) is the configuration
    channel's command: a changed one replaces the command and the invocation, which runs on
    the running nodes again; the nodes then keep nothing stale."""
    result = report(edit)
    fleet = "llm-pretrain-gpu"
    outcome = changed(result)
    assert outcome[f"{fleet}-config-run"][0] == "replace"
    assert set(because) <= set(outcome[f"{fleet}-config-run"][2])
    assert result.impact.reconfigured == [fleet]
    assert not result.impact.first_boot_config and not result.impact.stale_shared_fs
    assert any(line.startswith("Reaches running nodes by Cloud Assistant")
               for line in result.summary_lines())


def test_image_change_on_a_scaling_fleet_says_running_instances_keep_the_old_image(report):
    result = report("image-scaling")
    assert result.impact.old_image
    assert any(line.startswith("Running instances keep the old image")
               for line in result.summary_lines())


def test_shared_fs_off_deletes_the_file_system_without_restarting_nodes(report):
    result = report("shared-fs-off")
    # with nothing left to back up the backups go too; the vault (protected) blocks that
    expect(result, {"llm-pretrain-fs-*": ("delete", False, []),
                    "llm-pretrain-backup-*": ("delete", False, []),
                    # the node tools' checkpoint directory moves off the shared file system
                    "llm-pretrain-checkpoints-node-tools": ("replace", False, ["key"])})
    assert result.impact.data == {"deleted": [("backup vault", "llm-pretrain-backup-vault"),
                                              ("file system", "llm-pretrain-fs-fs")]}
    assert rules(result) == {"replaces-data": "ERROR", "blocked-by-protection": "ERROR"}
    assert "restarted" not in result.impact.gpu_nodes
    assert result.impact.reconfigured == ["llm-pretrain-gpu"]  # the fstab entry goes too


def test_zone_prepended_is_refused_because_nodes_cannot_change_zone(report):
    result = report("zone-prepended")
    blocked = dict(result.impact.blocked)
    refused = dict(result.impact.refused)
    assert "from zone cn-beijing-l to cn-beijing-k" in refused["llm-pretrain-gpu-node-000"]
    assert "Pulumi-protected" in blocked["llm-pretrain-fs-fs"]
    assert blocked["llm-pretrain-reserved-ri"].startswith("Pulumi-protected")
    assert result.blocked


def test_zone_appended_only_adds_the_zone(report):
    result = report("zone-appended")
    expect(result, {"llm-pretrain-net-vsw-cn-beijing-k": ("create", False, []),
                    "llm-pretrain-net-snat-cn-beijing-k": ("create", False, [])})
    assert not result.findings


def test_cluster_rename_is_reported_as_replacing_everything(report):
    result = report("cluster-rename")
    assert result.impact.renamed == ("llm-pretrain", "llm-pretrain2")
    assert result.summary_lines()[0].startswith("The cluster is renamed")
    assert {"bucket", "file system", "KMS key"} <= {k for k, _ in result.impact.data["deleted"]}
    counts = result.counts()
    assert counts["same"] == 0 and counts["create"] == counts["delete"]
    assert rules(result)["replaces-data"] == "ERROR"


def test_global_suffix_switch_replaces_the_buckets_and_is_blocked_in_prod(report):
    result = report("global-suffix")
    buckets = {name for kind, name in result.impact.data["replaced"] if kind == "bucket"}
    assert buckets == {f"llm-pretrain-{p}-bucket"
                       for p in ("datasets", "checkpoints", "models", "outputs", "logs")}
    assert rules(result)["replaces-data"] == "ERROR"
    renamed = {c.name: c.because for c in result.changes if c.change == "replace"}
    assert renamed["llm-pretrain-node-role"] == ["roleName"]
    assert renamed["llm-pretrain-datasets-bucket"] == ["bucket"]


LOGS = "llm-pretrain-node-logs"
LOG_DATA = [("log project", f"{LOGS}-project"), ("log store", f"{LOGS}-bootstrap"),
            ("log store", f"{LOGS}-system")]
"""training-prod's SLS project and stores: data, like its buckets (types.DATA_KINDS)."""


def test_a_renamed_log_project_replaces_its_stores_and_their_logs(report):
    """The suffix renames the SLS project (projectName, ForceNew), so the project and both
    stores are replaced: new and empty, the old logs deleted with them."""
    result = report("global-suffix")
    renamed = {c.name: c.because for c in result.changes if c.change == "replace"}
    assert renamed[f"{LOGS}-project"] == ["projectName"]
    assert renamed[f"{LOGS}-system"] == ["projectName"]
    logs = [(kind, name) for kind, name in result.impact.data["replaced"]
            if kind.startswith("log ")]
    assert sorted(logs) == LOG_DATA
    [data] = [f for f in result.findings if f.rule == "replaces-data"]
    assert data.level.value == "ERROR"
    assert {name for _, name in LOG_DATA} <= set(data.resources)


def test_switching_logs_off_deletes_the_logs_and_is_refused_in_prod(report):
    result = report("logs-off")
    assert result.impact.data == {"deleted": LOG_DATA}
    assert rules(result) == {"replaces-data": "ERROR", "blocked-by-protection": "ERROR"}
    assert {name for name, _ in result.impact.blocked} == {n for _, n in LOG_DATA}
    assert "Data deleted: log project llm-pretrain-node-logs-project, log store" in "\n".join(
        result.summary_lines())


def test_encrypting_the_stores_replaces_them_a_warning_outside_prod(report):
    """encrypt_conf.encrypt_type is ForceNew: security.kms_encryption on (training-dev)
    replaces each store, and its logs go."""
    result = report("kms-on")
    assert [item for item in result.impact.data["replaced"] if item[0] == "log store"] == [
        ("log store", "llm-train-node-logs-bootstrap"),
        ("log store", "llm-train-node-logs-system")]
    assert rules(result)["replaces-data"] == "WARNING"


def test_a_replaced_store_takes_its_index_with_it(report):
    """DeleteLogStore deletes the store's index, whose inputs (the store's name) stay the
    same: the index is replaced with its store (replaceWith), as the engine does."""
    result = report("kms-on")
    stores = {c.name: c for c in result.changes if c.type == "alicloud:log/store:Store"}
    indexes = {c.name: c for c in result.changes
               if c.type == "alicloud:log/storeIndex:StoreIndex"}
    assert {name: (c.change, c.because) for name, c in indexes.items()} == {
        f"{store}-index": ("replace", ["replaceWith"]) for store in stores}
    assert {c.goes_with for c in indexes.values()} == {c.urn for c in stores.values()}
    assert result.impact.with_parent == [(f"{store}-index", store) for store in stores]
    assert "Replaced or deleted with the resource they name" in "\n".join(result.summary_lines())


def test_logs_off_deletes_each_index_itself(report):
    """The stores go and their indexes with them, each deleted by Pulumi (DeleteIndex) before
    its store: no deletedWith, so nothing goes unreported as taken by the cloud."""
    result = report("logs-off")
    gone = {c.name: (c.change, c.goes_with) for c in result.changes
            if c.type == "alicloud:log/storeIndex:StoreIndex"}
    assert gone == {f"{LOGS}-{store}-index": ("delete", None)
                    for store in ("bootstrap", "system")}


def test_tags_change_in_place(report):
    result = report("tags")
    assert {change for change, _, _ in changed(result).values()} == {"update"}
    assert not any(restart for _, restart, _ in changed(result).values())
    assert not result.findings


def test_acknowledgement_turns_the_error_into_info(report):
    acknowledgements = Acknowledgements.model_validate({"acknowledge": [
        {"rule": "reserved-capacity", "resources": ["llm-pretrain-reserved-*"],
         "reason": "ten nodes from January"},
        {"rule": "replaces-data", "resources": ["nothing-*"], "reason": "stale entry"}]})
    result = report("reserved-count", acknowledgements)
    assert rules(result) == {"reserved-capacity": "INFO", "blocked-by-protection": "ERROR"}
    finding = next(f for f in result.findings if f.rule == "reserved-capacity")
    assert finding.acknowledged
    assert "ten nodes from January" in finding.message
    assert result.unused_acknowledgements == ["replaces-data: nothing-*"]


def test_acknowledgement_must_cover_every_resource(report):
    acknowledgements = Acknowledgements.model_validate({"acknowledge": [
        {"rule": "replaces-gpu-nodes", "resources": ["llm-pretrain-gpu-node-006"],
         "reason": "retire one node"}]})
    result = report("nodes-down", acknowledgements)
    assert rules(result)["replaces-gpu-nodes"] == "ERROR"


def test_json_carries_change_restart_because(report):
    record = report("image").to_json()
    assert record["counts"]["update"] == 8
    assert record["impact"]["gpuNodes"]["restarted"][0] == "llm-pretrain-gpu-node-000"
    assert record["impact"]["summary"][0].startswith("Restarted nodes keep their first-boot")
    assert record["impact"]["summary"][1].startswith("GPU nodes restarted in place: 8")
    assert record["impact"]["firstBootConfig"][0] == "llm-pretrain-gpu-node-000"
    assert {f["rule"] for f in record["findings"]} == {"restarts-gpu-nodes",
                                                       "nodes-keep-old-config"}


def test_scale_in_in_prod_takes_two_documented_steps(report, tmp_path):
    """Step 1 (`scale_in_from: 6`) only turns deletion protection off on the last two nodes;
    step 2 (`nodes: 6`, against step 1) deletes them, unblocked, once acknowledged."""
    step1 = report("scale-in-step-1")
    expect(step1, {"llm-pretrain-gpu-node-00[67]": ("update", False, ["deletionProtection"])})
    assert not step1.findings
    data = yaml.safe_load((STACKS_DIR / "Pulumi.training-prod.yaml").read_text())
    data["config"]["gpu-infra:cluster"]["fleet"].update(nodes=6, scale_in_from=6)
    stack = tmp_path / "Pulumi.training-prod.yaml"
    stack.write_text(yaml.safe_dump(data))
    step1_record = {"resources": [r for c in step1.changes if c.new for r in [c.new]]}
    acknowledged = Acknowledgements.model_validate({"acknowledge": [
        {"rule": "replaces-gpu-nodes", "resources": ["llm-pretrain-gpu-node-00[67]"],
         "reason": "shrink to six nodes"}]})
    step2 = change_report(review(planned_once(stack)), step1_record, "step 1", acknowledged)
    expect(step2, {"llm-pretrain-gpu-node-00[67]": ("delete", False, []),
                   "llm-pretrain-gpu-node-00[67]-role": ("delete", False, []),
                   "llm-pretrain-gpu-node-00[67]-scratch*": ("delete", False, []),
                   ALARMS: ALARM_UPDATE, MEMBERS: MEMBERS_RESIZED,
                    NODE_LIST: NODE_LIST_UPDATE})
    assert rules(step2) == {"replaces-gpu-nodes": "INFO"}
    assert not step2.blocked


def test_update_policy_docs_are_current(report):
    """docs/update-policies.md is what the edits do now (regenerate it with
    `python -m gpu_infra_tools.review.update_policies > docs/update-policies.md`)."""
    assert render({name: report(name) for name in EDITS}) == DOCS.read_text(encoding="utf-8")


def test_replaced_nodes_that_would_boot_their_recorded_bootstrap_are_named(report):
    """eRDMA off replaces the nodes and changes their bootstrap; userData is ignored after
    creation, and Pulumi gives a replaced resource the recorded value of an ignored input,
    so the report says the new nodes boot the old bootstrap and names the remedy."""
    result = report("erdma-off")
    nodes = [c for c in result.changes if fnmatchcase(c.name, NODES)]
    assert all(c.base["inputs"]["userData"] != c.inputs["userData"] for c in nodes)
    assert sorted(result.impact.stale_bootstrap) == sorted(c.name for c in nodes)
    line = next(x for x in result.summary_lines() if x.startswith("Replaced nodes boot"))
    assert "8 (" in line and "fleet.push_user_data: true" in line
    assert result.to_json()["impact"]["staleBootstrap"] == result.impact.stale_bootstrap


def test_push_user_data_gives_replaced_nodes_the_current_bootstrap(tmp_path):
    """With fleet.push_user_data the nodes do not ignore userData, so the same edit leaves
    no node on its recorded bootstrap."""
    data = yaml.safe_load((STACKS_DIR / "Pulumi.training-prod.yaml").read_text())
    fleet = data["config"]["gpu-infra:cluster"]["fleet"]
    fleet.update(erdma="off", push_user_data=True)
    stack = tmp_path / "Pulumi.training-prod.yaml"
    stack.write_text(yaml.safe_dump(data))
    planned = review(planned_once(stack))
    node = next(r for r in planned.plan.resources if r.name == "llm-pretrain-gpu-node-000")
    assert "userData" not in node.ignore_changes
    result = change_report(planned, base_record("training-prod"), "golden")
    assert result.impact.stale_bootstrap == []
    nodes = [c for c in result.changes if fnmatchcase(c.name, NODES)]
    assert {c.change for c in nodes} == {"replace"}
    assert not any(x.startswith("Replaced nodes boot") for x in result.summary_lines())


def test_enabling_backup_adds_a_vault_a_policy_and_the_binding_and_touches_nothing_else(
        report):
    result = report("backup-on")
    expect(result, {"llm-train-backup-vault": ("create", False, []),
                    "llm-train-backup-policy": ("create", False, []),
                    "llm-train-backup-shared-fs": ("create", False, [])})
    assert not result.blocked


def test_a_new_vault_key_replaces_the_vault_and_is_refused(report):
    """The vault's key is fixed at creation (ForceNew): moving training-prod's vault off the
    stack's key (to `vault_key: hbr`) would delete the vault and its backups, which the change
    report refuses."""
    result = report("backup-vault-key")
    expect(result, {"llm-pretrain-backup-vault": ("replace", False,
                                                 ["encryptType", "kmsKeyId"]),
                    "llm-pretrain-backup-policy": ("update", False, ["rules.vaultId"])})
    assert "llm-pretrain-backup-vault" in {name for name, _ in result.impact.blocked}
    assert result.impact.data["replaced"] == [("backup vault", "llm-pretrain-backup-vault")]
    assert rules(result)["replaces-data"] == "ERROR"


def test_backup_and_log_retention_change_in_place(report):
    expect(report("backup-retention"),
           {"llm-pretrain-backup-policy": ("update", False, ["rules.retention",
                                                               "policyDescription"])})
    expect(report("log-retention"),
           {"llm-pretrain-node-logs-[bs]*[!n]": ("update", False, ["retentionPeriod"])})


def test_fixed_spot_nodes_moving_into_the_spot_workers_group_are_named(tmp_path):
    """A stack planned before spot workers had its spot node as a fixed ecs.Instance: against
    that base, the report names the node the move deletes and the group that replaces it."""
    base = copy.deepcopy(base_record("training-dev"))
    group = "gpu-infra:compute:GpuScalingGroup"
    base["resources"] = [r for r in base["resources"] if group not in r["urn"]]
    urn = "urn:pulumi:training-dev::gpu-infra::gpu-infra:compute:GpuNodes$"
    base["resources"].append({
        "urn": f"{urn}alicloud:ecs/instance:Instance::llm-train-gpu-node-000",
        "type": "alicloud:ecs/instance:Instance", "name": "llm-train-gpu-node-000",
        "custom": True, "parent": None, "id": "i-node0", "protect": False,
        "retainOnDelete": False, "dependencies": [],
        "inputs": {"instanceType": "ecs.gn7e-c16g1.4xlarge", "spotStrategy": "SpotAsPriceGo",
                   "tags": {"GpuFleet": "llm-train-gpu"}}})
    plan = planned_once(STACKS_DIR / "Pulumi.training-dev.yaml")
    result = change_report(review(plan), base, "before spot workers")
    assert result.impact.to_spot_workers == {"llm-train-gpu-asg": ["llm-train-gpu-node-000"]}
    assert result.to_json()["impact"]["toSpotWorkers"] == result.impact.to_spot_workers
    [line] = [line for line in result.summary_lines() if line.startswith("Spot nodes move")]
    assert "1 fixed spot node(s) (llm-train-gpu-node-000)" in line
    assert "llm-train-gpu-asg launches" in line
