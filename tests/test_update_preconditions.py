"""The update preconditions (gpu_infra_facts/update_preconditions.json) and the change report's
verdict on them: every row is triggered by an edit of a shipped stack and reported as refused
(ERROR refused-by-cloud, with the reason, the way instead and the source); every type the
stacks create has its deletion protection classified, and a protected one blocks its delete;
the reference page is current."""

from __future__ import annotations

import inspect

import pytest
import yaml

from gpu_infra_facts import types as t
from gpu_infra_facts.types import DATA_KINDS
from gpu_infra_facts.update_preconditions import (
    DELETE,
    all_preconditions,
    classified_types,
    preconditions,
    protection,
)
from gpu_infra_facts.update_semantics import covered_types, semantics
from gpu_infra_policies.nodes import PROTECTED_IN_PROD
from gpu_infra_tools.review import review
from gpu_infra_tools.review.changes import ChangeReport, change_report
from gpu_infra_tools.review.field_edits import EDITS, FieldEdit
from gpu_infra_tools.review.preconditions import CHECKS, quantity
from gpu_infra_tools.review.preconditions_page import render
from gpu_infra_tools.review.update_policies import edited_stack, policies_of

from .conftest import PROJECT_DIR, STACKS_DIR
from .golden import golden_record
from .shipped import planned_once, shipped_plan
from .test_update_semantics import provider_class

PAGE = PROJECT_DIR / "docs" / "update-preconditions.md"
SHIPPED = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for path in STACKS_DIR.glob("Pulumi.*.yaml"))


def test_every_check_the_table_names_exists_and_every_check_is_used():
    named = {row.check for row in all_preconditions()}
    assert named == set(CHECKS)


def test_rows_name_inputs_of_types_with_update_semantics():
    for row in all_preconditions():
        assert row.type in covered_types(), row
        assert bool(row.refuses) != bool(row.does) and row.instead and row.api and row.line, row
        assert (row.loses in ("data", "nodes")) == bool(row.does), row
        assert row.loses != "data" or row.type in DATA_KINDS, row  # data the report counts
        if row.path == DELETE or row.type.startswith("kubernetes:"):
            continue
        parameters = inspect.signature(provider_class(row.type)._internal_init).parameters
        camel = {"".join(w.capitalize() if i else w for i, w in enumerate(p.split("_")))
                 for p in parameters}
        assert row.path.split(".")[0] in camel, row


def test_every_type_gpu_infra_can_create_has_its_deletion_protection_classified():
    """A type added to update_semantics.json without a protection entry fails here."""
    assert covered_types() <= classified_types()
    with pytest.raises(KeyError, match="update_preconditions.json"):
        protection("alicloud:foo/bar:Bar")


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_type_a_shipped_stack_creates_is_classified(stack):
    created = {r["type"] for r in golden_record(stack)["resources"] if r.get("custom")}
    assert not created - classified_types()


def test_protection_inputs_are_inputs_of_the_provider():
    for token in classified_types():
        guard = protection(token)
        if not guard.inputs:
            assert guard.note, token  # says why a delete is not refused
            continue
        parameters = inspect.signature(provider_class(token)._internal_init).parameters
        for path in guard.inputs:
            top = path.split(".")[0]
            assert any(top == "".join(w.capitalize() if i else w
                                      for i, w in enumerate(p.split("_")))
                       for p in parameters), (token, path)
        assert guard.delete_api and guard.delete_source, token


def test_every_type_the_prod_rule_protects_has_protecting_inputs():
    """The prod deletion-protection rule reads its inputs and values from this table."""
    assert all(protection(token).inputs for token in PROTECTED_IN_PROD)


def test_protection_reads_every_spelling_of_a_type():
    nlb = protection(t.NLB_LOAD_BALANCER)
    assert nlb.protecting({"deletionProtectionEnabled": True}) == "deletionProtectionEnabled"
    assert nlb.protecting({"deletionProtectionConfig": {"enabled": True}}) \
        == "deletionProtectionConfig.enabled"
    assert nlb.protecting({"deletionProtectionConfig": [{"enabled": True}]}) \
        == "deletionProtectionConfig.enabled"
    assert nlb.protecting({"deletionProtectionEnabled": False}) is None
    assert protection(t.KMS_KEY).protecting({"deletionProtection": "Enabled"})
    assert protection(t.KMS_KEY).protecting({"deletionProtection": "Disabled"}) is None
    assert protection(t.SCALING_GROUP).protecting({"groupDeletionProtection": True})
    assert protection(t.SCALING_CONFIGURATION).protecting({"deletionProtection": True}) is None


@pytest.mark.parametrize(("text", "value"), [
    ("20480Gi", 20480 * 2 ** 30), ("1Ti", 2 ** 40), ("500G", 5e11), ("100m", 0.1),
    (3, 3.0), (2.5, 2.5), ("big", None), (True, None), (None, None)])
def test_quantities(text, value):
    assert quantity(text) == value


def test_the_page_is_current():
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "regenerate: .venv/bin/python -m gpu_infra_tools.review.preconditions_page "
        "> docs/update-preconditions.md")


# -- every row, triggered by an edit of a shipped stack ------------------------------------

ON_133 = ("training-ack", {"ack": {"kubernetes_version": "1.33.4-aliyun.1"}})
"""training-ack as deployed on 1.33 (the oldest minor ACK creates): the base of a skip."""
SKIP = FieldEdit("ack.kubernetes_version", "training-ack", "1.33.4-aliyun.1 -> 1.35.0-aliyun.1",
                 lambda cluster: cluster["ack"].update(kubernetes_version="1.35.0-aliyun.1"))
SHRINK_FS = FieldEdit("storage.shared_fs.capacity_gib", "training-ack", "20480 -> 10240",
                      lambda cluster: cluster["storage"]["shared_fs"].update(capacity_gib=10240))

SMALLER_SYSTEM_DISK = FieldEdit("fleet.system_disk_gib", "training-prod", "200 (default) -> 150",
                                lambda cluster: cluster["fleet"].update(system_disk_gib=150))

ROW_CASES: dict[tuple[str, str], tuple[str | FieldEdit, str, str]] = {
    (t.VPC, "cidrBlock"): ("vpc-cidr", "llm-pretrain-net-vpc",
                           "leaves running vSwitch(es) outside it"),
    (t.VSWITCH, "cidrBlock"): ("vswitch-cidr", "llm-pretrain-net-vsw-cn-beijing-l",
                               "overlaps vSwitch(es) still in the VPC"),
    (t.ECS_DISK, "size"): ("disk-shrink", "llm-pretrain-gpu-node-000-scratch",
                           "size 4000 -> 3200"),
    (t.NAS_FILE_SYSTEM, "capacity"): (SHRINK_FS, "llm-ack-fs-fs", "capacity 20480 -> 10240"),
    (t.MANAGED_KUBERNETES, "version"): ("ack-version-down", "llm-ack-ack-k8s",
                                        "is a downgrade"),
    (t.K8S_PERSISTENT_VOLUME_CLAIM, "spec.resources.requests.storage"): (
        "ack-shared-fs-grow", "llm-ack-kube-shared-claim",
        "on a statically bound claim (storageClassName \"\")"),
    (t.INSTANCE, "systemDiskSize"): (SMALLER_SYSTEM_DISK, "llm-pretrain-gpu-node-000",
                                     "systemDiskSize 200 -> 150"),
    (t.LOG_STORE, "retentionPeriod"): ("log-retention-down", "llm-pretrain-node-logs-system",
                                       "retentionPeriod 180 -> 30"),
    (t.SCALING_GROUP, "maxSize"): ("scaling-limits-down", "chat-serve-gpu-asg",
                                   "maxSize 16 -> 8"),
    (t.INSTANCE, "vswitchId"): ("zone-prepended", "llm-pretrain-gpu-node-000",
                                "moves the instance from zone cn-beijing-l to cn-beijing-k"),
    (t.KEY_PAIR, DELETE): ("public-key", "llm-pretrain-sec-login-key",
                           "is bound to the nodes"),
}
"""Row -> (the edit: a name in EDITS or an edit here; the resource; what the report says)."""


def test_every_row_has_a_case():
    assert set(ROW_CASES) == {(row.type, row.path) for row in all_preconditions()}


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    """verdict(edit, base=None) -> the change report of `edit` against the golden plan of its
    stack, or against `base` (stack, config overrides) planned here."""
    directory = tmp_path_factory.mktemp("preconditions")
    seen: dict[str, ChangeReport] = {}

    def _verdict(edit: str | FieldEdit, base: tuple[str, dict] | None = None) -> ChangeReport:
        field_edit = EDITS[edit] if isinstance(edit, str) else edit
        key = f"{field_edit.stack_name}-{field_edit.field}-{field_edit.change}-{base is None}"
        if key not in seen:
            stacks = STACKS_DIR
            record = golden_record(field_edit.stack_name)
            if base is not None:
                stacks = _overridden(base, directory / f"base-{len(seen)}")
                record = review(planned_once(stacks / f"Pulumi.{base[0]}.yaml")).to_json()
            stack = edited_stack(field_edit, directory / f"edit-{len(seen)}", stacks)
            seen[key] = change_report(review(planned_once(stack)), record, "base")
        return seen[key]

    return _verdict


def _overridden(base: tuple[str, dict], directory):
    """A copy of the shipped stacks with `base`'s stack overridden (nested keys merged)."""
    directory.mkdir(parents=True)
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        (directory / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    stack, overrides = base
    path = directory / f"Pulumi.{stack}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cluster = data["config"]["gpu-infra:cluster"]
    for section, values in overrides.items():
        cluster.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return directory


def _assert_refused(report: ChangeReport, name: str, says: str) -> str:
    refused = [why for who, why in report.impact.refused if who == name]
    assert refused and says in refused[0], report.impact.refused
    assert {f.rule: f.level.value for f in report.findings}["refused-by-cloud"] == "ERROR"
    assert report.blocked and policies_of(report)[0] == "refused"
    assert any(line.startswith("Refused by the cloud") for line in report.summary_lines())
    return refused[0]


@pytest.mark.slow
@pytest.mark.parametrize("row", sorted(ROW_CASES),
                         ids=lambda row: f"{row[0].split(':')[1]}.{row[1]}")
def test_each_row_is_reported_with_the_way_instead(verdict, row):
    """A refusal is an ERROR refused-by-cloud; data or nodes the cloud deletes on the way are
    lost data or GPU nodes (replaces-data, replaces-gpu-nodes: ERRORs in prod, and every
    stack of these cases is prod but training-dev)."""
    edit, name, says = ROW_CASES[row]
    rule = preconditions(row[0])[row[1]]
    report = verdict(edit)
    if rule.refuses:
        why = _assert_refused(report, name, says)
    else:
        lost, guard, policy, line = {
            "data": (report.impact.expired, "replaces-data", "replaces data",
                     "Data the cloud deletes in place"),
            "nodes": (report.impact.scaled_in, "replaces-gpu-nodes", "replaces nodes",
                      "Running nodes the cloud releases in place")}[rule.loses]
        why = dict(lost)[name]
        assert says in why and not report.impact.refused
        assert {f.rule: f.level.value for f in report.findings}[guard] == "ERROR"
        assert policies_of(report)[0] == policy
        assert any(text.startswith(line) for text in report.summary_lines())
    assert f"instead: {rule.instead}" in why and rule.source in why


@pytest.mark.slow
def test_a_version_that_skips_a_minor_is_refused(verdict):
    """ACK upgrades one minor at a time: a cluster on 1.33 edited to 1.35 is refused, and
    the report does not announce the control-plane upgrade."""
    report = verdict(SKIP, ON_133)
    _assert_refused(report, "llm-ack-ack-k8s", "1.33.4-aliyun.1 -> 1.35.0-aliyun.1 skips a "
                    "minor version")
    assert report.impact.upgraded is None


@pytest.mark.slow
def test_one_minor_up_is_not_refused(verdict):
    report = verdict("ack-version")
    assert not report.impact.refused and report.impact.upgraded


@pytest.mark.slow
def test_growing_the_shared_file_system_grows_nas_and_volume_but_not_the_claim(verdict):
    """The NAS grows (UpgradeFileSystem) and the volume's capacity changes in place; only the
    statically bound claim is refused, by kube-apiserver admission."""
    report = verdict("ack-shared-fs-grow")
    changes = {c.name: c for c in report.changes if c.change != "same"}
    assert changes["llm-ack-fs-fs"].change == "update"
    assert changes["llm-ack-kube-shared"].change == "update"
    assert [name for name, _ in report.impact.refused] == ["llm-ack-kube-shared-claim"]


@pytest.mark.slow
def test_a_wider_vpc_that_holds_its_vswitches_is_not_refused(verdict):
    """10.20.0.0/16 -> 10.20.0.0/15 holds the running vSwitch, and the vSwitch's new slot does
    not overlap it: the cloud carries it out (the nodes restart to move vSwitch)."""
    report = verdict("vpc-cidr-wider")
    assert not report.impact.refused
    assert report.impact.gpu_nodes.get("restarted")


@pytest.mark.slow
def test_a_load_balancer_deleted_with_its_protection_on_is_blocked(verdict):
    """Replacing the NLB by an ALB deletes the NLB, whose protection is spelled
    deletionProtectionEnabled: the provider's Delete does not lift it."""
    report = verdict("lb-kind")
    blocked = dict(report.impact.blocked)
    assert "deletionProtectionEnabled" in blocked["chat-serve-lb-nlb"]
    assert "resource_alicloud_nlb_load_balancer.go:860" in blocked["chat-serve-lb-nlb"]
    assert {f.rule: f.level.value for f in report.findings}["blocked-by-protection"] == "ERROR"


def test_page_names_every_type_and_every_rolling_pool_update():
    page = PAGE.read_text(encoding="utf-8")
    for token in classified_types():
        assert f"`{token}`" in page
    rolling = [path for path, rule in semantics(t.NODE_POOL).nodes.items()
               if rule.how == "rolling"]
    assert {"kubeletConfiguration", "containerdConfig", "upgradePolicy"} <= set(rolling)
    for path in rolling:
        assert f"| `{t.NODE_POOL}` | `{path}` |" in page


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["kubeletConfiguration", "containerdConfig"])
def test_a_node_configuration_rolled_over_running_nodes_is_said(setting):
    """No stack field sets a pool's kubelet or containerd configuration yet; a program that
    does (the library's callers) gets the roll reported: ModifyNodePoolNodeConfig restarts
    kubelet or containerd on every running node, in batches."""
    planned = review(shipped_plan("training-ack"))
    pools = [r for r in planned.plan.resources if r.type == t.NODE_POOL]
    for pool in pools:
        pool.inputs[setting] = {"maxPods": 64}
    report = change_report(planned, golden_record("training-ack"), "golden")
    assert report.impact.rolled == {pool.name: [setting] for pool in pools}
    assert {f.rule: f.level.value for f in report.findings} == {"rolls-running-nodes": "WARNING"}
    assert any(line.startswith("Running nodes reconfigured in batches")
               for line in report.summary_lines())
    assert policies_of(report)[0] == "reconfigures running nodes"


@pytest.mark.slow
def test_a_renamed_stack_deletes_its_old_key_pair_after_the_nodes_that_used_it(verdict):
    """A rename replaces the nodes and the key pair (a new name): Pulumi deletes the old nodes
    before the old key pair, so nothing is bound to it any more and ECS deletes it."""
    report = verdict("cluster-rename")
    assert "llm-pretrain-sec-login-key" not in dict(report.impact.refused)
    assert "llm-pretrain-sec-login-key" in dict(verdict("public-key").impact.refused)
