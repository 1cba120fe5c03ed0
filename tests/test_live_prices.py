"""Live prices: DescribePrice read into the catalog's price records, the estimate with them
(`cost --live-prices`), and the maintainers' refresh of the dated catalog prices, all
against the loopback stand-in."""

from __future__ import annotations

import shutil
from datetime import date

import pytest

from gpu_infra import catalog
from gpu_infra.blocks.functions.rpc import Credentials
from gpu_infra.catalog import CatalogPrice
from gpu_infra_tools.alibaba.client import AlibabaClient, ApiError
from gpu_infra_tools.alibaba.prices import read_live_prices
from gpu_infra_tools.cli import main
from gpu_infra_tools.cli.refresh_prices import main as refresh
from gpu_infra_tools.cli.refresh_prices import read_back, rewrite_prices
from gpu_infra_tools.cost import Assumptions, estimate_plan

from .alibaba_standin import KEY_ID, SECRET, Account, serving
from .conftest import BASE_TRAINING, merged
from .shipped import shipped_plan

A10 = "ecs.gn7i-c8g1.2xlarge"
H20 = "ecs.gn8v-8x.48xlarge"


def _client(url: str, region: str = "cn-hangzhou", secret: str = SECRET) -> AlibabaClient:
    return AlibabaClient(Credentials(KEY_ID, secret), region, url)


def test_prices_per_billing_as_catalog_records():
    with serving(Account(prices={A10: 8.0})) as stand_in:
        live = read_live_prices(_client(stand_in.url), [A10, H20], 730,
                                today=date(2026, 12, 3))
    assert live.get("on_demand", A10) == CatalogPrice(
        cny_per_hour=8.0, region="cn-hangzhou", date="2026-12-03",
        source="DescribePrice (trade)")
    assert live.get("spot", A10).cny_per_hour == pytest.approx(2.4)  # the stand-in's 0.3
    assert live.get("month", A10).cny_per_hour == pytest.approx(8.0 * 0.8)  # per hour
    assert live.get("on_demand", H20) is None
    assert live.missing[f"{H20} (on_demand)"] == "InvalidInstanceType.ValueNotSupported"
    sent = [params for action, params in stand_in.requests if action == "DescribePrice"]
    assert {p["PriceUnit"] for p in sent} == {"Hour", "Month"}
    assert {p.get("SpotStrategy") for p in sent} == {None, "SpotAsPriceGo"}


def test_another_currency_is_no_price_and_a_month_needs_the_hours():
    with serving(Account(prices={A10: 1.1}, currency="USD")) as stand_in:
        live = read_live_prices(_client(stand_in.url), [A10], billings=("on_demand",))
        assert live.prices == {}
        assert live.missing == {f"{A10} (on_demand)": "priced in USD, not CNY"}
        with pytest.raises(ValueError, match="hours_per_month"):
            read_live_prices(_client(stand_in.url), [A10], billings=("month",))


def test_refused_keys_raise_rather_than_leave_everything_unpriced():
    with serving(Account(prices={A10: 8.0})) as stand_in, \
            pytest.raises(ApiError, match="SignatureDoesNotMatch"):
        read_live_prices(_client(stand_in.url, secret="wrong"), [A10], 730)


def test_the_estimate_uses_live_prices_for_on_demand_spot_and_subscription():
    plan = shipped_plan("inference-prod")  # A10/T4 fleet: on-demand base 2, spot above
    offline = estimate_plan(plan)
    with serving(Account(prices={A10: 20.0})) as stand_in:
        live = read_live_prices(_client(stand_in.url), [A10], 730)
    priced = estimate_plan(plan, Assumptions(live=live))
    fleet = next(r for r in priced.resources if r.gpu)
    compute = {c.name: c.price for c in fleet.components if c.name.startswith("Compute")}
    assert compute == {f"Compute (on-demand, {A10})": 20.0,
                       f"Compute (spot, live, {A10})": pytest.approx(6.0)}
    assert "DescribePrice" in fleet.note and "cn-hangzhou" in fleet.note
    assert priced.total_monthly_cost != offline.total_monthly_cost
    assert priced.assumptions["gpuPrices"].startswith("ECS DescribePrice in cn-hangzhou")
    assert offline.assumptions["gpuPrices"] == "gpu_infra/catalog/gpu_catalog.yaml"


@pytest.mark.parametrize(("capacity", "paid", "label"), [
    # the stand-in's spot: 0.3 of on-demand (the first node stays on demand, the other is a
    # spot worker)
    ("spot", {"on_demand": 20.0, "spot": 6.0}, "spot, live"),
    # its month: 730 h x 0.8 of on-demand, shown per hour
    ("prepaid", {"prepaid": 16.0}, "subscription"),
])
def test_fixed_nodes_pay_the_live_price_of_their_billing(plan_cluster, capacity, paid, label):
    plan = plan_cluster(merged(BASE_TRAINING, fleet={"capacity": capacity,
                                                      "interruptible": True},
                               storage={"shared_fs": {"enabled": True}}))
    with serving(Account(prices={A10: 20.0})) as stand_in:
        live = read_live_prices(_client(stand_in.url), [A10], 730)
    nodes = [r for r in estimate_plan(plan, Assumptions(live=live)).resources if r.gpu]
    assert {slot.capacity: slot.paid_hourly for r in nodes for slot in r.gpu
            if slot.count} == pytest.approx(paid)  # (the spot workers' empty on-demand slot)
    assert any(label in c.name for r in nodes for c in r.components)


@pytest.fixture
def keys(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ALIBABA_CLOUD_ECS_METADATA", raising=False)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
    monkeypatch.setattr("gpu_infra_tools.cli.cost.run_plan",
                        lambda path: shipped_plan(path.name[7:-5]))


def test_cost_live_prices_command(keys, capsys):
    with serving(Account(prices={A10: 20.0})) as stand_in:
        assert main(["cost", "inference-prod", "--live-prices", "--endpoint",
                     stand_in.url]) == 0
    captured = capsys.readouterr()
    assert "GPU prices: ECS DescribePrice in cn-hangzhou" in captured.out
    assert "no live price for ecs.gn7i-c16g1.4xlarge (on_demand)" in captured.err
    assert main(["cost", "inference-prod"]) == 0
    assert "GPU prices: the catalog's dated prices" in capsys.readouterr().out


def test_cost_live_prices_without_credentials_is_one_line(keys, monkeypatch, capsys):
    monkeypatch.delenv("ALIBABA_CLOUD_ACCESS_KEY_ID")
    assert main(["cost", "inference-prod", "--live-prices"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no credentials" in err


# The maintainers' refresh.

def test_rewrite_replaces_or_adds_a_price_and_keeps_the_rest():
    text = catalog.CATALOG_FILE.read_text(encoding="utf-8")
    unpriced = next(e.type for e in catalog.entries() if e.price is None)
    new = {A10: CatalogPrice(cny_per_hour=7.5, region="cn-beijing", date="2026-12-03",
                             source="DescribePrice (list)"),
           unpriced: CatalogPrice(cny_per_hour=99.0, region="cn-beijing", date="2026-12-03",
                                  source="DescribePrice (list)")}
    rewritten = rewrite_prices(text, new)
    after, before = read_back(rewritten), read_back(text)
    assert after[A10] == {"cny_per_hour": 7.5, "region": "cn-beijing", "date": "2026-12-03",
                          "source": "DescribePrice (list)"}
    assert after[unpriced]["cny_per_hour"] == 99.0
    assert {t: p for t, p in after.items() if t not in new} == \
        {t: p for t, p in before.items() if t not in new}
    assert rewritten.count("\n#") == text.count("\n#")  # comments kept


def test_refresh_writes_the_catalog_file(keys, tmp_path, capsys):
    target = tmp_path / "gpu_catalog.yaml"
    shutil.copy(catalog.CATALOG_FILE, target)
    with serving(Account(prices={A10: 9.1})) as stand_in:
        code = refresh(["--region", "cn-beijing", "--type", A10, "--type", H20,
                        "--catalog", str(target), "--endpoint", stand_in.url])
    assert code == 0
    assert read_back(target.read_text())[A10]["cny_per_hour"] == 9.1
    assert read_back(target.read_text())[H20] == read_back(
        catalog.CATALOG_FILE.read_text())[H20]
    err = capsys.readouterr().err
    assert f"kept as it was: {H20} (on_demand)" in err


def test_refresh_refuses_unknown_types_and_prices_nothing_quietly(keys, tmp_path, capsys):
    target = tmp_path / "gpu_catalog.yaml"
    shutil.copy(catalog.CATALOG_FILE, target)
    before = target.read_text()
    assert refresh(["--region", "cn-beijing", "--type", "ecs.nope.large",
                    "--catalog", str(target)]) == 2
    with serving(Account()) as stand_in:
        assert refresh(["--region", "cn-beijing", "--type", A10, "--catalog", str(target),
                        "--endpoint", stand_in.url]) == 1
    assert target.read_text() == before


def test_catalog_live_prices(keys, capsys):
    with serving(Account(prices={A10: 8.25})) as stand_in:
        assert main(["catalog", "--gpu-model", "A10", "--live-prices", "--region",
                     "cn-beijing", "--endpoint", stand_in.url]) == 0
    captured = capsys.readouterr()
    row = next(line for line in captured.out.splitlines() if line.startswith(A10 + " "))
    assert row.endswith("8.25 (live)")
    assert "this account's pay-as-you-go CNY/h in cn-beijing (DescribePrice" in captured.out
    assert "no live price for ecs.gn7i-c16g1.4xlarge (on_demand)" in captured.err
    assert main(["catalog", "--gpu-model", "A10"]) == 0
    assert "(live)" not in capsys.readouterr().out


@pytest.mark.parametrize("content, expect", [
    (bytes(range(256)), "can't decode byte 0x80"),
    ("families: [1, 2]\n", "not a GPU catalog (families: <family>: sizes: [{type: ...}])"),
    ("families: {gn7i: {sizes: [\n", "malformed YAML at line 2"),
])
def test_refresh_refuses_a_catalog_it_cannot_rewrite_before_asking_the_cloud(
        keys, tmp_path, capsys, content, expect):
    """The catalog is read and checked first: a request for prices that can never be
    written was a wasted round of DescribePrice (and `--catalog` took any path)."""
    target = tmp_path / "gpu_catalog.yaml"
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    with serving(Account(prices={A10: 9.1})) as stand_in:
        code = refresh(["--region", "cn-beijing", "--catalog", str(target), "--endpoint",
                        stand_in.url])
    err = capsys.readouterr().err
    assert (code, stand_in.requests, stand_in.metadata_hits) == (2, [], 0), err
    assert err.startswith(f"--catalog: {target}: ") and expect in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_refresh_refuses_an_unknown_region_before_asking_the_cloud(keys, capsys):
    with serving(Account(prices={A10: 9.1})) as stand_in:
        assert refresh(["--region", "mars-1", "--endpoint", stand_in.url]) == 2
        assert stand_in.requests == []
    assert capsys.readouterr().err == "--region: unknown region 'mars-1'\n"
