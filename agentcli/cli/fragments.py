"""``-f/--fragment``: context for the question from files, globs, URLs or stdin (``llm -f``).

Each fragment's text is put before the question under a ``[fragment: SOURCE]`` line. A
fragment is ``-`` (stdin), an ``http(s)://`` URL, a glob (``src/*.py``, ``**`` recurses), or
a file. Together they hold at most :data:`~agentcli.cli.question.MAX_STDIN_BYTES` (the limit
on piped input) and :data:`MAX_FILES` files; binary data, non-UTF-8 text and agentcli's keys
file (under any name or link) are refused, and a glob does not follow a link out of its tree. URLs
go through the tools' HTTP guard (:mod:`agentcli.tools.net`): internal addresses, loopback
included, are refused unless ``tool_settings: {allow_private_network: true}``.
"""

from __future__ import annotations

import glob
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from agentcli.cli.question import MAX_STDIN_BYTES, read_text
from agentcli.errors import AgentCliError, ConfigError
from agentcli.files import read_small_text
from agentcli.records import record
from agentcli.tools.net import fetch
from agentcli.tools.sandbox import bool_setting

MAX_FILES = 100  # files one run may take as fragments (a glob matching more is refused)
_GLOB_CHARS = frozenset("*?[")
_FIX = "pass smaller files, or fewer (the limit is for all fragments together)"


@record
class Fragment:
    """One piece of context: where it came from and its text."""

    source: str
    text: str


def _from_url(url: str, allow_private: bool, limit: int) -> Fragment:
    try:
        response = fetch("GET", url, allow_private=allow_private, max_bytes=limit,
                         headers={"User-Agent": "agentcli (fragment)"})
    except AgentCliError as err:
        raise ConfigError(f"fragment {url}: {err}") from None
    if response.status >= 400:
        raise ConfigError(f"fragment {url}: HTTP {response.status}; check the URL")
    if response.truncated:
        raise ConfigError(f"fragment {url} is larger than {limit // 1024} KiB; {_FIX}")
    if "\0" in response.text:
        raise ConfigError(f"fragment {url} is binary data, not text")
    return Fragment(url, response.text)


def _from_file(path: str, limit: int) -> Fragment:
    text = read_small_text(path, "fragment", _FIX, limit=limit)
    if "\0" in text:
        raise ConfigError(f"fragment {path} is binary data (NUL bytes), not text")
    return Fragment(path, text)


def _too_much() -> ConfigError:
    return ConfigError(f"fragments hold more than {MAX_STDIN_BYTES // 1024} KiB; {_FIX}")


def _paths(pattern: str) -> list[str]:
    """The files a glob matches inside its own tree: a match reached through a symlink that
    leads out of the directory the pattern starts in (``dir/**`` over ``dir/link -> /``) is
    left out, as ``find`` does not follow links."""
    fixed = Path(pattern).parts
    cut = next((i for i, part in enumerate(fixed) if _GLOB_CHARS & set(part)), len(fixed))
    root = Path(*fixed[:cut]).resolve() if cut else Path.cwd().resolve()
    found = sorted(p for p in glob.glob(pattern, recursive=True)
                   if Path(p).is_file() and Path(p).resolve().is_relative_to(root))
    if not found:
        raise ConfigError(f"fragment {pattern!r} matches no file; check the pattern "
                          "(quote it so the shell does not expand it)")
    return found


def read_fragments(specs: Sequence[str], tool_settings: Mapping[str, object],
                   stdin: TextIO | None = None) -> list[Fragment]:
    """Every fragment's text, in the order given; a bad one is a one-line usage error."""
    allow_private = bool_setting(dict(tool_settings), "allow_private_network")
    fragments: list[Fragment] = []
    used = 0
    for spec in specs:
        sources = [spec]
        if (spec != "-" and not spec.startswith(("http://", "https://"))
                and _GLOB_CHARS & set(spec) and not Path(spec).exists()):
            sources = _paths(spec)
            if len(fragments) + len(sources) > MAX_FILES:
                raise ConfigError(f"fragment {spec!r} matches {len(sources)} files; at most "
                                  f"{MAX_FILES} files in all, narrow the pattern")
        elif len(fragments) >= MAX_FILES:
            raise ConfigError(f"more than {MAX_FILES} fragments; pass fewer")
        for source in sources:
            remaining = MAX_STDIN_BYTES - used
            if remaining <= 0:
                raise _too_much()
            if source == "-":
                stream = sys.stdin if stdin is None else stdin
                if stream is None or stream.isatty():
                    raise ConfigError("fragment - reads stdin, but nothing is piped in")
                fragment = Fragment("stdin", read_text(stream, remaining))
            elif source.startswith(("http://", "https://")):
                fragment = _from_url(source, allow_private, remaining)
            elif Path(source).exists():
                fragment = _from_file(source, remaining)
            else:
                raise ConfigError(f"fragment {source!r} is not a file, URL (http://, https://), "
                                  "glob or - (stdin)")
            used += len(fragment.text.encode("utf-8"))
            if used > MAX_STDIN_BYTES:
                raise _too_much()
            fragments.append(fragment)
    return fragments


def with_fragments(question: str, fragments: Sequence[Fragment]) -> str:
    """The question with each fragment's text before it, labelled with its source."""
    if not fragments:
        return question
    parts = [f"[fragment: {f.source}]\n{f.text.strip()}" for f in fragments]
    return "\n\n".join([*parts, question])
