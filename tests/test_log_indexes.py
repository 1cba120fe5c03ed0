"""SLS log stores are indexed: SLS searches only an indexed store, so every store a stack's
NodeLogs makes has an index with full text and the fields the node-log page's queries name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu_infra_facts import types as t

from .conftest import BASE_RENDERING, merged

PAGE = Path(__file__).resolve().parents[1] / "docs" / "operations" / "node-logs.md"
FIELD = re.compile(r"__tag__:__\w+__|\b_[A-Z]+\b")


def _queried_fields() -> set[str]:
    """The fields the node-log page's search section queries."""
    text = PAGE.read_text()
    start = text.index("To find one node's bootstrap failure")
    return set(FIELD.findall(text[start:text.index("**On ACK**", start)]))


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    from gpu_infra_tools.plan.engine import run_plan

    from .conftest import write_stack
    cluster = merged(BASE_RENDERING, fleet={**BASE_RENDERING["fleet"], "queue_scaling": {
        "period_seconds": 120, "job_timeout_seconds": 3600}})
    return run_plan(write_stack(tmp_path_factory.mktemp("farm"), "farm", cluster))


def test_the_page_queries_the_host_and_journal_fields():
    assert _queried_fields() >= {"__tag__:__hostname__", "_HOSTNAME", "_TRANSPORT"}


def test_every_store_has_a_full_text_index_with_the_queried_fields(farm):
    stores = {s.inputs["logstoreName"]: s.name for s in farm.by_type(t.LOG_STORE)}
    assert set(stores) == {"bootstrap", "system", "functions"}
    indexes = {i.inputs["logstore"]: i for i in farm.by_type(t.SLS_STORE_INDEX)}
    assert set(indexes) == set(stores)
    for store, index in indexes.items():
        assert index.inputs["fullText"]["token"], store
        fields = {f["name"]: f for f in index.inputs["fieldSearches"]}
        assert set(fields) >= _queried_fields(), store
        assert {f["type"] for f in fields.values()} == {"text"}, store
        assert index.name == f"{stores[store]}-index"


def test_an_index_is_replaced_with_its_store_and_deleted_before_it(farm):
    """The index names its store by name, which a replacement keeps (encrypt_conf is
    ForceNew), and DeleteLogStore deletes the store's index: the plan records replaceWith,
    so the engine replaces the index with its store; no deletedWith, so Pulumi deletes the
    index itself first (a failed store deletion leaves no index the state has forgotten)."""
    stores = {s.inputs["logstoreName"]: s.urn for s in farm.by_type(t.LOG_STORE)}
    for index in farm.by_type(t.SLS_STORE_INDEX):
        store = stores[index.inputs["logstore"]]
        assert index.replace_with == [store], index.name
        assert index.deleted_with is None, index.name
        assert index.to_json()["replaceWith"] == [store]
        assert "deletedWith" not in index.to_json()
    assert not any(s.replace_with or s.deleted_with for s in farm.by_type(t.LOG_STORE))
