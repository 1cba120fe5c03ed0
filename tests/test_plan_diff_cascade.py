"""The diff replaces a resource with another it is `replaceWith` or `deletedWith` (the
engine's step generator does: pulumi pkg/resource/deploy/step_generator.go `diff`), and a
deleted resource whose `deletedWith` goes too goes with it (Pulumi calls no Delete)."""

from __future__ import annotations

from typing import Any

from gpu_infra_tools.plan.diff import ResourceChange, diff_records

STORE = "urn:pulumi:s::p::alicloud:log/store:Store::logs-bootstrap"
INDEX = "urn:pulumi:s::p::alicloud:log/storeIndex:StoreIndex::logs-bootstrap-index"
VIEW = "urn:pulumi:s::p::alicloud:log/storeIndex:StoreIndex::logs-bootstrap-view"


def _store(encrypt: str | None = None) -> dict[str, Any]:
    inputs: dict[str, Any] = {"projectName": "p-logs", "logstoreName": "bootstrap"}
    if encrypt:
        inputs["encryptConf"] = {"enable": True, "encryptType": encrypt}
    return {"urn": STORE, "type": "alicloud:log/store:Store", "name": "logs-bootstrap",
            "custom": True, "id": "p-logs:bootstrap", "deleteBeforeReplace": True,
            "dependencies": [], "inputs": inputs}


def _index(urn: str = INDEX, *, replace_with: bool = True, deleted_with: bool = True,
           after: str = STORE) -> dict[str, Any]:
    record: dict[str, Any] = {
        "urn": urn, "type": "alicloud:log/storeIndex:StoreIndex",
        "name": urn.rpartition("::")[2], "custom": True, "id": "p-logs:bootstrap",
        "dependencies": [after], "inputs": {"project": "p-logs", "logstore": "bootstrap"}}
    if replace_with:
        record["replaceWith"] = [after]
    if deleted_with:
        record["deletedWith"] = after
    return record


def _by_urn(changes: list[ResourceChange]) -> dict[str, ResourceChange]:
    return {c.urn: c for c in changes}


def test_a_store_replaced_with_its_name_replaces_its_index():
    changes = _by_urn(diff_records([_store(), _index()], [_store("default"), _index()]))
    assert (changes[STORE].change, changes[STORE].because) == (
        "replace", ["encryptConf.encryptType"])
    index = changes[INDEX]
    assert (index.change, index.because, index.goes_with) == ("replace", ["replaceWith"], STORE)
    assert index.to_json()["goesWith"] == STORE


def test_without_the_options_the_index_stays_as_pulumi_kept_it():
    """Its inputs hold the store's name, not an id: nothing else cascades to it."""
    plain = _index(replace_with=False, deleted_with=False)
    changes = _by_urn(diff_records([_store(), plain], [_store("default"), plain]))
    assert changes[STORE].change == "replace"
    assert (changes[INDEX].change, changes[INDEX].goes_with) == ("same", None)


def test_deleted_with_alone_replaces_it_too():
    """The engine replaces a resource whose deletedWith target is replaced (pulumi #23818)."""
    index = _index(replace_with=False)
    changes = _by_urn(diff_records([_store(), index], [_store("default"), index]))
    assert (changes[INDEX].change, changes[INDEX].because) == ("replace", ["deletedWith"])


def test_the_cascade_goes_down_a_chain_and_keeps_the_own_causes():
    """A resource replaced with the index is replaced with it in turn; an own in-place
    change stays among the causes."""
    view = _index(VIEW, after=INDEX)
    edited = {**view, "inputs": {**view["inputs"], "note": "new"}}
    changes = _by_urn(diff_records([_store(), _index(), view],
                                   [_store("default"), _index(), edited]))
    assert changes[INDEX].change == "replace"
    assert (changes[VIEW].change, changes[VIEW].because, changes[VIEW].goes_with) == (
        "replace", ["replaceWith", "note"], INDEX)


def test_an_unchanged_store_leaves_its_index_alone():
    changes = _by_urn(diff_records([_store(), _index()], [_store(), _index()]))
    assert {c.change for c in changes.values()} == {"same"}
    assert changes[INDEX].goes_with is None


def test_a_deleted_store_takes_its_index_and_a_kept_one_does_not():
    """Removed from the stack together: the index goes with its store. Removed alone (the
    store stays): Pulumi deletes it itself."""
    both = _by_urn(diff_records([_store(), _index()], []))
    assert (both[INDEX].change, both[INDEX].goes_with) == ("delete", STORE)
    assert both[STORE].goes_with is None
    alone = _by_urn(diff_records([_store(), _index()], [_store()]))
    assert (alone[INDEX].change, alone[INDEX].goes_with) == ("delete", None)
