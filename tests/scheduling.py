"""How `make test` and `make test-fast` share the tests out over pytest-xdist's workers
(`--dist loadscope`, with the scheduler conftest.py puts in its place): the tests of one
module go to one worker, so a module's fixtures and the plans its tests share
(tests/shipped.py) are made once; and so do the modules of one group below, which share
set-up that a worker makes once for all of them. (xdist's own `xdist_group` mark cannot do
this under pytest 9: the suffix it puts on a test's id no longer sticks.)

The longest unit is handed out first, by the seconds each module took in a recorded run
(`tests/durations.json`, written by `make durations`): a long unit started last would keep
one worker busy while the others sit idle."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from gpu_infra_tools.files import write_text_atomically

GROUPS: dict[str, tuple[str, ...]] = {
    # the strict_mypy fixture: one mypy run over every program checked as a user's
    "strict-mypy": ("tests/test_public_api.py", "tests/test_examples.py"),
    # the same edited stacks, planned once (tests/shipped.py)
    "edits": ("tests/test_change_report.py", "tests/test_change_report_ack.py",
              "tests/test_update_preconditions.py"),
    # the stacks with optional features (test_update_semantics.OPTIONAL_FEATURES), planned once
    "optional-features": ("tests/test_update_semantics.py", "tests/test_policies_by_concern.py"),
}
"""Modules that go to one worker together, by the set-up they share."""

_GROUP_OF = {module: group for group, modules in GROUPS.items() for module in modules}

DURATIONS = Path(__file__).with_name("durations.json")
"""Seconds of wall time per test module in a recorded run of the whole suite, its tests
marked `slow` apart from the others: {module: {"fast": [tests, seconds], "slow": [...]}}."""

FAST_TIER = "not slow"
"""The mark expression of `make test-fast`: a run with it counts only a module's fast tests."""


def module_of(nodeid: str) -> str:
    """tests/test_x.py::test_y[a::b] -> tests/test_x.py"""
    return nodeid.split("::", 1)[0]


class UnitCosts:
    """Estimated seconds of a unit of work from the recorded durations: per module, its fast
    tests' seconds and, unless the run leaves them out, its slow tests'. A module not
    recorded counts the median seconds per test of the recorded ones, per test it has."""

    def __init__(self, durations: Mapping[str, Mapping[str, list[float]]], slow: bool):
        kinds = ("fast", "slow") if slow else ("fast",)
        self.modules = {module: sum(kinds_of[kind][1] for kind in kinds if kind in kinds_of)
                        for module, kinds_of in durations.items()}
        per_test = [seconds / tests for kinds_of in durations.values()
                    for kind in kinds for tests, seconds in [kinds_of.get(kind, [0, 0.0])]
                    if tests]
        self.per_test = statistics.median(per_test) if per_test else 1.0

    def __call__(self, nodeids: Iterable[str]) -> float:
        tests_of: dict[str, int] = {}
        for nodeid in nodeids:
            module = module_of(nodeid)
            tests_of[module] = tests_of.get(module, 0) + 1
        return sum(self.modules.get(module, self.per_test * tests)
                   for module, tests in tests_of.items())


def load_durations(path: Path) -> dict[str, Any]:
    """The recorded durations ({} where the file is missing)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def imports_first(modules: list[Path], worker: str, workers: int) -> list[Path]:
    """The test modules worker `gwK` of `workers` imports before collecting, so that on a
    fresh clone the workers rewrite different modules: from its share of the list on, round
    to its start (gw0 none: its collection imports them from the start)."""
    start = int(worker.removeprefix("gw")) * len(modules) // workers
    return modules[start:] + modules[:start] if start else []


class ModulesAndGroups(LoadScopeScheduling):
    """Work units: a group's modules, else a module; the longest (UnitCosts) handed out
    first."""

    def __init__(self, config: pytest.Config, log: Any = None):
        super().__init__(config, log)
        self.cost = UnitCosts(load_durations(DURATIONS),
                              slow=config.getoption("markexpr", "") != FAST_TIER)
        self.costs: dict[str, float] = {}

    def _cost_of(self, scope: str) -> float:
        if scope not in self.costs:
            self.costs[scope] = self.cost(self.workqueue[scope])
        return self.costs[scope]

    def _split_scope(self, nodeid: str) -> str:
        module = module_of(nodeid)
        return _GROUP_OF.get(module, module)

    def _assign_work_unit(self, node: Any) -> None:
        longest = max(self.workqueue, key=self._cost_of)
        self.workqueue.move_to_end(longest, last=False)
        super()._assign_work_unit(node)


class DurationRecorder:
    """Sums the seconds (set-up, call and tear-down) each module's tests took, its `slow`
    tests apart, and writes them into `path` at the end of a run that passed: the modules
    that ran replace their entries, modules whose file is gone are dropped."""

    def __init__(self, path: Path):
        self.path = path
        self.seen: dict[str, dict[str, set[str]]] = {}
        self.seconds: dict[str, dict[str, float]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        kind = "slow" if "slow" in report.keywords else "fast"
        module = module_of(report.nodeid)
        self.seen.setdefault(module, {}).setdefault(kind, set()).add(report.nodeid)
        spent = self.seconds.setdefault(module, {})
        spent[kind] = spent.get(kind, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus != pytest.ExitCode.OK:
            return
        root = session.config.rootpath
        table = {module: kinds for module, kinds in load_durations(self.path).items()
                 if (root / module).is_file()}
        for module, kinds in self.seen.items():
            table[module] = {kind: [len(nodeids), round(self.seconds[module][kind], 1)]
                             for kind, nodeids in sorted(kinds.items())}
        lines = [f"{json.dumps(module)}: {json.dumps(table[module])}" for module in sorted(table)]
        write_text_atomically(self.path, "{\n" + ",\n".join(lines) + "\n}\n")
