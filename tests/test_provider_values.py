"""The values we pass to pulumi-alicloud are ones the provider documents.

Two sources, both outside this project: the docstrings of the installed pulumi-alicloud SDK
(the `:param` text of each argument, e.g. "Valid values: `PL0`, `PL1`...") and the upstream
Terraform provider's validation lists, vendored with their source in
tests/data/provider_values.json. A value must be accepted by every source that speaks about
the argument; an argument neither documents fails the test (nothing is checked against
itself). Checked: every allowed-value set and bound in gpu_infra_facts.allowed, the provider values
the policy rules look for, and every planned value of those arguments in the recorded plans
of the shipped stacks and a few variants that use the values the shipped stacks do not."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import typing
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpu_infra_facts import allowed
from gpu_infra_facts.load_balancers import TLS_POLICIES
from gpu_infra_policies.audit import TRAIL_ALL
from gpu_infra_policies.gpu import PERFORMANCE_LEVELS
from gpu_infra_policies.storage import PUBLIC_ACLS
from gpu_infra_policies.transport import DATABASE_TLS, MODERN_POLICIES, OLD_POLICIES, TLS_PROTOCOLS

from .conftest import BASE_INFERENCE, BASE_TRAINING, merged, utc_in
from .golden import GOLDEN_DIR, golden_record

TERRAFORM: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "provider_values.json").read_text())["arguments"]
GOLDEN = sorted(GOLDEN_DIR.glob("*.json"))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _argument_of(type_token: str) -> str:
    """alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet -> ecs.EcsDeploymentSet."""
    _, module_path, name = type_token.split(":")
    return f"{module_path.split('/')[0]}.{name}"


def values(literal: Any) -> tuple[Any, ...]:
    return typing.get_args(literal)


def span(low: int, high: int) -> tuple[int, int]:
    """A bound pair is checked at both ends."""
    return (low, high)


LIMITS: dict[str, tuple[tuple[Any, ...], tuple[str, ...]]] = {
    "SpotStrategy": (values(allowed.SpotStrategy),
                     ("ecs.Instance.spot_strategy", "ess.ScalingConfiguration.spot_strategy")),
    "PerformanceLevel": (values(allowed.PerformanceLevel),
                         ("ecs.Instance.system_disk_performance_level",)),
    "PrepaidPeriodUnit": (values(allowed.PrepaidPeriodUnit), ("ecs.Instance.period_unit",)),
    "PREPAID_PERIODS": (allowed.PREPAID_PERIODS, ("ecs.Instance.period",)),
    "DeploymentSetStrategy": (values(allowed.DeploymentSetStrategy),
                              ("ecs.EcsDeploymentSet.strategy",)),
    "ESS_SYSTEM_DISK_GIB": (span(*allowed.ESS_SYSTEM_DISK_GIB),
                            ("ess.ScalingConfiguration.system_disk_size",)),
    "ESS_DATA_DISK_GIB": (span(*allowed.ESS_DATA_DISK_GIB),
                          ("ess.ScalingConfiguration.data_disks.size",)),
    "MultiAzPolicy": (values(allowed.MultiAzPolicy), ("ess.ScalingGroup.multi_az_policy",)),
    "REFRESH_MULTI_AZ_POLICY": ((allowed.REFRESH_MULTI_AZ_POLICY,),
                                ("ess.ScalingGroup.multi_az_policy",)),
    "VAULT_ENCRYPT_TYPES": (tuple(allowed.VAULT_ENCRYPT_TYPES.values()),
                            ("hbr.Vault.encrypt_type",)),
    "HealthCheckType": (values(allowed.HealthCheckType),
                        ("ess.ScalingGroup.health_check_types",)),
    "ScaleInMode": (values(allowed.ScaleInMode), ("ess.ScalingGroup.scaling_policy",)),
    "MIN_INSTANCE_LIFETIME_DAYS": ((allowed.MIN_INSTANCE_LIFETIME_DAYS * 86400,),
                                   ("ess.ScalingGroup.max_instance_lifetime",)),
    "EssAlarmPeriod": (values(allowed.EssAlarmPeriod), ("ess.Alarm.period",)),
    "MAX_EVALUATION_COUNT": (span(1, allowed.MAX_EVALUATION_COUNT),
                             ("ess.Alarm.evaluation_count",)),
    "HEARTBEAT_TIMEOUT_SECONDS": (span(*allowed.HEARTBEAT_TIMEOUT_SECONDS),
                                  ("ess.LifecycleHook.heartbeat_timeout",)),
    "RecurrenceType": (values(allowed.RecurrenceType), ("ess.ScheduledTask.recurrence_type",)),
    "REFRESH_MIN_HEALTHY_PERCENT": (span(*allowed.REFRESH_MIN_HEALTHY_PERCENT),
                                    ("ess.InstanceRefresh.min_healthy_percentage",)),
    "REFRESH_MAX_HEALTHY_PERCENT": (span(*allowed.REFRESH_MAX_HEALTHY_PERCENT),
                                    ("ess.InstanceRefresh.max_healthy_percentage",)),
    "ReservedOffering": (values(allowed.ReservedOffering),
                         ("ecs.ReservedInstance.offering_type",)),
    "ReservedTermYears": (values(allowed.ReservedTermYears), ("ecs.ReservedInstance.period",)),
    "ReservedScope": (values(allowed.ReservedScope), ("ecs.ReservedInstance.scope",)),
    "ASSURANCE_MONTHS": (allowed.ASSURANCE_MONTHS, ("ecs.ElasticityAssurance.period",)),
    "ASSURANCE_YEARS": (allowed.ASSURANCE_YEARS, ("ecs.ElasticityAssurance.period",)),
    "assurance_period units": (
        tuple({allowed.assurance_period(months)[1]
               for months in allowed.ASSURANCE_TERMS_MONTHS}),
        ("ecs.ElasticityAssurance.period_unit",)),
    "NasUserAccess": (values(allowed.NasUserAccess), ("nas.AccessRule.user_access_type",)),
    "NasReadWrite": (values(allowed.NasReadWrite), ("nas.AccessRule.rw_access_type",)),
    "StorageClass": (values(allowed.StorageClass),
                     ("oss.Bucket.lifecycle_rules.transitions.storage_class",)),
    "ComparisonOperator": (values(allowed.ComparisonOperator),
                           tuple(f"cms.Alarm.escalations_{level}.comparison_operator"
                                 for level in ("critical", "warn", "info"))),
    "GROUP_OPERATORS": (tuple(allowed.GROUP_OPERATORS.values()),
                        tuple(f"cms.MetricRuleTemplate.alert_templates.escalations.{level}."
                              "comparison_operator" for level in ("critical", "warn", "info"))),
    "SILENCE_SECONDS": (span(*allowed.SILENCE_SECONDS), ("cms.Alarm.silence_time",)),
    "VPC_PREFIX_BITS": (span(*allowed.VPC_PREFIX_BITS), ("vpc.Network.cidr_block",)),
    "VSWITCH_PREFIX_BITS": (span(*allowed.VSWITCH_PREFIX_BITS), ("vpc.Switch.cidr_block",)),
    "EIP_MAX_TRAFFIC_MBPS": ((1, allowed.EIP_MAX_TRAFFIC_MBPS), ("ecs.EipAddress.bandwidth",)),
    "KMS_ROTATION_DAYS": (span(*allowed.KMS_ROTATION_DAYS), ("kms.Key.rotation_interval",)),
    "KMS_DEFAULT_KEY_ROTATION_DAYS": ((allowed.KMS_DEFAULT_KEY_ROTATION_DAYS,),
                                      ("kms.Key.rotation_interval",)),
    "KMS_PENDING_WINDOW_DAYS": (span(*allowed.KMS_PENDING_WINDOW_DAYS),
                                ("kms.Key.pending_window_in_days",)),
    "SNAPSHOT_HOURS": (span(*allowed.SNAPSHOT_HOURS), ("ecs.AutoSnapshotPolicy.time_points",)),
    "SNAPSHOT_WEEKDAYS": (span(*allowed.SNAPSHOT_WEEKDAYS),
                          ("ecs.AutoSnapshotPolicy.repeat_weekdays",)),
    "KEEP_SNAPSHOTS_UNTIL_DELETED": ((allowed.KEEP_SNAPSHOTS_UNTIL_DELETED,),
                                     ("ecs.AutoSnapshotPolicy.retention_days",)),
    "IMAGE_COMPONENT_TYPE": ((allowed.IMAGE_COMPONENT_TYPE,),
                             ("ecs.EcsImageComponent.component_type",)),
    "IMAGE_SYSTEM_TYPE": ((allowed.IMAGE_SYSTEM_TYPE,), ("ecs.EcsImageComponent.system_type",)),
    "BASE_IMAGE_TYPE": ((allowed.BASE_IMAGE_TYPE,), ("ecs.EcsImagePipeline.base_image_type",)),
    "IMAGE_BUILD_SYSTEM_DISK_GIB": (span(*allowed.IMAGE_BUILD_SYSTEM_DISK_GIB),
                                    ("ecs.EcsImagePipeline.system_disk_size",)),
    "IMAGE_BUILD_BANDWIDTH_MBPS": ((allowed.IMAGE_BUILD_BANDWIDTH_MBPS,),
                                   ("ecs.EcsImagePipeline.internet_max_bandwidth_out",)),
    "NAS_KMS_FILE_SYSTEM_TYPES": (allowed.NAS_KMS_FILE_SYSTEM_TYPES,
                                  ("nas.FileSystem.file_system_type",)),
    "AckClusterSpec": (values(allowed.AckClusterSpec), ("cs.ManagedKubernetes.cluster_spec",)),
    "AckProxyMode": (values(allowed.AckProxyMode), ("cs.ManagedKubernetes.proxy_mode",)),
    "MAINTENANCE_HOURS": (span(*allowed.MAINTENANCE_HOURS),
                          ("cs.ManagedKubernetes.maintenance_window.duration",)),
    "AckImageType": (values(allowed.AckImageType), ("cs.NodePool.image_type",)),
    "ACK_POOL_SCALING_TYPE": ((allowed.ACK_POOL_SCALING_TYPE,),
                              ("cs.NodePool.scaling_config.type",)),
    "ACK_DATA_DISK_GIB": (span(*allowed.ACK_DATA_DISK_GIB), ("cs.NodePool.data_disks.size",)),
    "ACK_PREPAID_MONTHS": (allowed.ACK_PREPAID_MONTHS, ("cs.NodePool.period",)),
    "NodePoolPrivatePoolMatch": (
        values(allowed.NodePoolPrivatePoolMatch),
        ("cs.NodePool.private_pool_options.private_pool_options_match_criteria",)),
    "RegistryInstanceType": (values(allowed.RegistryInstanceType),
                             ("cr.RegistryEnterpriseInstance.instance_type",)),
    "REGISTRY_PAYMENT_TYPE": ((allowed.REGISTRY_PAYMENT_TYPE,),
                              ("cr.RegistryEnterpriseInstance.payment_type",)),
    "RegistryVisibility": (values(allowed.RegistryVisibility), (
        "cs.RegistryEnterpriseRepo.repo_type", "cr.Repo.repo_type",
        "cs.RegistryEnterpriseNamespace.default_visibility", "cr.Namespace.default_visibility")),
    "LOG_RETENTION_DAYS": (span(*allowed.LOG_RETENTION_DAYS), ("log.Store.retention_period",)),
    "LOG_ENCRYPT_TYPE": ((allowed.LOG_ENCRYPT_TYPE,), ("log.Store.encrypt_conf.encrypt_type",)),
    "LogFieldType": (values(allowed.LogFieldType), ("log.StoreIndex.field_searches.type",)),
    "LOG_TEXT_FIELD": ((allowed.LOG_TEXT_FIELD,), ("log.StoreIndex.field_searches.type",)),
    "gpu_infra_policies PERFORMANCE_LEVELS": (PERFORMANCE_LEVELS,
                                              ("ecs.Instance.data_disks.performance_level",)),
    "gpu_infra_policies PUBLIC_ACLS": (PUBLIC_ACLS, ("oss.Bucket.acl", "oss.BucketAcl.acl")),
    "gpu_infra_policies TLS policies": ((*MODERN_POLICIES, *OLD_POLICIES),
                                        ("slb.Listener.tls_cipher_policy",)),
    "gpu_infra_policies ACL status": (("on",), ("slb.Listener.acl_status",)),
    "gpu_infra_policies ACL types": (("white", "black"), ("slb.Listener.acl_type",)),
    "gpu_infra_policies TRAIL_ALL": ((TRAIL_ALL,), ("actiontrail.Trail.event_rw",)),
    "gpu_infra_policies PUBLIC_REGISTRY": (("PUBLIC",), ("cr.Namespace.default_visibility",)),
    "gpu_infra_policies classic network": (("Classic",), ("mongodb.Instance.network_type",)),
    **{f"gpu_infra_policies DATABASE_TLS {token.split(':')[1]}": (
        (*with_tls, default), (f"{_argument_of(token)}.{_snake(key)}",))
       for token, (key, with_tls, default) in DATABASE_TLS.items()
       if token != "alicloud:polardb/endpoint:Endpoint"},
    **{f"gpu_infra_policies TLS_PROTOCOLS {token.split(':')[1]}": (
        (*with_tls, default), (f"{_argument_of(token)}.{_snake(key)}",))
       for token, (key, with_tls, default) in TLS_PROTOCOLS.items()},
}
"""Each name of gpu_infra_facts.allowed that bounds a provider input -> its values (both ends of a
range) and the provider arguments they are passed to; and the provider values the policy
rules look for (a misspelt one would let a rule never fire)."""
UNDOCUMENTED = {"NAS_CAPACITY_GIB", "TargetMetric", "ESS_MAX_INSTANCE_TYPES",
                "MAX_LAUNCH_DAYS_AHEAD", "AlarmStatistic", "AlarmPeriod",
                "SNAPSHOT_RETENTION_DAYS", "REGISTRY_PERIODS_MONTHS", "AckWeekday",
                "GPU_UTILIZATION_METRIC", "INSTANCE_TYPE_MAX_CHARS", "OSS_OBJECT_KEY_MAX_BYTES"}
"""Names the provider documents no list or bound for (their docstrings in gpu_infra_facts.allowed
give the source, or UNCONFIRMED). Helpers built only from checked names are not listed."""
FORMATS = {"SPOT_PRICE_DECIMALS": ("ecs.Instance.spot_price_limit", "Three decimals")}
"""Names that bound a value's format, and the words of the SDK docstring that state it."""
DERIVED = {"ArchiveClass", "ARCHIVE_CLASSES", "SPOT_STRATEGIES", "ASSURANCE_TERMS_MONTHS",
           "assurance_period", "VaultKey"}
"""Names made from checked ones (StorageClass, SpotStrategy, ASSURANCE_MONTHS/YEARS; VaultKey:
the keys of VAULT_ENCRYPT_TYPES)."""


def _param_text(args_class: type, name: str) -> str | None:
    doc = inspect.getdoc(args_class.__init__) or ""
    found = re.search(rf":param [^\n]*?\b{name}: (.*?)(?=\n\s*:param |\Z)", doc, re.S)
    return found.group(1) if found else None


@cache
def sdk_text(argument: str) -> str | None:
    """The SDK docstring of `module.Resource.argument[.nested...]` (None if it has none)."""
    module, resource, *path = argument.split(".")
    args_class = getattr(importlib.import_module(f"pulumi_alicloud.{module}"), f"{resource}Args")
    for name in path[:-1]:
        annotation = inspect.signature(args_class.__init__).parameters[name].annotation
        nested = re.search(r"ForwardRef\('(\w+Args)'\)", repr(annotation))
        assert nested, f"{argument}: {name} takes no nested arguments"
        args_class = getattr(importlib.import_module(f"pulumi_alicloud.{module}._inputs"),
                             nested.group(1))
    return _param_text(args_class, path[-1])


SDK_RANGE = re.compile(r"`?(-?\d+)`? to `?(-?\d+)`?|\[(-?\d+)(?:, ?|-)(-?\d+)\]")
"""A range in a docstring: "`7` to `366`", "7 to 365 days", "[20,32768]", "[1-3650]"."""


def mentions(text: str, value: Any, any_case: bool = False) -> bool:
    return re.search(rf"(?<![\w<>=!]){re.escape(str(value))}(?![\w<>=!])", text,
                     re.IGNORECASE if any_case else 0) is not None


def refusal(argument: str, value: Any) -> str | None:
    """Why the provider's documentation does not accept `value` for `argument` (None: it
    does). The SDK text speaks about string values when it names two or more of the
    Terraform values (one is often just the default), or when there is no Terraform list:
    then it alone decides; without a Terraform bound, a number must lie in a range the SDK
    text states ("`7` to `366`") or be one it names."""
    terraform = TERRAFORM.get(argument)
    text = sdk_text(argument)
    if terraform is None and text is None:
        return f"{argument}: documented nowhere"
    if terraform is not None:
        if "values" in terraform and value not in terraform["values"]:
            return f"{argument}: {value!r} not in {terraform['values']} ({terraform['file']})"
        low, high = terraform.get("between", (terraform.get("at_least"), None))
        if low is not None and not (low <= value and (high is None or value <= high)):
            return (f"{argument}: {value!r} outside {low}..{'' if high is None else high} "
                    f"({terraform['file']})")
    if text is not None and terraform is None and isinstance(value, int):
        ranges = [(int(low or low_), int(high or high_))
                  for low, high, low_, high_ in SDK_RANGE.findall(text)]
        singles = {int(number) for number in re.findall(r"`(-?\d+)`", text)}
        if not ranges and not singles:
            return f"{argument}: the SDK docstring names no numbers and Terraform has no bound"
        if value not in singles and not any(low <= value <= high for low, high in ranges):
            return f"{argument}: {value!r} is outside the SDK docstring's {ranges or singles}"
        return None
    any_case = terraform is not None  # Terraform checks the case (the SDK text has "QuIC")
    speaks = text is not None and isinstance(value, str) and (
        terraform is None
        or sum(mentions(text, known, any_case) for known in terraform.get("values", ())) >= 2)
    if speaks and not mentions(text or "", value, any_case):
        return f"{argument}: {value!r} is not among the values the SDK docstring names"
    if terraform is None and not speaks:
        return f"{argument}: the SDK docstring names no values and Terraform has no list"
    return None


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_allowed_values_are_documented_by_the_provider(name):
    checked, arguments = LIMITS[name]
    assert checked, name
    problems = [p for argument in arguments for value in checked
                if (p := refusal(argument, value))]
    assert not problems, "\n".join(problems)


def test_every_name_in_limits_allowed_is_checked_or_says_why_not():
    tree = ast.parse(Path(allowed.__file__).read_text())
    public = {node.name if isinstance(node, ast.FunctionDef) else node.target.id
              if isinstance(node, ast.AnnAssign) else node.targets[0].id
              for node in tree.body
              if isinstance(node, (ast.FunctionDef, ast.AnnAssign, ast.Assign))}
    assert public - set(LIMITS) - UNDOCUMENTED - DERIVED - set(FORMATS) == set()
    assert (UNDOCUMENTED | DERIVED) - public == set()


def test_the_check_refuses_what_the_provider_does_not_document():
    assert refusal("ess.ScalingConfiguration.system_disk_category", "cloud_auto")
    assert refusal("ecs.Instance.system_disk_performance_level", "PL4")
    assert refusal("ess.ScalingGroup.health_check_types", "ELB")  # SDK docstring only
    assert refusal("ess.LifecycleHook.heartbeat_timeout", 21601)
    assert refusal("ess.ScalingGroup.max_instance_lifetime", 3600)
    assert refusal("ess.ScalingRule.metric_name", "CpuUtilization")  # documented nowhere
    assert refusal("kms.Key.rotation_interval", 366)  # SDK text: 7 to 365 days
    assert refusal("ecs.AutoSnapshotPolicy.retention_days", 30)  # SDK text names only -1
    assert refusal("log.Store.retention_period", 3651)  # SDK text: [1-3650]
    assert refusal("log.StoreIndex.field_searches.type", "json")  # Terraform's, not the SDK's
    assert refusal("log.StoreIndex.field_searches.type", "string")
    assert refusal("ess.ScalingConfiguration.system_disk_category", "cloud_essd") is None


def _prefix_bits(cidr: str) -> int:
    return int(cidr.split("/")[1])


def _days(interval: str) -> int:
    assert interval.endswith("d"), f"{interval!r}: a rotation interval in days, e.g. 365d"
    return int(interval.removesuffix("d"))


def _hours(duration: str) -> int:
    assert duration.endswith("h"), f"{duration!r}: a maintenance window in hours, e.g. 4h"
    return int(duration.removesuffix("h"))


PLANNED_AS = {"vpc.Network.cidr_block": _prefix_bits, "vpc.Switch.cidr_block": _prefix_bits,
              "kms.Key.rotation_interval": _days,
              "cs.ManagedKubernetes.maintenance_window.duration": _hours}
"""Planned inputs whose documented bound is about a part of the value."""


def planned_values(resources: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(argument, value) for every planned input of the arguments checked here."""
    watched = set(TERRAFORM) | {a for _, arguments in LIMITS.values() for a in arguments} | {
        "ess.ScalingGroup.removal_policies"}
    found: list[tuple[str, Any]] = []

    def walk(path: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{path}.{_snake(key)}", item)
        elif isinstance(value, list):
            for item in value:
                walk(path, item)
        elif path in watched and value is not None:
            if isinstance(value, float) and value.is_integer():  # the engine's numbers
                value = int(value)
            found.append((path, PLANNED_AS.get(path, lambda same: same)(value)))

    for resource in resources:
        walk(_argument_of(resource["type"]), resource.get("inputs", {}))
    return found


VARIANTS = {
    "training prepaid, reserved, assured": merged(BASE_TRAINING, environment="prod", fleet={
        "instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": 2, "capacity": "prepaid",
        "prepaid_period": 1, "prepaid_period_unit": "Week",
        "reserved": {"reserved_instances": {"count": 1, "scope": "Zone", "period_years": 3,
                                            "offering_type": "All Upfront"},
                     "guarantee": {"kind": "elasticity_assurance", "count": 1,
                                   "period_months": 24}}}),
    "inference recycled, refreshed, scheduled": merged(BASE_INFERENCE, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge"], "min_size": 1, "max_size": 4,
        "multi_az_policy": "PRIORITY", "max_instance_lifetime_days": 7,
        "target_tracking": {"metric": "IntranetRx", "target_value": 1000},
        "schedules": [{"name": "night", "launch_time": utc_in(1), "recurrence_type": "Daily",
                       "recurrence_value": "1", "recurrence_end_time": utc_in(30),
                       "min_size": 1}]}),
}


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda path: path.stem)
def test_planned_values_of_shipped_stacks_are_documented(golden):
    found = planned_values(golden_record(golden.stem)["resources"])
    assert found
    problems = sorted({p for argument, value in found if (p := refusal(argument, value))})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_planned_values_of_variants_are_documented(variant, plan_cluster):
    plan = plan_cluster(VARIANTS[variant])
    found = planned_values([{"type": r.type, "inputs": r.inputs} for r in plan.resources])
    problems = sorted({p for argument, value in found if (p := refusal(argument, value))})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_are_stated_by_the_provider(name):
    argument, words = FORMATS[name]
    assert words in (sdk_text(argument) or ""), f"{argument}: {words!r} not in its docstring"


def test_the_tls_policies_are_the_nlb_listeners_system_policies():
    """load_balancer.tls.policy takes exactly the system policies nlb.Listener documents."""
    text = (sdk_text("nlb.Listener.security_policy_id") or "").replace("\\_", "_")
    assert set(TLS_POLICIES) == set(re.findall(r"`(tls_cipher_policy\w*)`", text))
