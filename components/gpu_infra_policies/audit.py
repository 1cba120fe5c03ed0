"""Audit and logs: what happens to the stack is recorded, completely and long enough.
ActionTrail trails record every event of every region somewhere private; SLS log audit
covers the services a GPU platform uses; in prod (where the environment demands access
logs) log stores keep 90+ days, ALB and databases log access, and ACK logs its control
plane; VPC flow logs are advised."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
)
from gpu_infra_policies.storage import PUBLIC_ACLS

TRAIL_ALL = "All"


def trails(resources: Sequence[Resource], _: Mapping[str, Any],
           __: Context) -> Iterator[tuple[Resource | None, str]]:
    """ActionTrail trails record read and write events (eventRw All; the API default is
    Write) of every region (trailRegion All, set explicitly), are on (status Enable), write
    somewhere (ossBucketName or slsProjectArn) and not to a bucket of the stack that is
    public (acl public-read / public-read-write)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    acls = [r for r in resources if r.type == t.BUCKET_ACL]
    for trail in (r for r in resources if r.type == t.ACTIONTRAIL_TRAIL):
        props = trail.props
        for key in ("eventRw", "trailRegion"):
            value = props.get(key)
            if not is_unknown(value) and value != TRAIL_ALL:
                shown = value if value is not None else "not set (Write for eventRw)"
                yield trail, f"{key} is {shown}: the trail misses events; set All"
        if props.get("status", "Enable") == "Disable":
            yield trail, "the trail is disabled (status Disable); set Enable"
        if not props.get("ossBucketName") and not props.get("slsProjectArn"):
            yield trail, "the trail writes nowhere; set ossBucketName or slsProjectArn"
        target = props.get("ossBucketName")
        for bucket in buckets:
            if target is None or not trail.refers_to(bucket, target, "bucket"):
                continue
            public = bucket.props.get("acl") in PUBLIC_ACLS or any(
                acl.props.get("acl") in PUBLIC_ACLS
                and acl.refers_to(bucket, acl.props.get("bucket"), "bucket") for acl in acls)
            if public:
                yield trail, (f"the trail writes to bucket {bucket.name}, which is public: "
                              "anyone reads the account's audit log")


AUDITED_LOGS = ("actiontrail_enabled", "oss_access_enabled", "rds_enabled",
                "vpc_flow_enabled", "slb_access_enabled", "nas_enabled", "k8s_audit_enabled",
                "k8s_event_enabled", "polardb_enabled", "apigateway_enabled")
"""SLS log audit switches (variableMap keys) for the services a GPU platform uses."""


def log_audit(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """An SLS log audit (log.Audit) collects the logs of every service in AUDITED_LOGS
    (variableMap key true / "true")."""
    if resource.type != t.LOG_AUDIT:
        return
    variables = resource.props.get("variableMap")
    if is_unknown(variables):
        return
    variables = variables if isinstance(variables, Mapping) else {}
    off = [key for key in AUDITED_LOGS if str(variables.get(key, "false")).lower() != "true"]
    if off:
        yield f"log audit leaves out {', '.join(off)}; set them true in variableMap"


def log_retention(resource: Resource, cfg: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Log stores (log.Store) keep `minRetentionDays` (default 90) where the environment
    demands access logs; the provider default is 30 days."""
    environment = ctx.demanded_by(resource, "access_logs")
    if resource.type != t.LOG_STORE or not environment:
        return
    days = number(resource.props.get("retentionPeriod", 30))
    if days is not None and days < cfg["minRetentionDays"]:
        yield (f"{environment} log store keeps {days:g} days; keep at least "
               f"{cfg['minRetentionDays']:g} (retentionPeriod)")


RDS_LOG_PARAMETERS = ("log_connections", "log_disconnections", "log_duration")
"""PostgreSQL parameters that log who connects and how long statements take."""


def _parameters(props: Mapping[str, Any]) -> dict[str, str]:
    return {str(p.get("name")): str(p.get("value")).lower()
            for p in as_list(props.get("parameters")) if isinstance(p, Mapping)}


def prod_access_logs(resource: Resource, cfg: Mapping[str, Any],
                     ctx: Context) -> Iterator[str]:
    """Where the environment demands access logs (prod): ALB load balancers write them
    (accessLogConfig), RDS keeps its SQL audit (sqlCollectorStatus Enabled,
    sqlCollectorConfigValue >= `minSqlRetentionDays`) and PostgreSQL logs connections
    (RDS_LOG_PARAMETERS on), ACK clusters log their control plane and audit
    (controlPlaneLogComponents, auditLogConfig enabled)."""
    environment = ctx.demanded_by(resource, "access_logs")
    if not environment:
        return
    props = resource.props
    if resource.type == t.ALB_LOAD_BALANCER:
        config = props.get("accessLogConfig")
        if not is_unknown(config) and not (isinstance(config, Mapping)
                                           and config.get("logStore")):
            yield f"{environment} ALB writes no access log; set accessLogConfig"
    elif resource.type == t.RDS_INSTANCE:
        status = props.get("sqlCollectorStatus", "Disabled")
        days = number(props.get("sqlCollectorConfigValue", 30))
        if status != "Enabled" or (days is not None and days < cfg["minSqlRetentionDays"]):
            minimum = cfg["minSqlRetentionDays"]
            yield (f"{environment} database keeps no SQL audit for {minimum:g} days; set "
                   f"sqlCollectorStatus Enabled and sqlCollectorConfigValue {minimum:g}+")
        if str(props.get("engine", "")).lower() == "postgresql":
            params = _parameters(props)
            off = [p for p in RDS_LOG_PARAMETERS if params.get(p) != "on"]
            if off:
                yield f"{environment} PostgreSQL does not log {', '.join(off)}; set them on"
    elif resource.type in (t.MANAGED_KUBERNETES, t.ACK_DEDICATED):
        components = as_list(props.get("controlPlaneLogComponents"))
        audit = props.get("auditLogConfig")
        if resource.type == t.MANAGED_KUBERNETES and not is_unknown(components) and not components:
            yield (f"{environment} cluster keeps no control-plane logs; set "
                   "controlPlaneLogComponents (apiserver, kcm, scheduler)")
        if isinstance(audit, Mapping) and audit.get("enabled") is False:
            yield f"{environment} cluster turns the API audit log off (auditLogConfig)"


def flow_logs(resources: Sequence[Resource], _: Mapping[str, Any],
              ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Prod VPCs (the environment demands access logs) have a flow log (vpc.FlowLog on the
    VPC, or on one of its vSwitches)."""
    logs = [r for r in resources if r.type == t.FLOW_LOG]
    for vpc in (r for r in resources if r.type == t.VPC):
        environment = ctx.demanded_by(vpc, "access_logs")
        if environment and not any(log.refers_to(vpc, log.props.get("resourceId"))
                                   for log in logs):
            yield vpc, f"{environment} VPC has no flow log (vpc.FlowLog)"


AUDIT_RULES: tuple[Rule, ...] = (
    StackRule("actiontrail-complete", "ActionTrail trails record every event of every region, "
              "somewhere private", "security", "high",
              "Set eventRw All, trailRegion All, status Enable and a private OSS bucket or SLS "
              "project as the destination.", trails, concern="audit and logs",
              reviews=frozenset({t.ACTIONTRAIL_TRAIL})),
    ResourceRule("log-audit-complete", "SLS log audit covers the platform's services",
                 "security", "medium", "Set each AUDITED_LOGS key true in the log audit's "
                 "variableMap.", log_audit, concern="audit and logs",
                 reviews=frozenset({t.LOG_AUDIT})),
    ResourceRule("prod-log-retention", "Prod log stores keep logs 90 days or more", "security",
                 "medium", "Set retentionPeriod to 90 or more (the default is 30).",
                 log_retention, concern="audit and logs", reviews=frozenset({t.LOG_STORE}),
                 schema={"minRetentionDays": {"type": "number", "minimum": 1,
                                              "description": "Fewest days a prod log store "
                                                             "keeps. Default 90."}},
                 defaults={"minRetentionDays": 90}),
    ResourceRule("prod-access-logs", "Prod load balancers, databases and clusters log access",
                 "security", "medium", "Set accessLogConfig (ALB), sqlCollectorStatus Enabled "
                 "and the log_* parameters (RDS), controlPlaneLogComponents (ACK).",
                 prod_access_logs, concern="audit and logs",
                 reviews=frozenset({t.ALB_LOAD_BALANCER, t.RDS_INSTANCE, t.MANAGED_KUBERNETES,
                                    t.ACK_DEDICATED}),
                 schema={"minSqlRetentionDays": {"type": "number", "minimum": 1,
                                                 "description": "Fewest days of RDS SQL audit "
                                                                "in prod. Default 180."}},
                 defaults={"minSqlRetentionDays": 180}),
    StackRule("prod-vpc-flow-logs", "Prod VPCs keep flow logs", "security", "low",
              "Add a vpc.FlowLog (resourceType VPC) writing to an SLS store.", flow_logs,
              concern="audit and logs", reviews=frozenset({t.VPC, t.FLOW_LOG}),
              enforcement="advisory",
              note="advisory: flow logs are billed per GB ingested and a GPU stack moves "
                   "terabytes of training data through its VPC, so keeping them is a budget "
                   "decision"),
)
