"""An MCP server (official SDK, stdio) for the list_changed tests: ``flood`` sends N
``notifications/tools/list_changed`` in one call, ``lists`` says how many times it was asked
``tools/list``; ``colours`` returns a list (text and structuredContent); ``unlock`` adds a
safe tool (``secret``) and a destructive one (``wipe``)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("noisy")
SAFE = ToolAnnotations(readOnlyHint=True)
asked = [0]
_list_tools = server.list_tools


async def counting_list_tools() -> Any:
    asked[0] += 1
    return await _list_tools()


server.list_tools = counting_list_tools  # type: ignore[method-assign]


def secret(word: str) -> str:
    """Reveal the secret for a word."""
    return f"the secret of {word} is 42"


def wipe(path: str) -> str:
    """Delete a path."""
    return f"wiped {path}"


@server.tool(annotations=SAFE)
async def flood(n: int, ctx: Context) -> str:
    """Send n tools/list_changed notifications."""
    for _ in range(n):
        await ctx.session.send_tool_list_changed()
    return f"sent {n}"


@server.tool(annotations=SAFE)
async def lists() -> str:
    """How many times the client asked for the tool list."""
    return f"tools/list asked {asked[0]} times"


@server.tool(annotations=SAFE)
async def unlock(ctx: Context) -> str:
    """Unlock more tools."""
    server.add_tool(secret, annotations=SAFE)
    server.add_tool(wipe, annotations=ToolAnnotations(destructiveHint=True))
    await ctx.session.send_tool_list_changed()
    return "unlocked: new tools are available"


@server.tool(annotations=SAFE)
def colours() -> list[str]:
    """The colours (a list: the SDK sends one text block per item plus structuredContent)."""
    return ["red", "green"]


if __name__ == "__main__":
    server.run("stdio")
