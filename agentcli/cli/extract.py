"""``-x/--extract``: the first (or ``--extract-last``: the last) fenced code block of an answer.

A fence is a line of three or more backticks or tildes (an info string such as ``python``
may follow); the block ends at a line of the same character at least as long, or at the end
of the answer (a reply cut off mid-block). An answer without a fenced block is kept whole,
as ``llm -x`` does.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[^`\n]*$")


def fenced_blocks(text: str) -> list[str]:
    """The contents of every fenced code block in ``text``, in order."""
    blocks: list[str] = []
    lines = iter(text.splitlines())
    for line in lines:  # the inner loop takes a block's lines from the same iterator
        opened = _OPEN.match(line)
        if not opened:
            continue
        fence = opened.group("fence")
        body: list[str] = []
        for inner in lines:
            closing = inner.strip()
            if closing and set(closing) == {fence[0]} and len(closing) >= len(fence):
                break
            body.append(inner)
        blocks.append("\n".join(body))
    return blocks


def extract_block(text: str, *, last: bool = False) -> str:
    """The first (``last``: the last) fenced block's contents, or ``text`` when it has none."""
    blocks = fenced_blocks(text)
    if not blocks:
        return text
    return blocks[-1] if last else blocks[0]
