"""Call-time approval for dangerous tools: a per-tool policy, session memory and a safe default.

The executor asks an :data:`~agentcli.executor.Approver` before every dangerous call. This
module builds that approver from settings: ``tool_policy`` (``allow`` / ``ask`` / ``deny`` per
tool; ``ask`` is the default), ``approve: auto`` (same as ``--yes``), and an injected ``ask``
function (the CLI supplies one that prompts on a terminal). Without a terminal and without
``--yes`` an ``ask`` policy denies, and the denial goes back to the model as the observation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Literal

from agentcli.middleware import Approval
from agentcli.records import record
from agentcli.tools.base import Tool, ToolInput

Choice = Literal["yes", "no", "always", "edit", "reject"]


@record
class UserChoice:
    """What the person chose: ``edit`` carries ``tool_input``, ``reject`` carries ``reason``."""

    choice: Choice
    reason: str = ""
    tool_input: ToolInput | None = None


AskFn = Callable[[Tool, ToolInput, str], UserChoice]

_LABELS = {
    "terminal": "command", "python_repl": "code", "sql_db_query": "SQL",
}


def describe_call(tool: Tool, tool_input: ToolInput) -> str:
    """Exactly what will run: the command, the code, method + URL + body, or the path(s)."""
    args: Mapping[str, object] = tool_input if isinstance(tool_input, dict) else {}
    text = tool_input if isinstance(tool_input, str) else None
    name = tool.name
    if name.startswith("requests_"):
        method = name.removeprefix("requests_").upper()
        url = args.get("url", text or "")
        body = args.get("data")
        shown = "" if body is None else "\nbody: " + (
            body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, indent=2))
        return f"{method} {url}{shown}"
    if name in _LABELS and (text is not None or len(args) == 1):
        value = text if text is not None else str(next(iter(args.values())))
        return f"{_LABELS[name]}:\n{value}"
    paths = {k: v for k, v in args.items() if k.endswith("path")}
    if paths and len(paths) == len(args):
        return "\n".join(f"{k}: {v}" for k, v in paths.items())
    if text is not None:
        return f"input: {text}"
    return json.dumps(args, ensure_ascii=False, indent=2)


class ApprovalPolicy:
    """An approver: policy per tool, ``always`` remembered for the session, non-TTY denies."""

    def __init__(
        self,
        policy: Mapping[str, str] | None = None,
        *,
        auto: bool = False,
        ask: AskFn | None = None,
    ) -> None:
        self.policy = dict(policy or {})
        self.auto = auto
        self.ask = ask
        self.always: set[str] = set()

    def __call__(self, tool: Tool, tool_input: ToolInput) -> Approval:
        policy = self.policy.get(tool.name, "ask")
        if policy == "deny":
            return Approval(False, f"tool_policy denies {tool.name}")
        if policy == "allow":
            return Approval(True, f"tool_policy allows {tool.name}")
        if self.auto:
            return Approval(True, "approved by --yes")
        if tool.name in self.always:
            return Approval(True, "approved for this session")
        if self.ask is None:
            return Approval(False, "no terminal to ask for approval; pass --yes to allow")
        decision = self.ask(tool, tool_input, describe_call(tool, tool_input))
        if decision.choice == "yes":
            return Approval(True, "approved by the user")
        if decision.choice == "always":
            self.always.add(tool.name)
            return Approval(True, "approved by the user for this session")
        if decision.choice == "edit" and decision.tool_input is not None:
            return Approval(True, "approved by the user with an edited input",
                            tool_input=decision.tool_input)
        if decision.choice == "reject":
            return Approval(False, f"the user said: {decision.reason}" if decision.reason
                            else "rejected by the user")
        return Approval(False, "denied by the user")


def gate_by_policy(tools: list[Tool], policy: Mapping[str, str]) -> None:
    """Tools with an explicit ``ask``/``deny`` policy go through the approver even if safe."""
    from dataclasses import replace

    for i, t in enumerate(tools):
        if policy.get(t.name) in ("ask", "deny") and not t.dangerous:
            tools[i] = replace(t, dangerous=True, danger_reason=t.danger_reason
                               or f"tool_policy is {policy[t.name]}")
