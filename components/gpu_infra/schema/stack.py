"""One stack's settings: a discriminated union on `layout`, and the rules across sections."""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from gpu_infra import catalog
from gpu_infra.catalog.recommend import Workload
from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.compute import ScalingFleet, TrainingFleet
from gpu_infra.schema.environment import (
    DEFAULT_ENVIRONMENT,
    Environment,
    EnvironmentProfile,
    profile_for,
)
from gpu_infra.schema.image import ImageBuildConfig
from gpu_infra.schema.instance_types import DeclaredInstanceType
from gpu_infra.schema.loadbalancer import LoadBalancerConfig
from gpu_infra.schema.logs import LogsConfig
from gpu_infra.schema.monitoring import ALERTING_SUFFIX, MonitoringConfig
from gpu_infra.schema.naming import NamingConfig
from gpu_infra.schema.network import NetworkConfig
from gpu_infra.schema.problems import shorten
from gpu_infra.schema.security import SecurityConfig
from gpu_infra.schema.storage import LONGEST_SUFFIX, BucketPurpose, StorageConfig
from gpu_infra_facts.allowed import HealthCheckType
from gpu_infra_facts.naming import ALARM_CONTACT, BUCKET, UNIQUE_NAMES
from gpu_infra_facts.regions import REGIONS, zone_belongs_to
from gpu_infra_facts.tags import (
    FORBIDDEN_TAG_TEXT,
    MAX_TAG_KEY_CHARS,
    MAX_TAG_VALUE_CHARS,
    MAX_TAGS_PER_RESOURCE,
    RESERVED_KEY_PREFIXES,
    tag_problems,
)

CLUSTER_NAME_PATTERN = r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$"
"""Cluster names: 3-24 lowercase letters, digits, hyphens; they prefix every resource name
and bucket name, so they stay short and DNS-safe."""
REQUIRED_TAG_KEYS = ("Project", "Stack", "Environment", "Layout", "ManagedBy")
"""Tags every taggable resource carries, whatever the user adds (blocks.conventions)."""
NAME_TAG_KEY = "Name"
"""Tag holding each resource's own name."""
FLEET_TAG_KEY = "GpuFleet"
"""Tag on every GPU instance of a fleet; its value is the fleet component's name."""
AUTOMATIC_TAG_KEYS = (*REQUIRED_TAG_KEYS, NAME_TAG_KEY, FLEET_TAG_KEY)
MAX_USER_TAGS = MAX_TAGS_PER_RESOURCE - len(AUTOMATIC_TAG_KEYS)
"""User tags that fit beside the automatic ones in Alibaba's 20 tags per resource (13)."""
TAGS_JSON_SCHEMA: dict[str, Any] = {
    "maxProperties": MAX_USER_TAGS,
    "propertyNames": {"minLength": 1, "maxLength": MAX_TAG_KEY_CHARS, "not": {"anyOf": [
        {"pattern": "^(" + "|".join(
            "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in p)
            for p in RESERVED_KEY_PREFIXES) + ")"},
        {"pattern": "|".join(re.escape(text) for text in FORBIDDEN_TAG_TEXT)},
        {"enum": list(AUTOMATIC_TAG_KEYS)}]}},
    "additionalProperties": {"type": "string", "maxLength": MAX_TAG_VALUE_CHARS, "not": {
        "pattern": "|".join(re.escape(text) for text in FORBIDDEN_TAG_TEXT)}},
}
"""The tag limits as the editor schema states them (the same facts `_valid_tags` checks)."""


class ClusterCommon(StrictModel):
    """Settings every stack has, the image-baking one included. A layout's model adds
    `layout: Literal["<name>"]` (the discriminator), its sections and its `workload`; it is
    registered in schema.registry."""

    workload: ClassVar[Workload]
    """What the layout asks of an instance type: the catalog uses that serve it (the
    recommender, the gpu-type-in-catalog policy rule) and whether its GPUs talk."""

    name: str = Field(pattern=CLUSTER_NAME_PATTERN)
    """Cluster name; prefixes every resource and bucket name. Required."""
    region: str
    """Alibaba Cloud region, read from `alicloud:region`. Required."""
    environment: Environment = DEFAULT_ENVIRONMENT
    """dev, staging or prod. Default dev. Its profile (schema.environment, the README's
    environments table) says what it turns on: prod turns on deletion protection, KMS
    encryption, data protection, versioning, snapshots and access logs, and refuses
    world-open CIDRs."""
    tags: dict[str, str] = Field(default={}, json_schema_extra=TAGS_JSON_SCHEMA)
    """Extra tags on every taggable resource, e.g. CostCenter, Owner. Default none; at most
    13, since Project, Stack, Environment, Layout, ManagedBy, Name and GpuFleet are always
    added and a resource takes 20 (keys 1-128 characters, not starting with aliyun or acs:;
    keys and values of at most 128 characters without http:// or https://)."""
    network: NetworkConfig
    """VPC and vSwitches. Required (at least `zones`)."""
    suppress: list[str] = []
    """Names of WARNING/INFO validators to silence for this stack. Default none."""
    monthly_budget_cny: float | None = Field(default=None, gt=0)
    """Monthly budget in CNY. The offline plan checks the cost estimate against it with the
    `monthly-budget` policy rule (advisory unless the policy config says otherwise).
    Default none (no budget check)."""

    @field_validator("region")
    @classmethod
    def _known_region(cls, region: str) -> str:
        if region not in REGIONS:
            raise ValueError(f"unknown region {region!r}; allowed: "
                             f"{', '.join(sorted(REGIONS))}")
        return region

    @field_validator("tags")
    @classmethod
    def _valid_tags(cls, tags: dict[str, str]) -> dict[str, str]:
        problems: list[str] = []
        if len(tags) > MAX_USER_TAGS:
            problems.append(f"{len(tags)} tags; at most {MAX_USER_TAGS}: a resource takes "
                            f"{MAX_TAGS_PER_RESOURCE} tags and gpu-infra sets "
                            f"{len(AUTOMATIC_TAG_KEYS)} ({', '.join(AUTOMATIC_TAG_KEYS)})")
        for key, value in list(tags.items())[:MAX_TAGS_PER_RESOURCE]:
            shown = shorten(key, 40)
            if key in AUTOMATIC_TAG_KEYS:
                problems.append(f"tag {shown}: set by gpu-infra on every resource; choose "
                                "another key")
            problems += [f"tag {shown!r}: {problem}" for problem in tag_problems(key, value)]
        if problems:
            raise ValueError("\n".join(problems))
        return tags

    @functools.cached_property
    def gpu_types(self) -> catalog.Lookup:
        """The catalog with this stack's declared `instance_types` (fleet stacks): what every
        lookup of an instance type uses."""
        return catalog.Lookup({
            name: declared.entry(name, region=self.region, default_uses=self.workload.uses)
            for name, declared in self.declared_types().items()})

    def declared_types(self) -> dict[str, DeclaredInstanceType]:
        """GPU types the stack declares beside the catalog: none (fleet stacks declare them
        under `instance_types`)."""
        return {}

    @property
    def profile(self) -> EnvironmentProfile:
        """What the stack's environment turns on."""
        return profile_for(self.environment)

    def _zone_problems(self) -> list[str]:
        return [f"network.zones: {zone} is not a zone of region {self.region}"
                for zone in self.network.zones if not zone_belongs_to(zone, self.region)]

    @model_validator(mode="after")
    def _check_across_sections(self) -> ClusterCommon:
        """Overridden by subclasses that check more (so each problem is reported once)."""
        problems = self._zone_problems()
        if problems:
            raise ValueError("\n".join(problems))
        return self


class ClusterBase(ClusterCommon):
    """Settings every fleet layout shares; its model also states its
    `default_bucket_purposes`."""

    default_bucket_purposes: ClassVar[tuple[BucketPurpose, ...]]
    """The buckets the layout gets when `storage.buckets.purposes` is not set."""

    security: SecurityConfig = SecurityConfig()
    """Access rules, login key and encryption. Default: nothing open, no key."""
    monitoring: MonitoringConfig = MonitoringConfig()
    """CloudMonitor contacts, GPU fleet alarms and ECS event alerts. Default: off until
    contacts are listed."""
    logs: LogsConfig = LogsConfig()
    """Node logs in SLS (bootstrap log, journal, kernel messages). Default on, kept for the
    environment's retention."""
    storage: StorageConfig = StorageConfig()
    """Node data disks, snapshots, shared file system and OSS buckets. Default: one 500 GiB
    scratch disk per node, no shared file system, the layout's buckets."""
    naming: NamingConfig = NamingConfig()
    """How names unique beyond the stack end (bucket, RAM role and policy, key pair, ...).
    Default `global_suffix: none`: today's names, kept for existing stacks."""
    instance_types: dict[str, DeclaredInstanceType] = {}
    """GPU instance types the catalog lacks, by type name (`ecs.gn9x-8x.48xlarge: {gpu_model:
    ..., gpu_count: 8, gpu_memory_gib: 96, vcpu: 192, memory_gib: 1024}`): the fleet may
    use them like catalog types. A type the catalog lists may not be declared. Default
    none."""

    def declared_types(self) -> dict[str, DeclaredInstanceType]:
        """The stack's declared `instance_types`."""
        return self.instance_types

    @property
    def kms_encryption(self) -> bool:
        """Whether a KMS key encrypts disks and buckets (security.kms_encryption, default:
        the environment's profile, on in prod)."""
        explicit = self.security.kms_encryption
        return self.profile.kms_encryption if explicit is None else explicit

    @property
    def backup_enabled(self) -> bool:
        """Whether Cloud Backup copies the stack's data (storage.backup.enabled, default:
        the environment's profile, on in prod)."""
        explicit = self.storage.backup.enabled
        return self.profile.backup if explicit is None else explicit

    @property
    def log_retention_days(self) -> int:
        """Days the SLS stores keep node logs (logs.retention_days, default: the
        environment's profile)."""
        explicit = self.logs.retention_days
        return self.profile.log_retention_days if explicit is None else explicit

    @property
    def bucket_logging(self) -> bool:
        """Whether buckets write access logs (storage.buckets.logging, default: the
        environment's profile, on in prod)."""
        explicit = self.storage.buckets.logging
        return self.profile.bucket_logging if explicit is None else explicit

    @model_validator(mode="after")
    def _check_across_sections(self) -> ClusterBase:
        problems = self._zone_problems()
        if self.profile.refuse_world_open:
            problems += [f"security.{field}: {why}: not allowed in {self.environment}; list "
                         "the CIDRs that need access"
                         for field, why in self.security.world_open_fields()]
        problems += (self._bucket_prefix_problems() + self._contact_name_problems()
                     + self._declared_type_problems())
        fs_zone = self.storage.shared_fs.zone
        if fs_zone is not None and fs_zone not in self.network.zones:
            problems.append(f"storage.shared_fs.zone: {fs_zone} is not in network.zones")
        shared = self.storage.shared_fs
        if shared.enabled and shared.kind == "cpfs" and self.kms_encryption:
            problems.append("storage.shared_fs.kind: cpfs cannot be encrypted through the "
                            "provider (nas.FileSystem encrypt_type 1 and 2 are for standard "
                            "and extreme only) but this stack encrypts its data "
                            "(kms_encryption); use extreme, or set security.kms_encryption: "
                            "false to accept an unencrypted CPFS")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _bucket_prefix_problems(self) -> list[str]:
        """`<prefix>-<longest purpose>[-<suffix>]` must fit a bucket name."""
        prefix = self.storage.buckets.bucket_prefix
        limit = UNIQUE_NAMES[BUCKET].max_length or 0
        suffix = self.naming.suffix_length
        room = limit - len(LONGEST_SUFFIX) - 1 - suffix
        if prefix is None or len(prefix) <= room:
            return []
        shape = f"<prefix>-{LONGEST_SUFFIX}" + ("-<suffix>" if suffix else "")
        return [f"storage.buckets.bucket_prefix: {prefix!r} is too long; bucket `{shape}` "
                f"must be at most {limit} characters, so at most {room}"]


    def _declared_type_problems(self) -> list[str]:
        """Declared types: well-formed names the catalog does not list, known regions."""
        problems = []
        for name, declared in self.instance_types.items():
            path = f"instance_types.{shorten(name, 40)}"
            if not re.match(catalog.TYPE_PATTERN, name):
                problems.append(f"{path}: not an instance type name; write "
                                "ecs.<family>.<size>, e.g. ecs.gn9x-8x.48xlarge")
            elif catalog.get(name) is not None:
                problems.append(f"{path}: the catalog lists it; remove the declaration (the "
                                "catalog's entry is used)")
            problems += [f"{path}.regions: unknown region {region!r}"
                         for region in declared.regions or () if region not in REGIONS]
        return problems

    def _contact_name_problems(self) -> list[str]:
        """`<cluster>-alerts-<contact>[-<suffix>]` must fit CloudMonitor's contact names."""
        limit = UNIQUE_NAMES[ALARM_CONTACT].max_length or 0
        problems = []
        for index, contact in enumerate(self.monitoring.contacts):
            cloud = f"{self.name}-{ALERTING_SUFFIX}-{contact.name}"
            length = len(cloud) + self.naming.suffix_length
            if length > limit:
                with_suffix = " with naming.global_suffix" if self.naming.suffix_length else ""
                problems.append(f"monitoring.contacts[{index}].name: the contact is {cloud!r}"
                                f"{with_suffix} in CloudMonitor, {length} characters; at most "
                                f"{limit}: use a shorter contact or cluster name")
        return problems


class TrainingConfig(ClusterBase):
    """A training cluster: fixed GPU nodes close together in one zone."""

    layout: Literal["training"]
    workload = Workload(uses=("training",), gpus_talk=True, placement="together")
    default_bucket_purposes = ("datasets", "checkpoints", "models", "outputs")
    fleet: TrainingFleet
    """The GPU nodes. Required."""


class InferenceConfig(ClusterBase):
    """An online inference service: an auto-scaling GPU fleet across zones behind a load
    balancer."""

    layout: Literal["inference"]
    workload = Workload(uses=("inference",), placement="spread")
    default_bucket_purposes = ("models",)
    fleet: ScalingFleet
    """The scaling GPU fleet. Required."""
    load_balancer: LoadBalancerConfig = LoadBalancerConfig()
    """The load balancer in front of the fleet. Default: an intranet NLB."""

    @property
    def health_check_types(self) -> list[HealthCheckType]:
        """`fleet.health_checks`, else ECS and LOAD_BALANCER: an instance the load balancer
        finds unhealthy is replaced, not just taken out of rotation."""
        return list(self.fleet.health_checks or ("ECS", "LOAD_BALANCER"))

    @property
    def scale_in_percent(self) -> int:
        """`fleet.queue_scaling.scale_in_percent`, else 25: an empty request queue means the
        fleet keeps up, so it sheds a quarter at a time."""
        queue = self.fleet.queue_scaling
        return queue.scale_in_percent if queue and queue.scale_in_percent else 25

    @model_validator(mode="after")
    def _check_service(self) -> InferenceConfig:
        problems: list[str] = []
        if len(self.network.zones) < 2:
            problems.append("network.zones: an inference service spans at least two zones "
                            "(the load balancer and failover need them)")
        if not self.security.service_ports:
            problems.append("security.service_ports: missing; list the port(s) the model "
                            "server listens on, e.g. [8000]")
        if not self.security.client_cidrs:
            problems.append("security.client_cidrs: missing; list the CIDRs that may reach "
                            "the service through the load balancer")
        if problems:
            raise ValueError("\n".join(problems))
        return self


class RenderingConfig(ClusterBase):
    """A render farm: a spot-heavy auto-scaling fleet of graphics instances."""

    layout: Literal["rendering"]
    workload = Workload(uses=("rendering", "vgpu"))
    default_bucket_purposes = ("datasets", "outputs")
    fleet: ScalingFleet
    """The scaling GPU fleet. Required."""

    @property
    def health_check_types(self) -> list[HealthCheckType]:
        """`fleet.health_checks`, else ECS (no load balancer in front)."""
        return list(self.fleet.health_checks or ("ECS",))

    @property
    def scale_in_percent(self) -> int:
        """`fleet.queue_scaling.scale_in_percent`, else 100: the render backlog counts
        running jobs, so an empty one means the farm is idle."""
        queue = self.fleet.queue_scaling
        return queue.scale_in_percent if queue and queue.scale_in_percent else 100

    @model_validator(mode="after")
    def _check_health_checks(self) -> RenderingConfig:
        if "LOAD_BALANCER" in (self.fleet.health_checks or ()):
            raise ValueError("fleet.health_checks: LOAD_BALANCER needs a load balancer; a "
                             "render farm has none (use ECS)")
        return self


class ImageConfig(ClusterCommon):
    """A GPU image baked with ECS Image Builder from the nodes' own install steps, for fleets
    that boot with the `preinstalled` driver route. Its network holds the build instance
    (a NAT gateway gives it the internet the NVIDIA repository needs)."""

    layout: Literal["image"]
    workload = Workload(uses=("training", "inference"))
    image: ImageBuildConfig
    """What the image holds and how it is built. Required (at least `instance_type`)."""


FleetCluster = TrainingConfig | InferenceConfig | RenderingConfig
"""A stack with a GPU fleet (every layout but image)."""
