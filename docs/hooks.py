"""MkDocs hook (mkdocs.yml `hooks:`): pages that show a Markdown file of the repository kept
outside docs/ (CHANGELOG.md, CONTRIBUTING.md, policies/README.md).

A line `<!-- include: PATH -->` (PATH from the repository root) is replaced by that file. Its
headings move one level down when the page has a title above the line, and its relative
links are rewritten for the page: a link into docs/ or to another included file points at
that page; a link to any other file of the repository (source, examples) becomes the path
in code, since the site serves only docs/. The files stay readable where they are (GitHub,
an editor), and the site checks their links with its own (`mkdocs build --strict`).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

INCLUDE = re.compile(r"^<!-- include: (\S+) -->$", re.MULTILINE)
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,5}) ", re.MULTILINE)
FENCE = re.compile(r"^ *```.*?^ *```", re.MULTILINE | re.DOTALL)

_pages_of: dict[str, str] = {}
"""Included repository file -> the docs page that shows it (filled by on_files)."""


def on_files(files: Any, config: Any) -> Any:
    """Find which page includes which file, so links between included files can follow."""
    _pages_of.clear()
    for file in files.documentation_pages():
        for path in INCLUDE.findall(Path(file.abs_src_path).read_text(encoding="utf-8")):
            _pages_of[path] = file.src_uri
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each include line of `page` by the file it names."""
    root = Path(config["config_file_path"]).parent
    docs = Path(config["docs_dir"]).relative_to(root).as_posix()

    def include(match: re.Match[str]) -> str:
        path = match.group(1)
        text = (root / path).read_text(encoding="utf-8")
        if HEADING.search(markdown[:match.start()]):
            text = _outside_fences(text, lambda part: HEADING.sub(r"#\1 ", part))
        return _outside_fences(text, lambda part: LINK.sub(
            lambda link: _relinked(link, posixpath.dirname(path), page.file.src_uri, docs),
            part))

    return INCLUDE.sub(include, markdown)


def _outside_fences(text: str, change: Any) -> str:
    """`text` with `change` applied to everything but its fenced code blocks."""
    parts, last = [], 0
    for fence in FENCE.finditer(text):
        parts += [change(text[last:fence.start()]), fence.group(0)]
        last = fence.end()
    return "".join([*parts, change(text[last:])])


def _relinked(link: re.Match[str], source_dir: str, page_uri: str, docs: str) -> str:
    """One link of an included file (relative to `source_dir`), as the page at `page_uri`
    must write it."""
    label, target = link.groups()
    if re.match(r"[a-z]+:|#", target):
        return link.group(0)
    path, _, anchor = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(source_dir, path))
    fragment = f"#{anchor}" if anchor else ""
    if resolved.startswith(f"{docs}/"):
        page = resolved[len(docs) + 1:]
    elif resolved in _pages_of:
        page = _pages_of[resolved]
    else:
        shown = label.strip("`")
        return f"`{resolved}`" if shown.rstrip("/") == resolved.rstrip("/") \
            else f"{label} (`{resolved}`)"
    return f"[{label}]({posixpath.relpath(page, posixpath.dirname(page_uri) or '.')}{fragment})"
