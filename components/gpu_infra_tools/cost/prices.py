"""Typed access to prices.yaml: list prices per key, discount factors, free types, and the
types left unpriced with their reason.

`price_book()` loads the file once. Prices are indicative (each with region, date and
source); an unknown price is None, never 0.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpu_infra.catalog import read_data_file
from gpu_infra_facts.allowed import ReservedOffering

PRICES_FILE = Path(__file__).with_name("prices.yaml")
Unit = Literal["hour", "GiB-month", "IOPS-month", "month", "GB", "LCU-hour", "CU-hour",
               "CU"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(_Frozen):
    """One list price."""

    price: float | None = Field(ge=0)
    """In the book's currency per `unit`; None = unknown."""
    unit: Unit
    region: str
    date: str
    source: str
    unconfirmed: bool = False


class Factor(_Frozen):
    """A discount, as the fraction of the on-demand price paid."""

    value: float = Field(gt=0, le=1)
    source: str
    note: str


class Discounts(_Frozen):
    """The discounts the estimate applies to on-demand GPU prices."""

    spot_price_factor: Factor
    prepaid_month_factor: Factor
    prepaid_year_factor: Factor
    reserved_factor: dict[ReservedOffering, dict[int, float]]
    reserved_month_factor: Factor


class PriceBook(_Frozen):
    """Everything in prices.yaml, prices flattened to `section.key` names."""

    currency: str
    hours_per_month: int = Field(gt=0)
    sources: dict[str, str]
    prices: dict[str, Price]
    discounts: Discounts
    free: frozenset[str]
    unpriced: dict[str, str]
    """Types without a price model -> why (the estimate's note for them)."""

    def get(self, key: str) -> Price | None:
        """The price under `key` (e.g. `disk.cloud_essd.PL1`), or None if the book has no
        entry."""
        return self.prices.get(key)


SECTIONS = ("disk", "network", "storage", "messaging", "logging", "backup", "container",
            "security", "serverless")


@functools.cache
def price_book(path: Path = PRICES_FILE) -> PriceBook:
    """The price book in `path` (default prices.yaml next to this module)."""
    document = read_data_file(path)
    prices = {f"{section}.{key}": value for section in SECTIONS
              for key, value in document[section].items()}
    return PriceBook.model_validate({
        "currency": document["currency"], "hours_per_month": document["hours_per_month"],
        "sources": document["sources"], "prices": prices,
        "discounts": document["discounts"], "free": document["free"],
        "unpriced": document["unpriced"]})
