"""What the nodes get of our shell and Python sources: the same code without the comments,
docstrings and blank lines a node does not need (the step files keep them for readers).

Both functions are pure text transformations of our own files (no zlib, no version-dependent
output): the same source gives byte-identical user data on every machine, since a user-data
change restarts every node. They keep what they cannot classify safely: heredoc bodies, lines
inside quotes or continued lines, the shebang, `# shellcheck` directives and the module
docstring of a Python script (its usage text).
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache

_WORD_BREAKS = frozenset(" \t\n;&|()<>")
"""Characters after which a `#` starts a comment (bash: `#` at the start of a word)."""
_DELIMITER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


class UnsafeToStrip(ValueError):
    """The shell text uses a construct the scanner does not follow (backquotes, an odd
    heredoc) or is unbalanced; its step file must be changed (a test strips every one)."""


@dataclass
class _Scanner:
    """Quoting state across lines: a stack of open contexts (`'`, `"`, `$'`, `${`, `$(`
    with its parenthesis depth) and the heredocs whose bodies start after this line."""

    stack: list[list[str | int]] = field(default_factory=list)
    heredocs: list[tuple[str, bool]] = field(default_factory=list)
    before_line: str = "\n"

    def at_top(self) -> bool:
        return not self.stack

    def scan(self, line: str, joined_to: str = "\n") -> int | None:
        """Advance over one line (without its newline); the column of a comment that starts
        at the top level (outside any quote or substitution), if there is one. `joined_to`:
        the character before the backslash when the previous line continues into this one."""
        self.before_line = joined_to
        i = 0
        while i < len(line):
            char = line[i]
            context = self.stack[-1][0] if self.stack else "top"
            if context == "'":
                if char == "'":
                    self.stack.pop()
            elif context == "$'":
                if char == "\\":
                    i += 1
                elif char == "'":
                    self.stack.pop()
            elif context == '"':
                i = self._in_double_quotes(line, i)
            elif context == "${":
                i = self._in_braces(line, i)
            else:
                comment = self._in_commands(line, i)
                if isinstance(comment, tuple):
                    return comment[0] if context == "top" else None
                i = comment
            i += 1
        return None

    def _dollar(self, line: str, i: int) -> int | None:
        """Open `$(`, `${` or `$'` at line[i] == '$': the index of its last character."""
        following = line[i + 1:i + 2]
        if following == "(":
            self.stack.append(["$(", 1])
        elif following == "{":
            self.stack.append(["${"])
        elif following == "'":
            self.stack.append(["$'"])
        else:
            return None
        return i + 1

    def _in_double_quotes(self, line: str, i: int) -> int:
        char = line[i]
        if char == "\\":
            return i + 1
        if char == "`":
            raise UnsafeToStrip("backquote")
        if char == "$" and line[i + 1:i + 2] in ("(", "{"):
            opened = self._dollar(line, i)
            return i if opened is None else opened
        if char == '"':
            self.stack.pop()
        return i

    def _in_braces(self, line: str, i: int) -> int:
        char = line[i]
        if char == "\\":
            return i + 1
        if char in "'`":
            raise UnsafeToStrip(f"{char} inside ${{...}}")
        if char == '"':
            self.stack.append(['"'])
        elif char == "$":
            opened = self._dollar(line, i)
            return i if opened is None else opened
        elif char == "}":
            self.stack.pop()
        return i

    def _in_commands(self, line: str, i: int) -> int | tuple[int]:
        """Command context (top level or inside `$(`): the index of the last character
        consumed, or (column,) where a comment starts (the rest of the line)."""
        char = line[i]
        before = line[i - 1] if i else self.before_line
        if char == "#" and before in _WORD_BREAKS:
            return (i,)
        if char == "\\":
            return i + 1
        if char == "`":
            raise UnsafeToStrip("backquote")
        if char == "'":
            self.stack.append(["'"])
        elif char == '"':
            self.stack.append(['"'])
        elif char == "$":
            opened = self._dollar(line, i)
            return i if opened is None else opened
        elif char == "<" and line.startswith("<<", i):
            return self._heredoc(line, i)
        elif self.stack and char in "()":
            depth = self.stack[-1]
            depth[1] = int(depth[1]) + (1 if char == "(" else -1)
            if depth[1] == 0:
                self.stack.pop()
        return i

    def _heredoc(self, line: str, i: int) -> int:
        """`<<WORD`, `<<-WORD`, quoted or not (`<<<` is a here-string): its body follows
        this line."""
        if line.startswith("<<<", i):
            return i + 2
        j = i + 2
        strip_tabs = line[j:j + 1] == "-"
        j += strip_tabs
        while line[j:j + 1] in (" ", "\t"):
            j += 1
        quote = line[j:j + 1] if line[j:j + 1] in ("'", '"') else ""
        j += bool(quote) or line[j:j + 1] == "\\"
        start = j
        while j < len(line) and line[j] in _DELIMITER_CHARS:
            j += 1
        word = line[start:j]
        if not word or (quote and line[j:j + 1] != quote):
            raise UnsafeToStrip(f"heredoc delimiter in {line.strip()!r}")
        self.heredocs.append((word, strip_tabs))
        return j - 1 + bool(quote)


def _kept_comment(line: str, number: int) -> bool:
    """The shebang and ShellCheck directives stay (the ShellCheck tests read them)."""
    text = line.lstrip()
    return (number == 0 and text.startswith("#!")) or text.startswith("# shellcheck ")


@lru_cache(maxsize=64)
def strip_shell(text: str) -> str:
    """`text` (bash) without full-line comments, trailing comments, blank lines and the
    indentation of lines at the top level; heredoc bodies, lines inside quotes, substitutions
    or after a line continuation are kept as they are. UnsafeToStrip for a construct it does
    not follow. Cached: a plan renders the same scripts for the user-data check and for the
    nodes."""
    scanner = _Scanner()
    kept: list[str] = []
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    body: tuple[str, bool] | None = None
    joined_to: str | None = None
    for number, line in enumerate(lines):
        if body is not None:
            kept.append(line)
            if (line.lstrip("\t") if body[1] else line) == body[0]:
                body = scanner.heredocs.pop(0) if scanner.heredocs else None
            continue
        free = scanner.at_top() and joined_to is None
        comment = scanner.scan(line, "\n" if joined_to is None else joined_to)
        if comment is not None and not _kept_comment(line, number):
            line = line[:comment].rstrip()
            if not line and free:
                continue
        if free and not line.strip():
            continue
        if free:
            line = line.lstrip(" \t")  # indentation outside quotes means nothing to bash
        continued = line.endswith("\\") and not line.endswith("\\\\")
        joined_to = (line[-2:-1] or "\n") if continued else None
        kept.append(line)
        if scanner.heredocs:
            body = scanner.heredocs.pop(0)
    if body is not None or scanner.heredocs or not scanner.at_top():
        raise UnsafeToStrip("unterminated quote, substitution or heredoc")
    return "\n".join(kept) + ("\n" if ends_with_newline else "")


def _docstring_lines(tree: ast.Module, usage: bool = True) -> set[int]:
    """1-based line numbers of the docstrings of functions and classes that have more
    statements than their docstring, and of the module's unless it is `usage` text."""
    lines: set[int] = set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + (() if usage
                                                                     else (ast.Module,))
    for node in ast.walk(tree):
        if not isinstance(node, kinds):
            continue
        first = node.body[0]
        if (len(node.body) > 1 and isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
                and first.end_lineno is not None):
            lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _string_continuation_lines(tree: ast.Module) -> set[int]:
    """1-based numbers of the lines after the first of every multi-line string literal
    (their blank lines are part of the string)."""
    return {number for node in ast.walk(tree)
            if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno is not None
            for number in range(node.lineno + 1, node.end_lineno + 1)}


@lru_cache(maxsize=16)
def strip_python(text: str, *, usage: bool = True) -> str:
    """`text` (a Python script) without comments, function and class docstrings and blank
    lines, indented one space per block (_reindent); the shebang and the module docstring
    (a program's usage text; with `usage=False`, for a module, it goes too) stay. Lines are
    dropped whole or cut at a COMMENT token (tokenize), never inside a string (string spans
    from ast). Cached, like strip_shell."""
    tree = ast.parse(text)
    drop = _docstring_lines(tree, usage)
    in_strings = _string_continuation_lines(tree)
    lines = text.splitlines(keepends=True)
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT and not (token.start == (1, 0)
                                                    and token.string.startswith("#!")):
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column].rstrip() + "\n"
    kept = [line for number, line in enumerate(lines, start=1)
            if number not in drop and (number in in_strings or line.strip())]
    return _reindent("".join(kept))


def _reindent(text: str) -> str:
    """`text` with one space per block level (Python reads only the nesting): every line
    that starts a statement at its block's depth, a line inside brackets or after a
    backslash one deeper; lines inside a multi-line string stay as they are."""
    lines = text.splitlines(keepends=True)
    depth = brackets = 0
    line_depth: dict[int, int] = {}
    in_strings: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.INDENT:
            depth += 1
        elif token.type == tokenize.DEDENT:
            depth -= 1
        elif token.type == tokenize.STRING and token.end[0] > token.start[0]:
            in_strings.update(range(token.start[0] + 1, token.end[0] + 1))
        if token.type not in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL,
                              tokenize.NEWLINE, tokenize.ENDMARKER):
            line_depth.setdefault(token.start[0], depth + (1 if brackets else 0))
        if token.type == tokenize.OP and token.string in "([{":
            brackets += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            brackets -= 1
    out = []
    for number, line in enumerate(lines, start=1):
        if number in line_depth and number not in in_strings:
            line = " " * line_depth[number] + line.lstrip(" ")
        out.append(line)
    return "".join(out)


__all__ = ["UnsafeToStrip", "strip_python", "strip_shell"]
