"""make test's workers get whole modules and whole groups of modules, the longest first
(tests/scheduling.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from . import scheduling
from .conftest import PROJECT_DIR
from .scheduling import (
    FAST_TIER,
    GROUPS,
    DurationRecorder,
    ModulesAndGroups,
    UnitCosts,
    imports_first,
    load_durations,
    module_of,
)


@pytest.mark.parametrize("nodeid, unit", [
    ("tests/test_docs.py::test_one", "tests/test_docs.py"),
    ("tests/test_docs.py::Tests::test_two[x-1]", "tests/test_docs.py"),
    ("tests/test_examples.py::test_three[a::b]", "strict-mypy"),
    ("tests/test_public_api.py::test_four", "strict-mypy"),
    ("tests/test_update_preconditions.py::test_five", "edits"),
])
def test_a_module_or_its_group_is_one_unit_of_work(nodeid, unit):
    assert ModulesAndGroups._split_scope(None, nodeid) == unit  # type: ignore[arg-type]


def test_every_grouped_module_exists_once():
    modules = [module for group in GROUPS.values() for module in group]
    assert len(set(modules)) == len(modules)
    assert [module for module in modules if not (PROJECT_DIR / module).is_file()] == []


class _Worker:
    """Records what the scheduler sends it (the indexes of the tests to run) into `sent`."""

    shutting_down = False

    def __init__(self, name: str, sent: list[tuple[_Worker, list[int]]]):
        self.gateway = SimpleNamespace(id=name)
        self.sent = sent

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append((self, indexes))

    def shutdown(self) -> None:
        self.shutting_down = True


def _handed_out(collection: list[str], durations: dict, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch, markexpr: str = "") -> list[str]:
    """The modules in the order two workers get them, as they finish what they got in the
    order they got it, with `durations` recorded."""
    monkeypatch.setattr(scheduling, "DURATIONS", tmp_path / "durations.json")
    scheduling.DURATIONS.write_text(json.dumps(durations))
    config = SimpleNamespace(getvalue=lambda name: ["2*popen"],
                             getoption=lambda name, default=None: markexpr,
                             option=SimpleNamespace(loadscopereorder=True))
    scheduler = ModulesAndGroups(config)  # type: ignore[arg-type]
    sent: list[tuple[_Worker, list[int]]] = []
    for name in ("gw0", "gw1"):
        worker = _Worker(name, sent)
        scheduler.add_node(worker)  # type: ignore[arg-type]
        scheduler.add_node_collection(worker, collection)  # type: ignore[arg-type]
    scheduler.schedule()
    done = 0
    while done < len(sent):
        worker, indexes = sent[done]
        for index in indexes:
            scheduler.mark_test_complete(worker, index)  # type: ignore[arg-type]
        done += 1
    return [module_of(collection[indexes[0]]) for _, indexes in sent]


RECORDED = {
    "tests/test_a.py": {"slow": [1, 100.0]},
    "tests/test_b.py": {"fast": [5, 1.0]},
    "tests/test_c.py": {"fast": [1, 2.0], "slow": [2, 48.0]},
}
COLLECTION = (["tests/test_a.py::t"] + [f"tests/test_b.py::t{n}" for n in range(5)]
              + [f"tests/test_c.py::t{n}" for n in range(3)]
              + ["tests/test_new.py::t1", "tests/test_new.py::t2"])


def test_the_longest_unit_is_handed_out_first(tmp_path, monkeypatch):
    """By recorded seconds, not by number of tests (which would hand out b, c, new, a); a
    module not recorded counts the median seconds per test (13 here: of a, b, c's fast and c's
    slow tests) per test."""
    assert _handed_out(COLLECTION, RECORDED, tmp_path, monkeypatch) == [
        "tests/test_a.py", "tests/test_c.py", "tests/test_new.py", "tests/test_b.py"]


def test_the_fast_tier_counts_only_fast_tests_seconds(tmp_path, monkeypatch):
    collection = [nodeid for nodeid in COLLECTION if "test_a.py" not in nodeid]
    costs = UnitCosts(RECORDED, slow=False)
    assert [costs([nodeid for nodeid in collection if module in nodeid])
            for module in ("test_b.py", "test_c.py", "test_new.py")] == [1.0, 2.0, 2 * 1.1]
    assert _handed_out(collection, RECORDED, tmp_path, monkeypatch, markexpr=FAST_TIER) == [
        "tests/test_new.py", "tests/test_c.py", "tests/test_b.py"]


def _report(nodeid: str, seconds: float, slow: bool = False) -> pytest.TestReport:
    return pytest.TestReport(nodeid, (nodeid, 1, "t"), {"slow": 1} if slow else {}, "passed",
                             None, "call", duration=seconds)


def test_a_passing_run_records_the_seconds_of_the_modules_it_ran(tmp_path):
    """Set-up, call and tear-down seconds add up per module and kind; modules that did not
    run keep their entry unless their file is gone; a failed run writes nothing."""
    (tmp_path / "tests").mkdir()
    for name in ("test_a.py", "test_kept.py"):
        (tmp_path / "tests" / name).touch()
    table = tmp_path / "durations.json"
    table.write_text(json.dumps({"tests/test_a.py": {"fast": [9, 9.0]},
                                 "tests/test_kept.py": {"fast": [1, 3.0]},
                                 "tests/test_gone.py": {"fast": [1, 5.0]}}))
    session = SimpleNamespace(config=SimpleNamespace(rootpath=tmp_path))
    recorder = DurationRecorder(table)
    for report in (_report("tests/test_a.py::t1", 1.25), _report("tests/test_a.py::t1", 0.5),
                   _report("tests/test_a.py::t2", 2.0, slow=True),
                   _report("tests/test_a.py::t3", 3.0, slow=True)):
        recorder.pytest_runtest_logreport(report)
    recorder.pytest_sessionfinish(session, pytest.ExitCode.TESTS_FAILED)  # type: ignore[arg-type]
    assert "test_gone" in table.read_text()
    recorder.pytest_sessionfinish(session, pytest.ExitCode.OK)  # type: ignore[arg-type]
    assert json.loads(table.read_text()) == {
        "tests/test_a.py": {"fast": [1, 1.8], "slow": [2, 5.0]},
        "tests/test_kept.py": {"fast": [1, 3.0]}}


def test_the_recorded_durations_are_read_by_the_scheduler():
    """tests/durations.json is what `make durations` writes: every entry a module's kinds."""
    recorded = load_durations(scheduling.DURATIONS)
    assert recorded, "tests/durations.json is missing: run `make durations`"
    assert {kind for kinds in recorded.values() for kind in kinds} <= {"fast", "slow"}
    assert UnitCosts(recorded, slow=True)(["tests/test_not_recorded.py::t"]) > 0


def test_each_worker_starts_its_imports_at_its_own_share_of_the_test_modules():
    """On a fresh clone each worker rewrites the modules from its start until it meets those
    another worker has rewritten; the first worker leaves its imports to the collection."""
    modules = [Path(f"tests/test_{n}.py") for n in range(7)]
    assert imports_first(modules, "gw0", 2) == []
    assert imports_first(modules, "gw1", 2) == modules[3:] + modules[:3]
    assert [imports_first(modules, f"gw{k}", 3)[0] for k in (1, 2)] == [modules[2], modules[4]]
    assert sorted(imports_first(modules, "gw2", 3)) == modules
