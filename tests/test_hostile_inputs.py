"""Hostile input over every command, in-process (fast): malformed and oversized YAML, policy
configs, I/O faults, clone's neighbours and overrides. See tests/hostile.py for what each case
checks; test_hostile_processes.py runs a representative subset as real processes."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from .hostile import (
    TRAINING,
    Case,
    billion_laughs,
    nested,
    replaced,
    run_in_process,
)

STACK = "{d}/Pulumi.bad.yaml"

HOSTILE_STACKS: dict[str, tuple[str | bytes, str]] = {
    # unreadable documents: no command, and no clone beside them, may go on
    "duplicate-key": (replaced(TRAINING, "      nodes: 1\n", "      nodes: 1\n      nodes: 1000\n"),
                      "23: config.gpu-infra:cluster.fleet.nodes: duplicate key (first at line "
                      "22); Pulumi refuses duplicate keys"),
    "duplicate-top-key": (TRAINING + "config: {}\n", "33: config: duplicate key (first at line 4)"),
    "nested-600": (nested(600), "Pulumi.bad.yaml:11: (document): brackets nested more than 32 "
                   "levels deep"),
    "block-nested-40": (replaced(TRAINING, "    tags:\n", "    tags_deep:\n" + "".join(
        " " * (6 + 2 * level) + f"k{level}:\n" for level in range(40)) + "    tags:\n"),
        ".yaml:41: config.gpu-infra:cluster.tags_deep.k0.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12"
        ".k13.k14.k15.k16.k17.k18.k19.k20.k21.k22.k23.k24.k25.k26.k27.k28: nested more than 32 "
        "levels deep"),
    "billion-laughs": (billion_laughs(), "values, counting what aliases expand to"),
    "binary-tag": (replaced(TRAINING, "nodes: 1\n", "nodes: !!binary aGVsbG8=\n"),
                   "config.gpu-infra:cluster.fleet.nodes: tag !!binary is not allowed"),
    "set-tag": (replaced(TRAINING, "    tags:\n", "    suppress: !!set {a: null}\n    tags:\n"),
                "config.gpu-infra:cluster.suppress: tag !!set is not allowed"),
    "python-tag": (replaced(TRAINING, "name: llm-train",
                            "name: !!python/object/apply:os.getpid []"),
                   "config.gpu-infra:cluster.name: tag !!python/object/apply:os.getpid is not "
                   "allowed"),
    "timestamp-tag": (replaced(TRAINING, "Owner: ml-platform", "Owner: !!timestamp 2026-01-01"),
                      "config.gpu-infra:cluster.tags.Owner: tag !!timestamp is not allowed"),
    "omap-tag": (replaced(TRAINING, "    tags:\n", "    tags: !!omap\n"),
                 "config.gpu-infra:cluster.tags: tag !!omap is not allowed"),
    "local-tag": (replaced(TRAINING, "name: llm-train", "name: !Ref llm-train"),
                  "config.gpu-infra:cluster.name: tag !Ref is not allowed"),
    "second-document": (TRAINING + "---\nconfig: {}\n", "(document): a second YAML document"),
    "not-utf8": (TRAINING.encode().replace(b"ml-platform\n", b"ml-\xff\xfeplatform\n"),
                 "is not UTF-8 text; stack files are UTF-8"),
    "integer-key": (replaced(TRAINING, "Owner: ml-platform", "1: ml-platform"),
                    "config.gpu-infra:cluster.tags.1: the key 1 is not a string"),
    "boolean-key": (replaced(TRAINING, "Owner: ml-platform", "true: ml-platform"),
                    "config.gpu-infra:cluster.tags.True: the key True is not a string"),
    "null-key": (replaced(TRAINING, "Owner: ml-platform", "~: ml-platform"),
                 "the key None is not a string"),
    "complex-key": (replaced(TRAINING, "Owner: ml-platform", "? [a, b]\n      : ml-platform"),
                    "config.gpu-infra:cluster.tags: a mapping key must be a plain string"),
    "undefined-alias": (replaced(TRAINING, "Owner: ml-platform", "Owner: *nowhere"),
                        "config.gpu-infra:cluster.tags.Owner: alias *nowhere names no anchor"),
    "over-256-KiB": (TRAINING + "#" * (300 * 1024) + "\n",
                     "larger than 262144 bytes, the most a stack file may have"),
    # readable documents, invalid stacks
    "200-kB-name": (replaced(TRAINING, "name: llm-train", "name: " + "x" * 200_000),
                    "gpu-infra:cluster.name: string should match pattern"),
    "tab-indent": (replaced(TRAINING, "    name: llm-train", "\tname: llm-train"),
                   "malformed YAML"),
    "nul-character": (replaced(TRAINING, "Owner: ml-platform", "Owner: ml\0platform"),
                      "malformed YAML: character U+0000 is not allowed (YAML takes printable "
                      "characters only)"),
    "bell-character": (replaced(TRAINING, "Owner: ml-platform", "Owner: ml\aplatform"),
                       "malformed YAML: character U+0007 is not allowed"),
    "empty-file": ("", "config: missing"),
    "config-a-list": ("config: [1, 2]\n", "config: missing"),
    "cluster-a-string": ("config:\n  alicloud:region: cn-hangzhou\n  gpu-infra:cluster: x\n",
                         "gpu-infra:cluster: must be a mapping, got str"),
    "nan-budget": (replaced(TRAINING, "monthly_budget_cny: 25000", "monthly_budget_cny: .nan"),
                   "gpu-infra:cluster.monthly_budget_cny: input should be a finite number"),
    "inf-budget": (replaced(TRAINING, "monthly_budget_cny: 25000", "monthly_budget_cny: -.inf"),
                   "gpu-infra:cluster.monthly_budget_cny: input should be a finite number"),
}
"""Stack files no command may accept: content, and the text stderr must contain."""

STACK_COMMANDS: dict[str, tuple[str, ...]] = {
    "validate": ("validate", STACK),
    "plan": ("plan", STACK),
    "plan-json": ("plan", STACK, "--json", "{d}/plan.json"),
    "cost": ("cost", STACK),
    "cost-compare": ("cost", "training-dev", "--compare", STACK),
    "clone-source": ("clone", STACK, "copy", "--stacks-dir", "{d}", "--name", "copy-one"),
    "clone-neighbour": ("clone", "{d}/source.yaml", "copy", "--stacks-dir", "{d}",
                        "--name", "copy-one"),
}
"""Every command that reads a stack file; clone also reads every neighbour in its
directory, so a hostile neighbour must stop it too."""


READABLE = ("200-kB-name", "nan-budget", "inf-budget")
"""Kinds whose cluster name and VPC CIDR can be read: clone may sit beside them."""
COMPARED = ("duplicate-key", "billion-laughs", "nested-600", "not-utf8")
NEIGHBOUR_PROBLEM = "{d}/Pulumi.bad.yaml: cannot read the cluster name and VPC CIDR the clone"


def _stack_cases() -> list[Case]:
    cases = []
    for kind, (content, expect) in HOSTILE_STACKS.items():
        for command, argv in STACK_COMMANDS.items():
            files: dict[str, str | bytes] = {"Pulumi.bad.yaml": content}
            if command == "cost-compare" and kind not in COMPARED:
                continue  # each compare plans training-dev first: a few kinds suffice
            if command == "clone-neighbour":
                if kind in READABLE:
                    continue
                files["source.yaml"] = TRAINING
                expect = NEIGHBOUR_PROBLEM
            cases.append(Case(f"yaml-{kind}", command, argv, files, expect=expect))
    return cases


POLICY = "{d}/policy.json"
HOSTILE_POLICY_CONFIGS: dict[str, tuple[str | bytes, str]] = {
    "nested-600": ('{"all": ' + "[" * 600 + "]" * 600 + "}",
                   "line 1: nested more than 16 levels deep"),
    "not-utf8": (b'{"all": "advisory\xff"}',
                 "byte 17 is not UTF-8 text; the file must be UTF-8 JSON"),
    "nan-threshold": ('{"monthly-budget": {"monthlyBudget": NaN}}',
                      "NaN is not a JSON number; thresholds are finite numbers"),
    "infinite-threshold": ('{"monthly-budget": {"monthlyBudget": -Infinity}}',
                           "-Infinity is not a JSON number"),
    "huge-threshold": ('{"monthly-budget": {"monthlyBudget": 1e999}}',
                       "monthly-budget.monthlyBudget: must be a number, got Infinity"),
    "duplicate-key": ('{"all": "advisory", "all": "disabled"}', '"all": duplicate key'),
    "over-1-MiB": ('{"all": "advisory"}' + " " * (1 << 20), "larger than 1048576 bytes"),
    "not-an-object": ("[1, 2]", "the file must hold a JSON object of rule names"),
    "bad-json": ('{"all": }', "line 1: invalid JSON"),
    "unknown-level": ('{"all": "loud"}', 'all: unknown enforcement level "loud"'),
}


def _policy_cases() -> list[Case]:
    return [Case(f"policy-{kind}", "plan", ("plan", "training-dev", "--policy-config", POLICY),
                 {"policy.json": content}, expect=expect)
            for kind, (content, expect) in HOSTILE_POLICY_CONFIGS.items()] + [
        Case("policy-missing", "plan", ("plan", "training-dev", "--policy-config", POLICY),
             expect="cannot read: No such file or directory"),
        Case("policy-directory", "plan", ("plan", "training-dev", "--policy-config", "{d}"),
             expect="cannot read: Is a directory"),
    ]


def _fail(module, function: str, code: int):
    """A fault: `module.<function>` fails with errno `code`."""
    def inject(monkeypatch: pytest.MonkeyPatch) -> None:
        def failing(*args, **kwargs):
            raise OSError(code, os.strerror(code))
        monkeypatch.setattr(module, function, failing)
    return inject


READ_ONLY_DISK = _fail(tempfile, "mkstemp", errno.EROFS)
UNWRITABLE_DIRECTORY = _fail(tempfile, "mkstemp", errno.EACCES)
FULL_DISK = _fail(os, "fsync", errno.ENOSPC)
"""The temporary file is created, then the disk is full when it is flushed."""


CLONE = ("clone", "{d}/source.yaml", "copy", "--stacks-dir", "{d}", "--name", "copy-one")
PLAN_JSON = ("plan", "training-dev", "--json", "{d}/plan.json")
IO_CASES = [
    Case("io", "plan-json-into-missing-directory",
         ("plan", "training-dev", "--json", "{d}/nowhere/plan.json"),
         expect="--json: {d}/nowhere/plan.json: the directory {d}/nowhere does not exist"),
    Case("io", "plan-json-into-a-directory", ("plan", "training-dev", "--json", "{d}"),
         expect="--json: {d}: is a directory; give a file name"),
    Case("io", "plan-json-read-only-disk", PLAN_JSON, {"plan.json": "old\n"},
         fault=READ_ONLY_DISK,
         expect="--json: {d}/plan.json: cannot write: Read-only file system"),
    Case("io", "plan-json-unwritable-directory", PLAN_JSON,
         fault=UNWRITABLE_DIRECTORY,
         expect="--json: {d}/plan.json: cannot write: Permission denied"),
    Case("io", "plan-json-full-disk", PLAN_JSON, {"plan.json": "old\n"},
         fault=FULL_DISK,
         expect="--json: {d}/plan.json: cannot write: No space left on device"),
    Case("io", "clone-read-only-disk", CLONE, {"Pulumi.other.yaml": TRAINING.replace(
         "llm-train", "other-one").replace("10.10.0.0/16", "10.20.0.0/16")},
         fault=READ_ONLY_DISK,
         expect="{d}/Pulumi.copy.yaml: cannot write: Read-only file system"),
    Case("io", "clone-full-disk", CLONE, fault=FULL_DISK,
         expect="{d}/Pulumi.copy.yaml: cannot write: No space left on device"),
    Case("io", "clone-unwritable-directory", CLONE, fault=UNWRITABLE_DIRECTORY,
         expect="{d}/Pulumi.copy.yaml: cannot write: Permission denied"),
    Case("io", "clone-into-missing-directory",
         ("clone", "{d}/source.yaml", "copy", "--stacks-dir", "{d}/nowhere", "--name", "copy-one"),
         expect="argument --stacks-dir: {d}/nowhere: no such directory"),
    Case("io", "clone-onto-a-directory", (*CLONE, "--force"),
         {"Pulumi.copy.yaml/keep": "x"},
         expect="{d}/Pulumi.copy.yaml: is a directory"),
    Case("io", "stack-file-is-a-directory", ("validate", "{d}/Pulumi.dir.yaml"),
         {"Pulumi.dir.yaml/keep": "x"}, expect="{d}/Pulumi.dir.yaml: not a regular file"),
]
"""Output that cannot be written: one line naming the file, exit 2, nothing left behind."""

SOURCE = ("clone", "{d}/source.yaml", "copy", "--stacks-dir", "{d}")
CLONE_CASES = [
    Case("clone", "set-empty-value", (*SOURCE, "--name", "copy-one", "--set", "fleet.nodes="),
         expect="--set fleet.nodes=: no VALUE; write null to remove the key"),
    Case("clone", "set-binary-value",
         (*SOURCE, "--name", "copy-one", "--set", "name=!!binary aGk="),
         expect="--set name=!!binary aGk=: VALUE:1: name: tag !!binary is not allowed"),
    Case("clone", "set-nested-value",
         (*SOURCE, "--name", "copy-one", "--set", "tags=" + "[" * 300 + "]" * 300),
         expect="VALUE:1: tags: brackets nested more than 32 levels deep"),
    Case("clone", "set-laughs-value",
         (*SOURCE, "--name", "copy-one", "--set",
          "tags={a: &a [x, x, x, x, x, x, x, x, x, x], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, "
          "*a, *a], c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], d: &d [*c, *c, *c, *c, *c, "
          "*c, *c, *c, *c, *c], e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}"),
         expect="values, counting what aliases expand to"),
    Case("clone", "set-duplicate-key",
         (*SOURCE, "--name", "copy-one", "--set", "tags={a: 1, a: 2}"),
         expect="VALUE:1: tags.a: duplicate key"),
    Case("clone", "set-50-kB-value",
         (*SOURCE, "--name", "copy-one", "--set", "tags.Owner=" + "y" * 50_000),
         expect="gpu-infra:cluster.tags: tag 'Owner': tag values have at most 128 characters, this "
                "one 50000"),
    Case("clone", "name-taken", (*SOURCE, "--name", "llm-train"),
         expect="gpu-infra:cluster.name: 'llm-train' is already the cluster name of stack "
                "source"),
    Case("clone", "neighbour-vpc-cidr-garbage", (*SOURCE, "--name", "copy-one"),
         {"Pulumi.junk.yaml": TRAINING.replace("10.10.0.0/16", "10.10.0.0/99")},
         expect="{d}/Pulumi.junk.yaml: cannot read the cluster name and VPC CIDR the clone must "
                "avoid (gpu-infra:cluster.network.vpc_cidr: '10.10.0.0/99' is not a CIDR)"),
    Case("clone", "neighbour-cluster-not-a-mapping", (*SOURCE, "--name", "copy-one"),
         {"Pulumi.junk.yaml": "config:\n  gpu-infra:cluster: [1]\n"},
         expect="{d}/Pulumi.junk.yaml: cannot read the cluster name and VPC CIDR the clone must "
                "avoid (gpu-infra:cluster: missing or not a mapping)"),
    Case("clone", "neighbour-network-not-a-mapping", (*SOURCE, "--name", "copy-one"),
         {"Pulumi.junk.yaml": "config:\n  gpu-infra:cluster: {network: 3}\n"},
         expect="(gpu-infra:cluster.network: not a mapping)"),
    Case("clone", "neighbour-is-a-directory", (*SOURCE, "--name", "copy-one"),
         {"Pulumi.junk.yaml/keep": "x"}, expect="(not a regular file)"),
]

def _with_source(cases: list[Case]) -> list[Case]:
    """Clone cases read {d}/source.yaml (the shipped training-dev)."""
    return [Case(c.kind, c.name, c.argv, {"source.yaml": TRAINING, **c.files}, c.code, c.expect,
                 c.writes, c.fault) if c.argv[0] == "clone" else c for c in cases]


CASES = _stack_cases() + _policy_cases() + _with_source(IO_CASES + CLONE_CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_input_is_one_clear_problem(case: Case, tmp_path: Path, capsys, monkeypatch):
    case = Case(case.kind, case.name, case.argv, case.files, case.code,
                case.expect.replace("{d}", str(tmp_path)), case.writes, case.fault)
    run_in_process(case, tmp_path, capsys, monkeypatch)


def test_stack_files_are_read_as_pulumi_reads_them(tmp_path: Path):
    """YAML 1.2 as go-yaml v3 reads it: yes/no/on/off and unquoted dates are strings."""
    from gpu_infra.schema import read_stack_file

    path = tmp_path / "Pulumi.yaml12.yaml"
    path.write_text(replaced(TRAINING, "      Owner: ml-platform\n",
                             "      Owner: ml-platform\n      Backup: no\n      Since: 2026-01-01"
                             "\n      Shift: on\n      Audited: yes\n"))
    tags = read_stack_file(path).config["gpu-infra:cluster"]["tags"]
    assert {key: tags[key] for key in ("Backup", "Since", "Shift", "Audited")} == {
        "Backup": "no", "Since": "2026-01-01", "Shift": "on", "Audited": "yes"}


SCALARS = {
    # YAML 1.2 core schema: decimal, octal 0o, hex 0x ints; a leading 0 is decimal (1.1's
    # octal is gone); ruamel (and go-yaml v3) also take 0b binaries and _ separators
    "0": 0, "-1": -1, "+1": 1, "017": 17, "0o17": 15, "0x1F": 31, "0b101": 5, "1_000": 1000,
    "0o8": "0o8", "0X1F": "0X1F", "12e": "12e",
    "1.5": 1.5, "-1.5e3": -1500.0, "1E3": 1000.0, ".5": 0.5, "5.": 5.0,
    ".inf": float("inf"), "-.Inf": float("-inf"), "+.INF": float("inf"),
    ".nan": float("nan"), ".NaN": float("nan"), "nan": "nan", "inf": "inf",
    "true": True, "True": True, "TRUE": True, "false": False, "tRue": "tRue",
    "yes": "yes", "no": "no", "on": "on", "off": "off", "y": "y", "n": "n",
    "~": None, "null": None, "Null": None, "NULL": None, "": None,
    "1:20": "1:20", "'1'": "1", '"true"': "true", "!!str 1": "1", "!!int '3'": 3,
    "!!float 1": 1.0, "!!bool 'true'": True, "!!null ''": None,
}
"""Plain and tagged scalars -> the value the YAML 1.2 core schema resolves them to."""


def test_scalars_resolve_as_yaml_1_2_and_as_ruamels_own_load():
    """One pass over the text builds the values ruamel's YAML 1.2 safe load builds from it
    (the oracle; timestamps apart, which stay strings), and those are the core schema's."""
    from ruamel.yaml import YAML

    from gpu_infra.schema.document import load_plain

    text = "".join(f"k{index}: {scalar}\n" for index, scalar in enumerate(SCALARS))
    text += "when: 2026-01-01\nat: 2026-01-01T10:00:00Z\n"
    read = load_plain(text, "x.yaml")
    oracle = YAML(typ="safe", pure=True).load(text)
    assert (read.pop("when"), read.pop("at")) == ("2026-01-01", "2026-01-01T10:00:00Z")
    del oracle["when"], oracle["at"]
    assert list(map(repr, read.values())) == list(map(repr, oracle.values()))
    assert [repr(value) for value in read.values()] == list(map(repr, SCALARS.values()))


def test_a_text_read_again_gives_values_of_its_own():
    """load_plain keeps what it read: a caller changing its values changes no later read."""
    from gpu_infra.schema.document import load_plain

    first = load_plain(TRAINING, "again.yaml")
    first["config"]["gpu-infra:cluster"]["fleet"]["nodes"] = 1000
    first["config"]["gpu-infra:cluster"]["tags"].clear()
    second = load_plain(TRAINING, "again.yaml")
    assert second["config"]["gpu-infra:cluster"]["fleet"]["nodes"] == 1
    assert second["config"]["gpu-infra:cluster"]["tags"]
    assert second == load_plain(TRAINING, "other.yaml")
