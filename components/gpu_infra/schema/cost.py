"""What the cost estimate needs beyond the plan: a savings plan the account holds."""

from __future__ import annotations

from pydantic import Field

from gpu_infra.schema.base import StrictModel

FAMILY_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
"""An instance family as ECS names it (`gn7i`, `vgn7i-vws`)."""


class SavingsPlan(StrictModel):
    """The part of an ECS savings plan the stack's pay-as-you-go GPU instances draw on, for
    the cost estimate. The stack does not buy it (pulumi-alicloud has no savings-plan
    resource): it is bought in the console or with ECS CreateSavingsPlan (plan type `ecs`
    for one instance family or `universal`, an hourly spend commitment, a term in years).
    Spot instances are left to pay their own price."""

    hourly_commitment_cny: float = Field(gt=0, le=1_000_000)
    """The commitment per hour this stack draws on (CreateSavingsPlan `CommittedAmount`,
    or the share of it left to this stack when several stacks share the plan); paid every
    hour, used or not. Required."""
    price_factor: float = Field(gt=0, lt=1)
    """The share of the pay-as-you-go price the plan charges for what it covers (1 minus
    the discount the purchase page shows for the family, term and payment option; Alibaba
    publishes no rate table). Required."""
    instance_family: str | None = Field(default=None, pattern=FAMILY_PATTERN)
    """The family of an `ecs` plan (it covers that family only), one the fleet uses; none:
    a `universal` plan, covering every pay-as-you-go instance. Default none."""
