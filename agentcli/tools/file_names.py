"""Which file under the root a tool input means: the files that exist, and the one a phrase
names.

A small model writes ``read_file("Total of sales.txt")`` for ``sales.txt``, or invents a
name. The phrase is matched only against the files this module lists under the root (regular
files, hidden entries and symlinked folders left out, a symlink kept only when it resolves
inside the root), so a match is always one of those names and never a path built from the
model's text; the caller still resolves it through :func:`sandbox.confined`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentcli.errors import ToolInputError
from agentcli.records import record

_SCAN_LIMIT = 5_000  # directory entries looked at: a huge tree is listed in part
_SHOWN = 20  # names an error shows
# A name counts where it stands as a whole: not glued to letters, digits or path characters
# on either side (``sales.txt`` is in ``Total of sales.txt.`` but not in ``old_sales.txt``
# or ``sales.txt.bak``).
_BEFORE = r"(?<![\w./\\-])"
_AFTER = r"(?![\w/\\-]|\.\w)"
_HERE = re.compile(r"(?<![\w.])\./")


@record
class Listing:
    """The files under a root (relative POSIX paths, sorted) and whether the scan was cut."""

    files: list[str]
    cut: bool


def list_files(root: Path) -> Listing:
    """The regular files under ``root`` a model may be pointed to, without leaving it."""
    found: list[str] = []
    seen = 0
    for folder, dirs, names in os.walk(root):  # never enters a symlinked folder
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            seen += 1
            path = Path(folder, name)
            if name.startswith(".") or not _inside(root, path):
                continue
            found.append(path.relative_to(root).as_posix())
        seen += len(dirs)
        if seen >= _SCAN_LIMIT:
            return Listing(sorted(found), cut=True)
    return Listing(sorted(found), cut=False)


def _inside(root: Path, path: Path) -> bool:
    """A regular file whose real path is under ``root`` (a symlink leading out is not)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return False
    return root in real.parents and real.is_file()


def named_in(phrase: str, listing: Listing) -> list[str]:
    """The listed files ``phrase`` names, by relative path or by file name, case aside; a
    name that only occurs inside a longer named one (``a.txt`` in ``data a.txt``) is left
    out."""
    phrase = _HERE.sub("  ", phrase)  # ``./sales.txt`` names sales.txt (same length: spans)
    lowered = phrase.lower()
    spans: dict[str, list[tuple[int, int]]] = {}
    for rel in listing.files:
        for form in {rel, rel.rsplit("/", 1)[-1]}:
            if form.lower() not in lowered:  # cheap test first: most names are not there
                continue
            pattern = _BEFORE + re.escape(form) + _AFTER
            spans.setdefault(rel, []).extend(
                m.span() for m in re.finditer(pattern, phrase, re.IGNORECASE))
    spans = {rel: found for rel, found in spans.items() if found}

    def within(span: tuple[int, int], other: str) -> bool:
        return any(s <= span[0] and span[1] <= e and (s, e) != span for s, e in spans[other])

    return [rel for rel, found in spans.items()
            if not all(any(within(span, o) for o in spans if o != rel) for span in found)]


def shown(listing: Listing) -> str:
    """The files that exist, bounded: the first names sorted, then how many more."""
    if not listing.files:
        return "there are no files under the root"
    head = ", ".join(listing.files[:_SHOWN])
    rest = len(listing.files) - _SHOWN
    more = f" and {rest:,} more" if rest > 0 else ""
    if listing.cut:
        more += " (the listing stopped early: use file_search to find others)"
    return f"the files under the root are: {head}{more}"


def missing(phrase: str, listing: Listing, matches: list[str]) -> ToolInputError:
    """The error for an input that names no file under the root, or several."""
    if len(matches) > 1:
        names = ", ".join(matches[:_SHOWN])
        return ToolInputError(f"{phrase!r} names {len(matches)} files ({names}); send exactly "
                              "one file name")
    return ToolInputError(f"no such file: {phrase!r}; {shown(listing)}; send one of these "
                          "names")
