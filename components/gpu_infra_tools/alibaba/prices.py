"""Live instance prices from ECS DescribePrice, as the same records the catalog's dated
prices are (catalog.CatalogPrice: CNY per hour, region, date, source), per billing:
pay-as-you-go (PriceUnit=Hour), spot (SpotStrategy=SpotAsPriceGo, the price now) and a
one-month subscription (PriceUnit=Month, Period=1, per hour over the book's hours a month).

DescribePrice (ECS API reference, 2014-05-26) answers PriceInfo.Price.{OriginalPrice,
DiscountPrice, TradePrice, Currency, DetailInfos.DetailInfo[].{Resource, OriginalPrice,
TradePrice}}; the instance's own share is the DetailInfo whose Resource is `instanceType`
(the total also holds the system disk). `trade` (what this account pays, after its
discounts) or `list` (OriginalPrice, for the public price book).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from gpu_infra.catalog import CatalogPrice
from gpu_infra_tools.alibaba.client import AlibabaClient, ApiError

SOURCE = "DescribePrice"
CURRENCY = "CNY"
"""The book's currency; an account billed in another (the international site's USD) gets no
live price rather than a wrong one."""
Billing = Literal["on_demand", "spot", "month"]
BILLINGS: tuple[Billing, ...] = ("on_demand", "spot", "month")
PARAMETERS: dict[Billing, dict[str, str | int]] = {
    "on_demand": {"PriceUnit": "Hour"},
    "spot": {"PriceUnit": "Hour", "SpotStrategy": "SpotAsPriceGo"},
    "month": {"PriceUnit": "Month", "Period": 1},
}


@dataclass(frozen=True)
class LivePrices:
    """Prices read from the account for one region, by billing and instance type."""

    region: str
    prices: Mapping[Billing, Mapping[str, CatalogPrice]]
    missing: Mapping[str, str] = field(default_factory=dict)
    """`<instance type> (<billing>)` -> why it has no price (the API's error code)."""

    def get(self, billing: Billing, instance_type: str) -> CatalogPrice | None:
        """The live price of `instance_type` for `billing`, or None."""
        return self.prices.get(billing, {}).get(instance_type)


def _amount(answer: Any, kind: Literal["trade", "list"]) -> float | None:
    price = (answer.get("PriceInfo") or {}).get("Price") or {}
    key = "TradePrice" if kind == "trade" else "OriginalPrice"
    details = (price.get("DetailInfos") or {}).get("DetailInfo") or []
    own = next((d for d in details if d.get("Resource") == "instanceType"), None)
    value = (own or price).get(key)
    return float(value) if value is not None else None


def read_live_prices(client: AlibabaClient, instance_types: Iterable[str],
                     hours_per_month: int | None = None, *,
                     kind: Literal["trade", "list"] = "trade",
                     billings: Iterable[Billing] = BILLINGS,
                     today: date | None = None) -> LivePrices:
    """DescribePrice for every type and billing in the client's region (`hours_per_month`,
    the price book's, turns a month's subscription into an hourly price; required with the
    `month` billing). A type the API refuses (not sold there, not sold as spot) is left out
    with the error code in `missing`; a refused account (keys, permission) raises
    ApiError."""
    billings = tuple(billings)
    if "month" in billings and not hours_per_month:
        raise ValueError("the month billing needs hours_per_month")
    kinds = list(dict.fromkeys(instance_types))
    stamp = (today or date.today()).isoformat()
    prices: dict[Billing, dict[str, CatalogPrice]] = {}
    missing: dict[str, str] = {}
    for billing in billings:
        for instance_type in kinds:
            try:
                answer = client.rpc("ecs", "DescribePrice", {
                    "RegionId": client.region, "ResourceType": "instance",
                    "InstanceType": instance_type, "Amount": 1, **PARAMETERS[billing]})
            except ApiError as error:
                if error.about_the_account:
                    raise
                missing[f"{instance_type} ({billing})"] = error.code
                continue
            amount = _amount(answer, kind)
            currency = ((answer.get("PriceInfo") or {}).get("Price") or {}).get("Currency")
            if currency not in (None, CURRENCY):
                missing[f"{instance_type} ({billing})"] = f"priced in {currency}, not CNY"
            elif amount is None or amount <= 0:
                missing[f"{instance_type} ({billing})"] = "no price in the answer"
            else:
                per_hour = amount / hours_per_month if billing == "month" and \
                    hours_per_month else amount
                prices.setdefault(billing, {})[instance_type] = CatalogPrice(
                    cny_per_hour=round(per_hour, 4), region=client.region, date=stamp,
                    source=f"{SOURCE} ({kind})")
    return LivePrices(client.region, prices, missing)
