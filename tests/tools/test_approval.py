"""Call-time approval: policies, session memory, edit/reject, non-terminal denial, events."""

from __future__ import annotations

from typing import Any

from agentcli.approval import ApprovalPolicy, UserChoice, describe_call, gate_by_policy
from agentcli.callbacks import BaseCallbackHandler
from agentcli.tools import Tool
from tests.tools.conftest import PlannedAgent

ran: list[Any] = []


def shell() -> Tool:
    return Tool("terminal", "shell", func=lambda c: ran.append(c) or f"ran {c}", dangerous=True)


def test_describe_call_shows_exactly_what_runs() -> None:
    assert describe_call(shell(), "rm -rf /tmp/x") == "command:\nrm -rf /tmp/x"
    post = Tool("requests_post", "", dangerous=True)
    assert describe_call(post, {"url": "http://e.x/a", "data": {"k": 1}}) == \
        'POST http://e.x/a\nbody: {\n  "k": 1\n}'
    assert describe_call(Tool("requests_get", ""), "http://e.x") == "GET http://e.x"
    assert describe_call(Tool("python_repl", ""), "print(1)") == "code:\nprint(1)"
    move = Tool("move_file", "")
    assert describe_call(move, {"source_path": "a", "destination_path": "b"}) == \
        "source_path: a\ndestination_path: b"


def test_non_terminal_denies_ask_policy() -> None:
    verdict = ApprovalPolicy()(shell(), "ls")
    assert not verdict.allowed and "no terminal" in verdict.reason and "--yes" in verdict.reason


def test_policies_allow_deny_auto() -> None:
    assert ApprovalPolicy({"terminal": "allow"})(shell(), "ls").allowed
    assert not ApprovalPolicy({"terminal": "deny"}, auto=True)(shell(), "ls").allowed
    assert ApprovalPolicy(auto=True)(shell(), "ls").allowed


def test_always_is_remembered_for_the_session() -> None:
    asked: list[str] = []

    def ask(tool: Tool, value: Any, description: str) -> UserChoice:
        asked.append(description)
        return UserChoice("always")

    policy = ApprovalPolicy(ask=ask)
    assert policy(shell(), "ls").allowed and policy(shell(), "pwd").allowed
    assert asked == ["command:\nls"]


def test_edit_and_reject_with_reason() -> None:
    edit = ApprovalPolicy(ask=lambda t, v, d: UserChoice("edit", tool_input="ls -l"))
    assert edit(shell(), "rm -rf /").tool_input == "ls -l"
    reject = ApprovalPolicy(ask=lambda t, v, d: UserChoice("reject", reason="use git status"))
    verdict = reject(shell(), "rm -rf /")
    assert not verdict.allowed and "use git status" in verdict.reason
    assert not ApprovalPolicy(ask=lambda t, v, d: UserChoice("no"))(shell(), "x").allowed


def test_policy_can_gate_a_safe_tool() -> None:
    tools = [Tool("wikipedia", "wiki"), Tool("current_datetime", "now")]
    gate_by_policy(tools, {"wikipedia": "deny"})
    assert tools[0].dangerous and not tools[1].dangerous


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def on_text(self, text: str, **kw: Any) -> None:
        if kw.get("kind") == "approval":
            self.events.append(kw)


def _run(approver: Any, events: Any = None) -> Any:
    from agentcli.executor import AgentExecutor
    from agentcli.schema import AgentAction, AgentFinish

    def plan(steps: list[Any]) -> Any:
        if not steps:
            return AgentAction("terminal", "rm -rf ~", "Action: terminal")
        return AgentFinish({"output": "saw: " + steps[0].observation}, "")

    tools = [shell()]
    agent = PlannedAgent.build(plan, tools)
    from tests.support.scripted import silent_model

    return AgentExecutor(agent, tools, llm=silent_model(), approver=approver,
                         callbacks=[events] if events else [],
                         return_intermediate_steps=True).invoke("clean up")


def test_non_terminal_run_denies_and_tells_the_model() -> None:
    ran.clear()
    events = Events()
    result = _run(ApprovalPolicy(), events)
    assert ran == []
    assert result.output.startswith("saw: Denied: the user did not approve running terminal "
                                    "(no terminal to ask")
    [event] = events.events
    assert event["tool"] == "terminal" and event["tool_input"] == "rm -rf ~"
    assert event["verdict"] == "denied" and event["allowed"] is False


def test_rejection_reason_reaches_the_model() -> None:
    ran.clear()
    approver = ApprovalPolicy(ask=lambda t, v, d: UserChoice("reject", reason="never delete home"))
    assert "never delete home" in _run(approver).output and ran == []


def test_approved_call_runs_and_is_recorded() -> None:
    ran.clear()
    events = Events()
    result = _run(ApprovalPolicy(auto=True), events)
    assert ran == ["rm -rf ~"] and result.output == "saw: ran rm -rf ~"
    assert events.events[0]["verdict"] == "approved"
