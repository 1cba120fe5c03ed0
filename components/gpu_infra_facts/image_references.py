"""Container image references as registries and container runtimes parse them.

Source: the grammar of the OCI distribution reference (github.com/distribution/reference,
reference.go and regexp.go), written here as one regular expression:

    reference  := name [ ":" tag ] [ "@" digest ]
    name       := [domain "/"] path-component ["/" path-component]*
    domain     := host [":" port]; host := domain-name | "[" IPv6 "]"
    path-component := [a-z0-9]+ ( ( [._] | "__" | "-"+ ) [a-z0-9]+ )*
    tag        := [\\w][\\w.-]{0,127}
    digest     := algorithm ":" hex{32,}; algorithm := [A-Za-z][A-Za-z0-9]* ([+._-] ...)*

and the repository path is at most 255 characters. No space, quote, newline or shell text
can be part of one."""

from __future__ import annotations

import re
from typing import Final

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_PATH = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"

IMAGE_REFERENCE: Final = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH})"
    rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?", re.ASCII)
"""A whole image reference (use fullmatch); groups domain, path, tag, digest."""
MAX_PATH_LENGTH: Final = 255
"""The longest repository path (RepositoryNameTotalLengthMax)."""


def reference_problem(text: str) -> str | None:
    """Why `text` is not an image reference (one clause, never the text), or None."""
    match = IMAGE_REFERENCE.fullmatch(text)
    if match is None:
        if IMAGE_REFERENCE.fullmatch(text.lower()):
            return "the repository path must be lowercase"
        return ("not an image reference: [registry[:port]/]path[:tag][@digest], the path in "
                "lowercase letters, digits and . _ - separators (no spaces, quotes or shell "
                "text)")
    if len(match["path"]) > MAX_PATH_LENGTH:
        return f"the repository path is longer than {MAX_PATH_LENGTH} characters"
    return None
