"""File tools confined to a root directory (default: the current directory)."""

from __future__ import annotations

import fnmatch
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from agentcli.errors import ToolInputError
from agentcli.tools.base import Tool, tool
from agentcli.tools.file_names import list_files, missing, named_in
from agentcli.tools.sandbox import confined, int_setting, tool_root

_MAX_LIST = 500


def make(name: str, settings: Mapping[str, object]) -> Tool:
    """The file tool ``name``, bound to the tool root."""
    root = tool_root(settings)
    max_bytes = int_setting(settings, "files_max_bytes", 200_000)

    def rel(p: Path) -> str:
        return str(p.relative_to(root)) or "."

    def a_file(file_path: str) -> Path:
        """The file ``file_path`` is, exactly (tools that change files act on nothing else);
        when there is none, the error lists the files that exist."""
        path = confined(root, file_path)
        if not path.is_file():
            raise missing(file_path, list_files(root), [])
        return path

    def named_file(phrase: str) -> tuple[Path, str]:
        """The file ``phrase`` is, or the one listed file it names among other words
        (``Total of sales.txt``), with a note saying so; the match goes through
        :func:`confined` like any path."""
        path = confined(root, phrase)
        if path.is_file():
            return path, ""
        listing = list_files(root)
        matches = named_in(phrase, listing)
        if len(matches) != 1:
            raise missing(phrase, listing, matches)
        return confined(root, matches[0]), f"read {matches[0]} (named in {phrase!r})\n"

    @tool
    def read_file(file_path: str) -> str:
        """Read a text file (one the question names) under the root directory.
        Input: the file's name, as the question writes it.

        Args:
            file_path: Path relative to the root.
        """
        path, named = named_file(file_path)
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
        note = f"\n...[file cut at {max_bytes:,} bytes]" if len(data) > max_bytes else ""
        return named + data[:max_bytes].decode("utf-8", "replace") + note

    @tool
    def write_file(file_path: str, text: str, append: bool = False) -> str:
        """Write text to a file under the root directory (creates parent folders).

        Args:
            file_path: Path relative to the root.
            text: The text to write.
            append: Append instead of overwriting.
        """
        path = confined(root, file_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a" if append else "w", encoding="utf-8") as fh:
            fh.write(text)
        return f"File written successfully to {rel(path)}."

    @tool
    def list_directory(dir_path: str = ".") -> str:
        """List the files and folders in a directory under the root.

        Args:
            dir_path: Directory relative to the root.
        """
        path = confined(root, dir_path)
        if not path.is_dir():
            raise ToolInputError(f"no such directory: {dir_path}")
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in path.iterdir())
        return "\n".join(names[:_MAX_LIST]) or f"No files found in directory {dir_path}"

    @tool
    def file_search(pattern: str, dir_path: str = ".") -> str:
        """Recursively find files whose name matches a pattern such as *.py.

        Args:
            pattern: A Unix shell-style name pattern.
            dir_path: Directory to search, relative to the root.
        """
        start = confined(root, dir_path)
        hits: list[str] = []
        for folder, dirs, files in os.walk(start):
            dirs[:] = [d for d in dirs if not Path(folder, d).is_symlink()]
            hits += [rel(Path(folder, f)) for f in files if fnmatch.fnmatch(f, pattern)]
            if len(hits) >= _MAX_LIST:
                break
        return "\n".join(sorted(hits)[:_MAX_LIST]) or f"No files found for pattern {pattern}"

    @tool
    def copy_file(source_path: str, destination_path: str) -> str:
        """Copy a file under the root directory.

        Args:
            source_path: The file to copy.
            destination_path: Where to copy it.
        """
        src, dst = a_file(source_path), confined(root, destination_path)
        shutil.copy2(src, dst)
        return f"File copied successfully from {rel(src)} to {rel(dst)}."

    @tool
    def move_file(source_path: str, destination_path: str) -> str:
        """Move or rename a file under the root directory.

        Args:
            source_path: The file to move.
            destination_path: The new path.
        """
        src, dst = confined(root, source_path), confined(root, destination_path)
        if not src.exists():
            raise missing(source_path, list_files(root), [])
        shutil.move(str(src), str(dst))
        return f"File moved successfully from {rel(src)} to {rel(dst)}."

    @tool
    def file_delete(file_path: str) -> str:
        """Delete a file under the root directory.

        Args:
            file_path: The file to delete.
        """
        path = a_file(file_path)
        path.unlink()
        return f"File deleted successfully: {rel(path)}."

    made: list[Tool] = [read_file, write_file, list_directory, file_search, copy_file,
                        move_file, file_delete]
    return next(t for t in made if t.name == name)

