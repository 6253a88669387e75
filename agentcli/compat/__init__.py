"""LangChain-shaped names, so a program written against LangChain runs with its imports changed.

Every name a seed program imports from ``langchain*``/``langgraph`` is here (agentcli's own
ones re-exported), so one import line serves: ``from agentcli.compat import ...``.
``docs/langchain.md`` maps each LangChain import to its name here. This package sits on top
of agentcli: nothing in the core imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from agentcli.agents import AgentType
from agentcli.agents.template import PromptTemplate
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.stdout import StdOutCallbackHandler
from agentcli.compat.agents import (
    ChatAgent,
    ConversationalAgent,
    ConversationalChatAgent,
    StructuredChatAgent,
    ZeroShotAgent,
)
from agentcli.compat.callbacks import (
    CallbackManager,
    CallbackManagerForChainRun,
    CallbackManagerForLLMRun,
    CallbackManagerForToolRun,
)
from agentcli.compat.executor import AgentExecutor, create_react_agent, initialize_agent
from agentcli.compat.memory import (
    ChatMessageHistory,
    ConversationBufferMemory,
    ConversationBufferWindowMemory,
    ConversationSummaryMemory,
)
from agentcli.compat.messages import (
    AIMessage,
    BaseChatModel,
    BaseMessage,
    ChatGeneration,
    ChatResult,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from agentcli.compat.plan import (
    AgentOutputParser,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    LLMChain,
    LLMSingleActionAgent,
    StringPromptTemplate,
)
from agentcli.compat.prompts import (
    AgentActionMessageLog,
    AgentScratchPadChatPromptTemplate,
    ChatPromptTemplate,
    hub,
)
from agentcli.compat.providers import ChatOpenAI, ChatTongyi, OpenAI
from agentcli.compat.tools import BaseTool, load_tools
from agentcli.create import create_agent
from agentcli.errors import OutputParserError as OutputParserException
from agentcli.runnable import Runnable, RunnableLambda, RunnableSequence
from agentcli.schema import AgentAction, AgentFinish, AgentStep, Message
from agentcli.schema import ChatResult as LLMResult
from agentcli.state import AgentState, Command, OmitFromInput, OmitFromOutput, PrivateStateAttr
from agentcli.tools import Tool, tool
from agentcli.tools.inject import InjectedState, InjectedToolCallId

# What a model takes, for annotations (LangChain's ``LanguageModelInput``)
LanguageModelInput = Union[str, Sequence[Message], Sequence[object]]  # noqa: UP007
# LangChain's ``RunnableConfig``: a plain dict with these keys (see RUN_CONFIG_KEYS)
RunnableConfig = dict[str, object]

__all__ = [
    "AIMessage",
    "AgentAction",
    "AgentActionMessageLog",
    "AgentExecutor",
    "AgentFinish",
    "AgentOutputParser",
    "AgentScratchPadChatPromptTemplate",
    "AgentState",
    "AgentStep",
    "AgentType",
    "BaseCallbackHandler",
    "BaseChatModel",
    "BaseMessage",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "BaseTool",
    "CallbackManager",
    "CallbackManagerForChainRun",
    "CallbackManagerForLLMRun",
    "CallbackManagerForToolRun",
    "ChatAgent",
    "ChatGeneration",
    "ChatMessageHistory",
    "ChatOpenAI",
    "ChatPromptTemplate",
    "ChatResult",
    "ChatTongyi",
    "Command",
    "ConversationBufferMemory",
    "ConversationBufferWindowMemory",
    "ConversationSummaryMemory",
    "ConversationalAgent",
    "ConversationalChatAgent",
    "HumanMessage",
    "InjectedState",
    "InjectedToolCallId",
    "LLMChain",
    "LLMResult",
    "LLMSingleActionAgent",
    "LanguageModelInput",
    "OmitFromInput",
    "OmitFromOutput",
    "OpenAI",
    "OutputParserException",
    "PrivateStateAttr",
    "PromptTemplate",
    "Runnable",
    "RunnableConfig",
    "RunnableLambda",
    "RunnableSequence",
    "StdOutCallbackHandler",
    "StringPromptTemplate",
    "StructuredChatAgent",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolMessage",
    "ZeroShotAgent",
    "create_agent",
    "create_react_agent",
    "hub",
    "initialize_agent",
    "load_tools",
    "tool",
]
