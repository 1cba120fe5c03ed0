"""Every command the node runs for a workload is installed by something (issue 37): for every
workload unit shipped in components/gpu_infra/blocks/bootstrap/steps/ (a unit that needs
docker.service: it runs containers), the programs its Exec lines start and, through them,
every program they run (node tools by path, Python modules beside them by import) are read,
and each command they run on the host must be

- a builtin or keyword of the shell that runs it (asked of the real dash or bash),
- a node tool that the node tools or user data of every shipped stack installing the unit
  write (their planned objects and user data),
- installed by a bootstrap step every such stack runs (PACKAGES), or
- part of every supported system's base image (BASE_SYSTEM).

Commands inside containers are the image's (the job's torchrun, the worker's blender), not
the node's. A command word the reading cannot resolve (a variable with no assignment in the
script) fails the test too: a new unit or script is covered without being listed here."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from functools import cache
from pathlib import Path

import pytest

from gpu_infra_facts import types as t

from .bootstrap_sandbox import planned_steps, script_of
from .conftest import PROJECT_DIR
from .node_systems import dash
from .shipped import shipped_plan

pytestmark = pytest.mark.slow  # plans the shipped stacks

STEPS = PROJECT_DIR / "components/gpu_infra/blocks/bootstrap/steps"
ECS_STACKS = ("training-dev", "training-prod", "inference-prod", "rendering-batch")
PACKAGES = {"docker": "container_runtime"}
"""Command -> the bootstrap step that installs its package (docker-ce-cli owns /usr/bin/docker:
Docker's "Install Docker Engine" package list; steps/container_runtime.sh)."""
BASE_SYSTEM = frozenset({
    "python3", "sh", "cat", "date", "mkdir", "mv", "rm", "sed", "sleep", "tail",
})
"""Commands every supported image ships: python3 (Ubuntu 22.04/24.04 cloud images' python3
package; Alibaba Cloud Linux 3's platform-python 3.6 as /usr/bin/python3), sh (dash on Ubuntu,
bash on Alibaba Cloud Linux 3), coreutils (cat, date, mkdir, mv, rm, sleep, tail) and sed,
both Essential/base packages of each system."""
SUBPROCESS_CALLS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
EXEC_LINE = re.compile(r"^Exec(?:Start|StartPre|StartPost|Stop|StopPost|Reload)=[-@:+!]*(.+)$",
                       re.MULTILINE)
SEPARATORS = frozenset({"{", "!", "then", "do", "else", "elif", "if", "while", "until", "exec",
                        "command", "time"})
"""Words after which a command word follows (operators such as ; && | ( do too)."""
SUBSTITUTION = re.compile(r"\$\(\s*([^\s()]+)")
INNERMOST = re.compile(r"\$\([^()]*\)")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def workload_units() -> list[str]:
    """The unit files of steps/ that need docker.service."""
    return sorted(path.name for path in STEPS.glob("*.service")
                  if re.search(r"^(?:Requires|Wants|After)=.*\bdocker\.service\b",
                               path.read_text(), re.MULTILINE))


def word_command(word: str, variables: dict[str, str]) -> str:
    """The command a shell word names: a path's last part, a variable's value's; '?WORD' when
    it cannot be told."""
    word = word.strip("\"'")
    if "/" in word:
        return word.rstrip("}\"'").rsplit("/", 1)[1]
    name = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    if name is None:
        return word
    value = variables.get(name[1])
    return word_command(value, variables) if value else f"?{word}"


def shell_commands(text: str) -> set[str]:
    """The command words of a POSIX sh or bash script (functions it defines left out)."""
    text = re.sub(r"\\\n", " ", text)
    variables: dict[str, str] = {}
    words, functions = set(SUBSTITUTION.findall(text)), set()
    while INNERMOST.search(text):  # each $(...) read above; a plain word for the lexer
        text = INNERMOST.sub("SUBSTITUTED", text)
    carried = ""
    for line in text.splitlines():
        lexer = shlex.shlex(carried + line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            tokens = list(lexer)
        except ValueError:  # a quoted string goes on on the next line
            carried += line + " "
            continue
        carried = ""
        if ")" in tokens and "(" not in tokens[:tokens.index(")")]:  # a case pattern
            tokens = tokens[tokens.index(")") + 1:]
        if tokens[:1] == ["case"]:  # its word is no command
            tokens = tokens[tokens.index("in") + 1:] if "in" in tokens else []
        if tokens[:1] == ["for"]:  # nor are its name and words
            tokens = tokens[tokens.index("do"):] if "do" in tokens else []
        if len(tokens) >= 2 and tokens[1] in ("()", "("):  # a function definition
            functions.add(tokens[0])
            tokens = tokens[2:]
        at_command, redirected = True, False
        for token in tokens:
            assigned = ASSIGNMENT.match(token)
            if redirected:
                redirected = False
            elif set(token) <= set(";&|()<>") and ("<" in token or ">" in token):
                redirected = True
            elif set(token) <= set(";&|()") or (at_command and token in SEPARATORS):
                at_command = True
            elif at_command and assigned:
                variables.setdefault(assigned[1], assigned[2])
            elif at_command and token not in {"}", "fi", "done", "esac"}:
                words.add(token)
                at_command = False
    return {word_command(word, variables) for word in words} - functions


def resolved(node: ast.expr, tree: ast.Module) -> list[ast.expr]:
    """The list displays an argv expression comes from: a list, a name assigned one, a
    call of a function of the module returning one, `list + more`."""
    if isinstance(node, ast.List):
        return [node]
    if isinstance(node, ast.BinOp):
        return resolved(node.left, tree)
    if isinstance(node, ast.Name):
        return [found for assign in ast.walk(tree) if isinstance(assign, ast.Assign)
                and any(isinstance(target, ast.Name) and target.id == node.id
                        for target in assign.targets)
                for found in resolved(assign.value, tree)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return [found for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
                and function.name == node.func.id
                for ret in ast.walk(function) if isinstance(ret, ast.Return) and ret.value
                for found in resolved(ret.value, tree)]
    return []


def python_commands(text: str) -> tuple[set[str], set[str], set[str]]:
    """(the commands a Python program starts with subprocess or os.exec*, the modules beside
    it that it imports, those of them imported only under a condition: written next to it
    for some fleets only)."""
    tree = ast.parse(text)
    conditional = {id(inner) for branch in ast.walk(tree) if isinstance(branch, ast.If)
                   for inner in ast.walk(branch)}
    commands: set[str] = set()
    modules: dict[str, bool] = {}
    for node in ast.walk(tree):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                 [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        for name in names:
            if (STEPS / f"{name}.py").is_file():
                modules[name] = modules.get(name, True) and id(node) in conditional
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.args
                and ((node.func.value.id == "subprocess" and node.func.attr in SUBPROCESS_CALLS)
                     or (node.func.value.id == "os" and node.func.attr.startswith("exec")))):
            argvs = resolved(node.args[0], tree)
            commands.update(argv_command(argv) for argv in argvs)
            if not argvs:
                commands.add(f"?line {node.lineno}")
    return commands, set(modules), {name for name, only_if in modules.items() if only_if}


def argv_command(argv: ast.List) -> str:
    """The command of an argv display: a string, or `DIR + "/name"`."""
    first = argv.elts[0] if argv.elts else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value.rsplit("/", 1)[-1]
    if isinstance(first, ast.BinOp) and isinstance(first.right, ast.Constant):
        return str(first.right.value).rsplit("/", 1)[-1]
    return f"?line {argv.lineno}"


@cache
def closure(unit: str) -> tuple[dict[str, str], frozenset[str]]:
    """({host command: the shell that runs it, or "" for an exec}, the node tools and
    modules of steps/ the unit needs on the node). Modules imported only under a condition
    are read but not needed."""
    commands: dict[str, str] = {}
    read: set[str] = set()
    optional: set[str] = set()
    pending = []
    for line in EXEC_LINE.findall((STEPS / unit).read_text()):
        words = shlex.split(line)
        program = words[0].rsplit("/", 1)[-1]
        if program == "python3":
            commands["python3"] = ""
            program = words[1].rsplit("/", 1)[-1]
        pending.append(program)
    while pending:
        name = pending.pop()
        if not (STEPS / name).is_file():
            commands.setdefault(name, "")
            continue
        if name in read:
            continue
        read.add(name)
        text = (STEPS / name).read_text()
        if name.endswith(".py") or text.startswith("#!/usr/bin/env python3"):
            found, modules, only_if = python_commands(text)
            pending += [f"{module}.py" for module in modules]
            optional.update(f"{module}.py" for module in only_if)
            for command in found:
                commands.setdefault(command, "")
        else:
            shell = "bash" if text.startswith("#!/bin/bash") else "sh"
            for command in shell_commands(text):
                commands.setdefault(command, shell)
        pending += [command for command in commands if (STEPS / command).is_file()]
    return ({c: s for c, s in commands.items() if c not in read},
            frozenset(read - (optional - set(commands))))


def is_builtin(command: str, shell: str) -> bool:
    """The real shell says `command` is one of its builtins or keywords."""
    program = dash() if shell == "sh" else "bash"
    done = subprocess.run([program, "-c", f"command -V {shlex.quote(command)}"],
                          capture_output=True, text=True, check=False)
    return done.returncode == 0 and ("builtin" in done.stdout or "keyword" in done.stdout)


@cache
def installs(stack: str) -> tuple[str, list[str]]:
    """(what the stack's node tools and user data write, the steps its nodes run)."""
    plan = shipped_plan(stack)
    user_data = [r.inputs["userData"] for r in plan.resources
                 if isinstance(r.inputs.get("userData"), str)]
    written = "\n".join([*(o.inputs.get("content") or "" for o in plan.by_type(
        t.BUCKET_OBJECT)), *(script_of(text) for text in user_data)])
    steps = sorted({step for text in user_data for step in planned_steps(text)})
    return written, steps


def problems(unit: str) -> list[str]:
    """One line per command of `unit` that nothing installs."""
    commands, tools = closure(unit)
    stacks = [stack for stack in ECS_STACKS
              if f"/etc/systemd/system/{unit}" in installs(stack)[0]]
    found = [] if stacks else [f"{unit}: no shipped stack installs it"]
    for stack in stacks:
        written, steps = installs(stack)
        found += [f"{unit} ({stack}): node tool {tool} is written by nothing" for tool in
                  sorted(tools) if not re.search(rf"/{re.escape(tool)}\b", written)]
        for command, shell in sorted(commands.items()):
            if command.startswith("?"):
                found.append(f"{unit}: cannot tell which command {command[1:]} runs")
            elif command in PACKAGES:
                if PACKAGES[command] not in steps:
                    found.append(f"{unit} ({stack}): {command} needs the "
                                 f"{PACKAGES[command]} step, which its nodes do not run")
            elif command not in BASE_SYSTEM and not (shell and is_builtin(command, shell)):
                found.append(f"{unit} ({stack}): {command} is installed by nothing")
    return found


def test_the_workload_units_are_found_without_a_list():
    assert {"gpu-infra-job.service", "gpu-infra-render.service"} <= set(workload_units())


@pytest.mark.parametrize("unit", workload_units())
def test_every_command_a_workload_runs_is_installed_by_something(unit):
    assert problems(unit) == []
    commands, _ = closure(unit)
    assert "docker" in commands  # the reading found the container runtime


def test_a_command_nothing_installs_is_caught(monkeypatch):
    """The job script gains a host command that no step, node tool or base image has."""
    closure.cache_clear()
    source = (STEPS / "gpu-infra-job").read_text()
    real = Path.read_text

    def read_text(path: Path, *args: object, **kwargs: object) -> str:
        if path == STEPS / "gpu-infra-job":
            return source.replace('say "joining job $id"', 'say "joining job $id"; nvtop -1')
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    try:
        assert "gpu-infra-job.service (training-dev): nvtop is installed by nothing" in \
            problems("gpu-infra-job.service")
    finally:
        closure.cache_clear()
