"""LangChain's agent class names.

The prompt-built classes (``ZeroShotAgent``, ``ChatAgent``, ``StructuredChatAgent``,
``ConversationalAgent``, ``ConversationalChatAgent``) build the agentcli agent type of the same
kind: ``from_llm_and_tools(llm, tools)`` and ``create_prompt(tools)``.

The bases a custom agent subclasses (``BaseSingleActionAgent``, ``BaseMultiActionAgent``,
``LLMSingleActionAgent``) are in :mod:`agentcli.compat.plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from agentcli.agents import AgentType, agent_class, build_agent
from agentcli.agents.base import Agent
from agentcli.agents.template import PromptTemplate
from agentcli.models.base import BaseChatModel
from agentcli.tools.base import Tool


class _Typed:
    """A prompt-built LangChain agent class: it builds the agentcli type ``agent_type``."""

    agent_type: ClassVar[str]

    @classmethod
    def from_llm_and_tools(cls, llm: BaseChatModel | None, tools: Sequence[Tool],
                           **kwargs: object) -> Agent:
        """The agent of this kind over ``tools``, bound to ``llm`` (prompt options as in
        ``agent_kwargs``: prefix, suffix, format_instructions, ...)."""
        return build_agent(cls.agent_type, tools, llm, **kwargs)

    @classmethod
    def create_prompt(cls, tools: Sequence[Tool], **options: object) -> PromptTemplate:
        """This kind's prompt over ``tools``."""
        return agent_class(cls.agent_type).create_prompt(tools, **options)


def _typed(name: str, agent_type: AgentType) -> type[_Typed]:
    """LangChain's class ``name``, building ``agent_type``."""
    doc = f"``{agent_type.value}``."
    return type(name, (_Typed,), {"agent_type": agent_type.value, "__doc__": doc})


ZeroShotAgent = _typed("ZeroShotAgent", AgentType.ZERO_SHOT_REACT_DESCRIPTION)
ChatAgent = _typed("ChatAgent", AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION)
StructuredChatAgent = _typed("StructuredChatAgent",
                             AgentType.STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION)
ConversationalAgent = _typed("ConversationalAgent", AgentType.CONVERSATIONAL_REACT_DESCRIPTION)
ConversationalChatAgent = _typed("ConversationalChatAgent",
                                 AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION)
