"""The one list of tool_settings keys matches what the built-in tools read."""

from __future__ import annotations

import re
from pathlib import Path

from agentcli.tools.registry import BUILTIN_TOOL_SETTINGS

TOOLS = Path(__file__).resolve().parents[2] / "agentcli" / "tools"
_READ = re.compile(r"""(?:_setting|tool_root)\(settings,\s*["']([a-z_]+)["']"""
                   r"""|settings(?:\.get\(|\[)\s*["']([a-z_]+)["']""")


def test_every_key_a_tool_reads_is_listed() -> None:
    read = {a or b for path in TOOLS.glob("*.py")
            for a, b in _READ.findall(path.read_text(encoding="utf-8"))}
    assert len(read) > 20, "the scan found too few reads: the pattern is broken"
    assert read - {"llm"} <= BUILTIN_TOOL_SETTINGS, sorted(read - BUILTIN_TOOL_SETTINGS)
