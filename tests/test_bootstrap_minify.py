"""What the nodes get of the step files: the same programs without comments, docstrings and
blank lines (bash and Python parse them to the same code), heredoc bodies and strings as they
are, the shebang and ShellCheck directives kept."""

from __future__ import annotations

import ast
import subprocess

import pytest

from gpu_infra.blocks.bootstrap import _STEPS, step_source
from gpu_infra.blocks.bootstrap.minify import UnsafeToStrip, strip_python, strip_shell

SHELL_FILES = sorted(path.name for path in _STEPS.iterdir()
                     if path.name.endswith(".sh") or path.name == "gpu-infra-peers")


def bash_parse(text: str) -> str:
    """How bash itself reads `text`: its body as a function, printed back by `declare -f`
    (bash drops comments and blank lines and normalises the layout, nothing else)."""
    body = text.split("\n", 1)[1] if text.startswith("#!") else text
    done = subprocess.run(["bash", "-c", f"__body() {{\n{body}\n}}\ndeclare -f __body"],
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.slow  # bash parses both files
@pytest.mark.parametrize("name", SHELL_FILES)
def test_a_stripped_step_file_is_the_same_program_to_bash(name):
    source = step_source(name)
    stripped = strip_shell(source)
    assert bash_parse(stripped) == bash_parse(source)
    lines = stripped.splitlines()
    assert all(line.strip() for line in lines)
    kept = [line for number, line in enumerate(source.splitlines())
            if (number == 0 and line.startswith("#!")) or line.startswith("# shellcheck ")]
    assert [line for line in lines if line.lstrip().startswith("#")] == kept
    assert len(stripped) < len(source)


SAME = object()
SAMPLE: list[tuple[str, object]] = [
    ("#!/bin/bash", SAME), ("# a comment", None), ("# shellcheck source=/dev/null", SAME),
    (". ./config.sh", SAME), ("", None),
    ("count=$#  # the number of arguments, the user's", "count=$#"),
    ('echo "${name#prefix} ${#items[@]} # not a comment"', SAME),
    ("cat > out <<'EOF'", SAME), ("# kept: heredoc body", SAME), ("", SAME),
    ("  indented", SAME), ("EOF", SAME),
    ("cat <<-END", SAME), ("\t# kept too", SAME), ("\tEND", SAME),
    ("text='first", SAME), ("# inside a multi-line string", SAME), ("", SAME),
    ("last'", SAME),
    ("value=$(echo a # a comment inside a substitution stays", SAME), (")", SAME),
    ("joined=one\\", SAME), ("# after a line continuation: part of the word", SAME),
    ('echo "$joined"', SAME), ("    # indented comment", None), ("echo done", SAME)]
"""(line, what the node gets: SAME, another line, or None when it is left out)."""


@pytest.mark.slow  # bash parses both texts
def test_heredoc_bodies_strings_and_directives_are_kept():
    source = "".join(f"{line}\n" for line, _ in SAMPLE)
    expected = "".join(f"{line if kept is SAME else kept}\n" for line, kept in SAMPLE
                       if kept is not None)
    stripped = strip_shell(source)
    assert stripped == expected
    assert bash_parse(stripped) == bash_parse(source)


@pytest.mark.parametrize("text", ["echo `date`\n", "cat <<EOF\nno end\n", "echo 'open\n",
                                  'echo "$(date"\n', "cat <<$(x)\n"])
def test_what_the_scanner_cannot_follow_is_refused(text):
    with pytest.raises(UnsafeToStrip):
        strip_shell(text)


def without_function_docstrings(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and len(node.body) > 1 and \
                isinstance(node.body[0], ast.Expr) and \
                isinstance(node.body[0].value, ast.Constant):
            node.body.pop(0)
    return ast.dump(tree)


def test_the_python_helper_is_the_same_code_without_docstrings_and_comments():
    source = step_source("gpu-infra-api")
    stripped = strip_python(source)
    assert without_function_docstrings(ast.parse(stripped)) == \
        without_function_docstrings(ast.parse(source))
    assert ast.get_docstring(ast.parse(stripped)) == ast.get_docstring(ast.parse(source)), \
        "the module docstring is the usage text (SystemExit(__doc__))"
    assert stripped.startswith("#!/usr/bin/env python3\n")
    assert len(stripped) < len(source)


def test_python_comments_go_and_strings_stay():
    source = ('#!/usr/bin/env python3\n"""Usage.\n\n  tool run\n"""\n# a comment\n\n'
              'def f():\n    """Gone."""\n    text = """a\n\n# kept\n"""  # gone\n'
              '    return text\n')
    assert strip_python(source) == ('#!/usr/bin/env python3\n"""Usage.\n\n  tool run\n"""\n'
                                    'def f():\n text = """a\n\n# kept\n"""\n'
                                    ' return text\n')


def test_a_python_module_loses_its_docstring_too():
    source = '"""A module."""\nimport os\n\n\ndef f():\n    """Gone."""\n    return os.sep\n'
    assert strip_python(source, usage=False) == "import os\ndef f():\n return os.sep\n"
