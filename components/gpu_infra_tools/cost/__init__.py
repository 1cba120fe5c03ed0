"""Cost estimate of a plan: hourly and monthly cost per resource, per building block and per
stack, from the planned resources and the prices in prices.yaml (GPU prices: the catalog).

`estimate_plan(plan)` returns an Estimate; `infracost_document` writes estimates (and a
baseline) as Infracost JSON; `compare(a, b)` the difference between two; `render_text` /
`render_markdown` format one for people.
"""

from gpu_infra_tools.cost.compare import Comparison, compare
from gpu_infra_tools.cost.estimate import Assumptions, estimate, estimate_plan
from gpu_infra_tools.cost.infracost import CostProject, infracost_document
from gpu_infra_tools.cost.model import CostComponent, Estimate, GpuCapacity, ResourceCost
from gpu_infra_tools.cost.prices import PriceBook, price_book
from gpu_infra_tools.cost.report import render_markdown, render_text

__all__ = ["Assumptions", "Comparison", "CostComponent", "CostProject", "Estimate",
           "GpuCapacity", "PriceBook", "ResourceCost", "compare", "estimate", "estimate_plan",
           "infracost_document", "price_book", "render_markdown", "render_text"]
