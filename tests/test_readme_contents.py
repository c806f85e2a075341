"""The README's table of contents lists every section and subsection, in order, with GitHub's anchors."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def contents(text: str) -> str:
    """The table of contents of ``text``: its ## and ### headings outside code blocks (not Contents)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        found = re.match(r"(##|###) (.+)", line)
        if fenced or not found or found.group(2) == "Contents":
            continue
        indent = "" if found.group(1) == "##" else "  "
        lines.append(f"{indent}- [{found.group(2).replace('`', '')}](#{anchor(found.group(2))})")
    return "\n".join(lines) + "\n"


def test_the_contents_list_every_section():
    text = README.read_text()
    shown = re.search(r"\n## Contents\n\n(.*?)\n## ", text, re.S)
    assert shown, "README.md has no '## Contents' section before its first section"
    assert shown.group(1) == contents(text), "README.md's Contents are not its headings: replace them with contents()"


def test_an_anchor_is_githubs():
    assert anchor("Pods the API server would refuse (`--validate`)") == "pods-the-api-server-would-refuse---validate"
    assert anchor("Pods already in the cluster: place pod/NAME, pending") == (
        "pods-already-in-the-cluster-place-podname-pending")
