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
from agentcli.compat.prompts import LangChainChatAgent
from agentcli.models.base import BaseChatModel
from agentcli.tools.base import Tool

AgentSpec = str | AgentType | type[Agent] | None  # what initialize_agent's ``agent`` takes


class _Typed:
    """A prompt-built LangChain agent class: it builds the agentcli type ``agent_type``."""

    agent_type: ClassVar[str | type[Agent]]

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


def _typed(name: str, agent_type: AgentType, built: type[Agent] | None = None) -> type[_Typed]:
    """LangChain's class ``name``, building ``agent_type`` (as the class ``built``)."""
    doc = f"``{agent_type.value}``."
    return type(name, (_Typed,), {"agent_type": built or agent_type.value, "__doc__": doc,
                                  "observation_prefix": "Observation: ", "llm_prefix": "Thought:"})


def langchain_shaped(agent: AgentSpec) -> AgentSpec:
    """The agent type to build for LangChain code: the chat agent in LangChain's prompt shape,
    any other as given."""
    if agent is not None and not isinstance(agent, type) and agent_class(
            agent) is agent_class(AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION):
        return LangChainChatAgent
    return agent


ZeroShotAgent = _typed("ZeroShotAgent", AgentType.ZERO_SHOT_REACT_DESCRIPTION)
ChatAgent = _typed("ChatAgent", AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION, LangChainChatAgent)
StructuredChatAgent = _typed("StructuredChatAgent",
                             AgentType.STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION)
ConversationalAgent = _typed("ConversationalAgent", AgentType.CONVERSATIONAL_REACT_DESCRIPTION)
ConversationalChatAgent = _typed("ConversationalChatAgent",
                                 AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION)
