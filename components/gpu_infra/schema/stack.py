"""One stack's settings: a discriminated union on `layout`, and the rules across sections."""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from gpu_infra import catalog
from gpu_infra.catalog.recommend import Workload
from gpu_infra.schema.ack import AckConfig, Platform
from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.compute import ScalingFleet, TrainingFleet
from gpu_infra.schema.container_registry import RegistryConfig
from gpu_infra.schema.cost import SavingsPlan
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
from gpu_infra.schema.monitoring import MonitoringConfig
from gpu_infra.schema.naming import NamingConfig
from gpu_infra.schema.network import NetworkConfig
from gpu_infra.schema.node import OSS_URL
from gpu_infra.schema.problems import choice_problems, shorten
from gpu_infra.schema.security import SecurityConfig
from gpu_infra.schema.serving import ServingConfig
from gpu_infra.schema.storage import LONGEST_SUFFIX, BucketPurpose, StorageConfig
from gpu_infra.schema.worker import WorkerConfig
from gpu_infra_facts import acr
from gpu_infra_facts.allowed import (
    ACK_PREPAID_MONTHS,
    ESS_DATA_DISK_GIB,
    INSTANCE_TYPE_MAX_CHARS,
    HealthCheckType,
    VaultKey,
)
from gpu_infra_facts.image_references import IMAGE_REFERENCE
from gpu_infra_facts.load_balancers import MAX_LISTENERS, ZONES_RANGE
from gpu_infra_facts.naming import UNIQUE_NAMES, fit_name, resolve_suffix
from gpu_infra_facts.quotas import SECURITY_GROUP_RULES
from gpu_infra_facts.regions import REGIONS, ZONES, ZONES_CHECKED, known_zone, zone_belongs_to
from gpu_infra_facts.tags import (
    FORBIDDEN_TAG_TEXT,
    MAX_TAG_KEY_CHARS,
    MAX_TAG_VALUE_CHARS,
    MAX_TAGS_PER_RESOURCE,
    RESERVED_KEY_PREFIXES,
    tag_problems,
)
from gpu_infra_facts.types import BUCKET

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
        network = self.network
        problems = [f"network.zones: {zone} is not a zone of region {self.region}"
                    for zone in [*network.zones, *network.declared_zones]
                    if not zone_belongs_to(zone, self.region)]
        known = ", ".join(sorted(ZONES.get(self.region, ())))
        problems += [f"network.zones: {zone} is not a zone gpu-infra knows in {self.region} "
                     f"(zones.json, checked {ZONES_CHECKED}: {known}); if it is new, list it "
                     "in network.declared_zones"
                     for zone in network.zones if zone_belongs_to(zone, self.region)
                     and not known_zone(zone, self.region) and zone not in network.declared_zones]
        return problems

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
    registry: RegistryConfig | None = None
    """The stack's private image registry (ACR), on ECS as on ACK: the nodes pull their
    workload images and the mirrored upstream ones from it over the VPC. Default: Enterprise
    in prod, personal otherwise, repositories [train, serve]."""
    naming: NamingConfig = NamingConfig()
    """How names unique beyond the stack end (bucket, RAM role and policy, key pair, ...).
    Default `global_suffix: none`: today's names, kept for existing stacks."""
    instance_types: dict[str, DeclaredInstanceType] = {}
    """GPU instance types the catalog lacks, by type name (`ecs.gn9x-8x.48xlarge: {gpu_model:
    ..., gpu_count: 8, gpu_memory_gib: 96, vcpu: 192, memory_gib: 1024}`): the fleet may
    use them like catalog types. A type the catalog lists may not be declared; a name has at
    most 64 characters (the nodes' user data lists each type). Default none."""
    savings_plan: SavingsPlan | None = None
    """An ECS savings plan the account holds, for the cost estimate: it pays for the
    fleet's on-demand (pay-as-you-go) GPU instances at its price factor up to its hourly
    commitment, the rest at list price, spot at spot price. Default none."""

    def declared_types(self) -> dict[str, DeclaredInstanceType]:
        """The stack's declared `instance_types`."""
        return self.instance_types

    @property
    def registry_settings(self) -> RegistryConfig:
        """`registry`, else the defaults."""
        return self.registry or RegistryConfig()

    @property
    def registry_edition(self) -> str:
        """`registry.edition`, else the profile's: enterprise in prod, personal otherwise."""
        explicit = self.registry_settings.edition
        return explicit or ("enterprise" if self.profile.enterprise_registry else "personal")

    @property
    def registry_namespace(self) -> str:
        """`registry.namespace`, else the cluster name."""
        return self.registry_settings.namespace or self.name

    @property
    def registry_address(self) -> str:
        """The VPC address the nodes pull the stack's images from."""
        return acr.registry_address(self.registry_edition,
                                    instance_name=acr.instance_name(self.name),
                                    region=self.region)

    @property
    def default_image(self) -> str | None:
        """The workload image (a job's, a model server's) unless one is named: the registry's
        first repository, tag latest, as blocks.registry.Registry names it; None when the
        registry lists none."""
        repositories = self.registry_settings.repositories
        return f"{self.registry_prefix()}/{repositories[0]}:latest" if repositories else None

    def registry_prefix(self, mirror: bool = False) -> str:
        """`<registry address>/<namespace>` of the stack's registry (the mirror namespace
        with `mirror`), as blocks.registry.Registry names them."""
        namespace = self.registry_namespace
        return f"{self.registry_address}/{acr.mirror_namespace(namespace) if mirror else namespace}"

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
    def backup_vault_key(self) -> VaultKey:
        """Whose key the backup vault encrypts with (storage.backup.vault_key, default: the
        stack's KMS key where it has one)."""
        explicit = self.storage.backup.vault_key
        if explicit is not None:
            return explicit
        return "stack" if self.kms_encryption else "hbr"

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
        problems += (self._bucket_prefix_problems() + self._declared_type_problems()
                     + self._rule_quota_problems() + self._expected_size_problems()
                     + self._savings_plan_problems() + self._backup_bucket_problems())
        if self.network.flow_logs and not self.logs.enabled:
            problems.append("network.flow_logs: the flow log goes to the stack's log project, "
                            "and logs.enabled is false; enable logs or remove flow_logs")
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
        if self.storage.backup.vault_key == "stack" and not self.kms_encryption:
            problems.append("storage.backup.vault_key: stack needs the stack's KMS key, and "
                            "security.kms_encryption is off; set hbr, or turn kms_encryption "
                            "on")
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


    def security_group_rules(self) -> dict[str, int]:
        """Rules each security group of the stack gets, by the `security` field that adds
        most of them: the cluster's group (blocks.security.ClusterSecurity) has one rule for
        its members, one SSH rule per admin CIDR, one per service port and client CIDR, and
        one egress rule."""
        security = self.security
        return {"cluster": 2 + len(security.admin_cidrs)
                + len(security.service_ports) * len(security.client_cidrs)}

    def _rule_quota_problems(self) -> list[str]:
        """Each security group fits the default rule quota (gpu_infra_facts.quotas); layouts
        with a load balancer add its quotas."""
        security = self.security
        field = ("admin_cidrs" if len(security.admin_cidrs)
                 >= len(security.service_ports) * len(security.client_cidrs) else "client_cidrs")
        return [f"security.{field if group == 'cluster' else 'client_cidrs'}: the {group} "
                f"security group would hold {count} rules ({len(security.admin_cidrs)} admin "
                f"CIDRs, {len(security.service_ports)} service ports x "
                f"{len(security.client_cidrs)} client CIDRs); a security group takes "
                f"{SECURITY_GROUP_RULES} by default (ECS quota): list fewer, wider CIDRs"
                for group, count in self.security_group_rules().items()
                if count > SECURITY_GROUP_RULES]

    def _expected_size_problems(self) -> list[str]:
        """`storage.buckets.expected_gib` only for buckets the stack creates."""
        buckets = self.storage.buckets
        if buckets.purposes is not None:
            return []  # BucketsConfig checks them against the explicit purposes
        created = self.default_bucket_purposes
        return [f"storage.buckets.expected_gib.{purpose}: the layout creates no {purpose} "
                f"bucket (it creates {', '.join(created) or 'none'}); set "
                "storage.buckets.purposes to create it, or remove the size"
                for purpose in buckets.expected_gib if purpose not in created]

    def _savings_plan_problems(self) -> list[str]:
        """An `ecs` savings plan covers a family the fleet uses."""
        plan = self.savings_plan
        fleet = getattr(self, "fleet", None)
        if plan is None or plan.instance_family is None or fleet is None:
            return []
        types = fleet.instance_types if isinstance(fleet, ScalingFleet) \
            else [fleet.instance_type]
        families = sorted({catalog.family_of(kind) for kind in types})
        if plan.instance_family in families:
            return []
        return [f"savings_plan.instance_family: {plan.instance_family} is not a family of "
                f"the fleet ({', '.join(families)}): the plan would cover none of its "
                "instances; name one of them, or remove it for a universal plan"]

    @property
    def bucket_name_prefix(self) -> str:
        """What every bucket name starts with: `storage.buckets.bucket_prefix`, else
        `<cluster name>-<environment>` (then `-<purpose>` and the global suffix)."""
        return self.storage.buckets.bucket_prefix or f"{self.name}-{self.environment}"

    @property
    def bucket_purposes(self) -> tuple[BucketPurpose, ...]:
        """The buckets the stack creates: `storage.buckets.purposes`, else the layout's
        default purposes."""
        purposes = self.storage.buckets.purposes
        return self.default_bucket_purposes if purposes is None else tuple(purposes)

    @property
    def bucket_base_names(self) -> dict[str, str]:
        """Purpose -> `<bucket_name_prefix>-<purpose>`, each bucket's name before the global
        suffix."""
        return {purpose: f"{self.bucket_name_prefix}-{purpose}"
                for purpose in self.bucket_purposes}

    def bucket_names(self, global_suffix: str | None) -> dict[str, str]:
        """Purpose -> the cloud name of each bucket the stack creates, with `global_suffix`
        (the resolved one, resolved_suffix) and shortened as every unique name is
        (gpu_infra_facts.naming.fit_name)."""
        return {purpose: fit_name(BUCKET, base, global_suffix)
                for purpose, base in self.bucket_base_names.items()}

    def resolved_suffix(self, stack_name: str) -> str | None:
        """What `naming.global_suffix` stands for in the Pulumi stack `stack_name` (None:
        no suffix)."""
        return resolve_suffix(self.naming.global_suffix, stack_name=stack_name,
                              region=self.region, cluster=self.name)

    def grid_package_problem(self, global_suffix: str | None) -> str | None:
        """What is wrong with `fleet.driver.grid_package` when its bucket is none the nodes'
        role can read: the role reads the stack's own buckets (names with `global_suffix`),
        and the object it is granted with `grid_package_grant`; None when nothing is."""
        driver = getattr(getattr(self, "fleet", None), "driver", None)
        if driver is None or driver.grid_package_grant:
            return None
        match = OSS_URL.match(driver.grid_package or "")
        if match is None:
            return None
        names = sorted(self.bucket_names(global_suffix).values())
        if match["bucket"] in names:
            return None
        return (f"bucket {match['bucket']} is not one of this stack's buckets "
                f"({', '.join(names) or 'it creates none'}), the only ones its nodes' role "
                "can read; put the package in one of them, or set "
                "fleet.driver.grid_package_grant: true to grant the role read on this object "
                "(a bucket of this account, in the stack's region)")

    def _backup_bucket_problems(self) -> list[str]:
        """`storage.backup.buckets` only names buckets the stack creates (Cloud Backup binds
        to a bucket by name: one the stack lacks is no backup at all)."""
        created = self.bucket_purposes
        return [f"storage.backup.buckets[{index}]: {bucket} is not a bucket this stack "
                f"creates (it creates {', '.join(created) or 'none'}); add it to "
                "storage.buckets.purposes, or back up only what exists"
                for index, bucket in enumerate(self.storage.backup.buckets)
                if bucket not in created]

    def _declared_type_problems(self) -> list[str]:
        """Declared types: well-formed names the catalog does not list, known regions."""
        problems = []
        for name, declared in self.instance_types.items():
            path = f"instance_types.{shorten(name, 40)}"
            if not re.match(catalog.TYPE_PATTERN, name):
                problems.append(f"{path}: not an instance type name; write "
                                "ecs.<family>.<size>, e.g. ecs.gn9x-8x.48xlarge")
            elif len(name) > INSTANCE_TYPE_MAX_CHARS:
                problems.append(f"{path}: {len(name)} characters; at most "
                                f"{INSTANCE_TYPE_MAX_CHARS}")
            elif catalog.get(name) is not None:
                problems.append(f"{path}: the catalog lists it; remove the declaration (the "
                                "catalog's entry is used)")
            problems += [f"{path}.regions: unknown region {region!r}"
                         for region in declared.regions or () if region not in REGIONS]
        return problems


class PlatformChoice(ClusterBase):
    """A fleet layout that may run on ACK (`platform: ack` and its `ack` section)."""

    platform: Platform = "ecs"
    """ecs (GPU instances and scaling groups) or ack (node pools of a managed Kubernetes
    cluster, from the same `fleet` settings). Default ecs."""
    ack: AckConfig | None = None
    """The ACK cluster. Required with `platform: ack`, not allowed otherwise."""

    @model_validator(mode="before")
    @classmethod
    def _pods_on_ack(cls, data: Any) -> Any:
        """`network.pod_vswitches` defaults to true on ACK (Terway needs pod vSwitches)."""
        if isinstance(data, dict) and data.get("platform") == "ack":
            network = data.get("network")
            if isinstance(network, dict) and "pod_vswitches" not in network:
                data = {**data, "network": {**network, "pod_vswitches": True}}
        return data

    @property
    def on_ack(self) -> bool:
        """Whether the fleet runs on ACK."""
        return self.platform == "ack"

    @property
    def ack_settings(self) -> AckConfig:
        """The `ack` section (platform ack only)."""
        if self.ack is None:
            raise ValueError("ack: missing (platform ack)")
        return self.ack

    @property
    def control_plane_logs(self) -> bool:
        """Control-plane and audit logs to SLS (`ack.control_plane_logs`, else the profile's:
        on in prod)."""
        explicit = self.ack.control_plane_logs if self.ack else None
        return self.profile.control_plane_logs if explicit is None else explicit

    @property
    def registry_settings(self) -> RegistryConfig:
        """`registry`, else the deprecated `ack.registry`, else the defaults."""
        return self.registry or (self.ack.registry if self.ack else None) or RegistryConfig()

    @model_validator(mode="after")
    def _check_platform(self) -> PlatformChoice:
        problems: list[str] = []
        if self.platform == "ack" and self.ack is None:
            problems.append("ack: missing; platform ack needs at least "
                            "ack.kubernetes_version")
        if self.platform == "ecs" and self.ack is not None:
            problems.append("ack: only with platform: ack")
        if self.platform == "ack" and not self.network.pod_vswitches:
            problems.append("network.pod_vswitches: ACK's Terway needs pod vSwitches; "
                            "remove the setting or set true")
        if self.platform == "ecs" and self.network.pod_vswitches:
            problems.append("network.pod_vswitches: only with platform: ack")
        if self.registry is not None and self.ack is not None and self.ack.registry is not None:
            problems.append("ack.registry: the deprecated spelling of registry, which is set "
                            "too; keep only registry")
        if self.ack is not None:
            problems += self._ack_problems(self.ack)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _ack_problems(self, ack: AckConfig) -> list[str]:
        problems: list[str] = []
        if ack.public_api and self.profile.refuse_world_open:
            problems.append(f"ack.public_api: an internet API server is not allowed in "
                            f"{self.environment}; reach it from the VPC (VPN, CEN, bastion)")
        if ack.service_cidr.overlaps(self.network.vpc_cidr):
            problems.append(f"ack.service_cidr: {ack.service_cidr} overlaps vpc_cidr "
                            f"{self.network.vpc_cidr}; Services need their own range, e.g. "
                            "172.21.0.0/20")
        if self.network.existing_vpc_id:
            problems.append("network.existing_vpc_id: platform ack creates its pod vSwitches "
                            "in a VPC of its own (bring-your-own VPCs are ECS only)")
        return problems + self._ack_fleet_problems()

    def _ack_fleet_problems(self) -> list[str]:
        """What the layout's fleet cannot do on ACK (each layout adds its own)."""
        return []


class TrainingConfig(PlatformChoice):
    """A training cluster: GPU nodes close together in one zone (fixed nodes, and on spot
    capacity spot workers in a scaling group)."""

    layout: Literal["training"]
    workload: ClassVar[Workload] = Workload(
        uses=("training",), gpus_talk=True, placement="together")
    default_bucket_purposes: ClassVar[tuple[BucketPurpose, ...]] = (
        "datasets", "checkpoints", "models", "outputs")
    fleet: TrainingFleet
    """The GPU nodes. Required."""

    @model_validator(mode="after")
    def _check_spot_workers(self) -> TrainingConfig:
        if self.platform == "ecs" and self.fleet.spot_workers > 0 \
                and not self.storage.shared_fs.enabled:
            raise ValueError(
                "storage.shared_fs.enabled: false, but the spot workers of fleet.capacity spot "
                "find the running job and resume from its checkpoints on the shared file "
                "system (a replacement has nothing of the node it replaces); enable it, or "
                "use capacity on_demand or prepaid")
        return self

    def _ack_fleet_problems(self) -> list[str]:
        fleet = self.fleet
        problems = [f"fleet.{field}: ECS only (ACK sets up its nodes); remove it"
                    for field in ("image", "jumbo_frames", "push_user_data", "scale_in_from")
                    if field in fleet.model_fields_set]
        if fleet.capacity == "prepaid":
            problems += choice_problems("fleet.prepaid_period", fleet.prepaid_period,
                                        ACK_PREPAID_MONTHS, "months, on an ACK node pool")
        if fleet.capacity == "prepaid" and fleet.prepaid_period_unit != "Month":
            problems.append("fleet.prepaid_period_unit: ACK node pools are prepaid by the "
                            "Month")
        return problems + _kept_disk_problems(self.storage)


class InferenceConfig(PlatformChoice):
    """An online inference service: an auto-scaling GPU fleet across zones behind a load
    balancer."""

    layout: Literal["inference"]
    workload: ClassVar[Workload] = Workload(uses=("inference",), placement="spread")
    default_bucket_purposes: ClassVar[tuple[BucketPurpose, ...]] = ("models",)
    fleet: ScalingFleet
    """The scaling GPU fleet. Required."""
    load_balancer: LoadBalancerConfig = LoadBalancerConfig()
    """The load balancer in front of the fleet. Default: an intranet NLB. ECS only: on ACK
    the Service in front of the model servers is the job layer's."""
    serving: ServingConfig | None = None
    """The model server the stack runs: on ACK on its GPU pool, with an NLB Service and an
    autoscaler; on ECS a unit on every node of the fleet, behind `load_balancer`, whose
    health checks it answers. Default none: the stack installs no server."""

    @model_validator(mode="after")
    def _check_serving(self) -> InferenceConfig:
        serving = self.serving
        if serving is None:
            return self
        problems: list[str] = []
        if serving.image is None and not self.registry_settings.repositories:
            problems.append("serving.image: missing; registry lists no repository to "
                            "take the server image from; give one, e.g. "
                            "vllm/vllm-openai:v0.6.3 mirrored into the registry")
        if not self.security.service_ports:
            problems.append("security.service_ports: empty; serving needs the port the "
                            "server listens on, e.g. [8000]")
        if serving.model is not None and "models" not in self.bucket_purposes:
            problems.append("serving.model: the stack has no models bucket to take it from; "
                            "add models to storage.buckets.purposes")
        problems += self._ack_serving_problems(serving) if self.on_ack \
            else self._ecs_serving_problems(serving)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _ecs_serving_problems(self, serving: ServingConfig) -> list[str]:
        """The unit on every ECS node: one server per node with every GPU, the fleet's sizes,
        and one health check path (the server's)."""
        problems = serving.ecs_problems()
        if self.storage.buckets.purposes == [] and serving.model is None:
            problems.append("storage.buckets.purposes: empty; on ECS the model server's unit "
                            "comes with the node tools, kept in one of the stack's buckets: "
                            "list at least one, e.g. [models]")
        check_path = self.load_balancer.health_check_path
        if check_path is not None and check_path != serving.readiness_path:
            problems.append(f"load_balancer.health_check_path: {check_path} is not "
                            f"serving.readiness_path ({serving.readiness_path}); the load "
                            "balancer checks the server: remove it")
        return problems

    def _ack_serving_problems(self, serving: ServingConfig) -> list[str]:
        """The Deployment's GPUs and replica bounds."""
        problems: list[str] = []
        smallest = min(self.gpu_types.gpus_per_node(name)
                       for name in self.fleet.instance_types)
        if serving.gpus_per_pod is not None and serving.gpus_per_pod > smallest:
            problems.append(f"serving.gpus_per_pod: {serving.gpus_per_pod} GPUs do not fit "
                            f"the fleet's smallest instance type ({smallest} GPUs); allowed "
                            f"1 to {smallest}")
        low, high = self.serving_replicas
        if low > high:
            problems.append(f"serving.min_replicas: {low} is above max_replicas ({high})")
        return problems

    @property
    def serving_image(self) -> str:
        """The model server's image: `serving.image`, else default_image ("" without
        `serving`)."""
        if self.serving is None:
            return ""
        return self.serving.image or self.default_image or ""

    @property
    def health_check_path(self) -> str | None:
        """The load balancer's HTTP health check path: the server's readiness path where the
        stack runs one (`serving`), else `load_balancer.health_check_path` (None: a TCP
        check)."""
        if self.serving is not None and not self.on_ack:
            return self.serving.readiness_path
        return self.load_balancer.health_check_path

    @property
    def alb_access_logs(self) -> bool:
        """Whether the ALB writes access logs (`load_balancer.access_logs`, default: the
        environment's profile, on in prod); never for an NLB."""
        balancer = self.load_balancer
        if balancer.kind != "alb":
            return False
        explicit = balancer.access_logs
        return self.profile.bucket_logging if explicit is None else explicit

    @model_validator(mode="after")
    def _check_access_logs(self) -> InferenceConfig:
        balancer, field = self.load_balancer, "load_balancer.access_logs"
        problems = []
        if balancer.kind == "nlb" and balancer.access_logs:
            problems.append(f"{field}: an NLB writes no access log (ALB only); set "
                            "load_balancer.kind: alb or remove access_logs")
        elif balancer.kind == "alb" and balancer.access_logs is False \
                and self.profile.bucket_logging:
            problems.append(f"{field}: false; {self.environment} keeps the access logs of its "
                            "load balancers (policy rule prod-access-logs); remove it")
        elif self.alb_access_logs and not self.logs.enabled:
            problems.append(f"{field}: the ALB's access logs go to the stack's log project, "
                            "and logs.enabled is false; enable logs"
                            + ("" if self.profile.bucket_logging else
                               " or set access_logs: false"))
        if problems:
            raise ValueError("\n".join(problems))
        return self

    @property
    def serving_replicas(self) -> tuple[int, int]:
        """The autoscaler's bounds: `serving.min_replicas` (default fleet.min_size, at least
        1) and `serving.max_replicas` (default fleet.max_size, at least the minimum)."""
        serving = self.serving or ServingConfig()
        low = serving.min_replicas or max(1, self.fleet.min_size)
        high = serving.max_replicas or max(low, self.fleet.max_size)
        return low, high

    def _ack_fleet_problems(self) -> list[str]:
        fleet = self.fleet
        problems = [f"fleet.{field}: ECS only (ESS scaling rules, hooks and refreshes; on ACK "
                    "the cluster autoscaler sizes the pool); remove it"
                    for field in ("image", "queue_scaling", "gpu_scaling", "target_tracking",
                                  "schedules",
                                  "refresh", "health_checks", "scale_in_mode",
                                  "max_instance_lifetime_days", "drain_seconds")
                    if field in fleet.model_fields_set]
        if fleet.desired_size == 0:
            problems.append("fleet.desired_size: 0 nodes and no autoscaling would give a pool "
                            "without GPU nodes; remove desired_size to let the autoscaler "
                            "size the pool between min_size and max_size, or set at least 1")
        if fleet.max_size == 0:
            problems.append("fleet.max_size: 0; an ACK GPU pool needs room for at least 1 "
                            "node")
        if "load_balancer" in self.model_fields_set:
            problems.append("load_balancer: ECS only; on ACK the model servers' Service is "
                            "the job layer's")
        return problems + _kept_disk_problems(self.storage)

    def _rule_quota_problems(self) -> list[str]:
        """Also (ECS): one listener per service port fits the load balancer's listener
        quota."""
        problems = super()._rule_quota_problems()
        if not self.on_ack and len(self.security.service_ports) > MAX_LISTENERS:
            problems.append(f"security.service_ports: {len(self.security.service_ports)} ports "
                            f"make as many listeners; a load balancer takes {MAX_LISTENERS} by "
                            "default (NLB quota nlb_quota_loadbalancer_listeners_num)")
        return problems

    def security_group_rules(self) -> dict[str, int]:
        """On ECS the cluster's group also admits each service port from the load balancer's
        group, and the load balancer's own group has one rule per service port and client
        CIDR and the Deny of everyone else (on ACK there is no load balancer of the
        stack's)."""
        ports, clients = len(self.security.service_ports), len(self.security.client_cidrs)
        rules = super().security_group_rules()
        if self.on_ack:
            return rules
        return {"cluster": rules["cluster"] + ports, "load balancer": ports * clients + 1}

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

    @property
    def stack_publishes_queue_metric(self) -> bool:
        """`fleet.queue_scaling.publisher` is `stack` (default external: only the model
        servers know their pending requests)."""
        queue = self.fleet.queue_scaling
        return queue is not None and queue.publisher == "stack"

    @model_validator(mode="after")
    def _check_service(self) -> InferenceConfig:
        problems: list[str] = []
        if len(self.network.zones) < 2:
            problems.append("network.zones: an inference service spans at least two zones "
                            "(the load balancer and failover need them)")
        most = ZONES_RANGE[1]
        if len(self.network.zones) > most:
            problems.append(f"network.zones: {len(self.network.zones)} zones; the load "
                            f"balancer maps at most {most}")
        problems += ess_disk_problems(self)
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
    workload: ClassVar[Workload] = Workload(uses=("rendering", "vgpu"))
    default_bucket_purposes: ClassVar[tuple[BucketPurpose, ...]] = ("datasets", "outputs")
    fleet: ScalingFleet
    """The scaling GPU fleet. Required."""
    worker: WorkerConfig | None = None
    """The render worker every node runs on the jobs of the stack's job queue. Default none:
    the nodes run no worker (you bring your own)."""

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

    @property
    def stack_publishes_queue_metric(self) -> bool:
        """`fleet.queue_scaling.publisher` is not `external` (default stack: the farm's
        jobs go through the stack's job queue)."""
        queue = self.fleet.queue_scaling
        return queue is not None and queue.publisher != "external"

    @model_validator(mode="after")
    def _check_health_checks(self) -> RenderingConfig:
        problems = ess_disk_problems(self)
        if "LOAD_BALANCER" in (self.fleet.health_checks or ()):
            problems.append("fleet.health_checks: LOAD_BALANCER needs a load balancer; a "
                            "render farm has none (use ECS)")
        problems += self._worker_problems()
        if problems:
            raise ValueError("\n".join(problems))
        return self


    def _worker_problems(self) -> list[str]:
        """A worker takes its jobs from the stack's queue, writes to the outputs bucket and
        hands jobs back through the drain."""
        worker = self.worker
        if worker is None:
            return []
        problems = []
        if not self.stack_publishes_queue_metric:
            problems.append("worker: takes its jobs from the stack's job queue; set "
                            "fleet.queue_scaling (publisher: stack, the default)")
        if self.fleet.drain_seconds is None:
            problems.append("worker: needs fleet.drain_seconds (how long a scale-in lets a "
                            "frame finish before it is handed back), e.g. 900")
        purposes = self.storage.buckets.purposes
        if purposes is not None and "outputs" not in purposes:
            problems.append("worker: writes its frames to the outputs bucket; add outputs to "
                            "storage.buckets.purposes")
        smallest = min(self.gpu_types.gpus_per_node(name) for name in self.fleet.instance_types)
        if worker.gpus is not None and worker.gpus > smallest:
            problems.append(f"worker.gpus: {worker.gpus} GPUs do not fit the fleet's smallest "
                            f"instance type ({smallest} GPUs); allowed 1 to {smallest}")
        return problems + self._registry_image_problems("worker.image", worker.image)

    def _registry_image_problems(self, field: str, image: str) -> list[str]:
        """An image at the stack's registry address names one of its repositories: the
        nodes log in there and pull, and its namespaces create no repository on push."""
        reference = IMAGE_REFERENCE.fullmatch(image)
        if reference is None or reference["domain"] != self.registry_address:
            return []
        settings, namespace = self.registry_settings, self.registry_namespace
        listed = [f"{namespace}/{name}" for name in settings.repositories] + [
            f"{acr.mirror_namespace(namespace)}/{name}" for name in settings.mirrored]
        if reference["path"] in listed:
            return []
        return [f"{field}: {reference['path']} is not a repository of the stack's registry "
                f"({', '.join(listed) or 'none'}); list it in registry.repositories "
                f"(namespace {namespace}): the registry makes no repository on a push"]


def ess_disk_problems(cluster: InferenceConfig | RenderingConfig) -> list[str]:
    """A scaling fleet's data disks are ESSD in its scaling configuration: each must fit
    ESS's cloud_essd size range at the size its (first) instance type gives it."""
    gpus = cluster.gpu_types.gpus_per_node(cluster.fleet.instance_types[0])
    largest = ESS_DATA_DISK_GIB[1]
    problems = []
    for index, disk in enumerate(cluster.storage.disks):
        size = disk.size_for(gpus)
        if size > largest:
            per_gpu = f" ({disk.size_gib} GiB x {gpus} GPUs)" if disk.per == "gpu" else ""
            problems.append(f"storage.disks[{index}].size_gib: {size} GiB{per_gpu} is above "
                            f"the {largest} GiB an ESS scaling configuration takes for a "
                            "cloud_essd data disk")
    return problems


class ImageConfig(ClusterCommon):
    """A GPU image baked with ECS Image Builder from the nodes' own install steps, for fleets
    that boot with the `preinstalled` driver route. Its network holds the build instance
    (a NAT gateway gives it the internet the NVIDIA repository needs)."""

    layout: Literal["image"]
    workload: ClassVar[Workload] = Workload(uses=("training", "inference"))
    image: ImageBuildConfig
    """What the image holds and how it is built. Required (at least `instance_type`)."""


def _kept_disk_problems(storage: StorageConfig) -> list[str]:
    """ACK pool disks are deleted with their node: no `keep`, no separate disks."""
    problems = [f"storage.disks[{index}].keep: an ACK node pool's data disks go with their "
                "node; keep data on the shared file system or in buckets"
                for index, disk in enumerate(storage.disks) if disk.keep]
    if storage.inline_disks:
        problems.append("storage.inline_disks: ECS only (ACK pool disks are always inline)")
    return problems


FleetCluster = TrainingConfig | InferenceConfig | RenderingConfig
"""A stack with a GPU fleet (every layout but image)."""
