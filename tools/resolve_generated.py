"""Resolve a squash's conflicts that lie only in generated text, before it is generated anew.

Usage: python3 tools/resolve_generated.py PREFIX PATH [PATH ...]

Each conflicted PATH either lies under PREFIX (a folder of recordings, rewritten whole: main's
copy is kept, or main's deletion of it) or is a page on both sides whose every conflict falls
inside a generated section (``<!-- generated: NAME -->`` ... ``<!-- end generated -->``):
main's side of those conflicts is kept and the rest of the merge stays. Exit 1, touching
nothing, when a conflict lies anywhere else; the caller then regenerates the files and stages
them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

OPENS = re.compile(r"^<!-- generated: .* -->$")
CLOSES = "<!-- end generated -->"


def only_in_generated_sections(text: str) -> bool:
    """Whether every conflict of a file's merged text lies inside one generated section."""
    inside = in_conflict = False
    for line in text.splitlines():
        if line.startswith("<<<<<<< "):
            if not inside:
                return False
            in_conflict = True
        elif line.startswith(">>>>>>> "):
            in_conflict = False
        elif OPENS.match(line) or line == CLOSES:
            if in_conflict:
                return False
            inside = line != CLOSES
    return True


def stage(path: str, number: int) -> bytes:
    """The text of one merge stage (1 base, 2 main, 3 the branch) of a path."""
    return subprocess.run(["git", "show", f":{number}:{path}"], check=True,
                          capture_output=True).stdout


def has_stage(path: str, number: int) -> bool:
    """Whether a merge stage of a path exists (none: that side deleted it)."""
    return subprocess.run(["git", "cat-file", "-e", f":{number}:{path}"],
                          capture_output=True).returncode == 0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    prefix, paths = argv[0], argv[1:]
    pages = [p for p in paths if not p.startswith(prefix)]
    if not all(has_stage(p, 2) and has_stage(p, 3)
               and only_in_generated_sections(Path(p).read_text(errors="replace"))
               for p in pages):
        return 1
    for path in paths:
        if path in pages:
            stages = []
            for number in (2, 1, 3):
                copy = Path(f"{path}.stage{number}")
                copy.write_bytes(stage(path, number))
                stages.append(str(copy))
            merged = subprocess.run(["git", "merge-file", "--ours", "-p", *stages],
                                    capture_output=True).stdout
            for name in stages:
                Path(name).unlink()
            Path(path).write_bytes(merged)
            subprocess.run(["git", "add", "--", path], check=True)
        elif has_stage(path, 2):
            subprocess.run(["git", "checkout", "--quiet", "--ours", "--", path], check=True)
            subprocess.run(["git", "add", "--", path], check=True)
        else:  # main deleted the recording the branch changed: it stays deleted
            subprocess.run(["git", "rm", "--quiet", "--", path], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
