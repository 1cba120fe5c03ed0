"""The shape of a policy rule, shared by the CrossGuard pack, the offline plan and the tests.

A rule is a plain function over what a plan would create. It never imports Pulumi, so the
same function runs under CrossGuard, in `gpu-infra plan` and in pytest.

Properties are wire-form dicts (camelCase), as the engine sends them. Two conventions:
- an absent property means the provider default (documented per rule);
- an unknown property (preview: an output not known yet, `is_unknown`) is never reported as a
  violation of a fact we cannot know: the check that needs it is skipped. The one exception
  is a value whose mere presence is the violation (e.g. a password that is set but unknown).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from gpu_infra_facts.workload import Demand, Placement

Severity = Literal["low", "medium", "high", "critical"]
EnforcementLevel = Literal["advisory", "mandatory", "disabled"]
ENFORCEMENT_LEVELS: tuple[EnforcementLevel, ...] = ("advisory", "mandatory", "disabled")
"""Levels a rule may run at; `remediate` is not offered (no rule rewrites resources)."""
Category = Literal["security", "reliability", "cost", "gpu"]
Concern = Literal["network exposure", "transport security", "identity", "data", "secrets",
                  "audit and logs", "kubernetes and registries", "nodes", "coverage",
                  "reliability", "cost", "gpu"]
"""What a rule judges: the reviewer's question it answers (policies/README.md, Levels)."""
CONCERNS: tuple[Concern, ...] = ("network exposure", "transport security", "identity", "data",
                                 "secrets", "audit and logs", "kubernetes and registries",
                                 "nodes", "coverage", "reliability", "cost", "gpu")
UNKNOWN_SENTINELS = frozenset({
    "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string (also what pulumi.runtime.rpc.UNKNOWN is)
    "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
    "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
})
"""The values Pulumi sends for properties not known during preview (pulumi_policy.proxy)."""
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def is_unknown(value: Any) -> bool:
    """True for a value not known until the resource is created."""
    return isinstance(value, str) and value in UNKNOWN_SENTINELS


def contains_unknown(value: Any) -> bool:
    """True if `value` or anything nested in it is unknown."""
    if isinstance(value, Mapping):
        return any(contains_unknown(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_unknown(item) for item in value)
    return is_unknown(value)


@dataclass(frozen=True)
class Resource:
    """One resource as a rule sees it."""

    type: str
    """Type token, e.g. alicloud:ecs/instance:Instance."""
    props: Mapping[str, Any]
    """Inputs in wire form (camelCase); unknowns are UNKNOWN sentinels."""
    name: str = ""
    urn: str = ""
    protect: bool = False
    """The `protect` resource option."""
    id: str | None = None
    """The id, when known (offline plan: the fake cloud's id; CrossGuard: never)."""
    dependencies: tuple[str, ...] = ()
    """URNs this resource depends on (including property dependencies)."""

    def tags(self) -> Mapping[str, Any]:
        """The resource's tags ({} if absent or unknown)."""
        tags = self.props.get("tags")
        return tags if isinstance(tags, Mapping) else {}

    def refers_to(self, target: Resource, value: Any, *keys: str) -> bool:
        """True if `value` (e.g. an id input) points at `target`: by dependency on its URN,
        by its id, or by one of its inputs `keys` (e.g. a bucket's name)."""
        if target.urn and target.urn in self.dependencies:
            return True
        if value is None or is_unknown(value):
            return False
        candidates = [target.id, *(target.props.get(key) for key in keys)]
        return any(value == candidate for candidate in candidates if candidate is not None)


@dataclass(frozen=True)
class Context:
    """What a rule may know beyond the resource: the stack and injected lookups."""

    environment: str | None = None
    """The stack's environment (dev, staging, prod), when known."""
    demands: Callable[[str], frozenset[Demand]] | None = None
    """Environment -> what it demands of resources: gpu_infra's environment profile
    (schema.environment.policy_demands), passed in by the pack and the plan. None: no
    environment demands anything."""
    catalog: Callable[[str], frozenset[str] | None] | None = None
    """Instance type -> the layouts it suits, or None if not in the GPU catalog.
    None: no catalog available, catalog rules do not run."""
    placement: Callable[[str], Placement | None] | None = None
    """Layout -> how it places its nodes, or None if it leaves that open: gpu_infra's layout
    registry (schema.registry.layout_placement), passed in by the pack and the plan. None:
    no layout asks for a placement."""
    tagged_environment: str | None = None
    """The environment the stack's tagged resources agree on (stack_environment): what a
    resource with neither an Environment tag nor a known stack environment is judged by
    (demanded_by); never a rule's level, which follows the stack's environment only."""
    monthly_cost: float | None = None
    """Estimated monthly cost of the stack (the offline plan's estimate, gpu_infra_tools/cost);
    None under CrossGuard, which has none."""
    unpriced_gpus: Sequence[tuple[str, str]] = ()
    """(resource name, what it holds) of GPU instances whose price the estimate does not
    know, e.g. ("llm-gpu-pool", "4 on-demand instance(s) (32 GPUs) of ecs.gn8v-8x.48xlarge");
    empty under CrossGuard."""
    reservations_before: Mapping[str, float] | None = None
    """Reservation name -> the instances it held before this plan (the base of a change
    report; {} when the plan creates everything); None when unknown (CrossGuard), so no
    rule can tell a reservation bought now from one that exists."""

    def demanded_by(self, resource: Resource, demand: Demand) -> str | None:
        """The environment that demands `demand` of `resource`: its Environment tag's, else
        the stack's, else the one the stack's tagged resources agree on; None when none
        does."""
        for environment in (resource.tags().get("Environment"),
                            self.environment or self.tagged_environment):
            if isinstance(environment, str) and self.demands is not None \
                    and demand in self.demands(environment):
                return environment
        return None

    def waives(self, demand: Demand) -> bool:
        """True when the stack's environment is known and does not demand `demand` (dev,
        staging: the stack file may choose there what prod refuses). The stack's, not a
        resource's Environment tag, so that CrossGuard, whose policy has one level for the
        whole stack, and the offline plan agree. False with no environment or lookup."""
        return self.environment is not None and self.demands is not None \
            and demand not in self.demands(self.environment)

    def placed(self, resource: Resource, placement: Placement) -> str | None:
        """The layout (the resource's Layout tag) that places its nodes `placement`; None
        when the resource has no such layout."""
        layout = resource.tags().get("Layout")
        if isinstance(layout, str) and self.placement is not None \
                and self.placement(layout) == placement:
            return layout
        return None


def stack_environment(resources: Sequence[Resource]) -> str | None:
    """The environment a stack's resources agree on: the one `Environment` tag value every
    tagged resource carries (None when none is tagged or they differ). What a resource that
    carries no tags (a log store, a Kubernetes object) takes when nothing else names the
    stack's environment."""
    found = {r.tags().get("Environment") for r in resources} - {None}
    (only,) = found if len(found) == 1 else (None,)
    return only if isinstance(only, str) else None


ResourceCheck = Callable[[Resource, Mapping[str, Any], Context], Iterable[str]]
"""(resource, thresholds, context) -> violation messages."""
StackCheck = Callable[[Sequence[Resource], Mapping[str, Any], Context],
                      Iterable[tuple[Resource | None, str]]]
"""(all resources, thresholds, context) -> (offending resource or None, message)."""


@dataclass(frozen=True)
class RuleInfo:
    """What every policy rule has besides its check: name, metadata, thresholds."""

    name: str
    description: str
    category: Category
    severity: Severity
    remediation: str
    _: KW_ONLY
    concern: Concern
    reviews: frozenset[str]
    """Type tokens the rule looks at: what `gpu-infra policy coverage` counts as reviewed
    (empty: the rule judges the stack as a whole, e.g. its cost)."""
    enforcement: EnforcementLevel | None = None
    """Default level; None means mandatory for security rules, advisory otherwise."""
    schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """JSON schema of each threshold (CrossGuard PolicyConfigSchema properties)."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Threshold values used when the config does not set them."""
    note: str = ""
    """Why a rule is off by default, if it is."""
    mandatory_where: Demand | None = None
    """What the environment demands for the rule to be mandatory (e.g. `private_api`, which
    prod demands): where the environment demands none of it (Context.waives), a mandatory
    default level is advisory, so a choice the stack file may make there stays visible
    without blocking. A level set in the policy config holds everywhere. None: one level."""

    @property
    def default_enforcement(self) -> EnforcementLevel:
        """The level the rule runs at unless the policy config says otherwise."""
        if self.enforcement is not None:
            return self.enforcement
        return "mandatory" if self.category == "security" else "advisory"

    def level_in(self, context: Context, level: EnforcementLevel) -> EnforcementLevel:
        """`level` (the default or a budget's, not a configured one) in `context`'s stack:
        advisory instead of mandatory where the environment waives `mandatory_where`."""
        if level == "mandatory" and self.mandatory_where is not None \
                and context.waives(self.mandatory_where):
            return "advisory"
        return level


@dataclass(frozen=True)
class ResourceRule(RuleInfo):
    """A rule that judges one resource at a time (CrossGuard ResourceValidationPolicy)."""

    check: ResourceCheck

    def violations(self, resources: Sequence[Resource], thresholds: Mapping[str, Any],
                   context: Context) -> Iterator[tuple[Resource | None, str]]:
        """(resource, message) for every violation among `resources`."""
        for resource in resources:
            for message in self.check(resource, thresholds, context):
                yield resource, message


@dataclass(frozen=True)
class StackRule(RuleInfo):
    """A rule over all resources at once (CrossGuard StackValidationPolicy)."""

    check: StackCheck

    def violations(self, resources: Sequence[Resource], thresholds: Mapping[str, Any],
                   context: Context) -> Iterator[tuple[Resource | None, str]]:
        """(offending resource or None, message) for every violation."""
        yield from self.check(resources, thresholds, context)


Rule = ResourceRule | StackRule
"""A policy rule: one of the two kinds."""


ALL_PORTS = (1, 65535)


def port_range(value: Any) -> tuple[int, int] | None:
    """A port or port range in any spelling the engine passes on: `"22/22"` and `"22"` and
    22 (an integer or float the SDK does not convert) -> (22, 22); `"-1/-1"`, -1 and
    absent (the provider default, `-1/-1`) -> all ports; None if unknown or not a port."""
    if value is None:
        return ALL_PORTS
    if isinstance(value, bool) or is_unknown(value):
        return None
    if isinstance(value, (int, float)):
        value = f"{int(value)}/{int(value)}" if float(value).is_integer() else ""
    if not isinstance(value, str):
        return None
    low, _, high = value.strip().partition("/")
    try:
        first, last = int(low), int(high or low)
    except ValueError:
        return None
    if (first, last) == (-1, -1):
        return ALL_PORTS
    return (first, last) if 0 <= first <= last <= 65535 else None


def as_list(value: Any) -> list[Any]:
    """A list property as a list ([] if absent or unknown)."""
    return list(value) if isinstance(value, (list, tuple)) else []


def number(value: Any) -> float | None:
    """A numeric property as a float (None if absent, unknown or not a number)."""
    if isinstance(value, bool) or is_unknown(value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


PORT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 65535}
"""A TCP/UDP port in a policy config: a whole number from 1 to 65535 (not 443.5, not 1e308)."""
