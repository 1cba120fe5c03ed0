"""Refuse a landing that removes lines other work landed after the branch forked.

Usage: python3 tools/check_reverts.py BASE MAIN CANDIDATE [MESSAGE_FILE]

BASE is where the branch forked from main (its merge base), MAIN the tip of main and
CANDIDATE the squashed commit about to land. A line that main added after BASE and that
CANDIDATE removes again is a revert the branch never saw: the branch was written against
the older text. Such lines are listed and the exit code is 1, unless the commit message
names the file in an ``Intended-revert: <path>`` trailer (a deliberate undo). Lines of
fewer than four non-blank characters (braces, ``fi``) are ignored: they recur everywhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

HUNK_FILE = re.compile(r"^\+\+\+ b/(.*)$|^--- a/(.*)$")
TRIVIAL_LENGTH = 4


def changed_lines(old: str, new: str, sign: str) -> dict[str, Counter[str]]:
    """Lines each file gains ('+') or loses ('-') from OLD to NEW, as counts per text."""
    diff = subprocess.run(
        ["git", "diff", "--no-color", "--unified=0", "--no-renames", old, new],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout
    lines: dict[str, Counter[str]] = {}
    path = ""
    for line in diff.splitlines():
        header = HUNK_FILE.match(line)
        if header:
            named = header.group(1) or header.group(2)
            if (sign == "+") == line.startswith("+++"):
                path = named
            continue
        if line.startswith(sign) and not line.startswith(sign * 3):
            text = line[1:].strip()
            if len(text) >= TRIVIAL_LENGTH:
                lines.setdefault(path, Counter())[text] += 1
    return lines


def intended(message_file: str | None) -> set[str]:
    """Paths the commit message names in ``Intended-revert:`` trailers."""
    if not message_file:
        return set()
    with open(message_file, encoding="utf-8") as handle:
        return {
            m.group(1).strip()
            for m in re.finditer(r"^Intended-revert:\s*(\S+)", handle.read(), re.MULTILINE)
        }


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    base, main_tip, candidate = argv[:3]
    allowed = intended(argv[3] if len(argv) == 4 else None)
    landed = changed_lines(base, main_tip, "+")
    removed = changed_lines(main_tip, candidate, "-")
    reverts = []
    for path, lines in sorted(removed.items()):
        if path in allowed or path not in landed:
            continue
        for text, count in sorted((lines & landed[path]).items()):
            reverts.append(f"{path}: removes {count}x a line main landed after the fork: {text}")
    for line in reverts:
        print(f"check-reverts: {line}")
    if reverts:
        print(
            f"check-reverts: {len(reverts)} line(s) would be reverted; rebase the branch on "
            "main, or name a deliberate undo with 'Intended-revert: <path>' in the message",
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
