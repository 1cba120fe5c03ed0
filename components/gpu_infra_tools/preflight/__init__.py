"""`gpu-infra preflight`: read-only checks of a stack's plan against the user's Alibaba Cloud
account (stock, quotas, spot, ACK versions and add-ons, images, KMS keys, bucket names,
alert contacts, DryRun), one Result per finding with the stack field it concerns.

A check the account cannot answer (an API refuses or is unreachable) reports a warning
saying what was not checked; refused credentials are an error on every check.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_infra_tools.alibaba.client import CREDENTIAL_CODES, AlibabaClient, ApiError
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.preflight.checks import CHECKS
from gpu_infra_tools.preflight.demand import read_demand
from gpu_infra_tools.preflight.results import LEVELS, Result

__all__ = ["CHECKS", "Report", "Result", "run_preflight"]


@dataclass(frozen=True)
class Report:
    """Every check's results for one stack."""

    stack: str
    region: str
    credentials: str
    """Where the credentials came from (never the keys)."""
    results: tuple[Result, ...]
    calls: tuple[str, ...]
    """The API actions called, in order."""

    def count(self, level: str) -> int:
        """How many results have `level`."""
        return sum(1 for r in self.results if r.level == level)

    @property
    def failed(self) -> bool:
        """Whether `pulumi up` would fail (any error)."""
        return self.count("error") > 0

    def summary(self) -> str:
        """`2 errors, 1 warning, 17 ok`."""
        return ", ".join(f"{n} {level}{'s' if n != 1 and level != 'ok' else ''}"
                         for level in LEVELS for n in [self.count(level)])

    def render_text(self) -> str:
        """One line per result, errors first, then the summary."""
        ordered = sorted(self.results, key=lambda r: LEVELS.index(r.level))
        return "\n".join([f"preflight of {self.stack} in {self.region} (credentials: "
                          f"{self.credentials})", *(r.line() for r in ordered),
                          self.summary()]) + "\n"

    def to_json(self) -> dict[str, object]:
        """The report as a JSON document."""
        return {"stack": self.stack, "region": self.region, "credentials": self.credentials,
                "failed": self.failed,
                "summary": {level: self.count(level) for level in LEVELS},
                "results": [r.to_json() for r in self.results], "calls": list(self.calls)}


def run_preflight(plan: Plan, client: AlibabaClient, credentials: str,
                  only: tuple[str, ...] = ()) -> Report:
    """Run the checks named in `only` (default all, CHECKS order) of `plan` with `client`."""
    demand = read_demand(plan)
    lookup = plan.cluster.gpu_types
    results: list[Result] = []
    for name, check in CHECKS.items():
        if only and name not in only:
            continue
        found: list[Result] = []
        try:
            found.extend(check(client, demand, lookup))
        except ApiError as error:
            found.append(_not_checked(name, error))
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            found.append(Result(name, "warning", "gpu-infra:cluster",
                                f"not checked: an answer of unexpected shape "
                                f"({error.__class__.__name__}: {error})"))
        results.extend(found)
    return Report(demand.stack, demand.region, credentials, tuple(results),
                  tuple(client.calls))


def _not_checked(name: str, error: ApiError) -> Result:
    path = "gpu-infra:cluster"
    if error.code in CREDENTIAL_CODES:
        return Result(name, "error", path, f"the account refused the credentials: {error}")
    return Result(name, "warning", path, f"not checked: {error}")
