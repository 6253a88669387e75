"""``structured-chat-zero-shot-react-description``: JSON-blob actions for multi-argument tools."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import ClassVar

from agentcli.agents.base import JsonBlobAgent, chat_history, work_as_turns
from agentcli.schema import AgentStep, Message, system
from agentcli.tools.base import Tool


def tool_schemas(tools: Sequence[Tool]) -> str:
    """``name: description, args: {...}`` for each tool, with its argument schema."""
    lines = []
    for t in tools:
        props = (t.args_schema or {}).get("properties") or {
            "input": {"type": "string", "description": "The tool input."}
        }
        lines.append(f"{t.name}: {t.description}, args: {json.dumps(props, ensure_ascii=False)}")
    return "\n".join(lines)


class StructuredChatAgent(JsonBlobAgent):
    """Like the chat agent, but the prompt shows argument schemas and the answer is an action."""

    agent_type: ClassVar[str] = "structured-chat-zero-shot-react-description"
    main_template: ClassVar[str | None] = "structured_chat_system"
    summary: ClassVar[str] = (
        "Chat ReAct whose JSON blob carries several named arguments; answers with the "
        '"Final Answer" action. For tools that take more than one input.'
    )
    accepts: ClassVar[str] = "any tools, including multi-argument (schemas in the prompt)"
    uses_memory: ClassVar[bool] = True
    single_input: ClassVar[bool] = False
    quoted_names: ClassVar[bool] = True

    def system_text(self) -> str:
        """The template with each tool's argument schema and the names quoted."""
        return self.prompt(
            "structured_chat_system", tools=tool_schemas(self.tools),
            tool_names=", ".join(json.dumps(n) for n in self.allowed_tools),
        ).strip()

    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """System prompt, prior turns, then the question and the work as alternating turns."""
        return [system(self.system_prompt), *chat_history(inputs),
                *work_as_turns(steps, self.question(inputs), final=final)]
