"""The CrossGuard adapter: the shared rules as pulumi_policy policies. The one module of
this package that imports more than the standard library (pulumi_policy).

Only `policies/__main__.py` constructs the PolicyPack (which serves gRPC and never returns);
tests import this module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import _DictProxy, _ListProxy

from gpu_infra_facts.workload import Demand, Placement
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    RuleInfo,
    StackRule,
    stack_environment,
)
from gpu_infra_policies.rules import RULES

PACK_NAME = "gpu-infra"
CLUSTER_CONFIG_KEY = "gpu-infra:cluster"


def plain(value: Any) -> Any:
    """Props without pulumi_policy's proxies, whose item access raises on unknowns: here
    unknowns stay as sentinels, which the rules skip."""
    if isinstance(value, (_DictProxy, _ListProxy)):
        value = value["__target"]
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


CatalogLookup = Callable[[str], "frozenset[str] | None"]
"""Instance type -> the layouts it suits (None if not in the catalog)."""
DemandsLookup = Callable[[str], frozenset[Demand]]
"""Environment -> what it demands of resources (gpu_infra's environment profile)."""
PlacementLookup = Callable[[str], "Placement | None"]
"""Layout -> how it places its nodes (gpu_infra's layout registry)."""


def stack_context(lookups: Context) -> Context:
    """`lookups` (the catalog and environment demands the pack was built with) with the
    stack's environment from the program's config (PULUMI_CONFIG, which the CLI passes to
    the pack)."""
    environment = None
    try:
        cluster = json.loads(json.loads(os.environ.get("PULUMI_CONFIG", "{}"))
                             .get(CLUSTER_CONFIG_KEY, "{}"))
        environment = cluster.get("environment") if isinstance(cluster, dict) else None
    except (TypeError, ValueError):
        environment = None
    return replace(lookups, environment=environment if isinstance(environment, str) else None)


def _thresholds(rule: RuleInfo, config: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**rule.defaults, **{k: v for k, v in (config or {}).items() if k in rule.schema}}


def _resource_policy(rule: ResourceRule, lookups: Context) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        resource = Resource(args.resource_type, plain(args.props), args.name, args.urn,
                            bool(args.opts.protect) if args.opts else False)
        for message in rule.check(resource, _thresholds(rule, args.get_config()),
                                  stack_context(lookups)):
            report_violation(message, None)

    return ResourceValidationPolicy(rule.name, rule.description, validate,
                                    **_metadata(rule, lookups))


def _stack_policy(rule: StackRule, lookups: Context) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = []
        for r in args.resources:
            urns = {d.urn for d in r.dependencies}
            urns |= {d.urn for deps in r.property_dependencies.values() for d in deps}
            resources.append(Resource(r.resource_type, plain(r.props), r.name, r.urn,
                                      bool(r.opts.protect) if r.opts else False,
                                      dependencies=tuple(sorted(urns))))
        context = stack_context(lookups)
        if context.environment is None:
            context = replace(context, tagged_environment=stack_environment(resources))
        for resource, message in rule.check(resources, _thresholds(rule, args.get_config()),
                                            context):
            report_violation(message, resource.urn if resource else None)

    return StackValidationPolicy(rule.name, rule.description, validate,
                                 **_metadata(rule, lookups))


def _metadata(rule: RuleInfo, lookups: Context) -> dict[str, Any]:
    """CrossGuard metadata; the level is the rule's default in the stack's environment
    (PULUMI_CONFIG, which the policy runtime loads before it builds the pack: one stack per
    analyzer process), since a CrossGuard policy has one level for all its violations."""
    properties = {key: {**schema, "default": rule.defaults[key]}
                  if key in rule.defaults else dict(schema)
                  for key, schema in rule.schema.items()}
    level = rule.level_in(stack_context(lookups), rule.default_enforcement)
    return {"enforcement_level": EnforcementLevel(level),
            "severity": Severity(rule.severity),
            "config_schema": PolicyConfigSchema(properties) if properties else None,
            "remediation_steps": rule.remediation, "tags": [rule.category]}


def build_policies(catalog: CatalogLookup | None = None, demands: DemandsLookup | None = None,
                   placement: PlacementLookup | None = None,
                   ) -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """One CrossGuard policy per rule; `catalog` feeds the GPU catalog rule, `demands` the
    rules of what an environment demands, `placement` the rules of how a layout places its
    nodes (each default None: those rules find nothing)."""
    lookups = Context(catalog=catalog, demands=demands, placement=placement)
    return [_policy(rule, lookups) for rule in RULES]


def _policy(rule: Rule, lookups: Context) -> ResourceValidationPolicy | StackValidationPolicy:
    if isinstance(rule, StackRule):
        return _stack_policy(rule, lookups)
    return _resource_policy(rule, lookups)
