"""Reading the Markdown of the README and the documentation site (``docs/``): sections,
fenced blocks, links and the anchors headings get, for the tests that hold the text to
the code (``tests/unit/test_readme.py``, ``tests/unit/test_docs.py``)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

#: A Markdown link or image: ``[text](target)``, the target without a title.
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def section(text: str, title: str) -> str:
    """The ``## title`` section of ``text``: from its heading to the next ``## `` heading
    (or the end); its ``###`` subsections are part of it."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def fenced_blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` ("" for plain ones), in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    keep = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, keep = [], line.strip() == f"```{language}"
            else:
                if keep:
                    blocks.append("".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def unfenced_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` outside fenced blocks."""
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


def prose_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` outside fenced blocks, code spans blanked (a link written
    in backticks is an example, not a link)."""
    for line in unfenced_lines(text):
        yield re.sub(r"`[^`]*`", "``", line)


def links(text: str) -> list[str]:
    """The targets of the links and images of ``text``'s prose, in order."""
    return [m.group(1) for line in prose_lines(text) for m in _LINK.finditer(line)]


def slug(title: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading (its default ``slugify``),
    as MkDocs and the forges' renderers write it for the headings podsync's pages have:
    the text without its markup, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(text: str) -> set[str]:
    """The anchors of ``text``'s headings (``#`` to ``######``, outside fenced blocks)."""
    found: set[str] = set()
    for line in unfenced_lines(text):
        heading = re.match(r"#{1,6} (.+)$", line)
        if heading:
            found.add(slug(heading.group(1)))
    return found
